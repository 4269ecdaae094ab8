"""Honest pass@k vs seq@k figures for runs in the database (docs/metrics-and-statistics.md).

metric@t comes from SQL (the `run_curve_of` macro in sql/views.sql): seq@t by Kaplan-Meier over
attempts (errors censor a chain; they do not vanish), pass@t by Chen's unbiased estimator, with
the range errors leave (errored attempts counted as failures, as successes), a 95% Wilson interval
where no chain is censored (the estimate is then a plain proportion), and the soft score and the
expected spend beside it. This module adds what SQL is clumsy at, from the per-chain rows
(seqk.analysis.survival), whose bootstraps re-estimate the survival curves in every resample:

- a task bootstrap interval for metric@t where chains are censored;
- ΔSeq@K = seq@K - seq@1, EGS = (seq@2 - seq@1)/Δ, LGS = (seq@K - seq@K-1)/Δ (Δ > 0 only);
- feedback lift = seq@K - pass@K on the tasks a seq@k run shares with its pass@k run (view
  run_pairs: k >= K), framing effect = seq@1 - pass@1 the same way (pass@1 is the pass@k run's
  sample 1 when both share a seed, else Chen's mean): seqk.analysis.paired;
- the spend of each run by role.

Errors censor by default; `errors_as_failures=True` counts errored attempts as failed ones.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from seqk import stats, store
from seqk.analysis.memo import remembered
from seqk.analysis.paired import Comparison, compare_chains, compare_on, compare_runs
from seqk.analysis.survival import Curve, RunChains, curve, read_chains, sample_one, value_policy
from seqk.records import RunSettings
from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED, Estimate, Types, benjamini_hochberg
from seqk.store import queries

__all__ = ["FRAMING_CHEN", "FRAMING_SAME_SEED", "Comparison", "CurvePoint", "RunMetrics", "Spend",
           "compare_on", "compare_runs", "compute", "paired_estimates", "q_values", "run_metrics"]


@dataclass(frozen=True)
class CurvePoint:
    """metric@t of one run (a row of the run_curve view)."""

    t: int
    value: float | None
    """seq@t by Kaplan-Meier over attempts (errors censor), or pass@t by Chen's unbiased
    estimator; None when no task has a value at t."""
    low: float | None
    """95% interval, lower end: Wilson where no chain is censored before t, else task bootstrap."""
    high: float | None
    """95% interval, upper end."""
    n_tasks: int
    """Tasks with a value at t (seq@k: every started task; pass@k: those with t valid samples)."""
    n_left_out: int
    """Started tasks without a value at t (pass@k: fewer than t valid samples)."""
    first_t_value: float | None
    """Solved within the first t attempts or samples: seq_k's pass@t (= value for seq@k)."""
    n_first_t: int
    """Tasks counted for first_t_value and soft_score."""
    soft_score: float | None
    """Mean best score within the first t: what seq_k reported, not success (clipped to
    [0, 1] after averaging when the run's soft_score_clipped)."""
    cost_usd_per_task: float | None
    """Mean spend per task up to t (None when no call was priced)."""
    tokens_per_task: float | None
    """Mean input + output tokens per task up to t."""
    pass_all_t: float | None = None
    """pass@k runs: pass^t, the unbiased probability that all of t samples succeed, C(c, t) / C(n, t),
    over the same n_tasks (None for seq@k)."""
    value_if_failures: float | None = None
    """The value with every errored attempt (sample) counted as a failure (None without errors)."""
    value_if_successes: float | None = None
    """The value with every errored attempt counted as a success at its index (None without errors)."""
    n_censored: int = 0
    """Chains (tasks, for a run with several chains) censored before t."""
    interval: str = "wilson"
    """'wilson', or 'bootstrap' where chains are censored (the estimate is then no proportion)."""
    too_few_tasks: bool = False
    """A bootstrap interval was due but there are too few tasks for one."""


@dataclass(frozen=True)
class Spend:
    """Tokens and cost of a run, or of one (role, model) in it."""

    role: str | None
    model: str | None
    n_calls: int
    input_tokens: int
    cached_tokens: int
    thinking_tokens: int
    output_tokens: int
    cost_usd: float | None
    """None when no call was priced; a lower bound when n_unpriced_calls > 0."""
    n_unpriced_calls: int


