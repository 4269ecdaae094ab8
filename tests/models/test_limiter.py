"""The adaptive limit on calls in flight: a slow start from 4 (or from a remembered start, up to a
remembered bound), lowered by a rate limit (once per burst, to below the refused call's place in
flight, by at most half, never below 1), grown back by one per window of successes after a quiet
period; what it sustained; rate-limit retries apart from max_retries, with a ceiling of their
own; the progress line shows a rate-limited model's limit."""

from __future__ import annotations

import asyncio

import pytest

from seqk import models
from seqk.errors import TransientProviderError
from seqk.models.limiter import AdaptiveLimit, Slot
from seqk.models.retry import RetryPolicy
from seqk.models.role import RoleSpec


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def now(limit: AdaptiveLimit, position: int = 10**6) -> Slot:
    """A slot of the limit's current epoch (by default far down the line of calls in flight)."""
    return Slot(limit.epoch, position)


def test_a_burst_of_rate_limits_lowers_the_limit_once_to_what_the_server_held():
    """16 sent at once to a server that holds 10: the 11th and later meet a 429. The first of
    them lowers the limit to 10; the others were sent under the old limit and lower nothing."""
    clock = FakeClock()
    limit = AdaptiveLimit(16, start=16, quiet_s=5.0, clock=clock)

    async def go() -> list[Slot]:
        return [await limit.acquire() for _ in range(16)]

    slots = asyncio.run(go())
    assert [s.position for s in slots] == list(range(1, 17))
    for slot in slots[10:]:
        limit.on_rate_limit(slot)
        limit.release()
    assert (limit.limit, limit.rate_limited, limit.lowest) == (10, 6, 10)
    for slot in slots[:10]:  # sent before the decrease: they say nothing of the new epoch
        limit.on_success(slot)
        limit.release()
    assert limit.sustained() is None


def test_a_rate_limit_lowers_by_a_fifth_when_the_line_says_less_and_by_half_at_most():
    limit = AdaptiveLimit(20, start=20, clock=FakeClock())
    limit.on_rate_limit(now(limit, position=20))  # the 20th of 20: a fifth less
    assert limit.limit == 16
    limit.on_rate_limit(now(limit, position=1))  # the first in flight: a rate, not a line
    assert limit.limit == 8


def test_halving_stops_at_one():
    limit = AdaptiveLimit(5, start=5, clock=FakeClock())

    async def go() -> None:
        for _ in range(6):
            slot = await limit.acquire()
            limit.on_rate_limit(slot)
            limit.release()

    asyncio.run(go())
    assert [limit.limit, limit.lowest] == [1, 1]


def test_growth_waits_for_the_quiet_period_then_adds_one_per_window():
    clock = FakeClock()
    limit = AdaptiveLimit(8, start=8, decrease=0.5, quiet_s=5.0, clock=clock)
    limit.on_rate_limit(now(limit))
    limit.on_rate_limit(now(limit))
    assert limit.limit == 2
    clock.now += 4.9
    for _ in range(10):
        limit.on_success(now(limit, 1))
    assert limit.limit == 2  # not quiet yet
    clock.now += 0.2
    limit.on_success(now(limit, 1))
    assert limit.limit == 2  # one success of a window of two
    limit.on_success(now(limit, 1))
    assert limit.limit == 3
    for _ in range(3 + 4 + 5 + 6 + 7):
        limit.on_success(now(limit, 1))
    assert limit.limit == 8
    for _ in range(100):
        limit.on_success(now(limit, 1))
    assert limit.limit == 8  # never above the ceiling


def test_a_new_limit_starts_at_four_and_each_success_adds_one_until_the_ceiling():
    """Slow start: a model's first burst is 4 calls, not the ceiling; the limit doubles per
    round of successes (no quiet period needed) and stops at the ceiling."""
    clock = FakeClock()
    limit = AdaptiveLimit(64, clock=clock)
    assert (limit.limit, limit.slow_start) == (4, True)

    async def first_round() -> int:
        for _ in range(4):
            await limit.acquire()
        return limit.in_flight

    assert asyncio.run(first_round()) == 4
    for _ in range(4):  # the round succeeds: 8 allowed, without any time passing
        limit.on_success(now(limit, 1))
        limit.release()
    assert limit.limit == 8
    for _ in range(100):
        limit.on_success(now(limit, 1))
    assert (limit.limit, limit.slow_start) == (64, False)


