"""The run semantics of the seed: pass@k vs seq@k, the critic, k-extension, resume refusals,
errors kept apart from wrong answers."""

from __future__ import annotations

import pytest
from helpers import rows, write_variant
from scripts import solves_on

from seqk import models
from seqk.config import runspec
from seqk.errors import RunConflict, TransientProviderError
from seqk.run import engine


def spec_for(tmp_path, **keys):
    keys.setdefault("benchmark", "toy")
    keys.setdefault("metric", "seq@k")
    keys.setdefault("k", 3)
    keys.setdefault("model", "mock/actor")
    keys.setdefault("options", {"n": 4})
    keys.setdefault("retry", {"max_retries": 2, "base_delay_s": 0.0})
    return runspec.load(write_variant(tmp_path, **keys))




def test_pass_at_k_takes_k_samples_and_never_stops_early(tmp_path, db):
    models.register_mock("mock/actor", lambda p: "w1" if "w1" in p else "nope")
    spec = spec_for(tmp_path, metric="pass@k", k=3, feedback_mode="critic")
    result = engine.run(spec, db)
    assert result.attempts_written == 4 * 3
    per_task = dict(rows(db, "SELECT task_index, count(*) FROM attempts GROUP BY 1"))
    assert per_task == {1: 3, 2: 3, 3: 3, 4: 3}
    # Task 1 succeeded on its first sample and still got all three.
    assert rows(db, "SELECT count(*) FROM attempts WHERE task_index = 1 AND success")[0][0] == 3
    # pass@k never asks the critic, and its prompt is the bare task.
    assert rows(db, "SELECT count(*) FROM calls WHERE role = 'critic'")[0][0] == 0
    assert rows(db, "SELECT DISTINCT prompt FROM attempts WHERE task_index = 2") == [("Say the word w2.",)]
    assert result.tasks_passed == 1 and result.tasks_failed == 3


def test_seq_at_k_stops_at_first_success_and_critic_runs_on_last_failure(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 1, 2: 2}))
    critic = models.register_mock("mock/critic", lambda p: "Think again.")
    spec = spec_for(tmp_path, k=3, feedback_mode="critic", critic_model="mock/critic")
    engine.run(spec, db)
    counts = dict(rows(db, "SELECT task_index, count(*) FROM attempts GROUP BY 1"))
    assert counts == {1: 1, 2: 2, 3: 3, 4: 3}
    # The critic ran on every failed attempt, the last one included: 0 + 1 + 3 + 3.
    assert critic.calls == 7
    last = rows(db, "SELECT feedback FROM attempts WHERE task_index = 3 AND attempt_index = 3")
    assert last == [("Think again.",)]
    assert rows(db, "SELECT feedback FROM attempts WHERE success") == [(None,), (None,)]
    # Attempt 2's prompt shows attempt 1 and its feedback, exactly.
    prompt = rows(db, "SELECT prompt FROM attempts WHERE task_index = 3 AND attempt_index = 2")[0][0]
    assert prompt == (
        "Say the word w3.\n\nThis is attempt 2 of 3. Review your previous attempt(s) and the "
        "feedback below, then provide an improved answer.\n\n<PreviousAttempt 1>\nnot-w3\n"
        "</PreviousAttempt 1>\n\n<Feedback 1>\nThink again.\n</Feedback 1>")


def test_roles_chain_and_nulls(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    models.register_mock("mock/j", ["Incorrect."])
    models.register_mock("mock/c", ["hmm"])
    spec = spec_for(tmp_path, benchmark="toyjudge", feedback_mode="critic")
    assert (spec.actor.model, spec.judge.model, spec.critic.model) == ("mock/actor",) * 3
    spec = spec_for(tmp_path, benchmark="toyjudge", feedback_mode="critic", judge_model="mock/j")
    assert spec.critic.model == "mock/j"
    assert spec.judge.temperature == 0.0 and spec.actor.temperature == 0.7
    spec = spec_for(tmp_path, feedback_mode="binary", judge_model="mock/j", critic_model="mock/c")
    assert spec.judge.model is None and spec.critic.model is None
    assert spec.notes == ("judge_model is not used: toy's verifier is deterministic",
                          "critic_model is not used: feedback mode 'binary' is a template")
    assert spec.run_id == "toy-plain/seqk/mock__actor/deterministic/binary"


def test_two_critic_modes_with_one_critic_never_share_a_run(tmp_path):
    models.register_mock("mock/actor", solves_on({}))
    models.register_mock("mock/c", ["hmm"])
    a = spec_for(tmp_path, feedback_mode="critic", critic_model="mock/c")
    b = spec_for(tmp_path, feedback_mode="socratic", critic_model="mock/c")
    assert a.run_id != b.run_id
    assert a.run_id.endswith("/critic.mock__c")


def test_same_yaml_resumes_without_duplicates(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 2}))
    spec = spec_for(tmp_path, k=2)
    first = engine.run(spec, db)
    again = engine.run(spec, db)
    assert first.attempts_written == 2 * 4 and again.attempts_written == 0
    assert again.prepared.action == "resume" and again.prepared.pending == {}


