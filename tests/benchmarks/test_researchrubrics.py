"""researchrubrics: loading and domain slices, signed weighted compliance, the success rule
(mandatory criteria and penalties), exact verdict labels, the diagnostic, and the
rubric-blind critic."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import context
from rubrichelp import FIXTURES, ScriptedRole, run

from benchmarks.researchrubrics import benchmark
from seqk.errors import DataFileError, JudgeError

DATA = str(FIXTURES / "researchrubrics.jsonl")


def load(**more):
    return benchmark.load_tasks(benchmark.Options(data_path=more.pop("path", DATA), **more))


TASKS = load()


def reply(verdict=None, score=None, **more):
    obj = {k: v for k, v in {"verdict": verdict, "score": score}.items() if v is not None} | more
    return json.dumps(obj)


def verify(replies, task=TASKS[0], output="REPORT"):
    return run(benchmark.verify(task, output, context(benchmark, judge=ScriptedRole(replies))))


def test_loading_slices_and_default_weight():
    assert benchmark.slice_name(benchmark.Options()) == "researchrubrics"
    assert [t.task_id for t in TASKS] == ["fake-rr-001", "fake-rr-002", "fake-rr-003"]
    assert TASKS[2].answer.rubrics[0].weight == 1.0
    ai = benchmark.Options(data_path=DATA, domains=["AI & ML"])
    assert benchmark.slice_name(ai) == "researchrubrics-eb674c"
    assert [(t.task_index, t.task_id) for t in benchmark.load_tasks(ai)] == [(1, "fake-rr-001"), (3, "fake-rr-003")]
    assert benchmark.slice_name(benchmark.Options(domains=["Current Events", "AI & ML"])) == "researchrubrics-1a72ef"
    assert TASKS[0].prompt.endswith("\n\nFAKE: compare the invented optimizers Foo and Bar for training toy models.")


def test_a_malformed_rubric_stops_the_load_or_skips_its_record_only(tmp_path):
    bad = {"sample_id": "bad", "domain": "x", "prompt": "p", "rubrics": [{"criterion": "c", "weight": "heavy"}]}
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(bad) + "\n" + Path(DATA).read_text())
    with pytest.raises(DataFileError, match=rf"^{re.escape(str(path))}:1: rubrics: expected a non-empty list"):
        load(path=str(path))
    tasks = load(path=str(path), skip_invalid_records=True)
    assert [(t.task_index, t.task_id) for t in tasks] == [(2, "fake-rr-001"), (3, "fake-rr-002"), (4, "fake-rr-003")]


def test_pass():
    verdict = verify([reply("Satisfied", 1.0, confidence=0.9, reasoning="ok", missing_elements=[]),
                      reply("Satisfied", 1), reply("Not Satisfied", 0.0)])
    assert verdict.success and verdict.score == 1.0 and verdict.raw_eval_output == ""
    assert verdict.details["mandatory_total"] == 2 and verdict.details["penalty_triggered"] == 0


def test_fail_with_a_penalty_can_bring_compliance_below_the_positive_share():
    verdict = verify([reply("Satisfied", 1.0),
                      reply("Not Satisfied", 0.0, reasoning="Bar's limits are never discussed in the report.",
                            missing_elements=["a limitation of Bar"]),
                      reply("Satisfied", 1.0, reasoning="Cites Smith 2031.")])
    assert not verdict.success and verdict.score == pytest.approx((5 - 4) / 7)
    assert verdict.raw_eval_output == (
        "The response failed 1 mandatory criteria:\n"
        "  1. [Implicit Criteria] Mentions one limitation of Bar.\n"
        "   Judge: Bar's limits are never discussed in the report.\n"
        "   Missing: a limitation of Bar\n"
        "\n"
        "The response triggered 1 penalty criteria:\n"
        "  1. [Communication Quality] Invents citations that do not exist.\n"
        "   Judge: Cites Smith 2031.")
    assert verdict.details["mandatory_passed"] == 1 and verdict.details["penalty_triggered"] == 1


def test_penalty_only_failure_and_negative_compliance():
    verdict = verify([reply("Not Satisfied", 0.0), reply("Not Satisfied", 0.0), reply("Satisfied", 1.0)])
    assert verdict.score == pytest.approx(-4 / 7)  # unclipped, as the official calculation
    verdict = verify([reply("Satisfied", 1.0), reply("Satisfied", 1.0), reply("Satisfied", 1.0)])
    assert not verdict.success and verdict.raw_eval_output.startswith("The response triggered 1 penalty")


@pytest.mark.parametrize("text, score", [
    (reply("not_satisfied"), 0.0), (reply("SATISFIED"), 1.0), (reply("Not Satisfied", "1"), 1.0),
    (reply(score=0.49), 0.0), (reply(score=0.5), 1.0),
    ('Evidence: $\\{x\\}$.\n```json\n{"verdict": "Satisfied", "score": 1.0}\n```\nDone {ok}.', 1.0),
])
def test_verdict_fallbacks(text, score):
    assert verify([text], task=TASKS[2]).score == score


@pytest.mark.parametrize("text", [
    reply("Unsatisfied"), reply("Partially Satisfied"), reply("maybe"), reply("Satisfied", "high"), "Looks fine.",
])
def test_labels_outside_the_scale_are_judge_errors(text):
    with pytest.raises(JudgeError):
        verify([text], task=TASKS[2])


def test_judge_sees_the_response_and_one_criterion_not_the_prompt():
    role = ScriptedRole([reply("Satisfied", 1.0)] * 3)
    run(benchmark.verify(TASKS[0], "MY REPORT", context(benchmark, judge=role)))
    assert "MY REPORT" in role.prompts[2] and "FAKE: compare" not in role.prompts[2]
    assert "Title: Invents citations that do not exist.\nCategory: Communication Quality\nWeight: -4.0" \
        in role.prompts[2]


def test_feedback_modes_and_what_they_leak():
    flags = {m.name: (m.llm_critic, m.shows_grading_info) for m in benchmark.feedback_modes}
    assert flags == {"binary": (False, False), "raw": (False, True), "critic": (True, False)}
    verdict = verify([reply("Satisfied", 1.0), reply("Not Satisfied", 0.0), reply("Not Satisfied", 0.0)])
    binary = run(benchmark.feedback(TASKS[0], "x", verdict, context(benchmark, mode="binary", critic=ScriptedRole([]))))
    raw = run(benchmark.feedback(TASKS[0], "x", verdict, context(benchmark, mode="raw", critic=ScriptedRole([]))))
    assert "limitation of Bar" in raw and "limitation of Bar" not in binary
    critic = ScriptedRole(["1. Discuss Bar's weaknesses."], role="critic")
    said = run(benchmark.feedback(TASKS[0], "MY REPORT", verdict, context(benchmark, mode="critic", critic=critic)))
    assert said == "1. Discuss Bar's weaknesses."
    prompt = critic.prompts[0]
    assert TASKS[0].prompt in prompt and "MY REPORT" in prompt
    assert "limitation of Bar" not in prompt and "Invents citations" not in prompt  # rubric-blind
