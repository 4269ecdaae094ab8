"""The rows a report's figures are computed from, per run, remembered under the run's digests.

A report (and `seqk compare`) reads, for every run it covers, three things from the store: its chains (sql/metrics.sql
chain_rows, as seqk.analysis.survival.RunChains), its spend by role (spend_by_role) and its curve
(run_curves). Each is a function of that run's rows alone (and, for a re-judging run, of the runs
it grades): every query groups by run, and their sums are exact (sql/views.sql exact_sum), so a
run's rows read alone are the rows read beside any other runs, bit for bit
(tests/analysis/test_inputs.py). So each run's are kept in seqk.analysis.memo under that run's
`run_fingerprints` and `run_digests` rows (and its sources' rows): the key a whole report is
remembered under (seqk/analysis/report.py), which moves with every row added to any table a report
reads, every run event and every migration (tests/analysis/test_memo.py). A report after one more
run then reads that run's rows from the store and every other run's from the cache folder, instead
of 1.4 M chains at 10 M attempts to key the figures it already remembers.

A RunChains is kept packed (`pack`): each integer array in the narrowest integer type that holds
its values, each float array as float32 where that keeps every value bit for bit, else as codes
into a table of its distinct values where they are few (a run's prices), the task keys as bytes;
`unpack` restores the types, so the arrays are the arrays read, bit for bit, and the fingerprint
is kept beside them (computing it is most of what keying a figure costs); read back, a run is
unpacked only when an array is first asked for (KeptChains), so a report whose figures are all
remembered unpacks none. A report of 50 runs
keeps 17 MB in all (figures and rows) at 1 M attempts and ~150 MB at 10 M (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any, cast

import numpy as np

from seqk.analysis.memo import REPORT_SOURCES, remembered, remembered_each
from seqk.analysis.survival import RunChains, read_chains
from seqk.store import queries

KIND = "run-rows 1"
"""The memo kind of a run's rows (its number moves when what is kept changes shape)."""

RunKeys = dict[str, tuple[Any, ...]]
"""Per run id: what its rows are remembered under (run_keys)."""


def run_keys(con: Any, run_ids: Sequence[str],
             known: dict[str, dict[str, Any] | None] | None = None) -> tuple[RunKeys, tuple[Any, ...]]:
    """Per given run, the parts its rows are remembered under: its run_fingerprints and
    run_digests rows and those of the runs it re-judges; and those rows for the runs and their
    sources together (what a whole report is keyed by). `known`: run_fingerprints rows already
    read (None for a run without one), read before this call, so before the rows they key (a
    viewer's, seqk.view.verdict_cache); the others are read here."""
    pairs = queries.rejudge_sources(con, run_ids=list(run_ids))
    sources: dict[str, list[str]] = {}
    for row in pairs:
        sources.setdefault(row["run_id"], []).append(row["source_run_id"])
    read = sorted(set(run_ids) | {row["source_run_id"] for row in pairs})
    known = {i: known[i] for i in read if i in known} if known else {}
    unread = [i for i in read if i not in known]
    prints = sorted([r for r in known.values() if r is not None]
                    + (queries.run_fingerprints(con, run_ids=unread) if unread else []), key=lambda r: r["run_id"])
    digests = queries.run_digests(con, run_ids=read)
    by_run = {row["run_id"]: row for row in prints}
    counted = {row["run_id"]: row for row in digests}

    def rows(run_id: str) -> tuple[Any, ...]:
        return (run_id, by_run.get(run_id), counted.get(run_id))

    keys = {run_id: (rows(run_id), [rows(s) for s in sorted(sources.get(run_id, []))]) for run_id in run_ids}
    return keys, (prints, digests)


def chains_of(con: Any, run_ids: Sequence[str], keys: RunKeys | Callable[[], RunKeys]) -> dict[str, RunChains]:
    """read_chains(con, run_ids), each unchanged run's read back from the cache folder."""
    # a KeptChains answers every attribute of a RunChains (unpacking it at the first array asked for)
    return remembered_each(f"{KIND} chains", _parts(keys, ""), lambda missed: read_chains(con, missed), run_ids,
                           sources=REPORT_SOURCES, kept=pack, loaded=lambda packed: cast(RunChains, KeptChains(packed)))


def spend_of(con: Any, run_ids: Sequence[str], keys: RunKeys | Callable[[], RunKeys]) -> list[dict[str, Any]]:
    """queries.spend_by_role(con, run_ids=...) (in its order), each unchanged run's rows read back."""
    return _rows_of("spend", "", run_ids, keys, lambda missed: queries.spend_by_role(con, run_ids=missed))


def curves_of(con: Any, run_ids: Sequence[str], keys: RunKeys | Callable[[], RunKeys], *,
              errors_as_failures: bool) -> list[dict[str, Any]]:
    """queries.run_curves (by run, then t), each unchanged run's rows read back."""
    return _rows_of("curves", f"errors_as_failures={errors_as_failures}", run_ids, keys, lambda missed: (
        queries.run_curves(con, errors_as_failures=errors_as_failures, run_ids=missed)))


