"""`seqk probe` and `seqk doctor`: is a model reachable, and does the embedded one run here,
before a run spends anything."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from seqk.cli.app import app
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
