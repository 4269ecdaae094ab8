"""The `seqk` command line: each command parses its arguments, calls the library
function of the same name, and renders what it returns. Running and looking at runs live
here (run, plan, probe, doctor, status, inspect, sql); reporting on runs and moving them
(report, export, import, upload, rejudge) in seqk/cli_report.py, on the same app. Library
errors (seqk.errors.SeqkError) and usage errors become one clean `error: ...` line and
exit code 2 (seqk/cli_group.py).

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

from seqk.cli.app import DbOption, app, check_choice
from seqk.cli.app import console as _console
from seqk.render.console import print_limits as _print_limits

SQL_FORMATS = ("table", "csv", "json")


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
) -> None:
    """Run one variant (resuming what the database already holds).

    Example: seqk run variants/arcagi2/seqk.cell_match.yaml --db runs/seqk.duckdb
    """
    from seqk import api
    from seqk.render.console import RunProgress, print_run_summary

    overrides: dict[str, Any] = {}
    if concurrency is not None:
        overrides["concurrency"] = concurrency
    if max_tasks is not None:
        overrides["max_tasks"] = max_tasks
        overrides["task_indices"] = None
    spec = api.load_variant(variant, overrides)
    for note in spec.notes:
        _console(stderr=True).print(f"[dim]note: {note}[/]")
    out = _console()
    progress_view = RunProgress(_console(stderr=True), spec, verbose, out)
    _ignore_signals_once_stopping(progress_view)
    outcome = api.run_variant(spec, db, export=not no_export, upload=not no_upload,
                              on_event=progress_view.on_event, on_prepared=progress_view.on_prepared,
                              on_interrupt=progress_view.on_interrupt)
    progress_view.stop()
    result = outcome.result
    print_run_summary(out, spec, result, outcome.db)
    _print_limits(out, result.model_limits)
    if result.interrupted:
        out.print("[yellow]Interrupted[/]: finished attempts are saved; run the same command to resume.")
        # Ignored, not handled: Python resets handled signals to their default while it shuts
        # down, and one more Ctrl-C then would kill the process instead of exiting with 130.
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
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


def _ignore_signals_once_stopping(progress_view: Any) -> None:
    """After the first Ctrl-C or SIGTERM the run stops and writes what finished; more signals
    from an impatient user must not kill the process before it says so. Before that, they
    do what they always do."""
    import os
    import signal

    def handler(signum: int, frame: Any) -> None:
        if progress_view.interrupted:
            return
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, handler)


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
    from seqk.analysis.status import status as status_of

    rows = status_of(db, runs or [])
    if as_json:
        typer.echo(json.dumps(rows, default=str, indent=2))
        return
    from rich.table import Table

    table = Table(title=f"{len(rows)} run(s)")
    for col in ("run", "metric", "k", "tasks", "finished", "passed", "attempts", "errors",
                "tokens in/out", "cost $", "updated"):
        table.add_column(col)
    for r in rows:
        cost = "unknown" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}"
        if r["n_unpriced_calls"] and r["cost_usd"] is not None:
            cost = f"≥{cost} ({r['n_unpriced_calls']} unpriced)"
        table.add_row(r["run_id"], r["metric"], str(r["k"]), str(r["n_tasks"]),
                      str(r["n_finished"]), str(r["n_passed"]), str(r["n_valid_attempts"]),
                      str(r["n_error_attempts"]), f"{r['input_tokens']}/{r['output_tokens']}",
                      cost, str(r["updated_at"])[:19])
    _console().print(table)


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
    from rich.markup import escape

    from seqk.analysis.status import inspect as inspect_task
    from seqk.render.console import cut

    t = inspect_task(run, task_index=task_index, task_id=task_id, db=db)
    if as_json:
        typer.echo(json.dumps({"run": t.run, "task": t.task, "attempts": t.attempts},
                              default=str, indent=2))
        return
    out = _console()
    out.print(f"[bold]{t.run['run_id']}[/] · task {t.task['task_index']} ({t.task['task_id']}) · "
              f"{t.run['metric']} k={t.run['k']}")
    for a in t.attempts:
        tag = "" if a["counts"] else "  [dim](superseded: retried later)[/]"
        headline, message = _error_text(a["error"]) if a["status"] == "error" else ("", None)
        verdict = (f"[yellow]ERROR[/] {escape(headline)}" if a["status"] == "error"
                   else ("[green]PASS[/]" if a["success"] else "[red]FAIL[/]") + f" score={a['score']}")
        chain = f"chain {a['chain_index']} · " if t.run["chains"] > 1 else ""
        out.print(f"\n[bold]━━ {chain}attempt {a['attempt_index']} of {a['k']}[/] {verdict}{tag}")
        if message:
            out.print(f"  {message}", markup=False)
        out.print("[cyan]prompt[/]", markup=True)
        out.print(a["prompt"] or "", markup=False)
        out.print("[cyan]output[/]")
        out.print(a["output"] if a["output"] is not None else "(none)", markup=False)
        if a["raw_eval_output"]:
            out.print("[cyan]judge[/]")
            out.print(a["raw_eval_output"], markup=False)
        if a["feedback"] is not None:
            out.print("[cyan]feedback[/]")
            out.print(a["feedback"], markup=False)
        for c in a["calls"]:
            cost = "cost unknown" if c["cost_usd"] is None else f"${c['cost_usd']:.6f}"
            line = f"  call {c['call_index']} {c['role']} {c['model']}: "
            if c["error"]:  # a failed call has no tokens to show
                line += f"failed after {c['retries']} retries: {c['error']}"
            else:
                line += (f"in={c['input_tokens']} cached={c['cached_tokens']} "
                         f"thinking={c['thinking_tokens']} out={c['output_tokens']} {cost} "
                         f"retries={c['retries']}")
            out.print(line, markup=False)
            if c["role"] != "actor":
                out.print(f"    prompt: {cut(c['prompt'], 400)}", markup=False)
                out.print(f"    output: {cut(c['output'], 400)}", markup=False)


def _error_text(error: Any) -> tuple[str, str | None]:
    """An attempt's error as a headline (stage, type, status code) and its message."""
    if not isinstance(error, dict):
        return "", (None if error is None else str(error))
    stage, kind, status = error.get("stage"), error.get("type") or "error", error.get("status_code")
    headline = (f"{stage}: {kind}" if stage else kind) + (f" (status {status})" if status is not None else "")
    return headline, error.get("message")


