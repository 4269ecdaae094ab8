"""A simulated actor for ARC-AGI-2 (`model: mock/py:benchmarks.arcagi2.simulated:actor`): a world
with a known truth, in which a framing ablation's figures can be checked against what they should
find. It measures no model; its rules are these, and nothing else:

- Each (task, seed) draws u, uniform on [0, 1), from a hash; the answer is right when u < p.
- p = 0.35 on the bare task. Every word the prompt holds besides the task and the actor's own
  earlier outputs (a framing, the feedback, the tags around them) costs one point, up to twenty:
  a small model distracted by what surrounds the task, as the embedded SmolLM2 is in the quickstart.

So seq@1 − pass@1 (the framing effect) is −min(w, 20)/100 in expectation for a framing of w words
at attempt 1, and exactly 0, task by task, with no framing: seq@k's attempt 1 and pass@k's sample
1 share their seed (seqk/seeds.py), so they draw the same u. A right answer is the task's own
test output grids; a wrong one is `[[0]]`.
"""

from __future__ import annotations

import hashlib

from benchmarks.arcagi2.mocks import find_task

BASE = 0.35
PER_WORD = 0.01
MOST_WORDS = 20
WRONG = "[[0]]"


def chance(prompt: str, task_prompt: str) -> float:
    """p for `prompt`, whose task is `task_prompt`."""
    rest = prompt.replace(task_prompt, " ", 1).replace(WRONG, " ")
    return BASE - PER_WORD * min(len(rest.split()), MOST_WORDS)


def actor(prompt: str, seed: int | None = None) -> str:
    """The task's grids when this (task, seed)'s draw falls under p, else a wrong grid."""
    found = find_task(prompt)
    if found is None:
        return WRONG
    task_prompt, task_index, answer = found
    digest = hashlib.sha256(f"{task_index}/{seed}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    return f"```json\n{answer}\n```" if u < chance(prompt, task_prompt) else WRONG
