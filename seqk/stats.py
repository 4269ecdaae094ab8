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


MIN_BOOTSTRAP_TASKS = 10
"""A task bootstrap over fewer tasks (or over tasks that all look alike) gives no interval: its
resamples cannot vary enough to say anything, and a zero-width interval ([1.00, 1.00] from three
tasks) would read as certainty. Such a figure is marked `too_few_tasks` instead."""


@dataclass(frozen=True)
class Estimate:
    """A figure over n tasks with its 95% interval (None when it cannot be computed)."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    too_few_tasks: bool = False
    """The interval was a task bootstrap over fewer than MIN_BOOTSTRAP_TASKS tasks, or over
    tasks that all have the same outcomes: no interval, said so."""


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

    @classmethod
    def from_array(cls, values: np.ndarray) -> Types:
        """Build from one row of outcomes per task (shape (tasks, outcomes)); equal rows merged."""
        if len(values) == 0:
            return cls(np.zeros((0, 0)), np.zeros(0, dtype=np.int64))
        unique, _, counts = group_rows(np.asarray(values, dtype=float))
        return cls(unique, counts.astype(np.int64))

    def means(self) -> np.ndarray:
        """Each outcome's mean over all tasks (the point estimate)."""
        return (self.counts @ self.values) / self.n

    @property
    def too_few(self) -> bool:
        """Too few tasks, or too few distinct ones, for a bootstrap interval (MIN_BOOTSTRAP_TASKS)."""
        return self.n < MIN_BOOTSTRAP_TASKS or len(self.counts) < 2


