"""AdvancedIF's grading: one judge call decides, for every numbered requirement, whether the
response fully satisfies it. seqk's own judge, not the paper's two judges (o3-mini by
default), so scores are not bit-identical to the paper's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks._common.rubric import numbered, words
from seqk.errors import JudgeError
from seqk.verifiers import judge_json

_MET = {"true", "yes", "1", "met"}
_UNMET = {"false", "no", "0", "not met", "unmet"}


def judge_prompt(conversation: str, output: str, rubrics: list[str]) -> str:
    """The task, the conversation, the response, the numbered requirements, the output schema."""
    return f"""Decide whether an assistant response satisfies a set of instruction-following requirements for \
the conversation below.

## Conversation
{conversation}

## Assistant response to grade
{output}

## Requirements
{numbered(rubrics)}

For every numbered requirement, decide whether the response fully satisfies it. A requirement is met only if it \
is clearly and completely satisfied.

Return only a JSON object with one verdict per requirement, in order, in this schema:
{{"verdicts": [{{"question": 1, "met": true, "reason": "short justification"}}, {{"question": 2, "met": false, \
"reason": "short justification"}}]}}"""


@dataclass(frozen=True)
class RequirementVerdict:
    """The judge's ruling on one numbered requirement."""

    question: int
    met: bool
    reason: str


def _met(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    label = words(str(value))
    if label in _MET:
        return True
    if label in _UNMET:
        return False
    raise JudgeError(f"a verdict's met must be true or false, not {value!r}")


def read_reply(reply: str, n_rubrics: int) -> list[RequirementVerdict]:
    """One verdict per requirement; JudgeError for no `verdicts` list, an entry without `met`,
    a `met` that is not a yes/no, or a count different from the rubric's."""
    obj = judge_json(reply, lambda o: isinstance(o.get("verdicts"), list), 'JSON object with a "verdicts" list')
    entries = obj["verdicts"]
    if len(entries) != n_rubrics:
        raise JudgeError(f"the judge gave {len(entries)} verdict(s) for {n_rubrics} requirement(s)")
    verdicts = []
    for position, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or "met" not in entry:
            raise JudgeError(f"verdict {position} has no 'met': {entry!r}"[:300])
        question = entry.get("question")
        verdicts.append(RequirementVerdict(
            question=question if isinstance(question, int) and not isinstance(question, bool) else position,
            met=_met(entry["met"]), reason=str(entry.get("reason") or "").strip()))
    return verdicts


def raw_eval_output(verdicts: list[RequirementVerdict]) -> str:
    """`question_1: Yes | question_2: No — reason`, every verdict on one line."""
    return " | ".join(f"question_{v.question}: {'Yes' if v.met else 'No'}"
                      + (f" — {v.reason}" if not v.met and v.reason else "") for v in verdicts)


def compact(verdicts: list[RequirementVerdict]) -> str:
    """`Unmet requirements: question_2 (reason); ...`; the raw line when nothing is unmet."""
    unmet = [f"question_{v.question}" + (f" ({v.reason})" if v.reason else "") for v in verdicts if not v.met]
    return "Unmet requirements: " + "; ".join(unmet) if unmet else raw_eval_output(verdicts)
