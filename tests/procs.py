"""Real `seqk` processes for tests: the environment they run in (tests/ on PYTHONPATH, so
mock models in tests/scripts.py resolve), starting a run, and waiting for its attempts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

TESTS = Path(__file__).resolve().parent


def arc_variant(folder: Path, name: str = "seq.yaml", **keys) -> Path:
    """An arcagi2 seq@k variant answered by a slow mock (tests/scripts.py), 48 tasks unless `keys` say."""
    path = folder / "variants" / "arcagi2" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    base = dict(metric="seq@k", k=3, feedback_mode="cell_match", model="mock/py:scripts:slow_arc",
                max_tasks=48, concurrency=4, options={"split": "evaluation"})
    path.write_text(yaml.safe_dump({k: v for k, v in (base | keys).items() if v is not None}))
    return path


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(TESTS), e.get("PYTHONPATH", "")])
    return e


def start_run(variant: Path, db: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "seqk", "run", str(variant), "--db", str(db), "--no-export"],
        env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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

