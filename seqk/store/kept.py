"""Each chain's outcome kept as its attempts are written (the table chain_kept, sql/kept.sql).

seqk.store.writes.append_attempts keeps the chains it writes to, in the same transaction; a
migration keeps every chain of a store from before the table. Rows written to attempts with SQL
(bench/make_synthetic_db.py, tests) are kept by rebuilding.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    caller's transaction: their attempts and calls read back with plain statements
    (sql/kept.sql) and folded over the whole batch with numpy (`fold`) into chain_kept_rows's
    columns (sql/views.sql, the definition; `kept_chains_differ` checks the two agree). The
    macro's statement cost ~28 ms of CPU a commit, 17 of them planning, whatever the batch; a fold
    in Python, chain by chain, ~60 us a chain on a lake (docs/performance.md)."""
    if not keys:
        return
    import pyarrow as pa

    registered = pa.table({
        "key_no": pa.array(range(len(keys)), pa.int32()),
        "run_id": [k[0] for k in keys], "generation": pa.array([k[1] for k in keys], pa.int32()),
        "task_index": pa.array([k[2] for k in keys], pa.int32()),
        "chain_index": pa.array([k[3] for k in keys], pa.int32())})
    con.register("seqk_kept_keys", registered)
    try:
        batch = fold(registered, queries.kept_chain_attempts(con), queries.kept_chain_calls(con))
        queries.forget_registered_kept_chains(con)
        if batch.num_rows:
            con.register("seqk_kept_batch", batch)
            try:
                queries.append_kept_chains(con)
            finally:
                con.unregister("seqk_kept_batch")
    finally:
        con.unregister("seqk_kept_keys")


