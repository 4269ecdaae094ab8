"""`seqk export`: the canonical seq_k folder tree, field by field, for pass@k and seq@k,
LLM and deterministic judges, template and LLM-critic feedback; idempotent atomic
re-export; errors kept apart; Parquet."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import duckdb
import pytest
from helpers import judge_says, make_run, write_variant
from scripts import solves_on, word_of
from typer.testing import CliRunner

from seqk import models, store
from seqk.analysis import report, status
from seqk.cli import app
from seqk.config import runspec
from seqk.io import export, parquet, tree
from seqk.models.pricing import PRICING_LAST_UPDATED
from seqk.run import engine

runner = CliRunner()
TOKENS = ["input_tokens", "cached_tokens", "thinking_tokens", "output_tokens"]
SEED_ATTEMPT = ["task_id", "task_index", "metric", "feedback_mode", "attempt_index",
                "actor", "judge", "critic"]
SEQK_ATTEMPT = {"attempt_uid", "k", "status", "error", "started_at", "finished_at"}
SEQK_CALL = {"call_index", "cost_usd", "latency_s", "retries", "error", "started_at", "cache_write_tokens",
             "price_tier"}


def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def check_call(call: dict, model: str | None = None) -> None:
    assert list(call)[:7] == ["model", "prompt", "output", *TOKENS]
    assert set(call) - {"model", "prompt", "output", *TOKENS} == SEQK_CALL
    assert isinstance(call["model"], str) and (model is None or call["model"] == model)
    assert isinstance(call["prompt"], str) and isinstance(call["output"], str)
    assert all(isinstance(call[name], int) for name in TOKENS)


def check_attempt(a: dict, *, task_index: int, attempt_index: int, metric: str, mode: str,
                  judge_model: str | None, critic_model: str | None, last: bool) -> None:
    """The seed's per-attempt shape, field by field: names, order, nesting, types, nulls."""
    assert list(a)[:8] == SEED_ATTEMPT and set(a) - set(SEED_ATTEMPT) == SEQK_ATTEMPT
    assert a["task_id"] == f"t{task_index}" and a["task_index"] == task_index
    assert (a["metric"], a["feedback_mode"], a["attempt_index"]) == (metric, mode, attempt_index)
    actor = a["actor"]
    assert list(actor)[:7] == ["model", "prompt", "output", *TOKENS]
    assert actor["model"] == "mock/actor" and isinstance(actor["prompt"], str)
    assert isinstance(actor["output"], str)
    assert all(isinstance(actor[name], int) for name in TOKENS)
    judge = a["judge"]
    assert list(judge) == ["model", "success", "score", "raw_eval_output", "details", "calls"]
    assert judge["model"] == judge_model
    assert isinstance(judge["success"], bool) and isinstance(judge["score"], float)
    assert isinstance(judge["raw_eval_output"], str) and isinstance(judge["details"], dict)
    assert len(judge["calls"]) == (1 if judge_model else 0)
    for call in judge["calls"]:
        check_call(call, judge_model)
    critic = a["critic"]
    assert list(critic) == ["model", "feedback", "calls"] and critic["model"] == critic_model
    # The critic writes feedback on every failed seq@k attempt, the last one included.
    wants_feedback = metric == "seq@k" and not judge["success"]
    assert (critic["feedback"] is not None) == wants_feedback
    assert len(critic["calls"]) == (1 if wants_feedback and critic_model else 0)
    for call in critic["calls"]:
        check_call(call, critic_model)
    assert a["status"] == "ok" and a["error"] is None
    if metric == "seq@k":
        assert f"This is attempt {attempt_index} of 3." in actor["prompt"]
        assert last == (judge["success"] or attempt_index == 3)


MATRIX = [
    # benchmark, metric, feedback_mode: deterministic / LLM judge, pass@k / seq@k,
    # template (binary, hint) / LLM critic (critic)
    ("toy", "pass@k", "binary"),
    ("toy", "seq@k", "binary"),
    ("toy", "seq@k", "critic"),
    ("toyjudge", "pass@k", "critic"),
    ("toyjudge", "seq@k", "hint"),
    ("toyjudge", "seq@k", "critic"),
]


