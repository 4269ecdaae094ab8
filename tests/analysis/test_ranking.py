"""The procedures of `report --compare --by`, in worlds with a known truth: Benjamini–Hochberg
q-values (against scipy's), how often a table of pairs claims a finding when no run differs, and
how often a bootstrap rank interval holds a run's true rank or names a winner that is not one."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from seqk import stats
from seqk.analysis.ranking import rank_intervals, ranks_of
from seqk.stats import Types

REPLICATES = 400


def test_q_values_are_scipys_benjamini_hochberg_and_keep_none_out_of_m():
    rng = np.random.default_rng(3)
    for _ in range(300):
        p = rng.uniform(size=int(rng.integers(1, 40))) ** 2
        p[rng.uniform(size=len(p)) < 0.2] = p[0]  # ties
        assert np.allclose(stats.benjamini_hochberg(list(p)), false_discovery_control(p))
    assert stats.benjamini_hochberg([0.01, None, 0.04]) == [pytest.approx(0.02), None, pytest.approx(0.04)]
    assert stats.benjamini_hochberg([]) == []
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        stats.benjamini_hochberg([1.5])


def _world(rng: np.random.Generator, rates: list[float], n: int) -> np.ndarray:
    """0/1 outcomes of each run on n tasks sharing a difficulty: a task's draw moves every run."""
    difficulty = rng.uniform(size=n)
    shift = rng.normal(scale=0.15, size=(len(rates), n))
    return (difficulty[None, :] < np.clip(np.array(rates)[:, None] + shift, 0, 1)).astype(float)


def _types(outcomes: np.ndarray) -> Types:
    return Types.from_rows([[*column, 1] for column in outcomes.T])


def _table_q(outcomes: np.ndarray) -> list[float | None]:
    p_values = []
    for i, j in combinations(range(len(outcomes)), 2):
        a, b = outcomes[i], outcomes[j]
        both, a_only, b_only = int((a * b).sum()), int((a * (1 - b)).sum()), int(((1 - a) * b).sum())
        p_values.append(stats.paired_difference(both, a_only, b_only, len(a) - both - a_only - b_only).p_value)
    return stats.benjamini_hochberg(p_values)


def test_with_no_difference_a_table_of_six_pairs_claims_one_in_at_most_5_percent_of_worlds():
    rng = np.random.default_rng(11)
    claims = sum(any(q < 0.05 for q in _table_q(_world(rng, [0.5] * 4, 80)) if q is not None)
                 for _ in range(REPLICATES))
    # the nominal rate is 5%; a binomial 95% upper bound over 400 worlds is ~2.2 points above it
    assert claims / REPLICATES <= 0.072, claims


def test_real_differences_are_found_and_ranked_where_the_truth_is_known():
    rng = np.random.default_rng(5)
    truth = np.array([1, 2, 3])  # rates 0.8, 0.5, 0.2
    covered = found = exact = close = 0
    for r in range(REPLICATES // 4):
        outcomes = _world(rng, [0.8, 0.5, 0.2], 100)
        q = _table_q(outcomes)
        found += all(x is not None and x < 0.05 for x in q)
        ranks = sorted(rank_intervals(_types(outcomes), name=f"known:{r}", n_boot=500), key=lambda x: x.column)
        covered += all(x.low <= t <= x.high for x, t in zip(ranks, truth, strict=True))
        exact += all(x.low == x.high for x in ranks)
        # runs 6 points apart: the intervals widen to hold the true ranks, not to name wrong ones
        near = rank_intervals(_types(_world(rng, [0.56, 0.5, 0.44], 100)), name=f"near:{r}", n_boot=500)
        close += all(x.low <= t <= x.high for x, t in zip(sorted(near, key=lambda x: x.column), truth, strict=True))
    assert found / (REPLICATES // 4) >= 0.9
    assert covered / (REPLICATES // 4) >= 0.95 and exact / (REPLICATES // 4) >= 0.9
    assert close / (REPLICATES // 4) >= 0.95


def test_with_no_difference_a_rank_interval_rarely_names_a_clear_winner():
    rng = np.random.default_rng(8)
    named = 0
    for r in range(REPLICATES // 4):
        ranks = rank_intervals(_types(_world(rng, [0.5] * 3, 80)), name=f"null:{r}", n_boot=500)
        named += any(x.low == x.high == 1 for x in ranks)
    assert named / (REPLICATES // 4) <= 0.05, named


def test_ranks_share_the_better_place_on_a_tie_and_intervals_are_reproducible():
    assert ranks_of(np.array([[0.5, 0.7, 0.5]])).tolist() == [[2, 1, 2]]
    types = Types.from_rows([[1, 0, 1, 3], [0, 1, 1, 2], [0, 0, 0, 5]])
    first, again = (rank_intervals(types, name="same", n_boot=300) for _ in range(2))
    assert first == again
    assert [r.column for r in first] == [2, 0, 1] and [r.rank for r in first] == [1, 2, 3]
    assert rank_intervals(Types.from_rows([]), name="empty") == []