@dataclass(kw_only=True)
class RunMetrics(RunSettings):
    """Everything the report shows about one run: its settings, then its figures."""

    chains: int = 1
    """seq@k: independent chains per task."""
    is_primary: bool = False
    """The variant marks this run's comparison as the study's primary one (`primary: true`)."""
    rejudge_of: str | None = None
    """For a re-judging run (seqk rejudge): the run whose answers its judge graded again."""
    n_started: int = 0
    """Tasks with at least one attempt."""
    n_error_attempts: int = 0
    """Errored attempts that count (censoring their chains, or failures with errors_as_failures)."""
    curve: list[CurvePoint] = field(default_factory=list)
    delta: Estimate | None = None
    """ΔSeq@K (seq@k only), every task counted (errors censor)."""
    egs: Estimate | None = None
    lgs: Estimate | None = None
    gains_if_errors: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """Where the run has errors: ΔSeq@K, EGS and LGS ('delta', 'egs', 'lgs') with every errored
    attempt counted as a failure, then as a success (from the curve's value_if_failures and
    value_if_successes)."""
    pass_run_id: str | None = None
    """The pass@k run this seq@k run is compared with (view run_pairs)."""
    n_pass_candidates: int = 0
    lift: Comparison | None = None
    """seq@K - pass@K on shared tasks."""
    framing: Comparison | None = None
    """seq@1 - pass@1 on shared tasks (pass@1 as `framing_vs` says)."""
    framing_vs: str | None = None
    """What seq@1 is compared with: FRAMING_SAME_SEED or FRAMING_CHEN."""
    framing_chen: Comparison | None = None
    """seq@1 - Chen's pass@1 over all samples, when `framing` is against sample 1 alone: a
    seed's luck on sample 1 is not the model's pass@1."""
    shared_seeds: bool = False
    """Seeded by the rule before seqk.seeds: every task sampled with the same seed at each
    index, so tasks are not independent and intervals that assume they are are too narrow."""
    spend: Spend | None = None
    spend_by_role: list[Spend] = field(default_factory=list)
    shows_grading_info: bool = False
    """The feedback mode shows the actor grading information: not comparable with blind modes."""
    soft_score_clipped: bool = False
    """The soft score is the mean of unclipped scores, clipped to [0, 1] (HealthBench's rule)."""

    @property
    def rejudge_label(self) -> str | None:
        """'re-judge of <run> by <judge>' for a re-judging run, else None."""
        if self.rejudge_of is None:
            return None
        return f"re-judge of {self.rejudge_of} by {self.judge_model or self.verifier}"

    @property
    def feedback_label(self) -> str:
        """The feedback mode, with the critic model when an LLM critic writes it."""
        return f"{self.feedback_mode} ({self.critic_model})" if self.critic_model else self.feedback_mode


ESTIMATE_THREADS = min(4, os.cpu_count() or 1)
"""Threads that compute the seq@k runs' bootstraps and paired comparisons."""

FRAMING_SAME_SEED = "pass@k sample 1 (same seed)"
FRAMING_CHEN = "pass@1 (Chen mean)"


def compute(con: Any, run_ids: Sequence[str], *, errors_as_failures: bool = False,
            seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT,
            chains: dict[str, RunChains] | None = None, settings: Sequence[dict[str, Any]] | None = None,
            spend_rows: Sequence[dict[str, Any]] | None = None,
            curve_rows: Sequence[dict[str, Any]] | None = None, paired: bool = True) -> list[RunMetrics]:
    """RunMetrics for the given runs, in run_id order. What the caller has read already, for these
    runs or more: `chains`, their per-chain rows and their pass@k partners'; `settings`, their
    report_runs rows; `spend_rows`, their spend_by_role rows; `curve_rows`, their run_curves rows
    (by run, then t) with the same `errors_as_failures`. `paired=False`: each run's own
    figures only (curve, gains, spend: what `seqk compare` shows), no pass@k partner, lift or
    framing (pass_run_id, lift, framing and framing_chen left None)."""
    ids = list(run_ids)
    params = {"errors_as_failures": errors_as_failures, "run_ids": ids}
    if settings is None:
        settings = queries.report_runs(con, run_ids=ids, benchmark=None, model=None)
    wanted = set(ids)
    runs = {r["run_id"]: RunMetrics(**{key: r[key] for key in (
        "run_id", "benchmark", "slice", "metric", "k", "actor_model", "feedback_mode",
        "judge_model", "critic_model", "shows_grading_info", "soft_score_clipped", "shared_seeds", "rejudge_of",
        "verifier", "chains", "is_primary")})
        for r in settings if r["run_id"] in wanted}
    for row in queries.run_curves(con, **params) if curve_rows is None else curve_rows:
        if row["run_id"] not in runs:
            continue
        run = runs[row["run_id"]]
        run.n_started, run.n_error_attempts = int(row["n_started"]), int(row["n_error_attempts"])
        run.curve.append(CurvePoint(**{name: row[name] for name in CurvePoint.__dataclass_fields__
                                       if name in row}))
    seq_ids = [i for i in ids if i in runs and runs[i].metric == "seq@k"]
    choices = queries.pair_choices(con, run_ids=seq_ids) if seq_ids and paired else []
    if chains is None:  # only the seq@k runs' estimates read chains: theirs and their partners'
        wanted_chains = sorted(set(seq_ids) | {c["pass_run_id"] for c in choices})
        chains = read_chains(con, wanted_chains) if wanted_chains else {}
    for row in choices:
        run = runs[row["seq_run_id"]]
        run.pass_run_id, run.n_pass_candidates = row["pass_run_id"], int(row["n_candidates"])
        run.framing_vs = FRAMING_SAME_SEED if row["same_seed"] else FRAMING_CHEN
    _add_spend(runs, queries.spend_by_role(con, run_ids=ids) if spend_rows is None else spend_rows)
    policy = value_policy(errors_as_failures)

    def estimate(run: RunMetrics) -> None:
        _seq_estimates(run, chains[run.run_id], policy, seed, n_boot)
        if run.pass_run_id in chains:
            run.lift, run.framing, run.framing_chen = paired_estimates(
                run.run_id, run.k, run.framing_vs, chains[run.run_id], chains[run.pass_run_id],
                errors_as_failures=errors_as_failures, seed=seed, n_boot=n_boot)

    # each figure draws from its own seeded stream: the threads (numpy's draws release the GIL)
    # change no figure
    seq_runs = [runs[i] for i in dict.fromkeys(seq_ids) if i in chains]
    with ThreadPoolExecutor(min(ESTIMATE_THREADS, max(1, len(seq_runs)))) as pool:
        for _ in pool.map(estimate, seq_runs):
            pass
    return [runs[i] for i in sorted(runs)]


