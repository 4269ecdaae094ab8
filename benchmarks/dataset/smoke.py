"""Offline stand-ins for the shipped examples (variants/dataset/, variants/inspect/) and the docs
page's own benchmark: a scripted actor that works the arithmetic out of the question itself, and
a critic. They see only the prompt, never the grading data. Their misses are scripted by a hash
of the question (the same question always misses the same way): plumbing, not a finding.

    mock/py:benchmarks.dataset.smoke:arithmetic       "What is 37 + 48?" and the like
    mock/py:benchmarks.dataset.smoke:multiple_choice  lettered choices about numbers
    mock/py:benchmarks.dataset.smoke:critic           feedback naming no answer
"""

from __future__ import annotations

import hashlib
import math
import re

_ATTEMPT = re.compile(r"This is attempt (\d+) of \d+")
_OPERATION = re.compile(r"(-?\d+(?:\.\d+)?)\s*(\+|-|−|×|\*|÷|/|divided by|times|plus|minus)\s*(-?\d+(?:\.\d+)?)")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)% of (\d+(?:\.\d+)?)")
_CHOICE = re.compile(r"^([A-Z])\) (.*)$", re.MULTILINE)


def _coin(text: str, sides: int) -> int:
    return hashlib.sha256(text.encode()).digest()[0] % sides


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}".rstrip("0")


def solve(question: str) -> float | None:
    """The value an arithmetic question asks for, or None."""
    if found := _PERCENT.search(question):
        return float(found.group(1)) * float(found.group(2)) / 100
    if found := _OPERATION.search(question):
        a, op, b = float(found.group(1)), found.group(2), float(found.group(3))
        ops = {"+": a + b, "plus": a + b, "-": a - b, "−": a - b, "minus": a - b, "×": a * b, "*": a * b,
               "times": a * b}
        return ops[op] if op in ops else (a / b if b else None)
    return None


def _attempt(prompt: str) -> tuple[str, int]:
    found = _ATTEMPT.search(prompt)
    question = prompt.split("\n\nThis is attempt", 1)[0]
    return question, int(found.group(1)) if found else 1


def arithmetic(prompt: str) -> str:
    """Right most of the time; on a first try a fifth of the questions get no number at all and
    two fifths are off by one; one question in seven never comes right."""
    question, attempt = _attempt(prompt)
    value = solve(question)
    if value is None:
        return "I cannot work this one out."
    stubborn = _coin(question + "stubborn", 7) == 0
    miss = _coin(question, 5)
    if attempt == 1 and miss == 0:
        return "Let me think about this step by step."
    if stubborn or (attempt == 1 and miss in (1, 2)):
        value += 1
    return f"Working it out: the result is {_number(value)}.\nANSWER: {_number(value)}"


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))


def _pick(question: str, options: dict[str, str]) -> str | None:
    numbers = {letter: float(text) for letter, text in options.items() if re.fullmatch(r"-?\d+(\.\d+)?", text)}
    if not numbers:
        return None
    if "prime" in question:
        return next((k for k, v in numbers.items() if v.is_integer() and _is_prime(int(v))), None)
    if "largest" in question:
        return max(numbers, key=lambda k: numbers[k])
    if "smallest" in question:
        return min(numbers, key=lambda k: numbers[k])
    if "even" in question:
        return next((k for k, v in numbers.items() if v.is_integer() and int(v) % 2 == 0), None)
    value = solve(question)
    return next((k for k, v in numbers.items() if value is not None and math.isclose(v, value)), None)


def multiple_choice(prompt: str) -> str:
    """Finds the right letter; on a first try a quarter of the questions get a bare word and a
    third the next letter; one question in eight never comes right."""
    question, attempt = _attempt(prompt)
    options = dict(_CHOICE.findall(question))
    right = _pick(_CHOICE.sub("", question), options)
    if right is None:
        return "ANSWER: A"
    letters = sorted(options)
    wrong = letters[(letters.index(right) + 1) % len(letters)]
    miss = _coin(question, 12)
    if attempt == 1 and miss < 3:
        return "Hmm, that is a tricky one."
    if _coin(question + "stubborn", 8) == 0 or (attempt == 1 and miss < 7):
        return f"ANSWER: {wrong}"
    return f"ANSWER: {right}"


def critic(prompt: str) -> str:
    """Feedback that names no answer."""
    return "Check each step of the calculation again, and end with the ANSWER: line the task asks for."
