"""CL-bench's grading: one judge call over the whole rubric, following CL-bench's official
grading prompt (rubric and answer only), binary and all-or-nothing."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from benchmarks._common.rubric import numbered, words
from seqk.errors import JudgeError
from seqk.verifiers import judge_json

SCORE_KEYS = ("Overall Score", "overall_score", "score")
STATUS_KEYS = ("List of Requirement Satisfaction Status", "requirement_status")
RATIONALE_KEYS = ("Grading Rationale", "grading_rationale")
_SCORE_TEXT = re.compile(r"([01])(?:\.0+)?(?: points?)?")


def judge_prompt(rubrics: list[str], output: str) -> str:
    """The grading prompt: role, all-or-nothing rule, three steps, output shape, content."""
    rubric = numbered(rubrics) if rubrics else "(No explicit rubric was given for this task.)"
    return f"""You are a rigorous grader of instruction following: you score a student's answer against a rubric.

Scoring is binary and all-or-nothing. The score is 1 only if the answer fully satisfies every requirement of \
the rubric; otherwise it is 0.

Work in three steps, all of them mandatory:
1. Requirements. List every explicit requirement of the rubric and every implicit one it carries (style, \
structure, format), each with a concrete criterion for checking it.
2. Checks. Compare the answer with each requirement in turn and decide whether it is met.
3. Self-check. Make sure the list is complete, every check was strict, the rationale and the score agree, and \
you judged only what is actually written.

Your output holds a grading rationale, a list with one "yes" or "no" per requirement in rubric order, and an \
overall score, the integer 0 or 1.

Rubric:
{rubric}

Student's response:
{output}

Output only a JSON object of exactly this shape:
{{"Grading Rationale": "<your reasoning>", "List of Requirement Satisfaction Status": ["yes", "no"], "Overall \
Score": 0}}"""


def overall_score(value: Any) -> int:
    """0 or 1 from a boolean, the number 0 or 1 exactly, or a string such as `1`, `0.0` or
    `1 point`; anything else (0.5, 1.7, 'pass') is a JudgeError, never truncated."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and (match := _SCORE_TEXT.fullmatch(words(value))):
        return int(match.group(1))
    raise JudgeError(f"the judge's Overall Score must be 0 or 1, not {value!r}")


@dataclass(frozen=True)
class Judgement:
    """What the CL-bench judge replied, read."""

    score: int
    requirement_status: list[str]
    grading_rationale: str


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((obj[k] for k in keys if obj.get(k) is not None), None)


def read_reply(reply: str) -> Judgement:
    """The score, yes/no list and rationale of a judge reply; JudgeError if no score."""
    obj = judge_json(reply, lambda o: _first(o, SCORE_KEYS) is not None,
                     'JSON object with an "Overall Score"')
    status = _first(obj, STATUS_KEYS)
    rationale = _first(obj, RATIONALE_KEYS)
    return Judgement(
        score=overall_score(_first(obj, SCORE_KEYS)),
        requirement_status=[str(s).strip().lower() for s in status] if isinstance(status, list) else [],
        grading_rationale=rationale if isinstance(rationale, str) else
        (json.dumps(rationale) if rationale is not None else ""))
