"""Retries on a fake clock: the waits for a seed, Retry-After honoured and capped, and the
counts (rate limits apart from max_retries, permanent errors never retried, quota per try)."""

from __future__ import annotations

import asyncio
import random

import pytest

from seqk import models
from seqk.errors import AuthError, PermanentProviderError, ProviderError, QuotaExceeded, TransientProviderError
from seqk.models.retry import RetryPolicy
from seqk.models.role import RoleSpec


class FakeSleep:
    """Records every wait instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def server_error() -> TransientProviderError:
    return TransientProviderError("500", status_code=500)


def rate_limit(retry_after: float | None = None) -> TransientProviderError:
    return TransientProviderError("429", status_code=429, retry_after=retry_after)


def run(script, policy: RetryPolicy, seed: int = 7, quota: dict[str, int] | None = None):
    """Call `mock/r` once through a pool on a fake clock; returns (completion or error, waits, calls)."""
    mock = models.register_mock("mock/r", script)
    sleep = FakeSleep()
    pool = models.ModelPool(policy, quota=quota, rng=random.Random(seed), sleep=sleep)
    try:
        outcome = asyncio.run(pool.complete(RoleSpec("actor", "mock/r"), "hi"))
    except ProviderError as exc:
        outcome = exc
    return outcome, sleep.waits, mock.calls


def test_waits_are_full_jitter_under_a_doubling_ceiling_for_a_seed():
    policy = RetryPolicy(max_retries=6, base_delay_s=1.0, max_delay_s=5.0)
    outcome, waits, calls = run([server_error()] * 5 + ["ok"], policy, seed=7)
    assert outcome.text == "ok" and outcome.retries == 5 and calls == 6
    rng = random.Random(7)
    assert waits == [rng.uniform(0, ceiling) for ceiling in (1.0, 2.0, 4.0, 5.0, 5.0)]
    again = run([server_error()] * 5 + ["ok"], policy, seed=7)[1]
    other = run([server_error()] * 5 + ["ok"], policy, seed=8)[1]
    assert again == waits and other != waits


def test_retry_after_wins_when_longer_and_is_capped_at_max_delay():
    policy = RetryPolicy(max_retries=3, base_delay_s=0.0, max_delay_s=10.0)
    outcome, waits, _ = run([rate_limit(2.5), rate_limit(600.0), TransientProviderError(
        "503", status_code=503, retry_after=4.0), "ok"], policy)
    assert outcome.text == "ok" and outcome.retries == 3
    assert waits == [2.5, 10.0, 4.0]


def test_jitter_wins_over_a_shorter_retry_after():
    policy = RetryPolicy(max_retries=3, base_delay_s=100.0, max_delay_s=100.0)
    _, waits, _ = run([rate_limit(0.001), "ok"], policy, seed=1)
    assert waits == [random.Random(1).uniform(0, 100.0)] and waits[0] > 0.001


def test_rate_limits_do_not_count_against_max_retries_and_back_off_on_their_own_count():
    policy = RetryPolicy(max_retries=2, base_delay_s=1.0, max_delay_s=60.0, max_rate_limit_retries=5)
    script = [server_error(), rate_limit(), rate_limit(), server_error(), rate_limit(), "ok"]
    outcome, waits, calls = run(script, policy, seed=3)
    assert outcome.text == "ok" and outcome.retries == 5 and calls == 6
    rng = random.Random(3)
    # 500 (#0), 429 (#0), 429 (#1), 500 (#1), 429 (#2): each kind doubles from its own count.
    assert waits == [rng.uniform(0, ceiling) for ceiling in (1.0, 1.0, 2.0, 2.0, 4.0)]


def test_rate_limits_have_their_own_ceiling():
    policy = RetryPolicy(max_retries=0, base_delay_s=0.0, max_rate_limit_retries=3)
    outcome, waits, calls = run([rate_limit()] * 10, policy)
    assert isinstance(outcome, TransientProviderError) and outcome.status_code == 429
    assert (outcome.retries, calls, len(waits)) == (3, 4, 3)


def test_transient_errors_stop_at_max_retries_with_the_count_on_the_error():
    outcome, waits, calls = run([server_error()] * 10, RetryPolicy(max_retries=2, base_delay_s=0.0))
    assert isinstance(outcome, TransientProviderError)
    assert (outcome.retries, calls, len(waits)) == (2, 3, 2)


@pytest.mark.parametrize("error", [PermanentProviderError("400", status_code=400),
                                   AuthError("401", status_code=401)])
def test_permanent_and_auth_errors_are_never_retried(error):
    outcome, waits, calls = run([server_error(), error, "ok"], RetryPolicy(max_retries=5, base_delay_s=0.0))
    assert outcome is error and outcome.retries == 1 and (calls, len(waits)) == (2, 1)


def test_quota_is_checked_before_every_try():
    outcome, waits, calls = run([server_error()] * 10, RetryPolicy(max_retries=5, base_delay_s=0.0),
                                quota={"mock/r": 2})
    assert isinstance(outcome, QuotaExceeded) and outcome.retries == 2
    assert (calls, len(waits)) == (2, 2)


def test_cancellation_is_not_retried():
    sleep = FakeSleep()

    async def slow(prompt: str) -> str:
        await asyncio.sleep(60)
        return "late"

    models.register_mock("mock/slow", slow)

    async def go() -> None:
        pool = models.ModelPool(RetryPolicy(max_retries=5), sleep=sleep)
        task = asyncio.create_task(pool.complete(RoleSpec("actor", "mock/slow"), "hi"))
        await asyncio.sleep(0.01)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())
    assert sleep.waits == []
