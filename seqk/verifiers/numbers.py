"""Numbers in a reply: the answer a model states, read as a person would, and numbers parsed
as inspect_ai parses them.

`stated_number` reads the answer a reply gives, in this order:

    1. the last `ANSWER:` line (any case, anywhere on its line) that holds a number: the number
       after its last "=", else its first number ("ANSWER: 42", "Answer: 15 + 27 = 42");
    2. else the number after the reply's last "=" ("15 + 27 = 42. This is attempt 2 of 3.");
    3. else, as a last resort, the last number outside the seq@k prompt's framing echoed back
       ("attempt 2 of 3", "<PreviousAttempt 1>", "<Feedback 1>", mangled tags such as
       "<PreviousFeedback 2>"), which small models repeat after their answer.

Rule 3 is the old "last number" rule with the framing taken out: without it "42. This is
attempt 2 of 3." read 3. Thousands separators ("1,000") join their number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from seqk.benchmark import Verdict
from seqk.verifiers.base import Target, targets_of, verdict
from seqk.verifiers.unicode_numbers import unicode_number_to_float

_NUMBER = re.compile(r"(?:(?<![\w.])[-−])?\d+(?:\.\d+)?")
# Thousands separators ("1,000") would otherwise split one number in two.
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_ANSWER_MARK = re.compile(r"\banswer\s*:", re.IGNORECASE)
_AFTER_EQUALS = re.compile(r"=\s*[*_$]*\s*((?:[-−])?\d+(?:\.\d+)?)")
# The prompt's "attempt t of K" and its tags, <PreviousAttempt 1> and <Feedback 1>, as models
# echo them, mangled too (<PreviousFeedback 2>).
_FRAMING = re.compile(r"attempt\s+\d+\s+of\s+\d+|</?\s*\w*(?:Attempt|Feedback)\w*\s*\d+\s*>", re.IGNORECASE)


def _as_float(text: str) -> float:
    return float(text.replace("−", "-"))


def last_number_in(text: str) -> str | None:
    """The last number written in digits in `text` ("1,000" is one number), or None."""
    numbers = _NUMBER.findall(_THOUSANDS.sub("", text))
    return numbers[-1] if numbers else None


def stated_number(reply: str) -> tuple[str, str] | None:
    """The number `reply` gives as its answer and the rule that found it (module docstring):
    ('42', 'the ANSWER: line'), ('42', "after the last '='"), ('42', 'the last number'); None
    when the reply holds no number outside the framing."""
    text = _THOUSANDS.sub("", reply)
    for mark in reversed(list(_ANSWER_MARK.finditer(text))):
        line = text[mark.end():].split("\n", 1)[0]
        after = _AFTER_EQUALS.findall(line)
        found = after[-1] if after else next(iter(_NUMBER.findall(line)), None)
        if found is not None:
            return found, "the ANSWER: line"
    after = _AFTER_EQUALS.findall(text)
    if after:
        return after[-1], "after the last '='"
    numbers = _NUMBER.findall(_FRAMING.sub(" ", text))
    return (numbers[-1], "the last number") if numbers else None


def parse_target_number(text: str) -> float | None:
    """A target as a number ("42", "-3.5", "1,000"); None when it is not one."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return _as_float(_THOUSANDS.sub("", text.strip()))
    except ValueError:
        return None


def numeric(output: str, target: Target, *, tolerance: float = 0.0, relative_tolerance: float = 0.0) -> Verdict:
    """Success when the number the reply states (`stated_number`) is a target number, within
    `tolerance` (absolute) or `relative_tolerance` (a share of the target), whichever is wider.
    A reply with no number is a wrong answer whose verdict names the format problem. ValueError
    when a target is not a number."""
    wanted = []
    for t in targets_of(target):
        goal = parse_target_number(t)
        if goal is None:
            raise ValueError(f"numeric: the target {t!r} is not a number")
        wanted.append((t, goal))
    shown = " or ".join(t for t, _ in wanted)
    found = stated_number(output)
    if found is None:
        return verdict(False, f"expected the number {shown}; the reply has no number",
                       answer=None, format="no number in the reply")
    text, rule = found
    value = _as_float(text)
    ok = any(abs(value - goal) <= max(tolerance, relative_tolerance * abs(goal)) for _, goal in wanted)
    return verdict(ok, f"expected the number {shown}; the reply's answer ({rule}) is {text}",
                   answer=text, rule=rule)


# inspect_ai's number handling (inspect_ai/_util/text.py, scorer/_common.py), for `match`.

_NUMERIC_TRIM = "!?:;()[]{}'\"`"


def strip_numeric_punctuation(s: str) -> str:
    """inspect's clean-up before a numeric comparison: LaTeX-escaped and bare currency and
    formatting marks removed, and a '.' not followed by a digit."""
    s = re.sub(r"\\([$,£,€*_])", r"\1", s)
    s = re.sub(r"[$,£,€,*,_]", "", s)
    return re.sub(r"\.(?=\s|$|\D)", "", s)


def parse_number(s: str, *, trim_punctuation: bool = True) -> float | None:
    """`s` as a finite number the way inspect's match(numeric=True) reads a word (float syntax,
    then Unicode forms), sentence punctuation around it trimmed unless asked not to; None when
    it is not one."""
    cleaned = s.strip(_NUMERIC_TRIM) if trim_punctuation else s
    for parse in (float, unicode_number_to_float):
        try:
            value = parse(cleaned)
        except ValueError:
            continue
        if math.isfinite(value):
            return value
    return None


def normalize_number(number: str, precision: int = 5, *, trim_punctuation: bool = True) -> str:
    """The number to `precision` significant digits, as text; the text itself if not a number."""
    value = parse_number(number, trim_punctuation=trim_punctuation)
    return number if value is None else format(value, f".{precision}g")


def numbers_in_words(words: Sequence[str]) -> list[str]:
    """The normalised numbers among `words`, in order."""
    return [normalize_number(w) for w in words if parse_number(w) is not None]
