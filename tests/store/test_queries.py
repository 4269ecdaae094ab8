"""Every named query in sql/ runs through its generated function in seqk.store.queries, against a
database seeded by real runs of the engine. Each is called with its parameters by keyword, so a
parameter renamed, added or dropped in sql/ fails here; a query added to sql/ without an entry
here fails the test too."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from helpers import write_variant
from scripts import solves_on

from seqk import models, store
from seqk.config import runspec
from seqk.run import engine
from seqk.store import queries, sqlfiles

K = 2
Calls = list[tuple[Callable[..., Any], dict[str, Any]]]


def whole(result):
    """A query's result, a RecordBatchReader (shape `batches`) read into its Table."""
    import pyarrow as pa

    return result.read_all() if isinstance(result, pa.RecordBatchReader) else result


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


def reads(seq: str, pas: str, uid: str) -> Calls:
    """Every query that reads, with its parameters."""
    one, both = {"run_id": seq}, {"run_ids": [seq, pas]}
    return [
        (queries.get_run, one), (queries.list_runs, {}), (queries.get_task_identities, one),
        (queries.pending_attempts, one | {"generation": 1, "k": K + 1, "is_seq": True, "chains": 1,
                                          "task_indices": [1, 2, 3]}),
        (queries.seq_history, one | {"generation": 1, "task_indices": [1]}),
        (queries.last_call_index, {"attempt_uid": uid}),
        (queries.kept_outputs, one | {"generation": 1, "task_indices": [1, 2, 3]}),
        (queries.generation_paid, one | {"generation": 1}),
        (queries.run_status, {"run_ids": []}), (queries.run_fingerprints, {"run_ids": None}),
        (queries.find_task, one | {"task_index": None, "task_id": "t2"}),
        (queries.task_attempts, one | {"task_index": 2}), (queries.task_calls, one | {"task_index": 2}),
        (queries.report_runs, {"run_ids": [seq, pas], "benchmark": None, "model": None}),
        (queries.run_curves, {"errors_as_failures": False} | both),
        (queries.chain_rows, both),
        (queries.pair_choices, {"run_ids": [seq]}), (queries.spend_by_role, both),
        (queries.run_digests, both), (queries.rejudge_sources, both),
        (queries.run_spend_by_role, one), (queries.judge_agreement, {"run_a": seq, "run_b": pas}),
        (queries.rejudge_source, one), (queries.rejudge_pending, one | {"generation": 1}),
        (queries.export_tasks, one), (queries.export_attempts, one), (queries.export_calls, one),
        (queries.export_tokens, one), (queries.export_metric_curve, one),
        (queries.export_parquet_rows, both),
        (queries.export_parquet_runs, both), (queries.export_parquet_tasks, both),
        (queries.export_parquet_attempts, both), (queries.export_parquet_calls, both),
        (queries.import_known_attempts, one), (queries.import_valid_slots, one),
        (queries.get_schema_info, {}), (queries.count_tables, {"table_name": "runs"}),
        (queries.stored_attempt_uids, {"uids": json.dumps([uid])}),
        (queries.view_runs, {"run_ids": None}), (queries.view_runs_now, {"run_ids": None}),
        (queries.view_partners, one),
        (queries.view_run_tasks, one | {"seq_run_id": seq, "pass_run_id": pas, "filter": "all", "search": "",
                                        "limit": 10, "offset": 0, "upto": None}),
        (queries.run_batch_items, one | {"generation": 1}), (queries.list_batches, {"run_ids": None}),
        (queries.frontier_rows, {"errors_as_failures": False} | both),
        (queries.kept_chains_differ, {}),  # 0: chain_kept as written equals its recomputation
        (queries.budget_partners, both), (queries.pair_discordance, one),
        (queries.none_partners, {"run_ids": [seq]}),
        (queries.latest_endpoint_limits, {}),
        (queries.compare_solved, {"errors_as_failures": False, "run_a": seq, "run_b": pas}),
        (queries.task_values_at, {"errors_as_failures": False, "t": 1} | both),
        # studies: the reads of a look over the seeded runs (no study is stored on this seed)
        (queries.study_chain_outcomes, {"run_ids": [seq, pas], "task_indices": "[1, 2]"}),
        (queries.study_task_spend, {"run_ids": [seq, pas], "task_indices": "[1, 2, 3]"}),
        (queries.study_cells, {"run_ids": [seq, pas], "task_indices": "[1, 2, 3]"}),
        (queries.studies_of_runs, {"seq_run_id": seq, "partner_run_id": pas}),
        (queries.list_studies, {}), (queries.study_tasks_of, {"study_id": "s1"}),
        (queries.study_updates_of, {"study_id": "s1"}),
    ]


