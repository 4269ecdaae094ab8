"""How many tasks a comparison needs: the exact power of the test seqk runs.

A seq@k run is compared with its pass@k partner on the same tasks by Tango's continuity-corrected
score test (`seqk.stats.paired_difference`); at "no difference" it is McNemar's corrected test,
which rejects when (|b - c| - 1) / sqrt(b + c) > z_{1 - alpha/2} for b tasks solved by seq@K only
and c by pass@K only. Its power is computed here exactly, by enumerating the flips: with
discordance psi (the share of tasks solved by one run only) and lift delta = P(seq only) -
P(pass only), the discordant count m = b + c is Binomial(n, psi) and b given m is Binomial(m,
(psi + delta) / (2 psi)), so power = sum_m P(m) P(reject | m). Connor's normal approximation
(Biometrics 1987), which `plan` used before, overstates the power of this test for small n (it
ignores the continuity correction and the discreteness); it only seeds the searches here.

`plan` sizes a study from a discordance measured on stored runs at its one-sided upper 95%
Clopper-Pearson limit (more discordance needs more tasks), or from DEFAULT_DISCORDANCE.
"""

from __future__ import annotations

from functools import lru_cache
from math import ceil, log, sqrt
from statistics import NormalDist

import numpy as np

DEFAULT_DISCORDANCE = 0.3
"""The discordance assumed when no pair of runs has measured it."""

_TAIL_SD = 9.0
"""Binomial mass beyond 9 standard deviations is below 1e-18: the sums stop there."""

EXACT_UP_TO = 50_000
"""Tasks up to which power is enumerated; beyond, the test's discreteness is negligible and
Connor's normal approximation (with the continuity correction's 1 / sqrt(n) term) is used."""


@lru_cache(maxsize=4)
def _log_factorials(n: int) -> np.ndarray:
    """log(i!) for i = 0..n."""
    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=float)))))


def _log_binomial_pmf(k: np.ndarray, n: np.ndarray, p: float, log_fact: np.ndarray) -> np.ndarray:
    if p <= 0.0:
        return np.where(k == 0, 0.0, -np.inf)
    if p >= 1.0:
        return np.where(k == n, 0.0, -np.inf)
    return log_fact[n] - log_fact[k] - log_fact[n - k] + k * log(p) + (n - k) * log(1 - p)


def paired_test_power(n: int, lift: float, discordance: float, alpha: float = 0.05) -> float:
    """Exact power of the continuity-corrected paired test (McNemar's at 0, the p-value of
    `seqk.stats.paired_difference`) at two-sided level alpha, on n tasks with the given
    discordance and lift (the size of the test when lift is 0)."""
    psi, delta = discordance, abs(lift)
    if not 0 <= delta <= psi <= 1:
        raise ValueError(f"a lift of {lift} needs 0 <= |lift| <= discordance <= 1 (discordance {discordance})")
    if n <= 0 or psi == 0:
        return 0.0
    z = NormalDist().inv_cdf(1 - alpha / 2)
    if n > EXACT_UP_TO:
        if delta >= psi:
            return 1.0
        # Connor (1987), the flip difference less 1 for the continuity correction
        return NormalDist().cdf((delta * n - 1 - z * sqrt(n * psi)) / sqrt(n * (psi - delta * delta)))
    from scipy.special import bdtr, bdtrc  # the binomial's tails, in C

    m, weight = _discordant(n, psi)
    share = (psi + delta) / (2 * psi)  # P(seq only | discordant)
    # b given m rejects when |2b - m| - 1 > z sqrt(m), that is (b and m integers) |2b - m| >= floor(z sqrt(m)) + 2:
    # b <= lower or b >= upper; P(reject | m) is the two tails of b's Binomial(m, share)
    least = np.floor(z * np.sqrt(m)).astype(int) + 2
    lower, upper = (m - least) // 2, (m + least + 1) // 2
    below = np.where(lower >= 0, bdtr(np.maximum(lower, 0), m, share), 0.0)
    above = np.where(upper <= m, bdtrc(np.minimum(upper, m) - 1, m, share), 0.0)
    return float(min(1.0, weight @ (below + above)))


