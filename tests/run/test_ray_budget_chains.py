"""`executor: ray` keeps a budget (one ledger the workers reserve against) and runs `chains:`:
on a local Ray instance (2 CPUs, loopback) it skips the same attempts for the budget as the local
executor, never spends past it, and runs the same chains."""

from __future__ import annotations

import duckdb
import pytest
from procs import arc_variant

from seqk.api import load_variant
from seqk.run import scheduler as engine

pytestmark = pytest.mark.slow

# $1 per million tokens in and out; arcagi2 prompts are a few thousand bytes, so an attempt's
# reserved worst case is a few thousandths of a dollar.
PRICE = {"input": 1.0, "output": 1.0}


def arc(folder, name, **keys):
    priced = {"model": "mock/py:scripts:arc_answer", "max_tasks": 12, "concurrency": 1, "max_tokens": 64,
              "actor": {"price": PRICE}}
    return arc_variant(folder, name, **(priced | keys))


def table(db, query):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(query).fetchall()


SLOTS = ("SELECT task_index, chain_index, attempt_index, status, success, output, feedback "
         "FROM current_attempts ORDER BY ALL")
SPENT = "SELECT round(sum(cost_usd), 12) FROM calls"


def test_a_budgeted_seq_run_on_ray_stops_where_the_local_one_does_and_never_passes_it(tmp_path, ray_local):
    free = tmp_path / "free.duckdb"
    engine.run(load_variant(arc(tmp_path, "free.yaml")), free)
    (total,) = table(free, SPENT)[0]
    budget = round(total / 2, 6)  # half of what the whole run costs: it must stop midway
    path = arc(tmp_path, "budget.yaml", budget_usd=budget)
    local, on_ray = tmp_path / "local.duckdb", tmp_path / "ray.duckdb"
    a = engine.run(load_variant(path), local)
    b = engine.run(load_variant(path, {"executor": "ray"}), on_ray)
    assert a.stopped_by == b.stopped_by == "budget"
    assert a.stopped == b.stopped and "budget reached" in b.stopped
    assert table(local, SLOTS) == table(on_ray, SLOTS)
    assert 0 < len(table(on_ray, SLOTS)) < len(table(free, SLOTS))  # attempts were skipped for the budget
    assert table(local, SPENT) == table(on_ray, SPENT)
    assert table(on_ray, SPENT)[0][0] <= budget


def test_a_budget_holds_across_workers_at_concurrency(tmp_path, ray_local):
    # pass@k, 4 tasks at a time, every sample on one of the workers: the spend stays within it.
    path = arc(tmp_path, "many.yaml", metric="pass@k", concurrency=4)
    free = tmp_path / "free.duckdb"
    engine.run(load_variant(path), free)
    (total,) = table(free, SPENT)[0]
    budget = round(total / 3, 6)
    on_ray = tmp_path / "ray.duckdb"
    result = engine.run(load_variant(arc(tmp_path, "many.yaml", metric="pass@k", concurrency=4,
                                         budget_usd=budget), {"executor": "ray"}), on_ray)
    assert result.stopped_by == "budget"
    (spent,) = table(on_ray, SPENT)[0]
    assert 0 < spent <= budget
    # Attempts stop only when the next worst case no longer fits, so little of the budget is left
    # unused: at least half of the attempts a third of the spend bought without a budget.
    count = "SELECT count(*) FROM attempts"
    assert table(on_ray, count)[0][0] >= 0.5 * table(free, count)[0][0] / 3


def test_chains_on_ray_give_the_same_attempts_as_local(tmp_path, ray_local):
    path = arc(tmp_path, "chains.yaml", model="mock/py:scripts:seeded_arc", seed=7, chains=2, concurrency=4,
               max_tasks=8)
    local, on_ray = tmp_path / "local.duckdb", tmp_path / "ray.duckdb"
    a = engine.run(load_variant(path), local)
    b = engine.run(load_variant(path, {"executor": "ray"}), on_ray)
    assert (a.tasks_passed, a.tasks_failed, a.tasks_error) == (b.tasks_passed, b.tasks_failed, b.tasks_error)
    assert a.tasks_passed + a.tasks_failed == 8
    got = table(on_ray, SLOTS)
    assert got == table(local, SLOTS)
    assert {chain for _, chain, *_ in got} == {1, 2}
    assert b.attempts_written == a.attempts_written == len(got)


def test_a_dead_ledger_stops_the_run_in_one_line_and_the_next_run_goes_on(tmp_path, ray_local):
    """The ledger is killed at the first attempt: with no one keeping the budget across workers,
    nothing more is admitted or sent, the run ends (no hang) saying why, and the next run
    finishes what is left (the spend it starts from is the database's)."""
    import threading

    import ray

    from seqk.run.observer import RunObserver

    path = arc(tmp_path, "ledger.yaml", budget_usd=1.0)
    free = tmp_path / "free.duckdb"
    engine.run(load_variant(path), free)

    class KillTheLedger(RunObserver):
        killed = False

        def attempt(self, event) -> None:
            if not self.killed:
                self.killed = True
                (name,) = [a for a in ray.util.list_named_actors(all_namespaces=True)
                           if a["name"].startswith("seqk-budget-")]
                ray.kill(ray.get_actor(name["name"], namespace=name["namespace"]))

    db, outcome, done = tmp_path / "ray.duckdb", {}, threading.Event()
    watcher = KillTheLedger()

    def go() -> None:
        outcome["result"] = engine.run(load_variant(path, {"executor": "ray"}), db, watcher)
        done.set()

    threading.Thread(target=go, daemon=True).start()
    assert done.wait(180), "the run hung after its ledger died"
    result = outcome["result"]
    assert watcher.killed
    assert result.stopped_by == "error" and "budget ledger" in result.stopped and "seqk run" in result.stopped
    count = "SELECT count(*) FROM current_attempts WHERE status <> 'error'"
    assert table(db, count)[0][0] < table(free, count)[0][0]  # it stopped
    again = engine.run(load_variant(path), db)
    assert again.stopped is None and again.tasks_error == 0
    assert table(db, SLOTS) == table(free, SLOTS)
