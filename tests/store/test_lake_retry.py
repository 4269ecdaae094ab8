"""The retry policy of a lake's commits, on its own: what it retries, how long it waits, when it
stops (tests/store/test_lake_writers.py races real writers on a real lake)."""

from __future__ import annotations

import random

import duckdb
import pytest

from seqk.store.lake_retry import LOST_RACE, CommitRetry, lost_race

GAVE_UP = ("TransactionContext Error: Failed to commit: Failed to commit DuckLake transaction.\n"
           f"{LOST_RACE} of 12 set by the ducklake_max_retry_count setting.\nFailed to flush changes "
           "into DuckLake: duplicate key value violates unique constraint \"ducklake_snapshot_pkey\"")


def flaky(failures: list[BaseException]):
    calls = []

    def write() -> str:
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return "committed"
    return write, calls


def test_a_commit_duckLake_gave_up_on_is_written_again_after_growing_jittered_waits():
    policy = CommitRetry(retries=5, base_s=0.1, cap_s=0.3)
    write, calls = flaky([duckdb.TransactionException(GAVE_UP) for _ in range(4)])
    waits: list[float] = []
    assert policy.run(write, random.Random(1), sleep=waits.append) == "committed"
    assert len(calls) == 5 and len(waits) == 4
    for i, wait in enumerate(waits):  # 0.1, 0.2, 0.3 (capped), 0.3, each times [0.5, 1]
        ceiling = min(0.3, 0.1 * 2 ** i)
        assert ceiling / 2 <= wait <= ceiling
    other = list(CommitRetry(retries=4, base_s=0.1, cap_s=0.3).delays(random.Random(2)))
    assert other != waits  # jittered: two writers that lost together do not come back together


def test_it_gives_up_after_its_retries_with_duckLake_s_error():
    policy = CommitRetry(retries=3, base_s=0.01, cap_s=0.01)
    write, calls = flaky([duckdb.TransactionException(GAVE_UP) for _ in range(10)])
    with pytest.raises(duckdb.TransactionException, match=LOST_RACE):
        policy.run(write, sleep=lambda _s: None)
    assert len(calls) == 4  # the first write and 3 more


@pytest.mark.parametrize("error", [
    # A logical conflict: DuckLake fails it at once, and writing it again cannot help.
    duckdb.TransactionException("Failed to commit DuckLake transaction.\nTransaction conflict - attempting "
                                "to insert into table with index \"4\" - but another transaction has dropped it"),
    duckdb.IOException("Could not connect to the catalog"),  # the outcome may be unknown: the writer keeps them
    ValueError("not a store error"),
])
def test_nothing_else_is_retried(error):
    write, calls = flaky([error])
    with pytest.raises(type(error)):
        CommitRetry().run(write, sleep=lambda _s: None)
    assert len(calls) == 1 and not lost_race(error)


def test_duckLake_s_own_retries_are_bounded():
    policy = CommitRetry()
    settings = {s.removeprefix("SET ").split(" = ")[0]: value for s, value in policy.settings()}
    n, wait_ms, backoff = (int(settings["ducklake_max_retry_count"]), int(settings["ducklake_retry_wait_ms"]),
                           float(settings["ducklake_retry_backoff"]))
    # DuckLake (d8a1881e) sleeps wait_ms * backoff^i * [0.5, 1] after the i-th of n - 1 failures.
    assert sum(wait_ms * backoff ** i for i in range(n - 1)) / 1000 < 2.0
    assert sum(min(policy.cap_s, policy.base_s * 2 ** i) for i in range(policy.retries)) < 5.0
