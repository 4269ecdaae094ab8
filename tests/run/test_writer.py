"""The writer's commits are sized by time: one per interval, carrying what is pending up to
max_batch; a backlog larger than that goes in commits begun back to back; only the last write of
close() is the final one (it stamps the run). On a real DuckDB file."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from seqk import store
from seqk.records import AttemptRecord
from seqk.run.writer import Writer


def attempt(index: int) -> AttemptRecord:
    now = datetime.now()
    return AttemptRecord(attempt_uid=f"uid-{index}", run_id="writer/test", generation=1, task_index=index,
                         attempt_index=1, k=1, status="ok", success=True, score=1.0, prompt="p", output="o",
                         raw_eval_output="", judge_details=None, feedback=None, error=None, started_at=now,
                         finished_at=now, calls=[])


class Seen(Writer):
    """seqk's writer, remembering the size of each commit and which were final."""

    def __init__(self, db: store.Database, **kw: Any):
        super().__init__(db, **kw)
        self.commits: list[tuple[int, bool]] = []

    def _commit(self, batch: list[Any], final: bool, converted: Any = None) -> None:
        self.commits.append((len(batch), final))
        super()._commit(batch, final, converted)


def stored(path: Any) -> tuple[int, int]:
    with store.connect(path, read_only=True) as con:
        row = con.execute("SELECT count(*), count(DISTINCT attempt_uid) FROM attempts").fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def new_store(tmp_path: Any) -> Any:
    path = tmp_path / "w.duckdb"
    with store.connect(path):
        pass
    return path


def started(path: Any, *, interval_s: float, pending: int) -> Seen:
    """A writer with a bound of 100 a commit, started, and `pending` attempts given to it."""
    writer = Seen(store.open(path), interval_s=interval_s, max_batch=100)
    writer.start()
    for i in range(pending):
        writer.put(attempt(i))
    return writer


def test_a_full_batch_waits_for_the_interval_and_close_writes_the_rest_in_bounded_commits(tmp_path):
    path = new_store(tmp_path)

    async def main() -> Seen:
        writer = started(path, interval_s=60.0, pending=250)
        await asyncio.sleep(0.5)
        # Sized by count, 250 pending of a 100 bound would have been committed by now.
        assert writer.written == 0 and writer.commits == []
        await writer.close()
        return writer

    writer = asyncio.run(main())
    assert writer.commits == [(100, False), (100, False), (50, True)]
    assert writer.written == 250 and stored(path) == (250, 250)


def test_a_backlog_past_the_bound_is_committed_back_to_back_at_the_next_tick(tmp_path):
    path = new_store(tmp_path)

    async def main() -> Seen:
        writer = started(path, interval_s=0.3, pending=250)
        for _ in range(600):  # the loop drains the backlog by itself, without close()
            if writer.written == 250:
                break
            await asyncio.sleep(0.05)
        assert writer.written == 250
        commits = list(writer.commits)
        await writer.close()
        assert commits == [(100, False), (100, False), (50, False)]
        return writer

    writer = asyncio.run(main())
    assert writer.commits[-1] == (0, True)  # close(): nothing left, the run's final write alone
    assert stored(path) == (250, 250)


def failing_once(monkeypatch: Any, *, committed: bool) -> list[int]:
    """store.append_attempts raising at its first call, after writing its transaction (`committed`:
    a lake's COMMIT that went out before its connection was lost) or before (a disk full); the
    sizes of the writes so failed."""
    import duckdb

    real, failed = store.append_attempts, []

    def append(con: Any, items: Any) -> None:
        if committed or failed:
            real(con, items)
        if not failed:
            failed.append(items.attempts.num_rows)
            raise duckdb.IOException("IO Error: the write failed")

    monkeypatch.setattr(store, "append_attempts", append)
    return failed


def closed(where: Any, pending: int) -> Seen:
    """A writer given `pending` attempts (commits of 100 every 0.05 s), then closed."""
    async def main() -> Seen:
        writer = started(where, interval_s=0.05, pending=pending)
        await writer.close()
        return writer

    return asyncio.run(main())


def test_a_write_that_committed_before_it_failed_is_not_written_again(tmp_path, monkeypatch):
    """The writer keeps a failed write's attempts and writes them again; when the failed write had
    committed all the same, they are found in the store and not written twice: each attempt once,
    every one counted, the attempts that came meanwhile written too. (Before, a file refused the
    second write of the same attempt_uid five times and the run failed; a lake, which holds no
    primary key, would have kept each attempt twice.)"""
    path = new_store(tmp_path)
    failed = failing_once(monkeypatch, committed=True)

    async def main() -> Seen:
        writer = started(path, interval_s=0.05, pending=150)
        for _ in range(200):
            if failed:
                break
            await asyncio.sleep(0.02)
        for i in range(150, 180):  # more attempts while the failed write waits to be written again
            writer.put(attempt(i))
        await writer.close()
        return writer

    writer = asyncio.run(main())
    assert failed == [100]
    assert stored(path) == (180, 180) and writer.written == 180 and writer.failures == 0


def test_a_write_that_failed_before_it_committed_is_written_again(tmp_path, monkeypatch):
    """The other way round: the store does not hold the failed write's attempts, so they are written."""
    path = new_store(tmp_path)
    failed = failing_once(monkeypatch, committed=False)
    writer = closed(path, 120)
    assert failed == [100] and stored(path) == (120, 120) and writer.written == 120


def test_on_a_lake_a_write_that_committed_before_it_failed_is_kept_once(lake_url, monkeypatch):
    """A lake holds no primary key: there, without asking the store first, the write again would keep
    each of the failed write's attempts twice."""
    failed = failing_once(monkeypatch, committed=True)
    writer = closed(lake_url, 150)
    assert failed == [100] and stored(lake_url) == (150, 150) and writer.written == 150
