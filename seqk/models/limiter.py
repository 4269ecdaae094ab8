"""An adaptive limit on one model's calls in flight, as TCP adapts its window: slow start,
then additive increase and multiplicative decrease (AIMD).

The limit starts low (`start`, 4 by default) and every success adds one call (so it doubles
per round of calls) until the first rate limit (429) or the ceiling: a model's first burst
no longer sends the full ceiling at a server that will refuse most of it. A rate limit
multiplies the limit by `decrease` (0.8, never below 1) and ends the slow start. Only a call
that started under the current limit can lower it again: the other calls of a burst that
all meet the same 429 were sent under the old limit, and lowering once per call would drop
any limit to 1 in one burst. After `quiet_s` (3 s) without a rate limit, every `limit`
successes add one call, up to the ceiling the variant set (`max_concurrency`).

Why these numbers (bench/bench_ratelimit.py, a server that refuses past 8 in flight): starting
at the ceiling sent 192 calls at once and 44% of requests met a 429; halving after a
slow start sat at 4 in flight through 5 s quiet periods (1.4x the ideal time); a gentler
decrease (0.8, CUBIC uses 0.7) and a shorter quiet period keep the limit near what the
server accepts. Retry-After is not this
class's business: the pool waits it out before the call asks for a slot again.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_START = 4
"""Calls in flight a model starts with; slow start reaches 64 after four rounds of calls."""


@dataclass(frozen=True)
class LimitState:
    """One model's limit as the console shows it."""

    model: str
    api_base: str | None
    limit: int
    """Calls in flight allowed now."""
    ceiling: int
    """The most it may grow back to (the role's max_concurrency, or the run's default)."""
    lowest: int
    """The lowest the limit fell to during this invocation."""
    rate_limited: int
    """Calls answered with a rate limit during this invocation."""


class AdaptiveLimit:
    """A semaphore whose size follows the provider's rate limits (see the module docstring)."""

    def __init__(self, ceiling: int, *, start: int = DEFAULT_START, decrease: float = 0.8,
                 quiet_s: float = 3.0, clock: Callable[[], float] = time.monotonic):
        self.ceiling = ceiling
        self.limit = max(1, min(ceiling, start))
        self.lowest = self.limit
        self.decrease = decrease
        self.quiet_s = quiet_s
        self.in_flight = 0
        self.rate_limited = 0
        self.slow_start = self.limit < ceiling
        """True until the first rate limit or the ceiling: each success adds one call."""
        self.epoch = 0
        """Bumped on each decrease; a call remembers the epoch it started in."""
        self._clock = clock
        self._last_decrease = -float("inf")
        self._credit = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> int:
        """Wait for a slot; returns the epoch to hand back to `on_rate_limit`."""
        while self.in_flight >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                else:
                    self._wake()  # it was woken for a slot it will not take: pass it on
                raise
        self.in_flight += 1
        return self.epoch

    def release(self) -> None:
        """Give the slot back."""
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        free = self.limit - self.in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1

    def on_rate_limit(self, epoch: int) -> None:
        """A call that started in `epoch` met a rate limit."""
        self.rate_limited += 1
        self.slow_start = False
        if epoch != self.epoch:
            return
        self.limit = max(1, int(self.limit * self.decrease))
        self.lowest = min(self.lowest, self.limit)
        self.epoch += 1
        self._credit = 0
        self._last_decrease = self._clock()

    def on_success(self) -> None:
        """A call succeeded: in slow start one more call; later, after a quiet period, a full
        window of successes adds one."""
        if self.limit >= self.ceiling:
            self.slow_start = False
            return
        if self.slow_start:
            self.limit += 1
            self._wake()
            return
        if self._clock() - self._last_decrease < self.quiet_s:
            return
        self._credit += 1
        if self._credit >= self.limit:
            self._credit = 0
            self.limit += 1
            self._wake()
