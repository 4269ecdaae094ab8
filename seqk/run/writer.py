"""The writer: finished attempts go to the database in short batched transactions.

A file stays open across batches while attempts keep coming, for at most `hold_s` (1 s), and is
checkpointed and closed when that ends or a batch interval passes with nothing to write: so other
processes can read between holds, and a busy run does not pay an open (which replays the
write-ahead log of the batches before it) on every batch. Whole attempts only, so a crash loses
at most what was in flight.

Commits are sized by time, not by count: one begins every `interval_s` (counted from the start
of the one before) and carries whatever is pending, up to `max_batch`, a bound on one
transaction's size. A writer that falls behind (its commits take longer than the interval)
commits back to back, each commit carrying what gathered during the one before: its commits grow
as they slow down, so their fixed cost (a catalog transaction on a lake) is spread over more
attempts instead of being paid more often.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from seqk import store
from seqk.errors import StoreBusy
from seqk.records import AttemptRecord, FeedbackFill
from seqk.store import queries

log = logging.getLogger("seqk")

HOLD_S = 1.0
"""How long a busy run's writer keeps a DuckDB file open across batches before it closes it, so
that `seqk status`, the viewer or a notebook (which retry every 0.2 s at most) get in between.
The 1,440 attempts of a bench/bench_chains.py run, written at their pace with an open per batch,
took 0.66-0.87 ms of CPU per attempt, held 0.47-0.76 (bench/bench_writer.py, docs/performance.md)."""

WRITE_LOCK = threading.Lock()
"""Held while a writer of this process writes (and by whoever else writes beside a running engine
in the same process: a study's `prepare` of its other arm). Two runs in one process share DuckDB's
instance of the file, and a run's final CHECKPOINT fails while another write is open."""


class Writer:
    """Buffers finished attempts and appends them in short transactions.

    A file stays open across batches for up to `hold_s` while there is something to write, then
    is closed, so other processes can read between holds (a store that several processes write,
    a lake, is connected per batch: `hold_s` 0). If another process holds the file, records stay
    buffered and the write is tried again.
    """

    def __init__(self, db: store.Database, interval_s: float = 0.2, max_batch: int = 50_000,
                 run_id: str | None = None, close_wait_s: float = 600.0, hold_s: float | None = None):
        self.db = db
        self.hold_s = (0.0 if db.shared_writes else HOLD_S) if hold_s is None else hold_s
        self._held: contextlib.ExitStack | None = None
        self._con: Any = None
        self._held_since = 0.0
        self.run_id = run_id
        self.interval_s = interval_s
        self.max_batch = max_batch
        """The most attempts one commit carries (what is left goes in the next, begun at once)."""
        self.close_wait_s = close_wait_s
        """How long close() keeps retrying while another process holds the file."""
        self.buffer: list[AttemptRecord | FeedbackFill] = []
        self.written = 0
        self._wake = asyncio.Event()
        self._closing = False
        self.failures = 0
        self.max_failures = 5
        self._task: asyncio.Task[None] | None = None
        self._unsure: list[AttemptRecord | FeedbackFill] = []
        """The items of the last write that failed with an error that does not say it was not
        committed (a lake's catalog connection lost as its COMMIT went out, a disk error): before
        they are written again, the store is asked whether they are in it (`_drop_committed`)."""
        self.on_final: Callable[[Any], None] | None = None
        """Called once with the final write's connection, after its attempts and before the run
        is stamped (the run's remembered endpoint limits, seqk.run.limits)."""

    def start(self) -> None:
        """Begin flushing in the background."""
        self._task = asyncio.create_task(self._loop())

    def put(self, record: AttemptRecord | FeedbackFill) -> None:
        """Queue one finished attempt (the next commit, when it is due, takes it)."""
        self.buffer.append(record)

    def _write(self, batch: list[AttemptRecord | FeedbackFill], final: bool) -> None:
        # On a lake, a commit that lost a race with another writer's is written again (the store
        # decides how often and how long it waits); what did commit is not, as batch is cleared.
        # The attempts are converted once, not at each try.
        converted = store.AttemptBatch(batch)
        self.db.retrying(lambda: self._commit(batch, final, converted))

    def _connection(self, wait_s: float) -> Any:
        """The held connection, or a new one (held from now)."""
        if self._con is None:
            held = contextlib.ExitStack()
            self._con = held.enter_context(self.db.connect(wait_s=wait_s, checkpoint=False))
            self._held, self._held_since = held, time.monotonic()
        return self._con

    def _release(self, checkpoint: bool = False) -> None:
        """Close the held connection, if any; with `checkpoint` (a file held across batches) its
        batches are folded into the file first, so the next open, the writer's or a reader's,
        replays no write-ahead log (else the log grows to DuckDB's 16 MB, every open replaying it:
        bench/bench_writer.py)."""
        held, con, self._held, self._con = self._held, self._con, None, None
        if held is None:
            return
        try:
            if checkpoint and self.hold_s:
                try:
                    self.db.finish(con, None)  # a file's finish checkpoints; nothing stamped
                except Exception as exc:  # noqa: BLE001 - the data is committed: the log keeps it
                    log.debug("checkpoint before letting go of %s failed: %s", self.db, exc)
        finally:
            held.close()

    def _commit(self, batch: list[AttemptRecord | FeedbackFill], final: bool,
                converted: store.AttemptBatch | None = None) -> None:
        wait_s = min(60.0, self.close_wait_s) if final else 10.0
        with WRITE_LOCK:
            con = self._connection(wait_s)
            try:
                if self._unsure and self._drop_committed(con, batch):
                    converted = None  # what is left is converted again
                store.append_attempts(con, batch if converted is None else converted)
                # Committed: a failure from here on (the final stamp) must not write them again.
                self.written += len(batch)
                batch.clear()
                if final:
                    if self.on_final is not None:
                        self.on_final(con)
                        self.on_final = None  # done: a retried final write must not repeat it
                    # Batches left their data in the write-ahead log.
                    self.db.finish(con, self.run_id)
            except BaseException:
                self._release()
                raise
            if final:
                self._release()  # db.finish checkpointed
            elif time.monotonic() - self._held_since >= self.hold_s:
                self._release(checkpoint=True)

    def _drop_committed(self, con: Any, batch: list[AttemptRecord | FeedbackFill]) -> bool:
        """Whether the unsure write (`_unsure`, at the head of `batch`) committed after all, its items
        then taken out of `batch` and counted as written. One write is one transaction, so it
        committed whole when any of its attempts is stored. (A write of late feedback alone, with no
        attempt, cannot be told apart: it is written again, its feedback_fills row read as the
        latest, its critic calls counted twice; that needs a lost COMMIT of such a write.)"""
        unsure, self._unsure = self._unsure, []
        uids = [r.attempt_uid for r in unsure if isinstance(r, AttemptRecord)]
        if not uids or not queries.stored_attempt_uids(con, uids=json.dumps(uids)):
            return False
        log.warning("a write of %d attempts that failed had committed: they are not written again", len(uids))
        done = {id(r) for r in unsure}
        kept = [r for r in batch if id(r) not in done]
        self.written += len(batch) - len(kept)
        batch[:] = kept
        return True

    def _release_idle(self) -> None:
        with WRITE_LOCK:
            self._release(checkpoint=True)

    async def _flush(self, final: bool = False) -> bool:
        """Write what is buffered (the final flush also marks the run and checkpoints).
        False when the file stayed busy and the records are still buffered."""
        if not self.buffer and not (final and self.written):
            if self._con is not None:  # a batch interval with nothing to write: let readers in
                await asyncio.to_thread(self._release_idle)
            return True
        batch, self.buffer = self.buffer[:self.max_batch], self.buffer[self.max_batch:]
        try:
            # Only the write that leaves nothing behind is the final one.
            await asyncio.to_thread(self._write, batch, final and not self.buffer)
        except StoreBusy:
            self.buffer = batch + self.buffer
            return False
        except Exception:
            # Keep the attempts (they were paid for); a later flush tries again, and close()
            # gives up only after it has told the log why.
            self.buffer = batch + self.buffer
            self._unsure = list(batch)  # it may have committed: the next write asks first
            self.failures += 1
            log.exception("writing %d attempts to %s failed (try %d)", len(batch), self.db,
                          self.failures)
            if self.failures >= self.max_failures:
                raise
            return False
        self.failures = 0
        return True

    async def _loop(self) -> None:
        clock = asyncio.get_running_loop().time
        due = clock() + self.interval_s
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(0.0, due - clock()))
            self._wake.clear()
            if self._closing:
                return
            due = clock() + self.interval_s  # the next commit is due an interval after this one begins
            with contextlib.suppress(Exception):  # logged in _flush; close() retries
                await self._flush()
            if len(self.buffer) >= self.max_batch:
                due = clock()  # behind by a whole commit: the next one begins at once

    async def close(self) -> None:
        """Stop the loop and write whatever is buffered, retrying while the file is busy
        for up to `close_wait_s`; then StoreBusy says how many attempts were not written."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._task)
        deadline = asyncio.get_running_loop().time() + self.close_wait_s
        while True:
            if await self._flush(final=True):
                if not self.buffer:
                    return
                continue  # one commit's worth written (max_batch): the rest at once
            if asyncio.get_running_loop().time() > deadline:
                raise StoreBusy(
                    f"{self.db} stayed locked by another process for "
                    f"{self.close_wait_s:.0f} s: {len(self.buffer)} finished attempt(s) could not be "
                    "written; close the other process and run the same command to redo them")
            await asyncio.sleep(0.2)
