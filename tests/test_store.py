"""Every named query in sql/ runs, by its name, through the store against a database seeded by
real runs of the engine; a query added to sql/ without an entry here fails the test."""

from __future__ import annotations

from datetime import datetime

import pytest
from helpers import write_variant
from scripts import solves_on

from seqk import models, store
from seqk.config import spec as runspec
from seqk.run import scheduler as engine
from seqk.store import sqlfiles

K = 2


@pytest.fixture
def seeded(tmp_path, db):
    """A seq@k run (task 2 solved on attempt 2) and its pass@k partner, on 3 toy tasks."""
    models.register_mock("mock/actor", solves_on({2: 2}))
    ids = {}
    for metric in ("seq@k", "pass@k"):
        spec = runspec.load(write_variant(tmp_path, metric.replace("@", "_") + ".yaml", benchmark="toy",
                                          metric=metric, k=K, model="mock/actor", options={"n": 3}))
        engine.run(spec, db)
        ids[metric] = spec.run_id
    return db, ids["seq@k"], ids["pass@k"]


def reads(seq: str, pas: str, uid: str) -> dict[str, dict]:
    """The parameters of every query that reads."""
    one, both = {"run_id": seq}, {"run_ids": [seq, pas]}
    paired = {"errors_as_failures": False, "run_a": seq, "run_b": pas}
    return {
        "get_run": one, "list_runs": {}, "get_task_identities": one,
        "pending_attempts": one | {"generation": 1, "k": K + 1, "is_seq": True, "chains": 1,
                                   "task_indices": [1, 2, 3]},
        "seq_history": one | {"generation": 1, "task_indices": [1]},
        "last_call_index": {"attempt_uid": uid},
        "kept_outputs": one | {"generation": 1, "task_indices": [1, 2, 3]},
        "run_status": {"run_ids": []}, "find_task": one | {"task_index": None, "task_id": "t2"},
        "task_attempts": one | {"task_index": 2}, "task_calls": one | {"task_index": 2},
        "report_runs": {"run_ids": [seq, pas], "benchmark": None, "model": None},
        "run_curves": {"errors_as_failures": False} | both, "point_types": {"errors_as_failures": False} | both,
        "pair_choices": {"run_ids": [seq]}, "spend_by_role": both, "paired_run_types": paired | {"t": 1},
        "run_spend_by_role": one, "judge_agreement": {"run_a": seq, "run_b": pas},
        "rejudge_source": one, "rejudge_pending": one | {"generation": 1},
        "export_tasks": one, "export_attempts": one, "export_calls": one, "export_tokens": one,
        "export_metric_curve": one, "export_parquet_runs": both, "export_parquet_tasks": both,
        "export_parquet_attempts": both, "export_parquet_calls": both,
        "import_known_attempts": one, "import_valid_slots": one,
        "get_schema_info": {}, "count_tables": {"table_name": "runs"},
        "frontier_rows": {"errors_as_failures": False} | both,
        "frontier_task_values": {"errors_as_failures": False} | both, "budget_partners": both,
        "pair_discordance": one,
    }


# Reads with nothing to return on this seed: no judge failed, and no run re-judges another.
EMPTY = {"kept_outputs", "rejudge_pending"}


def writes(run: dict, uid: str) -> dict[str, dict]:
    """The parameters of every query that writes, in the order the test runs them."""
    config = {"run_id": run["run_id"], "config": run["config"]}
    new = {key: run[key] for key in (
        "benchmark", "slice", "metric", "k", "feedback_mode", "actor_model", "judge_model", "critic_model",
        "verifier", "temperature", "options", "config", "fingerprint", "fingerprint_fields", "seqk_version",
        "shows_grading_info", "chains")}
    return {
        "insert_run": new | {"run_id": "new-run"},
        # a folder tree holds chain 1 only, so an imported run has one chain (the column's default)
        "import_run": {k: v for k, v in new.items() if k != "chains"} | {
                       "run_id": "imported-run", "generation": 2, "created_at": run["created_at"],
                             "updated_at": run["updated_at"]},
        "link_rejudged_slots": {"run_id": "new-run", "source_run_id": run["run_id"], "k": K},
        "extend_run": config | {"k": K + 1},
        "restart_run": config | {"k": K + 2},
        "touch_run": {"run_id": run["run_id"]},
        "set_run_chains": config | {"chains": 2},
        "set_schema_info": {"key": "probe", "value": "written"},
        "fill_feedback": {"attempt_uid": uid, "feedback": "late feedback", "error": None},
        "insert_call": {
            "attempt_uid": uid, "run_id": run["run_id"], "generation": 1, "task_index": 1, "attempt_index": 1,
            "chain_index": 1,
            "call_index": 2, "role": "critic", "model": "mock/critic", "prompt": "p", "output": "o",
            "input_tokens": 1, "cached_tokens": 0, "thinking_tokens": 0, "output_tokens": 1,
            "cost_usd": 0.0, "latency_s": 0.1, "retries": 0, "error": None, "started_at": datetime(2026, 1, 1)},
    }


def test_every_named_query_runs_through_the_store(seeded):
    db, seq, pas = seeded
    with store.connect(db) as con:
        uid = store.select(con, "seq_history", run_id=seq, generation=1, task_indices=[1])[0]["attempt_uid"]
        run = store.get_run(con, seq)
        read, write = reads(seq, pas, uid), writes(run, uid)
        missing = set(sqlfiles.queries()) - set(read) - set(write)
        assert not missing, f"named queries with no parameters in tests/test_store.py: {sorted(missing)}"
        results = {name: store.select_rows(con, name, **params) for name, params in read.items()}
        # Status of one run reads only that run's attempts, and says the same of it as status of all.
        every = store.select(con, "run_status", run_ids=[])
        assert store.select(con, "run_status", run_ids=[seq]) == [r for r in every if r["run_id"] == seq]
        assert [(r["n_tasks"], r["n_passed"], r["n_valid_attempts"]) for r in every] == [(3, 0, 6), (3, 1, 6)]
        assert {name for name, rows in results.items() if not rows} == EMPTY
        for name, params in write.items():
            store.select_rows(con, name, **params)
        after = store.get_run(con, seq)
        assert (after["k"], after["generation"]) == (K + 2, 2)
        assert {r["run_id"] for r in store.select(con, "list_runs")} == {seq, pas, "new-run", "imported-run"}
        assert store.select_rows(con, "last_call_index", attempt_uid=uid) == [(2,)]
        # The re-judging run links every slot of the source's attempts that count, and each is pending.
        pending = store.select_rows(con, "rejudge_pending", run_id="new-run", generation=1)
        assert len(pending) == len(store.select_rows(con, "import_valid_slots", run_id=seq)) == 6
