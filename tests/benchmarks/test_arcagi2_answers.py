"""arcagi2 grading of answer forms: every reasonable container of the true grids is right,
and one changed cell is wrong, for random tasks (a seeded generator, not hypothesis)."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from helpers import context

from benchmarks.arcagi2 import benchmark, prompts
from benchmarks.arcagi2.grids import ANSWER_KEYS, Grid, render
from seqk.benchmark import Task, Verdict

N_TASKS = 300
PROSE = ("Let me think. In example 1 the border [step 1] is recoloured, then [2] cells move.\n"
         "So the answer is:\n")


def verify_all(task: Task, replies: list[str]) -> list[Verdict]:
    async def run() -> list[Verdict]:
        return [await benchmark.verify(task, reply, context(benchmark)) for reply in replies]

    return asyncio.run(run())


def random_task(rng: random.Random, index: int) -> Task:
    grids = [[[rng.randrange(10) for _ in range(width)] for _ in range(rng.randint(1, 12))]
             for width in (rng.randint(1, 12) for _ in range(rng.randint(1, 3)))]
    return Task(task_index=index, task_id=f"random{index}", prompt="", answer=grids,
                meta={"n_test": len(grids)})


def containers(grids: list[Grid]) -> list[Any]:
    """Every accepted container of `grids`: a bare list, objects under each answer key, ARC's
    pair form, and, for a one-test task, the bare grid and objects holding it."""
    forms: list[Any] = [grids, {"test": [{"output": g} for g in grids]}]
    forms += [{key: grids} for key in ANSWER_KEYS]
    forms.append({"reasoning": "mirror the rows", "Test": grids})
    if len(grids) == 1:
        forms.append(grids[0])
        forms += [{key: grids[0]} for key in ANSWER_KEYS]
    return forms


SERIALISERS: list[Callable[[Any], str]] = [json.dumps, lambda v: json.dumps(v, indent=2)]
WRAPPERS: list[Callable[[str], str]] = [
    lambda s: s,
    lambda s: f"```json\n{s}\n```",
    lambda s: f"{PROSE}```json\n{s}\n```",
    lambda s: f"{PROSE}{s}",
    lambda s: f"{PROSE}```\n{s}\n```\nI hope that is right.",
]


def replies(grids: list[Grid]) -> list[str]:
    return [wrap(serialise(form)) for form in containers(grids) for serialise in SERIALISERS
            for wrap in WRAPPERS]


def one_cell_changed(rng: random.Random, grids: list[Grid]) -> list[Grid]:
    changed = [[row[:] for row in grid] for grid in grids]
    grid = rng.choice(changed)
    row = rng.choice(grid)
    col = rng.randrange(len(row))
    row[col] = (row[col] + rng.randint(1, 9)) % 10
    return changed


@pytest.mark.slow
def test_random_tasks_true_grids_in_every_form_are_right_and_one_cell_off_is_wrong() -> None:
    rng = random.Random(20261123)
    for index in range(1, N_TASKS + 1):
        task = random_task(rng, index)
        wrong = one_cell_changed(rng, task.answer)
        for reply, verdict in zip(replies(task.answer), verify_all(task, replies(task.answer)),
                                  strict=True):
            assert verdict.success and verdict.score == 1.0, (task.answer, reply)
        for reply, verdict in zip(replies(wrong), verify_all(task, replies(wrong)), strict=True):
            missed = [g["cells_total"] - g["cells_correct"] for g in verdict.details["grids"]]
            assert not verdict.success and sum(missed) == 1, (task.answer, reply)


GRID_A = [[1, 2], [3, 4]]
GRID_B = [[5]]
TWO = Task(task_index=1, task_id="two", prompt="", answer=[GRID_A, GRID_B], meta={"n_test": 2})


@pytest.mark.parametrize("reply", [
    json.dumps({"test": [GRID_A, GRID_B]}),
    "The rule swaps colours.\n```json\n" + json.dumps({"test": [GRID_A, GRID_B]}) + "\n```",
    '{"answer": {"test": [{"output": [[1, 2], [3, 4]]}, {"output": [[5]]}]}}',
])
def test_seq_k_answer_object_is_graded_right(reply: str) -> None:
    verdict = verify_all(TWO, [reply])[0]
    assert verdict.success, verdict.raw_eval_output
    assert verdict.details["n_given"] == 2


def test_the_last_answer_in_the_reply_wins() -> None:
    first = json.dumps({"test": [GRID_B, GRID_A]})
    last = json.dumps([GRID_A, GRID_B])
    right, wrong = verify_all(TWO, [f"First: {first}\nCorrected: {last}",
                                    f"First: {last}\nCorrected: {first}"])
    assert right.success and not wrong.success


@pytest.mark.parametrize("reply", [
    '{"test": "I could not find the rule."}',
    '{"test": [[1, 2], [3]]}',
    '{"test": [[[1, 2], [3, 4]], [[10]]]}',
    '{"grids": []}',
    '{"solution": [[[1, 2], [3, 4]], [[5]]]}',
])
def test_malformed_answer_objects_are_wrong_not_errors(reply: str) -> None:
    verdict = verify_all(TWO, [reply])[0]
    assert not verdict.success and verdict.score < 1


def test_the_prompt_examples_are_graded_as_the_grids_they_show() -> None:
    """What the prompt asks for is what the grader accepts: its own examples, as answers."""
    one = Task(task_index=1, task_id="one", prompt="", answer=[[[0, 1], [1, 0]]],
               meta={"n_test": 1})
    many = Task(task_index=2, task_id="many", prompt="", answer=[[[0, 1], [1, 0]], [[5]]],
                meta={"n_test": 2})
    assert "[[[0, 1], [1, 0]]]" in prompts.ANSWER_ONE and "[[0, 1], [1, 0]]" in prompts.ANSWER_ONE
    assert all(v.success for v in verify_all(one, ["[[[0, 1], [1, 0]]]", "[[0, 1], [1, 0]]",
                                                   render([[0, 1], [1, 0]])]))
    assert "[[[0, 1], [1, 0]], [[5]]]" in prompts.ANSWER_MANY
    assert verify_all(many, ["[[[0, 1], [1, 0]], [[5]]]"])[0].success
