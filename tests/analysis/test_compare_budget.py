"""`seqk compare` at equal spend (seqk/analysis/compare_budget.py): the cross-over read off the band,
and a world with a known truth where the two runs are the same model with the same feedback mode
(bench/null_world.py: every attempt an independent draw with its task's chance, 10% of requests
failing for good at random), so the true difference is 0 at every budget: the share of worlds in
which the comparison claims a finding (a budget where the band excludes 0, either way) or an
established cross-over stays at its 5% level. The figures against an independent recomputation
are in tests/analysis/test_compare.py (the three questions of docs/compare.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from seqk.analysis.budget import SpendRow
from seqk.analysis.compare_budget import compare_runs, crossover_of
from seqk.stats import Estimate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import null_world as nw  # noqa: E402


def _row(budget: float, value: float, band: tuple[float, float]) -> SpendRow:
    return SpendRow(budget, 60, difference=Estimate(value, band[0], band[1], 60), p_value=0.5, band=band)


def test_the_crossover_lies_where_the_band_lets_the_order_change():
    assert crossover_of([_row(1, 0.1, (0.05, 0.2)), _row(2, 0.2, (0.1, 0.3))]) is None
    settled = crossover_of([_row(1, -0.3, (-0.5, -0.1)), _row(2, -0.1, (-0.3, 0.1)), _row(3, 0.05, (-0.1, 0.2)),
                            _row(4, 0.3, (0.1, 0.5))])
    assert settled is not None
    assert (settled.budget, settled.before, settled.low, settled.high, settled.established) == (3, "b", 2, 4, True)
    # the band never puts a ahead: the order may not change at all
    loose = crossover_of([_row(1, -0.3, (-0.5, -0.1)), _row(2, 0.1, (-0.2, 0.4))])
    assert loose is not None and (loose.budget, loose.low, loose.high, loose.established) == (2, 2, None, False)
    # a tie at the first budget (both runs' first attempts identical) does not decide who leads
    tied = crossover_of([_row(1, 0.0, (0.0, 0.0)), _row(2, -0.2, (-0.4, 0.1)), _row(3, 0.1, (-0.1, 0.3))])
    assert tied is not None and (tied.budget, tied.before, tied.low, tied.established) == (3, "b", 1, False)


def test_errors_give_each_budget_its_range_and_runs_without_them_none():
    world = nw.World(n_tasks=60)
    runs = nw.chains_of(nw.draw(world, np.random.default_rng(3)), world)
    found = compare_runs(runs["seq"], runs["none"], "tokens", n_boot=200)
    assert found.rows and len(found.if_failures) == len(found.if_successes) == len(found.rows)
    assert all(x is not None for x in found.if_failures + found.if_successes)
    assert found.if_failures != found.if_successes  # 10% of requests failed: the two readings differ
    clean = nw.chains_of(nw.draw(nw.World(n_tasks=60, error_rate=0.0), np.random.default_rng(3)), world)
    assert compare_runs(clean["seq"], clean["none"], "tokens", n_boot=200).if_failures == []


@pytest.mark.slow
def test_two_runs_of_one_model_with_one_feedback_claim_findings_at_their_level():
    world = nw.World(n_tasks=60)
    rng = np.random.default_rng(41)
    replicates, findings, established, compared = 200, 0, 0, 0
    for r in range(replicates):
        runs = nw.chains_of(nw.draw(world, rng), world, r)
        found = compare_runs(runs["seq"], runs["none"], "tokens")  # the same policy: feedback does nothing
        compared += bool(found.rows)
        findings += bool(found.a_better or found.b_better)
        established += bool(found.crossover is not None and found.crossover.established)
    assert compared == replicates
    # two-sided at 5% over all budgets at once; 200 worlds: binomial sd 1.5%, so 9% is 2.6 sd above
    # the level (measured: 6.0% over 600 worlds, docs/compare.md)
    assert findings / replicates <= 0.09, findings
    assert established / replicates <= 0.05, established
