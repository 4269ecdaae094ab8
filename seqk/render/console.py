"""What `seqk run` shows while it runs: a progress bar with passed / failed / error
counts and an ETA (or, when stderr is not a terminal, a plain progress line every few
seconds), each attempt's prompt and output with --verbose, and the closing summary.
Rendering only: RunProgress is the run's observer (seqk.run.observer), the engine reports to it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

PROGRESS_EVERY_S = 10.0
"""How often a run whose stderr is not a terminal (nohup, a batch scheduler) prints a progress
line; the environment variable SEQK_PROGRESS_EVERY_S changes it."""


def progress_every_s() -> float:
    """SEQK_PROGRESS_EVERY_S, else PROGRESS_EVERY_S; BadInput when it is not a positive number."""
    from seqk.errors import BadInput

    text = os.environ.get("SEQK_PROGRESS_EVERY_S", "").strip()
    if not text:
        return PROGRESS_EVERY_S
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise BadInput(f"SEQK_PROGRESS_EVERY_S should be a number of seconds above 0, got {text!r}")
    return value


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class PlainProgress:
    """One plain line every `every_s` seconds for a log that no terminal shows: attempts done,
    tasks passed / failed / with errors, spend and an ETA. A thread prints it, so a log shows
    the run is alive even while slow attempts are in flight."""

    def __init__(self, err: Any, prepared: Any, seq: bool, every_s: float):
        self.err, self.every_s = err, every_s
        self.n_tasks = len(prepared.pending)
        # seq@k runs a task's attempts until its first success: only a ceiling is known.
        self.exact = not seq
        self.attempts_max = (prepared.n_pending_attempts if not seq else
                             sum(prepared.k - min(v) + 1 for v in prepared.pending.values() if v))
        self.attempts = 0
        self.counts = {"passed": 0, "failed": 0, "error": 0}
        self.cost_usd = 0.0
        self.unpriced = 0
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="seqk-progress", daemon=True)
        self._thread.start()

    def add(self, event: Any) -> None:
        """Count one engine event."""
        if hasattr(event.record, "prompt"):
            self.attempts += 1
        for call in event.record.calls:
            if call.cost_usd is None:
                self.unpriced += 1
            else:
                self.cost_usd += call.cost_usd
        if event.task_done:
            self.counts[event.task_outcome] += 1

    def line(self) -> str:
        """'progress 0:00:12: 14 of 30 attempts done; tasks 5 of 10 done (3 passed, 1 failed,
        1 with errors); spent $0.0123 this invocation; eta 0:00:15'."""
        elapsed = time.monotonic() - self.started
        tasks_done = sum(self.counts.values())
        done, total = (self.attempts, self.attempts_max) if self.exact else (tasks_done, self.n_tasks)
        eta = _clock(elapsed / done * (total - done)) if done else "unknown"
        of = "" if self.exact else "at most "
        unpriced = f" (+{self.unpriced} calls of unknown price)" if self.unpriced else ""
        c = self.counts
        return (f"progress {_clock(elapsed)}: {self.attempts} of {of}{self.attempts_max} attempts done; "
                f"tasks {tasks_done} of {self.n_tasks} done ({c['passed']} passed, {c['failed']} failed, "
                f"{c['error']} with errors); spent ${self.cost_usd:.4f}{unpriced} this invocation; "
                f"eta {eta}")

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.err.print(self.line(), markup=False, highlight=False)
            # A log file is block-buffered: without a flush, tail -f shows nothing for minutes.
            self.err.file.flush()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def cut(text: str | None, limit: int) -> str:
    if text is None:
        return "(none)"
    if limit and len(text) > limit:
        return text[:limit] + f"\n… [{len(text) - limit} more characters; `seqk inspect` shows all]"
    return text


SHOW_AFTER_S = 0.1
"""How long after the run is prepared its header line and bar appear, unless an event comes
first: the run's first calls go out in the meantime, without waiting for rich to import."""