def test_k_extension_with_continue_keeps_attempts(tmp_path, db):
    models.register_mock("mock/actor", solves_on({1: 3}))
    engine.run(spec_for(tmp_path, k=2), db)
    before = rows(db, "SELECT attempt_uid FROM attempts ORDER BY 1")
    result = engine.run(spec_for(tmp_path, k=4, **{"continue": True}), db)
    assert result.prepared.action == "extend"
    # Every task failed k=2; each goes on from attempt 3; task 1 passes there.
    assert result.prepared.pending == {1: [3], 2: [3], 3: [3], 4: [3]}
    after = rows(db, "SELECT attempt_uid FROM attempts ORDER BY 1")
    assert set(before) <= set(after)
    assert rows(db, "SELECT max(attempt_index) FROM attempts WHERE task_index = 1")[0][0] == 3
    assert rows(db, "SELECT max(attempt_index) FROM attempts WHERE task_index = 2")[0][0] == 4
    # The extension's first prompt carries the old attempts and their (bridging) feedback.
    prompt = rows(db, "SELECT prompt FROM attempts WHERE task_index = 2 AND attempt_index = 3")[0][0]
    assert "This is attempt 3 of 4." in prompt and "<Feedback 2>\nIncorrect.\n</Feedback 2>" in prompt