@app.command()
def sql(
    query: Annotated[str, typer.Argument(
        metavar="QUERY", help="One SQL statement (the database is opened read-only).")],
    db: DbOption = None,
    fmt: Annotated[str, typer.Option("--format", metavar="FORMAT", help="table | csv | json")] = "table",
) -> None:
    """Run a read-only SQL query against the database and print the result.

    Example: seqk sql "SELECT run_id, k FROM runs"
    """
    from seqk.analysis.status import sql as run_sql

    check_choice(fmt, "--format", SQL_FORMATS)
    columns, rows = run_sql(query, db)
    if fmt == "json":
        typer.echo(json.dumps([dict(zip(columns, r, strict=True)) for r in rows], default=str, indent=2))
    elif fmt == "csv":
        import csv

        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows(rows)
    else:
        from rich.table import Table

        table = Table(caption=f"{len(rows)} row(s)")
        for c in columns:
            table.add_column(c)
        for r in rows:
            table.add_row(*("NULL" if v is None else str(v) for v in r))
        _console().print(table)


@app.command()
def plan(
    variant: Annotated[Path, typer.Argument(metavar="VARIANT", help="Variant YAML to check and plan.")],
    lift: Annotated[float | None, typer.Option(
        "--lift", metavar="D", help="seq@k: also print the tasks needed to detect a lift of D over "
                                    "pass@k with 80% power.")] = None,
    db: DbOption = None,
) -> None:
    """Validate a variant and show what a run would do: run id, roles, tasks, calls left.

    Example: seqk plan variants/arcagi2/seqk.cell_match.yaml
    """
    from seqk.config import spec as runspec
    from seqk.run.plan import plan as make_plan

    spec = runspec.load(variant)
    p = make_plan(spec, db, lift=lift)
    out = _console()
    out.print(f"[bold]{p['run_id']}[/]  ({p['state']})")
    for role in ("actor", "judge", "critic"):
        out.print(f"  {role:6} {p['roles'][role] or '(none)'}")
    out.print(f"  tasks selected: {p['n_tasks']}, to run: {p['n_tasks_pending']}")
    if spec.mode.shows_grading_info:
        out.print(f"  [yellow]feedback mode {spec.feedback_mode} shows grading information to the actor: "
                  "results are not comparable with blind modes[/]")
    if spec.seq:
        out.print(f"  attempts to run: {p['attempts_min']} to {p['attempts_max']} "
                  f"(seq@k stops at a task's first success)")
        out.print(f"  actor calls: {p['attempts_min']}–{p['attempts_max']}; critic calls up to "
                  f"{p['critic_calls_max']}")
    else:
        out.print(f"  attempts to run: {p['attempts_max']} (pass@k: exactly k={spec.k} "
                  f"independent attempts per task)")
        out.print(f"  actor calls: {p['attempts_max']}; no critic calls (pass@k shows no feedback)")
    if not p["price_known"]:
        out.print(f"  actor cost: unknown (no price for {spec.actor.model})")
    else:
        high = ("unbounded: set max_tokens" if p["actor_cost_high"] is None
                else f"${p['actor_cost_high']:.4f}")
        out.print(f"  actor cost, rough (prompt chars/4; judge and critic not included): "
                  f"${p['actor_cost_low']:.4f} to {high}")
    from seqk.run.budget import gate_for

    gate = gate_for(spec, db)
    for line in gate.lines() if gate else []:
        out.print(f"  budget ({line.scope}): ${line.spent_usd:.4f} spent of ${line.budget_usd:.4f}, "
                  f"${max(line.remaining_usd, 0):.4f} left; next attempt ≈ ${line.next_attempt_usd:.4f}")
    power = p["power"]
    if power is not None:
        detectable = ("none: too few tasks" if power["detectable_lift"] is None
                      else f"{power['detectable_lift']:.3f}")
        out.print(f"  power vs pass@k (McNemar's test, Connor 1987; α = 0.05 two-sided, 80% power): "
                  f"smallest detectable lift on {power['n_tasks']} tasks: {detectable}")
        out.print(f"    discordance {power['discordance']:.3f}, {power['discordance_source']}",
                  markup=False)
        if power["lift"] is not None:
            out.print(f"  a lift of {power['lift']:g} needs {power['tasks_needed']} tasks "
                      f"(this variant selects {power['n_tasks']})")
    out.print(f"  fingerprint: {p['fingerprint'][:16]}…")
    for note in spec.notes:
        out.print(f"  note: {note}")
    from seqk.errors import ConfigError
    from seqk.models import credential_problems

    issues = credential_problems([spec.actor, spec.judge, spec.critic])
    if issues:
        raise ConfigError(spec.source, issues)