class RunProgress:
    """A progress bar with passed / failed / error counts and an ETA, plus --verbose output: the
    run's observer (seqk.run.observer.RunObserver) for `seqk run` and `seqk rejudge`.

    `err` is the rich console it prints to, or a function that makes it: then rich is imported
    (~25 ms) only once the run's first calls are out. The header line and the bar appear
    SHOW_AFTER_S after `prepared`, or at the first event, whichever comes first; when no event
    loop runs, at once."""

    def __init__(self, err: Any, spec: Any, verbose: bool, char_limit: int = 3000):
        self._err = err
        self.spec, self.verbose = spec, verbose
        self.char_limit = char_limit
        """--verbose cuts each prompt and output here (the variant's console_char_limit)."""
        self.progress: Any = None
        self.bar: Any = None
        self.counts = {"passed": 0, "failed": 0, "error": 0}
        self.stopping = False
        """True once the first Ctrl-C or SIGTERM stopped the run (seqk.run.signals.outlast reads it)."""
        self.plain: PlainProgress | None = None
        self.every_s = progress_every_s()
        self.batches = ""
        self.limits = ""
        self._to_show: Any = None
        """The prepared run whose header and bar are still to be shown."""

    @property
    def err(self) -> Any:
        """The console, made at its first use when a function to make it was given."""
        if not hasattr(self._err, "print"):
            self._err = self._err()
        return self._err

    def interrupted(self) -> None:
        """The first Ctrl-C or SIGTERM: say what happens now."""
        self._show()
        self.stopping = True
        self.err.print("[yellow]stopping[/]: writing the finished attempts (attempts in flight are dropped)")

    def prepared(self, prepared: Any) -> None:
        """What the run does (new, resume, ...), then the bar (or, off a terminal, plain lines):
        shown SHOW_AFTER_S later, or at the first event."""
        import asyncio

        self._to_show = prepared
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._show()
            return
        loop.call_later(SHOW_AFTER_S, self._show)

    def _show(self) -> None:
        prepared, self._to_show = self._to_show, None
        if prepared is None:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        what = {"new": "new run", "resume": "resuming",
                "extend": f"extending k {prepared.previous_k}→{prepared.k}",
                "restart": f"restarting at k={prepared.k} "
                           f"(k was {prepared.previous_k}; old attempts kept, not counted)"}
        done = prepared.n_selected - len(prepared.pending)
        chains = ""
        if prepared.chains > 1:
            chains = f", {prepared.chains} chains each"
            if prepared.previous_chains is not None and prepared.previous_chains < prepared.chains:
                chains += f" (raised from {prepared.previous_chains}; kept chains count)"
        self.err.print(f"[bold]{prepared.run_id}[/]  {what[prepared.action]}: "
                       f"{len(prepared.pending)} of {prepared.n_selected} tasks to run{chains} "
                       f"({done} already finished)")
        self.progress = Progress(
            TextColumn("tasks"), BarColumn(), MofNCompleteColumn(),
            TextColumn("[green]{task.fields[passed]} passed[/] [red]{task.fields[failed]} failed[/] "
                       "[yellow]{task.fields[error]} error[/]"),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
            TextColumn("{task.fields[limits]}", markup=False),
            console=self.err, transient=False, disable=not self.err.is_terminal and not self.verbose)
        self.progress.start()
        self.bar = self.progress.add_task("run", total=len(prepared.pending), limits="", **self.counts)
        if not self.err.is_terminal:
            self.plain = PlainProgress(self.err, prepared, self.spec.seq, self.every_s)

    def attempt(self, event: Any) -> None:
        """Advance the bar when a task is done; --verbose prints the attempt."""
        self._show()
        if self.verbose:
            self.progress.console.print(self._describe(event.record), highlight=False)
        self.limits = limits_text(event.limits)
        limits = " ".join(x for x in (self.batches, self.limits) if x)
        if event.task_done:
            self.counts[event.task_outcome] += 1
            self.progress.update(self.bar, advance=1, limits=limits, **self.counts)
        else:
            self.progress.update(self.bar, limits=limits)
        if self.plain is not None:
            self.plain.add(event)

    def batch(self, views: list[Any]) -> None:
        """Batch mode: the batches not yet collected, with their state and age, on the line."""
        self._show()
        self.batches = batches_text(views)
        if self.progress is not None:
            self.progress.update(self.bar, limits=" ".join(x for x in (self.batches, self.limits) if x))

    def _describe(self, r: Any) -> Any:
        """One attempt as printed by --verbose; model text is plain text, never markup."""
        from rich.text import Text

        limit = self.char_limit
        if not hasattr(r, "prompt"):  # late feedback for an earlier attempt
            what = "ERROR " + json.dumps(r.error) if r.error else "written"
            text = Text.assemble((f"\n── task {r.task_index} · feedback for attempt "
                                  f"{r.attempt_index} · {what}\n", "bold"))
            if r.feedback:
                text.append(cut(r.feedback, limit))
            return text
        verdict = (("ERROR " + json.dumps(r.error)) if r.status == "error" else
                   f"success={r.success} score={r.score}"
                   + (f" · critic ERROR {json.dumps(r.error)}" if r.error else ""))
        text = Text.assemble(
            (f"\n── task {r.task_index} · attempt {r.attempt_index}/{r.k} · {verdict}\n", "bold"),
            ("prompt:\n", "cyan"), cut(r.prompt, limit), ("\noutput:\n", "cyan"), cut(r.output, limit))
        if r.feedback:
            text.append("\nfeedback:\n", "cyan")
            text.append(cut(r.feedback, limit))
        return text

    def finished(self, result: Any) -> None:
        """The run returned: the bar stops before the summary is printed."""
        self.stop()

    def stop(self) -> None:
        """Stop the bar and the plain lines (again: nothing more)."""
        self._show()
        if self.plain is not None:
            self.plain.stop()
            self.plain = None
        if self.progress is not None:
            self.progress.stop()


