"""`seqk` commands that report on runs and move them: report, export, import, upload, rejudge,
and view (the web viewer, seqk/view/).
They register on the app of seqk/cli/app.py, which seqk/cli/__init__.py runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from seqk.cli.app import DbOption, app, check_choice, check_file_target, check_folder
from seqk.cli.app import console as _console
from seqk.render.console import print_limits as _print_limits


@app.command()
def rejudge(
    run: Annotated[str, typer.Argument(help="The pass@k run whose stored answers are graded again.")],
    judge_model: Annotated[str | None, typer.Option(
        help="The new judge (omit for a non-LLM verifier: its current version grades again).")] = None,
    judge_api_base: Annotated[str | None, typer.Option(
        help="OpenAI-compatible server of the new judge.")] = None,
    judge_api_key_env: Annotated[str | None, typer.Option(
        help="Name of the variable holding the new judge's key.")] = None,
    judge_max_tokens: Annotated[int | None, typer.Option(help="Cap on the judge's output tokens.")] = None,
    first_attempt_only: Annotated[bool, typer.Option(
        "--first-attempt-only", help="Only attempt 1 of each task (the one way to re-judge a seq@k run).")] = False,
    concurrency: Annotated[int, typer.Option(help="Answers judged at once.")] = 16,
    db: DbOption = None,
) -> None:
    """Grade a pass@k run's stored answers again with another judge, calling no actor; then
    compare the two judges (a new run, resumable like any).

    Example: seqk rejudge toyjudge-plain/passk/mock__actor/mock__judge/binary --judge-model openai/gpt-4.1
    """
    from seqk import api
    from seqk.models.role import RoleSpec
    from seqk.render.console import RunProgress, print_run_summary
    from seqk.render.judges import judge_lines
    from seqk.run import signals

    judge = RoleSpec(role="judge", model=judge_model, temperature=0.0 if judge_model else None,
                     max_tokens=judge_max_tokens, api_base=judge_api_base, api_key_env=judge_api_key_env)
    out, err = _console(), _console(stderr=True)
    views: list[RunProgress] = []

    def view_for(spec: Any) -> RunProgress:
        views.append(RunProgress(err, spec, False))
        return views[-1]

    with signals.outlast(lambda: any(v.stopping for v in views)):
        try:
            done = api.rejudge(run, db, judge=judge, first_attempt_only=first_attempt_only,
                               concurrency=concurrency, observer_for=view_for)
        finally:
            for view in views:
                view.stop()
    result = done.result
    print_run_summary(out, done.spec, result, db)
    _print_limits(out, result.model_limits)
    for line in judge_lines(done.judges):
        out.print(line, markup=False, highlight=False)
    if result.interrupted:
        out.print("[yellow]Interrupted[/]: finished verdicts are saved; run the same command to resume.")
        raise typer.Exit(130)
    if result.stopped:
        err.print(f"[red]error:[/] the run stopped: {result.stopped}", highlight=False)
        raise typer.Exit(1)


@app.command()
def judges(
    runs: Annotated[list[str], typer.Argument(
        metavar="RUN_A [RUN_B]", help="Two runs (ids, globs or prefixes), or one re-judging run: compared "
                                      "with its source.")],
    db: DbOption = None,
) -> None:
    """Compare the judges of two runs (or a re-judging run and its source) on identical answers:
    agreement, flips, Cohen's kappa.

    Example: seqk judges toyjudge-plain/passk/mock__actor/mock__judge2.rejudge.mock__judge1/binary
    """
    from seqk import api
    from seqk.render.judges import judge_lines

    if len(runs) > 2:
        raise typer.BadParameter("takes two run ids, or one re-judging run", param_hint="'RUN_A [RUN_B]'")
    for line in judge_lines(api.judges(runs[0], runs[1] if len(runs) == 2 else None, db)):
        _console().print(line, markup=False, highlight=False)


@app.command()
def report(
    runs: Annotated[list[str] | None, typer.Argument(
        metavar="RUN_ID", help="Run ids, globs or prefixes (default: all).")] = None,
    compare: Annotated[bool, typer.Option(
        "--compare", help="One row per (benchmark, model, feedback mode): seq@k and pass@k side "
                          "by side, with the lift.")] = False,
    benchmark: Annotated[str | None, typer.Option(help="Only runs of this benchmark (or benchmark slice).")] = None,
    model: Annotated[str | None, typer.Option(help="Only runs of this actor model.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | markdown | csv | json")] = "table",
    html: Annotated[Path | None, typer.Option(
        help="Also write one self-contained HTML page of charts (works offline).")] = None,
    png: Annotated[Path | None, typer.Option(help="Also write the charts as a PNG.")] = None,
    errors_as_failures: Annotated[bool, typer.Option(
        "--errors-as-failures",
        help="Count errored attempts as failures instead of leaving them out.")] = False,
    seed: Annotated[int | None, typer.Option(
        help="Seed of the task-level bootstrap (default fixed; printed with the figures).")] = None,
    by: Annotated[str | None, typer.Option(
        "--by", metavar="model|feedback|critic|judge",
        help="With --compare: every pair of runs of a slice that differ along this axis, with "
             "Benjamini–Hochberg q-values and a ranking with rank intervals.")] = None,
    db: DbOption = None,
) -> None:
    """Show metric@1..K on success with 95% intervals, ΔSeq@K, the feedback lift over pass@k, cost.

    Example: seqk report --compare --html report.html
    """
    if by is not None:
        _report_by(by, runs or [], compare=compare, benchmark=benchmark, model=model, fmt=fmt,
                   errors_as_failures=errors_as_failures, seed=seed, db=db, charts=bool(html or png))
        return
    from seqk import api
    from seqk.analysis import report as reports

    check_file_target(html, "--html")
    check_file_target(png, "--png")
    check_choice(fmt, "--format", reports.FORMATS)
    extra = {} if seed is None else {"seed": seed}
    rep = api.report(runs or [], db, compare=compare, benchmark=benchmark, model=model,
                     errors_as_failures=errors_as_failures, **extra)
    if fmt == "json":
        typer.echo(reports.to_json(rep))
    elif fmt == "csv":
        typer.echo(reports.to_csv(rep), nl=False)
    elif fmt == "markdown":
        typer.echo(reports.to_markdown(rep), nl=False)
    else:
        from seqk.render.text import to_text

        _console().print(to_text(rep), markup=False, end="")
    if html or png:
        from seqk.render import charts

        err = _console(stderr=True)
        for target in (html, png):
            if target is not None:  # a missing folder is made, as --db's is (checked writable above)
                target.absolute().parent.mkdir(parents=True, exist_ok=True)
        if html:
            charts.save_html(rep, html)
            err.print(f"wrote {html}")
        if png:
            charts.save_png(rep, png)
            err.print(f"wrote {png}")



def _report_by(by: str, runs: list[str], *, compare: bool, benchmark: str | None, model: str | None, fmt: str,
               errors_as_failures: bool, seed: int | None, db: str | None, charts: bool) -> None:
    """`report --compare --by AXIS`: the grouped comparison (seqk/analysis/grouped.py)."""
    from seqk import api
    from seqk.analysis import grouped
    from seqk.analysis.report import FORMATS

    check_choice(by, "--by", tuple(grouped.AXES))
    if not compare:
        raise typer.BadParameter("--by groups the pairs of --compare: give both", param_hint="'--by'")
    if charts:
        raise typer.BadParameter("--by prints a table; it takes no --html or --png", param_hint="'--by'")
    check_choice(fmt, "--format", FORMATS)
    extra = {} if seed is None else {"seed": seed}
    result = api.compare_by(runs, db, by=by, benchmark=benchmark, model=model,
                            errors_as_failures=errors_as_failures, **extra)
    if fmt == "json":
        typer.echo(grouped.to_json(result))
    elif fmt == "csv":
        typer.echo(grouped.to_csv(result), nl=False)
    else:
        from seqk.render.compare import grouped_markdown, grouped_text

        text = grouped_markdown(result) if fmt == "markdown" else grouped_text(result)
        _console().print(text, markup=False, end="")


# --- export commands (seqk/io/export.py: export, import, upload) go here ---


@app.command()
def export(
    runs: Annotated[list[str] | None, typer.Argument(
        metavar="RUN_ID", help="Run ids, globs or prefixes (default: all).")] = None,
    to: Annotated[Path | None, typer.Option(
        "--to", metavar="FOLDER", help="Folder to write the run folders under (default: the database's "
                     "folder, runs/).")] = None,
    parquet: Annotated[Path | None, typer.Option(
        "--parquet", metavar="FOLDER", help="Instead, write the runs, tasks, attempts and calls tables as "
                          "Parquet under this folder, hive-partitioned by benchmark and "
                          "run.")] = None,
    db: DbOption = None,
) -> None:
    """Export runs as the canonical seq_k folder tree, <to>/<run id>/ (or as Parquet).

    Example: seqk export toy-plain/seqk/mock__actor/deterministic/binary --to runs
    """
    from seqk import api

    check_folder(to, "--to")
    check_folder(parquet, "--parquet")
    if parquet is not None:
        counts = api.export_parquet(runs or [], db, to=parquet)
        typer.echo(f"wrote Parquet under {parquet}: "
                   + ", ".join(f"{n} {table} rows" for table, n in counts.items()))
        return
    for result in api.export_runs(runs or [], db, to=to):
        typer.echo(result.describe())


@app.command("import")
def import_(
    folder: Annotated[Path, typer.Argument(
        metavar="FOLDER", help="A seq_k-style folder tree: one run folder, or a folder holding many.")],
    db: DbOption = None,
) -> None:
    """Import seq_k-style run folders into the database, so old runs join reports.

    Example: seqk import runs/clbench-dkr --db runs/seqk.duckdb
    """
    from seqk import api

    for result in api.import_runs(folder, db):
        typer.echo(result.describe())


@app.command()
def upload(
    run: Annotated[str, typer.Argument(
        metavar="RUN_ID", help="Run id, e.g. toy-plain/seqk/mock__actor/deterministic/binary.")],
    bucket: Annotated[str | None, typer.Option(
        "--bucket", metavar="BUCKET", help="S3 bucket (default: $SEQK_S3_BUCKET). The endpoint comes from "
                         "$AWS_ENDPOINT_URL.")] = None,
    from_: Annotated[Path | None, typer.Option(
        "--from", metavar="FOLDER", help="Folder holding the exported run folders (default: the database's "
                       "folder, runs/).")] = None,
    db: DbOption = None,
) -> None:
    """Upload an exported run folder to s3://<bucket>/<run id>/ (not config.json) and verify it.

    Example: seqk upload toy-plain/seqk/mock__actor/deterministic/binary --bucket my-bucket
    """
    from seqk import api
    from seqk.io.publish import describe_upload

    typer.echo(describe_upload(api.upload_run(run, db, bucket=bucket, root=from_)))


@app.command()
def view(
    db: DbOption = None,
    host: Annotated[str, typer.Option(metavar="HOST", help="Address to listen on (loopback by default: "
                                                           "the viewer has no login).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(metavar="N", help="Port to listen on (0: any free port).")] = 8000,
    bundle: Annotated[Path | None, typer.Option(
        "--bundle", metavar="FOLDER", help="Instead of serving, write the pages as a static site into "
                                           "this folder (opens from file://, publishable).")] = None,
    runs: Annotated[list[str] | None, typer.Option(
        "--runs", metavar="RUN_ID", help="With --bundle: only these runs (ids, globs or prefixes; "
                                         "repeatable). Default: every run.")] = None,
    max_tasks: Annotated[int, typer.Option(
        metavar="N", help="With --bundle: the story pages of at most the first N tasks of each run.")] = 200,
) -> None:
    """Read runs in a browser: every run, each run's curve and tasks, each task's story beside
    its pass@k samples; refreshes while a run writes. Read-only.

    Example: seqk view --db runs/seqk.duckdb --port 8000
    """
    from seqk import api

    if bundle is not None:
        check_folder(bundle, "--bundle")
        typer.echo(api.bundle(bundle, db, runs=runs or [], max_tasks=max_tasks).describe())
        return
    if runs:
        raise typer.BadParameter("--runs chooses what --bundle writes; the server shows every run")

    def ready(url: str, database: Any) -> None:
        typer.echo(f"seqk view: serving {database} at {url} (Ctrl-C stops)")

    api.view(db, host=host, port=port, on_ready=ready)
