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
import contextlib
import logging
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seqk import store
from seqk.benchmark import AttemptContext, HistoryItem, Task, Verdict
from seqk.benchmark.prompt import actor_prompt
from seqk.config.spec import RunSpec
from seqk.errors import AgentRunError, CriticError, JudgeError, ProviderError
from seqk.models import ModelPool, close_sessions
from seqk.models.limiter import LimitState
from seqk.records import AttemptRecord, CallRecord, FeedbackFill
from seqk.run.budget import BudgetGate, gate_for
from seqk.run.metering import MeteredClient, agent_call, error_record, now, seeded
from seqk.run.prepare import MissingFeedback, Prepared, prepare
from seqk.run.writer import Writer

log = logging.getLogger("seqk")

ATTEMPT_ERRORS = (ProviderError, JudgeError, CriticError, AgentRunError)
"""The failures an attempt records as its error (SandboxError is a JudgeError); anything else
is a bug and stops the run."""


async def _cancel(jobs: list[asyncio.Task[None]]) -> None:
    for job in jobs:
        job.cancel()
    await asyncio.gather(*jobs, return_exceptions=True)


@dataclass
class AttemptEvent:
    """Sent to `on_event` after each attempt (and once more when its task is done)."""

    record: AttemptRecord | FeedbackFill
    """FeedbackFill: late feedback for an earlier attempt whose critic had failed."""
    task_done: bool
    task_outcome: str | None
    """When the task is done: 'passed' | 'failed' | 'error'."""
    limits: list[LimitState] = field(default_factory=list)
    """Each model's limit on calls in flight now (the progress line shows the rate-limited)."""


@dataclass
class RunResult:
    """What one `seqk run` did."""

    prepared: Prepared
    attempts_written: int = 0
    tasks_passed: int = 0
    tasks_failed: int = 0
    tasks_error: int = 0
    interrupted: bool = False
    stopped: str | None = None
    """Why the run stopped early: a fatal error (the embedded model crashed, ...) that no
    later call could get past, or the budget. Attempts in flight were recorded; the rest were not started."""
    stopped_by: str | None = None
    """'error' (a fatal error: exit 1) or 'budget' (the budget gate: exit 3) when `stopped` is set."""
    model_limits: list[LimitState] = field(default_factory=list)
    """Each model's limit on calls in flight at the end, and the rate limits that moved it."""
    elapsed_s: float = 0.0
    error_kinds: dict[str, int] = field(default_factory=dict)
    """'stage:type' -> how many records of this invocation had that error."""
    error_examples: dict[str, str] = field(default_factory=dict)
    """'stage:type' -> the first message of that kind, so the console can show the cause."""
    attempts_run: int = 0
    attempts_errored: int = 0