def fold(keys: Any, attempts: Any, calls: Any) -> Any:
    """chain_kept_rows's rows (an Arrow table of `_schema()`) of the chains in `keys` (run_id,
    generation, task_index, chain_index, by key_no, its row number) that have an attempt, from
    their attempts (kept_chain_attempts) and calls (kept_chain_calls), each in any order: every
    column computed over the whole batch at once, grouped by sorting; sums are taken in a fixed
    order (a slot's calls as read, then slot by slot in attempt order)."""
    import numpy as np
    import pyarrow as pa

    schema = _schema()
    if not attempts.num_rows:
        return schema.empty_table()
    # the slots: attempt rows grouped by (key_no, attempt_index), as chain_kept_rows's slots
    order, first_row = _groups(attempts)
    key = _ints(attempts["key_no"])[order][first_row]
    idx = _ints(attempts["attempt_index"])[order][first_row]
    valid = np.logical_or.reduceat(_bools(attempts["ok"])[order], first_row)
    solved = np.logical_or.reduceat(_bools(attempts["solved"])[order], first_row)
    value, has_value = _floats(attempts["value"], order)
    score = np.maximum.reduceat(np.where(has_value, value, -np.inf), first_row)
    has_score = np.logical_or.reduceat(has_value, first_row)
    done, has_done = _ints_masked(attempts["finished_at"].cast(pa.int64()), order)
    finished = np.maximum.reduceat(np.where(has_done, done, np.iinfo(np.int64).min), first_row)
    has_finished = np.logical_or.reduceat(has_done, first_row)

    # the call slots: calls grouped by (key_no, attempt_index), as chain_kept_rows's slot_spend
    if calls.num_rows:
        c_order, c_first = _groups(calls)
        c_key = _ints(calls["key_no"])[c_order][c_first]
        c_idx = _ints(calls["attempt_index"])[c_order][c_first]
        cost, has_cost = _floats(calls["cost_usd"], c_order)
        c_cost = np.add.reduceat(np.where(has_cost, cost, 0.0), c_first)
        c_has_cost = np.logical_or.reduceat(has_cost, c_first)
        c_tokens = np.add.reduceat(_ints(calls["tokens"].fill_null(0))[c_order], c_first)
        inp, has_inp = _ints_masked(calls["input_tokens"], c_order)
        c_in, c_has_in = np.add.reduceat(np.where(has_inp, inp, 0), c_first), np.logical_or.reduceat(has_inp, c_first)
        out, has_out = _ints_masked(calls["output_tokens"], c_order)
        c_out, c_has_out = np.add.reduceat(np.where(has_out, out, 0), c_first), np.logical_or.reduceat(has_out, c_first)
        c_unpriced = np.add.reduceat(_bools(calls["unpriced"])[c_order].astype(np.int64), c_first)
        c_failed = np.add.reduceat(_bools(calls["failed"])[c_order].astype(np.int64), c_first)
    else:
        c_key = c_idx = c_tokens = c_in = c_out = c_unpriced = c_failed = np.zeros(0, np.int64)
        c_cost = np.zeros(0)
        c_has_cost = c_has_in = c_has_out = np.zeros(0, bool)

    n = len(key)
    first = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))  # each chain's first slot
    counts = np.diff(np.append(first, n))
    chain_key = key[first]
    g = np.repeat(np.arange(len(first)), counts)  # each slot's chain
    pos = np.arange(n) - first[g] + 1  # the slot's place in its chain, from 1

    def within(flags: Any) -> Any:  # a running count of flags within each chain
        total = np.cumsum(flags)
        return total - (total[first] - flags[first])[g]

    def per_chain(values: Any) -> Any:
        return np.add.reduceat(values, first)

    n_valid = per_chain(valid.astype(np.int64))
    rank = within(valid.astype(np.int64))  # a valid slot's place among its chain's valid slots
    valid_prefix = per_chain((valid & (rank == idx)).astype(np.int64))
    settled_prefix = per_chain((pos == idx).astype(np.int64))
    none = np.iinfo(np.int64).max
    first_success = np.minimum.reduceat(np.where(solved, idx, none), first)
    first_error = np.minimum.reduceat(np.where(~valid, idx, none), first)
    last = np.maximum.reduceat(np.where(has_finished, finished, np.iinfo(np.int64).min), first)
    any_finished = per_chain(has_finished.astype(np.int64)) > 0

    # best so far within each chain: a scan by doubling (chains are short)
    best = np.where(has_score, score, -np.inf)
    shift = 1
    while shift < counts.max():
        ahead = np.full(n, -np.inf)
        ahead[shift:] = best[:-shift]
        best = np.where(pos > shift, np.maximum(best, ahead), best)
        shift *= 2
    best = np.where(within(has_score.astype(np.int64)) > 0, best, 0.0)

    # each slot's spend, from its call slot (both ordered by key_no, then attempt_index)
    keep = np.isin(c_key, chain_key)  # (every call's chain has an attempt in a store seqk wrote)
    c_key, c_idx, c_cost, c_has_cost, c_tokens = (
        c_key[keep], c_idx[keep], c_cost[keep], c_has_cost[keep], c_tokens[keep])
    c_in, c_has_in, c_out, c_has_out = c_in[keep], c_has_in[keep], c_out[keep], c_has_out[keep]
    c_unpriced, c_failed = c_unpriced[keep], c_failed[keep]
    code = (key << 32) | idx
    c_code = (c_key << 32) | c_idx
    # (a sentinel call slot past the end, so that a slot with no call slot finds none)
    at = np.searchsorted(c_code, code)
    c_code_, c_cost_ = np.append(c_code, -1), np.append(c_cost, 0.0)
    c_has_cost_, c_tokens_ = np.append(c_has_cost, False), np.append(c_tokens, 0)
    found = c_code_[at] == code
    slot_cost = np.where(found, c_cost_[at], 0.0)
    slot_has_cost = found & c_has_cost_[at]
    slot_tokens = np.where(found, c_tokens_[at], 0)

    in_prefix = valid & (rank <= valid_prefix[g])  # the first valid_prefix valid slots
    valid_cost = np.bincount(g, weights=np.where(valid & slot_has_cost, slot_cost, 0.0),
                             minlength=len(first))
    valid_tokens = per_chain(np.where(valid, slot_tokens, 0))

    n_chains = len(first)
    cg = np.searchsorted(chain_key, c_key)  # each call slot's chain
    call_counts = np.bincount(cg, minlength=n_chains)

    def chain_sum(values: Any, mask: Any, dtype: Any) -> tuple[Any, Any]:
        total = np.zeros(n_chains, dtype)
        np.add.at(total, cg, np.where(mask, values, 0).astype(dtype))
        return total, np.bincount(cg, weights=mask, minlength=n_chains) > 0

    spent = np.bincount(cg, weights=np.where(c_has_cost, c_cost, 0.0), minlength=n_chains)
    has_spent = np.bincount(cg, weights=c_has_cost, minlength=n_chains) > 0  # (priced, too)
    inputs, has_inputs = chain_sum(c_in, c_has_in, np.int64)
    outputs, has_outputs = chain_sum(c_out, c_has_out, np.int64)
    unpriced_calls, _ = chain_sum(c_unpriced, np.ones(len(cg), bool), np.int64)
    failed_calls, _ = chain_sum(c_failed, np.ones(len(cg), bool), np.int64)

    def offsets(sizes: Any) -> Any:
        return pa.array(np.concatenate(([0], np.cumsum(sizes))).astype(np.int32))

    int32, double = pa.int32(), pa.float64()
    columns = keys.take(pa.array(chain_key)).select(["run_id", "generation", "task_index", "chain_index"])
    lists = {
        "cost_usd": pa.ListArray.from_arrays(offsets(valid_prefix), pa.array(
            slot_cost[in_prefix], double, mask=~slot_has_cost[in_prefix])),
        "tokens": pa.ListArray.from_arrays(offsets(valid_prefix), pa.array(slot_tokens[in_prefix], pa.int64())),
        "spend_by_slot": pa.ListArray.from_arrays(offsets(call_counts), pa.StructArray.from_arrays(
            [pa.array(c_idx, int32), pa.array(c_cost, double, mask=~c_has_cost),
             pa.array(c_tokens, pa.int64())], names=["i", "cost_usd", "tokens"])),
        "slot_best": pa.ListArray.from_arrays(offsets(counts), pa.StructArray.from_arrays(
            [pa.array(idx, int32), pa.array(best, double)], names=["i", "b"])),
    }
    data = {
        **{name: columns[name] for name in columns.column_names},
        "n_attempts": counts, "n_valid": n_valid, "n_error": counts - n_valid,
        "n_success": per_chain(solved.astype(np.int64)),
        "first_success": pa.array(first_success, int32, mask=first_success == none),
        "first_error": pa.array(first_error, int32, mask=first_error == none),
        "valid_prefix": valid_prefix, "settled_prefix": settled_prefix,
        "ended_in_error": ~valid[first + counts - 1],
        "last_finished_at": pa.array(last, pa.int64(), mask=~any_finished).cast(pa.timestamp("us")),
        "cost_usd": lists["cost_usd"], "tokens": lists["tokens"],
        "valid_cost_usd": valid_cost, "valid_tokens": valid_tokens, "priced": has_spent,
        "input_tokens": pa.array(inputs, pa.int64(), mask=~has_inputs),
        "output_tokens": pa.array(outputs, pa.int64(), mask=~has_outputs),
        "spent_usd": pa.array(spent, double, mask=~has_spent),
        "n_unpriced_calls": unpriced_calls, "n_failed_calls": failed_calls,
        "spend_by_slot": lists["spend_by_slot"], "slot_best": lists["slot_best"],
    }
    arrow = (pa.Array, pa.ChunkedArray)
    return pa.Table.from_arrays([data[f.name].cast(f.type) if isinstance(data[f.name], arrow)
                                 else pa.array(data[f.name], f.type) for f in schema], schema=schema)


