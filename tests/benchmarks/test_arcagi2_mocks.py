"""The shipped ARC-AGI-2 mock (benchmarks/arcagi2/mocks.py): it finds the task in a pass@k and a
seq@k prompt alike, is right on about a third of (task, seed) pairs with the grid the verifier
accepts, and the same seed always gives the same answer."""

from __future__ import annotations

import asyncio

from helpers import context

from benchmarks.arcagi2 import benchmark, mocks
from seqk.benchmark.contract import HistoryItem
from seqk.benchmark.prompt import actor_prompt


def passes(task, output: str) -> bool:
    return asyncio.run(benchmark.verify(task, output, context(benchmark))).success


def test_the_seeded_mock_finds_the_task_in_either_metric_and_answers_it_right_a_third_of_the_time():
    tasks = benchmark.load_tasks(benchmark.Options())[:40]
    right = 0
    for task in tasks:
        earlier = [HistoryItem(attempt_index=1, output="[[1]]", feedback="no")]
        retry = actor_prompt(task.prompt, 2, 3, seq=True, history=earlier)
        found = mocks.task_of(task.prompt)
        assert found is not None and found[0] == task.task_index and mocks.task_of(retry) == found
        for seed in range(30):
            answer = mocks.seeded(task.prompt, seed)
            assert answer == mocks.seeded(retry, seed)  # feedback changes nothing
            ok = passes(task, answer)
            assert ok == (answer != mocks.WRONG)
            right += ok
    assert 0.28 < right / (40 * 30) < 0.39


def test_a_task_it_does_not_know_gets_a_wrong_grid():
    assert mocks.task_of("Solve this puzzle: [[1, 2]]") is None
    assert mocks.seeded("Solve this puzzle: [[1, 2]]", 3) == mocks.WRONG