def group_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows of a 2-d array, which row each row is, and how many there are of each:
    np.unique(values, axis=0, return_inverse=True, return_counts=True), in another order and
    several times faster on wide rows (rows keyed by a random projection, then checked equal to
    their key's row; should two rows ever share a key, np.unique decides)."""
    weights = np.random.default_rng(0).standard_normal(values.shape[1])
    _, first, inverse, counts = np.unique(values @ weights, return_index=True, return_inverse=True,
                                          return_counts=True)
    unique = values[first]
    if not np.array_equal(unique[inverse], values):
        return np.unique(values, axis=0, return_inverse=True, return_counts=True)
    return unique, inverse.reshape(-1), counts


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
    return {key: found.estimate for key, found in
            bootstrap_tests(types, statistics, name=name, seed=seed, n_boot=n_boot).items()}


@dataclass(frozen=True)
class BootstrapTest:
    """A figure's task-bootstrap interval and the p-value of "it is 0" from the same resamples."""

    estimate: Estimate
    p_value: float | None
    """Two-sided; below alpha exactly when the interval excludes 0 (`percentile_test`). None when
    there is no interval."""


def bootstrap_tests(types: Types, statistics: dict[str, Callable[[np.ndarray], np.ndarray]], *,
                    name: str, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT,
                    alpha: float = 0.05) -> dict[str, BootstrapTest]:
    """`bootstrap_all` with each figure's p-value of "it is 0" (`percentile_test`), from the
    resamples its interval is read from: the interval excludes 0 exactly when p < alpha."""
    n = types.n
    if n == 0:
        return {key: BootstrapTest(Estimate(None, None, None, 0), None) for key in statistics}
    # every figure on the data first, then on the resamples: figures of one curve share its
    # estimates (Curve.estimates keeps the last means it was asked about)
    data = types.means()[None, :]
    points = {key: float(statistic(data)[0]) for key, statistic in statistics.items()}
    means: np.ndarray | None = None  # drawn on the first figure defined on the data
    out: dict[str, BootstrapTest] = {}
    for key, statistic in statistics.items():
        point = points[key]
        if np.isnan(point):  # undefined on the data (EGS, LGS with Δ = 0): no interval either
            out[key] = BootstrapTest(Estimate(None, None, None, n), None)
            continue
        if types.too_few:
            out[key] = BootstrapTest(Estimate(point, None, None, n, too_few_tasks=True), None)
            continue
        if means is None:
            means = multinomial(rng_for(seed, name), n, types.counts / n, n_boot) @ types.values / n
        replicates = statistic(means)
        defined = replicates[~np.isnan(replicates)]
        found = percentile_test(defined, alpha) if len(defined) >= n_boot / 2 else None
        if found is None:
            out[key] = BootstrapTest(Estimate(point, None, None, n), None)
            continue
        low, high, p_value = found
        out[key] = BootstrapTest(Estimate(point, low, high, n), p_value)
    return out


def percentile_test(replicates: np.ndarray, alpha: float = 0.05) -> tuple[float, float, float] | None:
    """The percentile interval of bootstrap replicates and the p-value of "the figure is 0" read
    from the same replicates, so that the interval excludes 0 exactly when p < alpha.

    With B replicates in order d_(1) <= ... <= d_(B), l = ceil(alpha (B + 1) / 2 - 1): the
    interval is [d_(l), d_(B + 1 - l)] (the 2.5% and 97.5% points for alpha = 0.05), and
    p = min(1, 2 (1 + min(#{d <= 0}, #{d >= 0})) / (B + 1)) (Davison & Hinkley 1997, eq. 4.11,
    two-sided). The interval excludes 0 when fewer than l replicates lie on one side of 0, which
    is p < alpha. None when B is too small for any p to fall below alpha (B < 2 / alpha).
    """
    b = len(replicates)
    if b < int(np.ceil(2 / alpha)):
        return None
    ordered = np.sort(replicates)
    rank = int(np.ceil(alpha * (b + 1) / 2 - 1))
    low, high = float(ordered[rank - 1]), float(ordered[b - rank])
    below, above = int(np.sum(replicates <= 0)), int(np.sum(replicates >= 0))
    return low, high, min(1.0, 2 * (1 + min(below, above)) / (b + 1))


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
# Many comparisons: Benjamini-Hochberg q-values, and a simultaneous band over a block's budgets.


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


@dataclass(frozen=True)
class Band:
    """A simultaneous (1 - alpha) band over several figures of one bootstrap: every figure's
    [low, high] holds its true value at once with probability about 1 - alpha."""

    low: np.ndarray
    high: np.ndarray
    critical: float
    """c: each figure's band is its estimate ± c bootstrap standard errors."""


def max_t_band(points: np.ndarray, replicates: np.ndarray, alpha: float = 0.05) -> Band | None:
    """Simultaneous band over R figures from B joint bootstrap replicates (shape (B, R); NaN where
    a replicate leaves a figure undefined), by the maximum of the studentised deviations
    (Romano & Wolf 2005; the bootstrap max-t band): se_r is figure r's bootstrap standard error,
    c the 1 - alpha quantile over replicates of max_r |d*_r - d_r| / se_r, and the band
    d_r ± c se_r. A figure whose replicates do not vary (se 0) gets the band [d_r, d_r]. None when
    fewer than 2 / alpha replicates define some figure."""
    defined = ~np.isnan(replicates)
    if replicates.size == 0 or defined.sum(axis=0).min() < int(np.ceil(2 / alpha)):
        return None
    se = np.nanstd(replicates, axis=0, ddof=1)
    varies = se > 0
    if not varies.any():
        return Band(points.copy(), points.copy(), 0.0)
    with np.errstate(invalid="ignore"):
        deviations = np.abs(replicates[:, varies] - points[varies]) / se[varies]
    worst = np.nanmax(np.where(np.isnan(deviations), -np.inf, deviations), axis=1)
    worst = np.sort(worst[np.isfinite(worst)])
    critical = float(worst[min(len(worst) - 1, int(np.ceil((1 - alpha) * (len(worst) + 1))) - 1)])
    half = np.where(varies, critical * se, 0.0)
    return Band(points - half, points + half, critical)
