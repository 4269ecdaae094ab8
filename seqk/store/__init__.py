"""The one door to DuckDB, and to a DuckLake (seqk/store/lake.py) behind the same functions.

`--db` / $SEQK_DB / `db:` name a DuckDB file (the default, runs/seqk.duckdb) or a lake
(`ducklake:postgres:...`); `connect` dispatches on it, and every query runs unchanged on both.

A run holds the database file only for short, batched transactions: open, write
a batch of whole attempts, close. DuckDB lets one process hold a file at a time,
so between those writes `seqk status`, `seqk inspect` or a notebook can open it;
whoever finds it held retries with backoff instead of failing.

The named queries of sql/ are called as functions, `queries.<name>(con, param=...)`
(seqk.store.queries, generated from sql/; see docs/queries.md); `adhoc` runs a user's own SQL.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from seqk.errors import BadInput, NotFound, QueryError, RunConflict, StoreBusy
from seqk.store import lake, queries, template
from seqk.store.execute import int_list, transaction
from seqk.store.kept import kept_chain_outcomes
from seqk.store.location import DEFAULT_DB, default_db_path, display, exists, home, is_lake, resolve
from seqk.store.reads import (
    attempt_uids,
    get_run,
    parquet_tables,
    resolve_run_id,
    resolve_run_ids,
    task_identities,
    valid_slots,
)
from seqk.store.sqlfiles import migrations, schema, views
from seqk.store.writes import (
    append_attempts,
    extend_run,
    fill_feedback,
    finish_run,
    insert_imported_run,
    insert_run,
    insert_tasks,
    link_rejudged_slots,
    restart_run,
)

__all__ = [
    'DEFAULT_DB', 'adhoc', 'append_attempts', 'attempt_uids', 'compact_lake', 'connect', 'default_db_path',
    'display', 'exists', 'extend_run', 'fill_feedback', 'finish_run', 'get_run', 'home', 'insert_imported_run',
    'insert_run', 'insert_tasks', 'int_list', 'is_lake', 'kept_chain_outcomes', 'link_rejudged_slots',
    'parquet_tables', 'queries',
    'resolve', 'resolve_run_id', 'resolve_run_ids', 'restart_run', 'run_lease', 'schema_version',
    'task_identities',
    'transaction', 'valid_slots', 'views_current',
]
_LOCK_MESSAGE = re.compile(r"lock", re.IGNORECASE)


def _is_lock_conflict(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.IOException) and bool(_LOCK_MESSAGE.search(str(exc)))


@contextmanager
def connect(path: str | os.PathLike[str] | None = None, *, read_only: bool = False,
            wait_s: float = 30.0, checkpoint: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the database, retrying while another process holds it; close on exit.

    Read-write opens create the file and bring the schema and views up to date.
    Keep the block short: while it is open, no other process can read the file.
    `checkpoint=False` leaves committed data in the write-ahead log at close
    (durable, replayed by the next open) and makes a batch write's close ~10x
    cheaper; DuckDB still checkpoints by itself once the log passes 16 MB.
    """
    target = resolve(path)
    if isinstance(target, str):
        with lake.session(target, read_only) as con:
            yield con
        return
    db = target
    if read_only and not db.exists():
        raise NotFound(f"no database at {db} (set --db or SEQK_DB, or run `seqk run` first)")
    if db.is_dir():
        raise BadInput(f"{db} is a folder; --db (or SEQK_DB) names a DuckDB file, e.g. {db / 'seqk.duckdb'}")
    if not read_only:
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"cannot create the folder of the database {db}: {exc.strerror}") from None
        if not _is_database(db):
            _create(db)
    con = _open(db, read_only, wait_s)
    if read_only and not views_current(con):
        # An older seqk made the views: bring them up to date with a brief read-write open, as
        # any `seqk run` would, since the queries call views and macros by their current names.
        con.close()
        upgrade = _open(db, False, wait_s)
        try:
            _ensure_schema(upgrade)
        finally:
            upgrade.close()
        con = _open(db, True, wait_s)
    try:
        if not read_only:
            if not checkpoint:
                con.execute("PRAGMA disable_checkpoint_on_shutdown")
            _ensure_schema(con)
        yield con
    finally:
        con.close()


def _is_database(db: Path) -> bool:
    # DuckDB refuses an empty file ("not a valid DuckDB database file"); an empty file holds
    # nothing, so it counts as no database yet.
    try:
        return db.stat().st_size > 0
    except FileNotFoundError:
        return False


