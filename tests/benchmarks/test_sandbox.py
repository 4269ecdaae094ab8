"""The sandbox for model-written code: no secrets, no writes outside its folder, no network,
and every runaway program ends as an outcome, never as an error of seqk."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from benchmarks._common import sandbox
from benchmarks._common.sandbox import Limits, Outcome, run_python
from seqk.errors import JudgeError, SandboxError

ISOLATING = ["bwrap", "unshare"]
"""Both start on this project's machines (measured; see docs/benchmarks.md, the sandbox)."""


def run(program: str, backend: sandbox.BackendChoice = "auto", **limits: float) -> Outcome:
    return asyncio.run(run_python(program, Limits(**limits), backend))


def test_auto_picks_bubblewrap_here() -> None:
    assert asyncio.run(sandbox.resolve_backend("auto")) == "bwrap"


@pytest.mark.parametrize("backend", ["bwrap", "unshare", "none"])
def test_an_api_key_in_seqks_environment_is_not_visible(monkeypatch, backend) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRETVALUE123")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "SECRETVALUE456")
    outcome = run("import os\n"
                  "leaks = [k for k, v in os.environ.items() if 'SECRETVALUE' in v or 'KEY' in k]\n"
                  "assert not leaks, leaks\n"
                  "assert os.listdir('.') == [], os.listdir('.')\n", backend)
    assert outcome.status == "ok", outcome.reason


def test_under_bwrap_no_process_of_seqk_is_visible(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRETVALUE123")
    outcome = run("import os\n"
                  "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
                  "    try:\n"
                  "        env = open(f'/proc/{pid}/environ', 'rb').read()\n"
                  "    except OSError:\n"
                  "        continue\n"
                  "    assert b'SECRETVALUE' not in env, pid\n", "bwrap")
    assert outcome.status == "ok", outcome.reason


@pytest.mark.parametrize("backend", ["bwrap"])
def test_writes_outside_the_folder_do_not_land(tmp_path: Path, backend) -> None:
    target = tmp_path / "escaped.txt"
    outcome = run(f"open({str(target)!r}, 'w').write('x')\n", backend)
    assert not target.exists()
    assert outcome.status == "exception" and outcome.exc_type in ("FileNotFoundError", "PermissionError")
    # Its own folder is writable.
    assert run("open('scratch.txt', 'w').write('x')\n", backend).status == "ok"


@pytest.mark.parametrize("backend", ISOLATING)
def test_no_network(backend) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        program = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        assert run(program, "none").status == "ok"  # the program reaches it without the sandbox
        outcome = run(program, backend)
    assert outcome.status == "exception" and outcome.exc_type in ("ConnectionRefusedError", "OSError")


@pytest.mark.parametrize(("program", "status", "reason"), [
    ("while True:\n    pass\n", "timeout", "timed out after 1 s"),
    ("while True:\n    try:\n        while True: pass\n    except BaseException: pass\n", "timeout", "timed out"),
    ("import time\nwhile True:\n    try:\n        time.sleep(60)\n    except BaseException: pass\n", "timeout",
     "wall-clock"),
    ("import os\nwhile True:\n    os.fork()\n", "exception", "BlockingIOError"),
    ("x = bytearray(8 * 2**30)\n", "exception", "MemoryError"),
    ("open('big', 'wb').write(b'x' * 2**26)\n", "exception", "File too large"),
    ("import os\nos._exit(0)\n", "killed", "before the program finished"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "killed", "segmentation fault"),
])
@pytest.mark.slow
def test_runaway_programs_end_with_a_reason(program: str, status: str, reason: str) -> None:
    outcome = run(program, "bwrap", timeout_s=1.0, startup_grace_s=5.0)
    assert outcome.status == status and reason in outcome.reason, outcome


def test_a_sandbox_that_cannot_start_is_an_error(monkeypatch) -> None:
    monkeypatch.setattr(sandbox, "_command", lambda backend, workdir: (["false"], workdir, sandbox._RUNNER))
    with pytest.raises(SandboxError, match="did not start") as caught:
        run("pass", "none")
    assert isinstance(caught.value, JudgeError)  # the engine records it as a judge error


def test_runs_overlap_up_to_the_parallel_bound(monkeypatch) -> None:
    in_flight, peak = 0, 0
    original = sandbox._run

    async def counting(*args):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            return await original(*args)
        finally:
            in_flight -= 1

    monkeypatch.setattr(sandbox, "_run", counting)

    async def main() -> list[Outcome]:
        return await asyncio.gather(*(run_python("import time\ntime.sleep(0.3)\n", Limits(), "bwrap",
                                                 max_parallel=3) for _ in range(7)))

    outcomes = asyncio.run(main())
    assert [o.status for o in outcomes] == ["ok"] * 7
    assert peak == 3
