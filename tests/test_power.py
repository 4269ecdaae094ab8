"""The power `plan` promises is the power of the test the report runs: enumerated exactly over the
flips, it agrees with a brute-force sum over every 2x2 table of the report's own p-value, and the
task counts it gives reach the power they promise."""

from __future__ import annotations

from math import comb

import pytest

from seqk import power, stats


def brute_force_power(n: int, lift: float, discordance: float, alpha: float = 0.05) -> float:
    """P(p < alpha) for the report's test (stats.paired_difference) summed over every outcome
    (b flips to seq, c to pass) of a trinomial of n tasks."""
    p_b, p_c = (discordance + lift) / 2, (discordance - lift) / 2
    total = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            if stats.paired_difference(0, b, c, n - b - c).p_value < alpha:
                total += (comb(n, b) * comb(n - b, c) * p_b ** b * p_c ** c
                          * (1 - p_b - p_c) ** (n - b - c))
    return total


@pytest.mark.parametrize(("n", "lift", "discordance"), [
    (10, 0.3, 0.4), (14, 0.2, 0.3), (25, 0.1, 0.3), (40, 0.15, 0.2), (60, 0.0, 0.3), (33, 0.25, 0.25)])
def test_exact_power_is_the_power_of_the_reports_test(n, lift, discordance):
    assert power.paired_test_power(n, lift, discordance) == pytest.approx(
        brute_force_power(n, lift, discordance), abs=1e-9)


def test_the_tasks_needed_reach_the_power_and_fewer_do_not_first():
    for lift, psi in ((0.1, 0.3), (0.05, 0.2), (0.2, 0.5)):
        n = power.tasks_needed(lift, psi)
        assert power.paired_test_power(n, lift, psi) >= 0.8
        assert all(power.paired_test_power(m, lift, psi) < 0.8 for m in range(max(1, n - 25), n))
    # the continuity correction costs tasks: Connor's normal formula (234 for 0.1 at 0.3) promised
    # 80% where the test has 77%
    assert power.tasks_needed(0.1, 0.3) > 234
    assert power.paired_test_power(234, 0.1, 0.3) == pytest.approx(0.771, abs=0.001)


def test_the_detectable_lift_is_detected():
    lift = power.detectable_lift(120, 0.3)
    assert lift is not None and power.paired_test_power(120, lift, 0.3) >= 0.8
    assert power.paired_test_power(120, lift * 0.99, 0.3) < 0.8
    assert power.detectable_lift(14, 0.3) is None  # the quickstart's 14 tasks detect nothing at 0.3
    # beyond exact enumeration, the normal approximation with the correction
    big = power.detectable_lift(200_000, 0.3)
    assert big is not None and 0 < big < 0.01


def test_the_size_never_exceeds_alpha():
    for n in (5, 20, 50, 200, 1000):
        for psi in (0.05, 0.3, 0.8):
            assert power.paired_test_power(n, 0.0, psi) <= 0.05


def test_a_measured_discordance_is_planned_at_its_upper_95_percent_limit():
    # Clopper-Pearson one-sided: P(X <= 30; 100, upper) = 0.05
    upper = power.discordance_upper_limit(30, 100)
    below = sum(comb(100, x) * upper ** x * (1 - upper) ** (100 - x) for x in range(31))
    assert below == pytest.approx(0.05, abs=1e-6) and 0.30 < upper < 0.40
    assert power.discordance_upper_limit(0, 50) == pytest.approx(1 - 0.05 ** (1 / 50), abs=1e-6)
    assert power.discordance_upper_limit(10, 10) == 1.0
    # an expected count (fractional pass@K values) rounds to the nearest task
    assert power.discordance_upper_limit(29.6, 100) == upper


def test_the_upper_limit_is_the_bisection_over_the_binomial_pmf_bit_for_bit():
    """discordance_upper_limit's cdf adds the pmf's terms that do not depend on p once: the same
    floats, so the same 60 steps and the same limit, as summing _log_binomial_pmf at each step."""
    import numpy as np

    from seqk.power import _log_binomial_pmf, _log_factorials, discordance_upper_limit

    def reference(discordant: float, n: int) -> float:
        k = min(n, max(0, int(round(discordant))))
        if k == n:
            return 1.0
        ks, log_fact = np.arange(0, k + 1), _log_factorials(n)
        low, high = k / n, 1.0
        for _ in range(60):
            middle = (low + high) / 2
            if float(np.exp(_log_binomial_pmf(ks, np.full_like(ks, n), middle, log_fact)).sum()) > 1 - 0.95:
                low = middle
            else:
                high = middle
        return high

    rng = np.random.default_rng(5)
    for n in [1, 2, 7, 40, 333, 2850, 28500, *rng.integers(1, 30000, 20)]:
        for discordant in {0.0, 0.4, 1.0, n / 3, n * 0.97, n, float(rng.uniform(0, n))}:
            assert discordance_upper_limit(discordant, int(n)) == reference(discordant, int(n)), (n, discordant)
