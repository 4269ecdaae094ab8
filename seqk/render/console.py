"""What `seqk run` shows while it runs: a progress bar with passed / failed / error
counts and an ETA, each attempt's prompt and output with --verbose, and the closing
summary. Rendering only; the engine reports through its `on_event` callback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def cut(text: str | None, limit: int) -> str:
    if text is None:
        return "(none)"
    if limit and len(text) > limit:
        return text[:limit] + f"\n… [{len(text) - limit} more characters; `seqk inspect` shows all]"
    return text


class RunProgress:
    """A progress bar with passed / failed / error counts and an ETA, plus --verbose output."""

    def __init__(self, err: Any, spec: Any, verbose: bool, out: Any):
        self.err, self.spec, self.verbose, self.out = err, spec, verbose, out
        self.progress: Any = None
        self.bar: Any = None
        self.counts = {"passed": 0, "failed": 0, "error": 0}
        self.interrupted = False

    def on_interrupt(self) -> None:
        """The first Ctrl-C or SIGTERM: say what happens now."""
        self.interrupted = True
        self.err.print("[yellow]stopping[/]: writing the finished attempts (attempts in flight are dropped)")

    def on_prepared(self, prepared: Any) -> None:
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

    def on_event(self, event: Any) -> None:
        if self.verbose:
            self.progress.console.print(self._describe(event.record), highlight=False)
        limits = limits_text(event.limits)
        if event.task_done:
            self.counts[event.task_outcome] += 1
            self.progress.update(self.bar, advance=1, limits=limits, **self.counts)
        else:
            self.progress.update(self.bar, limits=limits)

    def _describe(self, r: Any) -> Any:
        """One attempt as printed by --verbose; model text is plain text, never markup."""
        from rich.text import Text

        limit = self.spec.console_char_limit
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

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def print_run_summary(out: Any, spec: Any, result: Any, db_path: Path | None) -> None:
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
