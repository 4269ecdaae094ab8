"""`seqk run` and `seqk plan` of a sweep file (one with `matrix:`): every cell an ordinary run.
The commands in seqk/cli/__init__.py hand a sweep file here; this parses nothing more, calls
seqk.api.run_sweep or seqk.run.plan.plan_sweep, and renders what they return."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from seqk.cli.app import console


def sweep_file(path: Path) -> bool:
    """True when `path` is a sweep file rather than a variant."""
    from seqk.config.sweep import is_sweep

    return is_sweep(path)


def _cost(low: float | None, high: float | None, known: bool) -> str:
    if not known:
        return "actor cost unknown (no price)"
    return f"actor cost ${low or 0:.4f} to " + ("unbounded (no max_tokens)" if high is None else f"${high:.4f}")


def plan_sweep(path: Path, db: str | None, overrides: dict[str, Any], labels: dict[str, str]) -> None:
    """Print every cell of the sweep: its run, what is left to run, its calls and cost, and the
    command that runs it alone; then the totals."""
    from seqk.config.sweep import load_sweep, shown_path
    from seqk.run import preflight
    from seqk.run.plan import plan_sweep as plans

    sweep = load_sweep(path, overrides, labels)
    cells = plans(sweep, db)
    out = console()
    n_partners = sum(cell.partner for cell, _ in cells)
    out.print(f"[bold]sweep {path}[/]: base {shown_path(sweep.base)}, {len(cells)} runs "
              f"({len(cells) - n_partners} cells, {n_partners} pass@k partner{'' if n_partners == 1 else 's'})",
              highlight=False)
    low = high = 0.0
    known = bounded = True
    attempts = [0, 0]
    critic = 0
    for n, (cell, p) in enumerate(cells, start=1):
        out.print(f"\n[bold]{n}. {cell.name}[/]", markup=True, highlight=False)
        out.print(f"  {p['run_id']}  ({p['state']})", markup=False, highlight=False)
        calls = (f"attempts {p['attempts_min']} to {p['attempts_max']}" if cell.spec.seq
                 else f"attempts {p['attempts_max']}")
        out.print(f"  {calls}, critic calls up to {p['critic_calls_max']}; "
                  f"{_cost(p['actor_cost_low'], p['actor_cost_high'], p['price_known'])}", markup=False)
        out.print(f"  alone: {cell.command(sweep.base)}", markup=False, highlight=False)
        for note in cell.spec.notes:
            out.print(f"  note: {note}", markup=False, highlight=False)
        attempts[0] += p["attempts_min"]
        attempts[1] += p["attempts_max"]
        critic += p["critic_calls_max"]
        known = known and p["price_known"]
        bounded = bounded and p["actor_cost_high"] is not None
        low += p["actor_cost_low"] or 0.0
        high += p["actor_cost_high"] or 0.0
    out.print(f"\n[bold]total[/]: attempts {attempts[0]} to {attempts[1]}, critic calls up to {critic}; "
              + _cost(low, high if bounded else None, known) + " (rough: prompt chars/4, judge and critic "
              "not included)", highlight=False)
    for cell, _ in cells:
        preflight.before_plan(cell.spec)


def run_sweep(path: Path, db: str | None, overrides: dict[str, Any], labels: dict[str, str], *,
              parallel: int, verbose: bool, no_wait: bool, no_export: bool, no_upload: bool, progress: Any) -> None:
    """Run every cell (one after another with a progress bar each, or `parallel` at once), then
    say what each did; exit 130 when interrupted, else the worst cell's status (1, then 3)."""
    if no_wait:
        raise typer.BadParameter("is for one batch-mode variant, not a sweep (its cells run one after another "
                                 "or --parallel N at once)", param_hint="'--no-wait'")
    from seqk import api
    from seqk.config.sweep import load_sweep
    from seqk.render.console import print_run_summary
    from seqk.run import signals

    sweep = load_sweep(path, overrides, labels)
    out, err = console(), console(stderr=True)
    n_cells = len(sweep.cells)
    views: list[Any] = []
    numbers = {id(cell): n for n, cell in enumerate(sweep.cells, start=1)}

    def started(cell: Any) -> None:
        err.print(f"[bold]{numbers[id(cell)]}/{n_cells} {cell.name}[/] → {cell.spec.run_id}", highlight=False)

    def view_for(cell: Any) -> Any:
        for note in cell.spec.notes:
            err.print(f"[dim]note: {note}[/]")
        views.append(progress(lambda: console(stderr=True), cell.spec, verbose, cell.settings.console_char_limit))
        return views[-1]

    finished: list[Any] = []

    def ended(done: Any) -> None:
        finished.append(done)
        if views:
            views[-1].stop()
        if done.run is not None:
            print_run_summary(out, done.cell.spec, done.run.result, done.run.db)
            for line in done.run.messages:
                out.print(line, markup=False, highlight=False)
        else:
            out.print(f"[bold]{numbers[id(done.cell)]}/{n_cells}[/] {done.cell.spec.run_id}: exit {done.status}",
                      highlight=False)
            out.print(done.output.rstrip(), markup=False, highlight=False)

    with signals.outlast(lambda: any(v.stopping for v in views)):
        try:
            interrupted = api.run_sweep(sweep, db, parallel=parallel, export=not no_export, upload=not no_upload,
                                        observer_for=view_for, on_start=started, on_cell=ended).interrupted
        except KeyboardInterrupt:  # Ctrl-C between two cells, while no run was running
            interrupted = True
        finally:
            for view in views:
                view.stop()
    statuses = [c.status for c in finished]
    out.print(f"\nsweep {path}: {statuses.count(0)} of {n_cells} runs done"
              + (f", {len(statuses) - statuses.count(0)} not" if len(statuses) > statuses.count(0) else ""),
              highlight=False)
    if interrupted:
        out.print(f"[yellow]Interrupted[/]: {n_cells - len(statuses)} cells not started; finished attempts are "
                  "saved; run the same command to go on.")
        raise typer.Exit(130)
    out.print("compare them: seqk report --compare" + (f" --db {db}" if db else ""), highlight=False)
    worst = 1 if any(s not in (0, 3) for s in statuses) else 3 if 3 in statuses else 0
    if worst:
        raise typer.Exit(worst)