def test_a_rate_limit_ends_slow_start_and_lowers_the_limit_by_a_fifth():
    """After the first 429 growth is additive again: one call per window of successes, after
    3 s without a rate limit; a second 429 sent under the lowered limit lowers it again."""
    clock = FakeClock()
    limit = AdaptiveLimit(192, clock=clock)
    for _ in range(16):
        limit.on_success(now(limit, 1))
    assert limit.limit == 20
    old = now(limit)
    limit.on_rate_limit(old)
    assert (limit.limit, limit.slow_start, limit.lowest) == (16, False, 4)
    limit.on_rate_limit(old)  # the same burst: no second decrease
    assert limit.limit == 16
    for _ in range(40):
        limit.on_success(now(limit, 1))
    assert limit.limit == 16  # within the 3 s quiet period: no growth at all
    clock.now += 3.0
    for _ in range(15):
        limit.on_success(now(limit, 1))
    assert limit.limit == 16
    limit.on_success(now(limit, 1))  # a full window of 16
    assert limit.limit == 17
    limit.on_rate_limit(now(limit))
    assert limit.limit == 13  # int(17 * 0.8)


def test_waiters_get_slots_as_they_free_and_a_lower_limit_holds_back_new_calls():
    limit = AdaptiveLimit(2, clock=FakeClock())
    order: list[str] = []

    async def go() -> None:
        await limit.acquire()
        second = await limit.acquire()
        limit.on_rate_limit(second)  # limit 1 with 2 in flight

        async def third() -> None:
            await limit.acquire()
            order.append("third")

        waiter = asyncio.create_task(third())
        await asyncio.sleep(0)
        limit.release()
        await asyncio.sleep(0)
        assert order == []  # 1 in flight, limit 1: still waits
        limit.release()
        await waiter

    asyncio.run(go())
    assert order == ["third"] and limit.in_flight == 1


def _spec(model: str) -> RoleSpec:
    return RoleSpec(role="actor", model=model)


def test_the_pool_adapts_to_a_server_that_allows_three_in_flight():
    in_flight = 0
    peak_after_first_429 = 0
    saw_429 = False

    async def reply(prompt: str) -> str:
        nonlocal in_flight, peak_after_first_429, saw_429
        in_flight += 1
        try:
            if saw_429:
                peak_after_first_429 = max(peak_after_first_429, in_flight)
            if in_flight > 3:
                saw_429 = True
                raise TransientProviderError("429 slow down", status_code=429, retry_after=0.0)
            await asyncio.sleep(0.001)
            return "ok"
        finally:
            in_flight -= 1

    models.register_mock("mock/limited", reply)
    # max_retries=0: a rate limit must not use it up.
    pool = models.ModelPool(RetryPolicy(max_retries=0, base_delay_s=0.0), default_concurrency=32)

    async def go() -> list[str]:
        out = await asyncio.gather(*(pool.complete(_spec("mock/limited"), "p") for _ in range(40)))
        return [c.text for c in out]

    assert asyncio.run(go()) == ["ok"] * 40
    [state] = pool.limit_states()
    assert state.model == "mock/limited" and state.ceiling == 32
    assert state.rate_limited > 0 and state.lowest <= 4 and state.limit < 32
    # Slow start: the first burst is 4 calls, so few of the 40 meet a 429 (from a start at
    # the ceiling, 29 of the first 32 did).
    assert state.rate_limited <= 10


def test_a_rate_limit_that_never_ends_stops_at_its_own_ceiling():
    mock = models.register_mock("mock/always429",
                                [TransientProviderError("429", status_code=429, retry_after=0.0)])
    pool = models.ModelPool(RetryPolicy(max_retries=0, base_delay_s=0.0, max_rate_limit_retries=4))
    with pytest.raises(TransientProviderError) as caught:
        asyncio.run(pool.complete(_spec("mock/always429"), "p"))
    assert caught.value.retries == 4 and mock.calls == 5
    assert pool.limit_states()[0].limit == 1  # 4 lowered by each of its five 429s: 3, 2, 1, 1, 1