def test_larger_k_with_continue_false_restarts(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    engine.run(spec_for(tmp_path, k=2), db)
    result = engine.run(spec_for(tmp_path, k=3, **{"continue": False}), db)
    assert result.prepared.action == "restart" and result.prepared.generation == 2
    assert result.attempts_written == 4 * 3
    assert rows(db, "SELECT count(*) FROM current_attempts")[0][0] == 12
    assert rows(db, "SELECT count(*) FROM attempts")[0][0] == 8 + 12  # old rows kept


def test_smaller_k_is_refused(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    engine.run(spec_for(tmp_path, k=3), db)
    with pytest.raises(RunConflict, match="k=2 is smaller"):
        engine.run(spec_for(tmp_path, k=2), db)


def test_fingerprint_change_is_refused_naming_fields(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    engine.run(spec_for(tmp_path), db)
    with pytest.raises(RunConflict) as info:
        engine.run(spec_for(tmp_path, temperature=0.2, max_tokens=50), db)
    assert "actor.temperature" in str(info.value) and "actor.max_tokens" in str(info.value)
    with pytest.raises(RunConflict, match="options.flavour"):
        # The slice name is the same only if flavour stays; use a benchmark option that keeps it.
        spec = spec_for(tmp_path, options={"n": 4, "flavour": "spicy"})
        spec = spec.__class__(**{**spec.__dict__, "run_id": spec_for(tmp_path).run_id})
        engine.run(spec, db)


def test_task_identity_is_checked_on_resume(tmp_path, db):
    models.register_mock("mock/actor", solves_on({}))
    spec = spec_for(tmp_path, k=1)
    engine.run(spec, db)
    from seqk.benchmark import Task

    changed = list(spec.tasks)
    changed[1] = Task(2, "t2-new", changed[1].prompt, changed[1].answer)
    with pytest.raises(RunConflict, match="task 2 .*was 't2'"):
        engine.run(spec.__class__(**{**spec.__dict__, "tasks": changed}), db)


def test_failed_provider_call_is_an_error_not_a_failure(tmp_path, db):
    def flaky(prompt):
        if "w2" in prompt:
            raise TransientProviderError("503 overloaded", status_code=503)
        return "wrong"

    models.register_mock("mock/actor", flaky)
    spec = spec_for(tmp_path, k=2)
    result = engine.run(spec, db)
    assert result.tasks_error == 1 and result.error_kinds == {"actor:TransientProviderError": 1}
    err = rows(db, "SELECT status, success, error->>'stage', error->>'type' FROM attempts "
                   "WHERE task_index = 2")
    assert err == [("error", None, "actor", "TransientProviderError")]
    # The failed call is kept, with its retries, and no tokens.
    assert rows(db, "SELECT retries, input_tokens, error IS NOT NULL FROM calls WHERE task_index = 2") \
        == [(2, None, True)]
    # The next run of the same YAML retries the errored attempt, appending a row.
    models.register_mock("mock/actor", solves_on({2: 1}))
    again = engine.run(spec, db)
    assert again.prepared.pending == {2: [1]}
    assert rows(db, "SELECT count(*) FROM attempts WHERE task_index = 2")[0][0] == 2
    assert rows(db, "SELECT status, success FROM current_attempts WHERE task_index = 2") == [("ok", True)]


def test_transient_errors_are_retried_then_succeed(tmp_path, db):
    calls = {"n": 0}

    def rate_limited_twice(prompt):
        calls["n"] += 1
        if calls["n"] <= 2:
            raise TransientProviderError("429", status_code=429, retry_after=0.01)
        return "wrong"

    models.register_mock("mock/actor", rate_limited_twice)
    engine.run(spec_for(tmp_path, k=1, options={"n": 1}), db)
    assert rows(db, "SELECT status, success FROM attempts") == [("ok", False)]
    assert rows(db, "SELECT retries FROM calls") == [(2,)]


def test_permanent_errors_are_not_retried(tmp_path, db):
    from seqk.errors import PermanentProviderError

    calls = {"n": 0}

    def bad_key(prompt):
        calls["n"] += 1
        raise PermanentProviderError("401 invalid api key", status_code=401)

    models.register_mock("mock/actor", bad_key)
    engine.run(spec_for(tmp_path, k=1, options={"n": 1}), db)
    assert calls["n"] == 1
    assert rows(db, "SELECT status, error->>'status_code' FROM attempts") == [("error", "401")]


def test_unparseable_judge_reply_is_an_error_and_keeps_actor_output(tmp_path, db):
    models.register_mock("mock/actor", lambda p: "w1")
    models.register_mock("mock/judge", lambda p: "maybe?")
    spec = spec_for(tmp_path, benchmark="toyjudge", judge_model="mock/judge", k=1,
                    options={"n": 1})
    engine.run(spec, db)
    assert rows(db, "SELECT status, output, error->>'stage' FROM attempts") == [("error", "w1", "judge")]
    assert rows(db, "SELECT role, output_tokens FROM calls ORDER BY call_index") == [
        ("actor", 1), ("judge", 2)]


def test_mock_tokens_are_counted_from_text(tmp_path, db):
    models.register_mock("mock/actor", lambda p: "one two three")
    engine.run(spec_for(tmp_path, k=1, options={"n": 1}), db)
    # "Say the word w1." = Say / the / word / w1 / . ; plus the seq note.
    (inp, out, cost), = rows(db, "SELECT input_tokens, output_tokens, cost_usd FROM calls")
    assert out == 3 and inp > 5 and cost == 0.0


def _seeds_by_task(server) -> dict[tuple[int, int], int]:
    """(task_index, position of the call within its task) -> seed, from the server's requests."""
    from scripts import word_of

    found: dict[int, list[int]] = {}
    for request in server.requests:
        task = int(word_of(request["messages"][-1]["content"])[1:])
        found.setdefault(task, []).append(request["seed"])
    return {(task, i + 1): seed for task, seen in found.items() for i, seed in enumerate(seen)}


def test_seeds_differ_across_tasks_and_seq_attempt_1_shares_pass_sample_1s(tmp_path, db):
    from servers import ScriptedServer

    from seqk.seeds import seed_for

    common = {"k": 3, "seed": 10, "options": {"n": 2}, "model": "openai/smol",
              "feedback_mode": "binary"}
    with ScriptedServer([]) as server:
        engine.run(spec_for(tmp_path, metric="pass@k", concurrency=1, **common,
                            api_base=server.api_base), db)
    pass_seeds = sorted(r["seed"] for r in server.requests)
    with ScriptedServer([]) as server:  # "hello there" never solves: all k attempts run
        engine.run(spec_for(tmp_path, metric="seq@k", **common, api_base=server.api_base), db)
    seq = _seeds_by_task(server)
    # pass@k sample s of task i is chain s, attempt 1; seq@k attempt t is chain 1, attempt t.
    assert pass_seeds == sorted(seed_for(10, i, s, 1) for i in (1, 2) for s in (1, 2, 3))
    assert seq == {(i, t): seed_for(10, i, 1, t) for i in (1, 2) for t in (1, 2, 3)}
    assert seq[(1, 1)] != seq[(2, 1)] and seq[(1, 2)] != seq[(2, 2)]  # no luck shared across tasks
    assert {seq[(i, 1)] for i in (1, 2)} <= set(pass_seeds)  # same seed, only the framing differs


def test_missing_local_model_fails_before_anything_is_written(tmp_path, db):
    from seqk.errors import MissingExtra

    spec = spec_for(tmp_path, model="local//nowhere/model.gguf")
    with pytest.raises(MissingExtra, match="nowhere/model.gguf"):
        engine.run(spec, db)
    assert not db.exists()


def test_a_failed_critic_never_rerolls_a_judged_answer(tmp_path, db):
    from seqk.errors import PermanentProviderError

    actor = models.register_mock("mock/actor", ["nope", "w1"])
    models.register_mock("mock/critic", [PermanentProviderError("401 bad key", status_code=401)])
    spec = spec_for(tmp_path, k=2, feedback_mode="critic", critic_model="mock/critic",
                    options={"n": 1})
    first = engine.run(spec, db)
    assert first.tasks_error == 1 and first.error_kinds == {"critic:PermanentProviderError": 1}
    # The judged wrong answer stays valid; only its feedback is missing.
    assert rows(db, "SELECT status, success, feedback, error->>'stage' FROM attempts") == [
        ("ok", False, None, "critic")]

    # Next run: the critic is asked again for attempt 1, then attempt 2 runs with its feedback.
    models.register_mock("mock/critic", ["Try the word in the prompt."])
    again = engine.run(spec, db)
    assert actor.calls == 2  # attempt 1 once, then attempt 2: attempt 1 was never re-rolled
    assert rows(db, "SELECT attempt_index, status, success, feedback, error FROM attempts_filled "
                    "ORDER BY attempt_index") == [
        (1, "ok", False, "Try the word in the prompt.", None), (2, "ok", True, None, None)]
    # Appended, not updated: the attempt row is as written, the late feedback a row of its own.
    assert rows(db, "SELECT feedback, error->>'stage' FROM attempts WHERE attempt_index = 1") == [
        (None, "critic")]
    assert rows(db, "SELECT feedback, error FROM feedback_fills") == [("Try the word in the prompt.", None)]
    assert again.tasks_passed == 1
    prompt = rows(db, "SELECT prompt FROM attempts WHERE attempt_index = 2")[0][0]
    assert "<Feedback 1>\nTry the word in the prompt.\n</Feedback 1>" in prompt
    # Both critic calls are kept on attempt 1: the failed one and the late one.
    assert rows(db, "SELECT attempt_index, call_index, role, error IS NULL FROM calls "
                    "ORDER BY attempt_index, call_index") == [
        (1, 1, "actor", True), (1, 2, "critic", False), (1, 3, "critic", True), (2, 1, "actor", True)]


def test_a_failed_batch_write_keeps_its_attempts_and_is_retried(tmp_path, db, monkeypatch):
    from seqk import store

    real = store.append_attempts
    failures = {"left": 1}

    def flaky(con, items):
        if failures["left"]:
            failures["left"] -= 1
            raise OSError("disk hiccup")
        return real(con, items)

    monkeypatch.setattr(store, "append_attempts", flaky)
    models.register_mock("mock/actor", solves_on({}))
    result = engine.run(spec_for(tmp_path, k=2), db)
    assert failures["left"] == 0
    assert result.attempts_written == 8
    assert rows(db, "SELECT count(*) FROM attempts")[0][0] == 8


def test_verbose_prints_model_text_that_looks_like_markup(tmp_path, db):
    from typer.testing import CliRunner

    from seqk.cli import app

    models.register_mock("mock/actor", lambda p: "[[1]] [/INST] [red]x")
    path = write_variant(tmp_path, metric="seq@k", k=1, model="mock/actor", options={"n": 1})
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--verbose", "--no-export"])
    assert result.exit_code == 0, result.output
    assert "[[1]] [/INST] [red]x" in result.output


def test_one_run_at_a_time_per_database(tmp_path, db):
    from seqk import store

    models.register_mock("mock/actor", solves_on({}))
    spec = spec_for(tmp_path, k=1)
    with store.run_lease(db, spec.run_id), pytest.raises(RunConflict, match="is being run right now by pid"):
        engine.run(spec, db)
    assert engine.run(spec, db).attempts_written == 4  # free again once released
