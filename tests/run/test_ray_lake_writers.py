"""`executor: ray` into a lake (PostgreSQL on loopback, data in a local folder): the workers write
their attempts themselves (the driver writes none), every attempt is there once, the report equals
the local executor's into a file, and a worker killed mid-run leaves errors, not a hang, and loses
nothing it had finished."""

from __future__ import annotations

import pytest
from procs import RayWorkerKiller, arc_variant, finishes
from typer.testing import CliRunner

from seqk.api import load_variant
from seqk.cli import app
from seqk.run import engine, writer
from seqk.run.observer import RunObserver
from seqk.store import lake

pytestmark = pytest.mark.slow


def arc(folder, name, **keys):
    return arc_variant(folder, name, **({"model": "mock/py:scripts:arc_answer", "max_tasks": 12} | keys))


_LAKES = iter(range(1, 1000))


def local_lake(lake_servers, tmp_path) -> str:
    import servers

    pg, _endpoint = lake_servers
    dsn = servers.create_database(pg, f"raylake{next(_LAKES)}")
    return f"ducklake:postgres:{dsn};data={tmp_path / 'lake-data'}/"


def sql(db: str, query: str) -> str:
    out = CliRunner().invoke(app, ["sql", query, "--db", db, "--format", "csv"])
    assert out.exit_code == 0, out.output
    return out.output


COUNT = ("SELECT run_id, count(*) AS n, count(DISTINCT attempt_uid) AS uids, "
         "count(DISTINCT (task_index, attempt_index)) FILTER (WHERE status = 'ok') AS slots "
         "FROM attempts GROUP BY run_id ORDER BY run_id")


def test_workers_write_the_lake_and_it_reports_like_the_local_executor(tmp_path, lake_servers, ray_local,
                                                                     monkeypatch):
    url = local_lake(lake_servers, tmp_path)
    seq, passk = arc(tmp_path, "seq.yaml"), arc(tmp_path, "pass.yaml", metric="pass@k")
    local = str(tmp_path / "local.duckdb")
    for path in (seq, passk):
        engine.run(load_variant(path), local)
    put = writer.Writer.put
    by_driver = []

    def spy(self, record):
        by_driver.append(record)
        put(self, record)

    monkeypatch.setattr(writer.Writer, "put", spy)  # this process only: the workers' writers are theirs
    try:
        results = [engine.run(load_variant(path, {"executor": "ray"}), url) for path in (seq, passk)]
        assert by_driver == []  # the workers wrote every attempt
        assert [r.attempts_written for r in results] == [
            int(line.split(",")[1]) for line in sql(local, COUNT).strip().splitlines()[1:][::-1]]
        assert sql(url, COUNT) == sql(local, COUNT)
        for line in sql(url, COUNT).strip().splitlines()[1:]:
            _run, n, uids, slots = line.rsplit(",", 3)
            assert int(n) == int(uids) == int(slots)  # every attempt once
        on_lake = CliRunner().invoke(app, ["report", "--compare", "--db", url])
        in_file = CliRunner().invoke(app, ["report", "--compare", "--db", local])
        assert on_lake.exit_code == in_file.exit_code == 0, on_lake.output
        assert on_lake.output == in_file.output and "pass@k" in on_lake.output
    finally:
        lake.close_all()


def test_a_killed_worker_leaves_errors_and_loses_nothing_it_finished(tmp_path, lake_servers, ray_local):
    url = local_lake(lake_servers, tmp_path)
    path = arc(tmp_path, "slow.yaml", model="mock/py:scripts:slow_wrong", max_tasks=8)
    killer = RayWorkerKiller()
    received: list[str] = []

    class KillAfterAFewAttempts(RunObserver):
        def attempt(self, event) -> None:
            received.append(event.record.attempt_uid)
            # Late enough that the workers have committed some attempts (about every second),
            # early enough that others are finished and not committed yet.
            if len(received) == 8:
                killer.start()

    try:
        result = finishes(lambda: engine.run(load_variant(path, {"executor": "ray"}), url, KillAfterAFewAttempts()),
                          180, "the run hung after its worker was killed")
        assert killer.killed.is_set() and result.error_kinds.get("worker:WorkerDied", 0) >= 1
        stored = set(sql(url, "SELECT DISTINCT attempt_uid FROM attempts").split()[1:])
        assert set(received) <= stored  # committed by a worker, or written by the driver for a dead one
        assert sql(url, "SELECT count(*) AS n FROM attempts WHERE error->>'stage' = 'worker'").split()[1] == str(
            result.error_kinds["worker:WorkerDied"])
        again = engine.run(load_variant(path), url)  # the local executor redoes what the worker lost
        assert again.tasks_error == 0
        assert sql(url, "SELECT count(*) AS n, count(*) FILTER (WHERE status = 'error') AS errors "
                   "FROM current_attempts"
                   ).split()[1] == f"{8 * 3},0"
    finally:
        lake.close_all()
