"""The writer holds a DuckDB file across busy batches (for at most hold_s), and lets it go as soon
as a batch interval passes with nothing to write, checkpointed: another process reads then, and
every attempt is written once."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from seqk import store
from seqk.records import AttemptRecord, CallRecord
from seqk.run.writer import HOLD_S, Writer
from seqk.store.file import DuckDBFile


def attempt(uid: str, index: int) -> AttemptRecord:
    now = datetime.now()
    call = CallRecord(role="actor", model="mock/x", prompt="p" * 500, output="o", input_tokens=1, cached_tokens=0,
                      thinking_tokens=0, output_tokens=1, cost_usd=0.0, latency_s=0.0, retries=0, error=None,
                      started_at=now)
    return AttemptRecord(attempt_uid=uid, run_id="r", generation=1, task_index=index, attempt_index=1, k=1,
                         status="ok", success=False, score=0.0, prompt="p" * 500, output="o",
                         raw_eval_output="", judge_details=None, feedback=None, error=None, started_at=now,
                         finished_at=now, calls=[call])


@dataclass(frozen=True)
class CountingFile(DuckDBFile):
    """A real DuckDB file that counts the writer's opens of it."""

    opens: list[int] | None = None

    def connect(self, **kwargs: Any) -> Any:
        assert self.opens is not None
        self.opens.append(1)
        return super().connect(**kwargs)


def new_store(tmp_path: Path) -> CountingFile:
    db = CountingFile(tmp_path / "w.duckdb", opens=[])
    with db.connect():
        pass
    db.opens.clear()  # type: ignore[union-attr]
    return db


def read_from_another_process(db: Path) -> int:
    """Attempts another process counts, opening the file read-only without waiting (DuckDB refuses
    while this process holds it read-write: a non-zero exit)."""
    code = ("import duckdb, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
            "print(con.execute('SELECT count(*) FROM attempts').fetchone()[0])")
    done = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=60)
    return int(done.stdout) if done.returncode == 0 else -1


async def busy(db: Any, *, hold_s: float, n: int) -> Writer:
    """A writer given an attempt every 10 ms (a 20 ms interval), then closed."""
    writer = Writer(db, interval_s=0.02, hold_s=hold_s)
    writer.start()
    for i in range(n):
        writer.put(attempt(f"u{i}", i))
        await asyncio.sleep(0.01)
    await writer.close()
    return writer


def test_a_busy_writer_opens_the_file_once_per_hold_and_writes_every_attempt(tmp_path):
    db = new_store(tmp_path)

    writer = asyncio.run(busy(db, hold_s=60.0, n=40))  # a batch every interval or so, never an idle one
    assert writer.written == 40
    assert len(db.opens) == 1, db.opens  # with an open per batch it was one per interval
    assert not Path(f"{db.path}.wal").exists()  # the final write checkpointed and closed the file
    with duckdb.connect(str(db.path), read_only=True) as con:
        assert con.execute("SELECT count(*), count(DISTINCT attempt_uid) FROM attempts").fetchone() == (40, 40)
        assert con.execute("SELECT count(*) FROM calls").fetchone()[0] == 40


def test_the_hold_ends_after_hold_s_so_a_long_busy_run_reopens(tmp_path):
    db = new_store(tmp_path)

    writer = asyncio.run(busy(db, hold_s=0.1, n=60))  # ~0.6 s of batches: ~6 holds of 0.1 s
    assert writer.written == 60
    assert 3 <= len(db.opens) <= 40, db.opens


