"""Where the database is: a DuckDB file (the default) or a lake URL, from --db, $SEQK_DB or
the default, runs/seqk.duckdb."""

from __future__ import annotations

import os
from pathlib import Path

from seqk.store import lake

DEFAULT_DB = "runs/seqk.duckdb"


def default_db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The database path: explicit argument, else $SEQK_DB, else runs/seqk.duckdb."""
    return Path(explicit or os.environ.get("SEQK_DB") or DEFAULT_DB)


def is_lake(db: object) -> bool:
    """Whether the database named is a lake (a `ducklake:` URL)."""
    return lake.is_lake(db)


def resolve(explicit: str | os.PathLike[str] | None = None) -> str | Path:
    """The database: a lake URL as given (a Path would fold its `//`), else default_db_path."""
    chosen = explicit or os.environ.get("SEQK_DB")
    if lake.is_lake(chosen):
        return str(chosen)
    return default_db_path(chosen)


def exists(db: str | os.PathLike[str] | None) -> bool:
    """Whether the database is there to read (a lake is taken to be)."""
    target = resolve(db)
    return isinstance(target, str) or target.exists()


def home(db: str | os.PathLike[str] | None) -> Path:
    """The database's folder, where run folders go by default (runs/ for a lake)."""
    target = resolve(db)
    return Path(DEFAULT_DB).parent if isinstance(target, str) else target.parent


def display(db: str | os.PathLike[str] | None) -> str:
    """The database as a user named it, for messages."""
    return str(resolve(db))