def run_metrics(run_id: str, db: store.DbLike) -> RunMetrics | None:
    """RunMetrics of one run by its exact id, None when the database has no such run."""
    with store.connect(db, read_only=True) as con:
        found = compute(con, [run_id])
    return found[0] if found else None


def _seq_estimates(run: RunMetrics, chains: RunChains, policy: str, seed: int, n_boot: int) -> None:
    """ΔSeq@K, EGS, LGS and the bootstrap intervals of the curve's censored points, on one set of
    resampled tasks (the survival curve re-estimated in each); the bootstrap remembered
    (seqk.analysis.memo: it depends on the chains and on which points are censored, not on the
    last bits of the database's sums)."""
    k = run.k
    if not k:
        return
    censored = [p.t for p in run.curve if p.n_censored and p.value is not None]
    estimates = remembered("seq", (run.run_id, k, censored, chains, policy, seed, n_boot),
                           lambda: _seq_bootstrap(run.run_id, k, censored, curve(chains, policy), seed, n_boot))
    if not estimates:
        return
    run.delta, run.egs, run.lgs = (estimates.get(key) for key in ("delta", "egs", "lgs"))
    if run.n_error_attempts and len(run.curve) == k:
        run.gains_if_errors = {name: (gains(run.curve, "value_if_failures")[name],
                                      gains(run.curve, "value_if_successes")[name])
                               for name in ("delta", "egs", "lgs")}
    for i, point in enumerate(run.curve):
        if point.t in censored:
            e = estimates[f"t{point.t}"]
            run.curve[i] = replace(point, low=e.low, high=e.high, interval="bootstrap",
                                   too_few_tasks=e.too_few_tasks)


def _seq_bootstrap(run_id: str, k: int, censored: list[int], found: Curve, seed: int,
                   n_boot: int) -> dict[str, Estimate]:
    """_seq_estimates' figures by name (delta, egs, lgs, t<t> for each censored t), computed;
    empty without tasks."""
    if not found.features.shape[0]:
        return {}
    types = Types.from_array(found.features)

    def at(t: int):
        return lambda m: found.estimates(m)[:, t - 1]

    figures = {"delta": lambda m: found.estimates(m)[:, k - 1] - found.estimates(m)[:, 0]}
    if k >= 2:
        figures |= {"egs": _gain_share(found, 2, 1, k), "lgs": _gain_share(found, k, k - 1, k)}
    figures |= {f"t{t}": at(t) for t in censored}
    return stats.bootstrap_all(types, figures, name=f"seq:{run_id}", seed=seed, n_boot=n_boot)


def gains(points: list[CurvePoint], column: str) -> dict[str, float | None]:
    """ΔSeq@K, EGS and LGS of a curve's `column` (EGS and LGS None unless Δ > 0 and K >= 2)."""
    v = [getattr(p, column) for p in points]
    if not v or any(x is None for x in v):
        return dict.fromkeys(("delta", "egs", "lgs"))
    delta = v[-1] - v[0]
    share = (lambda hi, lo: (v[hi - 1] - v[lo - 1]) / delta) if delta > 0 and len(v) >= 2 else None
    return {"delta": delta, "egs": share(2, 1) if share else None,
            "lgs": share(len(v), len(v) - 1) if share else None}


