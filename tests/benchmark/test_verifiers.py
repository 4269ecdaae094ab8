"""The small verifiers of benchmarks/_common/verifiers.py: what passes, what fails, what the
verdict says, and that an unreadable judge reply is an error, not a wrong answer."""

from __future__ import annotations

import asyncio
import json

import pytest

from benchmarks._common.verifiers import RUBRIC_PROMPT, exact_match, json_grid, last_number, rubric_judge
from seqk.errors import JudgeError


@pytest.mark.parametrize("output, expected, ok", [
    ("Paris", "Paris", True), ("  paris \n", "Paris", True), ("New   York", "new york", True),
    ("Paris.", "Paris", False), ("Paris is the capital", "Paris", False),
])
def test_exact_match(output, expected, ok):
    verdict = exact_match(output, expected)
    assert verdict.success is ok and verdict.score == float(ok)
    assert verdict.raw_eval_output.startswith(f"expected {expected!r}")


def test_exact_match_can_mind_the_case():
    assert not exact_match("paris", "Paris", case_sensitive=True).success


@pytest.mark.parametrize("output, expected, ok, found", [
    ("2 + 3 = 5", 5, True, "5"), ("It is 1,000 exactly.", 1000, True, "1000"), ("-4", -4, True, "-4"),
    ("5, or maybe 6", 5, False, "6"), ("no idea", 5, False, None), ("3.14", 3.1416, False, "3.14"),
])
def test_last_number(output, expected, ok, found):
    verdict = last_number(output, expected)
    assert verdict.success is ok and verdict.details == {"found": found}


def test_last_number_within_a_tolerance():
    assert last_number("about 3.14", 3.1416, tolerance=0.01).success


def test_json_grid_scores_matching_cells():
    target = [[1, 2], [3, 4]]
    assert json_grid("Answer:\n```json\n[[1, 2], [3, 4]]\n```", target).success
    near = json_grid("first try [[0, 0], [0, 0]], final: [[1, 2], [3, 0]]", target)
    assert not near.success and near.score == 0.75 and near.raw_eval_output == "3 of 4 cells match"
    misshapen = json_grid("[[1, 2, 3]]", target)
    assert misshapen.score == 0.0 and misshapen.raw_eval_output == "the grid is 1x3, expected 2x2"
    assert json_grid("no grid here", target).raw_eval_output == "no JSON grid in the reply"


class Judge:
    """A judge replying from a function of the prompt, recording each prompt."""

    role, model = "judge", "scripted"

    def __init__(self, reply):
        self.reply, self.prompts = reply, []

    async def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.reply(prompt)


def test_rubric_judge_asks_once_per_criterion_and_needs_all():
    criteria = ["Names the capital.", "Gives its population."]
    judge = Judge(lambda p: json.dumps({"met": "capital" in p, "reason": "read it"}))
    verdict = asyncio.run(rubric_judge(judge, "Tell me about France.", "Paris.", criteria))
    assert judge.prompts == [RUBRIC_PROMPT.format(task="Tell me about France.", output="Paris.", criterion=c)
                             for c in criteria]
    assert not verdict.success and verdict.score == 0.5
    assert verdict.raw_eval_output == "Unmet criteria:\n1. Gives its population."
    assert [c["met"] for c in verdict.details["criteria"]] == [True, False]
    everything = asyncio.run(rubric_judge(Judge(lambda p: '{"met": true}'), "t", "o", criteria))
    assert everything.success and everything.score == 1.0 and everything.raw_eval_output == ""


def test_rubric_judge_reply_without_a_ruling_is_a_judge_error():
    with pytest.raises(JudgeError, match="rubric item 2 of 2"):
        asyncio.run(rubric_judge(Judge(lambda p: '{"met": true}' if "first" in p else "Sure!"), "t", "o",
                                 ["first", "second"]))
