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
        "pending_attempts": one | {"generation": 1, "k": K + 1, "is_seq": True, "task_indices": [1, 2, 3]},
        "seq_history": one | {"generation": 1, "task_indices": [1]},
        "last_call_index": {"attempt_uid": uid},
        "kept_outputs": one | {"generation": 1, "task_indices": [1, 2, 3]},
        "generation_paid": one | {"generation": 1},
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
        "view_runs": {"run_ids": None}, "view_partners": one,
        "view_run_tasks": one | {"seq_run_id": seq, "pass_run_id": pas, "filter": "all", "search": "",
                                 "limit": 10, "offset": 0, "upto": None},
        "run_batch_items": one | {"generation": 1}, "list_batches": {"run_ids": None},
    }


# Reads with nothing to return on this seed: no judge failed, and no run re-judges another.
EMPTY = {"kept_outputs", "rejudge_pending", "run_batch_items", "list_batches"}


def writes(run: dict, uid: str) -> dict[str, dict]:
    """The parameters of every query that writes, in the order the test runs them."""
    config = {"run_id": run["run_id"], "config": run["config"]}
    new = {key: run[key] for key in (
        "benchmark", "slice", "metric", "k", "feedback_mode", "actor_model", "judge_model", "critic_model",
        "verifier", "temperature", "options", "config", "fingerprint", "fingerprint_fields", "seqk_version",
        "shows_grading_info", "soft_score_clipped")}
    return {
        "insert_run": new | {"run_id": "new-run"},
        "import_run": new | {"run_id": "imported-run", "generation": 2, "created_at": run["created_at"],
                             "updated_at": run["updated_at"]},
        "link_rejudged_slots": {"run_id": "new-run", "source_run_id": run["run_id"], "k": K},
        "extend_run": config | {"k": K + 1},
        "restart_run": config | {"k": K + 2, "generation": 2},
        "touch_run": {"run_id": run["run_id"]},
        "set_schema_info": {"key": "probe", "value": "written"},
        "add_schema_info": {"key": "probe2", "value": "appended"},
        "fill_feedback": {"attempt_uid": uid, "feedback": "late feedback", "error": None},
        "insert_call": {
            "attempt_uid": uid, "run_id": run["run_id"], "generation": 1, "task_index": 1, "attempt_index": 1,
            "call_index": 2, "role": "critic", "model": "mock/critic", "prompt": "p", "output": "o",
            "input_tokens": 1, "cached_tokens": 0, "thinking_tokens": 0, "output_tokens": 1,
            "cost_usd": 0.0, "latency_s": 0.1, "retries": 0, "error": None, "started_at": datetime(2026, 1, 1),
            "cache_write_tokens": None, "price_tier": "sync"},
        "insert_batch": {"batch_key": "k1", "run_id": run["run_id"], "generation": 1, "provider": "openai",
                         "api_base": None, "model": "openai/x", "role": "actor", "round": 1, "n_items": 1,
                         "at": datetime(2026, 1, 1)},
        "insert_batch_items": {"batch_key": "k1", "run_id": run["run_id"], "generation": 1,
                               "custom_ids": ["t1-c1-a1-actor-1"], "task_indices": [1], "attempt_indices": [1],
                               "roles": ["actor"], "prompt_sha256s": ["abc"]},
        "set_batch_state": {"batch_key": "k1", "batch_id": "batch_1", "state": "ended", "n_done": 1,
                            "at": datetime(2026, 1, 1, 1), "finished_at": datetime(2026, 1, 1, 1)},
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
        # What a restart would discard: every attempt row of the generation and its calls' spend.
        assert results["generation_paid"] == con.execute(
            "SELECT (SELECT count(*) FROM attempts WHERE run_id = $r AND generation = 1), sum(cost_usd), "
            "count(*) FILTER (WHERE cost_usd IS NULL AND error IS NULL), sum(input_tokens), "
            "sum(output_tokens) FROM calls WHERE run_id = $r AND generation = 1", {"r": seq}).fetchall()
        for name, params in write.items():
            store.select_rows(con, name, **params)
        after = store.get_run(con, seq)
        assert (after["k"], after["generation"]) == (K + 2, 2)
        batch = store.select(con, "list_batches", run_ids=[seq])
        assert [(b["batch_id"], b["state"], b["n_done"], b["age_s"]) for b in batch] == [("batch_1", "ended", 1, 3600)]
        assert [(i["custom_id"], i["task_index"], i["batch_id"]) for i in store.select(
            con, "run_batch_items", run_id=seq, generation=1)] == [("t1-c1-a1-actor-1", 1, "batch_1")]
        assert {r["run_id"] for r in store.select(con, "list_runs")} == {seq, pas, "new-run", "imported-run"}
        assert store.select_rows(con, "last_call_index", attempt_uid=uid) == [(2,)]
        # The re-judging run links every slot of the source's attempts that count, and each is pending.
        pending = store.select_rows(con, "rejudge_pending", run_id="new-run", generation=1)
        assert len(pending) == len(store.select_rows(con, "import_valid_slots", run_id=seq)) == 6