@app.command()
def probe(
    targets: Annotated[list[str], typer.Argument(
        help="A variant YAML (its roles' models), or model ids.", metavar="VARIANT | MODEL...")],
    api_base: Annotated[str | None, typer.Option(
        help="OpenAI-compatible server for the model ids given.")] = None,
    api_key_env: Annotated[str | None, typer.Option(
        help="Name of the variable holding that server's key.")] = None,
) -> None:
    """Call each distinct model once with a tiny prompt: latency, tokens, cost, or the error
    (exit 1 if any fails). Checks keys and endpoints before a run spends anything.

    Example: seqk probe variants/arcagi2/seqk.cell_match.yaml
    """
    from seqk import models
    from seqk.config import spec as runspec
    from seqk.models.role import RoleSpec

    if len(targets) == 1 and targets[0].endswith((".yaml", ".yml")):
        spec = runspec.load(Path(targets[0]))
        roles = [spec.actor, spec.judge, spec.critic]
    else:
        roles = [RoleSpec(role="actor", model=m, api_base=api_base, api_key_env=api_key_env)
                 for m in targets]
    results = models.probe(roles)
    out = _console()
    for r in results:
        where = f" at {r.api_base}" if r.api_base else ""
        head = f"{r.model}{where} ({', '.join(r.roles)})"
        if r.ok:
            cost = "cost unknown" if r.cost_usd is None else f"${r.cost_usd:.6f}"
            out.print(f"[green]ok[/]    {head}: {r.latency_s:.2f} s, {r.input_tokens} in / "
                      f"{r.output_tokens} out tokens, {cost}: {r.text!r}", highlight=False)
        else:
            out.print(f"[red]error[/] {head}: {r.error}", highlight=False)
    if not all(r.ok for r in results):
        raise typer.Exit(1)


@app.command()
def doctor(
    model: Annotated[str, typer.Argument(help="A local model id.")] = "local/smollm2-135m",
) -> None:
    """Check that the embedded model runs on this machine: load it in a worker process,
    generate a few tokens, and show the llama.cpp build's CPU features (exit 1 if it cannot run).

    Example: seqk doctor local/smollm2-135m
    """
    from seqk.models.local.doctor import doctor as check_model

    r = check_model(model)
    out = _console()
    out.print(f"[bold]{r.model}[/]  {r.path or ''}", highlight=False)
    if r.llama_cpp_python:
        out.print(f"  llama-cpp-python {r.llama_cpp_python}; build: {r.build_features}", markup=False)
    out.print(f"  this CPU: {' '.join(r.cpu_flags) or 'unknown'}", markup=False)
    if r.ok:
        out.print(f"  loaded in {r.load_s:.1f} s; generated {r.output_tokens} tokens at "
                  f"{r.tokens_per_s:.0f} tokens/s: {r.text!r}", markup=False)
        out.print(f"[green]ok[/]: {r.message}", highlight=False)
        return
    _console(stderr=True).print(f"[red]error:[/] {r.message}", highlight=False)
    raise typer.Exit(1)


# After this module's commands, so `seqk --help` lists running before reporting.
from seqk.cli import report  # noqa: E402, F401 - registers rejudge, report, export, import, upload


def main() -> None:
    """Entry point of the `seqk` console script."""
    logging.basicConfig(level=logging.WARNING, format="seqk: %(levelname)s: %(message)s")
    app()
