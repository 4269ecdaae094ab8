"""Mock actors for ARC-AGI-2 that look the answer up: they run the whole machinery offline (a run,
its report, the equal-budget block), and what they show is a demonstration, never a finding.

A variant names one as `model: mock/py:benchmarks.arcagi2.mocks:seeded` (seqk/models/mock.py);
`variants/arcagi2/equal-budget.seqk.yaml` and its partner `equal-budget.passk.yaml` do, with a
price, so the equal-budget block reads in US$.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache

from . import ArcAgi2Options, benchmark

WRONG = "[[0, 0], [0, 0]]"
"""A grid no ARC-AGI-2 test output is: every miss answers it."""


@cache
def _tasks() -> tuple[tuple[str, int, str], ...]:
    """(prompt, task_index, test outputs as JSON) of every bundled task, both splits, longest
    prompt first (so that a task whose prompt holds another's is found before it)."""
    found = [(task.prompt, task.task_index, json.dumps(task.answer))
             for split in ("evaluation", "training")
             for task in benchmark.load_tasks(ArcAgi2Options(split=split))]
    return tuple(sorted(found, key=lambda row: -len(row[0])))


@cache
def _by_prompt() -> dict[str, tuple[str, int, str]]:
    return {row[0]: row for row in _tasks()}


def find_task(prompt: str) -> tuple[str, int, str] | None:
    """(task prompt, task_index, answer JSON) of the task an actor prompt asks, or None for a task
    not bundled. A pass@k prompt is the task's prompt and a seq@k prompt starts with it (found
    at once); a prompt built otherwise (a system message first, a chat's messages) holds it."""
    head = prompt.partition("\n\nThis is attempt ")[0]
    found = _by_prompt().get(head)
    return found if found is not None else next((row for row in _tasks() if row[0] in prompt), None)


def task_of(prompt: str) -> tuple[int, str] | None:
    """(task_index, answer JSON) of the task an actor prompt asks, or None (find_task)."""
    found = find_task(prompt)
    return None if found is None else found[1:]


def seeded(prompt: str, seed: int | None = None) -> str:
    """Right on a third of (task, seed) pairs, decided by a hash, whatever the feedback says: a
    seeded run's chains and samples each draw anew (every call has its own seed,
    seqk.seeds.seed_for), the same seed always gives the same answer, and feedback does nothing."""
    found = task_of(prompt)
    if found is None:
        return WRONG
    index, answer = found
    if hashlib.sha256(f"{index}/{seed}".encode()).digest()[0] % 3 == 0:
        return f"Here it is:\n```json\n{answer}\n```"
    return WRONG
