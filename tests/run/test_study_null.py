"""An equal-budget study in a world with a known truth (bench/null_world.py: each task its own
chance, 4 chains x 3 attempts against pass@12, errors at random): each arm's cell chosen on the
pilot by the study's own rule (seqk.run.study_record.pick_cell, over the frontier's cells; the
pass@k partner's cells resample until success, so it stops at a success as seq@k does), the other
tasks' values by the study's own seqk.run.study_values, the sequence by seqk.anytime's rule, a look
every window. Where feedback does nothing the study decides "seq better" in at most alpha of the
worlds, at a budget of 2.5 samples' price and of 4; where feedback helps it does decide so."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from seqk.analysis import budget, cells
from seqk.anytime import stopping_looks
from seqk.run.study_record import pick_cell
from seqk.run.study_values import arm_values

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import null_world as nw  # noqa: E402

pytestmark = pytest.mark.slow
WINDOW = 50


def _pilot_cells(side: budget.Frontier, rows: np.ndarray) -> list[dict]:
    """The frontier's cells on the pilot tasks, as sql/studies.sql study_cells gives them."""
    return [{"width": f.width, "depth": f.depth, "value": f.value, "n_tasks": f.n_tasks,
             "cost_usd_per_task": f.spend} for f in budget._figures(side, rows)]


def decisions(world: nw.World, worlds: int, samples_per_task: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Each world's decision code (1 seq better, -1 partner better, 0 undecided) and the true
    difference of the two cells its pilot chose."""
    rng = np.random.default_rng(seed)
    per_task = samples_per_task * nw.MEAN_TOKENS * nw.PRICE
    seq_spec = SimpleNamespace(seq=True, chains=world.chains, k=world.k)
    pass_spec = SimpleNamespace(seq=False, chains=1, k=world.pass_k)
    lows, highs, truths = [], [], []
    for r in range(worlds):
        found = nw.draw(world, rng)
        runs = nw.chains_of(found, world, r)
        order = rng.permutation(world.n_tasks)
        pilot = np.zeros(world.n_tasks, dtype=bool)
        pilot[order[:WINDOW]] = True
        seq_cell = pick_cell(_pilot_cells(cells.seq_frontier(runs["seq"], "censored", "US$"), pilot), per_task)
        pass_cell = pick_cell(_pilot_cells(cells.pass_frontier(runs["pass"], "censored", "US$", stopping=True),
                                           pilot), per_task)
        assert seq_cell is not None and pass_cell is not None
        rest = [int(t) + 1 for t in order[WINDOW:]]
        seq = arm_values(seq_spec, (seq_cell["width"], seq_cell["depth"]), nw.study_rows(found, runs, "seq"), rest)
        pas = arm_values(pass_spec, (pass_cell["width"], pass_cell["depth"]), nw.study_rows(found, runs, "pass"), rest)
        lows.append([seq[t].low - pas[t].high for t in rest])
        highs.append([seq[t].high - pas[t].low for t in rest])
        truths.append(nw.truth_cell(found.p, seq_cell["width"], seq_cell["depth"], boost=world.boost)[0]
                      - nw.truth_cell(found.p, pass_cell["width"], pass_cell["depth"])[0])
    n = world.n_tasks - WINDOW
    code, _ = stopping_looks(np.array(lows), np.array(highs), looks=range(WINDOW, n + 1, WINDOW))
    return code, np.array(truths)


@pytest.mark.parametrize(("error_rate", "samples"), [(0.01, 2.5), (0.01, 4.0), (0.1, 2.5)])
def test_where_feedback_does_nothing_an_equal_budget_study_rarely_decides_seq_better(error_rate, samples):
    code, truth = decisions(nw.World(n_tasks=600, error_rate=error_rate), 300, samples, seed=int(samples * 10))
    # 300 worlds: a share of 5% has a binomial sd of 1.3%
    assert np.mean(code == 1) <= 0.05, np.mean(code == 1)
    # the chosen cells' true difference: the partner can buy every seq@k cell for no more, so it is
    # at most 0 but where the pilot chose the partner's cell badly
    assert np.mean(truth) <= 0 and np.mean(truth > 0) <= 0.02


def test_where_feedback_helps_an_equal_budget_study_decides_seq_better():
    code, truth = decisions(nw.World(n_tasks=600, error_rate=0.01, boost=0.3), 60, 2.5, seed=5)
    assert np.all(truth > 0.15)
    assert np.mean(code == 1) >= 0.9
