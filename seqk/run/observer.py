"""What a run tells whoever watches it: one observer with a method per event, instead of loose
callbacks threaded through every layer (inspect_ai's `Hooks`).

    class Count(RunObserver):
        def __init__(self): self.passed = 0
        def attempt(self, event): self.passed += event.task_outcome == "passed"

    seqk.run_variant("variants/quickstart/seqk.yaml", observer=Count())

A run calls, in this order: `prepared` once (what it is about to run), then `attempt` after each
attempt (and `batch` whenever a provider batch changes, in batch mode), `interrupted` at the first
Ctrl-C or SIGTERM, and `finished` once with the result when the run returns normally. Every call
goes through `Guarded`: an observer that raises is logged and the run goes on, since a display
bug must never stop a paid-for run. The progress bar of `seqk run` (seqk.render.console) is one
observer; a subclass of RunObserver overrides only the events it cares about.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from seqk.models.limiter import LimitState
from seqk.records import AttemptRecord, FeedbackFill
from seqk.run.prepare import Prepared

if TYPE_CHECKING:
    from seqk.run.batches import BatchView

log = logging.getLogger("seqk")


@dataclass
class AttemptEvent:
    """Sent to `RunObserver.attempt` after each attempt (and once more when its task is done)."""

    record: AttemptRecord | FeedbackFill
    """FeedbackFill: late feedback for an earlier attempt whose critic had failed."""
    task_done: bool
    task_outcome: str | None
    """When the task is done: 'passed' | 'failed' | 'error'."""
    limits: list[LimitState] = field(default_factory=list)
    """Each model's limit on calls in flight now (the progress line shows the rate-limited)."""


@dataclass(frozen=True)
class RunTotals:
    """What the run holds in the database once an invocation returns: every invocation's
    attempts counted, not only this one's (a resume that finds everything done runs nothing,
    and the run still holds its results)."""

    tasks: int
    """The run's tasks."""
    tasks_finished: int
    """Tasks whose every chain has ended: solved, or all k attempts valid."""
    tasks_passed: int
    """Tasks some chain solved."""
    attempts: int
    """Valid attempts (errored ones are apart)."""
    attempts_errored: int
    """Errored attempts a resume would run again."""
    cost_usd: float | None
    """What the run's calls cost, every invocation's; None when none was priced."""

    @property
    def tasks_pending(self) -> int:
        """Tasks not finished: still to run, or held by an errored attempt."""
        return self.tasks - self.tasks_finished

    def __str__(self) -> str:
        cost = "cost unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        return (f"{self.tasks} tasks: {self.tasks_passed} passed, {self.tasks_finished} finished, "
                f"{self.tasks_pending} pending; {self.attempts} attempts, {self.attempts_errored} errored; {cost}")


@dataclass
class RunResult:
    """What one `seqk run` did (this invocation), and what the run holds (`run`)."""

    prepared: Prepared
    attempts_written: int = 0
    """Attempts this invocation wrote."""
    tasks_passed: int = 0
    """Tasks this invocation finished that passed (0 after a resume that found them done: see `run`)."""
    tasks_failed: int = 0
    """Tasks this invocation finished that failed."""
    tasks_error: int = 0
    """Tasks this invocation left with an errored attempt."""
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
    """Attempts this invocation ran (errored ones included)."""
    attempts_errored: int = 0
    """Attempts of this invocation that ended in an error."""
    run: RunTotals | None = None
    """What the run holds after this invocation, every invocation counted (set by
    seqk.run_variant; None when the engine is called alone)."""

    def __repr__(self) -> str:
        held = f"run: {self.run}; " if self.run is not None else ""
        return (f"RunResult({self.prepared.run_id} · {held}this invocation ({self.prepared.action}): "
                f"{self.attempts_written} attempts written, {self.tasks_passed} tasks passed, "
                f"{self.tasks_failed} failed, {self.tasks_error} with errors, {self.elapsed_s:.1f} s"
                + (f"; stopped: {self.stopped}" if self.stopped else "")
                + ("; interrupted" if self.interrupted else "") + ")")

    @property
    def exit_status(self) -> int:
        """What `seqk run` exits with after it: 130 interrupted, 3 stopped by a budget, 1 stopped
        by an error or every attempt of the invocation an error, else 0."""
        if self.interrupted:
            return 130
        if self.stopped_by == "budget":
            return 3
        if self.stopped or (self.attempts_run and self.attempts_errored == self.attempts_run):
            return 1
        return 0


class RunObserver(Protocol):
    """Watches one run. Subclass it and override what you need (the others do nothing), or pass
    any object with these five methods (the console's progress view is one)."""

    def prepared(self, prepared: Prepared) -> None:
        """Once, before the first call: the run's id, what it does (new, resume, extend,
        restart) and the attempts still to run."""
        return None

    def attempt(self, event: AttemptEvent) -> None:
        """After each finished attempt (or late feedback), with the task's outcome once it is done."""
        return None

    def batch(self, views: list[BatchView]) -> None:
        """Batch mode: the batches of this invocation, whenever one is sent or changes state."""
        return None

    def interrupted(self) -> None:
        """At the first Ctrl-C or SIGTERM, before the finished attempts are written."""
        return None

    def finished(self, result: RunResult) -> None:
        """Once, when the run returns (interrupted, stopped or complete); not when it raises."""
        return None


class Guarded:
    """An observer as the run calls it: no observer is no-op, and an observer's exception is
    logged, never raised into the run."""

    def __init__(self, observer: RunObserver | None):
        self.observer = observer

    def _call(self, event: str, *args: object) -> None:
        method = getattr(self.observer, event, None)
        if method is None:
            return
        try:
            method(*args)
        except Exception:  # noqa: BLE001 - a display bug must not stop a paid-for run
            log.exception("the run's observer failed on %r; the run goes on", event)

    def prepared(self, prepared: Prepared) -> None:
        """See RunObserver.prepared."""
        self._call("prepared", prepared)

    def attempt(self, event: AttemptEvent) -> None:
        """See RunObserver.attempt."""
        self._call("attempt", event)

    def batch(self, views: list[BatchView]) -> None:
        """See RunObserver.batch."""
        self._call("batch", views)

    def interrupted(self) -> None:
        """See RunObserver.interrupted."""
        self._call("interrupted")

    def finished(self, result: RunResult) -> None:
        """See RunObserver.finished."""
        self._call("finished", result)


def guarded(observer: RunObserver | Guarded | None) -> Guarded:
    """`observer` wrapped once (wrapping a Guarded again adds nothing)."""
    return observer if isinstance(observer, Guarded) else Guarded(observer)
