"""quickstart: one-line questions (sums, yes/no, capitals, repeat a word) that the
embedded SmolLM2-135M answers right only some of the time, so pass@k and seq@k
tell it something in a few minutes on a laptop.

The tasks live in tasks.jsonl, one per line, in canonical order:
    {"task_id": ..., "prompt": ..., "check": "number"|"phrase"|"yesno",
     "expected": ..., "hint": ...}
The prompt is all the actor sees; check and expected are grading data; the hint
is the `hint` feedback mode's nudge, written not to give the answer away.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from benchmarks._common.records import Records
from benchmarks.quickstart.checks import CHECKS, check
from seqk.benchmark import AttemptContext, Benchmark, FeedbackMode, NoOptions, Task, Verdict

TASKS_FILE = Path(__file__).with_name("tasks.jsonl")


@cache
def _rows() -> tuple[tuple[int, dict[str, Any]], ...]:
    """(position in the file, record) for every task."""
    # The benchmark's own file: a bad record is a bug to fix here, never one to skip.
    records = Records(str(TASKS_FILE), TASKS_FILE.read_text(encoding="utf-8"), skippable=False)
    rows = []
    for record in records:
        row = record.value
        if not isinstance(row, dict) or row.get("check") not in CHECKS:
            records.reject(record, "check", f"one of {', '.join(CHECKS)}")
            continue
        rows.append((record.position, row))
    return tuple(rows)


class Answer(BaseModel):
    """A task's grading data: which check, and the answer it expects."""

    model_config = ConfigDict(extra="forbid")

    check: Literal["number", "phrase", "yesno"]
    """The check of checks.py that grades the reply."""
    expected: str | int | float
    """The expected answer, as tasks.jsonl writes it."""


class Quickstart(Benchmark[NoOptions]):
    """Tiny questions graded by deterministic checks; no LLM judge."""

    name = "quickstart"
    feedback_modes = (
        FeedbackMode("binary", "Only says that the answer was wrong."),
        FeedbackMode("hint", "Says the answer was wrong and gives a hint that does not "
                     "contain the answer."),
        FeedbackMode("expected", "Says the answer was wrong and what the right answer is.",
                     shows_grading_info=True),
    )
    binary_feedback = "That is not correct."
    prompt_version = "2"
    """2: the number questions ask for an ANSWER: line, and a number is read from it (checks.py)."""

    def load_tasks(self, options: NoOptions) -> list[Task]:
        """The tasks of tasks.jsonl, task_index from 1."""
        return [
            Task(task_index=i, task_id=row["task_id"], prompt=row["prompt"],
                 answer=Answer(check=row["check"], expected=row["expected"]),
                 meta={"hint": row["hint"]})
            for i, row in _rows()
        ]

    async def verify(self, task: Task, output: str, ctx: AttemptContext[NoOptions]) -> Verdict:
        """Run the task's check on the reply."""
        answer = task.answer_as(Answer)
        result = check(answer.check, answer.expected, output)
        result.details["check"] = answer.check
        return result

    async def feedback(self, task: Task, output: str, verdict: Verdict, ctx: AttemptContext[NoOptions]) -> str:
        """Template feedback; no critic model."""
        if ctx.mode.name == "hint":
            return f"{self.binary_feedback} Hint: {task.meta['hint']}"
        if ctx.mode.name == "expected":
            return f"{self.binary_feedback} The correct answer is {task.answer_as(Answer).expected}."
        return self.binary_feedback


benchmark = Quickstart()
