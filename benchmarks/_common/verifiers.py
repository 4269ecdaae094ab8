"""Small verifiers a benchmark's `verify` returns directly, so a deterministic benchmark is a
task list and one line of grading:

    exact_match   the reply, trimmed (and case-folded unless asked not to), is the expected text
    last_number   the last number written in the reply equals the expected one
    json_grid     the last rectangular JSON grid in the reply equals the expected grid
    rubric_judge  an LLM judge rules on each criterion, all in flight at once; all met passes

Each returns a Verdict whose score is 1.0 or 0.0 (json_grid: the share of matching cells,
rubric_judge: the share of criteria met) and whose `raw_eval_output` says what was compared.
That text shows the expected answer: a feedback mode that passes it on declares the leak.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from benchmarks._common.jsonextract import extract_all_json
from benchmarks._common.rubric import judge_each, judge_json, numbered
from seqk.benchmark import RoleClient, Verdict
from seqk.errors import JudgeError

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# Thousands separators ("1,000") would otherwise split one number in two.
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_WORDS = re.compile(r"\s+")


def _verdict(success: bool, raw: str, score: float | None = None, **details: Any) -> Verdict:
    return Verdict(success=success, score=float(success) if score is None else score,
                   raw_eval_output=raw, details=details)


def exact_match(output: str, expected: str, *, case_sensitive: bool = False) -> Verdict:
    """Success when the reply, trimmed and with runs of whitespace made one space, is
    `expected` (ignoring case unless `case_sensitive`)."""
    def norm(text: str) -> str:
        text = _WORDS.sub(" ", text.strip())
        return text if case_sensitive else text.casefold()

    found = _WORDS.sub(" ", output.strip())
    ok = norm(output) == norm(expected)
    return _verdict(ok, f"expected {expected!r}, the reply is {found[:200]!r}", found=found[:200])


def last_number_in(reply: str) -> str | None:
    """The last number written in digits in `reply` ("1,000" is one number), or None."""
    numbers = _NUMBER.findall(_THOUSANDS.sub("", reply))
    return numbers[-1] if numbers else None


def last_number(output: str, expected: float, *, tolerance: float = 0.0) -> Verdict:
    """Success when the last number in the reply is `expected` (within `tolerance`): chatter
    around the answer ("2 + 3 = 5") is forgiven, the answer itself is not."""
    found = last_number_in(output)
    ok = found is not None and math.isclose(float(found), float(expected), rel_tol=0.0, abs_tol=tolerance)
    return _verdict(ok, f"expected the number {expected}, the reply's last number is "
                        f"{found if found is not None else 'none'}", found=found)


def _is_grid(value: Any) -> bool:
    return (isinstance(value, list) and bool(value) and all(isinstance(row, list) for row in value)
            and len({len(row) for row in value}) == 1 and len(value[0]) > 0)


def json_grid(output: str, expected: Sequence[Sequence[Any]]) -> Verdict:
    """Success when the last rectangular JSON grid (a list of equal-length rows) in the reply
    equals `expected`; the score is the share of matching cells when the shapes agree, else 0."""
    target = [list(row) for row in expected]
    grids = [value for value in extract_all_json(output) if _is_grid(value)]
    if not grids:
        return _verdict(False, "no JSON grid in the reply", 0.0, shape=None)
    grid = grids[-1]
    got, want = [len(grid), len(grid[0])], [len(target), len(target[0])]
    if got != want:
        return _verdict(False, f"the grid is {got[0]}x{got[1]}, expected {want[0]}x{want[1]}", 0.0,
                        shape=got, expected_shape=want)
    cells = sum(a == b for row, goal in zip(grid, target, strict=True) for a, b in zip(row, goal, strict=True))
    total = want[0] * want[1]
    return _verdict(cells == total, f"{cells} of {total} cells match", cells / total,
                    shape=got, expected_shape=want, cells_correct=cells)


RUBRIC_PROMPT = """Decide whether a response meets one criterion.

## Task
{task}

## Response
{output}

## Criterion
{criterion}

Return only a JSON object: {{"met": true or false, "reason": "one sentence"}}"""


def _met(reply: str) -> tuple[bool, str]:
    obj = judge_json(reply, lambda o: isinstance(o.get("met"), bool), 'JSON object with a boolean "met"')
    return obj["met"], str(obj.get("reason") or "").strip()


async def rubric_judge(judge: RoleClient, task: str, output: str, criteria: Sequence[str]) -> Verdict:
    """One judge call per criterion (RUBRIC_PROMPT), all in flight at once; success when every
    criterion is met, score the share met. An unreadable reply raises JudgeError (an error of
    the attempt, never a wrong answer)."""
    if not criteria:
        raise JudgeError("rubric_judge needs at least one criterion")
    rulings = await judge_each(judge, [RUBRIC_PROMPT.format(task=task, output=output, criterion=c)
                                       for c in criteria], _met)
    unmet = [c for c, (met, _) in zip(criteria, rulings, strict=True) if not met]
    return _verdict(not unmet, "" if not unmet else "Unmet criteria:\n" + numbered(unmet),
                    (len(criteria) - len(unmet)) / len(criteria),
                    criteria=[{"criterion": c, "met": met, "reason": reason}
                              for c, (met, reason) in zip(criteria, rulings, strict=True)])
