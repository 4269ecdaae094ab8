"""Many `seqk run` processes into one lake (PostgreSQL catalog, data on moto's S3), as machines of
a team would: nothing lost, nothing counted twice, and the same report as a local file."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from procs import Gate, arc_variant, env, start_run

pytestmark = pytest.mark.slow


def variant(folder: Path, name: str, **keys) -> Path:
    return arc_variant(folder, name, **({"max_tasks": None} | keys))


def seqk(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "seqk", *args], env=env(), capture_output=True, text=True,
                          timeout=timeout)


def sql(db: str, query: str) -> str:
    done = seqk("sql", query, "--db", db, "--format", "csv")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_three_writers_at_once_lose_and_duplicate_nothing_and_report_like_a_file(tmp_path, lake_url):
    # Two different runs, and one pass@k run split in two by task_indices, all at once.
    seq = variant(tmp_path, "seq.yaml", max_tasks=12)
    first = variant(tmp_path, "pass-a.yaml", metric="pass@k", task_indices=list(range(1, 9)))
    second = variant(tmp_path, "pass-b.yaml", metric="pass@k", task_indices=list(range(9, 17)))
    procs = [start_run(p, lake_url) for p in (seq, first, second)]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err

    # The same runs in a local file, one after the other.
    local = str(tmp_path / "local.duckdb")
    for path in (seq, first, second):
        done = seqk("run", str(path), "--db", local, "--no-export")
        assert done.returncode == 0, done.stderr

    count = ("SELECT run_id, count(*) AS n, count(DISTINCT attempt_uid) AS uids, "
             "count(DISTINCT (task_index, attempt_index)) FILTER (WHERE status = 'ok') AS slots "
             "FROM attempts GROUP BY run_id ORDER BY run_id")
    in_lake, in_file = sql(lake_url, count), sql(local, count)
    assert in_lake == in_file
    lines = in_lake.strip().splitlines()[1:]
    assert len(lines) == 2  # the split pass@k run is one run
    for line in lines:
        _run, n, uids, slots = line.rsplit(",", 3)
        assert int(n) == int(uids) == int(slots)  # every attempt once, no slot twice
    assert "16" in sql(lake_url, "SELECT count(*) FROM tasks WHERE run_id LIKE '%passk%'")

    lake_report, file_report = seqk("report", "--compare", "--db", lake_url), seqk("report", "--compare", "--db", local)
    assert lake_report.returncode == 0 and file_report.returncode == 0, lake_report.stderr + file_report.stderr
    assert lake_report.stdout == file_report.stdout
    assert "pass@k" in lake_report.stdout and "lift" in lake_report.stdout.lower()


def test_the_same_tasks_of_a_run_twice_at_once_are_refused(tmp_path, lake_url):
    # 4 tasks one at a time, 10 wrong attempts each: the holder answers one, then holds until the
    # gate opens, so it still runs however long the two other runs take.
    slow = variant(tmp_path, "slow.yaml", model="mock/py:scripts:slow_wrong", max_tasks=4, k=10, concurrency=1)
    gate = Gate(tmp_path, after=1)
    holder = start_run(slow, lake_url, gate)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            started = seqk("sql", "SELECT count(*) FROM run_rows", "--db", lake_url, "--format", "csv")
            if started.returncode == 0 and started.stdout.strip().splitlines()[-1] != "0":
                break
            assert started.returncode == 0 or "no lake at" in started.stderr, started.stderr
            time.sleep(0.2)
        overlapping = variant(tmp_path, "overlap.yaml", model="mock/py:scripts:slow_wrong", task_indices=[3, 4, 5],
                              k=10, concurrency=1)
        refused = seqk("run", str(overlapping), "--db", lake_url, "--no-export")
        assert refused.returncode == 2
        assert "2 of the 3 task(s)" in refused.stderr and "being run right now" in refused.stderr
        assert "Traceback" not in refused.stderr
        assert holder.poll() is None, "the holder should still be running"
        # Another task of the same run, while the holder still runs: allowed.
        disjoint = variant(tmp_path, "disjoint.yaml", model="mock/py:scripts:slow_wrong", task_indices=[5], k=10,
                           concurrency=1)
        alongside = seqk("run", str(disjoint), "--db", lake_url, "--no-export")
        assert alongside.returncode == 0, alongside.stderr
        assert "resuming: 1 of 1 tasks" in alongside.stdout + alongside.stderr
    finally:
        gate.open()
        out, err = holder.communicate(timeout=120)
    assert holder.returncode == 0, err


def test_a_run_interrupted_then_resumed_on_the_lake_ends_as_an_uninterrupted_one(tmp_path, lake_url):
    # 16 tasks, 3 wrong attempts of 0.3 s each, 2 at a time: about 7 s uninterrupted; this one
    # writes 5 attempts, then holds until Ctrl-C.
    path = variant(tmp_path, "seq.yaml", max_tasks=16, model="mock/py:scripts:slow_wrong", concurrency=2)
    with Gate(tmp_path, after=5) as gate:
        proc = start_run(path, lake_url, gate)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            n = seqk("sql", "SELECT count(*) FROM attempts", "--db", lake_url, "--format", "csv")
            if n.returncode == 0 and int(n.stdout.strip().splitlines()[-1]) >= 5:
                break
            time.sleep(0.3)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    resumed = seqk("run", str(path), "--db", lake_url, "--no-export")
    assert resumed.returncode == 0 and "resuming" in resumed.stdout + resumed.stderr

    local = str(tmp_path / "local.duckdb")
    assert seqk("run", str(path), "--db", local, "--no-export").returncode == 0
    slots = ("SELECT task_index, attempt_index, success, feedback FROM current_attempts ORDER BY ALL")
    assert sql(lake_url, slots) == sql(local, slots)
    once = sql(lake_url, "SELECT count(*) - count(DISTINCT attempt_uid) FROM attempts")
    assert once.strip().splitlines()[-1] == "0"
