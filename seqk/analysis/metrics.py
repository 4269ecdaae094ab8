"""Honest pass@k vs seq@k figures for runs in the database.

metric@t comes from SQL (the `run_curve_of` macro in sql/views.sql): computed on success,
with a 95% Wilson interval and the number of tasks counted at t; the soft score and the
spend per task sit beside it. This module adds what SQL is clumsy at, from the per-task
type tables the queries in sql/metrics.sql return:

- ΔSeq@K = seq@K - seq@1, EGS = (seq@2 - seq@1)/Δ, LGS = (seq@K - seq@K-1)/Δ (Δ > 0 only),
  on the tasks counted at K, with task-level bootstrap intervals;
- feedback lift = seq@K - pass@K on the tasks a seq@k run shares with its pass@k run
  (view run_pairs), with flips both ways and a p-value; framing effect =
  seq@1 - pass@1 the same way, where pass@1 is the pass@k run's sample 1 when both runs
  share a seed (same seed, same task: only the framing differs), else Chen's mean;
- a paired difference of 0/1 outcomes gets the interval and p-value of one test
  (`stats.paired_difference`); one of fractional values (Chen's estimates) a paired bootstrap;
- a paired comparison of any two runs at a t (`compare_runs`).

Errors are excluded by default (a task is left out where its outcome is unknown);
`errors_as_failures=True` counts errored attempts as failed ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from seqk import stats, store
from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED, Estimate, Types
from seqk.store import queries


@dataclass(frozen=True)
class CurvePoint:
    """metric@t of one run (a row of the run_curve view)."""

    t: int
    value: float | None
    """seq@t, or pass@t by Chen's unbiased estimator; None when no task counts at t."""
    low: float | None
    """95% Wilson interval, lower end."""
    high: float | None
    """95% Wilson interval, upper end."""
    n_tasks: int
    """Tasks counted at t."""
    n_left_out: int
    """Tasks whose outcome at t is unknown (errors, fewer than t samples, still running)."""
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


@dataclass(frozen=True)
class Comparison:
    """Run a against run b at t on the tasks both count there, paired by task."""

    a_run_id: str
    b_run_id: str
    t: int
    a_value: float | None
    b_value: float | None
    difference: Estimate
    """a - b with its 95% interval (see `interval`); n = shared tasks."""
    n_a_only: int
    """Tasks a solved and b failed (for seq@K vs pass@K: failed by pass@K, solved by seq@K)."""
    n_b_only: int
    p_value: float | None
    """Two-sided p-value of the test whose inversion is the interval (`stats.paired_difference`);
    None unless both are 0/1 outcomes."""
    interval: str = "bootstrap"
    """How the interval was made: 'score' (`stats.paired_difference`, for 0/1 outcomes) or
    'bootstrap'."""


@dataclass
class RunMetrics:
    """Everything the report shows about one run."""

    run_id: str
    benchmark: str
    slice: str
    metric: str
    k: int
    actor_model: str
    feedback_mode: str
    judge_model: str | None
    critic_model: str | None
    verifier: str = ""
    rejudge_of: str | None = None
    """For a re-judging run (seqk rejudge): the run whose answers its judge graded again."""
    n_started: int = 0
    """Tasks with at least one attempt."""
    n_error_attempts: int = 0
    """Errored attempts that count (excluded, or failures with errors_as_failures)."""
    curve: list[CurvePoint] = field(default_factory=list)
    delta: Estimate | None = None
    """ΔSeq@K on the tasks counted at K (seq@k only)."""
    egs: Estimate | None = None
    lgs: Estimate | None = None
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


FRAMING_SAME_SEED = "pass@k sample 1 (same seed)"
FRAMING_CHEN = "pass@1 (Chen mean)"


