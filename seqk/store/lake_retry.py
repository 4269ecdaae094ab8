"""What a lake writer does when its commit loses a race with another writer's.

DuckLake numbers its snapshots in order, and two writers committing at once both claim the next
number: PostgreSQL lets one have it and refuses the other (a duplicate key on
ducklake_snapshot). The loser's commit is retried at two levels, each bounded and jittered:

1. Inside DuckLake (its settings, set in every session): it rolls the catalog transaction back,
   checks what the winner changed (appends to the same tables never conflict), and writes its
   metadata again under the next number, without writing its data files again. It waits
   `wait_ms` × `backoff`^i × a random factor in [0.5, 1] before the i-th retry; DuckLake's
   defaults (100 ms, 1.5) made four writers committing back to back wait 50-225 ms for a
   race that lasts a few ms, and our former 100 retries allowed waits of hours.
2. Here, when DuckLake has given up ("Exceeded the maximum retry count"): its transaction was
   rolled back whole (its data files deleted), so the write is run again from the start
   (`run`), after `base_s` × 2^i × a random factor in [0.5, 1], capped at `cap_s`.

Nothing else is retried here: a logical conflict (a table dropped under an insert) fails at
once in DuckLake and again here, and an error whose outcome is unknown (the catalog gone in the
middle of a commit) goes to the writer, which keeps its attempts for its next flush.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import duckdb

log = logging.getLogger("seqk")
T = TypeVar("T")

LOST_RACE = "Exceeded the maximum retry count"
"""In DuckLake's error once its own retries of a commit that lost every race ran out (d8a1881e,
src/storage/ducklake_transaction_state.cpp); a logical conflict never says it."""

_runs_again = 0


@dataclass(frozen=True)
class CommitRetry:
    """The retry policy of a lake's commits (the defaults are seqk's; tests lower them)."""

    ducklake_retries: int = 12
    """Commits DuckLake tries before it gives up: at most ~1.7 s of waiting in all."""
    ducklake_wait_ms: int = 10
    """DuckLake's wait before its first retry (times a random factor in [0.5, 1])."""
    ducklake_backoff: float = 1.5
    """What DuckLake multiplies its wait by after each retry."""
    retries: int = 5
    """Times seqk runs a whole write again once DuckLake gave up."""
    base_s: float = 0.1
    """seqk's wait before its first run again, doubled each time (times [0.5, 1])."""
    cap_s: float = 2.0
    """The longest of seqk's waits."""

    def settings(self) -> list[tuple[str, int | float]]:
        """DuckLake's part in a session: (a SET statement with its value as a parameter, the value)."""
        return [("SET ducklake_max_retry_count = ?", int(self.ducklake_retries)),
                ("SET ducklake_retry_wait_ms = ?", int(self.ducklake_wait_ms)),
                ("SET ducklake_retry_backoff = ?", float(self.ducklake_backoff))]

    def delays(self, rng: random.Random) -> Iterator[float]:
        """The waits before each run again: exponential, capped, each times a factor in [0.5, 1]."""
        for i in range(self.retries):
            yield min(self.cap_s, self.base_s * 2 ** i) * rng.uniform(0.5, 1.0)

    def run(self, write: Callable[[], T], rng: random.Random | None = None,
            sleep: Callable[[float], None] = time.sleep) -> T:
        """`write()` (one whole transaction), run again while DuckLake gives up on its commit."""
        global _runs_again
        for delay in self.delays(rng or random.Random()):
            try:
                return write()
            except duckdb.TransactionException as exc:
                if not lost_race(exc):
                    raise
                _runs_again += 1
                log.info("DuckLake gave up on a commit after %d tries (other writers kept committing first); "
                         "writing it again in %.2f s", self.ducklake_retries, delay)
                sleep(delay)
        return write()


def lost_race(exc: BaseException) -> bool:
    """Whether `exc` is DuckLake giving up on a commit that only lost races (nothing of it stayed)."""
    return isinstance(exc, duckdb.TransactionException) and LOST_RACE in str(exc)


def runs_again() -> int:
    """How many writes this process has run again after DuckLake gave up on their commit."""
    return _runs_again
