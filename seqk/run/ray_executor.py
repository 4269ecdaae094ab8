"""`executor: ray`: one async worker (a Ray actor) per node runs whole chains.

A seq@k chain runs on one worker from its first pending attempt to its end (its history never
leaves that process); the chains of a task (`chains:`) and the samples of a pass@k task are
spread over the workers. Model calls and sandboxes run on the workers; each finished attempt
streams back to the driver as it finishes, for progress and the run's outcome. A local file is
written by the driver; a lake is written by the workers themselves (one connection per process,
a commit about every second), the driver only tracking completion. A budget is one ledger that
every worker reserves against (seqk/run/ray_budget.py), so it holds as in the local executor.
A worker that dies turns the attempt it had in flight into an error record (stage `worker`),
redone by the next `seqk run`; what it had streamed but perhaps not committed to the lake, the
driver writes. Ray restarts the worker for the tasks that follow. Ray is imported here only,
when a run asks for it."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import threading
import uuid
from collections.abc import AsyncIterator
from typing import Any

from seqk import store
from seqk.benchmark import Task
from seqk.errors import MissingExtra
from seqk.records import AttemptRecord, FeedbackFill
from seqk.run.budget import BudgetGate
from seqk.run.metering import error_record, now
from seqk.run.ray_budget import JOB, BudgetLedger, RemoteGate, RemotePool
from seqk.run.runner import TaskRunner
from seqk.run.writer import Writer

log = logging.getLogger("seqk")
FINISH_WAIT_S = 300.0
"""How long the driver waits for a worker's last lake writes at the end of a run."""
Message = tuple[Any, bool, Any, list[tuple[str, str]]]
"""What a worker streams: (record or None, task done, outcome or why the run stopped, committed)."""


class WorkerDied(Exception):
    """The Ray worker running an attempt died (its process was killed, its node was lost)."""

    kind = "WorkerDied"


Key = tuple[str, str]
"""A record's identity across processes: ('attempt' | 'fill', attempt_uid)."""


def key_of(record: AttemptRecord | FeedbackFill) -> Key:
    return ("attempt" if isinstance(record, AttemptRecord) else "fill", record.attempt_uid)


class WorkerWriter(Writer):
    """A worker's own writer into the lake (one connection per process, a commit about every
    second), remembering what it committed so the driver can tell what a dead worker lost."""

    def __init__(self, db: store.Database):
        # run_id None: the driver stamps the run once, at its end.
        super().__init__(db, interval_s=db.commit_interval_s, run_id=None)
        self._lock = threading.Lock()
        self._committed: list[Key] = []

    def _write(self, batch: list[AttemptRecord | FeedbackFill], final: bool) -> None:
        keys = [key_of(record) for record in batch]
        super()._write(batch, final)
        with self._lock:
            self._committed.extend(keys)

    def committed(self) -> list[Key]:
        """What was committed since the last call."""
        with self._lock:
            done, self._committed = self._committed, []
        return done


class ChainWorker:
    """The Ray actor: an Engine of its own that runs tasks and streams each record back. Its
    budget is the run's ledger (when the run has one); on a store that several processes may
    write (a lake) it writes its records itself."""

    def __init__(self, engine_cls: Any, spec: Any, prepared: Any, ledger: Any, db: store.Database):
        # The class comes pickled by reference, so this module never imports the scheduler.
        self.engine: TaskRunner = engine_cls(spec, prepared, db)
        if ledger is not None:
            gate = RemoteGate(ledger, spec)
            self.engine.budget, self.engine.pool = gate, RemotePool(self.engine.pool, gate)
        self.writer = WorkerWriter(db) if db.shared_writes else None

    def pid(self) -> int:
        """The worker's process id (the tests kill it)."""
        return os.getpid()

    async def run(self, task_index: int, what: list[Any], job: str) -> AsyncIterator[Message]:
        """Run one seq@k chain (`what` = [(chain, first attempt)]) or these pass@k samples (`what` =
        attempt indices), yielding (record, done, outcome, committed) for each record, then
        (None, False, why the run stopped or None, committed)."""
        JOB.set(job)
        queue: asyncio.Queue[Message] = asyncio.Queue()
        engine, task, writer = self.engine, self.engine.task(task_index), self.writer
        if writer is not None and writer._task is None:
            writer.start()

        def committed() -> list[Key]:
            return writer.committed() if writer is not None else []

        def emit(record: Any, done: bool, outcome: str | None) -> None:
            if writer is not None:
                writer.put(record)
            queue.put_nowait((record, done, outcome, committed()))

        work = (engine.run_chains(task, [tuple(slot) for slot in what], emit) if engine.spec.seq
                else engine.run_samples(task, what, emit))
        runner = asyncio.ensure_future(work)
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
            result = engine.result
            yield None, False, (result.stopped, result.stopped_by) if result.stopped else None, committed()
            return

    async def finish(self) -> list[Key]:
        """Write what is buffered; what was committed since the last message."""
        if self.writer is not None and self.writer._task is not None:
            await self.writer.close()
        return self.writer.committed() if self.writer is not None else []