@pytest.mark.parametrize("bench, metric, mode", MATRIX)
def test_tree_follows_the_seed_layout_and_attempt_shape(tmp_path, db, bench, metric, mode):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    models.register_mock("mock/judge", judge_says)
    models.register_mock("mock/critic", lambda p: "Look again at the word.")
    keys = {"benchmark": bench, "metric": metric, "feedback_mode": mode}
    if bench == "toyjudge":
        keys["judge_model"] = "mock/judge"
    if mode == "critic":
        keys["critic_model"] = "mock/critic"
    spec = make_run(tmp_path, db, **keys)
    judge_model = "mock/judge" if bench == "toyjudge" else None
    critic_model = "mock/critic" if mode == "critic" else None
    slots = spec.run_id.split("/")
    assert slots == [f"{bench}-plain", metric.replace("@", ""), "mock__actor",
                     "mock__judge" if judge_model else "deterministic",
                     "critic.mock__critic" if critic_model else mode]

    result = export.export_run(spec.run_id, db, to=tmp_path / "out")
    run_path = tmp_path / "out" / Path(*slots)
    assert result.path == run_path and result.stale == []
    # seq@k stops at the first success; pass@k always takes k samples.
    expected = {1: 1, 2: 2, 3: 3} if metric == "seq@k" else {1: 3, 2: 3, 3: 3}
    files = sorted(p.relative_to(run_path).as_posix() for p in run_path.rglob("*") if p.is_file())
    assert files == sorted(["config.json", "summary.json"] + [
        f"task-{t}/{name}" for t, n in expected.items()
        for name in ["task_meta.json", "summary.json"] + [f"attempt-{j}.json"
                                                          for j in range(1, n + 1)]])
    for t, n in expected.items():
        assert load(run_path / f"task-{t}/task_meta.json")["task_id"] == f"t{t}"
        for j in range(1, n + 1):
            check_attempt(load(run_path / f"task-{t}/attempt-{j}.json"), task_index=t,
                          attempt_index=j, metric=metric, mode=mode, judge_model=judge_model,
                          critic_model=critic_model, last=j == n)
    summary = load(run_path / "summary.json")
    label = metric.split("@")[0]
    assert list(summary)[:5] == ["metric", "model", "feedback_mode", "tasks", "k"]
    assert [summary[f"{label}@{t}"] for t in (1, 2, 3)] == (
        [0.3333, 0.6667, 0.6667] if metric == "seq@k" else [0.3333, 0.3333, 0.3333])
    assert set(summary["se"]) == {f"{label}@{t}" for t in (1, 2, 3)}
    assert ("delta" in summary) == (metric == "seq@k")
    models_used = {"mock/actor"} | {m for m in (judge_model, critic_model) if m}
    if metric == "pass@k":
        models_used.discard(critic_model)  # pass@k never asks the critic
    assert set(summary["tokens"]) == models_used
    for tokens in summary["tokens"].values():
        assert list(tokens) == [*TOKENS, "cost_usd", "n_unpriced_calls"]
        assert tokens["cost_usd"] == 0.0 and tokens["n_unpriced_calls"] == 0
    assert summary["pricing_last_updated"] == PRICING_LAST_UPDATED
    assert isinstance(summary["last_updated"], str)


def test_summaries_add_up_and_match_the_database(tmp_path, db):
    models.register_mock("mock/actor", solves_on({2: 2}))
    models.register_mock("mock/critic", lambda p: "Hmm.")
    spec = make_run(tmp_path, db, feedback_mode="critic", critic_model="mock/critic")
    export.export_run(spec.run_id, db, to=tmp_path)
    run_path = tree.run_dir(tmp_path, spec.run_id)
    summary = load(run_path / "summary.json")
    assert (summary["seq@1"], summary["seq@2"], summary["seq@3"]) == (0.0, 0.3333, 0.3333)
    assert summary["delta"] == 0.3333 and summary["EGS"] == 1.0 and summary["LGS"] == 0.0
    # The same figures, interval and task count as `seqk report`.
    assert summary["delta_n_tasks"] == 3 and len(summary["delta_ci95"]) == 2
    assert summary["tasks"] == 3 and summary["k"] == 3
    with duckdb.connect(str(db), read_only=True) as con:
        per_model = dict(con.execute(
            "SELECT model, sum(input_tokens) FROM calls GROUP BY model").fetchall())
    assert {m: v["input_tokens"] for m, v in summary["tokens"].items()} == per_model
    task = load(run_path / "task-2/summary.json")
    assert list(task)[:8] == ["task_id", "task_index", "success", "best_score", "last_updated",
                              "attempts", "tokens", "pricing_last_updated"]
    assert (task["success"], task["best_score"]) == (True, 1.0)
    assert task["attempts"] == [{"attempt": 1, "success": False, "score": 0.0},
                                {"attempt": 2, "success": True, "score": 1.0}]
    # The per-task tokens are the sums over the task's attempt files (the critic ran once).
    attempt_1 = load(run_path / "task-2/attempt-1.json")
    assert task["tokens"]["mock/critic"]["output_tokens"] == \
        attempt_1["critic"]["calls"][0]["output_tokens"] == 2


