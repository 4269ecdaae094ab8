"""Each call's sampling seed, derived from the run's seed and the call's slot.

One seed for every task would share a seeded model's "luck" across tasks: sample 1 of
every task would draw the same random stream, so per-sample success moves with the seed
and tasks are not independent. So each call samples with

    seed_for(base, task_index, chain_index, attempt_index, role)
      = int.from_bytes(blake2b(f"{base}:{task_index}:{chain_index}:{attempt_index}:{role}",
                               digest_size=8).digest(), "big") & 0x7FFFFFFF

(a 31-bit int: every provider takes it). blake2b, not Python's `hash`, so the value is the
same in every process and Python version. Slots follow chains: pass@k sample s is chain s,
attempt 1; seq@k attempt t is chain 1, attempt t. So seq@k attempt 1 and pass@k sample 1
of a task share their seed (only the prompt's framing differs), and a later seq@k chain c
starts where pass@k sample c does. The role is part of the key: a critic never replays the
actor's stream.
"""

from __future__ import annotations

import hashlib

SEED_SCHEME = "blake2b(seed:task:chain:attempt:role)"
"""Names the rule above in a seeded run's fingerprint: runs seeded by another rule (before
this one, every task sampled with seed + attempt_index - 1) are not resumed into."""


def seed_for(base: int, task_index: int, chain_index: int, attempt_index: int,
             role: str = "actor") -> int:
    """The seed of one call: see the module's docstring for the formula."""
    key = f"{base}:{task_index}:{chain_index}:{attempt_index}:{role}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") & 0x7FFFFFFF


def slot(seq: bool, attempt_index: int) -> tuple[int, int]:
    """(chain_index, attempt_index) of a run's attempt: seq@k attempts run down chain 1,
    pass@k samples are chains of one attempt each."""
    return (1, attempt_index) if seq else (attempt_index, 1)