@lru_cache(maxsize=64)
def _discordant(n: int, psi: float) -> tuple[np.ndarray, np.ndarray]:
    """The discordant counts m worth summing over on n tasks (9 standard deviations each side of
    n psi) and their Binomial(n, psi) probabilities."""
    log_fact = _log_factorials(n)
    spread = _TAIL_SD * sqrt(n * psi * (1 - psi)) + 1
    m = np.arange(max(1, int(n * psi - spread)), min(n, int(ceil(n * psi + spread))) + 1)
    return m, np.exp(_log_binomial_pmf(m, np.full_like(m, n), psi, log_fact))


def _connor_tasks(lift: float, discordance: float, alpha: float, power: float) -> int:
    """Connor's (1987) normal-approximation sample size: a starting point for the exact search."""
    z_a, z_b = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    d, psi = abs(lift), discordance
    return max(1, int(ceil((z_a * sqrt(psi) + z_b * sqrt(psi - d * d)) ** 2 / d ** 2)))


def tasks_needed(lift: float, discordance: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The smallest number of tasks at which the test reaches `power` against `lift` (exact power;
    with its discreteness power is not monotone in n, so the first n that reaches it)."""
    d, psi = abs(lift), discordance
    if not 0 < d <= psi <= 1:
        raise ValueError(f"a lift of {lift} needs 0 < |lift| <= discordance ({discordance})")
    high = _connor_tasks(lift, discordance, alpha, power)
    while paired_test_power(high, d, psi, alpha) < power:
        high *= 2
    low = 0  # power(low) < target (n = 0 has no power)
    while high - low > 1:  # the crossing, taking power as monotone...
        middle = (low + high) // 2
        if paired_test_power(middle, d, psi, alpha) >= power:
            high = middle
        else:
            low = middle
    # ...then the first n below it that reaches the target anyway (the saw-tooth of a discrete test)
    for n in range(max(1, high - max(10, high // 20)), high):
        if paired_test_power(n, d, psi, alpha) >= power:
            return n
    return high


@lru_cache(maxsize=1024)
def detectable_lift(n: int, discordance: float, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """The smallest lift the test detects with `power` on n tasks (exact power, to 1e-4), None
    when even a lift as large as the discordance is not detected. The search starts from Connor's
    approximation, which the continuity correction puts a little below the answer."""
    psi = discordance
    if n <= 0 or psi <= 0 or paired_test_power(n, psi, psi, alpha) < power:
        return None
    z_a, z_b = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    # Connor: n d^2 = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2, solved for d by a few fixed-point steps
    guess = (z_a + z_b) * sqrt(psi / n)
    for _ in range(20):
        guess = min(psi, (z_a * sqrt(psi) + z_b * sqrt(max(0.0, psi - guess * guess))) / sqrt(n))
    low, high = 0.0, psi
    step = max(guess * 0.05, 1e-4)
    probe = min(psi, guess)
    while probe < psi and paired_test_power(n, probe, psi, alpha) < power:  # bracket from the guess up
        low, probe, step = probe, min(psi, probe + step), step * 2
    high = probe
    while high - low > 1e-4:
        middle = (low + high) / 2
        if paired_test_power(n, middle, psi, alpha) >= power:
            high = middle
        else:
            low = middle
    return high


def discordance_upper_limit(discordant: float, n: int, level: float = 0.95) -> float:
    """The one-sided upper `level` Clopper-Pearson limit of a discordance measured as `discordant`
    of n tasks (a fractional count, an expected one, is rounded to the nearest task): the
    largest rate under which so few discordant tasks would be seen with probability 1 - level."""
    if n <= 0:
        raise ValueError("a discordance needs at least one task")
    k = min(n, max(0, int(round(discordant))))
    if k == n:
        return 1.0
    log_fact = _log_factorials(n)
    ks = np.arange(0, k + 1)
    # _log_binomial_pmf's terms that do not depend on p, added in its order once for the 60 steps
    choose = log_fact[n] - log_fact[ks] - log_fact[n - ks]
    successes, failures = ks.astype(float), (n - ks).astype(float)

    def cdf(p: float) -> float:  # 0 <= k / n < p < 1
        return float(np.exp(choose + successes * log(p) + failures * log(1 - p)).sum())

    low, high = k / n, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if cdf(middle) > 1 - level:
            low = middle
        else:
            high = middle
    return high

