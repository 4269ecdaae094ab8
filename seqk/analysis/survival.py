"""seq@t and pass@t as estimates from the per-chain substrate (sql/views.sql chain_outcomes_of),
in a form the task bootstrap can re-estimate.

A seq@k chain is a survival time in attempts: its first success, or, when an error (or a run
still going) stops it after attempt c < K, censored at c. seq@d = P(a chain solves the task within
d attempts) is estimated by Kaplan-Meier (1958) over the run's chains: h_j = chains solved at j /
chains with a valid attempt j, seq@d = 1 - prod_{j<=d} (1 - h_j). A chain's own value is Efron's
(1967) redistribution to the right: 1 solved by d, 0 known unsolved through d, 1 - S(d)/S(c)
censored at c < d; a task's value is the mean over its chains, and the run's estimate the mean over
tasks, which is the Kaplan-Meier estimate exactly when every task has as many chains
(self-consistency). A run with `chains:` pools its chains for the curve like any other: a task's
own curve over a few chains, continued with the run's hazard where its risk set empties, is
biased (-0.005 at seq@3 with 4 chains and 10% errors; docs/metrics-and-statistics.md). pass@t is
Chen et al.'s (2021) unbiased estimator over a task's valid samples (errored samples only reduce
n: samples are exchangeable).

Every figure here is a function of means of per-task features (`Curve.at` gives a `Figure`): the
Kaplan-Meier estimate is a ratio of means of at-risk and event counts, so a task bootstrap that
resamples those rows re-estimates the hazards in every resample, as it must. The SQL views compute
the same point estimates (tests/analysis/test_survival.py holds them equal).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

import numpy as np

from seqk.analysis.memo import digest
from seqk.store import queries

POLICIES = ("censored", "failures", "successes")
"""How errored attempts are read (chain_facts_of): as censoring (the default), as failures (a
chain that stopped on one is unsolved through K), as successes at their index."""


def value_policy(errors_as_failures: bool) -> str:
    """The policy the figures' values use."""
    return "failures" if errors_as_failures else "censored"


@dataclass(frozen=True)
class RunChains:
    """One run's rows of chain_outcomes_of, as arrays: per task (`task_index`, `keys`) and per
    chain (everything else; `task_of` gives a chain's task, chains of a task are consecutive)."""

    run_id: str
    metric: str
    k: int
    chains: int
    priced: bool
    """Some call of the run was priced."""
    task_index: np.ndarray
    keys: np.ndarray
    """Per task: 'task_index/content_hash', what pairs tasks across runs (a numpy string array:
    intersected in C)."""
    task_of: np.ndarray
    n_valid: np.ndarray
    n_success: np.ndarray
    n_error: np.ndarray
    first_success: np.ndarray
    """0 when none."""
    valid_prefix: np.ndarray
    settled_prefix: np.ndarray
    events: dict[str, np.ndarray]
    """Per policy: the attempt of the chain's first success, 0 when none (seq@k)."""
    censored: dict[str, np.ndarray]
    """Per policy: its censoring point, -1 when not censored (seq@k)."""
    cost: np.ndarray
    """(chains, K): spend in US$ of each attempt of the valid prefix (0 beyond, or unpriced)."""
    tokens: np.ndarray
    valid_cost: np.ndarray
    """Per chain: spend over every valid slot (a pass@k task's samples)."""
    valid_tokens: np.ndarray
    curves: dict[str, Curve] = field(default_factory=dict, compare=False, repr=False)
    """The run's curve under each policy, computed once (`curve`)."""

    @property
    def n_tasks(self) -> int:
        """Tasks with at least one attempt."""
        return len(self.task_index)

    @property
    def is_seq(self) -> bool:
        """A seq@k run."""
        return self.metric == "seq@k"

    @cached_property
    def fingerprint(self) -> bytes:
        """A hash of every row the run's figures are computed from (what seqk.analysis.memo keys
        a remembered figure by)."""
        return digest(*(getattr(self, f.name) for f in fields(self) if f.name != "curves"))

    @cached_property
    def starts(self) -> np.ndarray:
        """Each task's first chain row (chains of a task are consecutive)."""
        return np.flatnonzero(np.r_[True, self.task_of[1:] != self.task_of[:-1]])

    def per_task(self, per_chain: np.ndarray) -> np.ndarray:
        """Sum a per-chain array (chains first) over each task's chains."""
        if len(per_chain) == len(self.starts):  # one chain per task: each sum is its one term
            return per_chain.copy()
        return np.add.reduceat(per_chain, self.starts, axis=0)

    def spend(self, unit: str) -> tuple[np.ndarray, np.ndarray]:
        """(per attempt of the valid prefix, over every valid slot) in `unit` ('US$' or 'tokens')."""
        return (self.cost, self.valid_cost) if unit == "US$" else (self.tokens, self.valid_tokens)


