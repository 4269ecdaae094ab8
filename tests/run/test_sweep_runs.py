"""A 2 x 2 sweep with partners, run for real: six runs, Ctrl-C (or SIGTERM) and a rerun go on
where it stopped without repeating an attempt, one cell after another or two at once, and the
report pairs all four seq@k cells with their partners."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
import yaml
from procs import Gate, arc_variant, env, status

MODELS = ["mock/py:scripts:slow_arc", "mock/py:scripts:slow_seeded_arc"]


def write_sweep(folder: Path) -> Path:
    arc_variant(folder, "base.yaml", feedback_mode="binary", max_tasks=6, concurrency=2)
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump({"base": "variants/arcagi2/base.yaml", "partners": True,
                                    "matrix": {"model": MODELS, "feedback_mode": ["binary", "cell_match"]}}))
    return path


def start(path: Path, db: Path, gate: Gate | None = None, *more: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "seqk", "run", str(path), "--db", str(db), "--no-export", *more],
                            env=env(gate), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_valid(db: Path, proc: subprocess.Popen, at_least: int) -> int:
    """Wait until the runs hold `at_least` valid attempts in all (the gate holds them there)."""
    deadline, total = time.monotonic() + 120, 0
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            done = status(db)
            assert done.returncode == 0, done.stderr
            total = sum(r["n_valid_attempts"] for r in json.loads(done.stdout))
            if total >= at_least:
                return total
        time.sleep(0.05)
    raise AssertionError(f"the sweep ended or stalled at {total} attempts, before {at_least}")


def check_complete_and_unrepeated(db: Path) -> None:
    with duckdb.connect(str(db), read_only=True) as con:
        runs = dict(con.execute("SELECT run_id, metric FROM runs").fetchall())
        assert len(runs) == 6 and sorted(runs.values()) == ["pass@k"] * 2 + ["seq@k"] * 4
        repeated = con.execute("SELECT count(*) FROM (SELECT run_id, task_index, chain_index, attempt_index "
                               "FROM attempts WHERE status = 'ok' GROUP BY ALL HAVING count(*) > 1)").fetchone()[0]
        orphans = con.execute("SELECT count(*) FROM calls WHERE attempt_uid NOT IN "
                              "(SELECT attempt_uid FROM attempts)").fetchone()[0]
        errors = con.execute("SELECT count(*) FROM attempts WHERE status <> 'ok'").fetchone()[0]
        assert (repeated, orphans, errors) == (0, 0, 0)
        chains = con.execute("SELECT run_id, task_index, list(attempt_index ORDER BY attempt_index), "
                             "list(success ORDER BY attempt_index) FROM attempts GROUP BY ALL").fetchall()
    assert len(chains) == 6 * 6
    for run_id, _, indices, successes in chains:
        if runs[run_id] == "pass@k":
            assert indices == [1, 2, 3]
        else:  # each chain whole: 1..n, stopping at its first success or at k
            assert indices == list(range(1, len(indices) + 1))
            assert (True not in successes[:-1]) and (successes[-1] or len(indices) == 3)


def check_four_comparisons(db: Path) -> None:
    with duckdb.connect(str(db), read_only=True) as con:
        lifts = con.execute("SELECT seq_run_id, pass_run_id, n_shared FROM feedback_lift ORDER BY 1").fetchall()
    assert len(lifts) == 4
    for seq_run, pass_run, n_shared in lifts:
        assert seq_run.split("/")[2] == pass_run.split("/")[2] and "/passk/" in pass_run and n_shared == 6
    shown = subprocess.run([sys.executable, "-m", "seqk", "report", "--compare", "--db", str(db)],
                           env=env(), capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    for seq_run, pass_run, _ in lifts:
        assert f"seq  {seq_run}\n" in shown.stdout and f"pass {pass_run}\n" in shown.stdout


@pytest.mark.parametrize(("stop", "more"), [(signal.SIGINT, ()), (signal.SIGTERM, ("--parallel", "2"))],
                         ids=["ctrl-c, one cell after another", "sigterm, two cells at once"])
def test_a_stopped_sweep_goes_on_without_repeating_an_attempt(tmp_path, stop, more):
    path = write_sweep(tmp_path)
    db = tmp_path / "seqk.duckdb"
    held = 5 * (2 if more else 1)  # each process's mock holds after 5 calls
    with Gate(tmp_path, after=5) as gate:
        proc = start(path, db, gate, *more)
        kept = wait_for_valid(db, proc, at_least=held)
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Interrupted" in out and "run the same command to go on" in out and "Traceback" not in err
    with duckdb.connect(str(db), read_only=True) as con:
        written = con.execute("SELECT count(*) FROM attempts").fetchone()[0]
        started = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert written >= kept >= held and started == (2 if more else 1)
    again = start(path, db, None, *more)
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    assert "6 of 6 runs done" in out
    check_complete_and_unrepeated(db)
    check_four_comparisons(db)
