"""What the command line and notebooks call: one function per thing a user does.

    from seqk import run_variant
    outcome = run_variant("variants/quickstart/seqk.yaml", db="runs/seqk.duckdb")
    outcome.result.run.tasks_passed     # what the run holds, every invocation counted
    outcome.result.tasks_passed         # what this invocation added (0 after a resume that found it done)

The library never prints: progress goes to an observer (seqk.run.observer.RunObserver), and what
the run's export and upload did comes back as lines in the outcome. `db` is the second argument
of every function that reads or writes a database, after what the function acts on (a variant,
runs, a run, a query); None means the variant's `db:`, then $SEQK_DB, then runs/seqk.duckdb. It
is a DuckDB file or a DuckLake URL (`compare` and `judges`, which act on two runs, take it third). Every other
argument is by keyword, and every result is typed.
These are the names `seqk` exports (`seqk.__all__`); each imports what it needs when called, so
`import seqk` stays cheap.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from seqk.api.checks import doctor, limits, probe, reset_limits
from seqk.api.stores import bundle, compact, import_runs, upload_run, view
from seqk.api.studies import StudyRun, load_study, plan_study, run_study
from seqk.errors import SeqkError, UploadError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from seqk.analysis.compare import RunComparison
    from seqk.analysis.grouped import GroupedComparison
    from seqk.analysis.judges import JudgeComparison
    from seqk.analysis.status import RunStatus, SqlResult, Trajectory
    from seqk.config.runspec import RunSettings, RunSpec
    from seqk.config.sweep import Cell, Sweep
    from seqk.io.export import ExportResult
    from seqk.models.role import RoleSpec
    from seqk.render.notebook import NotebookReport
    from seqk.run.observer import RunObserver, RunResult, RunTotals
    from seqk.run.plan import Plan, SweepPlan
    from seqk.store import Database

__all__ = [
    "CellRun", "Db", "Rejudged", "StudyRun", "SweepRun", "VariantRun", "bundle", "compact", "compare",
    "compare_by", "doctor", "export_parquet", "export_runs", "import_runs", "inspect", "judges", "limits",
    "load_study", "load_variant", "plan", "plan_study", "plan_sweep", "probe", "query", "rejudge", "report",
    "reset_limits", "run_study", "run_sweep", "run_variant", "status", "upload_run", "view"
]

Db: TypeAlias = "Database | str | os.PathLike[str] | None"
"""A store (seqk.store.open), a DuckDB file or a DuckLake URL; None: $SEQK_DB, then
runs/seqk.duckdb."""


def _default_settings() -> RunSettings:
    """RunSettings(): seqk.config (pydantic models, the benchmarks' contract, the providers) loaded
    when a run needs it, not with seqk.api (what `seqk compare` or `seqk report` imports)."""
    from seqk.config.runspec import RunSettings

    return RunSettings()


@dataclass
class VariantRun:
    """What one `run_variant` did."""

    spec: RunSpec
    result: RunResult
    """Counts, errors, whether it was interrupted or stopped (a RoundsResult in batch mode)."""
    db: Database
    """The store it ran against: a DuckDB file, or a lake."""
    messages: list[str] = field(default_factory=list)
    """What the export and upload at the end did, one line each."""
    upload_error: Exception | None = None
    """seqk.errors.UploadError when the upload at the end failed: the run and its export are
    intact, and the message names the command that retries the upload."""
    settings: RunSettings = field(default_factory=_default_settings)
    """This invocation's settings (the variant's db, console, export and S3 keys)."""

    def __repr__(self) -> str:
        return f"VariantRun({self.result!r}, db={str(self.db)!r})"


def load_variant(variant: str | os.PathLike[str], overrides: dict[str, Any] | None = None) -> RunSpec:
    """Validate a variant YAML against its benchmark (ConfigError lists every problem)."""
    from seqk.config import runspec

    return runspec.load(Path(variant), overrides or {})


def run_variant(variant: str | os.PathLike[str] | RunSpec, db: Db = None, *,
                settings: RunSettings | None = None, overrides: dict[str, Any] | None = None,
                export: bool = True, upload: bool = True, observer: RunObserver | None = None,
                no_wait: bool = False) -> VariantRun:
    """Run (or resume) one variant, then export its folder tree and upload it when S3 sync is on.

    `db` defaults to the variant's `db:`, then $SEQK_DB, then runs/seqk.duckdb. `settings`
    (where it exports, uploads, ...) defaults to the variant file's, or to RunSettings() for a
    RunSpec. An interrupted run (Ctrl-C, SIGTERM) is neither exported nor uploaded; the same call
    resumes it. `observer` hears the run's progress (seqk.run.observer).

    A variant with `batch: true` runs in rounds of provider batches (seqk.run.rounds); the
    observer's `batch` gets the batches whenever one changes; `no_wait` returns once a round is
    sent (the result's `deferred` counts the batches in flight) and a later call collects it.
    """
    from seqk import store
    from seqk.config import runspec
    from seqk.io import publish
    from seqk.run import engine

    if isinstance(variant, runspec.RunSpec):
        spec, settings = variant, settings or runspec.RunSettings()
    else:
        spec, own = runspec.load_with_settings(Path(variant), overrides or {})
        settings = settings or own
    database = store.open(settings.database(db))
    publish.preflight(spec, settings, database, no_upload=not upload, no_export=not export)
    if spec.batched:
        from seqk.run import rounds

        result = rounds.run(spec, database, observer, no_wait=no_wait)
    else:
        result = engine.run(spec, database, observer)
    result.run = _totals(spec.run_id, database)
    outcome = VariantRun(spec, result, database, settings=settings)
    if not result.interrupted and not getattr(result, "deferred", 0):
        try:
            publish.after_run(spec, settings, database, no_export=not export, no_upload=not upload,
                              report=outcome.messages.append)
        except UploadError as exc:
            outcome.upload_error = exc
    return outcome


@dataclass
class CellRun:
    """What one cell of a sweep did."""

    cell: Cell
    status: int
    """The exit status `seqk run` of the cell alone gives: 0, 1 (errors), 2 (refused), 3 (budget),
    130 (interrupted)."""
    run: VariantRun | None = None
    """The cell's run, when it ran in this process (one cell after another)."""
    output: str = ""
    """What the cell's own process printed (`--parallel`), its standard output then its errors."""


@dataclass
class SweepRun:
    """What one `run_sweep` did."""

    sweep: Sweep
    cells: list[CellRun]
    """The cells that ran, in the order they ended (a stopped sweep's later cells are not there)."""
    interrupted: bool


def run_sweep(sweep: str | os.PathLike[str] | Sweep, db: Db = None, *, overrides: dict[str, Any] | None = None,
              labels: dict[str, str] | None = None, parallel: int = 1, export: bool = True,
              upload: bool = True, observer_for: Callable[[Cell], RunObserver | None] | None = None,
              on_start: Callable[[Cell], None] | None = None,
              on_cell: Callable[[CellRun], None] | None = None) -> SweepRun:
    """Run every cell of a sweep file (seqk.config.sweep), each an ordinary run that resumes what
    the database holds: one after another in this process (`observer_for(cell)` hears each), or
    `parallel` at once in processes of their own (seqk.run.sweep). Ctrl-C stops the sweep after
    the cells running have kept what finished; the same call goes on from there."""
    from seqk import store
    from seqk.config.sweep import load_sweep

    plan = sweep if not isinstance(sweep, str | os.PathLike) else load_sweep(Path(sweep), overrides, labels)
    done: list[CellRun] = []
    if parallel > 1:
        from seqk.run.sweep import run_in_processes

        def ended(process: Any) -> None:
            done.append(CellRun(process.cell, process.returncode, output=process.stdout + process.stderr))
            if on_cell is not None:
                on_cell(done[-1])

        target = str(store.open(plan.cells[0].settings.database(db)))
        _, stopped = run_in_processes(plan, target, parallel, export=export, upload=upload,
                                      on_start=on_start, on_end=ended)
        return SweepRun(plan, done, stopped)
    for cell in plan.cells:
        if on_start is not None:
            on_start(cell)
        try:
            outcome = run_variant(cell.spec, db, settings=cell.settings, export=export, upload=upload,
                                  observer=observer_for(cell) if observer_for else None)
            ran = CellRun(cell, 1 if outcome.upload_error else outcome.result.exit_status, outcome)
        except SeqkError as exc:  # this cell is refused (its stored run differs, a key is missing): the others go on
            ran = CellRun(cell, exc.exit_code, output=f"error: {exc}")
        done.append(ran)
        if on_cell is not None:
            on_cell(ran)
        if ran.status == 130:
            return SweepRun(plan, done, True)
    return SweepRun(plan, done, False)


def report(runs: Sequence[str] = (), db: Db = None, *, compare: bool = False, benchmark: str | None = None,
           model: str | None = None, errors_as_failures: bool = False, seed: int | None = None) -> NotebookReport:
    """What `seqk report` prints, as data: each run's curve with intervals, and with `compare`
    each seq@k run against its pass@k partner (lift, paired test, the equal-budget block). In a
    notebook it shows itself as a table; `to_text()` is what `seqk report` prints, `to_polars()`
    its figures as a frame (seqk.render.notebook)."""
    from seqk.analysis.report import report as build
    from seqk.render.notebook import NotebookReport

    extra = {} if seed is None else {"seed": seed}
    return NotebookReport.of(build(runs, db, compare=compare, benchmark=benchmark, model=model,
                                   errors_as_failures=errors_as_failures, **extra))


def compare(run_a: str, run_b: str, db: Db = None, *, errors_as_failures: bool = False,
            seed: int | None = None) -> RunComparison:
    """Two runs of one benchmark slice side by side on the tasks both hold (what `seqk compare`
    prints): what differs in their settings, a − b at each t up to the smaller K with its interval,
    p-value and n, both runs' frontiers at equal spend per task (`equal_budget`: each budget's best
    cells, a − b with its interval and simultaneous band, the cross-over; or why not), and the
    tasks only one of them solved. Runs of different slices: BadInput."""
    from seqk.analysis.compare import compare as build

    extra = {} if seed is None else {"seed": seed}
    return build(run_a, run_b, db, errors_as_failures=errors_as_failures, **extra)


def compare_by(runs: Sequence[str] = (), db: Db = None, *, by: str, benchmark: str | None = None,
               model: str | None = None, errors_as_failures: bool = False,
               seed: int | None = None) -> GroupedComparison:
    """What `seqk report --compare --by BY` prints: every pair of the runs (ids, globs, prefixes;
    default all) of a slice that differ along `by` (model, feedback, critic or judge) and share the
    rest, a − b at the smaller K with interval, p and Benjamini–Hochberg q across the table, and a
    ranking with rank intervals where more than two runs compete."""
    from seqk.analysis.grouped import compare_by

    extra = {} if seed is None else {"seed": seed}
    return compare_by(runs, db, by=by, benchmark=benchmark, model=model, errors_as_failures=errors_as_failures,
                 **extra)


def status(runs: Sequence[str] = (), db: Db = None) -> list[RunStatus]:
    """Each run's progress, errors, tokens and cost (what `seqk status` prints)."""
    from seqk.analysis.status import status

    return status(runs, db)


def inspect(run: str, db: Db = None, *, task_index: int | None = None, task_id: str | None = None) -> Trajectory:
    """One task's whole trajectory: every attempt with its prompt, output, verdict, feedback, calls."""
    from seqk.analysis.status import inspect

    return inspect(run, db, task_index=task_index, task_id=task_id)


def query(sql: str, db: Db = None) -> SqlResult:
    """One read-only SQL statement over the database's tables and views (what `seqk sql` runs;
    named `query` because `seqk.sql` is the package of seqk's own SQL files)."""
    from seqk.analysis.status import read_query

    return read_query(sql, db)


def export_runs(runs: Sequence[str] = (), db: Db = None, *,
                to: str | os.PathLike[str] | None = None) -> list[ExportResult]:
    """Each run's seq_k folder tree under `to` (default: the database's folder)."""
    from seqk.io.export import export_runs

    return export_runs(runs, db, to=to)


def export_parquet(runs: Sequence[str] = (), db: Db = None, *, to: str | os.PathLike[str]) -> dict[str, int]:
    """Runs, tasks, attempts and calls as hive-partitioned Parquet under `to`; rows per table."""
    from seqk.io.parquet import export_parquet

    return export_parquet(runs, db, to=to)


def plan(variant: str | os.PathLike[str] | RunSpec, db: Db = None, *, lift: float | None = None,
         overrides: dict[str, Any] | None = None, labels: dict[str, str] | None = None) -> Plan:
    """What `seqk plan VARIANT` prints, as data: the run's state, tasks, attempts and calls left,
    cost, budget, power against pass@k (and the tasks a `lift` needs), the prompt attempt 2 would
    see, and what `seqk run` would refuse before writing anything (`refusal`)."""
    from seqk import store
    from seqk.config import runspec
    from seqk.run import preflight
    from seqk.run.budget import first_attempt_need, gate_for
    from seqk.run.plan import plan_run

    if isinstance(variant, runspec.RunSpec):
        spec, settings = variant, runspec.RunSettings()
    else:
        spec, settings = runspec.load_with_settings(Path(variant), overrides or {}, labels or {})
    # What `seqk run` would refuse, before the plan prices anything (a price may import litellm).
    preflight.before_plan(spec)
    database = store.open(settings.database(db))
    found = plan_run(spec, database, lift=lift)
    gate = gate_for(spec, database)
    if gate is not None:
        import asyncio

        found.budget = gate.lines(asyncio.run(first_attempt_need(gate)))
    return found


def plan_sweep(sweep: str | os.PathLike[str] | Sweep, db: Db = None, *, overrides: dict[str, Any] | None = None,
               labels: dict[str, str] | None = None) -> SweepPlan:
    """What `seqk plan SWEEP` prints: each cell's plan (its run, attempts, calls, cost, and what
    `seqk run` would refuse), before anything is spent."""
    from seqk.config.sweep import load_sweep
    from seqk.run import preflight
    from seqk.run.plan import plan_cells

    cells = load_sweep(Path(sweep), overrides, labels) if isinstance(sweep, str | os.PathLike) else sweep
    found = plan_cells(cells, db)
    for _, cell_plan in found.cells:
        try:
            preflight.before_plan(cell_plan.spec)
        except SeqkError as exc:
            cell_plan.refusal = exc
    return found


@dataclass
class Rejudged:
    """What one `rejudge` did."""

    spec: RunSpec
    """The re-judging run (a new run id, resumable like any)."""
    result: RunResult
    judges: JudgeComparison
    """The new judge against the source run's on the same answers."""


def rejudge(run: str, db: Db = None, *, judge: RoleSpec, first_attempt_only: bool = False, concurrency: int = 16,
            observer_for: Callable[[RunSpec], RunObserver | None] | None = None) -> Rejudged:
    """Grade a pass@k run's stored answers again with `judge` (seqk.run.rejudge), calling no actor;
    then compare the two judges. `observer_for(spec)` gives the observer of the re-judging run."""
    from seqk.analysis.judges import compare_judges
    from seqk.run.rejudge import rejudge, rejudge_spec

    spec = rejudge_spec(run, judge, first_attempt_only=first_attempt_only, concurrency=concurrency, db=db)
    result = rejudge(spec, db, observer_for(spec) if observer_for else None)
    return Rejudged(spec, result, compare_judges(spec.run_id, db=db))


def judges(run_a: str, run_b: str | None = None, db: Db = None) -> JudgeComparison:
    """What `seqk judges` prints: two runs' judges (or a re-judging run and its source) on identical
    answers: agreement, flips, Cohen's kappa (seqk.analysis.judges)."""
    from seqk.analysis.judges import compare_judges

    return compare_judges(run_a, run_b, db)


def _totals(run_id: str, db: Database) -> RunTotals:
    """What the run holds now (sql/status.sql `run_status`), every invocation counted."""
    from seqk.analysis.status import status as rows
    from seqk.run.observer import RunTotals

    [row] = rows([run_id], db)
    return RunTotals(tasks=row["n_tasks"], tasks_finished=row["n_finished"], tasks_passed=row["n_passed"],
                     attempts=row["n_valid_attempts"], attempts_errored=row["n_error_attempts"],
                     cost_usd=row["cost_usd"])
