"""`seqk compare A B`: two runs of one benchmark slice side by side (seqk/analysis/compare.py).
It registers on the app of seqk/cli/app.py, which seqk/cli/__init__.py runs."""

from __future__ import annotations

from typing import Annotated

import typer

from seqk.cli.app import DbOption, app, check_choice
from seqk.cli.app import console as _console

COMPARE_FORMATS = ("table", "json")


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(metavar="RUN_A", help="Run id, glob or prefix naming one run.")],
    run_b: Annotated[str, typer.Argument(metavar="RUN_B", help="Run id, glob or prefix naming another run "
                                                               "of the same benchmark slice.")],
    db: DbOption = None,
    fmt: Annotated[str, typer.Option("--format", metavar="FORMAT", help="table | json")] = "table",
    errors_as_failures: Annotated[bool, typer.Option(
        "--errors-as-failures", help="Count errored attempts as failures instead of leaving them out.")] = False,
    seed: Annotated[int | None, typer.Option(
        help="Seed of the task-level bootstrap (default fixed; printed with the figures).")] = None,
    max_flips: Annotated[int, typer.Option(
        metavar="N", help="Flips listed per run in the table (0: every one; JSON lists every one).")] = 20,
) -> None:
    """Compare two runs on the tasks both hold: what differs, a − b at each t with its interval and
    p, both runs at equal spend per task (their frontiers, a band, the cross-over), and the tasks
    only one of them solved.

    Example: seqk compare 'clbench-dkr/seqk/*critic_sharp' 'clbench-dkr/seqk/*critic_vague'
    """
    from seqk import api

    check_choice(fmt, "--format", COMPARE_FORMATS)
    if max_flips < 0:
        raise typer.BadParameter("must be 0 (every flip) or more", param_hint="'--max-flips'")
    extra = {} if seed is None else {"seed": seed}
    result = api.compare(run_a, run_b, db, errors_as_failures=errors_as_failures, **extra)
    if fmt == "json":
        from seqk.analysis.compare import to_json

        typer.echo(to_json(result, db=db))
        return
    from seqk.render.compare import to_text

    _console().print(to_text(result, db=db, max_flips=max_flips or None, names=(run_a, run_b)), markup=False, end="")
