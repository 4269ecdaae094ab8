"""Reading runs back: the status table and one task's whole trajectory.

Both open the database read-only, so they work while a run is writing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seqk import store
from seqk.errors import NotFound, QueryError
from seqk.store import queries


def status(db: str | Path | None = None, runs: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One dict per run (see sql/status.sql `run_status` for the fields), with `batches`: the
    run's provider batches in batch mode, newest first (sql/batches.sql `list_batches`)."""
    with store.connect(db, read_only=True) as con:
        run_ids = store.resolve_run_ids(con, runs) if runs else []
        found = queries.run_status(con, run_ids=run_ids)
        batches = queries.list_batches(con, run_ids=[r["run_id"] for r in found])
    for row in found:
        row["batches"] = [b for b in batches if b["run_id"] == row["run_id"]]
    return found


@dataclass
class Trajectory:
    """One task of one run: every attempt with its calls, in order."""

    run: dict[str, Any]
    task: dict[str, Any]
    attempts: list[dict[str, Any]]
    """Each attempt dict carries its calls under 'calls'."""


def inspect(run: str, *, task_index: int | None = None, task_id: str | None = None,
            db: str | Path | None = None) -> Trajectory:
    """The whole trajectory of a task: prompts, outputs, verdicts, judge calls, feedback, tokens."""
    if (task_index is None) == (task_id is None):
        raise NotFound("name the task by --task-index or by --task-id (one of them)")
    with store.connect(db, read_only=True) as con:
        ids = store.resolve_run_ids(con, [run])
        if len(ids) != 1:
            raise NotFound(f"{run!r} matches {len(ids)} runs; name one: " + ", ".join(ids[:10]))
        run_row = store.get_run(con, ids[0])
        assert run_row is not None
        tasks = queries.find_task(con, run_id=ids[0], task_index=task_index, task_id=task_id)
        if not tasks:
            which = f"index {task_index}" if task_index is not None else f"id {task_id!r}"
            raise NotFound(f"run {ids[0]} has no task with {which}")
        task = tasks[0]
        params = {"run_id": ids[0], "task_index": task["task_index"]}
        attempts = queries.task_attempts(con, **params)
        calls = queries.task_calls(con, **params)
    by_uid: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        by_uid.setdefault(call["attempt_uid"], []).append(call)
    for attempt in attempts:
        attempt["calls"] = by_uid.get(attempt["attempt_uid"], [])
        for key in ("judge_details", "error"):
            if isinstance(attempt[key], str):
                attempt[key] = json.loads(attempt[key])
    return Trajectory(run_row, task, attempts)


def sql(query: str, db: str | Path | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one read-only SQL statement; returns (column names, rows).

    DuckDB's refusal (syntax, unknown table, a write on the read-only open) is a QueryError.
    """
    if not query.strip():
        raise QueryError("no SQL statement given, e.g. seqk sql \"SELECT run_id, k FROM runs\"")
    with store.connect(db, read_only=True) as con:
        return store.adhoc(con, query)
