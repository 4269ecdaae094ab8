"""`seqk study`: run a sequential study (seqk.api.run_study) and say what it decided; and the
study half of `seqk plan`, for a study file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from seqk.cli.app import DbOption, app, check_choice
from seqk.cli.app import console as _console

FORMATS = ("text", "json")
EXIT = {"decided": 0, "tasks_exhausted": 0, "budget": 0, "error_share": 1, "no_cell": 1}
"""Exit status by stop reason: 0 when the study decided or ran out of tasks or budget."""


class StudyProgress:
    """The study's observer: its header, then a line at each look, on stderr."""

    def __init__(self) -> None:
        self.stopping = False
        self.n_available = 0
        self.alpha = 0.05

    def _say(self, line: str) -> None:
        _console(stderr=True).print(line, markup=False, highlight=False)

    def started(self, result: Any) -> None:
        """The header."""
        from seqk.render.study import header

        self.n_available, self.alpha = result.tasks_available, result.spec.alpha
        for line in header(result):
            self._say(line)

    def window(self, positions: list[int], tasks: list[int], pilot: bool = False) -> None:
        """A window starts."""
        what = "pilot (chooses the cells; never enters the sequence)" if pilot else "window"
        self._say(f"{what}: tasks {positions[0]}–{positions[-1]} of the order, both arms")

    def retrying(self, tasks: list[int]) -> None:
        """Censored tasks run once more."""
        self._say(f"  {len(tasks)} task(s) censored by an error: running their errored slots once more")

    def updated(self, update: Any) -> None:
        """A look."""
        from seqk.render.study import progress

        self._say(progress(update, self.n_available, self.alpha))

    def interrupted(self) -> None:
        """The first Ctrl-C."""
        self.stopping = True
        self._say("interrupted: writing the attempts that finished…")

    def attempt(self, arm: str, event: Any) -> None:
        """Each attempt: nothing (a line per look is the progress)."""

    def finished(self, result: Any) -> None:
        """The summary is printed by the command."""


@app.command()
def study(
    study_file: Annotated[Path, typer.Argument(metavar="STUDY", help="Study YAML (arms, question, alpha, ...).")],
    db: DbOption = None,
    fmt: Annotated[str, typer.Option("--format", metavar="FORMAT", help="text | json")] = "text",
    no_export: Annotated[bool, typer.Option(
        "--no-export", help="Do not export the arms' folder trees when the study stops.")] = False,
    no_upload: Annotated[bool, typer.Option(
        "--no-upload", help="Do not upload the arms to S3 when the study stops.")] = False,
) -> None:
    """Run a sequential study: both arms in lockstep, a window of tasks at a time in a seeded order,
    until an anytime-valid confidence sequence decides (exit 0; also when out of tasks or budget).

    Example: seqk study variants/quickstart/study.yaml --db runs/seqk.duckdb
    """
    from seqk import api
    from seqk.render.study import summary
    from seqk.run import signals

    check_choice(fmt, "--format", FORMATS)
    spec = api.load_study(study_file)
    watch = StudyProgress()
    with signals.outlast(lambda: watch.stopping):
        outcome = api.run_study(spec, db, observer=watch, export=not no_export, upload=not no_upload)
    result = outcome.result
    if fmt == "json":
        typer.echo(json.dumps(result.to_json(), indent=2))
    else:
        out = _console()
        for line in summary(result):
            out.print(line, markup=False, highlight=False)
        for line in outcome.messages:
            out.print(line, markup=False, highlight=False)
    sys.stdout.flush()
    if result.interrupted:
        raise typer.Exit(130)
    if outcome.upload_error is not None:
        raise outcome.upload_error
    if result.error is not None:
        _console(stderr=True).print(f"error: the study stopped: {result.error}", markup=False, highlight=False)
        raise typer.Exit(1)
    raise typer.Exit(EXIT.get(result.stop_reason or "", 1))


def plan(study_file: Path, db: str | None, lift: float | None) -> None:
    """`seqk plan` of a study file: the expected tasks and US$ to a decision, beside fixed-n."""
    from seqk import api
    from seqk.render.study import plan_lines

    found = api.plan_study(study_file, db, lift=lift)
    out = _console()
    for line in plan_lines(found):
        out.print(line, markup=False, highlight=False)