def test_pass_at_t_uses_the_unbiased_estimator_on_success(tmp_path, db):
    # Task 1 passes on exactly one of its three samples, task 2 never, task 3 always.
    seen = itertools.count()

    def actor(prompt: str) -> str:
        word = word_of(prompt)
        if word == "w1":
            return word if next(seen) == 1 else "no"
        return word if word == "w3" else "no"

    models.register_mock("mock/actor", actor)
    spec = make_run(tmp_path, db, metric="pass@k")
    export.export_run(spec.run_id, db, to=tmp_path)
    summary = load(tree.run_dir(tmp_path, spec.run_id) / "summary.json")
    # pass@t per task 1: 1 - C(2, t) / C(3, t) = 1/3, 2/3, 1; task 2: 0; task 3: 1.
    assert summary["pass@1"] == round((1 / 3 + 0 + 1) / 3, 4)
    assert summary["pass@2"] == round((2 / 3 + 0 + 1) / 3, 4)
    assert summary["pass@3"] == round(2 / 3, 4)
    assert "delta" not in summary


def test_summary_counts_an_errored_task_as_censored_not_failed(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 2, 2: 3}))
    models.register_mock("mock/judge", lambda p: "maybe?" if "word w4?" in p else judge_says(p))
    seq = make_run(tmp_path, db, benchmark="toyjudge", judge_model="mock/judge", options={"n": 5})
    export.export_run(seq.run_id, db, to=tmp_path)
    summary = load(tree.run_dir(tmp_path, seq.run_id) / "summary.json")
    # Task 4's judge never ruled: its chain is censored at 0 attempts (Kaplan-Meier, issue 27), not a
    # failure, so the curve is that of the 4 others (task 1 passes at 2, task 2 at 3) over all 5 tasks.
    assert [summary[f"seq@{t}"] for t in (1, 2, 3)] == [0.0, 0.25, 0.5]
    assert summary["n_tasks"] == {"seq@1": 5, "seq@2": 5, "seq@3": 5}
    assert summary["errors"] == {"attempts": 1, "open": 1}


def test_unknown_cost_is_a_lower_bound_plus_a_count_in_summary_report_and_status(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    spec = make_run(tmp_path, db, k=1)
    with duckdb.connect(str(db)) as con:  # tasks 1 and 2 priced at $0.25 a call, task 3 unpriced
        con.execute("UPDATE calls SET cost_usd = CASE WHEN task_index < 3 THEN 0.25 END")
        store.rebuild_kept_chains(con)  # calls changed by SQL, not through store.append_attempts
    export.export_run(spec.run_id, db, to=tmp_path)
    run_path = tree.run_dir(tmp_path, spec.run_id)
    whole = load(run_path / "summary.json")["tokens"]["mock/actor"]
    assert (whole["cost_usd"], whole["n_unpriced_calls"]) == (0.5, 1)
    task3 = load(run_path / "task-3" / "summary.json")["tokens"]["mock/actor"]
    assert (task3["cost_usd"], task3["n_unpriced_calls"]) == (None, 1)  # nothing priced: unknown, not 0
    spend = report.report(db=db).runs[0].spend
    assert (spend.cost_usd, spend.n_unpriced_calls) == (0.5, 1)
    [row] = status.status((), db)
    assert (row["cost_usd"], row["n_unpriced_calls"]) == (0.5, 1)
    shown = runner.invoke(app, ["status", "--db", str(db)]).output
    assert "≥0.5000 (1 unpriced)" in shown
    assert "≥$0.5000 (1 unpriced calls)" in report.fmt_cost(report.report(db=db).runs[0])


def test_reexport_is_idempotent_and_touches_nothing(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 2}))
    spec = make_run(tmp_path, db)
    first = export.export_run(spec.run_id, db, to=tmp_path / "out")
    files = sorted((tmp_path / "out").rglob("*.json"))
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files}
    again = export.export_run(spec.run_id, db, to=tmp_path / "out")
    assert first.written == len(files) and (again.written, again.unchanged) == (0, len(files))
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files} == before
    assert not [p for p in (tmp_path / "out").rglob("*") if tree.is_temp(p)]


