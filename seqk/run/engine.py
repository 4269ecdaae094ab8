"""The asyncio scheduler that runs one variant.

Tasks run concurrently (up to `concurrency`); the pass@k samples of a task run
concurrently, and so do the chains of a seq@k task (`chains:`); within a chain, seq@k
attempts run in order and stop at the first success. Each
finished attempt, with every call it made, goes to a writer that appends whole
attempts in short batched transactions, so a crash or Ctrl-C loses only the
attempts in flight, and the database is free for readers between batches.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from seqk import store
from seqk.benchmark import AgentContext, AgenticBenchmark, AttemptContext, HistoryItem, Task, Verdict
from seqk.config.runspec import RunSpec
from seqk.errors import AgentRunError, CriticError, JudgeError, ProviderError
from seqk.models import ModelPool, Pool, close_sessions, import_clients
from seqk.records import AttemptRecord, CallRecord, FeedbackFill, stored_prompt
from seqk.run import limits, preflight, signals
from seqk.run.budget import BudgetedPool, Gate, Ticket, gate_for
from seqk.run.executor import executor_for
from seqk.run.gc_tuning import fewer_collections
from seqk.run.metering import MeteredClient, agent_call, error_record, now, seeded
from seqk.run.observer import AttemptEvent, RunObserver, RunResult, guarded
from seqk.run.prepare import MissingFeedback, Prepared, prepare
from seqk.run.runner import Emit
from seqk.run.writer import Writer

ATTEMPT_ERRORS = (ProviderError, JudgeError, CriticError, AgentRunError)
"""The failures an attempt records as its error (SandboxError is a JudgeError); anything else
is a bug and stops the run."""


async def _cancel(jobs: list[asyncio.Task[None]]) -> None:
    for job in jobs:
        job.cancel()
    await asyncio.gather(*jobs, return_exceptions=True)


class Engine:
    """Runs the pending attempts of one prepared run."""

    def __init__(self, spec: RunSpec, prepared: Prepared, db: store.Database,
                 observer: RunObserver | None = None, budget: Gate | None = None):
        self.spec = spec
        self.prepared = prepared
        # a task has up to k pass@k samples, or one call per seq@k chain, in flight at once
        self.pool: Pool = ModelPool(spec.retry, spec.quota,
                                    default_concurrency=max(spec.concurrency * max(spec.k, spec.chains), 16),
                                    starts=limits.starts((spec.actor, spec.judge, spec.critic),
                                                         prepared.endpoint_limits))
        self.writer = Writer(db, interval_s=db.commit_interval_s, run_id=spec.run_id)
        self.observer = guarded(observer)
        self.budget: Gate | None = budget
        if budget is not None:
            self.pool = BudgetedPool(self.pool, budget)
        self.result = RunResult(prepared)
        self.executor = executor_for(spec)
        self.mode = spec.mode
        self._tasks = {t.task_index: t for t in spec.tasks}

    def task(self, task_index: int) -> Task:
        """The run's task of this index."""
        return self._tasks[task_index]

    async def attempt(self, task: Task, attempt_index: int,
                      history: list[HistoryItem], chain_index: int = 1) -> AttemptRecord:
        """Actor, judge and (for a failed seq@k attempt) critic, recorded whole. A slot whose
        judge failed in an earlier run is judged again on the kept output, without the actor."""
        spec, bench = self.spec, self.spec.benchmark
        calls: list[CallRecord] = []
        slot = (task.task_index, attempt_index, spec.seq, chain_index)
        actor = MeteredClient(self.pool, seeded(spec.actor, *slot), calls)
        judge = MeteredClient(self.pool, spec.judge, calls)
        critic = MeteredClient(self.pool, seeded(spec.critic, *slot), calls)
        started = now()
        kept = self.prepared.kept_outputs.get((task.task_index, chain_index, attempt_index))
        if not self.mode.shows_history:  # feedback_mode none: nothing of the earlier attempts
            history = []
        rendered = spec.protocol.render(task.prompt, attempt_index, spec.k, seq=spec.seq, history=history)
        prompt = kept.prompt if kept is not None else stored_prompt(rendered.prompt)
        output: str | None = None
        verdict: Verdict | None = None
        feedback: str | None = None
        stage = "actor"
        error: dict[str, Any] | None = None
        try:
            ctx = AttemptContext(options=spec.options, judge=judge, critic=critic, mode=self.mode,
                                 attempt_index=attempt_index, k=spec.k, seq=spec.seq,
                                 history=history, run_id=spec.run_id)
            if isinstance(bench, AgenticBenchmark):
                stage = "run_attempt"
                retry_context = spec.protocol.context(attempt_index, spec.k, history) if spec.seq else ""
                result = await bench.run_attempt(task, prompt, AgentContext(
                    **vars(ctx), actor=actor, temperature=spec.actor.temperature, retry_context=retry_context))
                prompt, output, verdict = result.prompt, result.output, result.verdict
                if result.usage is not None:
                    calls.append(agent_call(result.usage, prompt, output, started, spec.actor.price))
            else:
                output = kept.output if kept is not None else await actor.complete(
                    rendered.prompt, cache_prefix=rendered.cache_prefix)
                stage = "judge"
                verdict = await bench.verify(task, output, ctx)
            if spec.seq and not verdict.success and self.mode.shows_history:
                stage = "critic"
                feedback = await bench.feedback(task, output, verdict, ctx)
                if self.mode.llm_critic and not (feedback or "").strip():
                    raise CriticError("the critic returned empty feedback")
        except asyncio.CancelledError:
            raise
        except ATTEMPT_ERRORS as exc:
            error = error_record(stage, exc)
            if getattr(exc, "fatal", False) and self.result.stopped is None:
                self.result.stopped, self.result.stopped_by = str(exc), "error"
        # Once the judge has ruled, the attempt counts: a critic failure leaves it valid with
        # no feedback (written later), so a flaky critic never re-rolls a judged answer.
        judged = verdict is not None and (error is None or stage == "critic")
        return AttemptRecord(
            attempt_uid=str(uuid.uuid4()), run_id=spec.run_id,
            generation=self.prepared.generation, task_index=task.task_index,
            attempt_index=attempt_index, k=kept.k if kept is not None else spec.k,
            status="ok" if judged else "error",
            success=verdict.success if verdict else None,
            score=verdict.score if verdict else None, prompt=prompt, output=output,
            raw_eval_output=verdict.raw_eval_output if verdict else None,
            judge_details=verdict.details if verdict else None, feedback=feedback, error=error,
            started_at=started, finished_at=now(), calls=calls, chain_index=chain_index)

    async def late_feedback(self, task: Task, missing: MissingFeedback,
                            chain_index: int = 1) -> FeedbackFill:
        """Ask the critic again for a valid failed attempt whose critic had failed."""
        calls: list[CallRecord] = []
        critic = MeteredClient(self.pool, seeded(self.spec.critic, task.task_index, missing.attempt_index,
                                                 self.spec.seq, chain_index), calls)
        feedback, error = None, None
        ctx = AttemptContext(options=self.spec.options, judge=MeteredClient(self.pool, self.spec.judge, calls),
                             critic=critic, mode=self.mode, attempt_index=missing.attempt_index,
                             k=self.spec.k, seq=self.spec.seq, run_id=self.spec.run_id)
        try:
            feedback = await self.spec.benchmark.feedback(task, missing.output, missing.verdict, ctx)
            if self.mode.llm_critic and not (feedback or "").strip():
                raise CriticError("the critic returned empty feedback")
        except asyncio.CancelledError:
            raise
        except ATTEMPT_ERRORS as exc:
            feedback, error = None, error_record("critic", exc)
        return FeedbackFill(missing.attempt_uid, self.spec.run_id, self.prepared.generation,
                            task.task_index, missing.attempt_index, feedback, error, calls,
                            chain_index)

    async def _admit(self, task: Task, attempt_index: int | None = None,
                     history: list[HistoryItem] | None = None, chain_index: int = 1) -> Ticket | None:
        """May one more attempt at `task` (chain `chain_index`) start? Its worst-case cost is
        reserved until `_settle`. `attempt_index` None: only the critic is asked again (late
        feedback)."""
        if self.result.stopped:
            return None
        if self.budget is None:
            return Ticket({})
        spec = self.spec
        if attempt_index is None:
            missing = self.prepared.missing_feedback[(task.task_index, chain_index)]
            need = await self.budget.need(task, None, missing.output, False, True)
        else:
            kept = self.prepared.kept_outputs.get((task.task_index, chain_index, attempt_index))
            prompt = None if kept is not None else spec.protocol.render(
                task.prompt, attempt_index, spec.k, seq=spec.seq, history=history or []).prompt
            need = await self.budget.need(task, prompt, kept.output if kept is not None else None,
                                          True, spec.seq)
        ticket = await self.budget.admit(need)
        if ticket is not None and self.result.stopped:  # a fatal error came while it waited
            self.budget.settle(ticket, [])
            return None
        if ticket is None and self.result.stopped is None:
            self.result.stopped, self.result.stopped_by = self.budget.describe(), self.budget.stopped_by
        return ticket

    def _settle(self, ticket: Ticket, record: AttemptRecord | FeedbackFill) -> None:
        if self.budget is not None:
            self.budget.settle(ticket, record.calls)
            if self.budget.refused is not None and self.result.stopped is None:
                # A call was refused mid-attempt: nothing more starts.
                self.result.stopped, self.result.stopped_by = self.budget.describe(), self.budget.stopped_by

    def emit(self, record: AttemptRecord | FeedbackFill, done: bool, outcome: str | None,
              write: bool = True) -> None:
        if write:  # False: a Ray worker wrote it to the lake
            self.writer.put(record)
        if isinstance(record, AttemptRecord):
            self.result.attempts_run += 1
            self.result.attempts_errored += record.status == "error"
        if record.error:
            kind = f"{record.error['stage']}:{record.error['type']}"
            self.result.error_kinds[kind] = self.result.error_kinds.get(kind, 0) + 1
            self.result.error_examples.setdefault(kind, record.error["message"])
        if done:
            if outcome == "passed":
                self.result.tasks_passed += 1
            elif outcome == "failed":
                self.result.tasks_failed += 1
            else:
                self.result.tasks_error += 1
        if self.observer.observer is not None:  # no event (nor limit states) built for nobody
            self.observer.attempt(AttemptEvent(record, done, outcome, self.pool.limit_states()))

    async def run_chains(self, task: Task, slots: list[tuple[int, int]], emit: Emit | None = None) -> None:
        """The task's unfinished chains, concurrently; the task is done when the last one ends
        (passed if any chain passed, else error if any chain ended on one, else failed). Each
        record goes to `emit` (default: the writer and progress of this process; a Ray worker
        streams them to the driver instead)."""
        emit = emit or self.emit
        remaining = len(slots)
        outcomes: list[str] = []

        def finish(record: AttemptRecord | FeedbackFill, outcome: str) -> None:
            nonlocal remaining
            remaining -= 1
            outcomes.append(outcome)
            done = remaining == 0
            emit(record, done, None if not done else (
                "passed" if "passed" in outcomes else "error" if "error" in outcomes else "failed"))

        if len(slots) == 1:  # one chain (the usual case): no gather, no task of its own
            chain, first = slots[0]
            await self._run_seq_chain(task, chain, first, finish, emit)
            return
        await asyncio.gather(*(self._run_seq_chain(task, chain, first, finish, emit)
                               for chain, first in slots))

    async def _run_seq_chain(self, task: Task, chain_index: int, first: int,
                             finish: Callable[[AttemptRecord | FeedbackFill, str], None], emit: Emit) -> None:
        slot = (task.task_index, chain_index)
        history = list(self.prepared.history.get(slot, []))
        missing = self.prepared.missing_feedback.get(slot)
        if missing is not None and history:
            reservation = await self._admit(task, chain_index=chain_index)
            if reservation is None:
                return
            fill = await self.late_feedback(task, missing, chain_index)
            self._settle(reservation, fill)
            if fill.feedback is None:
                finish(fill, "error")
                return
            emit(fill, False, None)
            history[-1] = HistoryItem(missing.attempt_index, missing.output, fill.feedback)
        for attempt_index in range(first, self.spec.k + 1):
            reservation = await self._admit(task, attempt_index, history, chain_index)
            if reservation is None:
                return
            record = await self.attempt(task, attempt_index, history, chain_index)
            self._settle(reservation, record)
            if record.status == "error":
                finish(record, "error")
                return
            if record.success or attempt_index == self.spec.k:
                finish(record, "passed" if record.success else "failed")
                return
            if record.error:  # judged wrong, but the critic failed: go on next run
                finish(record, "error")
                return
            emit(record, False, None)
            history.append(HistoryItem(attempt_index, record.output or "", record.feedback))

    async def run_samples(self, task: Task, indices: list[int], emit: Emit | None = None) -> None:
        emit = emit or self.emit
        remaining = len(indices)
        outcomes: list[str] = []

        async def one(attempt_index: int) -> None:
            nonlocal remaining
            reservation = await self._admit(task, attempt_index)
            if reservation is None:
                return
            record = await self.attempt(task, attempt_index, [])
            self._settle(reservation, record)
            remaining -= 1
            outcomes.append("error" if record.status == "error"
                            else "passed" if record.success else "failed")
            outcome = None
            if remaining == 0:
                outcome = ("passed" if "passed" in outcomes
                           else "error" if "error" in outcomes else "failed")
            emit(record, remaining == 0, outcome)

        await asyncio.gather(*(one(i) for i in indices))

    async def _close(self) -> None:
        await self.executor.close()
        # What each endpoint sustained goes in with the final write (seqk.run.limits).
        rows = limits.to_record(self.pool, self.prepared.endpoint_limits, self.spec.run_id)
        self.writer.on_final = lambda con: limits.record(con, rows)
        await self.writer.close()
        await self.pool.close()
        await close_sessions()

    async def run(self) -> RunResult:
        """Run every pending attempt; on cancellation keep what finished."""
        with fewer_collections():  # seqk.run.gc_tuning
            return await self._run()

    async def _run(self) -> RunResult:
        start = time.perf_counter()
        self.writer.start()
        limit = asyncio.Semaphore(self.spec.concurrency)

        async def task_job(task_index: int, indices: list[int]) -> None:
            async with limit:
                if self.result.stopped:
                    return
                task = self.task(task_index)
                try:
                    await self.executor.run_task(self, task, indices)
                except Exception as exc:
                    # A bug: no other attempt starts while the run unwinds to show it.
                    self.result.stopped, self.result.stopped_by = f"{type(exc).__name__}: {exc}", "error"
                    raise

        jobs: list[asyncio.Task[None]] = []
        try:
            await self.executor.start(self)
            jobs = [asyncio.create_task(task_job(t, idx)) for t, idx in self.prepared.pending.items()]
            await asyncio.gather(*jobs)
        except asyncio.CancelledError:
            self.result.interrupted = True
            await _cancel(jobs)
        except BaseException:
            # A bug (a benchmark's KeyError, say) stops the run loudly; what finished is still written.
            await _cancel(jobs)
            raise
        finally:
            # A signal landing on the final write (the last attempt just finished) must not cut
            # it short: it completes, and the run counts as interrupted.
            if await signals.uninterrupted(self._close()):
                self.result.interrupted = True
            self.result.attempts_written = self.writer.written
            self.result.model_limits = self.pool.limit_states()
            self.result.elapsed_s = time.perf_counter() - start
        return self.result


