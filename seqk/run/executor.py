"""The executor seam: where the scheduler's tasks run.

`local` (the default) runs a task's attempts in this process's event loop. `ray`
(seqk/run/ray_executor.py, imported only when chosen) runs them on one worker per node of a
Ray cluster. Either way the attempt logic is the scheduler's own (Engine._run_seq_task,
Engine._run_pass_task); an executor only decides where it runs and brings the records back
to the driver, which writes them, shows progress and keeps the budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from seqk.records import AttemptRecord, FeedbackFill

Emit = Callable[[AttemptRecord | FeedbackFill, bool, str | None], None]
"""Where a finished record goes: (record, task_done, task_outcome)."""


class Executor(Protocol):
    """Runs the pending attempts of one task of a run."""

    async def start(self, engine: Any) -> None:
        """Before the first task (start workers)."""

    async def run_task(self, engine: Any, task: Any, indices: list[int]) -> None:
        """Run one task's pending attempts (seq@k: its unfinished chains; pass@k: these samples),
        handing each record to engine._emit."""

    async def close(self) -> None:
        """After the last task, or on Ctrl-C (stop workers)."""


class LocalExecutor:
    """Attempts run in this process (asyncio)."""

    async def start(self, engine: Any) -> None:
        return None

    async def run_task(self, engine: Any, task: Any, indices: list[int]) -> None:
        if engine.spec.seq:
            await engine._run_seq_task(task, engine.prepared.slots(task.task_index))
        else:
            await engine._run_pass_task(task, indices)

    async def close(self) -> None:
        return None


def executor_for(spec: Any) -> Executor:
    """The executor a run's spec names ('local' unless `executor: ray`)."""
    if getattr(spec, "executor", "local") == "ray":
        from seqk.run.ray_executor import RayExecutor

        return RayExecutor(spec.ray_address)
    return LocalExecutor()
