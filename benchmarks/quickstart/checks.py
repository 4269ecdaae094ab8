"""The quickstart's deterministic checks: tolerant of the chatter a small model
wraps around its answer, strict about the answer itself.

    number   the number the reply gives as its answer (seqk.verifiers.numeric): its
             `ANSWER:` line, which the prompt asks for; else the number after its last "="
             ("15 + 27 = 42 ... This is attempt 2 of 3." reads 42); else, as a last resort, its
             last number outside the "This is attempt t of K" framing SmolLM2 echoes back
    phrase   the expected word or words appear, whole, in any case and spacing
    yesno    the first "yes" or "no" in the reply is the expected one
"""

from __future__ import annotations

import re

from seqk.benchmark import Verdict
from seqk.verifiers import numeric
from seqk.verifiers.base import verdict

CHECKS = ("number", "phrase", "yesno")

_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def check(kind: str, expected: str | int | float, reply: str) -> Verdict:
    """Grade `reply` against `expected` with the check called `kind`; `details["answer"]` is
    what the check read from the reply."""
    if kind == "number":
        return numeric(reply, expected)
    if kind == "phrase":
        words = str(expected).split()
        pattern = r"\b" + r"\s+".join(re.escape(w) for w in words) + r"\b"
        match = re.search(pattern, reply, re.IGNORECASE)
        return verdict(match is not None, f"expected {expected!r} in the reply: "
                                          f"{'found' if match else 'not found'}",
                       answer=match.group(0) if match else None)
    if kind == "yesno":
        match = _YES_NO.search(reply)
        found = match.group(1).lower() if match else None
        seen = f"the reply's first yes/no is {found!r}" if found else "the reply has no yes/no"
        return verdict(found == str(expected).lower(), f"expected {expected!r}, {seen}", answer=found)
    raise ValueError(f"unknown check {kind!r}; known: {', '.join(CHECKS)}")
