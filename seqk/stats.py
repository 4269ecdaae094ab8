"""The statistics SQL is clumsy at: the task-level bootstrap, McNemar's exact test and the
score interval of a paired difference of 0/1 outcomes.

Everything per task is computed in SQL (sql/views.sql); what reaches Python is a small
table of task *types*: the distinct per-task outcome tuples with how many tasks share
each. Resampling tasks with replacement is the same as drawing type counts from a
multinomial with those frequencies, so a bootstrap over 100,000 tasks costs no more than
one over 100.

Each resample stream is seeded from (seed, name of the figure), so a figure's interval
does not change with which other runs happen to be in the same report.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import comb, sqrt

import numpy as np

DEFAULT_SEED = 20260101
DEFAULT_N_BOOT = 2000
_Z = 1.959963984540054
"""The normal quantile of a 95% two-sided interval."""


@dataclass(frozen=True)
class Estimate:
    """A figure over n tasks with its 95% interval (None when it cannot be computed)."""

    value: float | None
    low: float | None
    high: float | None
    n: int


@dataclass(frozen=True)
class Types:
    """Per-task outcome tuples (one row per distinct tuple) and how many tasks have each."""

    values: np.ndarray
    """Shape (number of types, number of outcomes); float."""
    counts: np.ndarray
    """Shape (number of types,); how many tasks share the row."""

    @property
    def n(self) -> int:
        """Number of tasks."""
        return int(self.counts.sum())

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[float | int]]) -> Types:
        """Build from rows of (outcome, …, outcome, count); equal outcome tuples are merged,
        since every multinomial draw costs one binomial per type."""
        merged: dict[tuple[float, ...], int] = {}
        for *values, count in rows:
            key = tuple(float(v) for v in values)
            merged[key] = merged.get(key, 0) + int(count)
        if not merged:
            return cls(np.zeros((0, 0)), np.zeros(0, dtype=np.int64))
        return cls(np.array(list(merged), dtype=float),
                   np.array(list(merged.values()), dtype=np.int64))

    def means(self) -> np.ndarray:
        """Each outcome's mean over all tasks (the point estimate)."""
        return (self.counts @ self.values) / self.n