class Engine:
    """Runs the pending attempts of one prepared run."""

    def __init__(self, spec: RunSpec, prepared: Prepared, db: str | Path | None,
                 on_event: Callable[[AttemptEvent], None] | None = None,
                 flush_interval_s: float = 0.2, budget: BudgetGate | None = None):
        self.spec = spec
        self.prepared = prepared
        # a task has up to k pass@k samples, or one call per seq@k chain, in flight at once
        self.pool = ModelPool(spec.retry, spec.quota,
                              default_concurrency=max(spec.concurrency * max(spec.k, spec.chains), 16))
        self.writer = Writer(db, interval_s=flush_interval_s, run_id=spec.run_id)
        self.on_event = on_event
        self.budget = budget
        self.result = RunResult(prepared)
        self.mode = spec.mode
        self._tasks = {t.task_index: t for t in spec.tasks}

    async def attempt(self, task: Task, attempt_index: int,
                      history: list[HistoryItem], chain_index: int = 1) -> AttemptRecord:
        """Actor, judge and (for a failed seq@k attempt) critic, recorded whole. A slot whose
        judge failed in an earlier run is judged again on the kept output, without the actor."""
        spec, bench = self.spec, self.spec.benchmark
        calls: list[CallRecord] = []
        actor = MeteredClient(self.pool, seeded(spec.actor, attempt_index, chain_index), calls)
        judge = MeteredClient(self.pool, spec.judge, calls)
        critic = MeteredClient(self.pool, seeded(spec.critic, attempt_index, chain_index), calls)
        started = now()
        kept = self.prepared.kept_outputs.get((task.task_index, chain_index, attempt_index))
        prompt = kept.prompt if kept is not None else actor_prompt(
            task.prompt, attempt_index, spec.k, seq=spec.seq, history=history)
        output: str | None = None
        verdict: Verdict | None = None
        feedback: str | None = None
        stage = "actor"
        error: dict[str, Any] | None = None
        try:
            if bench.run_attempt is not None:
                stage = "run_attempt"
                ctx = AttemptContext(attempt_index, spec.k, spec.seq, history, actor, judge,
                                     spec.options, spec.run_id, spec.actor.temperature)
                result = await bench.run_attempt(task, prompt, ctx)
                prompt, output, verdict = result.prompt, result.output, result.verdict
                if result.usage is not None:
                    calls.append(agent_call(result.usage, prompt, output, started, spec.actor.price))
            else:
                output = kept.output if kept is not None else await actor.complete(prompt)
                stage = "judge"
                verdict = await bench.verify(task, output, judge)
            if spec.seq and not verdict.success:
                stage = "critic"
                feedback = await bench.feedback(task, output, verdict, self.mode, critic)
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
        critic = MeteredClient(
            self.pool, seeded(self.spec.critic, missing.attempt_index, chain_index), calls)
        feedback, error = None, None
        try:
            feedback = await self.spec.benchmark.feedback(
                task, missing.output, missing.verdict, self.mode, critic)
            if self.mode.llm_critic and not (feedback or "").strip():
                raise CriticError("the critic returned empty feedback")
        except asyncio.CancelledError:
            raise
        except ATTEMPT_ERRORS as exc:
            feedback, error = None, error_record("critic", exc)
        return FeedbackFill(missing.attempt_uid, self.spec.run_id, self.prepared.generation,
                            task.task_index, missing.attempt_index, feedback, error, calls,
                            chain_index)

    async def _admit(self) -> dict[str, float] | None:
        """May one more attempt start? Its cost estimate is reserved until `_settle`."""
        if self.result.stopped:
            return None
        if self.budget is None:
            return {}
        reservation = await self.budget.admit()
        if reservation is not None and self.result.stopped:  # a fatal error came while it waited
            self.budget.settle(reservation, [], attempt=False)
            return None
        if reservation is None and self.result.stopped is None:
            self.result.stopped, self.result.stopped_by = self.budget.describe(), "budget"
        return reservation

    def _settle(self, reservation: dict[str, float], record: AttemptRecord | FeedbackFill) -> None:
        if self.budget is not None:
            self.budget.settle(reservation, record.calls, isinstance(record, AttemptRecord))

    def _emit(self, record: AttemptRecord | FeedbackFill, done: bool, outcome: str | None) -> None:
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
        if self.on_event is not None:
            try:
                self.on_event(AttemptEvent(record, done, outcome, self.pool.limit_states()))
            except Exception:  # noqa: BLE001 - a display bug must not stop a paid-for run
                log.exception("on_event failed; the run goes on")

    async def _run_seq_task(self, task: Task, slots: list[tuple[int, int]]) -> None:
        """The task's unfinished chains, concurrently; the task is done when the last one ends
        (passed if any chain passed, else error if any chain ended on one, else failed)."""
        remaining = len(slots)
        outcomes: list[str] = []

        def finish(record: AttemptRecord | FeedbackFill, outcome: str) -> None:
            nonlocal remaining
            remaining -= 1
            outcomes.append(outcome)
            done = remaining == 0
            self._emit(record, done, None if not done else (
                "passed" if "passed" in outcomes else "error" if "error" in outcomes else "failed"))

        await asyncio.gather(*(self._run_seq_chain(task, chain, first, finish)
                               for chain, first in slots))

    async def _run_seq_chain(self, task: Task, chain_index: int, first: int,
                             finish: Callable[[AttemptRecord | FeedbackFill, str], None]) -> None:
        slot = (task.task_index, chain_index)
        history = list(self.prepared.history.get(slot, []))
        missing = self.prepared.missing_feedback.get(slot)
        if missing is not None and history:
            reservation = await self._admit()
            if reservation is None:
                return
            fill = await self.late_feedback(task, missing, chain_index)
            self._settle(reservation, fill)
            if fill.feedback is None:
                finish(fill, "error")
                return
            self._emit(fill, False, None)
            history[-1] = HistoryItem(missing.attempt_index, missing.output, fill.feedback)
        for attempt_index in range(first, self.spec.k + 1):
            reservation = await self._admit()
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
            self._emit(record, False, None)
            history.append(HistoryItem(attempt_index, record.output or "", record.feedback))

    async def _run_pass_task(self, task: Task, indices: list[int]) -> None:
        remaining = len(indices)
        outcomes: list[str] = []

        async def one(attempt_index: int) -> None:
            nonlocal remaining
            reservation = await self._admit()
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
            self._emit(record, remaining == 0, outcome)

        await asyncio.gather(*(one(i) for i in indices))

    async def run(self) -> RunResult:
        """Run every pending attempt; on cancellation keep what finished."""
        start = time.perf_counter()
        self.writer.start()
        limit = asyncio.Semaphore(self.spec.concurrency)

        async def task_job(task_index: int, indices: list[int]) -> None:
            async with limit:
                if self.result.stopped:
                    return
                task = self._tasks[task_index]
                try:
                    if self.spec.seq:
                        await self._run_seq_task(task, self.prepared.slots(task_index))
                    else:
                        await self._run_pass_task(task, indices)
                except Exception as exc:
                    # A bug: no other attempt starts while the run unwinds to show it.
                    self.result.stopped, self.result.stopped_by = f"{type(exc).__name__}: {exc}", "error"
                    raise

        jobs = [asyncio.create_task(task_job(t, idx)) for t, idx in self.prepared.pending.items()]
        try:
            await asyncio.gather(*jobs)
        except asyncio.CancelledError:
            self.result.interrupted = True
            await _cancel(jobs)
        except BaseException:
            # A bug (a benchmark's KeyError, say) stops the run loudly; what finished is still written.
            await _cancel(jobs)
            raise
        finally:
            await self.writer.close()
            await close_sessions()
            self.result.attempts_written = self.writer.written
            self.result.model_limits = self.pool.limit_states()
            self.result.elapsed_s = time.perf_counter() - start
        return self.result