def test_other_transient_errors_still_use_max_retries():
    mock = models.register_mock("mock/flaky", [TransientProviderError("503", status_code=503)])
    pool = models.ModelPool(RetryPolicy(max_retries=2, base_delay_s=0.0))
    with pytest.raises(TransientProviderError):
        asyncio.run(pool.complete(_spec("mock/flaky"), "p"))
    assert mock.calls == 3
    assert pool.limit_states()[0].rate_limited == 0


def test_a_rate_limited_run_completes_valid_and_the_summary_shows_the_limit(tmp_path, db):
    import duckdb
    from helpers import write_variant
    from typer.testing import CliRunner

    from seqk.cli import app

    in_flight = 0

    async def reply(prompt: str) -> str:
        nonlocal in_flight
        if in_flight >= 2:
            raise TransientProviderError("429 too many requests", status_code=429, retry_after=0.0)
        in_flight += 1
        try:
            await asyncio.sleep(0.002)
            return "wrong"
        finally:
            in_flight -= 1

    models.register_mock("mock/two-at-a-time", reply)
    variant = write_variant(tmp_path, metric="pass@k", k=3, model="mock/two-at-a-time", concurrency=8,
                            options={"n": 6}, retry={"max_retries": 0, "base_delay_s": 0.0})
    result = CliRunner().invoke(app, ["run", str(variant), "--db", str(db), "--no-export"])
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FILTER (WHERE status = 'ok'), count(*) FROM attempts"
                           ).fetchone() == (18, 18)
    assert "rate limits: mock/two-at-a-time: " in result.output
    assert "calls answered 429; calls in flight now " in result.output and "of 24 (lowest " in result.output


def test_the_progress_line_shows_each_rate_limited_models_limit():
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from seqk.models.limiter import LimitState
    from seqk.render.console import RunProgress

    err = io.StringIO()
    view = RunProgress(Console(file=err, force_terminal=True, width=200), None, False)
    view.prepared(SimpleNamespace(run_id="run", action="new", previous_k=None, k=3, n_selected=2,
                                     pending=[1, 2], chains=1))
    limits = [LimitState("openai/bench", "http://x/v1", 9, 192, 4, 12),
              LimitState("mock/judge", None, 64, 64, 4, 0)]  # never rate-limited: not shown
    view.attempt(SimpleNamespace(record=None, task_done=True, task_outcome="passed", limits=limits))
    view.progress.refresh()
    view.stop()
    line = err.getvalue()
    assert "openai/bench 9/192 in flight (12× 429)" in line
    assert "mock/judge" not in line


def test_a_probe_refused_one_past_a_line_the_server_held_returns_to_that_line():
    """At a server of 8 slots: once a call at the 8th place succeeded, a probe to 9 whose 9th call
    meets a 429 puts the limit back at 8, not a fifth lower (7), and 8 is what the run sustained
    (what the next run starts at); without that success the fifth still applies."""
    clock = FakeClock()
    limit = AdaptiveLimit(64, start=9, threshold=9, quiet_s=3.0, clock=clock)

    slots = asyncio.run(_acquire(limit, 9))
    limit.on_success(slots[7])  # the 8th in flight answered
    limit.on_rate_limit(slots[8])  # the 9th refused
    assert (limit.limit, limit.lowest) == (8, 8)
    for _ in slots:
        limit.release()
    for slot in asyncio.run(_acquire(limit, 8)):
        limit.on_success(slot)
    assert limit.sustained() == (8, True)

    blind = AdaptiveLimit(64, start=9, threshold=9, clock=FakeClock())
    slots = asyncio.run(_acquire(blind, 9))
    blind.on_success(slots[6])  # only the 7th answered: nothing says the server holds 8
    blind.on_rate_limit(slots[8])
    assert blind.limit == 7  # int(9 * 0.8)


async def _acquire(limit: AdaptiveLimit, n: int) -> list[Slot]:
    return [await limit.acquire() for _ in range(n)]
