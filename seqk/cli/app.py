"""The typer app and classes under seqk's command line, and what its commands share.

Every user mistake ends in one `error: ...` line and exit code 2, never a traceback:
a SeqkError raised by the library, a usage error (a missing argument, a bad option
value), or a file the system refuses to read or write. --help names values by what
they mean (VARIANT, RUN_ID, FILE, N), not by their Python type (<path>, <bool>).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from seqk.errors import BadInput, SeqkError
from seqk.version import __version__

# click's UsageError (a missing argument, a bad option value), from whichever click typer uses.
_UsageError: type[Exception] = typer.BadParameter.__mro__[1]


class _Argument(TyperArgument):
    @property
    def display_name_raw(self) -> str:
        return self.metavar or (self.name or "").upper()  # a placeholder, like click's own

    def display_type_rich(self, ctx: Any) -> str | None:
        return None  # the metavar (RUN_ID, VARIANT) says what to type; "<path>" would not


class _Option(TyperOption):
    def display_type_rich(self, ctx: Any) -> str | None:
        if self.is_flag:
            return None  # a flag takes no value, so "<bool>" only misleads
        # Without a metavar, the option's own name: --format FORMAT, --seed SEED.
        return self.metavar or max(self.opts, key=len).lstrip("-").replace("-", "_").upper()


def _plain(params: list[Any]) -> list[Any]:
    # typer builds its parameter objects itself, with no hook to choose their class.
    for param in params:
        plain: dict[type, type] = {TyperArgument: _Argument, TyperOption: _Option}
        param.__class__ = plain.get(type(param), type(param))
    return params


class _Command(TyperCommand):
    """A command whose --help names values by what they mean (FILE, N, RUN_ID), not by type."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _plain(super().get_params(ctx))


class Group(TyperGroup):
    """Turns a SeqkError or a usage error from any command into one `error: ...` message and
    its exit code, no traceback; gives every command plain metavars in --help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            if type(command) is TyperCommand:
                command.__class__ = _Command

    def get_params(self, ctx: Any) -> list[Any]:
        return _plain(super().get_params(ctx))

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except SeqkError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except BrokenPipeError:
            quiet_stdout()
            raise typer.Exit(0) from None
        except OSError as exc:
            if exc.filename is None:
                raise
            # A file or folder the user named that the system refuses (permissions, a full disk).
            typer.echo(f"error: {exc.strerror or exc}: {exc.filename}", err=True)
            raise typer.Exit(2) from None
        except _UsageError as exc:
            where = getattr(exc, "ctx", None)
            hint = f" (see `{where.command_path} --help`)" if where is not None else ""
            typer.echo(f"error: {exc.format_message()}{hint}", err=True)  # type: ignore[attr-defined]
            raise typer.Exit(2) from None


def quiet_stdout() -> None:
    """The reader of stdout went away (`seqk inspect … | head`): send the rest, and the final
    flush at exit, to /dev/null, so that neither raises again. Stopping early is the reader's
    choice, not an error."""
    import os
    import sys

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def check_choice(value: str, option: str, choices: tuple[str, ...]) -> None:
    """A usage error unless `value` is one of `choices`."""
    if value not in choices:
        from seqk.config.variant import did_you_mean

        raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}{did_you_mean(value, choices)}",
                                 param_hint=f"'{option}'")


def check_folder(path: Path | None, option: str) -> None:
    """A folder option must name a folder that can be written (checked before the work)."""
    from seqk.io.tree import unwritable_folder

    if path is not None and path.exists() and not path.is_dir():
        raise BadInput(f"{option} {path} is a file; it names a folder to write into")
    problem = unwritable_folder(path.absolute()) if path is not None else None
    if problem:
        raise BadInput(f"{option} {path} cannot be written: {problem}")


def check_file_target(path: Path | None, option: str) -> None:
    """A file to write must not be a folder, and its folder must be writable or possible to make
    (checked before the work; the folder is made when the file is written, as --db's is)."""
    if path is None:
        return
    if path.is_dir():
        raise BadInput(f"{option} {path} is a folder; it names a file to write")
    from seqk.io.tree import unwritable_folder

    problem = unwritable_folder(path.absolute().parent)
    if problem:
        raise BadInput(f"{option} {path} cannot be written: {problem}")


app = typer.Typer(
    cls=Group,
    help="Does a model do better when it retries with feedback (seq@k) than when it "
         "samples k times (pass@k)?",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

def _version(value: bool) -> None:
    if value:
        typer.echo(f"seqk {__version__}")
        raise typer.Exit()


@app.callback()
def _options(ctx: typer.Context, version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print seqk's version and exit.")] = False) -> None:
    """Does a model do better when it retries with feedback (seq@k) than when it samples k
    times (pass@k)?"""
    if ctx.invoked_subcommand != "run":  # `run` resumes it once its run is registered
        resume_gc()


def resume_gc() -> None:
    """Resume the garbage collection that start-up paused (seqk/__main__.py), first freezing
    what start-up allocated (modules, the variant, its tasks), which later collections then
    skip. Does nothing when collection is on."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


# A str, not a Path: a lake URL's `s3://` would lose a slash to Path.
DbOption = Annotated[str | None, typer.Option(
    "--db", metavar="FILE|URL", help="DuckDB file, or a lake (ducklake:postgres:...; docs/many-machines.md) "
                                     "(default: $SEQK_DB, else runs/seqk.duckdb).")]
SetOption = Annotated[list[str] | None, typer.Option(
    "--set", metavar="KEY=VALUE", help="Set a variant key as if written in the file: dotted for a nested "
                                       "one (actor.temperature=0.2), a YAML value; repeatable.")]


def console(stderr: bool = False) -> Any:
    """A rich console for the command's output (stderr=True: for progress and errors)."""
    from rich.console import Console

    console = Console(stderr=stderr, highlight=False, soft_wrap=True)
    if not console.is_terminal:
        # Piped or captured output is read by scripts and tests: never wrap a table cell.
        console = Console(stderr=stderr, highlight=False, soft_wrap=True, width=100_000)
    # rich's own handler exits 1: a closed pipe (`seqk inspect ... | head`) is no error.
    setattr(console, "on_broken_pipe", _reader_left)  # noqa: B010 - mypy refuses assigning a method
    return console


def _reader_left() -> None:
    quiet_stdout()
    raise SystemExit(0)
