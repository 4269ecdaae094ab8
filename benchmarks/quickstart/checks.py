"""The quickstart's deterministic checks: tolerant of the chatter a small model
wraps around its answer, strict about the answer itself.

    number   the last number in the reply is the expected one ("2 + 3 = 5" passes)
    phrase   the expected word or words appear, whole, in any case and spacing
    yesno    the first "yes" or "no" in the reply is the expected one
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchmarks._common.verifiers import last_number_in as last_number

CHECKS = ("number", "phrase", "yesno")

_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


@dataclass(frozen=True)
class CheckResult:
    """Whether the reply passed, and what the check found in it."""

    success: bool
    found: str | None
    explanation: str


def check(kind: str, expected: str | int | float, reply: str) -> CheckResult:
    """Grade `reply` against `expected` with the check called `kind`."""
    if kind == "number":
        found = last_number(reply)
        success = found is not None and float(found) == float(expected)
        return CheckResult(success, found, f"expected the number {expected}, "
                           f"the reply's last number is {found if found is not None else 'none'}")
    if kind == "phrase":
        words = str(expected).split()
        pattern = r"\b" + r"\s+".join(re.escape(w) for w in words) + r"\b"
        match = re.search(pattern, reply, re.IGNORECASE)
        return CheckResult(match is not None, match.group(0) if match else None,
                           f"expected {expected!r} in the reply: "
                           f"{'found' if match else 'not found'}")
    if kind == "yesno":
        match = _YES_NO.search(reply)
        found = match.group(1).lower() if match else None
        seen = f"the reply's first yes/no is {found!r}" if found else "the reply has no yes/no"
        return CheckResult(found == str(expected).lower(), found, f"expected {expected!r}, {seen}")
    raise ValueError(f"unknown check {kind!r}; known: {', '.join(CHECKS)}")
