"""Each chain's outcome kept as its attempts are written (the table chain_kept, sql/kept.sql).

seqk.store.writes.append_attempts keeps the chains it writes to, in the same transaction; a
migration keeps every chain of a store from before the table. Rows written to attempts with SQL
(bench/make_synthetic_db.py, tests) are kept by rebuilding.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from seqk.store import queries
from seqk.store.execute import Connection, transaction


def rebuild_kept_chains(con: Connection) -> None:
    """Keep every chain's outcome (the table chain_kept) afresh from the attempts, in one
    transaction: for rows written by SQL rather than through append_attempts (bench/, tests)."""
    with transaction(con):
        queries.forget_all_kept_chains(con)
        queries.keep_all_chains(con)


def kept_chains_differ(con: Connection) -> int:
    """How many chain_kept rows differ from a recomputation from the attempts, both ways."""
    return int(queries.kept_chains_differ(con))


Key = tuple[str, int, int, int]


def keep_chains_of(con: Connection, keys: Sequence[Key]) -> None:
    """Keep the outcomes (table chain_kept) of these chains as the store now has them, inside the
    caller's transaction: their attempts and calls read back with plain statements and folded
    here into chain_kept_rows's columns (sql/views.sql, the definition; `kept_chains_differ`
    checks the two agree). The macro's statement cost ~28 ms of CPU a commit, 17 of them
    planning, whatever the batch (docs/performance.md)."""
    if not keys:
        return
    import pyarrow as pa

    con.register("seqk_kept_keys", pa.table({
        "run_id": [k[0] for k in keys], "generation": pa.array([k[1] for k in keys], pa.int32()),
        "task_index": pa.array([k[2] for k in keys], pa.int32()),
        "chain_index": pa.array([k[3] for k in keys], pa.int32())}))
    try:
        attempts: dict[Key, list[tuple[Any, ...]]] = {}
        for row in queries.kept_chain_attempts(con):
            attempts.setdefault(row[:4], []).append(row[4:])
        calls: dict[Key, list[tuple[Any, ...]]] = {}
        for row in queries.kept_chain_calls(con):
            calls.setdefault(row[:4], []).append(row[4:])
        rows = [_kept_row(key, attempts[key], calls.get(key, ())) for key in keys if key in attempts]
        queries.forget_registered_kept_chains(con)
        if rows:
            con.register("seqk_kept_batch", pa.Table.from_pylist(rows, schema=_schema()))
            try:
                queries.append_kept_chains(con)
            finally:
                con.unregister("seqk_kept_batch")
    finally:
        con.unregister("seqk_kept_keys")


def _sum(values: Iterable[Any]) -> Any:
    """SQL's sum: None when every value is NULL."""
    total = None
    for v in values:
        if v is not None:
            total = v if total is None else total + v
    return total


def _prefix(indices: Sequence[int]) -> int:
    """len([x FOR x, i IN list_sort(indices) IF x = i])."""
    return sum(1 for i, x in enumerate(sorted(indices), start=1) if x == i)


