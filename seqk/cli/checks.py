"""`seqk probe`, `seqk doctor` and `seqk limits`: is a model reachable, does the embedded one run
here, and where each endpoint's limit on calls in flight starts, before a run spends anything."""

from __future__ import annotations

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
    from seqk import api
    from seqk.render.checks import print_probe

    results = api.probe(targets, api_base=api_base, api_key_env=api_key_env)
    print_probe(_console(), results)
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
    from seqk import api
    from seqk.render.checks import print_doctor

    r = api.doctor(model)
    print_doctor(_console(), r)
    if not r.ok:
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
    from seqk import api
    from seqk.render.checks import remembered_limit_lines

    out = _console()
    if reset:
        forgot = api.reset_limits(db, model=model, api_base=api_base)
        out.print(f"forgot {len(forgot)} remembered limit(s): the next run against "
                  f"{'them' if len(forgot) != 1 else 'it'} slow-starts from 4", highlight=False)
        return
    for line in remembered_limit_lines(api.limits(db, model=model, api_base=api_base)):
        out.print(line, markup=False, highlight=False)
