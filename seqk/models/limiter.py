"""An adaptive limit on one model's calls in flight, as TCP adapts its window: slow start,
then additive increase and multiplicative decrease (AIMD).

The limit starts low (`start`: 4 for an endpoint never seen, or what it sustained before, see
below) and, in slow start, every success adds one call (so it doubles per round of calls) until
the first rate limit (429) or the ceiling: a model's first burst does not send the full
ceiling at a server that will refuse most of it.

A rate limit ends the slow start and lowers the limit once per burst: by a fifth, or to one
below the call's place in flight when that is lower, but never by more than half (a 429 to the
9th call in flight says the server holds 8: after a slow start overshot to 16, the limit falls
to 8 at once, not to 12, 9 and 7 over three more bursts of 429s; a 429 to the first call in
flight says the limit is on requests or tokens per minute, not on calls in flight, and halves
it, as TCP does). Where a call at the place just below the refused one succeeded since the last
decrease, the server is known to hold that many, and the limit goes back to exactly that: a
probe from 8 to 9 refused returns to 8, not to 7 (a fifth less would leave a server of 8 slots
an eighth idle until the next probe, and a run that remembered 7 would start there: 1.27x the
ideal time at bench/bench_ratelimit.py's server against 1.14-1.18x from a fresh store). Never
below 1. Only a call that started under the
current limit can lower it: the other calls of a burst that all meet the same 429 were sent
under the old limit, and lowering once per call would drop any limit to 1 in one burst. After
`quiet_s` (3 s) without a rate limit, every `limit` successes add one call, up to the ceiling
the variant set (`max_concurrency`).

What a limit sustained (`sustained()`): the most calls in flight, itself included, at which a
call sent since the last decrease succeeded; `bounded` when a rate limit bounded it. The run
remembers it in the store (seqk.run.limits), and the next run against the same endpoint starts
there (less with age; at twice an unbounded value, which slow start would reach in one round):
it slow-starts up to a value a rate limit bounded and probes additively
past it; past an unbounded one (the run asked for no more, or met no 429) it slow-starts on.

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
"""Calls in flight a model starts with when its endpoint has no remembered limit; slow start
reaches 64 after four rounds of calls."""


@dataclass(frozen=True)
class LimitState:
    """One model's limit as the console shows it."""

    model: str
    api_base: str | None
    """As shown: scheme, host, port and path, never a user, password or query
    (seqk.models.endpoints.public_url)."""
    limit: int
    """Calls in flight allowed now."""
    ceiling: int
    """The most it may grow back to (the role's max_concurrency, or the run's default)."""
    lowest: int
    """The lowest the limit fell to during this invocation."""
    rate_limited: int
    """Calls answered with a rate limit during this invocation."""
    start: int = DEFAULT_START
    """The limit this invocation started at (more than DEFAULT_START when remembered)."""
    peak_in_flight: int = 0
    """The most calls in flight at once during this invocation."""


@dataclass(frozen=True)
class Slot:
    """What `acquire` hands back: the epoch the call started in and its place in flight."""

    epoch: int
    position: int
    """Calls in flight when it was sent, itself included."""


class AdaptiveLimit:
    """A semaphore whose size follows the provider's rate limits (see the module docstring)."""

    def __init__(self, ceiling: int, *, start: int = DEFAULT_START, decrease: float = 0.8,
                 quiet_s: float = 3.0, threshold: int | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.ceiling = ceiling
        self.limit = max(1, min(ceiling, start))
        self.start = self.limit
        self.lowest = self.limit
        self.decrease = decrease
        self.quiet_s = quiet_s
        self.in_flight = 0
        self.peak_in_flight = 0
        self.rate_limited = 0
        self.successes = 0
        self.threshold = min(ceiling, threshold or ceiling)
        """Where slow start ends without a rate limit (TCP's ssthresh): the ceiling, or the
        remembered value a rate limit bounded."""
        self.slow_start = self.limit < self.threshold
        """True until the first rate limit or the threshold: each success adds one call."""
        self.epoch = 0
        """Bumped on each decrease; a call remembers the epoch it started in."""
        self.held = 0
        """The most calls in flight at which a call sent in this epoch succeeded."""
        self._clock = clock
        self._last_decrease = -float("inf")
        self._credit = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> Slot:
        """Wait for a slot; returns what to hand back to `on_success` or `on_rate_limit`."""
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
        if self.in_flight > self.peak_in_flight:
            self.peak_in_flight = self.in_flight
        return Slot(self.epoch, self.in_flight)

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

    def on_rate_limit(self, slot: Slot) -> None:
        """A call sent in `slot` met a rate limit."""
        self.rate_limited += 1
        self.slow_start = False
        if slot.epoch != self.epoch:
            return
        line = slot.position - 1  # calls in flight beside the refused one
        # a call at that place succeeded since the last decrease: the server holds `line` (a probe
        # one past it was refused), so the limit goes back to it, no further
        held_line = line >= 1 and self.held >= line
        lower = line if held_line else min(int(self.limit * self.decrease), line)
        self.limit = max(1, self.limit // 2, lower)
        self.lowest = min(self.lowest, self.limit)
        self.epoch += 1
        self.held = 0
        self._credit = 0
        self._last_decrease = self._clock()

    def on_success(self, slot: Slot) -> None:
        """A call sent in `slot` succeeded: in slow start one more call; later, after a quiet
        period, a full window of successes adds one."""
        self.successes += 1
        if slot.epoch == self.epoch and slot.position > self.held:
            self.held = slot.position
        if self.limit >= self.ceiling:
            self.slow_start = False
            return
        if self.slow_start:
            self.limit += 1
            self.slow_start = self.limit < self.threshold
            self._wake()
            return
        if self._clock() - self._last_decrease < self.quiet_s:
            return
        self._credit += 1
        if self._credit >= self.limit:
            self._credit = 0
            self.limit += 1
            self._wake()

    def sustained(self) -> tuple[int, bool] | None:
        """(calls in flight the endpoint held, whether a rate limit bounded it), or None when no
        call sent since the last decrease succeeded."""
        if not self.held:
            return None
        return self.held, self.rate_limited > 0