def _int(column: Any, missing: int) -> np.ndarray:
    return np.asarray(_filled(column, missing), dtype=np.int64)


def _filled(column: Any, missing: float) -> np.ndarray:
    """An Arrow array (or chunked array) of numbers as a numpy array, `missing` where NULL: what
    `column.fill_null(missing).to_numpy()` gives, read off the validity bitmap instead, so that
    reading chains does not import pyarrow.compute (~50-80 ms of every `seqk compare`)."""
    array = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if not array.null_count:
        return np.asarray(array.to_numpy(zero_copy_only=False))
    values = np.frombuffer(array.buffers()[1], dtype=array.type.to_pandas_dtype())[array.offset:][:len(array)]
    return np.where(_valid(array), values, np.asarray(missing, dtype=values.dtype))


def _valid(array: Any) -> np.ndarray:
    """Which entries of an Arrow array are not NULL, from its validity bitmap."""
    bits = np.unpackbits(np.frombuffer(array.buffers()[0], dtype=np.uint8), bitorder="little")
    return bits[array.offset:][:len(array)].astype(bool)


def _lists(column: Any, k: int) -> np.ndarray:
    """An Arrow list column as a (rows, k) array, 0 where a list is short or an element NULL."""
    column = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    out = np.zeros((len(column), max(k, 1)))
    if len(column) == 0:
        return out
    # element j of list i is values[offsets[i] + j] (offsets into the values behind a slice too)
    offsets = np.asarray(column.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    lengths = np.diff(offsets)
    if column.null_count:  # a NULL list has no elements, whatever segment backs it
        lengths = np.where(_valid(column), lengths, 0)
    values = np.asarray(_filled(column.values, 0), dtype=float)
    if not column.null_count and int(lengths.max()) <= out.shape[1]:
        # every list's elements lie one after another in values[offsets[0]:offsets[-1]]
        flat = values[offsets[0]:offsets[-1]]
        if int(lengths.min()) == out.shape[1]:
            return flat.reshape(out.shape).copy()
        # a boolean mask fills row by row, each row's first `length` places: the lists' order
        out[np.arange(out.shape[1]) < lengths[:, None]] = flat
        return out
    rows = np.repeat(np.arange(len(column)), lengths)
    cols = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    keep = cols < out.shape[1]
    out[rows[keep], cols[keep]] = values[offsets[rows[keep]] + cols[keep]]
    return out


def read_chains(con: Any, run_ids: Sequence[str]) -> dict[str, RunChains]:
    """Every given run's chain_outcomes_of rows (sql/metrics.sql chain_rows), by run id; a run
    without attempts is absent."""
    table = queries.chain_rows(con, run_ids=list(run_ids))
    if table.num_rows == 0:
        return {}
    run_col = np.asarray(table.column("run_id").to_numpy(zero_copy_only=False))
    bounds = np.flatnonzero(np.r_[True, run_col[1:] != run_col[:-1], True])
    out = {}
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        part = table.slice(lo, hi - lo)
        k = int(part.column("k")[0].as_py())
        task_index = _int(part.column("task_index"), 0)
        hashes = part.column("content_hash").to_pylist()
        indices = task_index.tolist()  # Python ints: an f-string of a numpy scalar is slow
        starts = np.flatnonzero(np.r_[True, task_index[1:] != task_index[:-1]])
        task_of = np.cumsum(np.r_[False, task_index[1:] != task_index[:-1]])
        events = {p: _int(part.column("event_at" if p == "censored" else f"event_if_{p}"), 0)
                  for p in POLICIES}
        censored = {p: _int(part.column("censored_at" if p == "censored" else f"censored_if_{p}"), -1)
                    for p in POLICIES}
        out[str(run_col[lo])] = RunChains(
            run_id=str(run_col[lo]), metric=str(part.column("metric")[0].as_py()), k=k,
            chains=int(part.column("chains")[0].as_py()),
            priced=bool(np.any(np.asarray(part.column("priced").to_numpy(zero_copy_only=False)))),
            task_index=task_index[starts],
            keys=np.array([f"{indices[i]}/{hashes[i]}" for i in starts.tolist()], dtype=str),
            task_of=task_of, n_valid=_int(part.column("n_valid"), 0),
            n_success=_int(part.column("n_success"), 0), n_error=_int(part.column("n_error"), 0),
            first_success=_int(part.column("first_success"), 0),
            valid_prefix=_int(part.column("valid_prefix"), 0),
            settled_prefix=_int(part.column("settled_prefix"), 0), events=events, censored=censored,
            cost=_lists(part.column("cost_usd"), k), tokens=_lists(part.column("tokens"), k),
            valid_cost=np.asarray(part.column("valid_cost_usd").to_numpy(zero_copy_only=False), dtype=float),
            valid_tokens=np.asarray(part.column("valid_tokens").to_numpy(zero_copy_only=False), dtype=float))
    return out


# ---------------------------------------------------------------------------
# Kaplan-Meier, Efron, Chen: pure functions of counts


def chain_risk(run: RunChains, policy: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per chain and attempt j = 1..K (each (chains, K), 0/1): at risk (a valid attempt j,
    unsolved before it), the event (solved at j), censored (reached j unsolved, attempt j not
    valid)."""
    j = np.arange(1, run.k + 1)[None, :]
    event, censored = run.events[policy][:, None], run.censored[policy][:, None]
    last = np.where(event > 0, event, np.where(censored >= 0, censored, run.k))
    return ((j <= last).astype(float), (event == j).astype(float),
            ((event == 0) & (censored == j - 1)).astype(float))


def kaplan_meier(at_risk: np.ndarray, events: np.ndarray) -> np.ndarray:
    """S(j) = prod_{i<=j} (1 - events_i / at_risk_i) along the last axis (a factor 1 where nothing
    is at risk). Counts or their means alike: the estimate is a ratio of means."""
    with np.errstate(divide="ignore", invalid="ignore"):
        hazard = np.where(at_risk > 0, events / np.where(at_risk > 0, at_risk, 1), 0.0)
    return np.cumprod(1.0 - hazard, axis=-1)


def censoring_survival(at_risk: np.ndarray, censored: np.ndarray) -> np.ndarray:
    """G(j) = prod_{i<=j} at_risk_i / (at_risk_i + censored_i): the Kaplan-Meier estimate of the
    chance that a chain's attempts 1..j are all valid (errors at random: common to every task)."""
    reached = at_risk + censored
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(reached > 0, at_risk / np.where(reached > 0, reached, 1), 1.0)
    return np.cumprod(factor, axis=-1)


def efron_values(events: np.ndarray, censored: np.ndarray, survival: np.ndarray) -> np.ndarray:
    """Each chain's value at t = 1..K (shape (chains, K)) given the curve `survival` (K,): 1 solved
    by t, 0 known unsolved through t, 1 - S(t)/S(c) censored at c < t."""
    k = len(survival)
    t = np.arange(1, k + 1)[None, :]
    s_c = np.where(censored > 0, survival[np.clip(censored - 1, 0, k - 1)], 1.0)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        redistributed = np.where(s_c > 0, 1.0 - survival[None, :] / s_c, 1.0)
    solved = (events[:, None] > 0) & (events[:, None] <= t)
    censored_before = (censored[:, None] >= 0) & (censored[:, None] < t)
    return np.where(solved, 1.0, np.where(censored_before, redistributed, 0.0))


def chen(n: np.ndarray, c: np.ndarray, t: int) -> np.ndarray:
    """Chen et al.'s unbiased 1 - C(n - c, t) / C(n, t) per task, NaN where n < t."""
    return chen_curve(n, c, t)[:, t - 1] if t > 0 else np.zeros(len(n))


def chen_curve(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """chen(n, c, t) for t = 1..k (shape (tasks, k)): C(n - c, t) / C(n, t) is a running product
    over t of (n - c - i) / (n - i), i < t."""
    i = np.arange(k)[None, :]
    n, c = np.asarray(n)[:, None], np.asarray(c)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(n - i > 0, np.clip(n - c - i, 0, None) / np.where(n - i > 0, n - i, 1), 0.0)
    return np.where(n >= i + 1, 1.0 - np.cumprod(factor, axis=1), np.nan)


def all_fail(n: np.ndarray, c: np.ndarray, j: int) -> np.ndarray:
    """C(n - c, j) / C(n, j): the unbiased chance that j samples all fail (1 at j = 0), NaN where
    n < j."""
    return 1.0 - chen(n, c, j) if j > 0 else np.ones(len(n))


def pass_counts(run: RunChains, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """(n samples, successes) per task of a pass@k run, errored samples read by the policy."""
    if policy == "censored":
        return run.n_valid, run.n_success
    n = run.n_valid + run.n_error
    return n, run.n_success + (run.n_error if policy == "successes" else 0)


# ---------------------------------------------------------------------------
# Figures: a run's curve as a function of per-task feature means


@dataclass(frozen=True)
class Figure:
    """A run's figure on the tasks it is defined on: per-task features (rows) and the estimate as
    a function of their means (shape (B, features) -> (B,)); the mean of `values` is the estimate."""

    keys: np.ndarray
    features: np.ndarray
    estimate: Callable[[np.ndarray], np.ndarray]
    values: np.ndarray
    """Each task's own value (Efron's for a censored chain; Chen's for pass@k)."""
    censored: np.ndarray
    """Per task: some chain censored before the figure's t (the estimate is then no proportion)."""

    def subset(self, rows: np.ndarray) -> Figure:
        """The same figure on some of its tasks (the estimate re-estimated there)."""
        return Figure(self.keys[rows], self.features[rows], self.estimate, self.values[rows],
                      self.censored[rows])

    @property
    def point(self) -> float:
        """The estimate on every task."""
        return float(self.estimate(self.features.mean(axis=0)[None, :])[0])


@dataclass(frozen=True)
class Curve:
    """A run's metric@t for t = 1..K under one policy: per-task features and values.

    seq@k features, per task (each K wide): R, E, the at-risk and event counts of its chains at
    each attempt (summed: the run's hazards are ratios of their means); Q, the share of its chains
    solved by t; M, the share censored at c = 0..K-1. The run's estimate at t is
    mean Q_t + sum_{c<t} mean M_c (1 - S(t)/S(c)), S from the means of R and E: the mean over
    tasks of their chains' Efron values, re-estimated as a whole in every resample."""

    run: RunChains
    features: np.ndarray
    values: np.ndarray
    """(tasks, K): each task's value at t (NaN where it has none: pass@k with fewer than t samples)."""
    censored: np.ndarray
    """(tasks, K): the task has a chain censored before t."""
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def at(self, t: int, rows: np.ndarray | None = None) -> Figure:
        """metric@t as a Figure over the tasks that have a value at t (`rows`: over these of the
        run's tasks, by index and in their order, each with a value at t)."""
        if rows is None:
            rows = ~np.isnan(self.values[:, t - 1])
        values, censored = self.values[rows, t - 1], self.censored[rows, t - 1]
        if not self.run.is_seq:
            return Figure(self.run.keys[rows], values[:, None], lambda m: m[:, 0], values, censored)
        k = self.run.k
        columns = np.r_[0:t, k:k + t, 2 * k + t - 1, 3 * k:3 * k + t]
        return Figure(self.run.keys[rows], self.features[np.ix_(rows, columns)],
                      lambda m: redistributed(m[:, :t], m[:, t:2 * t], m[:, 2 * t:2 * t + 1],
                                              m[:, 2 * t + 1:])[:, -1], values, censored)

    def estimates(self, means: np.ndarray) -> np.ndarray:
        """metric@1..K (shape (B, K)) from feature means over every task (seq@k curves); the last
        array's kept, since a bootstrap asks it of several figures of the same resamples."""
        last = self.memo.get("estimates")
        if last is not None and last[0] is means:
            return last[1]
        k = self.run.k
        found = redistributed(means[:, :k], means[:, k:2 * k], means[:, 2 * k:3 * k], means[:, 3 * k:])
        self.memo["estimates"] = (means, found)
        return found


def redistributed(at_risk: np.ndarray, events: np.ndarray, solved: np.ndarray,
                  censored_at: np.ndarray) -> np.ndarray:
    """The mean Efron value at t = T - len(solved) + 1 .. T (T = the number of attempts given):
    solved (B, n) the share solved by each of those t, censored_at (B, T) the share censored at
    c = 0..T-1, the curve S from at_risk and events (B, T)."""
    survival = kaplan_meier(at_risk, events)
    b, last = survival.shape
    before = np.hstack([np.ones((b, 1)), survival[:, :-1]])  # S(c), c = 0..T-1
    ts = np.arange(last - solved.shape[1] + 1, last + 1)
    out = np.empty(solved.shape)
    for i, t in enumerate(ts):
        with np.errstate(divide="ignore", invalid="ignore"):
            rest = np.where(before[:, :t] > 0, 1.0 - survival[:, t - 1:t] / before[:, :t], 1.0)
        out[:, i] = solved[:, i] + (censored_at[:, :t] * rest).sum(axis=1)
    return out


def seq_features(run: RunChains, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """A seq@k run's Curve features under the policy (R, E, Q, M) and each chain's Efron values
    (shape (chains, K)) on the run's curve."""
    k = run.k
    at_risk, events, _ = chain_risk(run, policy)
    event, cut = run.events[policy], run.censored[policy]
    t = np.arange(1, k + 1)[None, :]
    n_chains = run.per_task(np.ones(len(event)))[:, None]
    solved = run.per_task(((event[:, None] > 0) & (event[:, None] <= t)).astype(float)) / n_chains
    cut_at = run.per_task((cut[:, None] == t - 1).astype(float)) / n_chains
    survival = kaplan_meier(at_risk.sum(axis=0), events.sum(axis=0))
    return (np.hstack([run.per_task(at_risk), run.per_task(events), solved, cut_at]),
            efron_values(event, cut, survival))


def curve(run: RunChains, policy: str) -> Curve:
    """The run's curve under `policy` (seq@k: Kaplan-Meier; pass@k: Chen), computed once per run."""
    if policy not in run.curves:
        run.curves[policy] = _curve(run, policy)
    return run.curves[policy]


def _curve(run: RunChains, policy: str) -> Curve:
    k = run.k
    if not run.is_seq:
        n, c = pass_counts(run, policy)
        values = chen_curve(n, c, k)
        return Curve(run, values, values, np.zeros(values.shape, dtype=bool))
    features, chain_values = seq_features(run, policy)
    n_chains = run.per_task(np.ones(len(run.task_of)))[:, None]
    cut = run.censored[policy]
    t = np.arange(1, k + 1)[None, :]
    censored_before = run.per_task(((cut[:, None] >= 0) & (cut[:, None] < t)).astype(float)) > 0
    return Curve(run, features, run.per_task(chain_values) / n_chains, censored_before)


def sample_one(run: RunChains, errors_as_failures: bool) -> Figure:
    """A pass@k run's sample 1 alone, 1/0 per task (the framing effect's partner when the seeds
    match): unknown where it errored (a failure with errors_as_failures) or has not run."""
    known_to = run.settled_prefix if errors_as_failures else run.valid_prefix
    value = np.where(run.first_success == 1, 1.0, np.where(known_to >= 1, 0.0, np.nan))
    rows = ~np.isnan(value)
    values = value[rows]
    return Figure(run.keys[rows], values[:, None], lambda m: m[:, 0], values,
                  np.zeros(len(values), dtype=bool))