def test_a_failed_write_leaves_the_old_file_whole(tmp_path, db, monkeypatch):
    models.register_mock("mock/actor", solves_on({}))
    spec = make_run(tmp_path, db, k=1)
    export.export_run(spec.run_id, db, to=tmp_path)
    summary = tree.run_dir(tmp_path, spec.run_id) / "summary.json"
    old = summary.read_bytes()
    models.register_mock("mock/actor", solves_on({1: 1}))
    engine.run(runspec.load(write_variant(tmp_path, benchmark="toy", metric="seq@k", k=2,
                                          model="mock/actor", options={"n": 3},
                                          **{"continue": True})), db)

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        export.export_run(spec.run_id, db, to=tmp_path)
    assert summary.read_bytes() == old
    assert not [p for p in tmp_path.rglob("*") if tree.is_temp(p)]


def test_errors_are_exported_apart_and_kept_after_a_retry(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 1}))
    models.register_mock("mock/judge", lambda p: "maybe?" if "'w2'" in p else judge_says(p))
    keys = {"benchmark": "toyjudge", "judge_model": "mock/judge", "k": 2}
    spec = make_run(tmp_path, db, **keys)
    export.export_run(spec.run_id, db, to=tmp_path)
    task_2 = tree.run_dir(tmp_path, spec.run_id) / "task-2"
    # A reader of seq_k folders sees no attempt for task 2: an error is not a wrong answer.
    assert not list(task_2.glob("attempt-*.json"))
    (error_file,) = (task_2 / "errors").glob("attempt-1.*.json")
    error = load(error_file)
    assert error["status"] == "error" and error["error"]["stage"] == "judge"
    assert error["judge"]["success"] is None and error["actor"]["output"] == "w2"
    summary = load(tree.run_dir(tmp_path, spec.run_id) / "summary.json")
    assert summary["tasks"] == 2 and summary["errors"] == {"attempts": 1, "open": 1}
    # Task 2's outcome is unknown: its chain is censored (issue 27), not counted as a failure.
    assert summary["n_tasks"] == {"seq@1": 3, "seq@2": 3} and summary["seq@1"] == 0.5
    task_summary = load(task_2 / "summary.json")
    assert task_summary["attempts"] == [] and task_summary["best_score"] is None
    assert task_summary["errors"][0]["counts"] is True

    models.register_mock("mock/judge", judge_says)
    engine.run(spec, db)
    result = export.export_run(spec.run_id, db, to=tmp_path)
    assert load(task_2 / "attempt-1.json")["judge"]["success"] is True
    assert error_file.exists() and result.stale == []
    assert load(task_2 / "summary.json")["errors"][0]["counts"] is False
    summary = load(tree.run_dir(tmp_path, spec.run_id) / "summary.json")
    assert summary["tasks"] == 3 and summary["errors"] == {"attempts": 1, "open": 0}


def test_files_of_attempts_that_no_longer_count_are_reported_never_deleted(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    spec = make_run(tmp_path, db, k=2)
    export.export_run(spec.run_id, db, to=tmp_path)
    # A larger k with `continue: false` restarts the run: task 1 now passes at attempt 1.
    models.register_mock("mock/actor", solves_on({1: 1}))
    make_run(tmp_path, db, k=3, **{"continue": False})
    result = export.export_run(spec.run_id, db, to=tmp_path)
    stale = tree.run_dir(tmp_path, spec.run_id) / "task-1" / "attempt-2.json"
    assert result.stale == [stale] and stale.exists()
    assert "1 attempt files from attempts that no longer count" in result.describe()


def test_parquet_is_hive_partitioned_and_reexport_replaces_its_partitions(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 2}))
    spec = make_run(tmp_path, db)
    make_run(tmp_path, db, metric="pass@k", k=2)
    out = tmp_path / "pq"
    counts = parquet.export_parquet([], db, to=out)
    parquet.export_parquet([spec.run_id], db, to=out)  # again, one run: no duplicates
    with duckdb.connect(str(db), read_only=True) as con:
        for table in parquet.PARQUET_TABLES:
            assert counts[table] == con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            got = con.execute(
                f"SELECT count(*), count(DISTINCT run_id), min(benchmark) FROM read_parquet("
                f"'{out / table}/**/*.parquet', hive_partitioning = true)").fetchone()
            assert got == (counts[table], 2, "toy")
        partition = out / "attempts" / "benchmark=toy" / f"run_key={spec.run_id.replace('/', '~')}"
        assert list(partition.glob("*.parquet"))
        counted = con.execute(
            f"SELECT count(*) FILTER (WHERE counts) FROM read_parquet("
            f"'{out}/attempts/**/*.parquet', hive_partitioning = true)").fetchone()[0]
        assert counted == con.execute("SELECT count(*) FROM current_attempts").fetchone()[0]


