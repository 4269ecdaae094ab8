"""A study's per-task values: each arm's value on a task at the cell the study compares, as a
range when an error left it censored, and whether the task is settled (every slot of it run).

A seq@k arm at cell (width w, depth d): each chain is solved by d (its first success at d or
before), known unsolved through d (attempts 1..d all valid and wrong), or unknown (an error cut it
before d). With n chains of which c are solved, the value is Chen's estimator applied to chains,
1 - C(n - c, w) / C(n, w) (the frontier's; w = 1 is the mean over chains, the lift's seq@K). An
unknown chain makes the value a range: its low counts the unknown chains as unsolved, its high as
solved. A pass@k arm at (w, d): w chains of i.i.d. samples, each resampling until its first
success for at most d samples (the frontier's resample-until-success cell; d = 1 is pass@w), solve
the task exactly when any of their w·d samples would: Chen's pass@(w·d) over its k samples,
1 - C(k - c, w d) / C(k, w d), with the samples that errored counted as failures for the low and
as successes for the high.

A task enters a study only when it is settled in both arms: every chain of a seq@k arm ended (a
success, k attempts, or an error), every sample of a pass@k arm has a row. Its value is then final
(the study never runs it again), which a confidence sequence needs of each observation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import comb
from typing import Any

from seqk.config.runspec import RunSpec


@dataclass(frozen=True)
class ArmValue:
    """One arm's value on one task at the study's cell."""

    low: float
    high: float
    settled: bool
    """Every slot of the task has run (a value with an error is settled, as a range)."""

    @property
    def ranged(self) -> bool:
        """An error left the value censored (low < high)."""
        return self.high > self.low


UNSETTLED = ArmValue(0.0, 1.0, False)


def chen(n: int, c: int, w: int) -> float:
    """1 - C(n - c, w) / C(n, w): the probability that w of n draws without replacement include
    one of the c successes (Chen et al. 2021's unbiased pass@w)."""
    return 1.0 - comb(n - c, w) / comb(n, w)


def arm_values(spec: RunSpec, cell: tuple[int, int], rows: Iterable[dict[str, Any]],
               task_indices: Iterable[int]) -> dict[int, ArmValue]:
    """Each task's value in the run `spec` at `cell`, from its per-chain outcome rows (sql/studies.sql
    `study_chain_outcomes`, this run's rows); a task without rows is unsettled."""
    by_task: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_task.setdefault(row["task_index"], []).append(row)
    return {t: (_seq_value(spec, cell, by_task[t]) if spec.seq else _pass_value(spec, cell, by_task[t][0]))
            if t in by_task else UNSETTLED for t in task_indices}


def _seq_value(spec: RunSpec, cell: tuple[int, int], chains: list[dict[str, Any]]) -> ArmValue:
    width, depth = cell
    n = spec.chains
    settled = len(chains) >= n and all(_chain_ended(spec, c) for c in chains)
    solved = sum(1 for c in chains if c["first_success"] is not None and c["first_success"] <= depth)
    failed = sum(1 for c in chains if (c["first_success"] is None or c["first_success"] > depth)
                 and c["valid_prefix"] >= depth)
    unknown = n - solved - failed
    return ArmValue(chen(n, solved, width), chen(n, solved + unknown, width), settled)


def _chain_ended(spec: RunSpec, chain: dict[str, Any]) -> bool:
    return (chain["first_success"] is not None or chain["settled_prefix"] >= spec.k
            or bool(chain["ended_in_error"]))


def _pass_value(spec: RunSpec, cell: tuple[int, int], row: dict[str, Any]) -> ArmValue:
    samples = cell[0] * cell[1]  # w chains of at most d samples: solved when any of w·d would be
    k, valid, success = spec.k, row["n_valid"], row["n_success"]
    return ArmValue(chen(k, success, samples), chen(k, success + (k - valid), samples), row["n_attempts"] >= k)
