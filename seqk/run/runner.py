"""The seam between the engine and the executors: `TaskRunner`, what an executor (seqk/run/executor.py,
seqk/run/ray_executor.py) runs a task through. seqk.run.scheduler.Engine implements it with public
methods, so an executor never reaches into the engine's own state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from seqk.benchmark import Task
from seqk.config.spec import RunSpec
from seqk.models import Pool
from seqk.records import AttemptRecord, FeedbackFill
from seqk.run.budget import Gate
from seqk.run.observer import RunResult
from seqk.run.prepare import Prepared
from seqk.run.writer import Writer

Emit = Callable[[AttemptRecord | FeedbackFill, bool, str | None], None]
"""Where a finished record goes: (record, task_done, task_outcome)."""


class TaskRunner(Protocol):
    """What an executor runs tasks through: the engine of one run (seqk.run.scheduler.Engine)."""

    spec: RunSpec
    prepared: Prepared
    result: RunResult
    """The run's counts so far, and why it stopped (a Ray worker's stop reaches the driver's)."""
    budget: Gate | None
    pool: Pool
    writer: Writer

    def task(self, task_index: int) -> Task:
        """The run's task of this index."""
        ...

    async def run_chains(self, task: Task, slots: list[tuple[int, int]], emit: Emit | None = None) -> None:
        """seq@k: the task's unfinished chains, (chain_index, first attempt) each, every record to
        `emit` (default: this engine's `emit`)."""
        ...

    async def run_samples(self, task: Task, indices: list[int], emit: Emit | None = None) -> None:
        """pass@k: these samples of the task, every record to `emit` (default: this engine's `emit`)."""
        ...

    def emit(self, record: AttemptRecord | FeedbackFill, done: bool, outcome: str | None,
             write: bool = True) -> None:
        """A finished record on the driver: written (unless a worker wrote it), counted, shown."""
        ...
