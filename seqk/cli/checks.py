"""`seqk probe`, `seqk doctor` and `seqk limits`: is a model reachable, does the embedded one run
here, and where each endpoint's limit on calls in flight starts, before a run spends anything."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from seqk.cli.app import DbOption, app
from seqk.cli.app import console as _console


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


@app.command()
def limits(
    db: DbOption = None,
    reset: Annotated[bool, typer.Option(
        "--reset", help="Forget them (or those of --model / --api-base): the next run starts at 4.")] = False,
    model: Annotated[str | None, typer.Option(help="Only this model id.")] = None,
    api_base: Annotated[str | None, typer.Option(help="Only this server.")] = None,
) -> None:
    """Show the limit on calls in flight each endpoint last sustained, where the next run
    against it starts (halved per day of age, capped by the role's max_concurrency).

    Example: seqk limits --reset --model openai/bench
    """
    from seqk.render.console import age_text
    from seqk.run.limits import list_limits, reset_limits

    out = _console()
    if reset:
        forgot = reset_limits(db, model, api_base)
        out.print(f"forgot {len(forgot)} remembered limit(s): the next run against "
                  f"{'them' if len(forgot) != 1 else 'it'} slow-starts from 4", highlight=False)
        return
    shown = [r for r in list_limits(db) if (model is None or r.model == model)
             and (api_base is None or r.api_base in (api_base, api_base.rstrip("/")))]
    if not shown:
        out.print("no endpoint limit remembered yet (a run against a server records one)")
    for r in shown:
        where = r.api_base or "(the provider's own endpoint)"
        if r.sustained is None:
            out.print(f"{r.model} at {where}: forgotten {age_text(r.age_hours * 3600)} ago; "
                      "the next run starts at 4", markup=False, highlight=False)
            continue
        how = f"bounded by {r.rate_limited} 429s" if r.bounded else "no 429"
        out.print(f"{r.model} at {where}: {r.sustained} calls in flight ({how}), "
                  f"{age_text(r.age_hours * 3600)} ago; the next run starts at {r.start or 4}",
                  markup=False, highlight=False)
