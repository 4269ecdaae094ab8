"""inspect: an inspect_ai task as a seqk benchmark, run as seq@k against pass@k. The task's
samples become the tasks (input, target, choices, id, metadata), in the task's order; its scorer
grades when it is one of inspect's built-ins that seqk.verifiers follows rule for rule (match,
includes, pattern, answer, choice, exact, f1), with its parameters. Any other scorer is refused
in one line naming it. The task's solver chain is not used: seqk's actor, feedback and prompt
protocol are the point; a sample with choices is put to the actor in inspect's own
multiple-choice wording.

    benchmark: inspect
    options:
      task: variants/inspect/tasks.py@arithmetic     # or an installed package's: inspect_evals/gsm8k
      task_args: {}                                  # the task function's arguments

inspect_ai is an optional extra (`pip install 'seqk[inspect]'`), imported only when a variant
names this benchmark.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from benchmarks._common.samples import SampleBenchmark
from benchmarks.inspect import mapping
from seqk.benchmark import Task


class InspectOptions(BaseModel):
    """Which inspect_ai task, with which arguments."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1)
    """path/to/file.py@task_name (or path/to/file.py holding one task), or a registered task such
    as inspect_evals/gsm8k; a path is relative to the working directory."""
    task_args: dict[str, Any] = Field(default_factory=dict)
    """Arguments for the task function."""
    name: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    """The slice's name in run ids (default: inspect-<the task's name>)."""


class Inspect(SampleBenchmark[InspectOptions]):
    """An inspect_ai task's samples, graded by its built-in scorer as seqk.verifiers writes it."""

    name: ClassVar[str] = "inspect"

    def loaded(self, options: InspectOptions) -> mapping.Loaded:
        """The task's samples as tasks and its scorer as seqk's (loaded once per process)."""
        return _loaded(options.task, json.dumps(options.task_args, sort_keys=True, default=str))

    def scorer_of(self, options: InspectOptions) -> Any:
        """The seqk.verifiers scorer the task's own scorer maps to."""
        return self.loaded(options).scorer

    def slice_name(self, options: InspectOptions) -> str:
        """`name`, else inspect-<the task's name>."""
        return options.name or f"inspect-{self.loaded(options).name}"

    def load_tasks(self, options: InspectOptions) -> list[Task]:
        """The task's samples, task_index from 1 in the task's order."""
        return list(self.loaded(options).tasks)

    def data_fingerprint(self, options: InspectOptions) -> str | None:
        """A hash of every sample as seqk reads it and of the scorer as it maps: the task file
        is code, and what it yields is what must not change under a run."""
        loaded = self.loaded(options)
        blob = json.dumps([loaded.scorer.model_dump(mode="json"),
                           [(t.task_id, t.content_hash) for t in loaded.tasks]])
        return hashlib.sha256(blob.encode()).hexdigest()


@cache
def _loaded(task: str, task_args: str) -> mapping.Loaded:
    return mapping.load(task, json.loads(task_args))


benchmark = Inspect()
