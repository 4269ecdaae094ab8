"""ResearchRubrics' grading, as in the official evaluator: one judge call per criterion, the
judge seeing the response only (not the research prompt); signed weighted compliance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks._common.rubric import Criterion, Grade, clip_words, words
from seqk.errors import JudgeError
from seqk.verifiers import judge_json

_LABELS = {"satisfied": 1.0, "not satisfied": 0.0}


def judge_prompt(output: str, item: Criterion) -> str:
    """Role, binary scale, guidelines, the document, the criterion, the output contract."""
    return f"""You are an expert evaluator. Decide whether a document satisfies one rubric criterion, judging \
precisely and only on the evidence in the document.

Scale (binary):
- "Not Satisfied" = 0.0
- "Satisfied" = 1.0

Guidelines:
- Consider only what the document states explicitly; make no assumptions about implied content.
- Apply the same standard to every document.
- Cite the specific evidence your decision rests on.
- Lists of examples in a criterion are guidance, not an exhaustive checklist.

## Document Content
{output}

## Rubric Criterion to Evaluate
Title: {item.text}
Category: {item.axis}
Weight: {float(item.weight)}

Decide whether the document satisfies this criterion. Output only valid JSON with these five keys:
{{"verdict": "Satisfied" or "Not Satisfied", "score": 1.0 or 0.0, "confidence": a number from 0.0 to 1.0, \
"reasoning": "evidence-based explanation", "missing_elements": ["what is missing, if anything"]}}"""


@dataclass(frozen=True)
class CriterionVerdict:
    """The judge's ruling on one criterion as saved in the attempt's details."""

    verdict: str
    score: float
    reasoning: str
    missing_elements: list[str]


def _score(obj: dict[str, Any]) -> float:
    value = obj.get("score")
    if value is not None:
        try:
            return 1.0 if float(value) >= 0.5 else 0.0
        except (TypeError, ValueError):
            raise JudgeError(f"the judge's score is not a number: {value!r}") from None
    label = words(str(obj.get("verdict") or "").replace("_", " "))
    if label not in _LABELS:
        # Exact labels only: seq_k's substring test read "Unsatisfied" and "Partially
        # Satisfied" as satisfied.
        raise JudgeError(f"the judge's verdict must be Satisfied or Not Satisfied, not {obj.get('verdict')!r}")
    return _LABELS[label]


def read_reply(reply: str) -> CriterionVerdict:
    """The score (a present score wins over the verdict label), reasoning and missing elements."""
    obj = judge_json(reply, lambda o: "score" in o or "verdict" in o, 'JSON object with "verdict" or "score"')
    score = _score(obj)
    missing = obj.get("missing_elements")
    missing = [] if missing is None else [str(m) for m in missing] if isinstance(missing, list) else [str(missing)]
    return CriterionVerdict("Satisfied" if score == 1.0 else "Not Satisfied", score,
                            str(obj.get("reasoning") or "").strip(), missing)


def diagnostic(grades: list[Grade]) -> str:
    """The failed mandatory criteria (positive weight, not satisfied) and the triggered
    penalties (negative weight, satisfied), with the judge's reasoning cut at a word."""
    failures = [g for g in grades if g.criterion.weight > 0 and not g.met]
    penalties = [g for g in grades if g.criterion.weight < 0 and g.met]
    lines: list[str] = []
    if failures:
        lines.append(f"The response failed {len(failures)} mandatory criteria:")
        for i, g in enumerate(failures, start=1):
            lines.append(f"  {i}. [{g.criterion.axis}] {g.criterion.text}")
            if g.reason:
                lines.append(f"   Judge: {clip_words(g.reason, 250)}")
            if g.missing:
                lines.append(f"   Missing: {', '.join(g.missing)}")
    if penalties:
        if lines:
            lines.append("")
        lines.append(f"The response triggered {len(penalties)} penalty criteria:")
        for i, g in enumerate(penalties, start=1):
            lines.append(f"  {i}. [{g.criterion.axis}] {g.criterion.text}")
            if g.reason:
                lines.append(f"   Judge: {clip_words(g.reason, 200)}")
    return "\n".join(lines)


def critic_prompt(task_prompt: str, output: str) -> str:
    """The rubric-blind critic: the task and the response, no grading data."""
    return f"""You are a critical evaluator of research assistants' answers. Find the most important gaps, \
errors or weaknesses in the response below. Be direct and specific, focus on what would most improve a retry, \
and write plain text as 2 to 4 focused points.

Task:
{task_prompt}

Response:
{output}

Write your critique."""