# Reads with nothing to return on this seed: no judge failed, no run re-judges another, no batch,
# no endpoint limit remembered (mock models are not).
EMPTY = {"kept_outputs", "rejudge_pending", "run_batch_items", "list_batches",
         "latest_endpoint_limits",
         "studies_of_runs", "list_studies", "study_tasks_of", "study_updates_of",
         # no seq@k run without feedback here
         "none_partners",
         # no re-judging run here
         "rejudge_sources",
         # no row of chain_kept differs from the attempts
         "kept_chains_differ"}


def writes(run: dict, uid: str) -> Calls:
    """Every query that writes, with its parameters, in the order the test runs them."""
    config = {"run_id": run["run_id"], "config": run["config"]}
    new = {key: run[key] for key in (
        "benchmark", "slice", "metric", "k", "feedback_mode", "actor_model", "judge_model", "critic_model",
        "verifier", "temperature", "options", "config", "fingerprint", "fingerprint_fields", "seqk_version",
        "shows_grading_info", "soft_score_clipped")}
    return [
        (queries.insert_run, new | {"run_id": "new-run", "chains": 1}),
        (queries.import_run, new | {"run_id": "imported-run", "generation": 2, "created_at": run["created_at"],
                                    "updated_at": run["updated_at"]}),
        (queries.link_rejudged_slots, {"run_id": "new-run", "source_run_id": run["run_id"], "k": K}),
        (queries.extend_run, config | {"k": K + 1}),
        (queries.restart_run, config | {"k": K + 2, "generation": 2}),
        (queries.touch_run, {"run_id": run["run_id"]}),
        (queries.set_schema_info, {"key": "probe", "value": "written"}),
        (queries.add_schema_info, {"key": "added", "value": "appended"}),
        (queries.add_run_chains, config | {"chains": 2}),
        (queries.fill_feedback, {"attempt_uid": uid, "feedback": "late feedback", "error": None}),
        (queries.insert_call, {
            "attempt_uid": uid, "run_id": run["run_id"], "generation": 1, "task_index": 1, "attempt_index": 1,
            "chain_index": 1,
            "call_index": 2, "role": "critic", "model": "mock/critic", "prompt": "p", "output": "o",
            "input_tokens": 1, "cached_tokens": 0, "thinking_tokens": 0, "output_tokens": 1,
            "cost_usd": 0.0, "latency_s": 0.1, "retries": 0, "error": None, "started_at": datetime(2026, 1, 1),
            "cache_write_tokens": None, "price_tier": "sync"}),
        (queries.insert_batch, {"batch_key": "k1", "run_id": run["run_id"], "generation": 1, "provider": "openai",
                                "api_base": None, "model": "openai/x", "role": "actor", "round": 1, "n_items": 1,
                                "at": datetime(2026, 1, 1)}),
        (queries.insert_batch_items, {"batch_key": "k1", "run_id": run["run_id"], "generation": 1,
                                      "custom_ids": ["t1-c1-a1-actor-1"], "task_indices": [1],
                                      "attempt_indices": [1], "roles": ["actor"], "prompt_sha256s": ["abc"]}),
        (queries.set_batch_state, {"batch_key": "k1", "batch_id": "batch_1", "state": "ended", "n_done": 1,
                                   "at": datetime(2026, 1, 1, 1), "finished_at": datetime(2026, 1, 1, 1)}),
        # The writer's Arrow appends read the table it registered under a fixed name.
        (queries.append_attempt_batch, {}), (queries.append_call_batch, {}),
        # each chain's outcome kept again, every chain's
        (queries.forget_all_kept_chains, {}), (queries.keep_all_chains, {}),
        (queries.insert_tasks, {"run_id": "imported-run", "columns": '{"task_index": [1], "task_id": ["t1"], '
                                '"prompt": ["p"], "content_hash": ["h"], "meta": ["{}"]}'}),
        (queries.append_endpoint_limit, {"api_base": "http://127.0.0.1:1/v1", "model": "openai/x",
                                         "sustained": 24, "bounded": True, "ceiling": 64, "rate_limited": 3,
                                         "calls": 90, "run_id": run["run_id"]}),
        (queries.insert_study, {"study_id": "s1", "seq_run_id": run["run_id"], "partner_run_id": "new-run",
                                "question": "lift", "alpha": 0.05, "margin": 0.0, "budget_usd": None,
                                "budget_usd_per_task": None, "order_seed": 1, "task_order": "[2, 1, 3]",
                                "declaration": "{}", "seqk_version": "test"}),
        (queries.insert_study_tasks, {"study_id": "s1", "rows": '[{"position": 1, "task_index": 2, "seq_low": 1, '
                                      '"seq_high": 1, "partner_low": 0, "partner_high": 0, "seq_cost_usd": null, '
                                      '"partner_cost_usd": 0.5}]'}),
        (queries.insert_study_update, {"study_id": "s1", "update_index": 1, "n_tasks": 1, "n_used": 1, "n_ranged": 0,
                                       "estimate": 1.0, "low": -0.9, "high": 1.0, "decision": "undecided",
                                       "stop_reason": None, "spent_usd": 0.5, "full_cost_usd": None,
                                       "budget_usd": None, "cells": '{"seq": [1, 2], "partner": [2, 1]}'}),
    ]


