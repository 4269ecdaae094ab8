"""The `seqk` command line: each command parses its arguments, calls the library
function of the same name, and renders what it returns. Running and looking at runs live
here (run, status, inspect, sql, plan); checking models before a run in seqk/cli/checks.py
(probe, doctor); reporting on runs and moving them (rejudge, report, export, import, upload,
view) in seqk/cli/report.py; the lake's upkeep in seqk/cli/lake.py, all on one app. Library
errors (seqk.errors.SeqkError) and usage errors become one clean `error: ...` line and
exit code 2 (seqk/cli/app.py).

Heavy imports (duckdb, litellm, boto3, altair) happen inside commands, so
`seqk --help` stays fast.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from seqk.cli.app import DbOption, SetOption, app, check_choice, resume_gc
from seqk.cli.app import console as _console
from seqk.cli.sweep import plan_sweep, run_sweep, sweep_file
from seqk.render.console import RunProgress
from seqk.render.console import print_limits as _print_limits

SQL_FORMATS = ("table", "csv", "json")


class _RunProgress(RunProgress):
    """`seqk run`'s progress view, which also ends start-up: collection resumes (seqk/__main__.py)
    once the run is registered, just before its first calls."""

    def prepared(self, prepared: Any) -> None:
        resume_gc()
        super().prepared(prepared)


@app.command()
def run(
    variant: Annotated[Path, typer.Argument(
        metavar="VARIANT", help="Variant YAML, e.g. variants/arcagi2/seqk.cell_match.yaml")],
    db: DbOption = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Print each attempt's exact prompt and output (cut at console_char_limit).")] = False,
    concurrency: Annotated[int | None, typer.Option(
        metavar="N", help="Tasks in flight at once (overrides the variant).")] = None,
    max_tasks: Annotated[int | None, typer.Option(
        metavar="N", help="Run only the first N tasks (overrides the variant).")] = None,
    no_export: Annotated[bool, typer.Option(
        "--no-export", help="Do not export the run's folder tree at the end.")] = False,
    no_upload: Annotated[bool, typer.Option(
        "--no-upload", help="Do not upload to S3 at the end, whatever the variant says.")] = False,
    restart: Annotated[bool, typer.Option(
        "--restart", help="With a larger k, restart the run and discard its paid attempts "
                          "(as `continue: false` does).")] = False,
    no_wait: Annotated[bool, typer.Option(
        "--no-wait", help="Batch mode: submit the next round of batches and return; a later "
        "`seqk run` of the same variant collects them.")] = False,
    executor: Annotated[str | None, typer.Option(
        metavar="local|ray", help="Where attempts run (overrides the variant's executor:).")] = None,
    ray_address: Annotated[str | None, typer.Option(
        metavar="ADDR", help="Ray cluster for --executor ray (default: start a local one).")] = None,
    sets: SetOption = None,
    parallel: Annotated[int, typer.Option(
        metavar="N", min=1, help="A sweep: run N cells at once, each in a process of its own.")] = 1,
) -> None:
    """Run one variant, or every cell of a sweep file (resuming what the database already holds).

    Example: seqk run variants/arcagi2/seqk.cell_match.yaml --db runs/seqk.duckdb --set k=3
    """
    from seqk import api
    from seqk.config import runspec
    from seqk.config.overrides import parse_sets
    from seqk.render.console import print_run_summary
    from seqk.run import signals

    overrides, labels = parse_sets(sets or [])
    if concurrency is not None:
        overrides["concurrency"] = concurrency
    if max_tasks is not None:
        overrides["max_tasks"] = max_tasks
        overrides["task_indices"] = None
    if restart:
        overrides["continue"] = False
    if executor is not None:
        check_choice(executor, "--executor", ("local", "ray"))
        overrides["executor"] = executor
    if ray_address is not None:
        overrides["ray_address"] = ray_address
    if sweep_file(variant):
        return run_sweep(variant, db, overrides, labels, parallel=parallel, verbose=verbose, no_wait=no_wait,
                         no_export=no_export, no_upload=no_upload, progress=_RunProgress)
    if parallel > 1:
        raise typer.BadParameter("is for a sweep file (one with matrix:), whose cells it runs N at once",
                                 param_hint="'--parallel'")
    spec, settings = runspec.load_with_settings(variant, overrides, labels)
    for note in spec.notes:
        _console(stderr=True).print(f"[dim]note: {note}[/]")
    # The console is made (rich imported) at its first use: after the run's first calls.
    progress_view = _RunProgress(lambda: _console(stderr=True), spec, verbose, settings.console_char_limit)
    with signals.outlast(lambda: progress_view.stopping):
        try:
            outcome = api.run_variant(spec, db, settings=settings, export=not no_export,
                                      upload=not no_upload, observer=progress_view, no_wait=no_wait)
        finally:
            progress_view.stop()
    result = outcome.result
    out = _console()
    deferred = getattr(result, "deferred", 0)  # a RoundsResult's, in batch mode
    if deferred:
        out.print(f"submitted: {deferred} batch(es) in flight at the provider, "
                  f"{result.attempts_written} attempts written so far; run `seqk run {variant}` later "
                  "to collect them (`seqk status` shows their state and age)", markup=False, highlight=False)
        return
    print_run_summary(out, spec, result, outcome.db)
    _print_limits(out, result.model_limits)
    if result.interrupted:
        out.print("[yellow]Interrupted[/]: finished attempts are saved; run the same command to resume.")
        raise typer.Exit(130)
    for line in outcome.messages:
        out.print(line, markup=False, highlight=False)
    if outcome.upload_error is not None:
        raise outcome.upload_error
    if result.stopped_by == "budget":
        _console(stderr=True).print(f"[yellow]stopped:[/] {result.stopped}", highlight=False)
        raise typer.Exit(3)
    if result.stopped:
        _console(stderr=True).print(f"[red]error:[/] the run stopped: {result.stopped}", highlight=False)
        raise typer.Exit(1)
    if result.attempts_run and result.attempts_errored == result.attempts_run:
        _console(stderr=True).print(f"[red]error:[/] every one of the {result.attempts_run} attempts of "
                                    "this invocation failed with an error (see above)", highlight=False)
        raise typer.Exit(1)


@app.command()
def status(
    runs: Annotated[list[str] | None, typer.Argument(
        metavar="RUN_ID", help="Run ids, globs or prefixes (default: all).")] = None,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Show every run's progress, errors, tokens and cost (works while a run writes).

    Example: seqk status 'arcagi2-evaluation/*'
    """
    from seqk import api

    rows = api.status(runs or [], db)
    if as_json:
        typer.echo(json.dumps(rows, default=str, indent=2))
        return
    from seqk.render.status import batches_table, status_view

    out = _console()
    out.print(status_view(rows, out.width))
    batches = batches_table(rows)
    if batches is not None:
        out.print(batches)


