"""`executor: ray` on a local Ray instance (2 CPUs, loopback): the same attempts as the local
executor for a deterministic mock model, and a worker killed mid-run leaves errors, not a hang."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import duckdb
import pytest
from procs import RayWorkerKiller, arc_variant, finishes

from seqk.api import load_variant
from seqk.run import engine
from seqk.run.observer import RunObserver

pytestmark = pytest.mark.slow


def arc(folder, name, **keys):
    return arc_variant(folder, name, **({"model": "mock/py:scripts:arc_answer", "max_tasks": 12} | keys))


SLOTS = ("SELECT task_index, attempt_index, status, success, output, feedback FROM current_attempts "
         "ORDER BY task_index, attempt_index")


def slots(db):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(SLOTS).fetchall()


def test_ray_gives_the_same_attempts_as_local(tmp_path, ray_local):
    for metric in ("seq@k", "pass@k"):
        path = arc(tmp_path, f"{metric[:3]}.yaml", metric=metric)
        local, on_ray = tmp_path / f"local-{metric[:3]}.duckdb", tmp_path / f"ray-{metric[:3]}.duckdb"
        a = engine.run(load_variant(path), local)
        b = engine.run(load_variant(path, {"executor": "ray"}), on_ray)
        assert (a.tasks_passed, a.tasks_failed, a.tasks_error) == (b.tasks_passed, b.tasks_failed, b.tasks_error)
        assert slots(local) == slots(on_ray) and len(slots(local)) >= 12
        assert b.attempts_written == a.attempts_written


def test_a_killed_worker_leaves_errors_not_a_hang_and_the_next_run_redoes_them(tmp_path, ray_local):
    path = arc(tmp_path, "slow.yaml", model="mock/py:scripts:slow_wrong", max_tasks=8, k=3, concurrency=4)
    db = tmp_path / "seqk.duckdb"
    killer = RayWorkerKiller()

    class KillOnFirstAttempt(RunObserver):
        started = False

        def attempt(self, event) -> None:
            if not self.started:
                self.started = True
                killer.start()

    spec = load_variant(path, {"executor": "ray"})
    result = finishes(lambda: engine.run(spec, db, KillOnFirstAttempt()), 180,
                      "the run hung after its worker was killed")
    assert killer.killed.is_set()
    assert result.error_kinds.get("worker:WorkerDied", 0) >= 1
    with duckdb.connect(str(db), read_only=True) as con:
        died = con.execute("SELECT count(*) FROM attempts WHERE error->>'stage' = 'worker'").fetchone()[0]
    assert died == result.error_kinds["worker:WorkerDied"]
    again = engine.run(load_variant(path), db)  # the local executor redoes what the worker lost
    assert again.tasks_error == 0
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM current_attempts WHERE status = 'error'").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM current_attempts").fetchone() == (8 * 3,)


def test_the_local_executor_is_the_default_and_imports_no_ray(tmp_path):
    import subprocess
    import sys

    path = arc(tmp_path, "local.yaml")
    code = ("import sys; from seqk.api import load_variant; from seqk.run.executor import executor_for; "
            f"e = executor_for(load_variant({str(path)!r})); "
            "print(type(e).__name__, 'ray' in sys.modules)")
    tests = str(Path(__file__).parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.stdout.split() == ["LocalExecutor", "False"], out.stderr


def test_an_unknown_executor_is_one_error_line(tmp_path):
    from typer.testing import CliRunner

    from seqk.cli import app

    out = CliRunner().invoke(app, ["run", str(arc(tmp_path, "x.yaml")), "--executor", "slurm",
                                   "--db", str(tmp_path / "x.duckdb")])
    assert out.exit_code == 2 and "'slurm' is not one of local, ray" in out.output


def test_ctrl_c_on_ray_keeps_what_finished_and_a_resume_ends_as_an_uninterrupted_run(tmp_path, ray_local):
    path = arc(tmp_path, "slowarc.yaml", model="mock/py:scripts:slow_arc", max_tasks=16, concurrency=4)
    reference = tmp_path / "reference.duckdb"
    engine.run(load_variant(path), reference)
    db = tmp_path / "seqk.duckdb"

    class CtrlCAfterFourAttempts(RunObserver):
        seen = 0

        def attempt(self, event) -> None:
            self.seen += 1
            if self.seen == 4:  # the user's Ctrl-C: SIGINT to this process, as a terminal sends it
                os.kill(os.getpid(), signal.SIGINT)

    stopped = engine.run(load_variant(path, {"executor": "ray"}), db, CtrlCAfterFourAttempts())
    assert stopped.interrupted
    total = len(slots(reference))
    kept = len(slots(db))
    assert 4 <= kept < total, (kept, total)  # what finished is kept, the rest was not run
    resumed = engine.run(load_variant(path, {"executor": "ray"}), db)
    assert not resumed.interrupted and resumed.tasks_error == 0
    assert slots(db) == slots(reference)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM (SELECT task_index, attempt_index FROM attempts "
                           "WHERE status = 'ok' GROUP BY ALL HAVING count(*) > 1)").fetchone() == (0,)