def register_batches(con, uid: str) -> None:
    """Arrow tables under the names the writer registers: a copy of one attempt and call,
    moved to the run "imported-run"."""
    copies = {
        "seqk_attempt_batch": "SELECT * REPLACE ('imported-run' AS run_id, 'copied-uid' AS attempt_uid) "
                              "FROM attempts WHERE attempt_uid = $uid",
        "seqk_call_batch": "SELECT * REPLACE ('imported-run' AS run_id, 'copied-uid' AS attempt_uid) "
                           "FROM calls WHERE attempt_uid = $uid AND call_index = 1",
    }
    for name, sql in copies.items():
        con.register(name, con.execute(sql, {"uid": uid} if "$uid" in sql else None).to_arrow_table())


def test_every_named_query_runs_through_its_generated_function(seeded):
    db, seq, pas = seeded
    with store.connect(db) as con:
        uid = queries.seq_history(con, run_id=seq, generation=1, task_indices=[1])[0]["attempt_uid"]
        run = store.get_run(con, seq)
        assert run is not None
        read, write = reads(seq, pas, uid), writes(run, uid)
        kept_by_writer = (queries.kept_chain_attempts, queries.kept_chain_calls,
                          queries.forget_registered_kept_chains, queries.append_kept_chains)
        names = [fn.__name__ for fn, _ in read + write] + [fn.__name__ for fn in kept_by_writer]
        assert len(names) == len(set(names))
        missing = set(sqlfiles.queries()) - set(names)
        assert not missing, f"named queries with no call in tests/store/test_queries.py: {sorted(missing)}"
        # a `batches` result is read whole before the next query runs (which would end its stream)
        results = {fn.__name__: whole(fn(con, **params)) for fn, params in read}
        assert {name for name, found in results.items() if not found} == EMPTY
        # Status of one run reads only that run's attempts, and says the same of it as status of all.
        every = queries.run_status(con, run_ids=[])
        assert queries.run_status(con, run_ids=[seq]) == [r for r in every if r["run_id"] == seq]
        assert [(r["n_tasks"], r["n_passed"], r["n_valid_attempts"]) for r in every] == [(3, 0, 6), (3, 1, 6)]
        # What a restart would discard: every attempt row of the generation and its calls' spend.
        assert [tuple(r.values()) for r in results["generation_paid"]] == con.execute(
            "SELECT (SELECT count(*) FROM attempts WHERE run_id = $r AND generation = 1), sum(cost_usd), "
            "count(*) FILTER (WHERE cost_usd IS NULL AND error IS NULL), sum(input_tokens), "
            "sum(output_tokens) FROM calls WHERE run_id = $r AND generation = 1", {"r": seq}).fetchall()
        assert results["last_call_index"] == 1 and results["count_tables"] == 1
        assert results["get_run"] == run and results["export_parquet_runs"].num_rows == 2
        # A study's look: per chain, seq@k's task 2 solved on attempt 2, every other slot valid and wrong.
        chains = results["study_chain_outcomes"]
        keys = [(c["run_id"], c["task_index"]) for c in chains]
        assert keys == sorted(keys)
        assert {(c["metric"], c["task_index"], c["first_success"], c["n_valid"], c["valid_prefix"])
                for c in chains} == {("pass@k", 1, None, 2, 2), ("pass@k", 2, None, 2, 2), ("seq@k", 1, None, 2, 2),
                                     ("seq@k", 2, 2, 2, 2)}
        register_batches(con, uid)
        for fn, params in write:
            assert fn(con, **params) is None
        after = store.get_run(con, seq)
        assert after is not None and (after["k"], after["generation"]) == (K + 2, 2)
        batch = queries.list_batches(con, run_ids=[seq])
        assert [(b["batch_id"], b["state"], b["n_done"], b["age_s"]) for b in batch] == [("batch_1", "ended", 1, 3600)]
        assert [(i["custom_id"], i["task_index"], i["batch_id"]) for i in queries.run_batch_items(
            con, run_id=seq, generation=1)] == [("t1-c1-a1-actor-1", 1, "batch_1")]
        assert {r["run_id"] for r in queries.list_runs(con)} == {seq, pas, "new-run", "imported-run"}
        assert queries.last_call_index(con, attempt_uid=uid) == 2
        [limit] = queries.latest_endpoint_limits(con)
        assert (limit["api_base"], limit["sustained"], limit["bounded"], limit["run_id"]) == (
            "http://127.0.0.1:1/v1", 24, True, seq) and 0 <= limit["age_hours"] < 1
        # The task from JSON and the Arrow appends landed whole: one task, one attempt with its one call.
        assert queries.get_task_identities(con, run_id="imported-run") == [(1, "t1", "h")]
        assert queries.import_known_attempts(con, run_id="imported-run") == [("copied-uid",)]
        assert queries.last_call_index(con, attempt_uid="copied-uid") == 1
        # A study's rows come back as written: its task, its look (with its arm's other study listed).
        assert [s["study_id"] for s in queries.studies_of_runs(con, seq_run_id=seq, partner_run_id=pas)] == ["s1"]
        assert [(t["position"], t["task_index"], t["partner_cost_usd"]) for t in
                queries.study_tasks_of(con, study_id="s1")] == [(1, 2, 0.5)]
        (listed,) = queries.list_studies(con)
        assert (listed["n_tasks"], listed["decision"], listed["n_updates"], json.loads(listed["task_order"])) == (
            1, "undecided", 1, [2, 1, 3])
        # The re-judging run links every slot of the source's attempts that count, and each is pending.
        pending = queries.rejudge_pending(con, run_id="new-run", generation=1)
        assert len(pending) == len(queries.import_valid_slots(con, run_id=seq)) == 6
        # The writer's fold of a chain: its attempts and calls read back through the registered keys,
        # its kept row replaced from a registered Arrow table (seqk.store.kept.keep_chains_of).
        key = "SELECT run_id, generation, task_index, chain_index FROM chain_kept WHERE run_id = $r AND task_index = 1"
        con.register("seqk_kept_keys", con.execute(
            f"SELECT 0 AS key_no, * FROM ({key})", {"r": seq}).to_arrow_table())
        assert set(queries.kept_chain_attempts(con).column("attempt_index").to_pylist()) == {1, 2}
        assert set(queries.kept_chain_calls(con).column("attempt_index").to_pylist()) == {1, 2}
        con.register("seqk_kept_batch", con.execute(
            "SELECT * FROM chain_kept WHERE run_id = $r AND task_index = 1", {"r": seq}).to_arrow_table())
        assert queries.forget_registered_kept_chains(con) is None
        assert con.execute(key, {"r": seq}).fetchall() == []
        assert queries.append_kept_chains(con) is None
        assert len(con.execute(key, {"r": seq}).fetchall()) == 1


def test_a_renamed_parameter_fails_at_the_call():
    with pytest.raises(TypeError, match="unexpected keyword argument 'runs'"):
        queries.run_status(None, runs=[])  # type: ignore[arg-type, call-arg]


def test_sql_runs_only_inside_the_store_and_named_queries_only_in_execute():
    import ast
    from pathlib import Path

    import seqk

    root = Path(seqk.__file__).parent
    outside, loaders = [], []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            call = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            if call and node.func.attr in ("execute", "executemany", "sql", "query") \
                    and not where.startswith("store/"):
                outside.append(f"{where}:{node.lineno}")
            if isinstance(node, ast.ImportFrom) and node.module == "seqk.store.sqlfiles" \
                    and any(alias.name == "queries" for alias in node.names):
                loaders.append(where)
    assert outside == [], "SQL executed outside seqk/store"
    # Named queries' text is read by the one function that runs them, and by the code generator.
    assert sorted(loaders) == ["store/codegen.py", "store/execute.py"]
