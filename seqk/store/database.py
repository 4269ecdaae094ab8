"""A store, as one object: a DuckDB file (seqk/store/file.py) or a DuckLake (seqk/store/lake.py).

Everything the two do differently is a method or an attribute here, as procrastinate's
connectors carry a backend's differences; nothing above seqk/store/ asks which one it holds.
`store.open(db)` (seqk/store/location.py) makes one from `--db`, $SEQK_DB or the default,
once per command; the rest of the program passes the object on.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from seqk.errors import BadInput
from seqk.store.execute import Connection

T = TypeVar("T")

THREADS_VARIABLE = "SEQK_DUCKDB_THREADS"


def duckdb_threads() -> int | None:
    """The DuckDB threads a store's connections use: $SEQK_DUCKDB_THREADS, a whole number >= 1,
    or None (unset or empty) for DuckDB's default, one per core. Several seqk processes on one
    machine (a sweep, or the test suite's one worker per core) each start a thread per core, and
    their small statements then spend more CPU handing work between threads than doing it."""
    text = os.environ.get(THREADS_VARIABLE, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise BadInput(f"{THREADS_VARIABLE} should be a whole number of threads, 1 or more, got {text!r}")
    return int(text)


def limit_threads(con: Connection) -> None:
    """Apply $SEQK_DUCKDB_THREADS (duckdb_threads) to this connection's database, if it is set."""
    threads = duckdb_threads()
    if threads is not None:
        con.execute("SET threads = ?", [threads])


@dataclass(frozen=True)
class Compaction:
    """What `seqk lake compact` did."""

    files_before: int
    """Parquet data files the current snapshot read before."""
    files_after: int
    snapshots_before: int
    snapshots_after: int
    seconds: float


class Database(ABC):
    """One store. Instances are small and picklable (a Ray worker gets the driver's)."""

    commit_interval_s: float
    """How often a run's writer commits a batch of finished attempts."""
    shared_writes: bool
    """Whether several processes may write at once (a lake: Ray workers write their own
    attempts), or only one at a time, which then holds the store for each batch (a file)."""

    @property
    @abstractmethod
    def display(self) -> str:
        """The store as a user named it, for messages (a lake without secrets: it holds none)."""

    @property
    @abstractmethod
    def home(self) -> Path:
        """The folder where run folders are exported by default: the database's folder (runs/
        for a lake)."""

    @abstractmethod
    def connect(self, *, read_only: bool = False, wait_s: float = 30.0,
                checkpoint: bool = True) -> AbstractContextManager[Connection]:
        """A connection for the block, its schema and views current (a read-write open creates
        the store). Keep the block short: a file is held by one process at a time. Retries for
        up to `wait_s` while another process holds it (StoreBusy after). `checkpoint=False`
        leaves a file's committed data in its write-ahead log at close (durable, and a batch's
        close ~10x cheaper)."""

    def retrying(self, write: Callable[[], T]) -> T:
        """`write()`: one whole write (it connects, writes and commits), run again where its commit
        can lose a race with another process's (a lake) and nothing of it stayed. A file is written
        by one process at a time: once."""
        return write()

    @abstractmethod
    def lease(self, run_id: str, task_indices: Sequence[int] = ()) -> AbstractContextManager[None]:
        """Hold the right to run these tasks of `run_id` against the store until the block ends or
        the process dies (the store is free between batches, so without it two `seqk run` of one
        variant would both schedule every missing attempt). RunConflict when another holds it."""

    @abstractmethod
    def exists(self) -> bool:
        """Whether there is a store to read, with seqk's tables (False for a file or a lake that no
        run has made yet)."""

    @abstractmethod
    def writable_problem(self) -> str | None:
        """Why the store could not be created or written here, checked before a run's first call,
        or None."""

    @abstractmethod
    def finish(self, con: Connection, run_id: str | None) -> None:
        """A run's last write, on `con`: stamp the run as updated (when `run_id`), and leave the
        store whole for someone who copies it."""

    @abstractmethod
    def stamp(self) -> str:
        """A short text that changes whenever the store is written (the viewer's pages poll it)."""

    @abstractmethod
    def compact(self, keep_hours: float) -> Compaction:
        """Merge small files and expire snapshots older than `keep_hours` (`seqk lake compact`)."""

    def __str__(self) -> str:
        return self.display


DbLike = Database | str | os.PathLike[str] | None
"""What a library function takes as its store: a Database, a DuckDB file's path or a lake URL
(`ducklake:...`), or None for $SEQK_DB, else runs/seqk.duckdb."""