def _create(db: Path) -> None:
    """Build a new database under a private name, then rename it into place, whole.

    DuckDB creates the file empty and writes its header after: a process opening it in
    between is told it is "not a valid DuckDB database file". Creators take turns under a
    lock (released by the kernel if one dies); the first renames its file into place.
    """
    import fcntl

    with open(_lock_folder(db) / (db.name + ".create.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _is_database(db):
            return
        fresh = db.with_name(f".{db.name}.{os.getpid()}.creating")
        try:
            if not _from_template(fresh):
                with duckdb.connect(str(fresh)) as con:
                    _ensure_schema(con)
                    con.execute("CHECKPOINT")  # all of it in the file: no .wal left to carry along
                template.keep(fresh)
            os.replace(fresh, db)
        except duckdb.Error as exc:  # e.g. a full disk: no database, and so no run, no call
            raise BadInput(f"cannot create the database {db}: {str(exc).splitlines()[0]}") from None
        finally:
            fresh.unlink(missing_ok=True)
            fresh.with_name(fresh.name + ".wal").unlink(missing_ok=True)


def _from_template(fresh: Path) -> bool:
    """Make `fresh` a copy of the template database (seqk.store.template), opened once to check
    it; False (and nothing at `fresh`) when there is no usable template."""
    if not template.copy_to(fresh):
        return False
    try:
        with duckdb.connect(str(fresh)) as con:
            _ensure_schema(con)  # a no-op on a current template; brings any other up to date
        return True
    except duckdb.Error:
        template.discard()
        fresh.unlink(missing_ok=True)
        fresh.with_name(fresh.name + ".wal").unlink(missing_ok=True)
        return False


def _lock_folder(db: Path) -> Path:
    folder = db.parent / ".seqk-locks"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"cannot create {folder} beside the database {db}: {exc.strerror}") from None
    return folder


def _open(db: Path, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + wait_s
    delay = 0.005
    while True:
        try:
            return duckdb.connect(str(db), read_only=read_only)
        except duckdb.Error as exc:
            if not _is_lock_conflict(exc):
                raise BadInput(f"cannot open {db} as a DuckDB database: {exc}") from None
            if time.monotonic() > deadline:
                raise StoreBusy(f"{db} stayed locked by another process for {wait_s:.0f}s: {exc}") from None
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.2)


def schema_version() -> int:
    """The version of sql/schema.sql: the number of the last file in sql/migrations/."""
    return len(migrations())


def _ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    # Views change more often than tables; their text's hash says when to redo them.
    views_sha = hashlib.sha256(views().encode()).hexdigest()
    try:
        have = dict(queries.get_schema_info(con))
    except duckdb.CatalogException:
        have = {}
    current = schema_version()
    version = int(have.get("schema_version", 0))
    if version == current and have.get("views_sha256") == views_sha:
        return
    if version > current:
        raise BadInput(f"this database has schema {version}, made by a newer seqk than this one "
                       f"(schema {current}): upgrade seqk to read it")
    with transaction(con):
        if version == 0:
            if queries.count_tables(con, table_name="runs"):
                version = 1  # tables from before schema_info existed: schema 1
            else:
                con.execute(schema())
                version = current
        for number, _name, sql in migrations()[version:]:
            con.execute(sql)
            version = number
        con.execute(views())
        for key, value in {"schema_version": str(version), "views_sha256": views_sha}.items():
            queries.set_schema_info(con, key=key, value=value)


@contextmanager
def run_lease(path: str | os.PathLike[str] | None, run_id: str,
              task_indices: Sequence[int] = ()) -> Iterator[None]:
    """Hold the right to run `run_id` against this database, for this process only.

    The database file is free between batches, so without this two `seqk run` of one
    variant would both schedule every missing attempt. An OS file lock, released by the
    kernel if the process dies, under .seqk-locks/ beside the database. On a lake, PostgreSQL
    advisory locks on each of `task_indices`: other processes may run the run's other tasks.
    """
    import fcntl

    target = resolve(path)
    if isinstance(target, str):
        with lake.lease(target, run_id, task_indices):
            yield
        return
    db = target
    lock = _lock_folder(db) / (db.name + "." + hashlib.sha256(run_id.encode()).hexdigest()[:20] + ".lock")
    with open(lock, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise RunConflict(f"run {run_id} is being run right now by {holder} on {db}; "
                              f"wait for it, or stop it and run again") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def views_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the database's views are those of this seqk's sql/views.sql (False for a
    database from before schema_info)."""
    try:
        have = dict(queries.get_schema_info(con))
    except duckdb.CatalogException:
        return False
    return have.get("views_sha256") == hashlib.sha256(views().encode()).hexdigest()


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


def compact_lake(db: str | os.PathLike[str] | None, keep_hours: float = 24.0) -> lake.Compaction:
    """`seqk lake compact` (seqk.store.lake.compact_url)."""
    return lake.compact_url(resolve(db), keep_hours)
