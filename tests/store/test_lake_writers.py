"""Writer processes racing for one lake's commits (PostgreSQL catalog, data on moto's S3): each
commit that loses a race is retried, and every attempt lands exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import time
import uuid
from dataclasses import replace
from datetime import datetime
from multiprocessing import get_context
from typing import Any

import pytest

from seqk import store
from seqk.store import lake, lake_retry
from seqk.store.lake_retry import CommitRetry

pytestmark = pytest.mark.slow

EAGER = CommitRetry(ducklake_retries=0, retries=200, base_s=0.005, cap_s=0.1)
"""DuckLake gives up on a commit at its first lost race, so seqk writes it again, every time."""


def attempt(run_id: str, uid: str, index: int) -> Any:
    from seqk.records import AttemptRecord, CallRecord

    now = datetime.now()
    call = CallRecord(role="actor", model="mock/x", prompt="p", output="o", input_tokens=1, cached_tokens=0,
                      thinking_tokens=0, output_tokens=1, cost_usd=0.0, latency_s=0.0, retries=0, error=None,
                      started_at=now)
    return AttemptRecord(attempt_uid=uid, run_id=run_id, generation=1, task_index=index, attempt_index=1, k=1,
                         status="ok", success=index % 2 == 0, score=1.0, prompt="p", output="o",
                         raw_eval_output="", judge_details=None, feedback=None, error=None, started_at=now,
                         finished_at=now, calls=[call])


def writer_process(url: str, policy: CommitRetry | None, name: str, go: Any, stop: Any, again: Any,
                   out: Any) -> None:
    """seqk's writer, committing every 20 ms what it was handed, from `go` until `stop`; `again`
    counts the writes it ran again."""
    from seqk.run.writer import Writer

    db = store.open(url)
    if policy is not None:
        db = replace(db, retry=policy)
    with db.connect():  # the session open before the race starts
        pass
    out.put(("ready", [], 0))
    go.wait()

    async def main() -> list[str]:
        writer = Writer(db, interval_s=0.02, run_id=None)
        writer.start()
        uids: list[str] = []
        seen = 0
        while not stop.is_set():
            for _ in range(5):
                uids.append(f"{name}-{uuid.uuid4()}")
                writer.put(attempt(f"race/{name}", uids[-1], len(uids)))
            await asyncio.sleep(0.01)
            if lake_retry.runs_again() > seen:
                with again.get_lock():
                    again.value += lake_retry.runs_again() - seen
                seen = lake_retry.runs_again()
        await writer.close()
        assert writer.written == len(uids)
        return uids

    uids = asyncio.run(main())
    out.put((name, uids, lake_retry.runs_again()))


def race(url: str, policy: CommitRetry | None, raced: Any, n: int = 4) -> tuple[list[str], int]:
    """`n` writers at once, until `raced(writes run again so far)` says 5 races were lost (or for
    60 s); every attempt's uid, and how many writes were run again."""
    with store.connect(url):
        pass
    lake.close_all()
    ctx = get_context("spawn")
    go, stop, again, out = ctx.Event(), ctx.Event(), ctx.Value("i", 0), ctx.Queue()
    procs = [ctx.Process(target=writer_process, args=(url, policy, f"w{i}", go, stop, again, out))
             for i in range(n)]
    for p in procs:
        p.start()
    for _ in procs:  # every writer's session open (slow on a loaded machine): they race from here
        assert out.get(timeout=600)[0] == "ready"
    go.set()
    results: list[Any] = []
    enough = time.monotonic() + 60
    deadline = enough + 600
    while len(results) < n and time.monotonic() < deadline:
        if raced(again.value) >= 5 or time.monotonic() > enough:
            stop.set()
        # Read as they come: a writer cannot exit before its (large) result has left the pipe.
        with contextlib.suppress(queue.Empty):
            results.append(out.get(timeout=0.2))
    stop.set()
    assert len(results) == n, "the writers did not finish in 10 minutes"
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return [u for r in results for u in r[1]], sum(r[2] for r in results)


def stored(url: str) -> dict[str, int]:
    with store.connect(url, read_only=True) as con:
        rows = con.execute("SELECT attempt_uid, count(*) FROM attempts GROUP BY ALL").fetchall()
        calls = con.execute("SELECT count(*), count(DISTINCT attempt_uid) FROM calls").fetchone()
    assert calls[0] == calls[1] == len(rows)  # each attempt's one call, once
    return dict(rows)


def lost_in_log(lake_servers: Any, since: int) -> int:
    log = lake_servers[0].log.read_text(errors="replace")[since:]
    return log.count('violates unique constraint "ducklake_snapshot_pkey"')


def test_commits_that_ducklake_gives_up_on_are_written_again_once(lake_url):
    # Each lost race reaches seqk's retry (DuckLake retries nothing): it must neither lose the
    # attempts of the refused commit nor store them twice.
    written, again = race(lake_url, EAGER, raced=lambda again: again)
    assert again >= 1, "no commit lost a race: the retry went untested"
    found = stored(lake_url)
    assert sorted(found) == sorted(written) and set(found.values()) == {1}


def test_with_seqk_s_own_policy_every_attempt_lands_once(lake_url, lake_servers):
    since = len(lake_servers[0].log.read_text(errors="replace"))
    with store.connect(lake_url) as con:  # the session carries the policy's settings
        assert con.execute("SELECT current_setting('ducklake_max_retry_count')").fetchone()[0] == 12
        assert con.execute("SELECT current_setting('ducklake_retry_wait_ms')").fetchone()[0] == 10
    lake.close_all()
    written, _again = race(lake_url, None, raced=lambda _again: lost_in_log(lake_servers, since))
    assert lost_in_log(lake_servers, since) >= 1, "no commit lost a race: the retry went untested"
    found = stored(lake_url)
    assert sorted(found) == sorted(written) and set(found.values()) == {1}
