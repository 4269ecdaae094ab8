"""Reading runs back: the status table and one task's whole trajectory, as typed rows.

Both open the database read-only, so they work while a run is writing. Each row type below is
what its query in sql/ returns (tests/analysis/test_status_rows.py checks the keys and types
against the query's columns, so the two cannot drift apart).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, TypeAlias, TypedDict, cast

from seqk import store
from seqk.errors import NotFound, QueryError
from seqk.store import queries

JSONValue: TypeAlias = "dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None"
"""A parsed JSON column (judge details, an attempt's error)."""


class BatchRow(TypedDict):
    """One provider batch of a run in batch mode (sql/batches.sql `list_batches`)."""

    run_id: str
    role: str
    round: int
    provider: str
    batch_id: str | None
    n_items: int
    n_done: int | None
    state: str
    submitted_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    age_s: float | None


class RunStatus(TypedDict):
    """One run's progress (sql/status.sql `run_status`) and its batches, newest first."""

    run_id: str
    benchmark: str
    metric: str
    k: int
    actor_model: str
    feedback_mode: str
    n_tasks: int
    n_started: int
    n_finished: int
    n_passed: int
    n_valid_attempts: int
    n_error_attempts: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    n_unpriced_calls: int
    updated_at: datetime
    batches: list[BatchRow]


class RunRow(TypedDict):
    """A run as the `runs` view gives it now (sql/runs.sql `get_run`); JSON columns as text."""

    run_id: str
    benchmark: str
    slice: str
    metric: str
    k: int
    generation: int
    feedback_mode: str
    actor_model: str
    judge_model: str | None
    critic_model: str | None
    verifier: str
    temperature: float | None
    options: str | None
    config: str | None
    fingerprint: str
    fingerprint_fields: str
    created_at: datetime
    updated_at: datetime
    seqk_version: str
    shows_grading_info: bool | None
    soft_score_clipped: bool | None
    chains: int


class TaskRow(TypedDict):
    """One task of a run (sql/tasks.sql `find_task`); meta as JSON text."""

    task_index: int
    task_id: str
    prompt: str
    meta: str | None


class CallRow(TypedDict):
    """One LLM call of an attempt (sql/attempts.sql `task_calls`)."""

    attempt_uid: str
    attempt_index: int
    call_index: int
    role: str
    model: str
    prompt: str | None
    output: str | None
    input_tokens: int | None
    cached_tokens: int | None
    thinking_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    latency_s: float | None
    retries: int
    error: str | None
    chain_index: int


class AttemptRow(TypedDict):
    """One attempt (sql/attempts.sql `task_attempts`), its JSON parsed, with its calls in order."""

    attempt_uid: str
    attempt_index: int
    k: int
    status: str
    success: bool | None
    score: float | None
    prompt: str | None
    output: str | None
    raw_eval_output: str | None
    judge_details: JSONValue
    feedback: str | None
    error: JSONValue
    started_at: datetime
    finished_at: datetime
    chain_index: int
    counts: bool
    """Whether this is the row the metrics use (False: an error retried later)."""
    calls: list[CallRow]


class SqlResult(NamedTuple):
    """What `seqk sql` prints: column names, and rows of whatever types DuckDB returns."""

    columns: list[str]
    rows: list[tuple[object, ...]]


def status(runs: Sequence[str] = (), db: store.DbLike = None) -> list[RunStatus]:
    """One row per run matching `runs` (ids, globs, prefixes; default all), with `batches`: the
    run's provider batches in batch mode, newest first."""
    with store.connect(db, read_only=True) as con:
        run_ids = store.resolve_run_ids(con, runs) if runs else []
        found = queries.run_status(con, run_ids=run_ids)
        batches = cast(list[BatchRow], queries.list_batches(con, run_ids=[r["run_id"] for r in found]))
    for row in found:
        row["batches"] = [b for b in batches if b["run_id"] == row["run_id"]]
    return cast(list[RunStatus], found)


@dataclass
class Trajectory:
    """One task of one run: every attempt with its calls, in order."""

    run: RunRow
    task: TaskRow
    attempts: list[AttemptRow]
    """By chain and attempt; superseded errors included (`counts` False)."""


def inspect(run: str, db: store.DbLike = None, *, task_index: int | None = None,
            task_id: str | None = None) -> Trajectory:
    """The whole trajectory of a task: prompts, outputs, verdicts, judge calls, feedback, tokens."""
    if (task_index is None) == (task_id is None):
        raise NotFound("name the task by --task-index or by --task-id (one of them)")
    with store.connect(db, read_only=True) as con:
        run_id = store.resolve_run_id(con, run)
        run_row = store.get_run(con, run_id)
        assert run_row is not None
        tasks = queries.find_task(con, run_id=run_id, task_index=task_index, task_id=task_id)
        if not tasks:
            which = f"index {task_index}" if task_index is not None else f"id {task_id!r}"
            raise NotFound(f"run {run_id} has no task with {which}")
        task = tasks[0]
        attempts = attempts_with_calls(con, run_id, task["task_index"])
    return Trajectory(cast(RunRow, run_row), cast(TaskRow, task), attempts)


def attempts_with_calls(con: store.Connection, run_id: str, task_index: int) -> list[AttemptRow]:
    """A task's attempts in order (superseded errors included), their JSON parsed, each with its
    calls: what `seqk inspect` prints and the viewer's task page shows."""
    attempts = queries.task_attempts(con, run_id=run_id, task_index=task_index)
    by_uid: dict[str, list[CallRow]] = {}
    for call in cast(list[CallRow], queries.task_calls(con, run_id=run_id, task_index=task_index)):
        by_uid.setdefault(call["attempt_uid"], []).append(call)
    for attempt in attempts:
        attempt["calls"] = by_uid.get(attempt["attempt_uid"], [])
        for key in ("judge_details", "error"):
            if isinstance(attempt[key], str):
                attempt[key] = json.loads(attempt[key])
    return cast(list[AttemptRow], attempts)


def sql(query: str, db: store.DbLike = None) -> SqlResult:
    """Run one read-only SQL statement; returns its column names and rows.

    DuckDB's refusal (syntax, unknown table, a write on the read-only open) is a QueryError.
    """
    if not query.strip():
        raise QueryError("no SQL statement given, e.g. seqk sql \"SELECT run_id, k FROM runs\"")
    with store.connect(db, read_only=True) as con:
        columns, rows = store.adhoc(con, query)
    return SqlResult(columns, rows)