PREPARE_SWITCH_S = 0.0005
"""The interpreter's thread switch interval while prepare and the client import overlap."""


def run(spec: RunSpec, db: store.DbLike = None, observer: RunObserver | None = None,
        make_engine: Callable[..., Engine] | None = None) -> RunResult:
    """Run one variant to completion (or until Ctrl-C / SIGTERM), resuming what is stored.

    `observer` hears each event (seqk.run.observer); the first signal stops the run
    (seqk.run.signals). `make_engine` builds the engine in place of Engine, with Engine's
    arguments (batch mode: seqk.run.rounds; re-judging: seqk.run.rejudge)."""
    preflight.before_run(spec)
    watch = guarded(observer)
    db = store.open(db)
    with db.lease(spec.run_id, [t.task_index for t in spec.tasks]):
        # Batch rounds and re-judging (make_engine) and Ray workers reach providers through
        # their own clients: nothing to import ahead for them.
        local = make_engine is None and spec.executor == "local"
        prepared = _prepare_importing_clients(spec, db) if local else prepare(spec, db)

        async def job() -> RunResult:
            engine = (make_engine or Engine)(spec, prepared, db, watch, budget=gate_for(spec, db))
            # After the engine is made: an engine may narrow the slots it runs (rejudge's do).
            watch.prepared(engine.prepared)
            return await engine.run()

        result = signals.run_until_signalled(job, watch.interrupted)
    watch.finished(result)
    return result


def _prepare_importing_clients(spec: RunSpec, db: store.Database) -> Prepared:
    """prepare() in a thread while this one imports the client libraries of the first calls.

    DuckDB releases the GIL while it opens, creates and fills the database, so on two cores the
    two overlap instead of adding up (litellm's import; the direct HTTP client of an
    OpenAI-compatible server, seqk.models.http1, comes with seqk.models and imports nothing
    more). No call is made before prepare has returned (the run is registered first, so a
    failure there costs nothing), and an import that fails waits for prepare first: the
    database is never left behind mid-transaction.

    Meanwhile the interpreter switches threads every 0.5 ms, not every 5: prepare gives up the
    GIL at each DuckDB call and, to go on, waits for the importing thread to yield it, a few
    dozen times (~5 ms of a new run's start, bench/bench_startup.py)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, PREPARE_SWITCH_S))
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="seqk-prepare") as pool:
            future = pool.submit(prepare, spec, db)
            try:
                import_clients([spec.actor, spec.judge, spec.critic])
            finally:
                wait([future])
            return future.result()
    finally:
        sys.setswitchinterval(interval)
