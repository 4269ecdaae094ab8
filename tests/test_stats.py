"""The paired difference's interval: coverage at small n, and agreement with McNemar's test."""

from __future__ import annotations

from math import factorial, sqrt

import numpy as np
import pytest

from seqk import stats
from seqk.analysis import metrics
from seqk.stats import Types

N_TASKS = 20
# (p_a, p_b, correlation of the two outcomes of a task): equal and unequal rates, rare and
# common successes, independent and strongly correlated runs (seq@k and pass@k on the same
# task are correlated: a hard task is hard for both).
SETTINGS = [(0.3, 0.3, 0.0), (0.5, 0.5, 0.6), (0.5, 0.4, 0.3), (0.2, 0.5, 0.5),
            (0.7, 0.8, 0.2), (0.1, 0.15, 0.0), (0.85, 0.6, 0.3), (0.9, 0.9, 0.5)]


def cell_probabilities(p_a: float, p_b: float, rho: float) -> tuple[float, float, float, float]:
    both = p_a * p_b + rho * sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    cells = (both, p_a - both, p_b - both, 1 - p_a - p_b + both)
    assert min(cells) >= 0
    return cells


def tables(n: int):
    for both in range(n + 1):
        for a_only in range(n + 1 - both):
            for b_only in range(n + 1 - both - a_only):
                yield both, a_only, b_only, n - both - a_only - b_only


def test_score_interval_covers_at_least_93_percent_at_n_20() -> None:
    """Coverage by simulation: 4000 seeded task sets of 20 tasks per setting, each graded
    with the interval of its 2x2 table (tabulated once: a table determines its interval)."""
    intervals = {t: stats.paired_score_interval(*t) for t in tables(N_TASKS)}
    rng = np.random.default_rng(20261123)
    for p_a, p_b, rho in SETTINGS:
        draws = rng.multinomial(N_TASKS, cell_probabilities(p_a, p_b, rho), size=4000)
        truth = p_a - p_b
        covered = [intervals[tuple(int(x) for x in row)][0] <= truth
                   <= intervals[tuple(int(x) for x in row)][1] for row in draws]
        assert np.mean(covered) >= 0.93, (p_a, p_b, rho, np.mean(covered))


def test_exact_coverage_over_every_table_at_n_20() -> None:
    """The same coverage computed exactly: every 2x2 table weighted by its probability."""
    for p_a, p_b, rho in SETTINGS:
        cells = cell_probabilities(p_a, p_b, rho)
        coverage = 0.0
        for table in tables(N_TASKS):
            low, high = stats.paired_score_interval(*table)
            if low <= p_a - p_b <= high:
                weight = factorial(N_TASKS)
                for count, p in zip(table, cells, strict=True):
                    weight *= p ** count / factorial(count)
                coverage += weight
        assert coverage >= 0.93, (p_a, p_b, rho, coverage)


@pytest.mark.parametrize("both", range(11))
def test_four_flips_one_way_of_14_include_0_as_mcnemar_says(both: int) -> None:
    """The quickstart's case: 4 tasks solved only by seq@K, none only by pass@K, 14 shared.
    McNemar's exact p = 0.125, so the interval must include 0 (the bootstrap's did not)."""
    rows = [(1, 1, both), (1, 0, 4), (0, 0, 10 - both)]
    found = metrics.paired(Types.from_rows([r for r in rows if r[2]]), "seq", "pass", 3, name="lift")
    assert found.p_value == pytest.approx(0.125)
    assert found.interval == "score"
    assert found.difference.low <= 0 <= found.difference.high
    assert found.difference.value == pytest.approx(4 / 14)


def test_interval_and_mcnemar_agree_on_almost_every_small_table() -> None:
    """Over every table of 5..25 tasks, the interval excludes 0 exactly when p < 0.05 on
    ≥ 97% of them (97.4%; Newcombe's uncorrected interval, method 10: 91.8%); the rest sit at p just above
    0.05 (5 flips to 0: p = 0.0625)."""
    agree = total = 0
    for n in range(5, 26):
        for table in tables(n):
            low, high = stats.paired_score_interval(*table)
            significant = stats.mcnemar_exact(table[1], table[2]) < 0.05
            agree += (low > 0 or high < 0) == significant
            total += 1
    assert agree / total >= 0.97


def test_known_values() -> None:
    """No flips: the interval straddles 0; all flips one way in a large sample: it does not."""
    low, high = stats.paired_score_interval(10, 0, 0, 10)
    assert low < 0 < high and high == pytest.approx(-low)
    low, high = stats.paired_score_interval(20, 30, 0, 50)
    assert 0 < low < 0.3 < high < 0.45
    assert stats.wilson_cc(0, 10)[0] == 0.0 and stats.wilson_cc(10, 10)[1] == 1.0
    with pytest.raises(ValueError):
        stats.paired_score_interval(0, 0, 0, 0)


def test_fractional_values_keep_the_bootstrap() -> None:
    found = metrics.paired(Types.from_rows([(1, 0.5, 3), (0, 0.25, 4), (1, 1, 2)]), "a", "b", 1,
                           name="framing")
    assert found.interval == "bootstrap" and found.p_value is None
    assert found.difference.low < found.difference.value < found.difference.high
