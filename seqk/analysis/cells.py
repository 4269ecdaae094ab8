"""The width x depth frontier of a run as bootstrap-ready cells (seqk.analysis.budget.Frontier):
each cell's value and expected spend per task as functions of per-task feature means, estimated
as sql/views.sql frontier_tasks_of does (docs/frontier.md).

seq@k, one chain per task: width 1, depth d; value the run's Kaplan-Meier seq@d (at-risk and event
counts per attempt are the features, so every resample re-estimates the hazards); spend
sum_{j<=d} S(j - 1) x the mean spend of attempt j over the chains with a valid attempt j.
seq@k with chains: width 1 is each task's own curve (and spend) averaged over tasks; width w >= 2
is Horvitz-Thompson over w-subsets of a task's chains with inverse-probability-of-censoring
weights, 1 - C(m, w) / C(n_i, w) / G(d)^w, G the censoring survival of the row's chains (its
at-risk and censored counts are features, re-estimated per resample); spend w x width 1's.
pass@k: resample until success, w chains of at most d samples each stopping at the first success
(w x d <= k): value 1 - C(n - c, w d) / C(n, w d); spend w x s x sum_{j<d} C(n - c, j) / C(n, j),
s the task's mean spend per valid sample. Depth 1 is pass@w, which never stops.
"""

from __future__ import annotations

import numpy as np

from seqk.analysis.budget import Cell, Frontier
from seqk.analysis.survival import (
    RunChains,
    all_fail,
    censoring_survival,
    chain_risk,
    chen,
    kaplan_meier,
    pass_counts,
    task_kaplan_meier,
)


def seq_frontier(run: RunChains, policy: str, unit: str) -> Frontier:
    """A seq@k run's cells: depths 1..K, widths 1..chains."""
    k = run.k
    at_risk, events, censored = chain_risk(run, policy)
    risk_c, events_c, _ = chain_risk(run, "censored")  # spend is the policy's, however errors read
    cost, _ = run.spend(unit)
    spent = risk_c * cost[:, :k]
    everywhere = np.ones(run.n_tasks, dtype=bool)
    if run.chains == 1:
        features = np.hstack([run.per_task(x) for x in (at_risk, events, risk_c, events_c, spent)])
        cells = [Cell(1, d, _km_value(k, d), _km_spend(k, d), everywhere) for d in range(1, k + 1)]
        return Frontier(run.run_id, run.keys, features, cells)
    values = 1.0 - task_kaplan_meier(run.per_task(at_risk), run.per_task(events))
    spends = _task_spend(run, risk_c, events_c, spent)
    n_chains = run.per_task(np.ones(len(run.task_of)))
    # chains known unsolved through d: no success by d, and not censored before d
    d_index = np.arange(1, k + 1)[None, :]
    event, cut = run.events[policy][:, None], run.censored[policy][:, None]
    unsolved = run.per_task((((event == 0) | (event > d_index)) & ((cut < 0) | (cut >= d_index))).astype(float))
    parts = [values, spends, run.per_task(at_risk), run.per_task(censored)]
    cells = [Cell(1, d, _column(d - 1), _column(k + d - 1), everywhere) for d in range(1, k + 1)]
    for w in range(2, run.chains + 1):
        enough = n_chains >= w
        ratio = np.where(enough[:, None], _all_of(n_chains, unsolved, w), 0.0)
        offset = sum(p.shape[1] for p in parts)
        parts.append(ratio)
        cells += [Cell(w, d, _ht_value(k, offset, w, d), _scaled(k + d - 1, w), enough)
                  for d in range(1, k + 1)]
    return Frontier(run.run_id, run.keys, np.hstack(parts), cells)


def pass_frontier(run: RunChains, policy: str, unit: str, *, stopping: bool) -> Frontier:
    """A pass@k run's cells: resample until success (every w x d <= k) when `stopping`, else
    pass@m alone (depth 1, m = 1..k)."""
    k = run.k
    n, c = pass_counts(run, policy)
    valid_n, valid_c = run.n_valid, run.n_success
    _, valid_spend = run.spend(unit)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_sample = np.where(valid_n > 0, valid_spend / np.where(valid_n > 0, valid_n, 1), np.nan)
    values = np.column_stack([chen(n, c, m) for m in range(1, k + 1)])
    samples = np.cumsum(np.column_stack([all_fail(valid_n, valid_c, j) for j in range(k)]), axis=1)
    spends = per_sample[:, None] * samples
    features = np.nan_to_num(np.hstack([values, spends]))
    shapes = [(w, d) for w in range(1, k + 1) for d in range(1, k // w + 1) if stopping or d == 1]
    cells = [Cell(w, d, _column(w * d - 1), _scaled(k + d - 1, w),
                  ~np.isnan(values[:, w * d - 1]) & ~np.isnan(spends[:, d - 1])) for w, d in shapes]
    return Frontier(run.run_id, run.keys, features, cells)


def _column(i: int):
    return lambda m: m[:, i]


def _scaled(i: int, w: int):
    return lambda m: w * m[:, i]


def _km_value(k: int, d: int):
    """1 - S(d) from the means of [at risk, events, ...] (the value policy)."""
    return lambda m: 1.0 - kaplan_meier(m[:, :d], m[:, k:k + d])[:, -1]


def _km_spend(k: int, d: int):
    """sum_{j<=d} S(j - 1) x spend_j / at_risk_j over the censored policy's counts."""

    def spend(m: np.ndarray) -> np.ndarray:
        risk, events, spent = m[:, 2 * k:2 * k + d], m[:, 3 * k:3 * k + d], m[:, 4 * k:4 * k + d]
        before = np.hstack([np.ones((len(m), 1)), kaplan_meier(risk, events)[:, :-1]])
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(risk > 0, spent / np.where(risk > 0, risk, 1), 0.0)
        return (before * mean).sum(axis=1)

    return spend


def _ht_value(k: int, offset: int, w: int, d: int):
    """1 - mean C(m, w)/C(n, w) / G(d)^w, G from the means of the at-risk and censored counts."""

    def value(m: np.ndarray) -> np.ndarray:
        g = censoring_survival(m[:, 2 * k:2 * k + d], m[:, 3 * k:3 * k + d])[:, -1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1.0 - m[:, offset + d - 1] / g ** w

    return value


def _all_of(n: np.ndarray, unsolved: np.ndarray, w: int) -> np.ndarray:
    """C(m, w) / C(n, w) per task and depth: the share of w-subsets of its chains all known
    unsolved through d."""
    ratio = np.ones(unsolved.shape)
    for i in range(w):
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio *= np.clip(unsolved - i, 0, None) / np.where(n - i > 0, n - i, 1)[:, None]
    return ratio


def _task_spend(run: RunChains, risk: np.ndarray, events: np.ndarray, spent: np.ndarray) -> np.ndarray:
    """One chain's expected spend through d per task (its own curve, the run's mean spend of an
    attempt where none of its chains is at risk)."""
    risk_t, spent_t = run.per_task(risk), run.per_task(spent)
    survival = task_kaplan_meier(risk_t, run.per_task(events))
    before = np.hstack([np.ones((run.n_tasks, 1)), survival[:, :-1]])
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = np.where(risk_t.sum(axis=0) > 0, spent_t.sum(axis=0) / np.where(
            risk_t.sum(axis=0) > 0, risk_t.sum(axis=0), 1), 0.0)
        mean = np.where(risk_t > 0, spent_t / np.where(risk_t > 0, risk_t, 1), pooled[None, :])
    return np.cumsum(before * mean, axis=1)