def test_an_idle_interval_lets_another_process_read_mid_run(tmp_path):
    db = new_store(tmp_path)
    seen: list[int] = []

    async def run() -> None:
        # an interval long enough that the next one cannot begin before the check below, however
        # slow the commit is on a loaded machine (commits are sized by time: a commit longer than
        # the interval is followed at once by the next, here one with nothing to write)
        writer = Writer(db, interval_s=1.0, hold_s=600.0)
        writer.start()
        for i in range(10):
            writer.put(attempt(f"u{i}", i))
        while writer.written < 10:  # the batch written; the file is held
            await asyncio.sleep(0.005)
        assert writer._con is not None
        await asyncio.sleep(2.5)  # an interval with nothing to write: the writer lets go of the file
        assert writer._con is None
        assert not Path(f"{db.path}.wal").exists()  # checkpointed as it let go: a reader replays no log
        seen.append(await asyncio.to_thread(read_from_another_process, db.path))
        writer.put(attempt("u10", 10))
        await writer.close()

    asyncio.run(run())
    assert seen == [10]
    assert read_from_another_process(db.path) == 11


def test_a_failed_write_lets_go_of_the_file_and_keeps_the_attempts(tmp_path):
    db = new_store(tmp_path)
    bad = attempt("u1", 1)
    bad.status = None  # type: ignore[assignment]  # attempts.status is NOT NULL: the append fails

    async def run() -> tuple[Writer, int]:
        writer = Writer(db, interval_s=10.0, hold_s=600.0)
        writer.put(attempt("u0", 0))
        writer.put(bad)
        assert not await writer._flush()
        assert writer._con is None and len(writer.buffer) == 2  # let go, nothing lost
        free = await asyncio.to_thread(read_from_another_process, db.path)
        writer.buffer.remove(bad)
        await writer.close()
        return writer, free

    writer, free = asyncio.run(run())
    assert free == 0
    assert writer.written == 1


def test_a_lake_or_any_shared_store_is_connected_per_batch():
    assert Writer(store.open("/tmp/x.duckdb")).hold_s == HOLD_S

    @dataclass(frozen=True)
    class Shared(DuckDBFile):
        shared_writes: bool = True

    assert Writer(Shared(Path("/tmp/x.duckdb"))).hold_s == 0.0


def test_hold_zero_is_an_open_per_batch(tmp_path):
    db = new_store(tmp_path)

    async def run() -> None:
        writer = Writer(db, interval_s=10.0, hold_s=0.0)
        for i in range(3):
            writer.put(attempt(f"u{i}", i))
            assert await writer._flush()
            assert writer._con is None
        await writer.close()

    asyncio.run(run())
    assert len(db.opens) == 4  # three batches and the final stamp


def test_this_process_reads_while_its_writer_holds_the_file(tmp_path):
    """A study's arm prepared, a budget's spend read, beside a run of the same process: DuckDB opens
    no read-only instance of a file this process holds read-write, so the read goes through it."""
    db = new_store(tmp_path)

    async def run() -> tuple[int, int]:
        writer = Writer(db, interval_s=1.0, hold_s=600.0)  # no idle interval before the read below
        writer.start()
        for i in range(5):
            writer.put(attempt(f"u{i}", i))
        while writer.written < 5:
            await asyncio.sleep(0.005)
        assert writer._con is not None  # held
        with store.connect(db.path, read_only=True) as con:
            during = con.execute("SELECT count(*) FROM attempts").fetchone()[0]
        writer.put(attempt("u5", 5))
        await writer.close()
        with store.connect(db.path, read_only=True) as con:
            after = con.execute("SELECT count(*) FROM attempts").fetchone()[0]
        return during, after

    assert asyncio.run(run()) == (5, 6)


def test_a_read_only_block_of_this_process_makes_its_writer_wait_not_fail(tmp_path):
    db = new_store(tmp_path)

    async def run() -> Writer:
        writer = Writer(db, interval_s=10.0, hold_s=600.0)
        writer.put(attempt("u0", 0))
        reading = duckdb.connect(str(db.path), read_only=True)
        flushing = asyncio.create_task(writer._flush())
        await asyncio.sleep(0.3)
        assert not flushing.done() and writer.failures == 0  # waiting for the reader, not failed
        reading.close()
        assert await flushing
        await writer.close()
        return writer

    assert asyncio.run(run()).written == 1
