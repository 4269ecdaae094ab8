"""Real processes: `seqk status` reads while a run writes; a run killed with SIGKILL
resumes with no duplicate and no lost attempt, ending where an uninterrupted run ends."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
import yaml
from procs import TESTS, Gate, arc_variant, start_run, stopped_midway, wait_for_attempts

pytestmark = pytest.mark.slow


def outcomes(db: Path) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT task_index, attempt_index, success, feedback FROM current_attempts "
            "ORDER BY ALL").fetchall()


def test_status_reads_while_a_run_writes(tmp_path):
    db = tmp_path / "seqk.duckdb"
    with Gate(tmp_path, after=40) as gate:  # it writes 40 of its 108 attempts, then holds
        proc = start_run(arc_variant(tmp_path), db, gate)
        try:
            seen = wait_for_attempts(db, proc, at_least=20)
            assert proc.poll() is None, "the run should still be writing"
            assert seen == sorted(seen) and seen[-1] >= 20
        finally:
            gate.open()
            proc.wait(timeout=120)
    assert proc.returncode == 0, proc.stderr.read()


def test_sigkill_mid_run_then_resume_matches_an_uninterrupted_run(tmp_path):
    variant = arc_variant(tmp_path)
    reference = tmp_path / "reference.duckdb"
    ref = start_run(variant, reference)
    assert ref.wait(timeout=180) == 0, ref.stderr.read()

    db = tmp_path / "killed.duckdb"
    stopped_midway(variant, db, tmp_path, after=15)
    with duckdb.connect(str(db), read_only=True) as con:
        written = con.execute("SELECT count(*) FROM attempts").fetchone()[0]
    assert 15 <= written < len(outcomes(reference)), "the kill should land mid-run"

    resumed = start_run(variant, db)
    out, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    assert "resuming" in err
    with duckdb.connect(str(db), read_only=True) as con:
        dupes = con.execute(
            "SELECT count(*) FROM (SELECT task_index, attempt_index FROM attempts "
            "WHERE status = 'ok' GROUP BY ALL HAVING count(*) > 1)").fetchone()[0]
        orphans = con.execute(
            "SELECT count(*) FROM calls WHERE attempt_uid NOT IN (SELECT attempt_uid FROM attempts)"
        ).fetchone()[0]
    assert dupes == 0 and orphans == 0
    assert outcomes(db) == outcomes(reference)


def test_ctrl_c_stops_cleanly_keeping_finished_attempts(tmp_path):
    variant = arc_variant(tmp_path)
    db = tmp_path / "seqk.duckdb"
    proc, out, err = stopped_midway(variant, db, tmp_path, after=10, sig=signal.SIGINT)  # Ctrl-C
    assert proc.returncode == 130, err
    assert "Interrupted" in out and "run the same command to resume" in out
    with duckdb.connect(str(db), read_only=True) as con:
        kept = con.execute("SELECT count(*) FROM attempts").fetchone()[0]
    assert kept >= 10
    resumed = start_run(variant, db)
    assert resumed.wait(timeout=180) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM attempts").fetchone()[0] > kept


def test_sigterm_stops_cleanly_like_ctrl_c(tmp_path):
    db = tmp_path / "seqk.duckdb"
    proc, out, err = stopped_midway(arc_variant(tmp_path), db, tmp_path, after=10, sig=signal.SIGTERM)
    assert proc.returncode == 130, err
    assert "Interrupted" in out and "Traceback" not in err
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM attempts").fetchone()[0] >= 10


def test_more_signals_during_the_final_write_cannot_lose_it(tmp_path):
    db = tmp_path / "seqk.duckdb"
    with Gate(tmp_path, after=10) as gate:  # it writes 10 attempts, then holds until the signals
        proc = start_run(arc_variant(tmp_path), db, gate)
        wait_for_attempts(db, proc, at_least=10)
        for _ in range(6):  # an impatient user: the first signal stops the run, the rest land on the write
            if proc.poll() is not None:
                break
            proc.send_signal(signal.SIGINT)
            time.sleep(0.05)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    written = int(out.split(": ", 1)[1].split(" attempts written")[0])
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM attempts").fetchone()[0] == written >= 10
        orphans = con.execute("SELECT count(*) FROM calls WHERE attempt_uid NOT IN "
                              "(SELECT attempt_uid FROM attempts)").fetchone()[0]
    assert orphans == 0


def hold_database(db: Path, seconds: float) -> subprocess.Popen:
    """Another process that opens the database read-write and keeps it for `seconds`."""
    code = (f"import duckdb, time, sys; con = duckdb.connect({str(db)!r}); print('held', flush=True); "
            f"time.sleep({seconds}); con.close()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_run_waits_out_a_busy_database_and_writes_everything(tmp_path):
    from seqk import models
    from seqk.config import runspec
    from seqk.run import engine

    sys.path.insert(0, str(TESTS))
    from helpers import write_variant

    db = tmp_path / "busy.duckdb"
    models.register_mock("mock/actor", ["w1"])
    variant = write_variant(tmp_path, benchmark="toy", metric="pass@k", k=2, model="mock/actor",
                            options={"n": 4})
    spec = runspec.load(variant)
    engine.run(runspec.load(variant, {"max_tasks": 1}), db)  # creates the file
    holder = hold_database(db, 3.0)
    try:
        result = engine.run(spec, db)
    finally:
        holder.wait(timeout=30)
    assert result.attempts_written == 6
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM attempts").fetchone()[0] == 8


def test_a_database_held_for_too_long_says_how_many_attempts_were_not_written(tmp_path):
    import asyncio

    import pytest

    from seqk import records, store
    from seqk.errors import StoreBusy
    from seqk.run.writer import Writer

    db = tmp_path / "held.duckdb"
    with store.connect(db):
        pass
    holder = hold_database(db, 20.0)
    record = records.FeedbackFill("uid", "run", 1, 1, 1, None, None)

    async def close_while_held() -> None:
        writer = Writer(store.open(db), close_wait_s=1.0)
        writer.put(record)
        await writer.close()

    try:
        with pytest.raises(StoreBusy, match="1 finished attempt"):
            asyncio.run(close_while_held())
    finally:
        holder.kill()
        holder.wait()


def test_runs_started_at_once_on_a_new_database_all_succeed(tmp_path):
    # Three different runs, as a sweep script starts them, on a file that does not exist yet.
    folder = tmp_path / "variants" / "arcagi2"
    folder.mkdir(parents=True)
    variants = []
    for name, metric, feedback in (("a", "seq@k", "binary"), ("b", "pass@k", "binary"),
                                   ("c", "seq@k", "cell_match")):
        path = folder / f"{name}.yaml"
        path.write_text(yaml.safe_dump(dict(metric=metric, k=2, feedback_mode=feedback, max_tasks=4,
                                            model="mock/py:scripts:arc_answer",
                                            options={"split": "evaluation"})))
        variants.append(path)
    for round_ in range(3):
        db = tmp_path / f"round{round_}" / "seqk.duckdb"
        procs = [start_run(variant, db) for variant in variants]
        ends = [proc.communicate(timeout=180) for proc in procs]
        for proc, (_out, err) in zip(procs, ends, strict=True):
            assert proc.returncode == 0, err
        claimed = sorted(int(out.split(": ", 1)[1].split(" attempts written")[0]) for out, _ in ends)
        with duckdb.connect(str(db), read_only=True) as con:
            stored = sorted(n for (n,) in con.execute(
                "SELECT count(*) FROM attempts GROUP BY run_id").fetchall())
        assert stored == claimed and len(stored) == 3 and min(stored) >= 4
        assert not [p.name for p in db.parent.iterdir() if p.name.endswith(".creating")]


def test_an_empty_file_at_the_database_path_is_a_new_database(tmp_path):
    # What a second process sees the instant after another one's DuckDB has created the file.
    from seqk import models
    from seqk.config import runspec
    from seqk.run import engine

    sys.path.insert(0, str(TESTS))
    from helpers import write_variant

    db = tmp_path / "seqk.duckdb"
    db.touch()
    models.register_mock("mock/actor", ["w1"])
    spec = runspec.load(write_variant(tmp_path, benchmark="toy", metric="pass@k", k=2,
                                      model="mock/actor", options={"n": 2}))
    assert engine.run(spec, db).attempts_written == 4
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM attempts").fetchone()[0] == 4
