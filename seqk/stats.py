"""The statistics SQL is clumsy at: the task-level bootstrap, and the interval and test of a
paired difference of 0/1 outcomes (one procedure, `paired_difference`).

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
from math import erfc, sqrt

import numpy as np

DEFAULT_SEED = 20260101
DEFAULT_N_BOOT = 2000
PAIRED_METHOD = "Tango's score interval and test, continuity-corrected (McNemar's at 0)"


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


@dataclass(frozen=True)
class PairedDifference:
    """A paired difference of 0/1 outcomes over n tasks: its estimate, the interval and the
    p-value of one procedure (`paired_difference`)."""

    estimate: float
    """(seq_only - pass_only) / n: the difference of the two success rates."""
    low: float
    high: float
    """The (1 - alpha) interval: every difference the test does not reject at alpha."""
    p_value: float
    """Two-sided p-value of "no difference"; below alpha exactly when the interval excludes 0."""
    n: int
    alpha: float
    method: str = PAIRED_METHOD


def paired_difference(both: int, seq_only: int, pass_only: int, neither: int, *,
                      alpha: float = 0.05) -> PairedDifference:
    """The difference of two paired success rates from the 2x2 table of tasks (solved by
    both, by seq only, by pass only, by neither), with an interval and a p-value that are one
    procedure: the interval is every difference d that the test does not reject at `alpha`,
    and the p-value is that test's at d = 0, so "the interval excludes 0" holds exactly when
    p < alpha, on every table (tests/test_stats.py checks every table of up to 25 tasks).

    The test is Tango's score test for a paired difference (Tango 1998, "Equivalence test and
    confidence interval for the difference in proportions for the paired-sample design",
    Statistics in Medicine 17:891-908): the flip difference seq_only - pass_only - n*d over its
    standard error with the discordance rate re-estimated under d. At d = 0 it is McNemar's
    z. seqk subtracts 1 from the flip difference's size (Edwards' 1948 continuity correction;
    at d = 0 this is McNemar's corrected test, which tracks the exact one: 4 flips to 0 give
    p = 0.13, exact 0.125; 5 to 0 give 0.074, exact 0.0625).

    Why this procedure: uncorrected, Tango's interval covers only 92.6% in the worst cell of
    the grid with one-way flips and n from 10 to 100; corrected, at least 95.3%, and the
    test's size at d = 0 stays at most 4.6% (docs/metrics-and-statistics.md). Newcombe's
    hybrid interval used before came from another construction than McNemar's exact test and
    disagreed with it on 628 of the 23,750 tables of up to 25 tasks; an interval from the
    exact conditional test on seq_only / (seq_only + pass_only) ignores the uncertainty of
    how many tasks flip and undercovers when flips go one way.
    """
    n = both + seq_only + pass_only + neither
    if n <= 0 or min(both, seq_only, pass_only, neither) < 0:
        raise ValueError(f"a 2x2 table needs counts >= 0 and at least one task, got "
                         f"{(both, seq_only, pass_only, neither)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    b, c = seq_only, pass_only
    estimate = (b - c) / n

    def accepted(d: float) -> bool:
        return _score_p_value(b, c, n, d) >= alpha

    p_value = _score_p_value(b, c, n, 0.0)
    zero_in = p_value >= alpha
    # Each end is bisected between a rejected and an accepted difference, with 0 as one of
    # the two when it lies on that side: whether the interval holds 0 is then decided by the
    # very comparison p >= alpha, never by rounding.
    low, high = -1.0, 1.0
    if not accepted(-1.0):
        low = (_boundary(accepted, -1.0, 0.0) if estimate > 0 and zero_in else
               _boundary(accepted, 0.0, estimate) if estimate > 0 else
               _boundary(accepted, -1.0, estimate))
    if not accepted(1.0):
        high = (_boundary(accepted, 1.0, 0.0) if estimate < 0 and zero_in else
                _boundary(accepted, 0.0, estimate) if estimate < 0 else
                _boundary(accepted, 1.0, estimate))
    return PairedDifference(estimate, low, high, p_value, n, alpha)


def _boundary(accepted: Callable[[float], bool], rejected: float, inside: float) -> float:
    """The accepted end of [rejected, inside] after bisection to ~1e-12: an accepted point,
    so the interval never claims a difference the test rejects."""
    for _ in range(42):
        middle = (rejected + inside) / 2
        if accepted(middle):
            inside = middle
        else:
            rejected = middle
    return inside


def _score_p_value(b: int, c: int, n: int, d: float) -> float:
    """Two-sided p-value of Tango's continuity-corrected score test of "seq - pass = d" with
    b tasks flipped to seq and c to pass out of n."""
    # The restricted maximum-likelihood estimate of P(pass only) under the difference d
    # (Tango 1998, eq. 4): the positive root of a x^2 + beta x + gamma.
    a, beta, gamma = 2 * n, -b - c + (2 * n - b + c) * d, -c * d * (1 - d)
    p_pass_only = (sqrt(max(0.0, beta * beta - 4 * a * gamma)) - beta) / (2 * a)
    excess = max(0.0, abs(b - c - n * d) - 1)
    if excess == 0:
        return 1.0
    variance = n * (2 * p_pass_only + d * (1 - d))
    if variance <= 0:
        return 0.0
    return erfc(excess / sqrt(variance) / sqrt(2))


# ---------------------------------------------------------------------------
# How many tasks: McNemar's test power (Connor, Biometrics 1987), for a seq@k run against its
# pass@k partner on the same tasks. psi: the share of discordant tasks (solved by one run only);
# lift: the difference in success rates, P(seq only) - P(pass only).

DEFAULT_DISCORDANCE = 0.3
"""The discordance assumed when no pair of runs has measured it."""


def _z(p: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def mcnemar_power(n: int, lift: float, discordance: float, alpha: float = 0.05) -> float:
    """Power of McNemar's two-sided test at level alpha to detect `lift` with n paired tasks
    (Connor 1987: Φ((|δ|√n − z_{1−α/2}√ψ) / √(ψ − δ²)))."""
    from statistics import NormalDist

    d, psi = abs(lift), discordance
    if n <= 0 or d == 0:
        return alpha / 2
    if d >= psi:
        return 1.0
    return NormalDist().cdf((d * sqrt(n) - _z(1 - alpha / 2) * sqrt(psi)) / sqrt(psi - d * d))


def mcnemar_tasks_needed(lift: float, discordance: float, alpha: float = 0.05,
                         power: float = 0.8) -> int:
    """Tasks needed for McNemar's two-sided test to detect `lift` with the given power
    (Connor 1987: n = (z_{1−α/2}√ψ + z_{power}√(ψ − δ²))² / δ², rounded up)."""
    d, psi = abs(lift), discordance
    if not 0 < d < psi <= 1:
        raise ValueError(f"a lift of {lift} needs 0 < |lift| < discordance ({discordance})")
    return int(np.ceil((_z(1 - alpha / 2) * sqrt(psi) + _z(power) * sqrt(psi - d * d)) ** 2 / d ** 2))


def mcnemar_detectable_lift(n: int, discordance: float, alpha: float = 0.05,
                            power: float = 0.8) -> float | None:
    """The smallest lift McNemar's test detects with the given power on n tasks (None when even
    a lift as large as the discordance is not detected)."""
    if n <= 0 or mcnemar_power(n, discordance * (1 - 1e-9), discordance, alpha) < power:
        return None
    low, high = 0.0, discordance * (1 - 1e-9)
    for _ in range(60):
        middle = (low + high) / 2
        if mcnemar_power(n, middle, discordance, alpha) >= power:
            high = middle
        else:
            low = middle
    return high


# ---------------------------------------------------------------------------
# Many comparisons at once: a table of p-values read together (`report --compare --by`).


def benjamini_hochberg(p_values: Sequence[float | None]) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values (q-values) of a table of tests, in the order given:
    q_(i) = min over j >= i of m * p_(j) / j, capped at 1, with the m p-values ranked
    ascending (Benjamini & Hochberg 1995, "Controlling the false discovery rate", JRSS-B
    57:289-300). Rejecting every test with q < alpha keeps the expected share of false
    findings among the findings at most alpha when the tests are independent or positively
    dependent (Benjamini & Yekutieli 2001), as paired comparisons sharing a run are. A None
    (a test that could not be made) stays None and does not count in m."""
    present = [(p, i) for i, p in enumerate(p_values) if p is not None]
    for p, _ in present:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"a p-value must be in [0, 1], got {p}")
    out: list[float | None] = [None] * len(p_values)
    m = len(present)
    running = 1.0
    for rank, (p, i) in reversed(list(enumerate(sorted(present), start=1))):
        running = min(running, p * m / rank)
        out[i] = running
    return out
