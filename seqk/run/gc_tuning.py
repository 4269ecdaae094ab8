"""Fewer cyclic garbage collections while a run's calls are in flight.

Each call allocates a few hundred short-lived objects (its request and reply, asyncio's
futures and handles, the attempt's records), nearly all freed by reference counting; Python's
default collects the youngest generation every 700 allocations net, and every tenth collection
the next one, scanning the run's live objects (480 chains in flight hold a few hundred thousand)
to find next to nothing. With the youngest generation collected every 10,000 instead, 1,440
calls at 480 in flight took 0.22 ms of CPU per call instead of 0.32, as little as with the
collector off (bench/bench_client.py; docs/performance.md). Cycles (an exception's traceback) are
still collected, a little later.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

GEN0 = 10_000
"""The youngest generation's threshold while a run runs (Python's default: 700)."""

_runs = 0
_saved: tuple[int, ...] = ()


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """The youngest generation's threshold at least GEN0 for the block; the thresholds as they
    were once the last of the runs in the process (a study runs two at once) ends."""
    global _runs, _saved
    if _runs == 0:
        _saved = gc.get_threshold()
        if _saved[0]:  # 0: collection turned off by whoever runs seqk; left so
            gc.set_threshold(max(_saved[0], GEN0), *_saved[1:])
    _runs += 1
    try:
        yield
    finally:
        _runs -= 1
        if _runs == 0:
            gc.set_threshold(*_saved)
