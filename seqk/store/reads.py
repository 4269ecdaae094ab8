"""Small reads the run, import and export paths share: a run's row, its task identities, its
attempt uids and valid slots, run ids matching patterns, Parquet tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from seqk.errors import NotFound
from seqk.store import queries


def task_identities(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[int, tuple[str, str]]:
    """task_index -> (task_id, content_hash) of the run's known tasks."""
    rows = queries.get_task_identities(con, run_id=run_id)
    return {r[0]: (r[1], r[2]) for r in rows}


def attempt_uids(con: duckdb.DuckDBPyConnection, run_id: str) -> set[str]:
    """Every attempt_uid the run holds (any generation, any status)."""
    return {r[0] for r in queries.import_known_attempts(con, run_id=run_id)}


def valid_slots(con: duckdb.DuckDBPyConnection, run_id: str) -> set[tuple[int, int, int]]:
    """(generation, task_index, attempt_index) of the run's slots that hold a valid attempt."""
    return set(queries.import_valid_slots(con, run_id=run_id))


def parquet_tables(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str],
                   names: Sequence[str]) -> dict[str, Any]:
    """The named export tables (runs, tasks, attempts, calls) of these runs, as Arrow tables."""
    return {name: parquet_batches(con, run_ids, name).read_all() for name in names}


def parquet_batches(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str], name: str) -> Any:
    """The named export table of these runs as a pyarrow RecordBatchReader, its rows in order
    (seqk.store.execute.BATCH_ROWS at a time): read it before the connection runs anything else."""
    return _PARQUET[name](con, run_ids=list(run_ids))


_PARQUET = {"runs": queries.export_parquet_runs, "tasks": queries.export_parquet_tasks,
            "attempts": queries.export_parquet_attempts, "calls": queries.export_parquet_calls}


def get_run(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any] | None:
    """The run's row as a dict, or None."""
    return queries.get_run(con, run_id=run_id)


def resolve_run_ids(con: duckdb.DuckDBPyConnection, patterns: Sequence[str]) -> list[str]:
    """Run ids matching exact ids, globs (`*`, `?`) or prefixes; every pattern must match."""
    import fnmatch

    all_ids = [r["run_id"] for r in queries.list_runs(con)]
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


def resolve_run_id(con: duckdb.DuckDBPyConnection, pattern: str) -> str:
    """The one run id an exact id, glob or prefix names (NotFound when it names none or several)."""
    ids = resolve_run_ids(con, [pattern])
    if len(ids) != 1:
        raise NotFound(f"{pattern!r} matches {len(ids)} runs; name one: " + ", ".join(ids[:10]))
    return ids[0]
