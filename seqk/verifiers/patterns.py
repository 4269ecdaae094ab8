"""Verifiers that read the answer out of the reply with a pattern, with inspect_ai's rules
(0.3.285), so that a task graded by inspect's `pattern()`, `answer()` or `choice()` gets the same
verdict here (`tests/verifiers/test_inspect_parity.py`):

    regex   the first match of a regular expression; a capture group (any of them, or all
            with `match_all`; the whole match when there is none) equals a target
    answer  `regex` with inspect's ANSWER: patterns: a letter, a word or the rest of the line
    choice  the letter(s) after the last `ANSWER:` (inspect's multiple_choice reading), else,
            unless `lone_letter` is off, the last letter of the choices standing alone ("B)",
            "(B)", "is B."); the set of letters equals the target's

A reply the pattern does not match, or with no letter to read, is a wrong answer whose
verdict names the format problem.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from seqk.benchmark import Verdict
from seqk.verifiers.base import Target, targets_of, verdict

ANSWER_PATTERNS = {
    "letter": r"(?is)ANSWER\s*:\s*([A-Za-z])(?:[^\w]|\n|$)(?!.*ANSWER\s*:)",
    "word": r"(?is)ANSWER\s*:\s*(\S+?)(?=[.,;:!?]?\s*(?:\n|$))(?!.*ANSWER\s*:)",
    "line": r"(?i)ANSWER\s*:\s*([^\n]+)\s*\Z",
}
"""inspect's answer patterns, each reading the last `ANSWER:` of the reply."""


def _equal(found: str, goals: list[str], ignore_case: bool) -> bool:
    return found.lower() in [g.lower() for g in goals] if ignore_case else found in goals


def regex(output: str, target: Target, *, pattern: str, ignore_case: bool = True,
          match_all: bool = False) -> Verdict:
    """Success when the first match of `pattern` captures a target (inspect's `pattern()`)."""
    goals = targets_of(target)
    found = re.search(pattern, output, re.IGNORECASE if ignore_case else 0)
    if found is None:
        return verdict(False, f"the reply does not match the pattern {pattern!r}", answer=None,
                       format=f"the answer is not in the expected form (the pattern {pattern!r} finds nothing)")
    groups: tuple[Any, ...] = found.groups() or (found.group(0),)
    texts = [g for g in groups if isinstance(g, str)]
    answer: str | None
    if match_all:
        # inspect answers with the targets' text joined, and passes only when that is not empty.
        every = bool(texts) and all(_equal(g, goals, ignore_case) for g in texts)
        answer = "".join(goals) if every else None
        ok = bool(answer)
    else:
        answer = next((g for g in texts if _equal(g, goals, ignore_case)), None)
        ok = bool(answer)
        if answer is None and len(groups) == 1:
            answer = groups[0]
    shown = " or ".join(repr(g) for g in goals)
    return verdict(ok, f"expected {shown}; the pattern read {answer!r}", answer=answer)


def answer(output: str, target: Target, *, pattern: Literal["letter", "word", "line"]) -> Verdict:
    """Success when what follows the last `ANSWER:` (a letter, a word or the rest of the line, as
    `pattern` says) is a target (inspect's `answer()`)."""
    problem = {"letter": "a letter", "word": "a word", "line": "the answer on its own last line"}[pattern]
    result = regex(output, target, pattern=ANSWER_PATTERNS[pattern])
    if "format" in result.details:
        result.details["format"] = f"no ANSWER: line with {problem}"
    return result


def letter(index: int) -> str:
    """The label of choice `index` (0-based): A..Z, then 1, 2, ... as inspect labels them."""
    return chr(ord("A") + index) if index < 26 else str(index - 25)


def letter_index(label: str) -> int:
    """The 0-based index a label names ('A' is 0, 'b' is 1, '1' is 26); ValueError otherwise."""
    if len(label) == 1 and label.isalpha():
        return ord(label.upper()) - ord("A")
    if label.isnumeric() and int(label) > 0:
        return 25 + int(label)
    raise ValueError(f"{label!r} names no choice (a letter, or a number from 1)")


def target_positions(target: Target, n_choices: int) -> list[int]:
    """The 0-based choices a target names: "A", "A, C", "AC" or ["A", "C"] (inspect's reading).
    ValueError when one lies beyond the `n_choices` choices."""
    labels: list[str] = []
    for value in targets_of(target):
        for token in value.replace(",", " ").split():
            labels.extend([token] if token.isnumeric() else list(token))
    positions = [letter_index(label) for label in labels]
    beyond = [label for label, p in zip(labels, positions, strict=True) if p >= n_choices]
    if beyond:
        raise ValueError(f"the target names {', '.join(beyond)}, beyond the {n_choices} choices")
    return positions


