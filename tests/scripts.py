"""Mock model scripts, importable as `mock/py:scripts:<name>` (tests put this folder on sys.path)."""

from __future__ import annotations

import re

_WORD = re.compile(r"Say the word (w\d+)")
_ATTEMPT = re.compile(r"This is attempt (\d+) of (\d+)")


def word_of(prompt: str) -> str:
    return _WORD.search(prompt).group(1)


def attempt_of(prompt: str) -> int | None:
    m = _ATTEMPT.search(prompt)
    return int(m.group(1)) if m else None


def solves_on(schedule: dict[int, int]):
    """A seq@k actor that answers task i right from attempt schedule[i] on (never if absent)."""

    def reply(prompt: str) -> str:
        word = word_of(prompt)
        task = int(word[1:])
        attempt = attempt_of(prompt) or 1
        return word if attempt >= schedule.get(task, 10**9) else f"not-{word}"

    return reply


def always_wrong(prompt: str) -> str:
    return "wrong"


def odd_tasks_right(prompt: str) -> str:
    word = word_of(prompt)
    return word if int(word[1:]) % 2 else "wrong"
