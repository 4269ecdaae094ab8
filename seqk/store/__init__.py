"""The one door to DuckDB and to a DuckLake: `open(db)` gives the store as one Database object
(seqk/store/database.py), a DuckDB file (file.py) or a lake (lake.py), with the same methods.

    database = store.open("runs/seqk.duckdb")        # or "ducklake:postgres:...", or None
    with database.connect(read_only=True) as con:
        queries.run_status(con, run_ids=[])

`--db` / $SEQK_DB / `db:` name it; every query runs unchanged on both. The named queries of sql/
are called as functions, `queries.<name>(con, param=...)` (seqk.store.queries, generated from
sql/; see docs/queries.md); `adhoc` runs a user's own SQL. `connect(db)` and `run_lease(db)`
are `open(db).connect()` and `open(db).lease()`, for a notebook's one-off read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb

from seqk.errors import QueryError
from seqk.store import queries
from seqk.store.database import Compaction, Database, DbLike
from seqk.store.execute import Connection, int_list, transaction
from seqk.store.file import unwritable_folder
from seqk.store.kept import kept_chains_differ, rebuild_kept_chains
from seqk.store.location import DEFAULT_DB, open
from seqk.store.reads import (
    attempt_uids,
    get_run,
    parquet_batches,
    parquet_tables,
    resolve_run_id,
    resolve_run_ids,
    task_identities,
    valid_slots,
)
from seqk.store.schema import schema_version
from seqk.store.writes import (
    AttemptBatch,
    append_attempts,
    extend_run,
    fill_feedback,
    insert_imported_run,
    insert_run,
    insert_tasks,
    link_rejudged_slots,
    restart_run,
)

__all__ = [
    'DEFAULT_DB', 'AttemptBatch', 'Compaction', 'Connection', 'Database', 'DbLike', 'adhoc', 'append_attempts',
    'attempt_uids',
    'connect',
    'extend_run', 'fill_feedback', 'get_run', 'insert_imported_run', 'insert_run', 'insert_tasks', 'int_list',
    'kept_chains_differ', 'link_rejudged_slots', 'open', 'parquet_batches', 'parquet_tables', 'queries',
    'rebuild_kept_chains',
    'resolve_run_id', 'resolve_run_ids', 'restart_run', 'run_lease', 'schema_version', 'task_identities', 'transaction',
    'unwritable_folder', 'valid_slots',
]


@contextmanager
def connect(db: DbLike = None, *, read_only: bool = False, wait_s: float = 30.0,
            checkpoint: bool = True) -> Iterator[Connection]:
    """`open(db).connect(...)`: a connection for the block (see Database.connect)."""
    with open(db).connect(read_only=read_only, wait_s=wait_s, checkpoint=checkpoint) as con:
        yield con


@contextmanager
def run_lease(db: DbLike, run_id: str, task_indices: Sequence[int] = ()) -> Iterator[None]:
    """`open(db).lease(...)`: the right to run these tasks of `run_id` (see Database.lease)."""
    with open(db).lease(run_id, task_indices):
        yield


def adhoc(con: duckdb.DuckDBPyConnection, text: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """A user's own SQL statement (`seqk sql`): (column names, rows).

    DuckDB's refusal (syntax, unknown table, a write on a read-only open) is a QueryError.
    """
    try:
        # DuckDB runs every statement and returns the last result only: a second one would
        # silently hide the first's.
        n = len(con.extract_statements(text))
        if n > 1:
            raise QueryError(f"one SQL statement at a time: this query has {n}; run them one by one")
        cur = con.execute(text)
        if cur is None or cur.description is None:
            return [], []
        return [d[0] for d in cur.description], cur.fetchall()
    except duckdb.Error as exc:
        # DuckDB appends "LINE 1: ..." and a caret line; the first lines say what is wrong.
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        end = next((i for i, line in enumerate(lines) if line.startswith("LINE ")), len(lines))
        raise QueryError(f"the query failed: {' '.join(lines[:end])}") from None
