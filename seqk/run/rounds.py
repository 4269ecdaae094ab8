"""Batch mode: the actor's and critic's calls go through their provider's batch API, in rounds.

The engine runs unchanged (seqk.run.engine.Engine), with every task in flight at once; a role
with `batch: true` answers from a collector instead of the pool. When every unfinished task is
waiting on the collector, the waiting calls go out as one batch per model (split at the
provider's limits), and the tasks go on when it ends. So pass@k is one batch of actor calls;
seq@k is rounds: attempt t of every unfinished chain, then their judges (synchronous), then the
critics of the failed ones in one batch, then attempt t + 1. Judges never batch: a deterministic
verifier needs no model, and an LLM judge's verdict decides whether the chain goes on, so it
runs synchronously (a rubric's several judge calls per attempt included).

Never pay twice: a batch and its items (custom_id -> slot) are recorded in DuckDB with state
'submitting' before the provider sees them, with an idempotency key the batch carries, and again
once the provider has answered. A run started again after a kill matches each call it is about
to make (its slot and the sha256 of its prompt) against the recorded items: an item of a batch
in flight waits for that batch, an answered one is used as it is, and only an item that failed,
expired or was never sent goes into a new batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any

from seqk import store
from seqk.benchmark import HistoryItem, Task
from seqk.config.runspec import RunSpec
from seqk.models import Pool
from seqk.models.base import Completion
from seqk.models.limiter import LimitState
from seqk.models.role import RoleSpec
from seqk.records import AttemptRecord, FeedbackFill, Prompt
from seqk.run import engine
from seqk.run.batches import SLOT, BatchView, Collector, Deferred, custom_id, prompt_sha256
from seqk.run.budget import Ticket
from seqk.run.observer import RunObserver
from seqk.run.prepare import MissingFeedback, Prepared
from seqk.run.runner import Emit

__all__ = ["BatchRouter", "BatchView", "RoundsEngine", "RoundsResult", "custom_id", "prompt_sha256", "run"]


class BatchRouter:
    """The pool as the engine sees it in batch mode: batched roles go to the collector."""

    def __init__(self, pool: Pool, collector: Collector):
        self.pool = pool
        self.collector = collector

    async def complete(self, spec: RoleSpec, prompt: Prompt, cache_prefix: str | None = None) -> Completion:
        """A batched role's call waits for its batch; any other goes to the pool now."""
        if spec.batch:
            return await self.collector.request(spec, prompt, cache_prefix)
        return await self.pool.complete(spec, prompt, cache_prefix)

    async def close(self) -> None:
        """Close the pool underneath (its breakers and sessions)."""
        await self.pool.close()

    def limit_states(self) -> list[LimitState]:
        """The pool's limits (batched calls have none)."""
        return self.pool.limit_states()

    def sustained(self) -> list[tuple[str, str | None, int, bool, Any]]:
        """What the pool's endpoints sustained (seqk.run.limits; batched calls are not counted)."""
        return self.pool.sustained()


_TASK: contextvars.ContextVar[int] = contextvars.ContextVar("seqk_batch_task")


@dataclass(repr=False)  # RunResult's repr: what a notebook shows
class RoundsResult(engine.RunResult):
    """A batch-mode run: what the scheduler reports, and the batches."""

    rounds: int = 0
    """Rounds of batches sent (and collected) by this invocation."""
    batches: list[BatchView] = field(default_factory=list)
    """The batches this invocation sent or picked up again."""
    deferred: int = 0
    """--no-wait: batches left in flight at the provider; a later `seqk run` collects them."""


class RoundsEngine(engine.Engine):
    """The scheduler's engine with every task in flight and batched roles answered in rounds."""

    def __init__(self, spec: RunSpec, prepared: Prepared, db: store.Database,
                 observer: RunObserver | None = None, budget: Any = None, *, no_wait: bool = False,
                 poll_s: float = 30.0):
        # Every task at once: a round is as wide as the run, whatever `concurrency` says.
        wide = dataclasses.replace(spec, concurrency=max(len(prepared.pending), 1))
        super().__init__(wide, prepared, db, observer, budget)
        self.result = RoundsResult(prepared)
        self.collector = Collector(spec, prepared, db, poll_s, no_wait, self.observer.batch)
        self.pool = BatchRouter(self.pool, self.collector)

    async def attempt(self, task: Task, attempt_index: int, history: list[HistoryItem],
                      chain_index: int = 1) -> AttemptRecord:
        """The scheduler's attempt, with its slot known to the collector (batch mode runs one
        chain: the variant refuses `chains` above 1 with `batch`)."""
        SLOT.set((task.task_index, attempt_index, {}))
        try:
            return await super().attempt(task, attempt_index, history, chain_index)
        finally:
            if not self.spec.seq:
                self.collector.slot_done(task.task_index)

    async def late_feedback(self, task: Task, missing: MissingFeedback, chain_index: int = 1) -> FeedbackFill:
        """The critic asked again, in the slot of the attempt it explains."""
        SLOT.set((task.task_index, missing.attempt_index, {}))
        return await super().late_feedback(task, missing, chain_index)

    async def _admit(self, task: Task, attempt_index: int | None = None,
                     history: list[HistoryItem] | None = None, chain_index: int = 1) -> Ticket | None:
        task_index = task.task_index
        # While it waits for room in the budget, an attempt counts as waiting for its batch:
        # the attempts whose spend would free that room may be in the very batch to be sent.
        self.collector.parked[task_index] += 1
        self.collector._changed.set()
        try:
            reservation = await super()._admit(task, attempt_index, history, chain_index)
        finally:
            self.collector.parked[task_index] -= 1
        if reservation is None and not self.spec.seq:
            self.collector.slot_done(task_index)
        return reservation

    async def run_chains(self, task: Task, slots: list[tuple[int, int]], emit: Emit | None = None) -> None:
        _TASK.set(task.task_index)
        try:
            await super().run_chains(task, slots, emit)
        finally:
            self.collector.task_done(task.task_index)

    async def run_samples(self, task: Task, indices: list[int], emit: Emit | None = None) -> None:
        _TASK.set(task.task_index)
        try:
            await super().run_samples(task, indices, emit)
        finally:
            self.collector.task_done(task.task_index)

    async def run(self) -> engine.RunResult:
        """Run with the collector's loop beside the tasks; --no-wait ends it once sent."""
        runner = asyncio.current_task()
        assert runner is not None
        loop = asyncio.create_task(self.collector.loop(runner))
        try:
            result = await super().run()
        finally:
            loop.cancel()
            with contextlib.suppress(asyncio.CancelledError, Deferred):
                await loop
        assert isinstance(result, RoundsResult)
        result.rounds = self.collector.n_rounds
        result.batches = list(self.collector.views)
        result.deferred = self.collector.deferred
        if result.deferred:
            result.interrupted = False  # not a Ctrl-C: the batches wait at the provider
        return result


def run(spec: RunSpec, db: store.DbLike = None, observer: RunObserver | None = None, *,
        no_wait: bool = False) -> engine.RunResult:
    """seqk.run.engine.run in batch mode (the variant's `batch_poll_s` between polls); the
    observer also hears of each batch (`batch`)."""
    make = functools.partial(RoundsEngine, no_wait=no_wait, poll_s=spec.batch_poll_s)
    return engine.run(spec, db, observer, make_engine=make)
