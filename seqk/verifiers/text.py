"""Verifiers that compare the reply's text with the target, with inspect_ai's rules (0.3.285), so
that a task graded by inspect's `exact()`, `f1()`, `includes()` or `match()` gets the same verdict
here (`tests/verifiers/test_inspect_parity.py` runs inspect's scorers on the same outputs):

    exact     the reply, normalised, equals a target: case folded, punctuation and the articles
              a/an/the removed, numbers written alike ("3.0" = "3"), whitespace collapsed
    f1        SQuAD's token F1 between the normalised reply and the best target; success at
              `threshold` (1.0: every token right)
    includes  a target appears in the reply (ignoring case unless asked)
    match     a target at the reply's end (or its beginning, anywhere, or the whole reply),
              trimmed of punctuation; with `numeric`, the reply's last (first...) number
              equals the target's to 5 significant digits
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from seqk.benchmark import Verdict
from seqk.verifiers.base import Target, targets_of, verdict
from seqk.verifiers.numbers import normalize_number, numbers_in_words, parse_number, strip_numeric_punctuation

Location = Literal["begin", "end", "any", "exact"]

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def _is_finite_number(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return value not in (float("inf"), float("-inf")) and value == value


def strip_punctuation(text: str) -> str:
    """`text` without whitespace and ASCII punctuation at either end."""
    return text.strip(string.whitespace + string.punctuation)


def _normal_token(token: str) -> str:
    token = token.casefold()
    if not _is_finite_number(token):
        stripped = strip_punctuation(token)
        token = stripped if _is_finite_number(stripped) else "".join(c for c in token if c not in _PUNCTUATION)
    if _is_finite_number(token):
        token = str(float(token))
    return " ".join(_ARTICLES.sub(" ", token).split())


def normalize(text: str, stop_words: Sequence[str] | None = None) -> str:
    """The text as `exact` and `f1` compare it (SQuAD's normalisation, as inspect writes it):
    tokens split at spaces and hyphens, each case-folded, stripped of punctuation (a number
    keeps its point and is written as a float), articles and `stop_words` dropped."""
    stops = [_normal_token(w) for w in stop_words or ()]
    tokens = [t for t in (_normal_token(raw) for raw in re.split(" |-", text)) if t not in stops]
    return " ".join(t for t in tokens if t.strip()).strip()


def exact(output: str, target: Target) -> Verdict:
    """Success when the normalised reply equals a normalised target (a target that normalises to
    nothing, such as "the", never matches)."""
    answer = normalize(output)
    wanted = [norm for t in targets_of(target) if (norm := normalize(t))]
    ok = answer in wanted
    return verdict(ok, f"expected {' or '.join(repr(t) for t in targets_of(target))}; the reply, "
                       f"normalised, is {answer[:200]!r}", answer=output)


def _word_counts(text: str, stop_words: Sequence[str] | None) -> Counter[str]:
    return Counter(normalize(text, stop_words).split())


def _f1(answer: Counter[str], goal: Counter[str]) -> float:
    common = sum((answer & goal).values())
    precision = common / sum(answer.values()) if answer else 1.0
    recall = common / sum(goal.values()) if goal else 1.0
    return 0.0 if precision == recall == 0.0 else 2 * precision * recall / (precision + recall)


def f1(output: str, target: Target, *, stop_words: Sequence[str] | None = None,
       threshold: float = 1.0) -> Verdict:
    """Score: the best token F1 over the targets, rounded to 2 decimals (inspect's value);
    success when it reaches `threshold`."""
    answer = _word_counts(output, stop_words)
    scores = [_f1(answer, goal) for t in targets_of(target) if (goal := _word_counts(t, stop_words))]
    best = round(max(scores, default=0.0), 2)
    return verdict(best >= threshold, f"token F1 {best:.2f} against the best target (passes at "
                                      f"{threshold:g})", score=best, answer=output)


def includes(output: str, target: Target, *, ignore_case: bool = True) -> Verdict:
    """Success when a target appears in the reply."""
    reply = output.casefold() if ignore_case else output
    found = next((t for t in targets_of(target) if (t.casefold() if ignore_case else t) in reply), None)
    shown = " or ".join(repr(t) for t in targets_of(target))
    return verdict(found is not None, f"expected {shown} in the reply: {'found' if found is not None else 'not found'}",
                   answer=found)


def match_one(value: str, target: str, location: Location = "end", *, ignore_case: bool = True,
              numeric: bool = False) -> tuple[str, bool]:
    """inspect's match_str: (the answer read, whether it matches `target`)."""
    v, t = value.strip(), target.strip()
    answer = v
    if ignore_case:
        v, t = v.casefold(), t.casefold()
    if numeric:
        t = strip_numeric_punctuation(t)
    if numeric and parse_number(t) is not None:
        # A numeric target is compared as a number, never as text ("25" ends with "5").
        v = strip_numeric_punctuation(v)
        t = normalize_number(t)
        words = re.split(r"\s+", v)
        if location == "any":
            return (t, True) if t in numbers_in_words(words) else (answer, False)
        if location == "exact":
            v = normalize_number(v, trim_punctuation=False)
        else:
            ordered = words if location == "begin" else words[::-1]
            first = next((w for w in ordered if parse_number(w) is not None), None)
            v = normalize_number(first) if first is not None else ""
        return v, v == t
    v, t = strip_punctuation(v), strip_punctuation(t)
    if location == "begin":
        return answer, v.startswith(t)
    if location == "end":
        return answer, v.endswith(t)
    if location == "exact":
        return answer, v == t
    return answer, t in v


def match(output: str, target: Target, *, location: Location = "end", ignore_case: bool = True,
          numeric: bool = False) -> Verdict:
    """Success when a target matches the reply at `location` (inspect's `match()`)."""
    answer: str | None = None
    for goal in targets_of(target):
        answer, ok = match_one(output, goal, location, ignore_case=ignore_case, numeric=numeric)
        if ok:
            return verdict(True, f"matched {goal!r} at the reply's {location}", answer=answer)
    shown = " or ".join(repr(t) for t in targets_of(target))
    kind = "the number " if numeric else ""
    return verdict(False, f"expected {kind}{shown} at the reply's {location}; read {str(answer)[:200]!r}",
                   answer=answer)
