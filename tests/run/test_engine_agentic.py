"""Agentic benchmarks (run_attempt) through the engine, and what a benchmark's bug does to a run."""

from __future__ import annotations

import json

import pytest
from helpers import rows, write_variant
from scripts import solves_on
from toybench import AGENT_TOOL_TOKENS

from seqk import models
from seqk.config import runspec
from seqk.run import engine


def spec_for(tmp_path, **keys):
    keys = {"benchmark": "toyagent", "model": "mock/actor", "options": {"n": 3},
            "retry": {"max_retries": 0, "base_delay_s": 0.0}} | keys
    return runspec.load(write_variant(tmp_path, **keys))




def test_seq_at_k_agent_sees_history_and_feedback_of_earlier_attempts(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 3}))
    spec = spec_for(tmp_path, metric="seq@k", k=3, feedback_mode="hint")
    result = engine.run(spec, db)
    assert (result.tasks_passed, result.tasks_failed) == (1, 2)
    seen = {a: json.loads(d) for a, d in rows(
        db, "SELECT attempt_index, judge_details FROM attempts WHERE task_index = 1")}
    assert seen[1] == {"attempt_index": 1, "k": 3, "seq": True, "history": []}
    # Attempt 3 got both failed attempts with the hint mode's feedback, in order.
    assert seen[3]["history"] == [[1, "not-w1", "Incorrect; the word was w1."],
                                  [2, "not-w1", "Incorrect; the word was w1."]]
    prompt = rows(db, "SELECT prompt FROM attempts WHERE task_index = 1 AND attempt_index = 3")[0][0]
    assert "<Feedback 2>\nIncorrect; the word was w1.\n</Feedback 2>" in prompt
    assert rows(db, "SELECT count(*) FROM attempts WHERE success")[0][0] == 1


def test_pass_at_k_agent_samples_independently_and_counts_its_own_usage(tmp_path, db):
    models.register_mock("mock/actor", lambda p: "w2" if "w2" in p else "nope")
    spec = spec_for(tmp_path, metric="pass@k", k=2)
    engine.run(spec, db)
    assert rows(db, "SELECT DISTINCT judge_details->>'history' FROM attempts") == [("[]",)]
    assert rows(db, "SELECT count(*) FROM attempts WHERE success")[0][0] == 2
    # Per attempt: the metered actor call plus the agent's own usage, stored as an actor call.
    by_model = dict(((m, n), (i, o)) for m, n, i, o in rows(
        db, "SELECT model, count(*), sum(input_tokens), sum(output_tokens) FROM calls "
            "WHERE role = 'actor' GROUP BY model"))
    assert by_model[("toy/tool", 6)] == (6 * AGENT_TOOL_TOKENS[0], 6 * AGENT_TOOL_TOKENS[1])
    assert ("mock/actor", 6) in by_model


def test_an_agent_crash_is_an_attempt_error_and_stops_that_seq_task(tmp_path, db):
    models.register_mock("mock/actor", lambda p: "crash" if "w2" in p else "nope")
    spec = spec_for(tmp_path, metric="seq@k", k=3)
    result = engine.run(spec, db)
    assert result.error_kinds == {"run_attempt:AgentRunError": 1}
    assert result.tasks_error == 1 and result.tasks_failed == 2
    assert rows(db, "SELECT attempt_index, status, success, error->>'message' FROM attempts "
                    "WHERE task_index = 2") == [(1, "error", None, "the toy agent crashed on t2")]


def test_a_bug_in_a_verifier_stops_the_run_loudly_and_keeps_finished_attempts(tmp_path, db):
    models.register_mock("mock/actor", lambda p: "w1" if "w1" in p else "nope")
    spec = spec_for(tmp_path, benchmark="toybuggy", metric="pass@k", k=1, concurrency=1,
                    options={"n": 5})
    with pytest.raises(KeyError, match="missing"):
        engine.run(spec, db)
    # Tasks 1 and 2 finished before task 3's bug; nothing was recorded as a judge error.
    assert rows(db, "SELECT task_index, status, success FROM attempts ORDER BY 1") == [
        (1, "ok", True), (2, "ok", False)]