def test_parquet_streams_in_batches_and_holds_every_row_in_order(tmp_path, db, monkeypatch):
    """export --parquet never holds a whole table: DuckDB hands it BATCH_ROWS rows at a time and
    each row group of a file is (part of) one batch; the files hold the rows parquet_tables reads
    whole, in the same order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from seqk.store import execute

    models.register_mock("mock/actor", solves_on({1: 2, 3: 3}))
    spec = make_run(tmp_path, db, k=3, options={"n": 6})
    make_run(tmp_path, db, metric="pass@k", k=3, options={"n": 6})
    with store.connect(db, read_only=True) as con:
        whole = store.parquet_tables(con, store.resolve_run_ids(con, []), parquet.PARQUET_TABLES)
    monkeypatch.setattr(execute, "BATCH_ROWS", 4)
    monkeypatch.setattr(parquet, "GROUP_ROWS", 10)  # each run its own read of attempts and calls
    with store.connect(db, read_only=True) as con:
        ids = store.resolve_run_ids(con, [])
        sizes = store.queries.export_parquet_rows(con, run_ids=sorted(ids))
        assert parquet._groups(sizes, "attempts") == [[i] for i in sorted(ids)]
    handed: dict[str, list[int]] = {}
    batches_of = store.parquet_batches

    def spied(con, run_ids, name):
        reader = batches_of(con, run_ids, name)
        sizes = handed.setdefault(name, [])

        def passing():
            for batch in reader:
                sizes.append(batch.num_rows)
                yield batch

        return pa.RecordBatchReader.from_batches(reader.schema, passing())

    monkeypatch.setattr(store, "parquet_batches", spied)
    out = tmp_path / "pq"
    counts = parquet.export_parquet([], db, to=out)
    assert counts == {name: table.num_rows for name, table in whole.items()}
    # what the export took from the store came in batches of at most BATCH_ROWS rows
    assert {name: sum(sizes) for name, sizes in handed.items()} == counts
    assert max(max(sizes) for sizes in handed.values()) <= 4 and len(handed["attempts"]) > 2
    assert counts["attempts"] > 8 and counts["calls"] > 8
    for name, table in whole.items():
        files = sorted((out / name).glob("benchmark=*/run_key=*/*.parquet"))
        groups = [pq.ParquetFile(f).metadata.row_group(i).num_rows
                  for f in files for i in range(pq.ParquetFile(f).metadata.num_row_groups)]
        assert max(groups) <= 4 and sum(groups) == table.num_rows, (name, groups)
        # file by file (runs in run_id order, one partition each), the rows as read whole
        read = [pq.read_table(f).to_pylist() for f in files]
        keys = [k for k in table.column_names if k not in ("benchmark", "run_key")]
        assert [{k: r[k] for k in keys} for rows in read for r in rows] == \
            [{k: r[k] for k in keys} for r in table.to_pylist()], name
    assert (out / "attempts" / "benchmark=toy" / f"run_key={spec.run_id.replace('/', '~')}").is_dir()


def test_partition_folders_are_named_as_pyarrows_hive_writer_names_them(tmp_path):
    """Re-exporting over an export pyarrow wrote must replace its partitions, not add folders
    beside them: values are URI-escaped the same way, rows in their order, one file each."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    keys = ["toy~seqk~m~deterministic~binary@warm", "a b", "ü:+=%", "k~l.m_n-o", "z,;!$&'()*"]
    table = pa.table({"x": list(range(10)), "benchmark": ["b@1"] * 10,
                      "run_key": [k for k in keys for _ in (0, 1)]})
    ds.write_dataset(table, tmp_path / "arrow", format="parquet", partitioning=["benchmark", "run_key"],
                     partitioning_flavor="hive")
    parquet._write_partitions(iter(table.to_batches(max_chunksize=3)), tmp_path / "ours")
    folders = {p.relative_to(tmp_path / "arrow").parent for p in (tmp_path / "arrow").rglob("*.parquet")}
    assert {p.relative_to(tmp_path / "ours").parent for p in (tmp_path / "ours").rglob("*.parquet")} == folders
    read = ds.dataset(tmp_path / "ours", format="parquet", partitioning="hive").to_table()
    assert sorted(zip(read["run_key"].to_pylist(), read["x"].to_pylist(), strict=True)) == \
        sorted(zip(table["run_key"].to_pylist(), table["x"].to_pylist(), strict=True))
    # written again over pyarrow's own files: each partition replaced, nothing added beside it
    parquet._write_partitions(iter(table.to_batches(max_chunksize=4)), tmp_path / "arrow")
    assert len(list((tmp_path / "arrow").rglob("*.parquet"))) == len(keys)
    assert not list((tmp_path / "arrow").rglob("*.partial"))
    assert ds.dataset(tmp_path / "arrow", format="parquet", partitioning="hive").count_rows() == 10


