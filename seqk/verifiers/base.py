"""What every verifier shares: a target is one right answer or several, and a verdict says what
was read from the reply (`details["answer"]`) and, when the reply's answer could not be read at
all, why (`details["format"]`: "no ANSWER: line", "no number in the reply"), which the `format`
feedback mode passes on. A format problem is still a wrong answer, never an error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seqk.benchmark import Verdict

Target = str | int | float | Sequence[str | int | float]
"""One right answer, or several (any of them passes)."""


def targets_of(reference: Target) -> list[str]:
    """The right answers as text: a number as Python writes it, a list item by item."""
    if isinstance(reference, str | int | float):
        return [_text(reference)]
    return [_text(t) for t in reference]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def verdict(success: bool, raw: str, *, score: float | None = None, answer: Any = None,
            format: str | None = None, **details: Any) -> Verdict:
    """A Verdict whose score is 1.0 or 0.0 unless given, with what was read (`answer`) and, when
    nothing could be read, the format problem."""
    details = {"answer": answer, **details}
    if format is not None:
        details["format"] = format
    return Verdict(success=success, score=float(success) if score is None else score,
                   raw_eval_output=raw, details=details)


def format_problem(verdict: Verdict) -> str | None:
    """What could not be read in the reply the verdict grades ("no ANSWER: line"), or None."""
    problem = verdict.details.get("format")
    return problem if isinstance(problem, str) else None