class RayExecutor:
    """Runs tasks on Ray workers, one per alive node."""

    def __init__(self, address: str | None):
        self.address = address
        self.workers: list[Any] = []
        self._next: Any = None
        self._owns_ray = False
        self.ledger: Any = None
        self.workers_write = False
        """Whether the workers write their records themselves (a store that takes several writers)."""
        self.engine: TaskRunner | None = None
        self.confirmed: set[Key] = set()
        """Records a worker committed to the lake."""
        self.unconfirmed: dict[int, dict[Key, Any]] = {}
        """worker -> records it streamed and has not said it committed (the driver writes them if
        the worker dies)."""

    async def start(self, engine: TaskRunner) -> None:
        try:
            import ray
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        except ImportError:
            raise MissingExtra("executor: ray needs Ray: pip install 'seqk[ray]'") from None
        if not ray.is_initialized():
            await asyncio.to_thread(ray.init, address=self.address, include_dashboard=False,
                                    log_to_driver=False)
            self._owns_ray = True
        self.engine = engine
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        tag = uuid.uuid4().hex[:8]
        if isinstance(engine.budget, BudgetGate):
            # On the driver's node, sharing its fate; never restarted (see seqk.run.ray_budget).
            here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
            self.ledger = ray.remote(BudgetLedger).options(
                name=f"seqk-budget-{tag}", num_cpus=0, max_restarts=0, max_concurrency=1000,
                scheduling_strategy=here,
            ).remote(engine.spec, engine.budget.budgets, engine.budget.spent)
        db = engine.writer.db
        self.workers_write = db.shared_writes
        actor = ray.remote(ChainWorker)
        spec = engine.spec
        for index, node in enumerate(nodes):
            self.workers.append(actor.options(
                name=f"seqk-worker-{tag}-{index}", num_cpus=1, max_restarts=1, max_task_retries=0,
                max_concurrency=max(64, spec.concurrency * max(spec.k, spec.chains)),
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=True),
            ).remote(type(engine), spec, engine.prepared, self.ledger, db))
            self.unconfirmed[index] = {}
        self._next = itertools.cycle(range(len(self.workers)))

    def _confirm(self, keys: list[Key]) -> None:
        for key in keys:
            self.confirmed.add(key)
            for records in self.unconfirmed.values():
                records.pop(key, None)

    def _rescue(self, index: int) -> None:
        """Worker `index` died: the driver writes what it streamed and may not have committed (a
        record it did commit is then stored twice, under one attempt_uid, which views count once)."""
        assert self.engine is not None
        lost, self.unconfirmed[index] = self.unconfirmed[index], {}
        for record in lost.values():
            self.engine.writer.put(record)

    async def _stream(self, engine: TaskRunner, task: Task,
                      what: list[Any]) -> AsyncIterator[tuple[Any, bool, str | None]]:
        import ray

        index, job = next(self._next), uuid.uuid4().hex
        try:
            async for ref in self.workers[index].run.remote(task.task_index, what, job):
                record, done, outcome, committed = await ref
                self._confirm(committed)
                if record is None:
                    if outcome is not None and engine.result.stopped is None:
                        engine.result.stopped, engine.result.stopped_by = outcome
                    continue
                if self.workers_write and key_of(record) not in self.confirmed:
                    self.unconfirmed[index][key_of(record)] = record
                yield record, done, outcome
        except ray.exceptions.RayActorError:
            if self.ledger is not None:
                with contextlib.suppress(ray.exceptions.RayActorError):  # the ledger died too
                    await self.ledger.abandon.remote(job)
            if self.workers_write:
                self._rescue(index)
            raise

    def _emit(self, engine: TaskRunner, record: AttemptRecord | FeedbackFill, done: bool, outcome: str | None,
              lost: bool = False) -> None:
        # On a lake the worker wrote it; the driver writes the error record of a lost attempt.
        engine.emit(record, done, outcome, write=not self.workers_write or lost)

    async def run_task(self, engine: TaskRunner, task: Task, indices: list[int]) -> None:
        if engine.spec.seq:
            await self._run_chains(engine, task, engine.prepared.slots(task.task_index))
        else:
            await self._run_samples(engine, task, indices)

    async def _run_chains(self, engine: TaskRunner, task: Task, slots: list[tuple[int, int]]) -> None:
        """Each chain on a worker of its own choosing, whole; the task is done when its last chain
        ends (its outcome as the local executor's)."""
        import ray

        remaining, outcomes = len(slots), []

        def finish(record: Any, outcome: str, lost: bool = False) -> None:
            nonlocal remaining
            remaining -= 1
            outcomes.append(outcome)
            self._emit(engine, record, remaining == 0, overall(outcomes) if remaining == 0 else None, lost)

        async def chain(chain_index: int, first: int) -> None:
            expected, ended = first, False
            try:
                async for record, done, outcome in self._stream(engine, task, [(chain_index, first)]):
                    if done:
                        ended = True
                        finish(record, outcome or "error")
                    else:
                        self._emit(engine, record, False, None)
                    if isinstance(record, AttemptRecord):
                        expected = record.attempt_index + 1
            except ray.exceptions.RayActorError as exc:
                if not ended:
                    finish(self._lost(engine, task, expected, chain_index, exc), "error", lost=True)

        await asyncio.gather(*(chain(c, f) for c, f in slots))

    async def _run_samples(self, engine: TaskRunner, task: Task, indices: list[int]) -> None:
        import ray

        outcomes: list[str] = []
        remaining = len(indices)

        async def one(attempt_index: int) -> None:
            nonlocal remaining
            records: list[tuple[Any, bool]] = []
            try:
                async for record, _done, _outcome in self._stream(engine, task, [attempt_index]):
                    records.append((record, False))
            except ray.exceptions.RayActorError as exc:
                if not records:
                    records = [(self._lost(engine, task, attempt_index, 1, exc), True)]
            for record, lost in records:
                remaining -= 1
                outcomes.append("error" if record.status == "error" else "passed" if record.success else "failed")
                self._emit(engine, record, remaining == 0, overall(outcomes) if remaining == 0 else None, lost)

        await asyncio.gather(*(one(i) for i in indices))

    @staticmethod
    def _lost(engine: TaskRunner, task: Task, attempt_index: int, chain_index: int,
              exc: BaseException) -> AttemptRecord | FeedbackFill:
        """The error record of the attempt a dead worker had in flight (redone by the next run)."""
        died = WorkerDied(f"the Ray worker running this attempt died: {str(exc).splitlines()[0] if str(exc) else exc}")
        started = now()
        return AttemptRecord(
            attempt_uid=str(uuid.uuid4()), run_id=engine.spec.run_id, generation=engine.prepared.generation,
            task_index=task.task_index, attempt_index=attempt_index, k=engine.spec.k, status="error",
            success=None, score=None, prompt=None, output=None, raw_eval_output=None, judge_details=None,
            feedback=None, error=error_record("worker", died), started_at=started, finished_at=now(), calls=[],
            chain_index=chain_index)

    async def close(self) -> None:
        try:
            import ray
        except ImportError:
            return
        if self.workers_write:
            await self._finish_writes()
        for worker in self.workers:
            try:
                ray.kill(worker)
            except Exception:  # noqa: BLE001 - already gone
                log.debug("ray worker already gone", exc_info=True)
        self.workers = []
        if self.ledger is not None:
            with contextlib.suppress(Exception):  # already gone
                ray.kill(self.ledger)
            self.ledger = None
        if self._owns_ray:
            await asyncio.to_thread(ray.shutdown)

    async def _finish_writes(self) -> None:
        """Each worker writes what it holds; what a worker could not write, the driver does. The
        workers' commits count as the run's written attempts (the driver stamps the run)."""
        for index, worker in enumerate(self.workers):
            try:
                self._confirm(await asyncio.wait_for(worker.finish.remote(), FINISH_WAIT_S))
            except Exception:  # noqa: BLE001 - dead, or its writes failed: the driver writes them
                log.warning("Ray worker %d could not finish its writes; the driver writes them", index,
                            exc_info=True)
            self._rescue(index)
        assert self.engine is not None
        self.engine.writer.written += len({key for key in self.confirmed if key[0] == "attempt"})


def overall(outcomes: list[str]) -> str:
    """A task's outcome from its chains' or samples' (as the local executor's)."""
    return "passed" if "passed" in outcomes else "error" if "error" in outcomes else "failed"