def _groups(rows: Any) -> tuple[Any, Any]:
    """The order that sorts rows by (key_no, attempt_index), stably (rows of a slot keep the order
    they were read in), and where each (key_no, attempt_index) group starts in it."""
    import numpy as np

    code = (_ints(rows["key_no"]) << 32) | _ints(rows["attempt_index"])
    order = np.argsort(code, kind="stable")
    code = code[order]
    return order, np.flatnonzero(np.concatenate(([True], code[1:] != code[:-1])))


def _ints(column: Any) -> Any:
    import numpy as np

    return np.asarray(column.to_numpy(), dtype=np.int64)


def _bools(column: Any) -> Any:
    import numpy as np

    return np.asarray(column.fill_null(False).to_numpy(), dtype=bool)


def _floats(column: Any, order: Any) -> tuple[Any, Any]:
    """A nullable double column's values (NULL as 0.0) and which are present, in `order`."""
    import numpy as np

    values = np.asarray(column.fill_null(0.0).to_numpy(), dtype=np.float64)
    present = np.asarray(column.is_valid().to_numpy(), dtype=bool)
    return values[order], present[order]


def _ints_masked(column: Any, order: Any) -> tuple[Any, Any]:
    """A nullable integer column's values (NULL as 0) and which are present, in `order`."""
    import numpy as np

    values = np.asarray(column.fill_null(0).to_numpy(), dtype=np.int64)
    present = np.asarray(column.is_valid().to_numpy(), dtype=bool)
    return values[order], present[order]


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
