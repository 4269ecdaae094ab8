"""clbench: loading, slices, the judge's reply contract and its fallbacks, the success rule,
the four feedback modes, and a seq@k run whose critic feedback reaches the next prompt."""

from __future__ import annotations

import pytest
from helpers import context, write_variant
from rubrichelp import FIXTURES, ScriptedRole, run

from benchmarks.clbench import benchmark, judge
from seqk import models
from seqk.config import runspec
from seqk.errors import JudgeError
from seqk.run import engine

DATA = str(FIXTURES / "clbench.jsonl")
PASS = ('{"Grading Rationale": "Both met.", "List of Requirement Satisfaction Status": ["yes", "yes"], '
        '"Overall Score": 1}')
FAIL = ('Reasoning first. ```json {"Grading Rationale": "No sign-off.", "List of Requirement '
        'Satisfaction Status": ["yes", "no"], "Overall Score": "0 points"} ```')


def options(**more):
    return benchmark.Options(data_path=DATA, **more)


TASKS = benchmark.load_tasks(options())


def verify(reply, task=TASKS[0], output="12 drabs. Qel endures."):
    return run(benchmark.verify(task, output, context(benchmark, judge=ScriptedRole([reply]))))


def test_default_category_loads_in_file_order_with_fallback_ids():
    assert benchmark.slice_name(options()) == "clbench-dkr"
    # task_index and the fallback id are the record's position in the file (record 2 is of
    # another category), so they match the file row in any other harness.
    assert [(t.task_index, t.task_id) for t in TASKS] == [(1, "fake-clb-0001"), (3, "clbench_00003")]
    assert TASKS[1].answer.rubrics == ["The response says Plink is green."]
    assert "[00] user:\n\nFAKE: the moon Plink is green. What colour is Plink?" in TASKS[1].prompt
    # The dataset's system prompt becomes text of the one user message.
    assert TASKS[0].prompt.startswith("Here is a conversation") and "[00] system:\n\nYou are a clerk" in TASKS[0].prompt
    assert "glimmers are 12 drabs" not in TASKS[0].prompt  # rubric text never reaches the actor


def test_other_categories_get_their_own_slices():
    rsa = options(category="Rule System Application")
    assert benchmark.slice_name(rsa) == "clbench-rsa"
    assert [t.task_id for t in benchmark.load_tasks(rsa)] == ["fake-clb-0002"]
    assert benchmark.slice_name(options(category="Procedural Task Execution")) == "clbench-pte"
    assert benchmark.slice_name(options(category="Empirical Discovery & Simulation")) == "clbench-eds"
    a, b = benchmark.slice_name(options(category="Made Up")), benchmark.slice_name(options(category="Other"))
    assert a != b and a.startswith("clbench-") and len(a) == len("clbench-") + 6


def test_pass_needs_overall_score_one():
    verdict = verify(PASS)
    assert verdict.success and verdict.score == 1.0 and verdict.raw_eval_output == ""
    assert verdict.details == {"requirement_status": ["yes", "yes"], "grading_rationale": "Both met.",
                               "failed_requirement_count": 0, "total_requirements": 2}


def test_fail_from_a_fenced_reply_with_prose_keeps_the_whole_reply_as_diagnostic():
    verdict = verify(FAIL)
    assert not verdict.success and verdict.score == 0.0
    assert verdict.details["failed_requirement_count"] == 1
    assert verdict.raw_eval_output == FAIL.strip()


def test_the_yes_no_list_does_not_decide_success():
    reply = '{"List of Requirement Satisfaction Status": ["yes", "yes"], "Overall Score": 0}'
    assert not verify(reply).success
    # A list whose length differs from the rubric leaves the failed count unknown.
    assert verify('{"requirement_status": ["no"], "Overall Score": 0}').details["failed_requirement_count"] is None


@pytest.mark.parametrize("reply, score", [
    ('{"overall_score": true, "grading_rationale": "r"}', 1.0),
    ('{"score": "1.00 point"}', 1.0),
    ('{"Overall Score": 0.0}', 0.0),
    ('{"Overall Score": null, "score": "0"}', 0.0),
])
def test_score_key_and_value_fallbacks(reply, score):
    assert verify(reply).score == score


@pytest.mark.parametrize("reply", [
    "I think it is fine.", '{"Overall Score": 0.5}', '{"Overall Score": 1.7}', '{"Overall Score": "pass"}',
    '["yes", "no"]', '{"Grading Rationale": "no score"}',
])
def test_unreadable_or_fractional_scores_are_judge_errors_never_zero(reply):
    with pytest.raises(JudgeError):
        verify(reply)


def test_judge_sees_only_rubric_and_answer():
    role = ScriptedRole([PASS])
    run(benchmark.verify(TASKS[0], "MY ANSWER", context(benchmark, judge=role)))
    prompt = role.prompts[0]
    assert "1. The response states that 4 glimmers are 12 drabs.\n2. The response ends" in prompt
    assert "MY ANSWER" in prompt and "FAKE CONTEXT" not in prompt
    assert judge.judge_prompt([], "x").count("No explicit rubric") == 1


def test_feedback_modes_and_what_they_leak():
    flags = {m.name: (m.llm_critic, m.shows_grading_info) for m in benchmark.feedback_modes}
    assert flags == {"binary": (False, False), "raw": (False, True), "socratic": (True, False),
                     "directive": (True, False)}
    verdict = verify(FAIL)
    binary = run(benchmark.feedback(TASKS[0], "x", verdict, context(benchmark, mode="binary", critic=ScriptedRole([]))))
    raw = run(benchmark.feedback(TASKS[0], "x", verdict, context(benchmark, mode="raw", critic=ScriptedRole([]))))
    assert "did not pass" in binary and "No sign-off" not in binary
    assert raw == FAIL.strip()
    for mode in ("socratic", "directive"):
        critic = ScriptedRole(["  Think about how the reply should end.  "], role="critic")
        text = run(benchmark.feedback(TASKS[0], "OUT", verdict, context(benchmark, mode=mode, critic=critic)))
        assert text == "Think about how the reply should end."
        prompt = critic.prompts[0]
        assert "2. The response ends with the sign-off" in prompt and "internal" in prompt
        assert 'Number of failed requirements: 1' in prompt and '["yes", "no"]' in prompt and "OUT" in prompt


def test_seq_at_k_critic_feedback_reaches_the_next_prompt(tmp_path, db):
    models.register_mock("mock/actor", lambda p: "12 drabs. Qel endures." if "<Feedback 1>" in p else "12 drabs.")
    models.register_mock("mock/judge", lambda p: PASS if "Qel endures.\n" in p.split("Student's response:")[1]
                         else FAIL)
    critic = models.register_mock("mock/critic", ["Consider how a clerk of Qel signs off."])
    spec = runspec.load(write_variant(
        tmp_path, benchmark="clbench", metric="seq@k", k=3, feedback_mode="socratic", model="mock/actor",
        judge_model="mock/judge", critic_model="mock/critic", task_indices=[1], options={"data_path": DATA}))
    result = engine.run(spec, db)
    assert result.tasks_passed == 1 and critic.calls == 1
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        prompt = con.execute("SELECT prompt FROM attempts WHERE attempt_index = 2").fetchone()[0]
        assert "<Feedback 1>\nConsider how a clerk of Qel signs off.\n</Feedback 1>" in prompt
        assert spec.run_id == "clbench-dkr/seqk/mock__actor/mock__judge/socratic.mock__critic"
