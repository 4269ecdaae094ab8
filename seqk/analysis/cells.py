"""The width x depth frontier of a run as bootstrap-ready cells (seqk.analysis.budget.Frontier):
each cell's value and expected spend per task as functions of per-task feature means, estimated
as sql/views.sql frontier_tasks_of does (docs/frontier.md).

seq@k, width 1, depth d: the run's seq@d, the mean over tasks of their chains' Efron values on
the run's Kaplan-Meier curve (at-risk and event counts per attempt are features, so every
resample re-estimates the hazards); spend: the mean over tasks of their chains' spend through d,
a censored chain's continued on the run's curve, which averages to sum_{j<=d} S(j - 1) x the mean
spend of attempt j over the chains with a valid attempt j. Width w >= 2 (runs with chains):
Horvitz-Thompson over w-subsets of a task's chains with inverse-probability-of-censoring weights,
1 - C(m, w) / C(n_i, w) / G(d)^w, G the censoring survival of the row's chains (its at-risk and
censored counts are features, re-estimated per resample); spend w x width 1's.
pass@k: resample until success, w chains of at most d samples each stopping at the first success
(w x d <= k): value 1 - C(n - c, w d) / C(n, w d); spend w x s x sum_{j<d} C(n - c, j) / C(n, j),
s the task's mean spend per valid sample. Depth 1 is pass@w, which never stops.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from seqk.analysis.budget import Cell, Frontier
from seqk.analysis.draws import same_rows
from seqk.analysis.survival import (
    RunChains,
    censoring_survival,
    chain_risk,
    chen_curve,
    curve,
    kaplan_meier,
    pass_counts,
    redistributed,
)


def seq_frontier(run: RunChains, policy: str, unit: str) -> Frontier:
    """A seq@k run's cells: depths 1..K, widths 1..chains."""
    k = run.k
    curve_features = curve(run, policy).features  # R, E, Q, M
    risk_c, events_c, censored = chain_risk(run, "censored")  # spend is the policy's, however errors read
    if policy != "censored":
        _, _, censored = chain_risk(run, policy)
    cost, _ = run.spend(unit)
    at_risk_spend = risk_c * cost[:, :k]
    last = np.where(run.events["censored"] > 0, run.events["censored"],
                    np.where(run.censored["censored"] >= 0, run.censored["censored"], k))
    observed = np.cumsum(cost[:, :k] * (np.arange(1, k + 1)[None, :] <= last[:, None]), axis=1)
    n_chains = run.per_task(np.ones(len(run.task_of)))
    cut = run.censored["censored"]
    cut_at = run.per_task((cut[:, None] == np.arange(k)[None, :]).astype(float)) / n_chains[:, None]
    # [R E Q M] CN [RC EC SP] O MC: each K wide
    parts = [curve_features, run.per_task(censored), run.per_task(risk_c), run.per_task(events_c),
             run.per_task(at_risk_spend), run.per_task(observed) / n_chains[:, None], cut_at]
    everywhere = np.ones(run.n_tasks, dtype=bool)
    cells = [Cell(1, d, everywhere) for d in range(1, k + 1)]
    if run.chains > 1:
        # chains known unsolved through d: no success by d, and not censored before d
        d_index = np.arange(1, k + 1)[None, :]
        event, cut_v = run.events[policy][:, None], run.censored[policy][:, None]
        unsolved = run.per_task((((event == 0) | (event > d_index)) & ((cut_v < 0) | (cut_v >= d_index))
                                 ).astype(float))
        for w in range(2, run.chains + 1):
            enough = n_chains >= w
            parts.append(np.where(enough[:, None], _all_of(n_chains, unsolved, w), 0.0))
            cells += [Cell(w, d, enough) for d in range(1, k + 1)]
    features = np.hstack(parts)
    pooled = np.zeros(features.shape[1], dtype=bool)
    pooled[np.r_[0:2 * k, 4 * k:8 * k]] = True  # R E, CN, RC EC SP: the run's curves and mean spends
    return Frontier(run.run_id, run.keys, features, cells, partial(_seq_cells, k, run.chains), pooled)


