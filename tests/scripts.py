"""Mock model scripts, importable as `mock/py:scripts:<name>` (tests put this folder on sys.path)."""

from __future__ import annotations

import re

_WORD = re.compile(r"Say the word (w\d+)")
_ATTEMPT = re.compile(r"This is attempt (\d+) of (\d+)")


def word_of(prompt: str) -> str:
    return _WORD.search(prompt).group(1)


def attempt_of(prompt: str) -> int | None:
    m = _ATTEMPT.search(prompt)
    return int(m.group(1)) if m else None


def solves_on(schedule: dict[int, int]):
    """A seq@k actor that answers task i right from attempt schedule[i] on (never if absent)."""

    def reply(prompt: str) -> str:
        word = word_of(prompt)
        task = int(word[1:])
        attempt = attempt_of(prompt) or 1
        return word if attempt >= schedule.get(task, 10**9) else f"not-{word}"

    return reply


def seeded_coin(prompt: str, seed: int | None = None) -> str:
    """Right on a third of (task, seed) pairs, decided by a hash: each chain and attempt of a
    seeded run samples anew, and the same seed always gives the same answer."""
    import hashlib

    word = word_of(prompt)
    digest = hashlib.sha256(f"{word}/{seed}".encode()).digest()
    return word if digest[0] % 3 == 0 else f"not-{word}"


def always_wrong(prompt: str) -> str:
    return "wrong"


def odd_tasks_right(prompt: str) -> str:
    word = word_of(prompt)
    return word if int(word[1:]) % 2 else "wrong"


# --- ARC-AGI-2 oracle: right on a fixed pattern of tasks and attempts ---------


def arc_answer(prompt: str) -> str:
    """Task i: right on attempt 1 when i % 4 == 0, from attempt 2 when i % 3 == 0, else wrong."""
    from benchmarks.arcagi2 import mocks

    index, answer = mocks.task_of(prompt)
    attempt = attempt_of(prompt) or 1
    if index % 4 == 0 or (index % 3 == 0 and attempt >= 2):
        return f"Here it is:\n```json\n{answer}\n```"
    return mocks.WRONG


# --- Slow, gated mocks: runs a test can stop, kill or overlap mid-way ----------------------------
# In a process whose environment names a gate (procs.Gate sets these variables), the calls after
# the first GATE_AFTER wait until the file GATE_FILE exists: the run writes exactly that many
# attempts, then holds, so a test can signal, kill or overlap it mid-run however slow the machine
# is. Without the variables (a reference run, a resume, an in-process run) a call only takes its
# latency. A gate never opened lets calls through after GATE_LIMIT_S: a failed test hangs no run.

GATE_FILE = "SEQK_TEST_GATE_FILE"
GATE_AFTER = "SEQK_TEST_GATE_AFTER"
GATE_LIMIT_S = 600.0


def gated(script, latency_s: float):
    """A MockModel answering as `script` after `latency_s`, held by a gate as said above."""
    import asyncio
    import inspect
    import os
    import time

    from seqk.models import MockModel

    takes_seed = "seed" in inspect.signature(script).parameters
    passed = 0

    async def reply(prompt: str, seed: int | None = None) -> str:
        nonlocal passed
        gate = os.environ.get(GATE_FILE)
        if gate and passed >= int(os.environ.get(GATE_AFTER, "0")):
            deadline = time.monotonic() + GATE_LIMIT_S
            while not os.path.exists(gate) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
        passed += 1  # no await since the check: exactly GATE_AFTER calls pass a closed gate
        return script(prompt, seed=seed) if takes_seed else script(prompt)

    return MockModel(reply, latency_s=latency_s)


# Slow enough that an ungated run (the Ray tests' in-process ones) outlasts a few polls.
slow_arc = gated(arc_answer, latency_s=0.15)

slow_wrong = gated(always_wrong, latency_s=0.3)
"""Always wrong, 0.3 s a call: a run long enough to print progress lines."""


def seeded_arc(prompt: str, seed: int | None = None) -> str:
    """The shipped seeded ARC-AGI-2 mock (benchmarks/arcagi2/mocks.py): right on a third of (task,
    seed) pairs, whatever the feedback."""
    from benchmarks.arcagi2 import mocks

    return mocks.seeded(prompt, seed)


slow_seeded_arc = gated(seeded_arc, latency_s=0.15)  # as slow_arc


# --- A world where feedback does nothing (tests/analysis/test_null_world.py) ----------------------


def _unit(text: str) -> float:
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:6], "big") / 2 ** 48


def null_world_p(task: int) -> float:
    """Task i's own chance of a right answer: heterogeneous, most tasks hard (u^2, mean 1/3)."""
    return _unit(f"p/{task}") ** 2


NULL_WORLD_ERRORS = 0.1
"""The share of requests that fail for good, at random."""


def null_world(prompt: str, seed: int | None = None) -> str:
    """Right with the task's own chance whatever came before (a hash of task and seed: each chain,
    attempt and sample of a seeded run draws anew; feedback does nothing); a tenth of requests fail
    for good, independently of everything else."""
    from seqk.errors import PermanentProviderError

    word = word_of(prompt)
    if _unit(f"error/{word}/{seed}") < NULL_WORLD_ERRORS:
        raise PermanentProviderError("503 overloaded, for good")
    return word if _unit(f"right/{word}/{seed}") < null_world_p(int(word[1:])) else f"not-{word}"


# --- Worlds for sequential studies: feedback adds to the per-attempt success, or not ------------


def _uniform(*key: object) -> float:
    """A number in [0, 1) fixed by `key` (a hash): the same call always gives the same draw."""
    import hashlib

    digest = hashlib.sha256("/".join(map(str, key)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def feedback_world(base: float, lift: float):
    """A toy-benchmark actor right with probability `base` per attempt, `base + lift` when its
    prompt carries feedback (a seq@k attempt after a failure), each (task, seed) drawn by a hash:
    the same slot always gets the same answer, so a resumed run repeats nothing it paid for."""

    def reply(prompt: str, seed: int | None = None) -> str:
        word = word_of(prompt)
        p = base + (lift if "<Feedback" in prompt else 0.0)
        return word if _uniform(word, seed) < p else f"not-{word}"

    return reply


feedback_helps = feedback_world(0.3, 0.25)
feedback_useless = feedback_world(0.3, 0.0)


ARC_RATES = (0.1, 0.3, 0.5)
"""Per-attempt success of an ARC task in `arc_world`, one of these by a hash of its index."""


def arc_world(lift: float):
    """An ARC-AGI-2 actor: task i is answered right with probability p_i per attempt (one of
    ARC_RATES, by a hash of i), p_i + `lift` when the prompt carries feedback (a seq@k attempt after
    a failure); each draw is fixed by (task, seed), so a resumed study gets the same answers."""

    from benchmarks.arcagi2 import mocks

    def reply(prompt: str, seed: int | None = None) -> str:
        found = mocks.task_of(prompt)
        assert found is not None, "not an ARC-AGI-2 task's prompt"
        index, answer = found
        p = ARC_RATES[int(_uniform("rate", index) * len(ARC_RATES))] + (lift if "<Feedback" in prompt else 0.0)
        if _uniform(index, seed) < p:
            return f"Here it is:\n```json\n{answer}\n```"
        return mocks.WRONG

    return reply


def grade_python_scorer(output: str, reference) -> bool:
    """A `python:` scorer for tests/verifiers: the target and the row's unit, both in the reply."""
    return reference.target[0] in output and reference.metadata["unit"] in output.split()