def age_text(seconds: float | None) -> str:
    """'42 s', '12 min', '3.5 h'."""
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def batches_text(views: list[Any]) -> str:
    """'batches: actor round 2 in_progress 3/6 items, 41 s' for each batch still open."""
    import time
    from datetime import UTC

    shown = []
    for v in views:
        if v.state in ("ended", "failed", "expired", "cancelled", "lost"):
            continue
        age = time.time() - v.submitted_at.replace(tzinfo=UTC).timestamp()
        shown.append(f"{v.role} round {v.round} {v.state} {v.n_done}/{v.n_items} items, {age_text(age)}")
    return ("batches: " + "; ".join(shown)) if shown else ""


def print_run_summary(out: Any, spec: Any, result: Any, db_path: Any) -> None:
    out.print(f"\n[bold]{spec.run_id}[/]: {result.attempts_written} attempts written in "
              f"{result.elapsed_s:.1f}s; tasks this invocation: {result.tasks_passed} passed, "
              f"{result.tasks_failed} failed, {result.tasks_error} with errors")
    if result.error_kinds:
        out.print("[yellow]errors[/] (kept apart from wrong answers; rerun to retry; "
                  "`seqk inspect` shows each):")
        for kind, n in sorted(result.error_kinds.items()):
            stage, _, kind_name = kind.partition(":")
            first = " ".join(result.error_examples.get(kind, "").split())
            out.print(f"  {n}× {kind_name} at {stage}: {first[:300]}", markup=False, highlight=False)
    from seqk.render import text as report_text

    out.print(report_text.closing_summary(spec.run_id, db_path))


def limits_text(limits: Any) -> str:
    """The progress line's part for each model a rate limit has held back: 'openai/x 9/192
    in flight (12× 429)'; empty while no model met one."""
    return " · ".join(f"{s.model} {s.limit}/{s.ceiling} in flight ({s.rate_limited}× 429)"
                      for s in limits if s.rate_limited)


def print_limits(out: Any, limits: Any) -> None:
    """Each rate-limited model's limit on calls in flight (the others stayed at their ceiling)."""
    for s in limits:
        if s.rate_limited:
            where = f" at {s.api_base}" if s.api_base else ""
            out.print(f"rate limits: {s.model}{where}: {s.rate_limited} calls answered 429; calls in "
                      f"flight now {s.limit} of {s.ceiling} (lowest {s.lowest})", markup=False,
                      highlight=False)
