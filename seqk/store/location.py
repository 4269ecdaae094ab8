"""Which store `--db` names: a DuckDB file (the default) or a lake, from --db, $SEQK_DB or the
default, runs/seqk.duckdb. The one place that reads the name; everything after holds a Database."""

from __future__ import annotations

import os
from pathlib import Path

from seqk.store import lake
from seqk.store.database import Database, DbLike
from seqk.store.file import DuckDBFile

DEFAULT_DB = "runs/seqk.duckdb"


def open(db: DbLike = None) -> Database:
    """The store `db` names: a Database as it is; a `ducklake:` URL (checked: BadInput naming the
    expected form); else a DuckDB file's path. None: $SEQK_DB, else runs/seqk.duckdb."""
    if isinstance(db, Database):
        return db
    chosen = db or os.environ.get("SEQK_DB") or DEFAULT_DB
    if lake.names_lake(chosen):  # a str: a Path would fold the `//` of an s3:// data path
        return lake.parse(str(chosen))
    return DuckDBFile(Path(chosen))
