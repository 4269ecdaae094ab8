"""A judge that failed is asked again on the kept output; the actor is never re-sampled for it."""

from __future__ import annotations

from helpers import rows, write_variant

from seqk import models
from seqk.config import runspec
from seqk.run import engine


def spec_for(tmp_path, **keys):
    keys = {"benchmark": "toyjudge", "model": "mock/actor", "judge_model": "mock/judge", "options": {"n": 1},
            "retry": {"max_retries": 0, "base_delay_s": 0.0}} | keys
    return runspec.load(write_variant(tmp_path, **keys))




def test_pass_at_k_rejudges_the_kept_output_without_calling_the_actor(tmp_path, db):
    actor = models.register_mock("mock/actor", ["w1", "nope"])
    models.register_mock("mock/judge", lambda p: "no idea" if "'w1'" in p else "NO")
    spec = spec_for(tmp_path, metric="pass@k", k=2)
    first = engine.run(spec, db)
    assert first.error_kinds == {"judge:JudgeError": 1} and actor.calls == 2

    judge = models.register_mock("mock/judge", lambda p: "YES" if "'w1'" in p else "NO")
    again = engine.run(spec, db)
    assert again.prepared.pending == {1: [1]}
    assert actor.calls == 2  # the kept output was judged again; no new actor sample
    assert judge.calls == 1 and again.tasks_passed == 1
    assert rows(db, "SELECT attempt_index, status, success, output FROM attempts "
                    "ORDER BY attempt_index, status") == [
        (1, "error", None, "w1"), (1, "ok", True, "w1"), (2, "ok", False, "nope")]
    # The new row holds the same prompt and output, and only the new judge call.
    uid, = rows(db, "SELECT attempt_uid FROM attempts WHERE status = 'ok' AND attempt_index = 1")[0]
    assert rows(db, f"SELECT role FROM calls WHERE attempt_uid = '{uid}'") == [("judge",)]
    assert rows(db, "SELECT count(DISTINCT prompt) FROM attempts WHERE attempt_index = 1") == [(1,)]
    assert rows(db, "SELECT count(*) FROM attempts") == [(3,)]
    assert rows(db, "SELECT role, count(*) FROM calls GROUP BY 1 ORDER BY 1") == [("actor", 2), ("judge", 3)]


def test_seq_at_k_rejudges_then_continues_the_sequence(tmp_path, db):
    actor = models.register_mock("mock/actor", ["nope", "w1"])
    models.register_mock("mock/judge", ["garbled"])
    spec = spec_for(tmp_path, metric="seq@k", k=3)
    first = engine.run(spec, db)
    assert first.tasks_error == 1 and actor.calls == 1
    assert rows(db, "SELECT status, output, error->>'stage' FROM attempts") == [("error", "nope", "judge")]

    # A second failure of the judge keeps the output again; still no new actor sample.
    models.register_mock("mock/judge", ["still garbled"])
    engine.run(spec, db)
    assert actor.calls == 1
    assert rows(db, "SELECT count(*), count(DISTINCT output) FROM attempts") == [(2, 1)]

    judge = models.register_mock("mock/judge", lambda p: "YES" if "'w1'" in p else "NO")
    again = engine.run(spec, db)
    assert again.prepared.pending == {1: [1]}
    assert actor.calls == 2  # only attempt 2 called the actor in this run
    assert judge.calls == 2 and again.tasks_passed == 1
    assert rows(db, "SELECT attempt_index, status, success, feedback FROM current_attempts "
                    "ORDER BY attempt_index") == [(1, "ok", False, "Incorrect."), (2, "ok", True, None)]
    prompt = rows(db, "SELECT prompt FROM attempts WHERE attempt_index = 2")[0][0]
    assert "<PreviousAttempt 1>\nnope\n</PreviousAttempt 1>" in prompt
    assert rows(db, "SELECT count(*) FROM attempts") == [(4,)]
    assert rows(db, "SELECT role, count(*) FROM calls GROUP BY 1 ORDER BY 1") == [("actor", 2), ("judge", 4)]


def test_an_actor_error_is_still_redone_by_the_actor(tmp_path, db):
    from seqk.errors import PermanentProviderError

    actor = models.register_mock("mock/actor", [PermanentProviderError("401"), "w1"])
    models.register_mock("mock/judge", lambda p: "YES")
    spec = spec_for(tmp_path, metric="seq@k", k=2)
    engine.run(spec, db)
    again = engine.run(spec, db)
    assert actor.calls == 2 and again.prepared.kept_outputs == {} and again.tasks_passed == 1