def _unwrapped(reply: str) -> str:
    reply = re.sub(r"\x24\s*([A-Za-z\d][A-Za-z\d ,]*?)\s*\x24", r"\1", reply)
    reply = re.sub(r"\*\*\s*([A-Za-z\d][A-Za-z\d ,]*?)\s*\*\*", r"\1", reply)
    return re.sub(r"(?i)(^|[:,])(\s*)\(([A-Za-z\d])\)(?=\s*(?:,|\.|\n|\Z))", r"\1\2\3", reply)


def chosen_letters(reply: str, n_choices: int, *, multiple: bool) -> set[str]:
    """The letters after the reply's last `ANSWER:`, as inspect's multiple_choice solver reads
    them (one letter, or several with `multiple`); empty when none can be read."""
    text = _unwrapped(reply)
    found = re.findall(r"(?i)^ANSWER\s*:\s*([A-Za-z\d ,]+)\s*(?:$|\n|\.)", text, flags=re.MULTILINE)
    if not found:
        found = re.findall(r"(?i)ANSWER\s*:\s*([A-Za-z\d ,]+)(?:[^\w]|\n|$|\.)", text)
    if not found:
        return set()
    picked = found[-1].strip().rstrip(".").upper()
    allowed = {letter(i) for i in range(n_choices)}
    if multiple:
        picked = picked.replace(" AND ", ",").replace(" ", "")
        by_comma = {x for x in picked.split(",") if x}
        if by_comma <= allowed:
            return by_comma
        return set(picked) if set(picked) <= allowed else set()
    tokens = [t for t in picked.split(",") if t]
    return {tokens[0]} if len(tokens) == 1 and tokens[0] in allowed else set()


def _lone_letter(reply: str, n_choices: int) -> str | None:
    allowed = "".join(letter(i) for i in range(min(n_choices, 26)))
    found = re.findall(rf"(?<![A-Za-z0-9'])([{allowed}])(?![A-Za-z0-9'])", reply) if allowed else []
    return found[-1] if found else None


def choice(output: str, target: Target, *, choices: int | Sequence[Any], lone_letter: bool = True,
           multiple: bool | None = None) -> Verdict:
    """Success when the letters the reply chooses are exactly the target's. `choices` is the
    choices (or how many); `multiple` reads several letters after ANSWER: (None: when the target
    names several)."""
    n = choices if isinstance(choices, int) else len(choices)
    wanted = target_positions(target, n)
    several = len(wanted) > 1 if multiple is None else multiple
    picked = chosen_letters(output, n, multiple=several)
    rule = "the ANSWER: line"
    if not picked and lone_letter and (alone := _lone_letter(output, n)) is not None:
        picked, rule = {alone}, "the last lone letter"
    positions = sorted(letter_index(p) for p in picked)
    shown = ", ".join(letter(p) for p in sorted(set(wanted)))
    read = ", ".join(letter(p) for p in positions)
    if not picked:
        labels = ", ".join(letter(i) for i in range(n))
        return verdict(False, f"expected {shown}; the reply names no choice", answer="",
                       format=f"no ANSWER: line naming one of {labels}")
    return verdict(positions == sorted(wanted), f"expected {shown}; the reply chose {read} ({rule})",
                   answer=read, rule=rule)


SINGLE_ANSWER_TEMPLATE = (
    "Answer the following multiple choice question. The entire content of your response should be of "
    "the following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of {letters}.\n\n"
    "{question}\n\n{choices}")
"""inspect's multiple_choice prompt, word for word: what a model answering `choice` is told."""
MULTIPLE_ANSWER_TEMPLATE = (
    "Answer the following multiple choice question where multiple answers may be correct. The entire "
    "content of your response should be of the following format: 'ANSWER: $LETTERS' (without quotes) "
    "where LETTERS is one or more of {letters}.\n\n{question}\n\n{choices}")
"""The same for questions with several right choices."""


def choice_lines(choices: Sequence[Any]) -> str:
    """The choices as inspect shows them: "A) first", "B) second", one a line."""
    return "\n".join(f"{letter(i)}) {text}" for i, text in enumerate(choices))


def choice_letters(n_choices: int) -> str:
    """The labels of `n_choices` choices, as the prompt lists them: "A,B,C,D"."""
    return ",".join(letter(i) for i in range(n_choices))


def choice_prompt(question: str, choices: Sequence[Any], *, multiple: bool = False) -> str:
    """The question with its lettered choices under inspect's multiple_choice instruction."""
    template = MULTIPLE_ANSWER_TEMPLATE if multiple else SINGLE_ANSWER_TEMPLATE
    return template.format(question=question, choices=choice_lines(choices), letters=choice_letters(len(choices)))
