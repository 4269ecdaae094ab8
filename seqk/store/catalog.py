"""A lake's PostgreSQL catalog, reached by seqk itself (psycopg, not DuckDB): the one-at-a-time
set-up of a new lake and the run lease, both session-level advisory locks, so that PostgreSQL
releases them when the holding process dies or its connection drops. The statements are the
generated functions of sql/postgres/ (seqk.store.catalog_queries).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Sequence
from typing import Any

from seqk.errors import MissingExtra, NotFound, RunConflict, StoreBusy
from seqk.store import catalog_queries


def connect(dsn: str) -> Any:
    """A psycopg connection (autocommit) to the catalog; NotFound when the server says its
    database or role does not exist, StoreBusy when it cannot be reached."""
    try:
        import psycopg
    except ImportError:
        raise MissingExtra("a lake needs psycopg: pip install 'seqk[lake]'") from None
    try:
        return psycopg.connect(dsn, autocommit=True, connect_timeout=20)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0]
        if "does not exist" in first:  # the server answered: the database (or role) is missing
            raise NotFound(f"the lake's catalog ({dsn}) {first.rsplit('FATAL:', 1)[-1].strip()}: "
                           "create it on the PostgreSQL server first (createdb), or fix the "
                           "dbname / user in the lake URL") from None
        raise StoreBusy(f"cannot reach the lake's catalog ({dsn}): {first}") from None


def key(*parts: object) -> int:
    """A 64-bit advisory lock key for these parts."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextlib.contextmanager
def setup_lock(dsn: str, shared: bool = False) -> Iterator[None]:
    """Held while one process creates or upgrades the lake's tables, so several processes
    starting on a fresh lake at once create them once; `shared` (a reader opening the lake)
    waits for a set-up under way, and holds off a new one until the block ends."""
    pg = connect(dsn)
    try:
        lock = catalog_queries.lock_setup_shared if shared else catalog_queries.lock_setup
        lock(pg, key=key("seqk-lake-setup"))
        yield
    finally:
        release_and_close(pg)


@contextlib.contextmanager
def lease(dsn: str, run_id: str, task_indices: Sequence[int]) -> Iterator[None]:
    """Hold the right to run these tasks of `run_id` (one lock each; the whole run when none are
    named) until the block ends or the process dies. RunConflict when another process holds
    any of them."""
    pg = connect(dsn)
    try:
        keys = [key(run_id, t) for t in sorted(set(task_indices))] or [key(run_id, "whole")]
        refused = catalog_queries.try_lease_tasks(pg, keys=keys)
        if refused is None or refused > 0:
            refused = len(keys) if refused is None else int(refused)
            raise RunConflict(
                f"{refused} of the {len(keys)} task(s) of run {run_id} are being run right now by "
                f"another process on the lake; wait for it, or run other tasks (task_indices)")
        yield
    finally:
        release_and_close(pg)


def release_and_close(pg: Any) -> None:
    """Release every lock of the session (each block has a connection of its own), then close.
    Closing alone is not enough: the server frees a session's locks only when its backend has
    exited, which can come after the next process (or this one's next run) already asks for
    them. If the connection is broken, the server ends the session and frees them itself."""
    import psycopg

    try:
        catalog_queries.release_all(pg)
    except psycopg.Error:
        pass
    finally:
        pg.close()