def _kept_row(key: Key, attempts: Sequence[tuple[Any, ...]], calls: Iterable[tuple[Any, ...]]) -> dict[str, Any]:
    """chain_kept_rows's row of one chain from its attempts (attempt_index, status, success, score,
    finished_at) and calls (attempt_index, cost_usd, input_tokens, output_tokens, unpriced, failed)."""
    slots: dict[int, list[Any]] = {}  # attempt_index -> [valid, solved, score, finished_at]
    for index, status, success, score, finished_at in attempts:
        slot = slots.get(index)
        if slot is None:
            slot = slots[index] = [False, False, None, finished_at]
        elif finished_at is not None and (slot[3] is None or finished_at > slot[3]):
            slot[3] = finished_at
        if status == "ok":
            slot[0] = True
            if success:
                slot[1] = True
            value = score if score is not None else (None if success is None else float(success))
            if value is not None and (slot[2] is None or value > slot[2]):
                slot[2] = value
    spend: dict[int, list[Any]] = {}  # attempt_index -> [costs, tokens, inputs, outputs, unpriced, failed]
    for index, cost, inp, out, unpriced, failed in calls:
        s = spend.get(index)
        if s is None:
            s = spend[index] = [[], 0, [], [], 0, 0]
        s[0].append(cost)
        s[1] += (inp or 0) + (out or 0)
        s[2].append(inp)
        s[3].append(out)
        s[4] += bool(unpriced)
        s[5] += bool(failed)
    order = sorted(slots)
    valid = [i for i in order if slots[i][0]]
    best, slot_best = None, []
    for i in order:
        score = slots[i][2]
        if score is not None and (best is None or score > best):
            best = score
        slot_best.append({"i": i, "b": 0.0 if best is None else best})
    n_valid = len(valid)
    valid_prefix = n_valid if n_valid == (valid[-1] if valid else 0) else _prefix(valid)
    settled_prefix = len(order) if len(order) == order[-1] else _prefix(order)
    solved = [i for i in order if slots[i][1]]
    errors = [i for i in order if not slots[i][0]]
    costs = [_sum(spend[i][0]) if i in spend else None for i in valid]
    tokens = [spend[i][1] if i in spend else 0 for i in valid]
    called = sorted(spend)
    slot_spend = [spend[i] for i in called]
    slot_costs = [_sum(s[0]) for s in slot_spend]
    return {
        "run_id": key[0], "generation": key[1], "task_index": key[2], "chain_index": key[3],
        "n_attempts": len(order), "n_valid": n_valid, "n_error": len(errors), "n_success": len(solved),
        "first_success": solved[0] if solved else None, "first_error": errors[0] if errors else None,
        "valid_prefix": valid_prefix, "settled_prefix": settled_prefix,
        "ended_in_error": not slots[order[-1]][0],
        "last_finished_at": max((slots[i][3] for i in order if slots[i][3] is not None), default=None),
        "cost_usd": costs[:valid_prefix], "tokens": tokens[:valid_prefix],
        "valid_cost_usd": _sum(costs) or 0.0, "valid_tokens": sum(tokens),
        "priced": any(any(c is not None for c in s[0]) for s in slot_spend),
        "input_tokens": _sum(_sum(s[2]) for s in slot_spend),
        "output_tokens": _sum(_sum(s[3]) for s in slot_spend),
        "spent_usd": _sum(slot_costs), "n_unpriced_calls": sum(s[4] for s in slot_spend),
        "n_failed_calls": sum(s[5] for s in slot_spend),
        "spend_by_slot": [{"i": i, "cost_usd": c, "tokens": s[1]}
                          for i, s, c in zip(called, slot_spend, slot_costs, strict=True)],
        "slot_best": slot_best,
    }


def _schema() -> Any:
    import pyarrow as pa

    int32, int64, double = pa.int32(), pa.int64(), pa.float64()
    return pa.schema([
        ("run_id", pa.string()), ("generation", int32), ("task_index", int32), ("chain_index", int32),
        ("n_attempts", int64), ("n_valid", int64), ("n_error", int64), ("n_success", int64),
        ("first_success", int32), ("first_error", int32), ("valid_prefix", int64),
        ("settled_prefix", int64), ("ended_in_error", pa.bool_()), ("last_finished_at", pa.timestamp("us")),
        ("cost_usd", pa.list_(double)), ("tokens", pa.list_(int64)), ("valid_cost_usd", double),
        ("valid_tokens", int64), ("priced", pa.bool_()), ("input_tokens", int64),
        ("output_tokens", int64), ("spent_usd", double), ("n_unpriced_calls", int64),
        ("n_failed_calls", int64),
        ("spend_by_slot", pa.list_(pa.struct([("i", int32), ("cost_usd", double), ("tokens", int64)]))),
        ("slot_best", pa.list_(pa.struct([("i", int32), ("b", double)]))),
    ])
