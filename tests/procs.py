"""Real `seqk` processes for tests: the environment they run in (tests/ on PYTHONPATH, so
mock models in tests/scripts.py resolve), starting a run, gating it, and waiting for its attempts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml
from scripts import GATE_AFTER, GATE_FILE

TESTS = Path(__file__).resolve().parent


class Gate:
    """Holds a run on a slow mock of tests/scripts.py (`gated`) after its first `after` model calls,
    until `open()`: a run started with it cannot end before the test has stopped or overlapped it.
    As a context manager it opens on the way out, so a failing test leaves no run waiting."""

    def __init__(self, folder: Path, after: int) -> None:
        self.path, self.after = folder / f"gate-{after}.open", after

    def env(self) -> dict[str, str]:
        return {GATE_FILE: str(self.path), GATE_AFTER: str(self.after)}

    def open(self) -> None:
        self.path.touch()

    def __enter__(self) -> Gate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.open()


def arc_variant(folder: Path, name: str = "seq.yaml", **keys) -> Path:
    """An arcagi2 seq@k variant answered by a slow mock (tests/scripts.py), 48 tasks unless `keys` say."""
    path = folder / "variants" / "arcagi2" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    base = dict(metric="seq@k", k=3, feedback_mode="cell_match", model="mock/py:scripts:slow_arc",
                max_tasks=48, concurrency=4, options={"split": "evaluation"})
    path.write_text(yaml.safe_dump({k: v for k, v in (base | keys).items() if v is not None}))
    return path


def env(gate: Gate | None = None) -> dict[str, str]:
    e = dict(os.environ) | (gate.env() if gate else {})
    e["PYTHONPATH"] = os.pathsep.join([str(TESTS), e.get("PYTHONPATH", "")])
    return e


def start_run(variant: Path, db: Path | str, gate: Gate | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "seqk", "run", str(variant), "--db", str(db), "--no-export"],
        env=env(gate), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def seqk_from(first: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m seqk ARGS` run in cwd with `first` ahead of the checkout on PYTHONPATH (a
    `benchmarks` package or a plugin's site there is the one seqk finds)."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(first), str(TESTS.parent)])}
    return subprocess.run([sys.executable, "-m", "seqk", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def status(db: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "seqk", "status", "--json", "--db", str(db)],
                          env=env(), capture_output=True, text=True, timeout=60)


def wait_for_attempts(db: Path, proc: subprocess.Popen, at_least: int) -> list[int]:
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            result = status(db)
            assert result.returncode == 0, result.stderr
            rows = json.loads(result.stdout)
            if rows:
                seen.append(rows[0]["n_valid_attempts"])
                if seen[-1] >= at_least:
                    return seen
        time.sleep(0.05)
    raise AssertionError(f"run ended or stalled before {at_least} attempts: {seen}")



def stopped_midway(variant: Path, db: Path, folder: Path, after: int, sig: int = signal.SIGKILL
                   ) -> tuple[subprocess.Popen, str, str]:
    """A `seqk run` that writes `after` attempts, then holds (a Gate) until `sig` reaches it: the
    process, ended, and its stdout and stderr."""
    with Gate(folder, after=after) as gate:
        proc = start_run(variant, db, gate)
        wait_for_attempts(db, proc, at_least=after)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    return proc, out, err


class RayWorkerKiller:
    """SIGKILLs one seqk Ray worker started after this was made (an earlier run's, killed but maybe
    still listed, are left alone), from a thread of its own (`start()`); `killed` is set once done."""

    def __init__(self) -> None:
        self.killed = threading.Event()
        self.earlier = {a["name"] for a in self.workers()}

    @staticmethod
    def workers() -> list[dict]:
        import ray

        return [a for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith("seqk-worker-")]

    def kill(self) -> None:
        import ray

        (name, *_) = [a for a in self.workers() if a["name"] not in self.earlier]
        worker = ray.get_actor(name["name"], namespace=name["namespace"])
        os.kill(ray.get(worker.pid.remote()), signal.SIGKILL)
        self.killed.set()

    def start(self) -> None:
        threading.Thread(target=self.kill, daemon=True).start()


def finishes(call, timeout_s: float, hung: str):
    """call()'s result, run on a thread of its own; fails with `hung` if it takes over timeout_s."""
    done, outcome = threading.Event(), {}

    def go() -> None:
        outcome["result"] = call()
        done.set()

    threading.Thread(target=go, daemon=True).start()
    assert done.wait(timeout_s), hung
    return outcome["result"]


def stop(proc: subprocess.Popen, timeout_s: float = 10) -> None:
    """Stop a process the test started: SIGTERM, then SIGKILL if it has not ended in timeout_s."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
