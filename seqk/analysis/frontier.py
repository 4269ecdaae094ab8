"""Feedback against its stopping-matched partners at equal budget (docs/frontier.md).

A seq@k chain stops at its verifier's first success and is charged only up to there. A fair
partner stops too. For each seq@k run, up to three blocks, the stopping-matched one first:
- `none_feedback`: a seq@k run of the same benchmark, slice, actor, verifier and judge with
  `feedback_mode: none` (later attempts see "This is attempt t of K" and nothing of earlier ones),
  measured (sql/frontier.sql none_partners);
- `resample_until_success`: from the budget partner (a pass@k run of the same benchmark, slice,
  actor, verifier and judge with any k, the largest), w chains of i.i.d. samples each stopping at
  its first success, estimated from its samples without new calls (Chen's identity);
- `pass_at_m`: pass@m from the same run, which does not stop and pays for every sample: not
  spend-matched, kept second (issue 27: with feedback doing nothing it makes seq@k look better).
Each block compares the two frontiers at equal spend (seqk.analysis.budget): the best cell of each
side within each budget on the tasks every candidate is defined on, chosen again in every
resample, with a pointwise interval, its p-value and a simultaneous band. Spend is in US$ only
when every call of both runs was priced and both cost something, else in tokens (input + output).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from typing import Any

from seqk.analysis.budget import (
    CellFigure,
    EqualSpend,
    Frontier,
    compare_at_equal_spend,
    point_differences,
    shared_figures,
)
from seqk.analysis.cells import depth_one, pass_frontier, seq_frontier, typed
from seqk.analysis.envelope import frontier_value, frontier_vertices, with_error_ranges
from seqk.analysis.memo import remembered
from seqk.analysis.survival import RunChains, value_policy
from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED, Estimate
from seqk.store import queries

BLOCK_THREADS = min(4, os.cpu_count() or 1)
"""Threads that compute a report's equal-budget blocks (each block's figures come from its own
seeded stream: how many threads, and which block runs where, changes no figure)."""

PARTNERS = ("none_feedback", "resample_until_success", "pass_at_m")
"""The blocks' partners, in the order a report shows them."""

TITLES = {
    "none_feedback": "vs a seq@k run without feedback (feedback_mode none: stops at its first success too)",
    "resample_until_success": "vs resample until success from pass@k (i.i.d. samples, each chain "
                              "stopping at its first success, as seq@k does)",
    "pass_at_m": "vs pass@m, which does not stop at a success and pays for every sample: "
                 "not spend-matched (it favours seq@k)",
}


@dataclass(frozen=True)
class Interval:
    """[low, high]."""

    low: float
    high: float


@dataclass(frozen=True)
class Mix:
    """The dearer of two cells a side's frontier mixes at a budget between two of its vertices:
    run on `share` of the tasks (the cheaper cell on the rest), so that the expected spend is the
    budget."""

    width: int
    depth: int
    share: float


@dataclass
class BudgetPoint:
    """One budget: each side's frontier there (its best cell within it, or the mixture of two
    cells that spends it, where that is better), on the tasks every candidate has."""

    budget: float
    """Expected spend per task, in the block's unit."""
    n_tasks: int
    width: int | None = None
    """Chains of seq@k's cell at the budget (the cheaper of two mixed; None when every cell costs more)."""
    depth: int | None = None
    seq_value: float | None = None
    seq_spend: float | None = None
    seq_mix: Mix | None = None
    """The dearer cell seq@k's frontier mixes in at this budget (None: the cell alone)."""
    partner_width: int | None = None
    partner_depth: int | None = None
    partner_value: float | None = None
    partner_spend: float | None = None
    partner_mix: Mix | None = None
    difference: Estimate | None = None
    """seq − partner with its 95% pointwise interval (both cells chosen again per resample)."""
    p_value: float | None = None
    band: Interval | None = None
    """The simultaneous 95% band over the block's budgets: seq is better only where it excludes 0."""
    if_failures: float | None = None
    """seq − partner at this budget with every errored attempt (sample) counted as a failure, each
    side's best cell chosen again (None without errors)."""
    if_successes: float | None = None
    """The same with every errored attempt counted as a success at its index."""


@dataclass
class EqualBudget:
    """A seq@k run against one partner at equal spend."""

    seq_run_id: str
    pass_run_id: str
    """The partner run (a pass@k run, or a seq@k run without feedback)."""
    partner: str
    """'none_feedback', 'resample_until_success' or 'pass_at_m'."""
    pass_k: int
    """The partner run's k."""
    n_candidates: int
    """How many runs could have been the partner."""
    unit: str
    """'US$' when every call of both runs was priced and both cost something, else 'tokens'."""
    unit_reason: str | None = None
    """Why the block is in tokens, when it is."""
    n_shared: int = 0
    points: list[BudgetPoint] = field(default_factory=list)
    seq_better: list[float] = field(default_factory=list)
    """Budgets where the band excludes 0 above: the only budgets where seq@k is better."""
    partner_better: list[float] = field(default_factory=list)
    crossover: float | None = None
    """The first budget at which the estimated order changes (a point estimate)."""
    band_critical: float | None = None
    cells: list[dict[str, Any]] = field(default_factory=list)
    """What the charts plot: every cell of both runs on the shared tasks (series, width, depth,
    value, spend, n_tasks; value_if_failures and value_if_successes, the value with errors read as
    failures and as successes, None where neither run has an error) and, for a seq@k cell,
    `relative`: its value over the partner's frontier at the same spend (its best cell or mixture
    of two there; None outside its range)."""

    @property
    def title(self) -> str:
        """What the partner is, in words."""
        return TITLES[self.partner]