def _seq_cells(k: int, chains: int, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every cell's value and spend from the means of seq_frontier's features: width 1, the mean
    Efron value and spend; width w, Horvitz-Thompson, 1 - mean C(m, w)/C(n, w) / G(d)^w."""
    value = redistributed(m[:, :k], m[:, k:2 * k], m[:, 2 * k:3 * k], m[:, 3 * k:4 * k])
    spend = _efron_spend(k, m)
    values, spends = [value], [spend]
    if chains > 1:
        g = censoring_survival(m[:, :k], m[:, 4 * k:5 * k])
        for w in range(2, chains + 1):
            ratio = m[:, (8 + w) * k:(9 + w) * k]
            with np.errstate(divide="ignore", invalid="ignore"):
                values.append(1.0 - ratio / g ** w)
            spends.append(w * spend)
    return np.hstack(values), np.hstack(spends)


def _efron_spend(k: int, m: np.ndarray) -> np.ndarray:
    """One chain's expected spend through d = 1..K: the mean over tasks of their chains' spend
    through d, a censored chain's continued by the run's curve (Efron's redistribution of spend):
    mean O_d + sum_{c<d} mean MC_c (A(d) - A(c)) / S(c), A(j) = sum_{i<=j} S(i - 1) SP_i / RC_i."""
    risk, events, spent = m[:, 5 * k:6 * k], m[:, 6 * k:7 * k], m[:, 7 * k:8 * k]
    survival = kaplan_meier(risk, events)
    before = np.hstack([np.ones((len(m), 1)), survival[:, :-1]])  # S(j - 1) = S(c), c = j - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(risk > 0, spent / np.where(risk > 0, risk, 1), 0.0)
        through = np.cumsum(before * mean, axis=1)  # A(1..K)
        at_cut = np.hstack([np.zeros((len(m), 1)), through[:, :-1]])  # A(c), c = 0..K-1
        share = np.where(before > 0, m[:, 9 * k:10 * k] / np.where(before > 0, before, 1), 0.0)  # MC_c / S(c)
    # sum_{c<d} MC_c (A(d) - A(c)) / S(c) = A(d) sum_{c<d} MC_c/S(c) - sum_{c<d} MC_c A(c)/S(c)
    return m[:, 8 * k:9 * k] + through * np.cumsum(share, axis=1) - np.cumsum(share * at_cut, axis=1)


def pass_frontier(run: RunChains, policy: str, unit: str, *, stopping: bool) -> Frontier:
    """A pass@k run's cells: resample until success (every w x d <= k) when `stopping`, else
    pass@m alone (depth 1, m = 1..k)."""
    k = run.k
    n, c = pass_counts(run, policy)
    valid_n, valid_c = run.n_valid, run.n_success
    _, valid_spend = run.spend(unit)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_sample = np.where(valid_n > 0, valid_spend / np.where(valid_n > 0, valid_n, 1), np.nan)
    values = chen_curve(n, c, k)
    # all_fail(valid_n, valid_c, j) for j = 0..k-1: 1, then 1 - chen
    samples = np.cumsum(np.hstack([np.ones((len(valid_n), 1)), 1.0 - chen_curve(valid_n, valid_c, k - 1)]), axis=1)
    spends = per_sample[:, None] * samples
    features = np.nan_to_num(np.hstack([values, spends]))
    shapes = [(w, d) for w in range(1, k + 1) for d in range(1, k // w + 1) if stopping or d == 1]
    cells = [Cell(w, d, ~np.isnan(values[:, w * d - 1]) & ~np.isnan(spends[:, d - 1])) for w, d in shapes]
    value_columns = np.array([w * d - 1 for w, d in shapes])
    spend_columns = np.array([k + d - 1 for _, d in shapes])
    widths = np.array([w for w, _ in shapes], dtype=float)

    def evaluate(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return m[:, value_columns], widths * m[:, spend_columns]

    return Frontier(run.run_id, run.keys, features, cells, evaluate)


def depth_one(frontier: Frontier) -> Frontier:
    """The depth-1 cells of a frontier (of a pass@k run's resample-until-success cells: pass@m,
    m = 1..k, as pass_frontier(stopping=False) gives them), on the same features."""
    keep = np.array([i for i, c in enumerate(frontier.cells) if c.depth == 1], dtype=int)

    def evaluate(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values, spends = frontier.evaluate(m)
        return values[:, keep], spends[:, keep]

    return replace(frontier, cells=[frontier.cells[i] for i in keep], evaluate=evaluate)


def typed(frontier: Frontier) -> Frontier:
    """The frontier with its tasks grouped into types: tasks with the same features and the same
    cells defined share one row (`rows_of` maps each task to it, `counts` says how many share it).
    The comparisons then sum over types, not tasks (budget.py): the same resamples (their types
    are the same rows), the same figures up to the last bits of sums (a mean over types adds
    count x row instead of each task's row), in a fraction of the work per task."""
    defined = np.column_stack([c.defined for c in frontier.cells]).astype(float)
    rows, rows_of, counts = same_rows(np.hstack([frontier.features, defined]))
    width = frontier.features.shape[1]
    cells = [Cell(c.width, c.depth, rows[:, width + i] > 0) for i, c in enumerate(frontier.cells)]
    return replace(frontier, features=np.ascontiguousarray(rows[:, :width]), cells=cells, rows_of=rows_of,
                   counts=counts)


def _all_of(n: np.ndarray, unsolved: np.ndarray, w: int) -> np.ndarray:
    """C(m, w) / C(n, w) per task and depth: the share of w-subsets of its chains all known
    unsolved through d."""
    ratio = np.ones(unsolved.shape)
    for i in range(w):
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio *= np.clip(unsolved - i, 0, None) / np.where(n - i > 0, n - i, 1)[:, None]
    return ratio
