"""The paired difference: its interval and its test are one procedure (they agree on every
small table), and the interval covers in every cell of a grid that includes one-way flips."""

from __future__ import annotations

from math import lgamma

import numpy as np
import pytest

from seqk import stats
from seqk.analysis import metrics
from seqk.stats import Types

# Cells (P(seq only), P(pass only)) with flips both ways and one way only (a zero), from
# rare to common flips; the rest of the probability is split between solved by both and by
# neither, which the procedure does not read (test_every_table_… checks that).
FLIP_RATES = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5]
GRID_N = [10, 15, 20, 25, 30, 40, 50, 75, 100]


def tables(n: int):
    for both in range(n + 1):
        for a_only in range(n + 1 - both):
            for b_only in range(n + 1 - both - a_only):
                yield both, a_only, b_only, n - both - a_only - b_only


def flip_probabilities(n: int, b: np.ndarray, c: np.ndarray, p_b: float, p_c: float) -> np.ndarray:
    """P(b flips to seq, c flips to pass) for a trinomial (seq only, pass only, rest) of n."""
    rest = n - b - c
    log = (lgamma(n + 1) - np.vectorize(lgamma)(b + 1) - np.vectorize(lgamma)(c + 1)
           - np.vectorize(lgamma)(rest + 1))
    for count, p in ((b, p_b), (c, p_c), (rest, 1 - p_b - p_c)):
        log = np.where(count > 0, -np.inf, log) if p == 0 else log + count * np.log(p)
    return np.exp(log)


@pytest.mark.slow  # every table of up to 25 tasks (~3 s of CPU)
def test_every_table_of_up_to_25_tasks_excludes_0_exactly_when_p_is_below_005() -> None:
    """All 23,750 tables with 1 to 25 tasks; the interval also holds the estimate and depends
    on the flips and n only (so the coverage below may enumerate flips alone)."""
    seen: dict[tuple[int, int, int], tuple[float, float, float]] = {}
    total = 0
    for n in range(1, 26):
        for table in tables(n):
            found = stats.paired_difference(*table)
            assert (found.low > 0 or found.high < 0) == (found.p_value < 0.05), (table, found)
            assert found.low <= found.estimate <= found.high
            key = (table[1], table[2], n)
            assert seen.setdefault(key, (found.low, found.high, found.p_value)) == (
                found.low, found.high, found.p_value)
            total += 1
    assert total == 23_750


@pytest.mark.parametrize("alpha", [0.01, 0.1, 0.2])
def test_the_interval_and_the_test_agree_at_other_levels(alpha: float) -> None:
    for n in range(1, 31):
        for b in range(n + 1):
            for c in range(n + 1 - b):
                found = stats.paired_difference(0, b, c, n - b - c, alpha=alpha)
                assert (found.low > 0 or found.high < 0) == (found.p_value < alpha), (b, c, n)


@pytest.mark.slow  # a coverage simulation in every cell (~2 s of CPU)
def test_95_percent_interval_covers_at_least_93_percent_in_every_cell() -> None:
    """Exact coverage, every (seq only, pass only) outcome weighted by its probability, for
    n from 10 to 100 and flip rates that include one way only (P(pass only) = 0): the cells
    where a conditional interval on the flips alone undercovers."""
    worst = 1.0
    for n in GRID_N:
        b, c = (np.array(x) for x in zip(*[(b, c) for b in range(n + 1) for c in range(n + 1 - b)],
                                         strict=True))
        found = [stats.paired_difference(0, int(x), int(y), n - int(x) - int(y)) for x, y in zip(b, c, strict=True)]
        low, high = np.array([f.low for f in found]), np.array([f.high for f in found])
        for p_b in FLIP_RATES:
            for p_c in FLIP_RATES:
                weight = flip_probabilities(n, b, c, p_b, p_c)
                assert weight.sum() == pytest.approx(1.0)
                covered = float(weight[(low <= p_b - p_c) & (p_b - p_c <= high)].sum())
                assert covered >= 0.93, (n, p_b, p_c, covered)
                worst = min(worst, covered)
    assert worst < 0.97  # the grid reaches cells where coverage is tight, not only easy ones


@pytest.mark.parametrize("both", range(11))
def test_four_flips_one_way_of_14_include_0_as_mcnemar_says(both: int) -> None:
    """The quickstart's case: 4 tasks solved only by seq@K, none only by pass@K, 14 shared.
    McNemar's exact p = 0.125 and the corrected score test's 0.134: the interval must include 0
    (the bootstrap's did not)."""
    rows = [(1, 1, both), (1, 0, 4), (0, 0, 10 - both)]
    found = metrics.paired(Types.from_rows([r for r in rows if r[2]]), "seq", "pass", 3, name="lift")
    assert found.p_value == pytest.approx(0.134, abs=0.001)
    assert found.interval == "score"
    assert found.difference.low <= 0 <= found.difference.high
    assert found.difference.value == pytest.approx(4 / 14)