def unit_of(spend_rows: Sequence[dict[str, Any]], run_ids: Sequence[str]) -> tuple[str, str | None]:
    """('US$', None) when every call of the runs was priced and each cost more than 0, else
    ('tokens', why)."""
    rows = [r for r in spend_rows if r["run_id"] in run_ids]
    if any(r["n_unpriced_calls"] for r in rows):
        return "tokens", "some calls unpriced: compared in tokens"
    cost = {run_id: sum(r["cost_usd"] or 0.0 for r in rows if r["run_id"] == run_id) for run_id in run_ids}
    if any(value <= 0 for value in cost.values()):
        return "tokens", "local/free model: compared in tokens"
    return "US$", None


def equal_budget(con: Any, seq_run_ids: Sequence[str], *, errors_as_failures: bool = False,
                 seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> list[EqualBudget]:
    """Every equal-budget block of the given seq@k runs."""
    from seqk.analysis.survival import read_chains

    plans = budget_plans(con, seq_run_ids)
    chains = read_chains(con, sorted({i for p in plans for i in (p["seq_run_id"], p["pass_run_id"])}))
    results, compute = equal_budget_blocks(plans, chains, queries.spend_by_role(
        con, run_ids=sorted(chains)), errors_as_failures=errors_as_failures, seed=seed, n_boot=n_boot)
    compute()
    return results


def budget_plans(con: Any, seq_run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Each block to compute: seq_run_id, pass_run_id (the partner), partner, pass_k,
    n_candidates; in report order (by seq run, then PARTNERS)."""
    ids = list(seq_run_ids)
    if not ids:
        return []
    plans = [{"seq_run_id": p["seq_run_id"], "pass_run_id": p["none_run_id"], "partner": "none_feedback",
              "pass_k": p["none_k"], "n_candidates": p["n_candidates"]}
             for p in queries.none_partners(con, run_ids=ids)]
    for p in queries.budget_partners(con, run_ids=ids):
        for partner in ("resample_until_success", "pass_at_m"):
            plans.append({"seq_run_id": p["seq_run_id"], "pass_run_id": p["pass_run_id"],
                          "partner": partner, "pass_k": p["pass_k"], "n_candidates": p["n_candidates"]})
    return sorted(plans, key=lambda p: (p["seq_run_id"], PARTNERS.index(p["partner"])))


def equal_budget_blocks(plans: list[dict[str, Any]], chains: dict[str, RunChains],
                        spend_rows: Sequence[dict[str, Any]], *, errors_as_failures: bool,
                        seed: int, n_boot: int) -> tuple[list[EqualBudget], Callable[[], None]]:
    """The blocks of `plans` (budget_plans) with nothing computed yet, and a function that
    computes them all (numpy only: a report runs it on another thread while the database works).
    Each block draws from its own seeded stream, so when and where it runs changes no figure."""
    policy = value_policy(errors_as_failures)
    results, jobs = [], []
    for plan in plans:
        seq, partner = chains.get(plan["seq_run_id"]), chains.get(plan["pass_run_id"])
        if seq is None or partner is None:
            continue
        unit, reason = unit_of(spend_rows, [seq.run_id, partner.run_id])
        block = EqualBudget(plan["seq_run_id"], plan["pass_run_id"], plan["partner"], plan["pass_k"],
                            plan["n_candidates"], unit, reason)
        results.append(block)
        jobs.append((block, seq, partner))

    groups: dict[str, list[tuple[EqualBudget, RunChains, RunChains]]] = {}
    for job in jobs:  # a seq@k run's blocks share its frontier
        groups.setdefault(job[0].seq_run_id, []).append(job)

    def compute_group(group: list[tuple[EqualBudget, RunChains, RunChains]]) -> None:
        built: dict[tuple[str, str, str, str], Frontier] = {}  # the group's frontiers, built once
        for block, seq, partner in group:
            def compute(block: EqualBudget = block, seq: RunChains = seq,
                        partner: RunChains = partner) -> dict[str, Any]:
                compute_block(block, seq, partner, built)
                return {f.name: getattr(block, f.name) for f in fields(block)}

            # remembered (seqk.analysis.memo): the block as planned, both runs' rows, the settings
            for name, value in remembered("equal-budget", (block, seq, partner, policy, seed, n_boot),
                                          compute).items():
                setattr(block, name, value)

    def compute_block(block: EqualBudget, seq: RunChains, partner: RunChains,
                      built: dict[tuple[str, str, str, str], Frontier]) -> None:
        found = compare_at_equal_spend(
            *_sides(block, seq, partner, policy, built),
            name=f"equal-budget:{block.partner}:{block.seq_run_id}:{block.pass_run_id}",
            seed=seed, n_boot=n_boot)
        errors = int(seq.n_error.sum()) + int(partner.n_error.sum())
        others = ([_sides(block, seq, partner, other, built) for other in ("failures", "successes")]
                  if errors else [])
        if others:
            (fa, fb), (sa, sb) = (shared_figures(*sides) for sides in others)
            found.cells_a, found.cells_b = (with_error_ranges(found.cells_a, fa, sa),
                                            with_error_ranges(found.cells_b, fb, sb))
        _fill(block, found)
        if others:
            budgets = [p.budget for p in block.points]
            ends = [point_differences(*sides, budgets) for sides in others]
            for point, if_failures, if_successes in zip(block.points, *ends, strict=True):
                point.if_failures, point.if_successes = if_failures, if_successes

    def compute() -> None:
        # numpy draws and sums with the GIL released: a few threads use the cores; a seq@k run's
        # blocks on one of them (its frontiers are dropped when they are done)
        with ThreadPoolExecutor(min(BLOCK_THREADS, max(1, len(groups)))) as pool:
            for _ in pool.map(compute_group, groups.values()):
                pass

    return results, compute


def _sides(block: EqualBudget, seq: RunChains, partner: RunChains, policy: str,
           built: dict[tuple[str, str, str, str], Frontier]) -> tuple[Frontier, Frontier]:
    """The seq@k run's frontier and its partner's, with errors read as `policy` says (each built
    once: a run's frontier is the same in each of its blocks)."""
    def frontier(run: RunChains, cells: str) -> Frontier:
        key = (run.run_id, cells, policy, block.unit)
        if key not in built:
            # tasks grouped into types once per frontier: its blocks sum over types (cells.typed)
            built[key] = (typed(seq_frontier(run, policy, block.unit)) if cells == "seq" else
                          typed(pass_frontier(run, policy, block.unit, stopping=True))
                          if cells == "resample_until_success"
                          else depth_one(frontier(run, "resample_until_success")))  # pass@m
        return built[key]

    return frontier(seq, "seq"), frontier(partner, "seq" if block.partner == "none_feedback" else block.partner)


def _fill(block: EqualBudget, found: EqualSpend) -> None:
    block.n_shared = found.n_shared
    block.band_critical, block.crossover = found.band_critical, found.crossover
    block.seq_better, block.partner_better = found.a_better, found.b_better
    for row in found.rows:
        point = BudgetPoint(row.budget, row.n_tasks, difference=row.difference, p_value=row.p_value,
                            band=Interval(*row.band) if row.band else None)
        if row.a is not None:
            point.width, point.depth, point.seq_value, point.seq_spend = (
                row.a.width, row.a.depth, row.a.value, row.a.spend)
            point.seq_mix = Mix(*row.a.mixed) if row.a.mixed else None
        if row.b is not None:
            point.partner_width, point.partner_depth = row.b.width, row.b.depth
            point.partner_value, point.partner_spend = row.b.value, row.b.spend
            point.partner_mix = Mix(*row.b.mixed) if row.b.mixed else None
        block.points.append(point)
    partner_series = {"none_feedback": "seq@k, no feedback", "resample_until_success":
                      "resample until success", "pass_at_m": "pass@k"}[block.partner]
    block.cells = [_cell(partner_series, c, None) for c in found.cells_b]
    for c in found.cells_a:
        at = _partner_at_spend(found.cells_b, c.spend)
        block.cells.append(_cell(f"seq@k depth {c.depth}", c, c.value / at if at else None))


def _cell(series: str, c: CellFigure, relative: float | None) -> dict[str, Any]:
    return {"series": series, "width": c.width, "depth": c.depth, "value": c.value,
            "spend": c.spend, "n_tasks": c.n_tasks, "relative": relative,
            "value_if_failures": c.value_if_failures, "value_if_successes": c.value_if_successes}


def _partner_at_spend(cells: list[CellFigure], x: float) -> float | None:
    """The partner's frontier at spend x: its best cell within it or the mixture of two that spends
    it (envelope.frontier_value); None below its cheapest cell or past its best cell's spend."""
    vertices = frontier_vertices(cells)
    if not vertices or x > vertices[-1].spend * (1 + 1e-9):
        return None
    return frontier_value(cells, x)


def oracle_stopped(run: dict[str, Any]) -> bool:
    """Whether a seq@k run stops its chains on the verdict of the judge that also grades them:
    an LLM judge (Huang et al., ICLR 2024: part of such a gain is an oracle effect)."""
    return run["metric"] == "seq@k" and run["verifier"] == "llm"