def test_a_parquet_export_that_fails_midway_leaves_the_partition_it_was_writing_whole(tmp_path):
    import pyarrow as pa
    import pyarrow.dataset as ds

    table = pa.table({"x": list(range(6)), "benchmark": ["b"] * 6, "run_key": ["r1"] * 3 + ["r2"] * 3})
    parquet._write_partitions(iter(table.to_batches()), tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.parquet")}

    def failing():
        yield pa.record_batch({"x": [7], "benchmark": ["b"], "run_key": ["r1"]})  # r1 is done
        yield pa.record_batch({"x": [8], "benchmark": ["b"], "run_key": ["r2"]})
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        parquet._write_partitions(failing(), tmp_path)
    r1 = tmp_path / "benchmark=b" / "run_key=r1" / "part-0.parquet"
    r2 = tmp_path / "benchmark=b" / "run_key=r2" / "part-0.parquet"
    assert ds.dataset(r1, format="parquet").to_table()["x"].to_pylist() == [7]  # replaced whole
    assert r2.read_bytes() == before[r2]  # the one it was writing: as it was
    assert not list(tmp_path.rglob("*.partial"))


def test_cli_export_and_the_export_at_the_end_of_a_run(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1}))
    variant = write_variant(tmp_path, benchmark="toy", metric="seq@k", k=2, model="mock/actor",
                            options={"n": 2})
    ran = runner.invoke(app, ["run", str(variant), "--db", str(db)])
    assert ran.exit_code == 0, ran.output
    run_id = "toy-plain/seqk/mock__actor/deterministic/binary"
    # By default the run is exported to runs/ beside the database.
    assert f"exported {run_id} to {db.parent / run_id}" in ran.output
    assert (db.parent / run_id / "task-2" / "attempt-2.json").is_file()

    out = runner.invoke(app, ["export", run_id, "--to", str(tmp_path / "x"), "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert "files written" in out.output and (tmp_path / "x" / run_id / "summary.json").is_file()
    pq = runner.invoke(app, ["export", "--parquet", str(tmp_path / "pq"), "--db", str(db)])
    assert pq.exit_code == 0 and "3 attempts rows" in pq.output, pq.output
    missing = runner.invoke(app, ["export", "nope/*", "--db", str(db)])
    assert missing.exit_code == 2 and "no run matches 'nope/*'" in missing.output


def test_export_dir_from_the_variant_and_no_export(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    variant = write_variant(tmp_path, benchmark="toy", metric="pass@k", k=1, model="mock/actor",
                            options={"n": 1}, export_dir=str(tmp_path / "elsewhere"))
    assert runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"]).exit_code == 0
    assert not (tmp_path / "elsewhere").exists()
    ran = runner.invoke(app, ["run", str(variant), "--db", str(db)])
    assert ran.exit_code == 0, ran.output
    assert (tmp_path / "elsewhere" / "toy-plain/passk/mock__actor/deterministic/binary"
            / "task-1" / "attempt-1.json").is_file()
