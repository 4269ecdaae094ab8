"""seqk.verifiers grades as inspect_ai's own scorers do: every built-in that `benchmark: inspect`
maps (match, includes, pattern, answer, choice, exact, f1) is run by inspect itself (0.3.285, the
`inspect` extra) on the same replies and targets, and the verdicts must agree, case by case.

The replies are a hand-written set of what models write (ANSWER: lines, bold letters, currency,
thousands separators, Unicode digits and fractions, Chinese numerals, empty replies) and a few
hundred generated from those pieces; the number parser is compared on random strings."""

from __future__ import annotations

import asyncio
import random

import pytest
from inspect_ai.model import ModelName, ModelOutput
from inspect_ai.scorer import CORRECT, Target
from inspect_ai.scorer import answer as inspect_answer
from inspect_ai.scorer import choice as inspect_choice
from inspect_ai.scorer import exact as inspect_exact
from inspect_ai.scorer import f1 as inspect_f1
from inspect_ai.scorer import includes as inspect_includes
from inspect_ai.scorer import match as inspect_match
from inspect_ai.scorer import pattern as inspect_pattern
from inspect_ai.scorer._common import _parse_number as inspect_parse_number
from inspect_ai.solver import TaskState
from inspect_ai.solver._multiple_choice import parse_answers, set_choices_based_on_generated_response

from seqk import verifiers
from seqk.verifiers.numbers import parse_number

# Thousands of cases through inspect_ai's own scorers (~20 s of CPU): slow, run by --run-slow, CI and
# the README's test command.
pytestmark = pytest.mark.slow

WRITTEN = [
    "42", "42.", "The answer is 42.", "15 + 27 = 42. This is attempt 2 of 3.", "$42", "$1,234.50",
    "1,234", "42%", "(42)", "**42**", "x = 5", "-5", "−5", "3.14159", "3.1416", "1e3", "½", "2½", "3²",
    "٤٢", "４２", "四十二", "十二", "二〇二五", "三點五", "1.234,5", "", "   ", "\n",
    "ANSWER: B", "ANSWER: b.", "answer:C", "**ANSWER: C**", "ANSWER: (B)", "ANSWER: $B$", "ANSWER: A, C",
    "ANSWER: AC", "ANSWER: A and C", "ANSWER: A,", "I think (B).", "B", "The answer is B.",
    "ANSWER: A\nANSWER: D", "Reasoning...\nANSWER: yes", "ANSWER: Yes.", "ANSWER: no!", "answer: maybe so",
    "Paris", "paris.", "The capital is Paris.", "Paris, France", "New York", "new-york", "the new york",
    "An apple a day", "apple", "APPLES", "yes", "No.", "Yes, and no.", "12 apples and 3 pears",
    "It costs $20 or 20%", "The result: 0.5", "about 1/2", "first 7 then 8", "answer: 8 apples",
]
PIECES = ["ANSWER:", "answer :", "A", "b", "(C)", "**D**", "42", "42.", "$1,000", "½", "3²", "十二", "the",
          "Paris", ",", ".", "\n", "and", "A, C", "AC", "=", "-", "−7", "yes", "No", "apple", "5", "0.50"]


def generated(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(["", " ", "\n"]).join(rng.choice(PIECES) for _ in range(rng.randint(1, 6))) for _ in range(n)]


REPLIES = WRITTEN + generated(250)
NUMBER_TARGETS = ["42", "5", "-5", "1234", "1000", "0.5", "2.5", "3.14159", "12", "2025", "$20", "20%"]
TEXT_TARGETS = ["Paris", "New York", "apple", "yes", "no", "B", "the", "", ["Paris", "paris, france"],
                ["42", "forty-two"]]


def state(reply: str, choices: list[str] | None = None) -> TaskState:
    return TaskState(model=ModelName("mockllm/model"), sample_id=1, epoch=1, input="q", messages=[],
                     choices=choices, output=ModelOutput.from_content("mockllm/model", reply))


def inspect_verdicts(scorer, cases: list[tuple[str, str | list[str]]]) -> list:
    async def all_of():
        return [(await scorer(state(reply), Target(target))).value for reply, target in cases]
    return asyncio.run(all_of())


def cases(targets) -> list[tuple[str, str | list[str]]]:
    return [(reply, target) for reply in REPLIES for target in targets]


def disagreements(ours, theirs, found) -> list:
    return [(case, a, b) for case, a, b in zip(found, ours, theirs, strict=True) if a != b][:10]


@pytest.mark.parametrize("location", ["begin", "end", "any", "exact"])
@pytest.mark.parametrize("numeric", [False, True])
@pytest.mark.parametrize("ignore_case", [True, False])
def test_match(location, numeric, ignore_case):
    found = cases(NUMBER_TARGETS + TEXT_TARGETS)
    theirs = [v == CORRECT for v in inspect_verdicts(
        inspect_match(location, ignore_case=ignore_case, numeric=numeric), found)]
    ours = [verifiers.match(r, t, location=location, ignore_case=ignore_case, numeric=numeric).success
            for r, t in found]
    assert not disagreements(ours, theirs, found)
    assert 0 < sum(ours) < len(ours)