def compute(con: Any, run_ids: Sequence[str], *, errors_as_failures: bool = False,
            seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> list[RunMetrics]:
    """RunMetrics for the given runs, in run_id order."""
    ids = list(run_ids)
    params = {"errors_as_failures": errors_as_failures, "run_ids": ids}
    runs = {r["run_id"]: RunMetrics(**{key: r[key] for key in (
        "run_id", "benchmark", "slice", "metric", "k", "actor_model", "feedback_mode",
        "judge_model", "critic_model", "shows_grading_info", "soft_score_clipped", "shared_seeds", "rejudge_of",
        "verifier")})
        for r in queries.report_runs(con, run_ids=ids, benchmark=None, model=None)}
    for row in queries.run_curves(con, **params):
        run = runs[row["run_id"]]
        run.n_started, run.n_error_attempts = int(row["n_started"]), int(row["n_error_attempts"])
        run.curve.append(CurvePoint(**{name: row[name] for name in CurvePoint.__dataclass_fields__}))
    seq_ids = [i for i in ids if i in runs and runs[i].metric == "seq@k"]
    if seq_ids:
        _add_estimates(con, runs, {**params, "run_ids": seq_ids}, seed, n_boot)
    _add_spend(con, runs, ids)
    return [runs[i] for i in sorted(runs)]


def run_metrics(run_id: str, db: store.DbLike) -> RunMetrics | None:
    """RunMetrics of one run by its exact id, None when the database has no such run."""
    with store.connect(db, read_only=True) as con:
        found = compute(con, [run_id])
    return found[0] if found else None


def _add_estimates(con: Any, runs: dict[str, RunMetrics], params: dict[str, Any], seed: int,
                   n_boot: int) -> None:
    """ΔSeq@K, EGS, LGS, lift and framing of the seq@k runs in params["run_ids"]."""
    for row in queries.pair_choices(con, run_ids=params["run_ids"]):
        run = runs[row["seq_run_id"]]
        run.pass_run_id, run.n_pass_candidates = row["pass_run_id"], int(row["n_candidates"])
        run.framing_vs = FRAMING_SAME_SEED if row["same_seed"] else FRAMING_CHEN
    found: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for kind, run_id, _pass_run_id, *values in queries.point_types(con, **params):
        if kind == "seq":
            del values[4]  # a_5 (Chen's pass@1) is a pair's column
        found.setdefault((kind, run_id), []).append(tuple(values))
    for run_id in params["run_ids"]:
        run = runs[run_id]
        # a_1..a_4 = values at t = 1, 2, K-1, K
        types = Types.from_rows(found.get(("seq", run_id), []))
        figures = {"delta": stats.difference(3, 0)}
        if run.k >= 2:
            figures |= {"egs": stats.gain_share(1, 0, 0, 3), "lgs": stats.gain_share(3, 2, 0, 3)}
        estimates = stats.bootstrap_all(types, figures, name=f"seq:{run_id}", seed=seed,
                                        n_boot=n_boot)
        run.delta, run.egs, run.lgs = (estimates.get(key) for key in ("delta", "egs", "lgs"))
        if run.pass_run_id is None:
            continue
        # a_1..a_5 = seq@1, pass@1 (sample 1 when the seeds match), seq@K, pass@K, Chen's pass@1
        pairs = found.get(("pair", run_id), [])
        at_k = [(s, p, n) for _, _, s, p, _, n in pairs if s is not None and p is not None]
        at_1 = [(s, p, n) for s, p, _, _, _, n in pairs if s is not None and p is not None]
        if run.framing_vs == FRAMING_SAME_SEED:
            # Tasks stay the resampling unit: a task's samples enter as their mean, one value.
            chen = [(s, c, n) for s, _, _, _, c, n in pairs if s is not None and c is not None]
            run.framing_chen = paired(Types.from_rows(chen), run_id, run.pass_run_id, 1,
                                      name=f"framing_chen:{run_id}", seed=seed, n_boot=n_boot)
        run.lift = paired(Types.from_rows(at_k), run_id, run.pass_run_id, run.k,
                          name=f"lift:{run_id}", seed=seed, n_boot=n_boot)
        run.framing = paired(Types.from_rows(at_1), run_id, run.pass_run_id, 1,
                             name=f"framing:{run_id}", seed=seed, n_boot=n_boot)


def _add_spend(con: Any, runs: dict[str, RunMetrics], ids: list[str]) -> None:
    for row in queries.spend_by_role(con, run_ids=ids):
        run = runs[row.pop("run_id")]
        run.spend_by_role.append(Spend(**row))
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
    """Paired difference of two runs from their (a_value, b_value, count) task types:
    `stats.paired_difference` (an interval and a p-value from one test) when both are 0/1
    outcomes, else a paired bootstrap."""
    if not types.n:
        return Comparison(a_run_id, b_run_id, t, None, None, Estimate(None, None, None, 0), 0, 0,
                          None)
    a_value, b_value = (float(x) for x in types.means())
    a, b, n = types.values[:, 0], types.values[:, 1], types.counts
    a_only, b_only = int(n[(a == 1) & (b == 0)].sum()), int(n[(a == 0) & (b == 1)].sum())
    if not bool(((a == 0) | (a == 1)).all() and ((b == 0) | (b == 1)).all()):
        diff = stats.bootstrap(types, stats.difference(0, 1), name=name, seed=seed, n_boot=n_boot)
        return Comparison(a_run_id, b_run_id, t, a_value, b_value, diff, a_only, b_only, None)
    both = int(n[(a == 1) & (b == 1)].sum())
    found = stats.paired_difference(both, a_only, b_only, types.n - both - a_only - b_only)
    diff = Estimate(found.estimate, found.low, found.high, types.n)
    return Comparison(a_run_id, b_run_id, t, a_value, b_value, diff, a_only, b_only,
                      found.p_value, "score")


def compare_runs(run_a: str, run_b: str, *, t: int | None = None, db: store.DbLike = None,
                 errors_as_failures: bool = False, seed: int = DEFAULT_SEED,
                 n_boot: int = DEFAULT_N_BOOT) -> Comparison:
    """Paired comparison of two runs at t (default: the smaller K) on their shared tasks:
    difference a - b with its 95% interval, flips, p-value."""
    with store.connect(db, read_only=True) as con:
        a_id, b_id = (store.resolve_run_id(con, pattern) for pattern in (run_a, run_b))
        if t is None:
            t = min(r["k"] for r in queries.report_runs(con, run_ids=[a_id, b_id], benchmark=None,
                                                                        model=None))
        return compare_on(con, a_id, b_id, t, errors_as_failures=errors_as_failures, seed=seed,
                          n_boot=n_boot)


def compare_on(con: Any, a_id: str, b_id: str, t: int, *, errors_as_failures: bool = False,
               seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> Comparison:
    """compare_runs on an open connection, for exact run ids."""
    rows = queries.paired_run_types(con, errors_as_failures=errors_as_failures,
                                    run_a=a_id, run_b=b_id, t=t)
    return paired(Types.from_rows(rows), a_id, b_id, t, name=f"compare:{a_id}:{b_id}:{t}",
                  seed=seed, n_boot=n_boot)

