"""What the rubric benchmarks' offline stand-in judges share (each benchmark's own judge is in
its folder, `benchmarks/<name>/smoke.py`, and knows only its own reply contract).

Their rulings are not grades: a criterion counts as met when a hash of the criterion and the
answer says so (about half the time), so a changed answer can change the verdict.
"""

from __future__ import annotations

import hashlib


def coin(*parts: str) -> bool:
    """A fair, repeatable coin: the same parts always land the same way."""
    return hashlib.sha256("\x00".join(parts).encode()).digest()[0] % 2 == 0


def critic(prompt: str) -> str:
    """Feedback that names no grading data."""
    return "Re-read the task and check every part of your answer against it."