def _gain_share(found: Curve, hi: int, lo: int, k: int):
    """(seq@hi - seq@lo) / (seq@K - seq@1), NaN where the denominator is 0."""

    def statistic(m: np.ndarray) -> np.ndarray:
        values = found.estimates(m)
        delta = values[:, k - 1] - values[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(delta > 0, (values[:, hi - 1] - values[:, lo - 1]) / delta, np.nan)

    return statistic


def paired_estimates(run_id: str, k: int, framing_vs: str | None, seq: RunChains, partner: RunChains, *,
                     errors_as_failures: bool = False, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT,
                     ) -> tuple[Comparison, Comparison, Comparison | None]:
    """A seq@k run's lift (seq@K - pass@K), its framing effect (seq@1 - pass@1, against sample 1
    when the seeds match, `framing_vs` FRAMING_SAME_SEED) and then its framing against Chen's
    pass@1 (None unless against sample 1); each from its own seeded stream, named by the run, so
    the figures do not depend on what else is computed."""
    def compare(t: int, name: str, b_figure: Any = None) -> Comparison:
        return compare_chains(seq, partner, t, errors_as_failures=errors_as_failures, b_figure=b_figure,
                              name=f"{name}:{run_id}", seed=seed, n_boot=n_boot)

    def compute() -> tuple[Comparison, Comparison, Comparison | None]:
        lift = compare(k, "lift")
        if framing_vs == FRAMING_SAME_SEED:
            return lift, compare(1, "framing", sample_one(partner, errors_as_failures)), compare(1, "framing_chen")
        return lift, compare(1, "framing"), None

    return remembered("paired", (run_id, k, framing_vs, seq, partner, errors_as_failures, seed, n_boot), compute)


TESTED = ("lift", "framing", "framing_chen")
"""The paired figures of a seq@k run whose p-values form one Benjamini-Hochberg family."""


def q_values(holders: Sequence[Any]) -> list[dict[str, float]]:
    """Benjamini-Hochberg q-values across every p-value of the holders' TESTED figures (a report's
    runs, or the viewer's verdicts: the same family), one {figure name: q} per holder."""
    found = [(i, name) for i, h in enumerate(holders) for name in TESTED
             if getattr(h, name) is not None and getattr(h, name).p_value is not None]
    q = benjamini_hochberg([getattr(holders[i], name).p_value for i, name in found])
    out: list[dict[str, float]] = [{} for _ in holders]
    for (i, name), value in zip(found, q, strict=True):
        assert value is not None  # every p-value given is present, so is every q-value
        out[i][name] = value
    return out


def _add_spend(runs: dict[str, RunMetrics], rows: Sequence[dict[str, Any]]) -> None:
    for row in rows:
        if row["run_id"] in runs:
            runs[row["run_id"]].spend_by_role.append(Spend(**{k: v for k, v in row.items() if k != "run_id"}))
    for run in runs.values():
        parts = run.spend_by_role
        priced = [s.cost_usd for s in parts if s.cost_usd is not None]
        run.spend = Spend(
            None, None, sum(s.n_calls for s in parts), sum(s.input_tokens for s in parts),
            sum(s.cached_tokens for s in parts), sum(s.thinking_tokens for s in parts),
            sum(s.output_tokens for s in parts), sum(priced) if priced else None,
            sum(s.n_unpriced_calls for s in parts))


def paired(types: Types, a_run_id: str, b_run_id: str, t: int, *, name: str,
           seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> Comparison:
    """Paired difference of two runs from their (a_value, b_value, count) task types, nothing
    censored: `stats.paired_difference` (an interval and a p-value from one test) when both are
    0/1 outcomes, else a paired bootstrap with its p-value (seqk.analysis.paired)."""
    from seqk.analysis.paired import paired_figures
    from seqk.analysis.survival import Figure

    if not types.n:
        return Comparison(a_run_id, b_run_id, t, None, None, Estimate(None, None, None, 0), 0, 0, None)
    rows = np.repeat(types.values, types.counts, axis=0)
    keys = np.array([str(i) for i in range(len(rows))], dtype=object)
    none = np.zeros(len(rows), dtype=bool)
    a = Figure(keys, rows[:, :1], lambda m: m[:, 0], rows[:, 0], none)
    b = Figure(keys, rows[:, 1:2], lambda m: m[:, 0], rows[:, 1], none)
    return paired_figures(a, b, a_run_id, b_run_id, t, name=name, seed=seed, n_boot=n_boot)