@pytest.mark.parametrize("ignore_case", [True, False])
def test_includes(ignore_case):
    found = cases(TEXT_TARGETS + NUMBER_TARGETS)
    theirs = [v == CORRECT for v in inspect_verdicts(inspect_includes(ignore_case), found)]
    ours = [verifiers.includes(r, t, ignore_case=ignore_case).success for r, t in found]
    assert not disagreements(ours, theirs, found) and 0 < sum(ours) < len(ours)


@pytest.mark.parametrize("pattern", [r"ANSWER\s*:\s*(\w+)", r"(\d+)\s*apples", r"(yes|no)", r"(a)|(b)",
                                     r"\d+", r"(\d*)", r"(A)(C)?"])
@pytest.mark.parametrize("match_all", [False, True])
@pytest.mark.parametrize("ignore_case", [True, False])
def test_pattern(pattern, match_all, ignore_case):
    found = cases(TEXT_TARGETS + ["8", "12", "A", "a", ["A", "C"], ["b", "B"]])
    theirs = [v == CORRECT for v in inspect_verdicts(inspect_pattern(pattern, ignore_case, match_all), found)]
    ours = [verifiers.regex(r, t, pattern=pattern, ignore_case=ignore_case, match_all=match_all).success
            for r, t in found]
    assert not disagreements(ours, theirs, found)


@pytest.mark.parametrize("kind", ["letter", "word", "line"])
def test_answer(kind):
    found = cases(TEXT_TARGETS + ["C", "maybe so", "8 apples", "A, C"])
    theirs = [v == CORRECT for v in inspect_verdicts(inspect_answer(kind), found)]
    ours = [verifiers.answer(r, t, pattern=kind).success for r, t in found]
    assert not disagreements(ours, theirs, found) and 0 < sum(ours) < len(ours)


def test_exact():
    found = cases(TEXT_TARGETS + NUMBER_TARGETS + ["an apple a day", "New-York"])
    theirs = [v == CORRECT for v in inspect_verdicts(inspect_exact(), found)]
    ours = [verifiers.exact(r, t).success for r, t in found]
    assert not disagreements(ours, theirs, found) and 0 < sum(ours) < len(ours)


@pytest.mark.parametrize("stop_words", [None, ["is", "and"]])
def test_f1_value_is_inspects(stop_words):
    found = cases(TEXT_TARGETS + NUMBER_TARGETS + ["an apple a day", "12 apples"])
    theirs = inspect_verdicts(inspect_f1(stop_words=stop_words), found)
    ours = [verifiers.f1(r, t, stop_words=stop_words).score for r, t in found]
    assert not disagreements(ours, theirs, found)
    assert len({round(v, 2) for v in ours}) > 3


@pytest.mark.parametrize("n_choices", [2, 4, 5])
@pytest.mark.parametrize("multiple", [False, True])
def test_choice_after_inspects_multiple_choice_reading(n_choices, multiple):
    """inspect's choice() grades the choices its multiple_choice solver marked from the reply."""
    choices = [f"option {i}" for i in range(n_choices)]
    targets = ["A", "B", "C", "A,C", ["A", "C"], "AB"] if n_choices > 2 else ["A", "B", "AB"]

    async def theirs_all():
        values = []
        for reply in REPLIES:
            for target in targets:
                st = state(reply, choices)
                set_choices_based_on_generated_response(st, parse_answers(st, multiple))
                values.append((await inspect_choice()(st, Target(target))).value == CORRECT)
        return values

    theirs = asyncio.run(theirs_all())
    found = [(r, t) for r in REPLIES for t in targets]
    ours = [verifiers.choice(r, t, choices=choices, lone_letter=False, multiple=multiple).success
            for r, t in found]
    assert not disagreements(ours, theirs, found) and 0 < sum(ours) < len(ours)


def test_numbers_parse_as_inspect_parses_them():
    rng = random.Random(11)
    alphabet = list("0123456789.,-+eE ½⅓²³⁻$%()[]!?:;'\"x") + ["−", "１", "٤", "十", "二", "百", "万", "點", "〇", "负"]
    strings = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(20000)]
    strings += [w for reply in WRITTEN for w in reply.split()]
    differ = []
    for s in strings:
        for trim in (True, False):
            try:
                theirs = inspect_parse_number(s, trim_punctuation=trim)
            except Exception as exc:  # noqa: BLE001 - the same exception must come from ours
                theirs = type(exc)
            try:
                ours = parse_number(s, trim_punctuation=trim)
            except Exception as exc:  # noqa: BLE001
                ours = type(exc)
            if ours != theirs:
                differ.append((s, trim, ours, theirs))
    assert not differ[:10]
    assert sum(parse_number(s) is not None for s in strings) > 1000