def test_known_values() -> None:
    """No flips: the interval straddles 0 symmetrically; all flips one way in a large sample:
    it does not; 3 flips of 3 one way: p = 0.25 (the exact test's), and 0 stays inside."""
    found = stats.paired_difference(10, 0, 0, 10)
    assert found.low < 0 < found.high and found.high == pytest.approx(-found.low)
    assert found.p_value == 1.0 and found.estimate == 0.0 and found.n == 20
    found = stats.paired_difference(20, 30, 0, 50)
    assert 0 < found.low < 0.3 < found.high < 0.45 and found.p_value < 1e-6
    found = stats.paired_difference(0, 3, 0, 0)
    assert found.p_value == pytest.approx(0.248, abs=0.001) and found.low < 0
    assert stats.paired_difference(5, 0, 6, 3).estimate == pytest.approx(-6 / 14)
    assert "Tango" in found.method
    with pytest.raises(ValueError):
        stats.paired_difference(0, 0, 0, 0)
    with pytest.raises(ValueError):
        stats.paired_difference(1, 1, 1, 1, alpha=1.5)


def test_fractional_values_get_a_bootstrap_interval_and_its_p_value() -> None:
    found = metrics.paired(Types.from_rows([(1, 0.5, 3), (0, 0.25, 4), (1, 1, 2), (0, 0.5, 6)]), "a", "b", 1,
                           name="framing")
    assert found.interval == "bootstrap" and found.p_value is not None
    assert found.difference.low < found.difference.value < found.difference.high
    assert (found.difference.low > 0 or found.difference.high < 0) == (found.p_value < 0.05)
    few = metrics.paired(Types.from_rows([(1, 0.5, 3), (0, 0.25, 4)]), "a", "b", 1, name="framing")
    assert few.difference.too_few_tasks and few.difference.low is None and few.p_value is None


@pytest.mark.parametrize("seed", range(6))
def test_the_bootstrap_interval_excludes_0_exactly_when_its_p_value_is_below_alpha(seed: int) -> None:
    """On many sets of replicates, including ties at 0, masses on one side and tiny counts."""
    rng = np.random.default_rng(seed)
    for _ in range(400):
        b = int(rng.choice([40, 41, 57, 199, 400, 2000]))
        shift = rng.normal(0, 2)
        replicates = np.round(rng.normal(shift, 1, b), int(rng.integers(0, 3)))
        for alpha in (0.01, 0.05, 0.1):
            found = stats.percentile_test(replicates, alpha)
            if found is None:
                assert b < 2 / alpha
                continue
            low, high, p = found
            assert low <= high and 0 < p <= 1
            assert (low > 0 or high < 0) == (p < alpha), (b, alpha, low, high, p)
    assert stats.percentile_test(np.ones(39), 0.05) is None


def test_benjamini_hochberg_q_values() -> None:
    # Benjamini & Hochberg (1995)'s example, m = 15: the four smallest are declared at q = 0.05
    p = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262,
         0.5719, 0.6528, 0.7590, 1.000]
    q = stats.benjamini_hochberg(p)
    assert sum(v < 0.05 for v in q) == 4
    assert q[0] == pytest.approx(0.0015) and q[3] == pytest.approx(0.0095 * 15 / 4)
    assert all(a <= b for a, b in zip(q, q[1:], strict=False))  # in the order of p
    assert stats.benjamini_hochberg([0.03, None, 0.01]) == [pytest.approx(0.03), None, pytest.approx(0.02)]


@pytest.mark.slow  # a simulation of the band's coverage (~3 s of CPU)
def test_the_max_t_band_is_simultaneous() -> None:
    """R = 12 figures with correlated estimates: the band covers all 12 true values at once in about
    95% of simulated data sets, where 95% pointwise intervals do far less often."""
    rng = np.random.default_rng(4)
    r, n, worlds = 12, 200, 300
    mix = np.linalg.cholesky(0.5 * np.eye(r) + 0.5)
    covered = pointwise = 0
    for _ in range(worlds):
        data = rng.normal(size=(n, r)) @ mix.T
        points = data.mean(axis=0)
        rows = rng.integers(0, n, size=(1000, n))
        replicates = data[rows].mean(axis=1)
        band = stats.max_t_band(points, replicates)
        assert band is not None
        covered += bool(np.all((band.low <= 0) & (band.high >= 0)))
        low, high = np.percentile(replicates, [2.5, 97.5], axis=0)
        pointwise += bool(np.all((low <= 0) & (high >= 0)))
    assert covered / worlds >= 0.91 and pointwise / worlds < covered / worlds - 0.1
