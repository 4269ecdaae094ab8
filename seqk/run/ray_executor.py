"""`executor: ray`: one async worker (a Ray actor) per node runs whole tasks.

A seq@k chain runs on one worker from its first pending attempt to its end (its history never
leaves that process); the samples of a pass@k task are spread over the workers. Model calls and
sandboxes run on the workers; each finished attempt streams back to the driver as it finishes,
and the driver writes it (to a file or a lake), shows progress and keeps the budget, exactly as
the local executor does. A worker that dies turns the attempt it had in flight into an error
record (stage `worker`), redone by the next `seqk run`; Ray restarts the worker for the tasks
that follow. Ray is imported here only, when a run asks for it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

from seqk.errors import MissingExtra
from seqk.records import AttemptRecord, FeedbackFill
from seqk.run.budget import Ticket
from seqk.run.metering import error_record, now

log = logging.getLogger("seqk")


class WorkerDied(Exception):
    """The Ray worker running an attempt died (its process was killed, its node was lost)."""

    kind = "WorkerDied"


class ChainWorker:
    """The Ray actor: an Engine of its own (no writer, no budget) that runs tasks and streams
    each record back."""

    def __init__(self, engine_cls: Any, spec: Any, prepared: Any):
        # The class comes pickled by reference, so this module never imports the scheduler.
        self.engine = engine_cls(spec, prepared, None)

    def pid(self) -> int:
        """The worker's process id (the tests kill it)."""
        return os.getpid()

    async def run(self, task_index: int, indices: list[int]) -> AsyncIterator[tuple[Any, bool, str | None]]:
        """Run one task (a seq@k chain, or these pass@k samples), yielding (record, done, outcome)."""
        queue: asyncio.Queue[tuple[Any, bool, str | None]] = asyncio.Queue()
        engine, task = self.engine, self.engine._tasks[task_index]

        def emit(record: Any, done: bool, outcome: str | None) -> None:
            queue.put_nowait((record, done, outcome))

        job = (engine._run_seq_task(task, [(1, indices[0])], emit) if engine.spec.seq
               else engine._run_pass_task(task, indices, emit))
        runner = asyncio.ensure_future(job)
        while True:
            getter = asyncio.ensure_future(queue.get())
            finished, _ = await asyncio.wait({getter, runner}, return_when=asyncio.FIRST_COMPLETED)
            if getter in finished:
                yield getter.result()
                continue
            getter.cancel()
            while not queue.empty():
                yield queue.get_nowait()
            runner.result()  # a bug in the task surfaces on the driver as in the local executor
            return


class RayExecutor:
    """Runs tasks on Ray workers, one per alive node."""

    def __init__(self, address: str | None):
        self.address = address
        self.workers: list[Any] = []
        self._next: Any = None
        self._owns_ray = False

    async def start(self, engine: Any) -> None:
        try:
            import ray
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        except ImportError:
            raise MissingExtra("executor: ray needs Ray: pip install 'seqk[ray]'") from None
        if not ray.is_initialized():
            await asyncio.to_thread(ray.init, address=self.address, include_dashboard=False,
                                    log_to_driver=False)
            self._owns_ray = True
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        actor = ray.remote(ChainWorker)
        tag = uuid.uuid4().hex[:8]
        for index, node in enumerate(nodes):
            self.workers.append(actor.options(
                name=f"seqk-worker-{tag}-{index}", num_cpus=1, max_restarts=1, max_task_retries=0,
                max_concurrency=max(64, engine.spec.concurrency * engine.spec.k),
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=True),
            ).remote(type(engine), engine.spec, engine.prepared))
        self._next = itertools.cycle(self.workers)

    async def _stream(self, worker: Any, task_index: int,
                      indices: list[int]) -> AsyncIterator[tuple[Any, bool, str | None]]:
        async for ref in worker.run.remote(task_index, indices):
            yield await ref

    async def run_task(self, engine: Any, task: Any, indices: list[int]) -> None:
        if engine.spec.seq:
            await self._run_chain(engine, task, indices[0])
        else:
            await self._run_samples(engine, task, indices)

    async def _run_chain(self, engine: Any, task: Any, first: int) -> None:
        import ray

        # No budget reaches here for seq@k (refused when the variant loads): the ticket is empty.
        reservation = await engine._admit(task, first, engine.prepared.history.get((task.task_index, 1), []))
        if reservation is None:
            return
        expected = first
        try:
            async for record, done, outcome in self._stream(next(self._next), task.task_index, [first]):
                engine._settle(reservation, record)
                reservation = Ticket({})  # the chain's first attempt carried the reservation
                engine._emit(record, done, outcome)
                if isinstance(record, AttemptRecord):
                    expected = record.attempt_index + 1
        except ray.exceptions.RayActorError as exc:
            engine._emit(self._lost(engine, task, expected, exc), True, "error")

    async def _run_samples(self, engine: Any, task: Any, indices: list[int]) -> None:
        import ray

        outcomes: list[str] = []
        remaining = len(indices)

        async def one(attempt_index: int) -> None:
            nonlocal remaining
            reservation = await engine._admit(task, attempt_index)
            if reservation is None:
                return
            records: list[Any] = []
            try:
                async for record, _done, _outcome in self._stream(next(self._next), task.task_index,
                                                                  [attempt_index]):
                    records.append(record)
            except ray.exceptions.RayActorError as exc:
                records = [self._lost(engine, task, attempt_index, exc)]
            for record in records:
                engine._settle(reservation, record)
                remaining -= 1
                outcomes.append("error" if record.status == "error" else "passed" if record.success else "failed")
                outcome = None
                if remaining == 0:
                    outcome = ("passed" if "passed" in outcomes
                               else "error" if "error" in outcomes else "failed")
                engine._emit(record, remaining == 0, outcome)

        await asyncio.gather(*(one(i) for i in indices))

    @staticmethod
    def _lost(engine: Any, task: Any, attempt_index: int, exc: BaseException) -> AttemptRecord | FeedbackFill:
        """The error record of the attempt a dead worker had in flight (redone by the next run)."""
        died = WorkerDied(f"the Ray worker running this attempt died: {str(exc).splitlines()[0] if str(exc) else exc}")
        started = now()
        return AttemptRecord(
            attempt_uid=str(uuid.uuid4()), run_id=engine.spec.run_id, generation=engine.prepared.generation,
            task_index=task.task_index, attempt_index=attempt_index, k=engine.spec.k, status="error",
            success=None, score=None, prompt=None, output=None, raw_eval_output=None, judge_details=None,
            feedback=None, error=error_record("worker", died), started_at=started, finished_at=now(), calls=[])

    async def close(self) -> None:
        try:
            import ray
        except ImportError:
            return
        for worker in self.workers:
            try:
                ray.kill(worker)
            except Exception:  # noqa: BLE001 - already gone
                log.debug("ray worker already gone", exc_info=True)
        self.workers = []
        if self._owns_ray:
            await asyncio.to_thread(ray.shutdown)