@app.command()
def inspect(
    run: Annotated[str, typer.Argument(metavar="RUN_ID", help="Run id (or a glob/prefix matching one run).")],
    task_index: Annotated[int | None, typer.Option(metavar="N", help="1-based canonical task index.")] = None,
    task_id: Annotated[str | None, typer.Option(metavar="ID", help="The benchmark's task id.")] = None,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Print a task's whole trajectory: prompts, outputs, verdicts, judge calls, feedback, tokens.

    Example: seqk inspect arcagi2-evaluation/seqk/mock__wrong/deterministic/cell_match --task-index 1
    """
    from seqk import api

    t = api.inspect(run, db, task_index=task_index, task_id=task_id)
    if as_json:
        typer.echo(json.dumps({"run": t.run, "task": t.task, "attempts": t.attempts},
                              default=str, indent=2))
        return
    from seqk.render.inspect import print_trajectory

    print_trajectory(_console(), t)


@app.command()
def sql(
    statement: Annotated[str, typer.Argument(
        metavar="QUERY", help="One SQL statement (the database is opened read-only); "
                              "several are refused.")],
    db: DbOption = None,
    fmt: Annotated[str, typer.Option("--format", metavar="FORMAT", help="table | csv | json")] = "table",
) -> None:
    """Run a read-only SQL query against the database and print the result.

    Example: seqk sql "SELECT run_id, k FROM runs"
    """
    from seqk.api import query

    check_choice(fmt, "--format", SQL_FORMATS)
    columns, rows = query(statement, db)
    if fmt == "json":
        typer.echo(json.dumps([dict(zip(columns, r, strict=True)) for r in rows], default=str, indent=2))
    elif fmt == "csv":
        import csv

        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows(rows)
    else:
        from seqk.render.table import sql_table

        _console().print(sql_table(columns, rows))


@app.command()
def plan(
    variant: Annotated[Path, typer.Argument(metavar="VARIANT", help="Variant YAML to check and plan.")],
    lift: Annotated[float | None, typer.Option(
        "--lift", metavar="D", help="seq@k: also print the tasks needed to detect a lift of D over "
                                    "pass@k with 80% power.")] = None,
    db: DbOption = None,
    restart: Annotated[bool, typer.Option(
        "--restart", help="Plan as `seqk run --restart` would run (a larger k restarts the run).")] = False,
    sets: SetOption = None,
) -> None:
    """Validate a variant (or a sweep file's every cell) and show what a run would do: run id,
    roles, tasks, calls left, cost, and the prompt attempt 2 would see; for a study file, the
    tasks and US$ to a decision beside a fixed-n test.

    Example: seqk plan variants/arcagi2/seqk.cell_match.yaml --set feedback_mode=none
    """
    from seqk import api
    from seqk.config.overrides import parse_sets
    from seqk.config.study import is_study_file
    from seqk.render.plan import print_plan

    if is_study_file(variant):
        study.plan(variant, db, lift)
        return
    overrides, labels = parse_sets(sets or [])
    if restart:
        overrides["continue"] = False
    if sweep_file(variant):
        return plan_sweep(variant, db, overrides, labels)
    found = api.plan(variant, db, lift=lift, overrides=overrides, labels=labels)
    print_plan(_console(), found)
    if found.refusal is not None:
        raise found.refusal


# After this module's commands, so `seqk --help` lists running before reporting.
from seqk.cli import checks, compare, lake, report, study  # noqa: E402, F401 - registers probe, doctor; compare; lake; rejudge, report, export, import, upload; study


def main() -> None:
    """Entry point of the `seqk` console script."""
    logging.basicConfig(level=logging.WARNING, format="seqk: %(levelname)s: %(message)s")
    try:
        try:
            app()
        finally:
            sys.stdout.flush()  # here, so a closed pipe is caught below and not at exit
    except BrokenPipeError:
        from seqk.cli.app import quiet_stdout

        quiet_stdout()
        sys.exit(0)
