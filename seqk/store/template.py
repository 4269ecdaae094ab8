"""New databases copied from a template: a database file of the current schema and views,
made once per schema and DuckDB version and kept in the user's cache folder
($XDG_CACHE_HOME/seqk, else ~/.cache/seqk).

Making a database runs sql/schema.sql and sql/views.sql (DuckDB binds every view as it is
created) and a checkpoint: 0.1-0.3 s, most of what a new run's registration costs. Copying the
~1 MB file that the same statements made before takes milliseconds. The template is only a
cache: its name holds a hash of everything that shaped it, it is written whole (a private name,
then a rename), and any failure to read or write it means the database is built as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from pathlib import Path

import duckdb

from seqk import cache
from seqk.store.sqlfiles import migrations, schema, views


def path() -> Path | None:
    """Where the template of this schema, these views and this DuckDB lives (None: no cache folder)."""
    root = cache.folder()
    if root is None:
        return None
    shaped_by = "\0".join((duckdb.__version__, str(len(migrations())), schema(), views()))
    return root / f"empty-{hashlib.sha256(shaped_by.encode()).hexdigest()[:20]}.duckdb"


def copy_to(fresh: Path) -> bool:
    """Make `fresh` a copy of the template; False when there is none (or it cannot be read)."""
    source = path()
    if source is None or not source.is_file():
        return False
    try:
        shutil.copyfile(source, fresh)
    except OSError:
        fresh.unlink(missing_ok=True)
        return False
    return True


def keep(built: Path) -> None:
    """Save `built` (a new database, checkpointed and closed) as the template, if there is none."""
    target = path()
    if target is None or target.is_file():
        return
    # Templates of earlier schemas or DuckDB versions are never read again: the cache keeps one.
    cache.write_whole(target, built, stale="empty-*.duckdb")


def discard() -> None:
    """Remove a template that did not open as a database."""
    target = path()
    if target is not None:
        with contextlib.suppress(OSError):
            target.unlink(missing_ok=True)
