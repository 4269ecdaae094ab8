"""The answer beside each seq@k run, on the run list and on a run's page: the lift (seq@K − pass@K)
with its 95% interval, p and n, the flips each way, the framing effect, and the equal-budget block,
exactly as `seqk report --compare` computes them (the same procedures, seed and resamples), so the
page and the terminal never disagree.

Only what a verdict shows is computed: a seq@k run's lift and framing (seqk.analysis.metrics
paired_estimates) and its first equal-budget block (seqk.analysis.frontier), not the report's
curves' bootstraps, gains, power or other blocks. Each figure draws from its own seeded stream,
named by its run (and partner), so computing a subset changes no number
(tests/view/test_view_verdict.py holds them equal to the whole report's).

The work is split in three, so that a caller that keeps verdicts (seqk.view.verdict_cache) can
hold the database only for the reads: `plan_verdicts` (what each verdict reads: cheap queries),
`read_inputs` (the chains and spend of those runs: one read) and `compute_verdicts` (numpy only).

No web framework here: the templates only lay these out.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from seqk import store
from seqk.analysis import inputs as run_rows
from seqk.analysis.frontier import EqualBudget, budget_plans, equal_budget_blocks, oracle_stopped
from seqk.analysis.metrics import (
    ESTIMATE_THREADS,
    FRAMING_CHEN,
    FRAMING_SAME_SEED,
    Comparison,
    paired_estimates,
    q_values,
)
from seqk.analysis.survival import RunChains
from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED
from seqk.store import queries


@dataclass(frozen=True)
class RunVerdict:
    """What `seqk report --compare` says of one seq@k run against its partners."""

    seq_run_id: str
    k: int
    pass_run_id: str | None
    """The pass@k run the lift and the framing are paired with (None: no partner, no lift)."""
    lift: Comparison | None
    """seq@K − pass@K on the tasks both runs count at K (flips: n_a_only / n_b_only)."""
    framing: Comparison | None
    """seq@1 − pass@1: what the "This is attempt 1 of K" note alone does."""
    framing_vs: str | None
    """What seq@1 is compared with (the partner's sample 1 at the same seed, or Chen's mean)."""
    framing_chen: Comparison | None
    """seq@1 − Chen's pass@1 over all samples, beside a same-seed framing."""
    equal_budget: EqualBudget | None
    """The report's first equal-budget block: against a partner that stops too (a seq@k run without
    feedback, else resampling until success from the budget partner), never pass@m, which does not
    stop and is not spend-matched (issue 27)."""
    oracle: bool
    """The chains stop on the verdict of the LLM judge that also grades them."""
    shows_grading_info: bool
    """The feedback mode shows the actor grading information (not comparable with blind modes)."""

    @property
    def has_partner(self) -> bool:
        """Whether any figure compares this run with a pass@k run."""
        return self.lift is not None or self.equal_budget is not None


@dataclass(frozen=True)
class VerdictPlan:
    """What one seq@k run's verdict is computed from: its settings and its partners."""

    seq_run_id: str
    k: int
    pass_run_id: str | None
    """The pass@k run of the lift and framing (run_pairs' choice), None without one."""
    framing_vs: str | None
    blocks: tuple[tuple[tuple[str, Any], ...], ...]
    """Its equal-budget plans (frontier.budget_plans rows, as sorted items), in the report's order:
    the verdict's block is the first whose two runs have chains."""
    oracle: bool
    shows_grading_info: bool

    @property
    def run_ids(self) -> tuple[str, ...]:
        """Every run the verdict reads the chains of: the seq@k run first, then its partners."""
        ids = [self.seq_run_id, *([self.pass_run_id] if self.pass_run_id else []),
               *(dict(b)["pass_run_id"] for b in self.blocks)]
        return tuple(dict.fromkeys(ids))


@dataclass(frozen=True)
class Inputs:
    """What `compute_verdicts` reads: the runs' chains and their spend by role (the blocks' unit)."""

    chains: dict[str, RunChains]
    spend: list[dict[str, Any]]