def _rows_of(name: str, setting: str, run_ids: Sequence[str], keys: RunKeys | Callable[[], RunKeys],
             query: Callable[[list[str]], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """query(run ids)'s rows (ordered by run_id first), each run's kept under its key and
    `setting`: the missed runs' asked in one query."""
    def read(missed: list[str]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {run_id: [] for run_id in missed}  # a run without rows: []
        for row in query(missed):
            out[row["run_id"]].append(row)
        return out

    kept = remembered_each(f"{KIND} {name}", _parts(keys, setting), read, run_ids, sources=REPORT_SOURCES)
    return [row for run_id in sorted(kept) for row in kept[run_id]]


def solved_of(con: Any, run_a: str, run_b: str, keys: RunKeys | Callable[[], RunKeys], *,
              errors_as_failures: bool) -> list[dict[str, Any]]:
    """queries.compare_solved for the pair (what `seqk compare` reads its flips from), read back
    while neither run changed."""
    def parts() -> tuple[Any, ...]:
        found = keys() if callable(keys) else keys
        return (run_a, run_b, errors_as_failures, found[run_a], found[run_b])

    return remembered(f"{KIND} solved", parts, lambda: queries.compare_solved(
        con, errors_as_failures=errors_as_failures, run_a=run_a, run_b=run_b), sources=REPORT_SOURCES)


def _parts(keys: RunKeys | Callable[[], RunKeys], setting: str) -> Callable[[], RunKeys]:
    def parts() -> RunKeys:
        found = keys() if callable(keys) else keys
        return {run_id: (setting, *key) for run_id, key in found.items()}
    return parts


# ---------------------------------------------------------------------------
# A RunChains packed and unpacked, exactly


def pack(chains: RunChains) -> dict[str, Any]:
    """chains as a dict of narrow arrays (`_narrow`) and its fingerprint; unpack restores it."""
    out: dict[str, Any] = {"fingerprint": chains.fingerprint}
    for f in fields(chains):
        if f.name == "curves":
            continue
        value = getattr(chains, f.name)
        if isinstance(value, dict):
            out[f.name] = {name: _narrow(array) for name, array in value.items()}
        elif isinstance(value, np.ndarray):
            out[f.name] = _narrow(value)
        else:
            out[f.name] = value
    return out


class KeptChains:
    """A run's chains read back from the cache folder, unpacked (`unpack`) when an array is first
    asked for: its fingerprint, which keys every figure, and its scalars need none, so a report
    whose figures are all remembered unpacks no run (0.7 s and ~0.5 GB at 10 M attempts). Every
    other attribute is the RunChains' own."""

    __slots__ = ("_packed", "_unpacked", "_lock", "fingerprint", "run_id", "metric", "k", "chains", "priced")

    def __init__(self, packed: dict[str, Any]) -> None:
        self._packed: dict[str, Any] | None = packed
        self._unpacked: RunChains | None = None
        self._lock = threading.Lock()
        self.fingerprint: bytes = packed["fingerprint"]
        self.run_id, self.metric, self.k = packed["run_id"], packed["metric"], packed["k"]
        self.chains, self.priced = packed["chains"], packed["priced"]

    def unpacked(self) -> RunChains:
        """The RunChains itself (unpacked once, by whichever thread asks first)."""
        with self._lock:
            if self._unpacked is None:
                assert self._packed is not None
                self._unpacked, self._packed = unpack(self._packed), None
            return self._unpacked

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # a slot not set yet (during unpickling, say): not the chains'
            raise AttributeError(name)
        return getattr(self.unpacked(), name)


def unpack(packed: dict[str, Any]) -> RunChains:
    """The RunChains pack was given: every array of its type again, its fingerprint known."""
    values: dict[str, Any] = {}
    for f in fields(RunChains):
        if f.name == "curves":
            continue
        value = packed[f.name]
        if isinstance(value, dict):
            values[f.name] = {name: _widened(array) for name, array in value.items()}
        else:
            values[f.name] = _widened(value)
    chains = RunChains(**values)
    chains.__dict__["fingerprint"] = packed["fingerprint"]  # the cached_property, already computed
    return chains


def _narrow(array: np.ndarray) -> tuple[Any, ...]:
    """(the array's dtype, the kept dtype, the kept values[, their table]): integers in the
    narrowest signed type holding them; floats as float32 when every value survives the round
    trip bit for bit, else as codes into a table of their distinct values when there are at most
    65,536 (a run's prices take few values); strings as bytes when they are ASCII."""
    kind = array.dtype.kind
    if not array.size:
        return array.dtype.str, array.dtype.str, array
    if kind == "i":
        low, high = int(array.min()), int(array.max())
        for narrow in (np.int8, np.int16, np.int32):
            info = np.iinfo(narrow)
            if info.min <= low and high <= info.max:
                return array.dtype.str, np.dtype(narrow).str, array.astype(narrow)
    elif array.dtype == np.float64:
        single = array.astype(np.float32)
        if _same_bits(single.astype(np.float64), array):
            return array.dtype.str, single.dtype.str, single
        table = np.unique(array)  # a sort, then a search among the few: faster than return_inverse
        if len(table) <= 1 << 16:
            codes = np.searchsorted(table, array).astype(np.uint8 if len(table) <= 1 << 8 else np.uint16)
            if _same_bits(table[codes], array):  # 0.0 and -0.0, or NaNs, are one value to np.unique
                return array.dtype.str, "table", codes, table
    elif kind == "U":
        with contextlib.suppress(UnicodeEncodeError):
            return array.dtype.str, f"S{array.dtype.itemsize // 4}", array.astype(f"S{array.dtype.itemsize // 4}")
    return array.dtype.str, array.dtype.str, array


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Two float64 arrays equal bit for bit (0.0 and -0.0 differ, a NaN equals its own bits)."""
    return a.shape == b.shape and bool(np.array_equal(a.view(np.int64), b.view(np.int64)))


def _widened(value: Any) -> Any:
    if not (isinstance(value, tuple) and len(value) in (3, 4) and isinstance(value[2], np.ndarray)):
        return value
    if len(value) == 4:
        return value[3][value[2]]
    dtype, stored, array = value
    return array if dtype == stored else array.astype(dtype)
