"""`seqk lake ...`: the upkeep of a shared lake (docs/many-machines.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from seqk.cli.app import DbOption, Group, app

lake_app = typer.Typer(cls=Group, no_args_is_help=True, help=(
    "Upkeep of a shared lake (ducklake:postgres:...).\n\n"
    'Example: seqk lake compact --db "ducklake:postgres:dbname=seqk host=db.lab user=seqk"'))
app.add_typer(lake_app, name="lake")


@lake_app.command()
def compact(
    db: DbOption = None,
    keep_hours: Annotated[float, typer.Option(
        "--keep-hours", min=0, metavar="HOURS",
        help="Keep snapshots (time travel) this many hours back; older ones are expired.")] = 24.0,
) -> None:
    """Merge the lake's small files and expire old snapshots, so cold reads stay fast.

    Each commit of a writer adds files; run this when no writer is busy, e.g. nightly or after a
    study's runs finish. Readers and writers may go on meanwhile (their commits are retried).

    Example: seqk lake compact --db "ducklake:postgres:dbname=seqk host=db.lab user=seqk"
    """
    from seqk import store

    done = store.open(db).compact(keep_hours)
    typer.echo(f"compacted in {done.seconds:.1f} s: data files {done.files_before} -> {done.files_after}, "
               f"snapshots {done.snapshots_before} -> {done.snapshots_after} "
               f"(kept the last {keep_hours:g} h)")
