"""The one door to DuckDB.

A run holds the database file only for short, batched transactions: open, write
a batch of whole attempts, close. DuckDB lets one process hold a file at a time,
so between those writes `seqk status`, `seqk inspect` or a notebook can open it;
whoever finds it held retries with backoff instead of failing.
"""

from __future__ import annotations

import hashlib
import json
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
from seqk.records import AttemptRecord, FeedbackFill
from seqk.store import queries
from seqk.store.sqlfiles import migrations, q, schema, views

DEFAULT_DB = "runs/seqk.duckdb"
_LOCK_MESSAGE = re.compile(r"lock", re.IGNORECASE)


def default_db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The database path: explicit argument, else $SEQK_DB, else runs/seqk.duckdb."""
    return Path(explicit or os.environ.get("SEQK_DB") or DEFAULT_DB)


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
    db = default_db_path(path)
    if read_only and not db.exists():
        raise NotFound(f"no database at {db} (set --db or SEQK_DB, or run `seqk run` first)")
    if db.is_dir():
        raise BadInput(f"{db} is a folder; --db (or SEQK_DB) names a DuckDB file, e.g. {db / 'seqk.duckdb'}")
    if not read_only:
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"cannot create the folder of the database {db}: {exc.strerror}") from None
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
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Everything in the block is committed together, or rolled back on any exception."""
    con.execute("BEGIN")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


@contextmanager
def run_lease(path: str | os.PathLike[str] | None, run_id: str) -> Iterator[None]:
    """Hold the right to run `run_id` against this database, for this process only.

    The database file is free between batches, so without this two `seqk run` of one
    variant would both schedule every missing attempt. An OS file lock, released by the
    kernel if the process dies, under .seqk-locks/ beside the database.
    """
    import fcntl

    db = default_db_path(path)
    folder = db.parent / ".seqk-locks"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"cannot create {folder} beside the database {db}: {exc.strerror}") from None
    lock = folder / (db.name + "." + hashlib.sha256(run_id.encode()).hexdigest()[:20] + ".lock")
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


