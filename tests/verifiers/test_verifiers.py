"""seqk.verifiers beyond inspect's rules (those are tests/verifiers/test_inspect_parity.py): the
answer a reply states, lone letters, JSON fields and grids, the rubric judge, and choosing a
verifier by name as a variant's `scorer:` does."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel, ValidationError

from seqk.benchmark import Verdict
from seqk.errors import JudgeError
from seqk.verifiers import (
    RUBRIC_PROMPT,
    Reference,
    Scorer,
    choice,
    format_problem,
    json_field,
    json_grid,
    llm_rubric,
    numeric,
    score,
    stated_number,
    verifier_name,
)


@pytest.mark.parametrize("reply, found", [
    ("ANSWER: 42", ("42", "the ANSWER: line")),
    ("I think 40.\nAnswer: 15 + 27 = 42", ("42", "the ANSWER: line")),
    ("**ANSWER:** 1,000 apples", ("1000", "the ANSWER: line")),
    ("ANSWER: 42. This is attempt 2 of 3.", ("42", "the ANSWER: line")),
    ("ANSWER: <the number>\n15 + 27 = 42", ("42", "after the last '='")),
    ("15 + 27 = 42 … This is attempt 2 of 3.", ("42", "after the last '='")),
    ("x = -5, so 2x = -10", ("-10", "after the last '='")),
    ("The answer is 42. This is attempt 2 of 3.", ("42", "the last number")),
    ("42\n\n<PreviousAttempt 1>\n40\n</PreviousAttempt 1>", ("40", "the last number")),
    ("It is 3.5 metres", ("3.5", "the last number")),
    ("This is attempt 3 of 3.", None),
    ("no digits here", None),
])
def test_stated_number_reads_the_answer_not_the_framing(reply, found):
    assert stated_number(reply) == found


def test_numeric_tolerances_and_several_targets():
    assert numeric("ANSWER: 3.14", 3.1416, tolerance=0.01).success
    assert not numeric("ANSWER: 3.14", 3.1416).success
    assert numeric("about 101", 100, relative_tolerance=0.01).success
    assert numeric("ANSWER: 7", ["6", "7"]).success
    assert numeric("It is 1,000", "1,000").success
    with pytest.raises(ValueError, match="not a number"):
        numeric("5", "five")


def test_a_reply_with_no_number_is_wrong_and_says_why():
    verdict = numeric("I am not sure.", 5)
    assert not verdict.success and format_problem(verdict) == "no number in the reply"
    assert format_problem(numeric("ANSWER: 4", 5)) is None


@pytest.mark.parametrize("reply, target, ok", [
    ("ANSWER: B", "B", True), ("I would say B.", "B", True), ("(C) is right", "C", True),
    ("A is wrong; the answer is D", "D", True), ("I think it is B", "A", False),
    ("a cat and a dog", "A", False),  # lower-case "a" is an article, not a letter
    ("ANSWER: A, C", "A,C", True), ("ANSWER: A", ["A", "C"], False),
])
def test_choice_reads_answer_then_the_last_lone_letter(reply, target, ok):
    assert choice(reply, target, choices=4).success is ok


def test_choice_without_a_letter_names_the_format_problem():
    verdict = choice("Hmm, tricky.", "B", choices=["x", "y", "z"])
    assert not verdict.success and format_problem(verdict) == "no ANSWER: line naming one of A, B, C"
    assert choice("B", "B", choices=3, lone_letter=False).details["format"]
    with pytest.raises(ValueError, match="beyond the 3 choices"):
        choice("ANSWER: A", "E", choices=3)


@pytest.mark.parametrize("reply, target, ok", [
    ('{"answer": "Paris"}', "paris", True), ('Sure: {"answer": "New  York"}', "new york", True),
    ('{"answer": 42}', "42", True), ('{"answer": 42.0}', "42", True), ('{"answer": true}', "true", True),
    ('{"result": {"value": [1, 2]}}', "[1, 2]", True), ('{"answer": "Rome"}', "Paris", False),
    ('first {"answer": "Rome"} then {"answer": "Paris"}', "Paris", True),
])
def test_json_field(reply, target, ok):
    field = "result.value" if "result" in reply else "answer"
    assert json_field(reply, target, field=field).success is ok


def test_json_field_says_what_is_missing():
    assert format_problem(json_field("no json", "x", field="answer")) == "no JSON object in the reply"
    assert format_problem(json_field('{"other": 1}', "x", field="answer")) == "no field 'answer' in the reply's JSON"


def test_json_grid_scores_matching_cells():
    target = [[1, 2], [3, 4]]
    assert json_grid("Answer:\n```json\n[[1, 2], [3, 4]]\n```", target).success
    near = json_grid("first try [[0, 0], [0, 0]], final: [[1, 2], [3, 0]]", target)
    assert not near.success and near.score == 0.75 and near.raw_eval_output == "3 of 4 cells match"
    misshapen = json_grid("[[1, 2, 3]]", target)
    assert misshapen.score == 0.0 and misshapen.raw_eval_output == "the grid is 1x3, expected 2x2"
    assert json_grid("no grid here", target).raw_eval_output == "no JSON grid in the reply"
    assert not json_grid("[[1, 2], [3, 4.0]]", target, cells=frozenset(range(10))).success


class Judge:
    """A judge replying from a function of the prompt, recording each prompt."""

    role, model = "judge", "scripted"

    def __init__(self, reply):
        self.reply, self.prompts = reply, []

    async def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.reply(prompt)


def test_llm_rubric_asks_once_per_criterion_and_needs_all():
    criteria = ["Names the capital.", "Gives its population."]
    judge = Judge(lambda p: json.dumps({"met": "capital" in p, "reason": "read it"}))
    verdict = asyncio.run(llm_rubric(judge, "Tell me about France.", "Paris.", criteria))
    assert judge.prompts == [RUBRIC_PROMPT.format(task="Tell me about France.", output="Paris.", criterion=c)
                             for c in criteria]
    assert not verdict.success and verdict.score == 0.5
    assert verdict.raw_eval_output == "Unmet criteria:\n1. Gives its population."
    assert [c["met"] for c in verdict.details["criteria"]] == [True, False]
    one = asyncio.run(llm_rubric(Judge(lambda p: '{"met": true}'), "t", "o", "Mentions Paris."))
    assert one.success and one.score == 1.0 and one.raw_eval_output == ""


def test_llm_rubric_reply_without_a_ruling_is_a_judge_error():
    with pytest.raises(JudgeError, match="rubric item 2 of 2"):
        asyncio.run(llm_rubric(Judge(lambda p: '{"met": true}' if "first" in p else "Sure!"), "t", "o",
                               ["first", "second"]))


class Holder(BaseModel):
    scorer: Scorer


@pytest.mark.parametrize("written, kind, params", [
    ("numeric", "numeric", {"tolerance": 0.0}),
    ({"numeric": {"tolerance": 0.01}}, "numeric", {"tolerance": 0.01}),
    ({"numeric": None}, "numeric", {}),
    ({"regex": "ANSWER: (\\w+)"}, "regex", {"pattern": "ANSWER: (\\w+)"}),
    ({"answer": "letter"}, "answer", {"pattern": "letter"}),
    ({"json_field": "result.value"}, "json_field", {"field": "result.value"}),
    ({"match": {"location": "any", "numeric": True}}, "match", {"location": "any", "numeric": True}),
    ({"llm_rubric": {"column": "rubric"}}, "llm_rubric", {"column": "rubric"}),
    ({"python": "scripts:grade_python_scorer"}, "python", {"function": "scripts:grade_python_scorer"}),
])
def test_a_scorer_is_written_as_a_name_or_a_name_with_parameters(written, kind, params):
    scorer = Holder.model_validate({"scorer": written}).scorer
    assert scorer.kind == kind and scorer.model_dump().items() >= params.items()
    assert verifier_name(scorer) == ("llm" if kind == "llm_rubric" else kind)


@pytest.mark.parametrize("written, message", [
    ("numerc", "unknown scorer 'numerc'; the scorers are: exact, includes"),
    ({"numeric": {"tolerance": -1}}, "greater than or equal to 0"),
    ({"numeric": 0.1}, "numeric's parameters are a mapping"),
    ({"regex": "(unclosed"}, "not a regular expression"),
    ({"llm_rubric": {}}, "exactly one"),
    ({"python": "no_such_module_here:f"}, "cannot import 'no_such_module_here'"),
    ({"python": "scripts:no_such_function"}, "has no function 'no_such_function'"),
    ({"python": "missing.py:f"}, "no file"),
    ({"python": "nocolon"}, "should read module:function"),
    (["exact", "numeric"], "a scorer name"),
])
def test_a_wrong_scorer_says_what_is_wrong(written, message):
    with pytest.raises(ValidationError, match=message.replace("(", r"\(")):
        Holder.model_validate({"scorer": written})


def grade(written, output, reference, judge=None):
    scorer = Holder.model_validate({"scorer": written}).scorer
    return asyncio.run(score(scorer, output, reference, task_prompt="the task", judge=judge))


def test_score_grades_with_the_named_verifier():
    ref = Reference(target=["B"], choices=["w", "x", "y", "z"])
    assert grade("choice", "ANSWER: B", ref).success
    assert not grade({"choice": {"lone_letter": False}}, "B", ref).success
    assert grade("exact", "the Paris!", Reference(target=["paris"])).success
    judged = grade({"llm_rubric": {"text": "x"}}, "out", Reference(target=["t"], rubric="Says t."),
                   Judge(lambda p: '{"met": true}'))
    assert judged.success


def test_a_python_scorer_from_a_module_or_a_file(tmp_path):
    ref = Reference(target=["7"], metadata={"unit": "cm"})
    assert grade({"python": "scripts:grade_python_scorer"}, "7 cm", ref).success
    assert not grade({"python": "scripts:grade_python_scorer"}, "7 m", ref).success
    grader = tmp_path / "grader.py"
    grader.write_text("from seqk.verifiers import exact\n"
                      "async def check(output, reference):\n    return exact(output, reference.target)\n"
                      "def broken(output, reference):\n    raise RuntimeError('oops')\n"
                      "def vague(output, reference):\n    return 0.5\n")
    verdict = grade({"python": f"{grader}:check"}, "7", ref)
    assert isinstance(verdict, Verdict) and verdict.success
    with pytest.raises(JudgeError, match="raised RuntimeError: oops"):
        grade({"python": f"{grader}:broken"}, "7", ref)
    with pytest.raises(JudgeError, match="returned float: return a bool or a seqk.benchmark.Verdict"):
        grade({"python": f"{grader}:vague"}, "7", ref)
