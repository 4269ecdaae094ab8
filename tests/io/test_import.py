"""`seqk import`: export then import gives identical rows; trees without config.json (as
S3 holds them) and trees seq_k wrote join the database too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from helpers import judge_says, make_run, write_variant
from scripts import solves_on
from typer.testing import CliRunner

from seqk import models
from seqk.cli import app
from seqk.config import runspec
from seqk.errors import RunConflict
from seqk.io import export, importing, tree
from seqk.run import engine

runner = CliRunner()
ORDER = {"runs": "run_id", "tasks": "run_id, task_index", "attempts": "attempt_uid",
         "calls": "attempt_uid, call_index"}


def rows(db: Path, table: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(f"SELECT * FROM {table} ORDER BY {ORDER[table]}").fetchall()


def run_dicts(db: Path) -> list[dict]:
    with duckdb.connect(str(db), read_only=True) as con:
        cur = con.execute("SELECT * FROM runs ORDER BY run_id")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def several_runs(tmp_path: Path, db: Path) -> list[str]:
    """A seq@k LLM-judge/critic run with a judge error retried, and a pass@k run."""
    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    models.register_mock("mock/critic", lambda p: "Look again.")
    models.register_mock("mock/judge", lambda p: "maybe?" if "word w3?" in p else judge_says(p))
    keys = {"benchmark": "toyjudge", "judge_model": "mock/judge", "feedback_mode": "critic",
            "critic_model": "mock/critic", "options": {"n": 4}}
    seq = make_run(tmp_path, db, **keys)
    models.register_mock("mock/judge", judge_says)
    engine.run(seq, db)  # retries the errored attempt: the error row stays, superseded
    passk = make_run(tmp_path, db, metric="pass@k", k=2)
    return [seq.run_id, passk.run_id]


def test_export_then_import_gives_identical_rows(tmp_path, db):
    run_ids = several_runs(tmp_path, db)
    assert sum(1 for r in rows(db, "attempts") if r[6] == "error") == 1
    export.export_runs([], db, to=tmp_path / "out")
    fresh = tmp_path / "fresh.duckdb"
    results = importing.import_tree(tmp_path / "out", fresh)
    assert sorted(r.run_id for r in results) == sorted(run_ids)
    for table in ORDER:
        assert rows(fresh, table) == rows(db, table), table
    # Importing again adds nothing.
    again = importing.import_tree(tmp_path / "out", fresh)
    assert all(r.attempts == 0 and r.tasks == 0 and not r.new_run for r in again)
    assert len(rows(fresh, "attempts")) == len(rows(db, "attempts"))


def test_a_tree_without_config_json_resumes_as_the_same_run(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 2}))
    spec = make_run(tmp_path, db, k=2)
    export.export_run(spec.run_id, db, to=tmp_path / "out")
    (tree.run_dir(tmp_path / "out", spec.run_id) / "config.json").unlink()  # as S3 holds it
    fresh = tmp_path / "fresh.duckdb"
    importing.import_tree(tmp_path / "out", fresh)
    for table in ("tasks", "attempts", "calls"):
        assert rows(fresh, table) == rows(db, table), table
    (old,), (new,) = run_dicts(db), run_dicts(fresh)
    same = ["run_id", "benchmark", "slice", "metric", "k", "generation", "feedback_mode",
            "actor_model", "judge_model", "critic_model", "verifier", "fingerprint"]
    assert {c: new[c] for c in same} == {c: old[c] for c in same}
    # The fingerprint came along, so the same variant resumes the imported run.
    again = engine.run(spec, fresh)
    assert again.prepared.action == "resume" and again.attempts_written == 0


SEQ_K_ATTEMPT = {
    "task_id": "cancel-async-tasks", "task_index": 2, "metric": "seq@k", "feedback_mode": "raw",
    "attempt_index": 1,
    "actor": {"model": "anthropic/claude-sonnet-4-6", "prompt": "Fix it.", "output": "done",
              "input_tokens": 1375958, "cached_tokens": 1218604, "thinking_tokens": 0,
              "output_tokens": 41715},
    "judge": {"model": None, "success": False, "score": 0.0, "raw_eval_output": "1 failed",
              "details": {"tests": 3}, "calls": []},
    "critic": {"model": None, "feedback": "1 test failed.", "calls": []},
}


def write_seq_k_tree(root: Path) -> Path:
    """A run folder as seq_k writes it: no seqk fields anywhere, no config.json."""
    run = root / "terminalbench/seqk/anthropic__claude-sonnet-4-6/harbor/raw"
    (run / "task-2").mkdir(parents=True)
    (run / "task-2/task_meta.json").write_text(json.dumps(
        {"task_id": "cancel-async-tasks", "task_index": 2, "prompt": "Fix it."}))
    (run / "task-2/attempt-1.json").write_text(json.dumps(SEQ_K_ATTEMPT))
    second = SEQ_K_ATTEMPT | {"attempt_index": 2,
                              "judge": SEQ_K_ATTEMPT["judge"] | {"success": True, "score": 1.0},
                              "critic": {"model": None, "feedback": None, "calls": []}}
    (run / "task-2/attempt-2.json").write_text(json.dumps(second))
    (run / "summary.json").write_text(json.dumps(
        {"metric": "seq@k", "model": "anthropic/claude-sonnet-4-6", "feedback_mode": "raw",
         "tasks": 1, "k": 5, "seq@1": 0.0, "last_updated": "2026-06-20T10-00-00Z"}))
    return run


def test_a_tree_seq_k_wrote_joins_the_database(tmp_path, db):
    write_seq_k_tree(tmp_path / "old")
    result = runner.invoke(app, ["import", str(tmp_path / "old"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    run_id = "terminalbench/seqk/anthropic__claude-sonnet-4-6/harbor/raw"
    assert f"imported {run_id} (new run)" in result.output
    assert "1 tasks, 2 attempts, 2 calls added" in result.output
    (run,) = run_dicts(db)
    assert (run["benchmark"], run["metric"], run["k"], run["verifier"], run["judge_model"],
            run["critic_model"], run["actor_model"]) == (
        "terminalbench", "seq@k", 5, "harbor", None, None, "anthropic/claude-sonnet-4-6")
    with duckdb.connect(str(db), read_only=True) as con:
        attempts = con.execute("SELECT attempt_index, status, success, feedback, judge_details "
                               "FROM attempts ORDER BY attempt_index").fetchall()
        cost = con.execute("SELECT round(cost_usd, 6), role FROM calls LIMIT 1").fetchone()
    assert attempts == [(1, "ok", False, "1 test failed.", '{"tests": 3}'),
                        (2, "ok", True, None, '{"tests": 3}')]
    # Cost comes from the price table: the seed's published figure for these tokens.
    assert cost == (1.463368, "actor")
    again = runner.invoke(app, ["import", str(tmp_path / "old"), "--db", str(db)])
    assert "0 attempts, 0 calls added; 2 attempts already in the database" in again.output
    # And the imported run exports back to the seed's shape.
    export.export_run(run_id, db, to=tmp_path / "new")
    back = json.loads((tmp_path / "new" / run_id / "task-2/attempt-1.json").read_text())
    # Every field seq_k wrote comes back as it was; seqk's own fields are added beside them.
    for section in ("actor", "judge", "critic"):
        assert {k: back[section][k] for k in SEQ_K_ATTEMPT[section]} == SEQ_K_ATTEMPT[section]
    top = [k for k in SEQ_K_ATTEMPT if k not in ("actor", "judge", "critic")]
    assert {k: back[k] for k in top} == {k: SEQ_K_ATTEMPT[k] for k in top}


def test_importing_a_different_run_under_the_same_id_is_refused(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    spec = make_run(tmp_path, db, k=2)
    export.export_run(spec.run_id, db, to=tmp_path / "out")
    other = tmp_path / "other.duckdb"
    engine.run(runspec.load(write_variant(tmp_path, benchmark="toy", metric="seq@k", k=2,
                                          model="mock/actor", temperature=0.1,
                                          options={"n": 3})), other)
    with pytest.raises(RunConflict, match="another fingerprint"):
        importing.import_tree(tmp_path / "out", other)
    result = runner.invoke(app, ["import", str(tmp_path / "out"), "--db", str(other)])
    assert result.exit_code == 2 and "importing would mix results" in result.output


def test_a_single_run_folder_or_nothing(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1}))
    spec = make_run(tmp_path, db, k=1)
    export.export_run(spec.run_id, db, to=tmp_path / "out")
    single = tmp_path / "copy" / spec.run_id
    shutil.copytree(tree.run_dir(tmp_path / "out", spec.run_id), single)
    (result,) = importing.import_tree(single, tmp_path / "fresh.duckdb")
    assert result.run_id == spec.run_id and result.attempts == 3
    empty = runner.invoke(app, ["import", str(tmp_path / "copy" / "toy-plain" / "nothing"),
                                "--db", str(db)])
    assert empty.exit_code == 2 and "no folder at" in empty.output
    (tmp_path / "bare").mkdir()
    bare = runner.invoke(app, ["import", str(tmp_path / "bare"), "--db", str(db)])
    assert bare.exit_code == 2 and "no run folders" in bare.output


def test_agentic_attempts_with_several_or_no_actor_calls_round_trip():
    from datetime import datetime

    at = datetime(2026, 1, 2, 3, 4, 5, 678901)
    run = {"metric": "seq@k", "feedback_mode": "binary", "actor_model": "mock/agent",
           "judge_model": None, "critic_model": None}
    attempt = {"attempt_uid": "u1", "task_id": "t1", "task_index": 1, "attempt_index": 1,
               "k": 2, "status": "ok", "success": False, "score": 0.5, "prompt": "Solve it.",
               "output": "final answer", "raw_eval_output": "half", "judge_details": "{}",
               "feedback": "Incorrect.", "error": None, "started_at": at, "finished_at": at}

    def call(index: int, prompt: str, output: str, tokens: int | None) -> dict:
        return {"call_index": index, "role": "actor", "model": "mock/agent", "prompt": prompt,
                "output": output, "input_tokens": tokens, "cached_tokens": 0,
                "thinking_tokens": 0, "output_tokens": tokens, "cost_usd": 0.0,
                "latency_s": 0.1, "retries": 0, "error": None, "started_at": at}

    calls = [call(1, "step 1", "ls", 10), call(2, "step 2", "cat", 5)]
    data = json.loads(tree.json_text(tree.attempt_json(run, attempt, calls)))
    assert data["actor"]["input_tokens"] == 15 and len(data["actor"]["calls"]) == 2
    for given in (calls, []):
        data = json.loads(tree.json_text(tree.attempt_json(run, attempt, given)))
        record = tree.attempt_record(data, run_id="r", generation=1, k=2, attempt_uid="u1",
                                     imported_at=at)
        assert (record.prompt, record.output, record.score, record.started_at) == (
            "Solve it.", "final answer", 0.5, at)
        assert [(c.prompt, c.output, c.input_tokens, c.started_at) for c in record.calls] == [
            (c["prompt"], c["output"], c["input_tokens"], at) for c in given]


def test_the_same_run_made_in_another_database_does_not_double_its_slots(tmp_path, db):
    models.register_mock("mock/actor", lambda p: "wrong")
    path = write_variant(tmp_path, metric="pass@k", k=3, model="mock/actor", options={"n": 2})
    other = tmp_path / "other.duckdb"
    engine.run(runspec.load(path), db)
    engine.run(runspec.load(path), other)
    export.export_runs([], other, to=tmp_path / "out")
    (result,) = importing.import_tree(tmp_path / "out", db)
    assert result.attempts == 0 and result.skipped == 6
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM attempts "
                           "GROUP BY task_index, attempt_index)").fetchone()[0] == 1


def test_folder_names_hold_no_colon_and_import_reads_both_spellings(tmp_path, db):
    spec = runspec.load(write_variant(tmp_path, benchmark="toy", metric="pass@k", k=1,
                                      model="mock/py:scripts:odd_tasks_right", options={"n": 2}))
    assert ":" in spec.run_id
    engine.run(spec, db)
    export.export_runs([], db, to=tmp_path / "out")
    names = [p.name for p in (tmp_path / "out").rglob("*")]
    assert names and not any(":" in name for name in names)
    assert (tmp_path / "out" / "toy-plain" / "passk" / "mock__py~scripts~odd_tasks_right").is_dir()
    new = importing.import_tree(tmp_path / "out", tmp_path / "new.duckdb")
    assert [r.run_id for r in new] == [spec.run_id]
    # A tree exported before, with ':' in its folder name and no run_id recorded, reads the same.
    old_root = tmp_path / "old"
    shutil.copytree(tmp_path / "out", old_root)
    agent = old_root / "toy-plain" / "passk" / "mock__py~scripts~odd_tasks_right"
    agent.rename(agent.with_name("mock__py:scripts:odd_tasks_right"))
    for summary in old_root.rglob("summary.json"):
        data = json.loads(summary.read_text())
        data.pop("run_id", None)
        summary.write_text(json.dumps(data))
    old = importing.import_tree(old_root, tmp_path / "old.duckdb")
    assert [r.run_id for r in old] == [spec.run_id]
    assert tree.run_id_of(["a", "passk", "m~x", "deterministic", "binary"]) == "a/passk/m:x/deterministic/binary"