def select(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> list[dict[str, Any]]:
    """The rows of the named query in sql/ as dicts, its `$parameters` given by name."""
    cur = con.execute(q(name), params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def select_rows(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> list[tuple[Any, ...]]:
    """The rows of the named query in sql/ as tuples, in its column order."""
    return con.execute(q(name), params).fetchall()


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
        cur = con.execute(text)
        if cur is None or cur.description is None:
            return [], []
        return [d[0] for d in cur.description], cur.fetchall()
    except duckdb.Error as exc:
        # DuckDB appends "LINE 1: ..." and a caret line; the first lines say what is wrong.
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        end = next((i for i, line in enumerate(lines) if line.startswith("LINE ")), len(lines))
        raise QueryError(f"the query failed: {' '.join(lines[:end])}") from None


# ---------------------------------------------------------------------------
# Writes


def insert_run(con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> None:
    """Register a new run (row: the columns of sql/runs.sql `insert_run`)."""
    con.execute(q("insert_run"), row)


def extend_run(con: duckdb.DuckDBPyConnection, run_id: str, k: int, config: str) -> None:
    """Raise the run's k in its current generation."""
    con.execute(q("extend_run"), {"run_id": run_id, "k": k, "config": config})


def restart_run(con: duckdb.DuckDBPyConnection, run_id: str, k: int, config: str) -> None:
    """Raise the run's k in a fresh generation."""
    con.execute(q("restart_run"), {"run_id": run_id, "k": k, "config": config})


def link_rejudged_slots(con: duckdb.DuckDBPyConnection, run_id: str, source_run_id: str, k: int) -> None:
    """Point a rejudge run's slots at the source run's attempts it judges again."""
    con.execute(q("link_rejudged_slots"), {"run_id": run_id, "source_run_id": source_run_id, "k": k})


def fill_feedback(con: duckdb.DuckDBPyConnection, fills: Sequence[FeedbackFill]) -> None:
    """Write late feedback and its calls (inside the caller's transaction)."""
    for fill in fills:
        con.execute(q("fill_feedback"), {
            "attempt_uid": fill.attempt_uid, "feedback": fill.feedback,
            "error": json.dumps(fill.error) if fill.error is not None else None})
        first = con.execute(q("last_call_index"), {"attempt_uid": fill.attempt_uid}).fetchone()[0]
        for offset, c in enumerate(fill.calls, start=1):
            con.execute(q("insert_call"), {
                "attempt_uid": fill.attempt_uid, "run_id": fill.run_id,
                "generation": fill.generation, "task_index": fill.task_index,
                "attempt_index": fill.attempt_index, "call_index": first + offset,
                "chain_index": fill.chain_index}
                | {name: getattr(c, name) for name in _CALL_COLUMNS[7:]})


_ATTEMPT_COLUMNS = (
    "attempt_uid", "run_id", "generation", "task_index", "attempt_index", "k", "status",
    "success", "score", "prompt", "output", "raw_eval_output", "judge_details", "feedback",
    "error", "started_at", "finished_at", "chain_index",
)
_CALL_COLUMNS = (
    "attempt_uid", "run_id", "generation", "task_index", "attempt_index", "call_index",
    "chain_index", "role", "model", "prompt", "output", "input_tokens", "cached_tokens", "thinking_tokens",
    "output_tokens", "cost_usd", "latency_s", "retries", "error", "started_at",
)


def _attempt_columns(records: Sequence[AttemptRecord]) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {name: [] for name in _ATTEMPT_COLUMNS}
    for r in records:
        for name in _ATTEMPT_COLUMNS:
            value = getattr(r, name)
            if name in ("judge_details", "error") and value is not None:
                value = json.dumps(value, ensure_ascii=False, default=str)
            cols[name].append(value)
    return cols


def _call_columns(records: Sequence[AttemptRecord]) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {name: [] for name in _CALL_COLUMNS}
    for r in records:
        for index, c in enumerate(r.calls, start=1):
            cols["attempt_uid"].append(r.attempt_uid)
            cols["run_id"].append(r.run_id)
            cols["generation"].append(r.generation)
            cols["task_index"].append(r.task_index)
            cols["attempt_index"].append(r.attempt_index)
            cols["call_index"].append(index)
            cols["chain_index"].append(r.chain_index)
            for name in _CALL_COLUMNS[7:]:
                cols[name].append(getattr(c, name))
    return cols


def append_attempts(con: duckdb.DuckDBPyConnection,
                    items: Sequence[AttemptRecord | FeedbackFill]) -> None:
    """Append whole attempts with their calls (and late feedback) in one transaction."""
    if not items:
        return
    import pyarrow as pa

    records = [r for r in items if isinstance(r, AttemptRecord)]
    fills = [r for r in items if isinstance(r, FeedbackFill)]
    attempts = pa.table(_attempt_columns(records))
    calls = pa.table(_call_columns(records))
    try:
        with transaction(con):
            fill_feedback(con, fills)
            con.register("seqk_attempt_batch", attempts)
            con.execute("INSERT INTO attempts BY NAME SELECT * FROM seqk_attempt_batch")
            if calls.num_rows:
                con.register("seqk_call_batch", calls)
                con.execute("INSERT INTO calls BY NAME SELECT * FROM seqk_call_batch")
    finally:
        con.unregister("seqk_attempt_batch")
        con.unregister("seqk_call_batch")


def insert_tasks(con: duckdb.DuckDBPyConnection, run_id: str, rows: Sequence[dict[str, Any]]) -> None:
    """Register tasks the run has not seen yet (rows: task_index, task_id, prompt, content_hash, meta)."""
    if not rows:
        return
    import pyarrow as pa

    table = pa.table({
        "run_id": [run_id] * len(rows),
        "task_index": [r["task_index"] for r in rows],
        "task_id": [r["task_id"] for r in rows],
        "prompt": [r["prompt"] for r in rows],
        "content_hash": [r["content_hash"] for r in rows],
        "meta": [json.dumps(r.get("meta") or {}, ensure_ascii=False, default=str) for r in rows],
    })
    con.register("seqk_task_batch", table)
    try:
        con.execute("INSERT INTO tasks BY NAME SELECT * FROM seqk_task_batch")
    finally:
        con.unregister("seqk_task_batch")


def finish_run(con: duckdb.DuckDBPyConnection, run_id: str | None) -> None:
    """A run's last write: stamp the run as updated, and fold the write-ahead log into the
    file, since someone may copy the .duckdb without its .wal."""
    if run_id is not None:
        con.execute(q("touch_run"), {"run_id": run_id})
    con.execute("CHECKPOINT")


def insert_imported_run(con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> None:
    """Add a run rebuilt from an exported folder."""
    con.execute(q("import_run"), row)


def task_identities(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[int, tuple[str, str]]:
    """task_index -> (task_id, content_hash) of the run's known tasks."""
    rows = con.execute(q("get_task_identities"), {"run_id": run_id}).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def attempt_uids(con: duckdb.DuckDBPyConnection, run_id: str) -> set[str]:
    """Every attempt_uid the run holds (any generation, any status)."""
    return {r[0] for r in con.execute(q("import_known_attempts"), {"run_id": run_id}).fetchall()}


def valid_slots(con: duckdb.DuckDBPyConnection, run_id: str) -> set[tuple[int, int, int]]:
    """(generation, task_index, attempt_index) of the run's slots that hold a valid attempt."""
    return set(con.execute(q("import_valid_slots"), {"run_id": run_id}).fetchall())


def parquet_tables(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str],
                   names: Sequence[str]) -> dict[str, Any]:
    """The named export tables (export_parquet_<name>) of these runs, as Arrow tables."""
    return {name: con.execute(q("export_parquet_" + name), {"run_ids": list(run_ids)}).to_arrow_table()
            for name in names}


def get_run(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any] | None:
    """The run's row as a dict, or None."""
    rows = select(con, "get_run", run_id=run_id)
    return rows[0] if rows else None


def resolve_run_ids(con: duckdb.DuckDBPyConnection, patterns: Sequence[str]) -> list[str]:
    """Run ids matching exact ids, globs (`*`, `?`) or prefixes; every pattern must match."""
    import fnmatch

    all_ids = [r["run_id"] for r in select(con, "list_runs")]
    if not patterns:
        return all_ids
    chosen: list[str] = []
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        hits = [i for i in all_ids if i == pattern]
        hits = hits or [i for i in all_ids if fnmatch.fnmatchcase(i, pattern)]
        hits = hits or [i for i in all_ids if i.startswith(pattern + "/")]
        if not hits:
            raise NotFound(f"no run matches {pattern!r}; `seqk status` lists the runs")
        chosen.extend(h for h in hits if h not in chosen)
    return chosen
