"""The executor seam: where the scheduler's tasks run.

`local` (the default) runs a task's attempts in this process's event loop. `ray`
(seqk/run/ray_executor.py, imported only when chosen) runs them on one worker per node of a
Ray cluster. Either way the attempt logic is the engine's own, reached through the public
methods of `TaskRunner` (seqk/run/runner.py; seqk.run.scheduler.Engine implements it); an executor only decides
where it runs and brings the records back to the driver, which writes them, shows progress and
keeps the budget.
"""

from __future__ import annotations

from typing import Protocol

from seqk.benchmark import Task
from seqk.config.spec import RunSpec
from seqk.run.runner import TaskRunner


class Executor(Protocol):
    """Runs the pending attempts of one task of a run."""

    async def start(self, runner: TaskRunner) -> None:
        """Before the first task (start workers)."""

    async def run_task(self, runner: TaskRunner, task: Task, indices: list[int]) -> None:
        """Run one task's pending attempts (seq@k: its unfinished chains; pass@k: these samples),
        handing each record to runner.emit."""

    async def close(self) -> None:
        """After the last task, or on Ctrl-C (stop workers)."""


class LocalExecutor:
    """Attempts run in this process (asyncio)."""

    async def start(self, runner: TaskRunner) -> None:
        return None

    async def run_task(self, runner: TaskRunner, task: Task, indices: list[int]) -> None:
        if runner.spec.seq:
            await runner.run_chains(task, runner.prepared.slots(task.task_index))
        else:
            await runner.run_samples(task, indices)

    async def close(self) -> None:
        return None


def executor_for(spec: RunSpec) -> Executor:
    """The executor a run's spec names ('local' unless `executor: ray`)."""
    if spec.executor == "ray":
        from seqk.run.ray_executor import RayExecutor

        return RayExecutor(spec.ray_address)
    return LocalExecutor()