def plan_verdicts(con: Any, run_ids: Sequence[str] | None = None) -> dict[str, VerdictPlan]:
    """seq@k run id -> its plan, for the seq@k runs among `run_ids` (exact ids; None: every run)."""
    runs = queries.report_runs(con, run_ids=None if run_ids is None else list(run_ids), benchmark=None,
                               model=None)
    seq = [r for r in runs if r["metric"] == "seq@k"]
    if not seq:
        return {}
    ids = [r["run_id"] for r in seq]
    choices = {c["seq_run_id"]: c for c in queries.pair_choices(con, run_ids=ids)}
    blocks: dict[str, list[tuple[tuple[str, Any], ...]]] = {}
    for plan in budget_plans(con, ids):
        blocks.setdefault(plan["seq_run_id"], []).append(tuple(sorted(plan.items())))
    out = {}
    for r in seq:
        choice = choices.get(r["run_id"])
        out[r["run_id"]] = VerdictPlan(
            r["run_id"], int(r["k"]), choice["pass_run_id"] if choice else None,
            None if choice is None else FRAMING_SAME_SEED if choice["same_seed"] else FRAMING_CHEN,
            tuple(blocks.get(r["run_id"], [])), oracle_stopped(r), bool(r["shows_grading_info"]))
    return out


def read_inputs(con: Any, plans: Iterable[VerdictPlan],
                prints: dict[str, dict[str, Any] | None] | None = None) -> Inputs:
    """The chains and spend of every run the plans read (one read each; each run's read back from
    the cache folder while it has not changed: seqk.analysis.inputs); `prints`: run_fingerprints
    rows read before (a viewer's), not read again."""
    ids = sorted({i for p in plans for i in p.run_ids})
    if not ids:
        return Inputs({}, [])
    keys = functools.cache(lambda: run_rows.run_keys(con, ids, prints)[0])
    return Inputs(run_rows.chains_of(con, ids, keys), run_rows.spend_of(con, ids, keys))


def compute_verdicts(plans: Iterable[VerdictPlan], inputs: Inputs, *, seed: int = DEFAULT_SEED,
                     n_boot: int = DEFAULT_N_BOOT,
                     on_done: Callable[[RunVerdict], None] | None = None) -> dict[str, RunVerdict]:
    """Each plan's verdict (numpy only; no q-values: `with_q_values`), `on_done` called with each as
    it is ready (from a worker thread)."""
    chains = inputs.chains

    def one(plan: VerdictPlan) -> RunVerdict:
        seq = chains.get(plan.seq_run_id)
        lift = framing = framing_chen = None
        if seq is not None and plan.pass_run_id in chains:
            lift, framing, framing_chen = paired_estimates(
                plan.seq_run_id, plan.k, plan.framing_vs, seq, chains[plan.pass_run_id], seed=seed,
                n_boot=n_boot)
        block = None
        first = next(([dict(b)] for b in plan.blocks if dict(b)["pass_run_id"] in chains and seq is not None),
                     [])
        if first:
            (block,), fill = equal_budget_blocks(first, chains, inputs.spend, errors_as_failures=False,
                                                 seed=seed, n_boot=n_boot)
            fill()
        verdict = RunVerdict(plan.seq_run_id, plan.k, plan.pass_run_id, lift, framing, plan.framing_vs,
                             framing_chen, block, plan.oracle, plan.shows_grading_info)
        if on_done is not None:
            on_done(verdict)
        return verdict

    todo = list(plans)
    # each figure draws from its own seeded stream: the threads (numpy releases the GIL) change none
    with ThreadPoolExecutor(min(ESTIMATE_THREADS, max(1, len(todo)))) as pool:
        return {v.seq_run_id: v for v in pool.map(one, todo)}


def with_q_values(found: dict[str, RunVerdict]) -> dict[str, RunVerdict]:
    """The verdicts with Benjamini-Hochberg q-values across every p-value among them (lifts and
    framing effects, metrics.q_values): over every seq@k run, the q-values `seqk report --compare`
    gives."""
    out = dict(found)
    for run_id, qs in zip(found, q_values(list(found.values())), strict=True):
        out[run_id] = dataclasses.replace(out[run_id], **{
            name: dataclasses.replace(getattr(out[run_id], name), q_value=value) for name, value in qs.items()})
    return out


def verdicts(db: store.DbLike, run_ids: Sequence[str] = (), *, seed: int = DEFAULT_SEED,
             n_boot: int = DEFAULT_N_BOOT) -> dict[str, RunVerdict]:
    """seq@k run id -> its verdict, for the seq@k runs among `run_ids` (exact ids; default all)."""
    with store.connect(db, read_only=True) as con:
        plans = plan_verdicts(con, list(run_ids) or None)
        inputs = read_inputs(con, plans.values())
    return with_q_values(compute_verdicts(plans.values(), inputs, seed=seed, n_boot=n_boot))
