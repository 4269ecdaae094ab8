"""What seqk writes: runs, tasks, whole attempts with their calls, late feedback, imports.

Every function runs inside the caller's connection (and transaction, where several must commit
together); the SQL is the named queries of sql/."""

from __future__ import annotations

import json
from collections.abc import Sequence
from json.encoder import encode_basestring
from typing import Any

import duckdb

from seqk.errors import BadInput
from seqk.records import AttemptRecord, FeedbackFill
from seqk.store import kept, queries
from seqk.store.execute import transaction


def insert_run(con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> None:
    """Register a new run (row: the parameters of sql/runs.sql `insert_run`); BadInput when the
    database refuses it, before the run has made any call."""
    try:
        queries.insert_run(con, **row)
    except duckdb.Error as exc:
        raise BadInput(f"cannot register the run {row['run_id']} in this database: "
                       f"{str(exc).splitlines()[0]}") from None


def extend_run(con: duckdb.DuckDBPyConnection, run_id: str, k: int, config: str) -> None:
    """Raise the run's k in its current generation."""
    queries.extend_run(con, run_id=run_id, k=k, config=config)


def restart_run(con: duckdb.DuckDBPyConnection, run_id: str, k: int, generation: int, config: str) -> None:
    """Raise the run's k in a fresh generation (the next one, given)."""
    queries.restart_run(con, run_id=run_id, k=k, generation=generation, config=config)


def link_rejudged_slots(con: duckdb.DuckDBPyConnection, run_id: str, source_run_id: str, k: int) -> None:
    """Point a rejudge run's slots at the source run's attempts it judges again."""
    queries.link_rejudged_slots(con, run_id=run_id, source_run_id=source_run_id, k=k)


def fill_feedback(con: duckdb.DuckDBPyConnection, fills: Sequence[FeedbackFill]) -> None:
    """Write late feedback and its calls (inside the caller's transaction)."""
    for fill in fills:
        queries.fill_feedback(con, attempt_uid=fill.attempt_uid, feedback=fill.feedback,
                              error=json.dumps(fill.error) if fill.error is not None else None)
        first = queries.last_call_index(con, attempt_uid=fill.attempt_uid) or 0
        for offset, c in enumerate(fill.calls, start=1):
            queries.insert_call(
                con, attempt_uid=fill.attempt_uid, run_id=fill.run_id, generation=fill.generation,
                task_index=fill.task_index, attempt_index=fill.attempt_index, call_index=first + offset,
                chain_index=fill.chain_index, **{name: getattr(c, name) for name in _CALL_COLUMNS[6:]})


_ATTEMPT_COLUMNS = (
    "attempt_uid", "run_id", "generation", "task_index", "attempt_index", "k", "status",
    "success", "score", "prompt", "output", "raw_eval_output", "judge_details", "feedback",
    "error", "started_at", "finished_at", "chain_index",
)
_CALL_COLUMNS = (
    "attempt_uid", "run_id", "generation", "task_index", "attempt_index", "call_index", "role",
    "model", "prompt", "output", "input_tokens", "cached_tokens", "thinking_tokens",
    "output_tokens", "cost_usd", "latency_s", "retries", "error", "started_at",
    "cache_write_tokens", "price_tier",
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
    cols: dict[str, list[Any]] = {name: [] for name in (*_CALL_COLUMNS, "chain_index")}
    for r in records:
        for index, c in enumerate(r.calls, start=1):
            cols["attempt_uid"].append(r.attempt_uid)
            cols["run_id"].append(r.run_id)
            cols["generation"].append(r.generation)
            cols["task_index"].append(r.task_index)
            cols["attempt_index"].append(r.attempt_index)
            cols["call_index"].append(index)
            cols["chain_index"].append(r.chain_index)
            for name in _CALL_COLUMNS[6:]:
                cols[name].append(getattr(c, name))
    return cols


class AttemptBatch:
    """Whole attempts and their calls as Arrow tables, and late feedback: what one commit appends,
    converted once, so that a commit run again (it lost every race for the lake's catalog,
    seqk/store/lake_retry.py) does not convert its attempts again."""

    __slots__ = ("attempts", "calls", "chains", "fills")

    def __init__(self, items: Sequence[AttemptRecord | FeedbackFill]):
        import pyarrow as pa

        self.chains = chain_keys(items)  # the chains whose kept outcomes the commit changes
        records = [r for r in items if isinstance(r, AttemptRecord)]
        self.fills = [r for r in items if isinstance(r, FeedbackFill)]
        self.attempts: Any = pa.table(_attempt_columns(records))
        self.calls: Any = pa.table(_call_columns(records))


def append_attempts(con: duckdb.DuckDBPyConnection,
                    items: Sequence[AttemptRecord | FeedbackFill] | AttemptBatch) -> None:
    """Append whole attempts with their calls (and late feedback) in one transaction."""
    if not isinstance(items, AttemptBatch):
        if not items:
            return
        items = AttemptBatch(items)
    attempts, calls, fills = items.attempts, items.calls, items.fills
    if not attempts.num_rows and not fills:
        return
    try:
        with transaction(con):
            fill_feedback(con, fills)
            con.register("seqk_attempt_batch", attempts)
            queries.append_attempt_batch(con)
            if calls.num_rows:
                con.register("seqk_call_batch", calls)
                queries.append_call_batch(con)
            keep_chains(con, items.chains)
    finally:
        con.unregister("seqk_attempt_batch")
        con.unregister("seqk_call_batch")


def chain_keys(items: Sequence[AttemptRecord | FeedbackFill]) -> list[tuple[str, int, int, int]]:
    """The chains these attempts and late feedback belong to, (run_id, generation, task_index,
    chain_index) each once, in order."""
    return sorted({(r.run_id, r.generation, r.task_index, r.chain_index) for r in items})


def keep_chains(con: duckdb.DuckDBPyConnection, keys: Sequence[tuple[str, int, int, int]]) -> None:
    """Keep the outcomes (table chain_kept) of these chains (`chain_keys`) as the store now has
    them: inside the caller's transaction, after their attempts and feedback are written."""
    if not keys:
        return
    kept.keep_chains_of(con, keys)


TASKS_PER_STATEMENT = 10_000
"""Tasks registered by one statement of insert_tasks."""

_META = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""json.dumps(meta, ensure_ascii=False, default=str), without an encoder built per call."""


def _meta_text(meta: dict[str, Any] | None) -> str:
    if not meta:
        return "{}"
    if len(meta) == 1:
        ((key, value),) = meta.items()
        if type(key) is str and type(value) is int:
            # A data set row's meta ({"line": 7}) as json.dumps writes it, in a fifth of the time.
            return f"{{{encode_basestring(key)}: {value}}}"
    return _META(meta)


def insert_tasks(con: duckdb.DuckDBPyConnection, run_id: str, rows: Sequence[dict[str, Any]]) -> None:
    """Register tasks the run has not seen yet (rows: task_index, task_id, prompt, content_hash, meta)."""
    # A statement per 10,000 tasks: one JSON text of 100,000 and DuckDB's parse of it held
    # ~250 MB at once (bench/bench_dataset.py); the caller's transaction keeps them one write.
    for start in range(0, len(rows), TASKS_PER_STATEMENT):
        part = rows[start:start + TASKS_PER_STATEMENT]
        queries.insert_tasks(con, run_id=run_id, columns=json.dumps({
            "task_index": [r["task_index"] for r in part], "task_id": [r["task_id"] for r in part],
            "prompt": [r["prompt"] for r in part], "content_hash": [r["content_hash"] for r in part],
            "meta": [_meta_text(r.get("meta")) for r in part]}, ensure_ascii=False))


def insert_imported_run(con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> None:
    """Add a run rebuilt from an exported folder."""
    queries.import_run(con, **row)
