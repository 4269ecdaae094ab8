"""While a run runs, the youngest generation is collected every GEN0 allocations, not every 700
(seqk.run.gc_tuning); the thresholds are as they were once the last run of the process ends."""

from __future__ import annotations

import asyncio
import gc

from helpers import write_variant

from seqk import models
from seqk.config import runspec
from seqk.run import engine, gc_tuning
from seqk.run.observer import AttemptEvent, RunObserver


class Thresholds(RunObserver):
    """The collector's thresholds as each attempt finishes."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, int, int]] = []

    def attempt(self, event: AttemptEvent) -> None:
        self.seen.append(gc.get_threshold())


def test_a_run_collects_less_often_and_puts_the_thresholds_back(tmp_path, db):
    models.register_mock("mock/actor", ["w1"])
    variant = write_variant(tmp_path, benchmark="toy", metric="pass@k", k=2, model="mock/actor",
                            options={"n": 3})
    before = gc.get_threshold()
    gc.set_threshold(700, 11, 12)
    try:
        heard = Thresholds()
        result = engine.run(runspec.load(variant), db, heard)
        assert result.attempts_written == 6
        assert heard.seen == [(gc_tuning.GEN0, 11, 12)] * 6
        assert gc.get_threshold() == (700, 11, 12)
    finally:
        gc.set_threshold(*before)


def test_two_runs_at_once_restore_only_when_the_last_ends():
    before = gc.get_threshold()
    gc.set_threshold(500, 10, 10)
    try:
        async def run(hold: float, seen: list) -> None:
            with gc_tuning.fewer_collections():
                await asyncio.sleep(hold)
                seen.append(gc.get_threshold())

        async def both() -> list:
            seen: list = []
            await asyncio.gather(run(0.01, seen), run(0.05, seen))
            return seen

        assert asyncio.run(both()) == [(gc_tuning.GEN0, 10, 10)] * 2  # the second saw it after the first ended
        assert gc.get_threshold() == (500, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_a_higher_threshold_or_collection_turned_off_is_left_as_it_is():
    before = gc.get_threshold()
    try:
        for setting in ((50_000, 10, 10), (0, 10, 10)):
            gc.set_threshold(*setting)
            with gc_tuning.fewer_collections():
                assert gc.get_threshold() == setting
            assert gc.get_threshold() == setting
    finally:
        gc.set_threshold(*before)