def rng_for(seed: int, name: str) -> np.random.Generator:
    """A generator that depends only on the seed and the figure's name."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def bootstrap(types: Types, statistic: Callable[[np.ndarray], np.ndarray], *, name: str,
              seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> Estimate:
    """Task-level percentile bootstrap of `statistic`, which maps outcome means
    (shape (B, outcomes)) to figures (shape (B,), NaN where undefined).

    The figure is None where the data leave it undefined; its interval is None when fewer
    than half the resamples define it (EGS and LGS are undefined when Δ is 0).
    """
    return bootstrap_all(types, {name: statistic}, name=name, seed=seed, n_boot=n_boot)[name]


def bootstrap_all(types: Types, statistics: dict[str, Callable[[np.ndarray], np.ndarray]], *,
                  name: str, seed: int = DEFAULT_SEED,
                  n_boot: int = DEFAULT_N_BOOT) -> dict[str, Estimate]:
    """`bootstrap` of several figures on the same resamples (drawn once, from `name`'s
    stream): ΔSeq@K, EGS and LGS of a run come from one set of resampled task sets."""
    n = types.n
    if n == 0:
        return {key: Estimate(None, None, None, 0) for key in statistics}
    means: np.ndarray | None = None  # drawn on the first figure defined on the data
    out: dict[str, Estimate] = {}
    for key, statistic in statistics.items():
        point = float(statistic(types.means()[None, :])[0])
        if np.isnan(point):  # undefined on the data (EGS, LGS with Δ = 0): no interval either
            out[key] = Estimate(None, None, None, n)
            continue
        if means is None:
            means = multinomial(rng_for(seed, name), n, types.counts / n, n_boot) @ types.values / n
        replicates = statistic(means)
        defined = replicates[~np.isnan(replicates)]
        if len(defined) < n_boot / 2:
            out[key] = Estimate(point, None, None, n)
            continue
        low, high = np.percentile(defined, [2.5, 97.5])
        out[key] = Estimate(point, float(low), float(high), n)
    return out


def multinomial(rng: np.random.Generator, n: int, p: np.ndarray, size: int) -> np.ndarray:
    """`size` multinomial(n, p) draws, shape (size, len(p)).

    Drawn type by type as conditional binomials, each vectorised over all draws: numpy's
    own multinomial loops over draws in C, which costs ~3 ms per figure at size 2000,
    and a report can have hundreds of figures.
    """
    out = np.empty((size, len(p)), dtype=np.int64)
    remaining = np.full(size, n, dtype=np.int64)
    rest = 1.0
    for j, pj in enumerate(p[:-1]):
        share = min(1.0, max(0.0, pj / rest)) if rest > 0 else 0.0
        out[:, j] = rng.binomial(remaining, share)
        remaining -= out[:, j]
        rest -= pj
    out[:, -1] = remaining
    return out


def difference(a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
    """Statistic: mean of outcome a minus mean of outcome b."""
    return lambda m: m[:, a] - m[:, b]


def gain_share(num_hi: int, num_lo: int, first: int, last: int) -> Callable[[np.ndarray], np.ndarray]:
    """Statistic: (m[num_hi] - m[num_lo]) / (m[last] - m[first]), NaN where the denominator is 0
    (EGS and LGS are only defined when ΔSeq@K > 0)."""

    def statistic(m: np.ndarray) -> np.ndarray:
        delta = m[:, last] - m[:, first]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(delta > 0, (m[:, num_hi] - m[:, num_lo]) / delta, np.nan)

    return statistic


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b and c discordant pairs: twice the binomial
    tail P(X ≤ min(b, c)), X ~ Binomial(b + c, 1/2), capped at 1 (1 when b + c = 0)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, c) + 1))
    # Integer arithmetic keeps the tail exact; only the final ratio is rounded.
    return min(1.0, 2 * tail / 2**n)


def wilson_cc(x: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval with continuity correction for x successes in n > 0
    (Newcombe 1998, "Two-sided confidence intervals for the single proportion", method 4)."""
    p, z2 = x / n, _Z * _Z
    low = 0.0 if x == 0 else (2 * x + z2 - 1 - _Z * sqrt(z2 - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))) / (
        2 * (n + z2))
    high = 1.0 if x == n else (2 * x + z2 + 1 + _Z * sqrt(z2 + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))) / (
        2 * (n + z2))
    return max(0.0, low), min(1.0, high)


def paired_score_interval(both: int, a_only: int, b_only: int, neither: int) -> tuple[float, float]:
    """95% interval of p_a - p_b for paired 0/1 outcomes from the 2x2 table of tasks solved by
    both, by a only, by b only, by neither: Newcombe's hybrid score interval (Newcombe 1998,
    "Improved confidence intervals for the difference between binomial proportions based on
    paired data", method 11), Wilson intervals of each margin combined with their correlation.

    The continuity-corrected form is used because it agrees with the exact McNemar test seqk
    reports beside it: 4 tasks flipped one way out of 14 give p = 0.125, and this interval
    includes 0 where the uncorrected one (method 10) and the bootstrap do not. Its coverage
    stays at or above 95% at n = 20 (tests/test_stats.py).
    """
    n = both + a_only + b_only + neither
    if n == 0:
        raise ValueError("no tasks: the interval is undefined")
    p_a, p_b = (both + a_only) / n, (both + b_only) / n
    low_a, high_a = wilson_cc(both + a_only, n)
    low_b, high_b = wilson_cc(both + b_only, n)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    cross = both * neither - a_only * b_only
    # Newcombe's continuity-corrected correlation: a positive one is shrunk by n/2 (to 0 at
    # most); 0 when a margin is empty.
    shrunk = 0.0 if margins == 0 or 0 <= cross <= n / 2 else cross - n / 2 if cross > 0 else cross
    phi = shrunk / sqrt(margins) if shrunk else 0.0
    below = (p_a - low_a) ** 2 - 2 * phi * (p_a - low_a) * (high_b - p_b) + (high_b - p_b) ** 2
    above = (high_a - p_a) ** 2 - 2 * phi * (high_a - p_a) * (p_b - low_b) + (p_b - low_b) ** 2
    diff = p_a - p_b
    return max(-1.0, diff - sqrt(max(0.0, below))), min(1.0, diff + sqrt(max(0.0, above)))
