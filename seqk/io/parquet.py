"""`seqk export --parquet`: the runs, tasks, attempts and calls tables of chosen runs as Parquet,
hive-partitioned by benchmark and run, streamed from the store to the files.

Memory stays bounded whatever the store holds: DuckDB hands over BATCH_ROWS rows at a time
(seqk.store.execute), tasks, attempts and calls are read a group of runs at a time (the sort
holds one group), and one file is open at a time, written beside the partition's old file and
put in its place when whole (docs/performance.md: a million attempts in ~0.4 GB, 1.6 GB before).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from seqk import store
from seqk.store import execute, queries

__all__ = ["PARQUET_TABLES", "export_parquet"]

PARQUET_TABLES = ("runs", "tasks", "attempts", "calls")


def export_parquet(runs: Sequence[str] = (), db: store.DbLike = None, *,
                   to: str | os.PathLike[str]) -> dict[str, int]:
    """Write runs, tasks, attempts and calls as Parquet under to/<table>/, hive-partitioned
    by benchmark and run_key (run_id with '/' as '~'). Returns rows written per table.

    Every row of the chosen runs is written, superseded ones included; `attempts.counts`
    marks the rows the metrics use. Re-exporting a run replaces its partitions and leaves
    the other runs' partitions alone.
    """
    counts = dict.fromkeys(PARQUET_TABLES, 0)
    with store.connect(db, read_only=True) as con:
        run_ids = store.resolve_run_ids(con, runs)
        sizes = queries.export_parquet_rows(con, run_ids=sorted(run_ids))  # counted once, for all
        for name in PARQUET_TABLES:
            # Streamed, BATCH_ROWS rows at a time from DuckDB into one open file at a time, never
            # a whole table in memory (docs/performance.md).
            groups = _groups(sizes, name) if name in GROUPED else [sorted(run_ids)]
            _write_partitions(_ahead(_counted(_batches(con, groups, name), counts, name)), Path(to) / name)
    return counts


def _ahead(items: Iterator[Any], depth: int = 2) -> Iterator[Any]:
    """The items, produced by a thread of their own up to `depth` ahead of the consumer: DuckDB
    reads the next batch while pyarrow compresses and writes this one (both let go of the GIL),
    and no more than depth + 1 batches are ever held. The thread alone touches what `items`
    reads (its connection) until it is done; an error there is raised here."""
    import queue
    import threading

    handoff: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        handoff.put((True, item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            handoff.put((False, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            handoff.put((False, exc))

    thread = threading.Thread(target=produce, name="seqk-export-read", daemon=True)
    thread.start()
    try:
        while True:
            more, item = handoff.get()
            if not more:
                if item is not None:
                    raise item
                return
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # let a producer blocked on a full queue see the stop
            with contextlib.suppress(queue.Empty):
                handoff.get(timeout=0.1)
        thread.join()


PARTITIONS = ("benchmark", "run_key")
"""The hive partition columns, folder names under each table, not columns of its files."""

GROUPED = ("tasks", "attempts", "calls")
"""Tables read a group of runs at a time, GROUP_ROWS rows or so (a larger run alone): the query's
sort then holds one group's rows, so an export's memory grows with the largest run, not with the
store, while a store of many small runs is not read with a query a run."""
GROUP_ROWS = 100_000


def _batches(con: store.Connection, groups: list[list[str]], name: str) -> Iterator[Any]:
    """The table's rows of these groups of runs, group by group, each in the order the query gives
    them: the whole order, as the export queries sort by run_id first."""
    for ids in groups:
        yield from store.parquet_batches(con, ids, name)


def _groups(sizes: Sequence[dict[str, Any]], name: str) -> list[list[str]]:
    """The runs of `sizes` (export_parquet_rows, in run_id order) cut into consecutive groups of
    about GROUP_ROWS rows of `name`; a larger run is a group alone."""
    groups: list[list[str]] = []
    rows = 0
    for run in sizes:
        if not groups or rows + run[name] > GROUP_ROWS:
            groups.append([])
            rows = 0
        groups[-1].append(run["run_id"])
        rows += run[name]
    return groups


def _counted(reader: Any, counts: dict[str, int], name: str) -> Iterator[Any]:
    """The reader's batches, their rows added to counts[name] as they pass."""
    for batch in reader:
        counts[name] += batch.num_rows
        yield batch


def _write_partitions(batches: Iterator[Any], folder: Path) -> None:
    """Write batches whose rows come run by run (sorted by run_id) as folder/benchmark=B/run_key=R/
    part-0.parquet, one file open at a time, one row group per batch and partition, the rows in
    their order. Each partition is written beside its old file and takes its place when whole, so
    a failed export leaves the old file as it was; the partitions of other runs are not touched."""
    import itertools
    from urllib.parse import quote

    import pyarrow.parquet as pq

    pieces = itertools.chain.from_iterable(_partitions(batch) for batch in batches)
    for (benchmark, run_key), same in itertools.groupby(pieces, key=lambda piece: piece[0]):
        # the values URI-escaped as pyarrow's hive partitioning names them ('@' as %40)
        part = folder / f"benchmark={quote(benchmark, safe='')}" / f"run_key={quote(run_key, safe='')}"
        part = part / "part-0.parquet"
        part.parent.mkdir(parents=True, exist_ok=True)
        _, first = next(same)
        try:
            with pq.ParquetWriter(_unfinished(part), first.schema) as writer:
                for rows in itertools.chain([first], (rows for _, rows in same)):
                    writer.write_batch(rows, row_group_size=execute.BATCH_ROWS)
        except BaseException:  # an error mid-partition: its old file stays, the new part goes
            _unfinished(part).unlink(missing_ok=True)
            raise
        _replace(part)


def _partitions(batch: Any) -> Iterator[tuple[tuple[str, str], Any]]:
    """((benchmark, run_key), its rows without the partition columns) for each run in the batch,
    whose rows come sorted by run (most batches hold one run: no row is looked at)."""
    benchmark, run_key = batch.column("benchmark"), batch.column("run_key")
    last = batch.num_rows - 1
    if (benchmark[0], run_key[0]) == (benchmark[last], run_key[last]):
        yield (benchmark[0].as_py(), run_key[0].as_py()), batch.drop_columns(list(PARTITIONS))
        return
    keys = list(zip(benchmark.to_pylist(), run_key.to_pylist(), strict=True))
    start = 0
    for end in range(1, len(keys) + 1):
        if end == len(keys) or keys[end] != keys[start]:
            yield keys[start], batch.slice(start, end - start).drop_columns(list(PARTITIONS))
            start = end


def _unfinished(part: Path) -> Path:
    return part.with_name(part.name + ".partial")


def _replace(part: Path) -> None:
    """The partition's finished file in place of every Parquet file the folder held."""
    for old in part.parent.glob("*.parquet"):
        if old != part:
            old.unlink()
    os.replace(_unfinished(part), part)