def check_credentials(spec: RunSpec) -> None:
    """Fail before anything is written when a role's key is missing (ConfigError, rule C10)."""
    from seqk.errors import ConfigError
    from seqk.models import credential_problems

    issues = credential_problems([spec.actor, spec.judge, spec.critic])
    if issues:
        raise ConfigError(spec.source, issues)


def check_models(spec: RunSpec) -> None:
    """Fail before anything is written when a local model cannot run: its file or
    llama-cpp-python is missing (MissingExtra), or its worker dies generating a few tokens
    (LocalModelCrashed, naming the cause and the rebuild command)."""
    from seqk.models import ensure_ready

    for role in (spec.actor, spec.judge, spec.critic):
        ensure_ready(role)


def run(spec: RunSpec, db: str | Path | None = None,
        on_event: Callable[[AttemptEvent], None] | None = None,
        on_prepared: Callable[[Prepared], None] | None = None,
        on_interrupt: Callable[[], None] | None = None) -> RunResult:
    """Run one variant to completion (or until Ctrl-C / SIGTERM), resuming what is stored.

    `on_interrupt` is called when the first signal arrives, before the final write; the
    signal handlers that were in place before the run are back when it returns."""
    db = db if db is not None else spec.db
    check_credentials(spec)
    check_models(spec)
    with store.run_lease(db, spec.run_id):
        return _run_leased(spec, db, on_event, on_prepared, on_interrupt)


def _run_leased(spec: RunSpec, db: str | Path | None,
                on_event: Callable[[AttemptEvent], None] | None,
                on_prepared: Callable[[Prepared], None] | None,
                on_interrupt: Callable[[], None] | None = None) -> RunResult:
    prepared = prepare(spec, db)
    if on_prepared is not None:
        on_prepared(prepared)

    async def main() -> RunResult:
        engine = Engine(spec, prepared, db, on_event, budget=gate_for(spec, db))
        loop = asyncio.get_running_loop()
        current = asyncio.current_task()
        assert current is not None
        runner = asyncio.create_task(engine.run())
        # Not every platform or thread can take signal handlers; then Ctrl-C is Python's own.
        no_handlers = (NotImplementedError, RuntimeError, ValueError)
        def stop() -> None:
            # The first signal cancels the run; later ones must not cancel the final write.
            if not runner.cancelling():
                runner.cancel()
                if on_interrupt is not None:
                    on_interrupt()

        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        for sig in previous:
            with contextlib.suppress(*no_handlers):
                loop.add_signal_handler(sig, stop)
        try:
            return await runner
        finally:
            for sig, handler in previous.items():
                with contextlib.suppress(*no_handlers):
                    loop.remove_signal_handler(sig)
                    # remove_signal_handler installs Python's default, not what was there.
                    signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    return asyncio.run(main())
