"""`seqk compare A B` at equal budget: each run's frontier matched at equal spend per task, on the
tasks both hold, with the estimators of the report's equal-budget blocks (seqk/analysis/cells.py,
seqk/analysis/budget.py; docs/frontier.md), for any two runs.

- Each run's frontier: a seq@k run's width x depth cells (Kaplan-Meier values, Horvitz-Thompson
  over w-subsets of its chains, errored chains censored), a pass@k run's resample-until-success
  cells (w chains of i.i.d. samples, each stopping at its first success; depth 1 is its pass@w).
- At each budget (the spends of both frontiers' vertices where both are measured), each run's
  frontier there: its best cell whose expected spend per task is within it, or the mixture of two
  cells across tasks that spends the budget where that is better (the upper concave envelope;
  seqk/analysis/budget.py), a − b with the paired task bootstrap that takes both frontiers again
  in every resample, p, and the max-|t| simultaneous band over the budgets (`compare_at_equal_spend`).
- The cross-over: the first budget at which the estimated order changes, and, read from the band,
  the budgets between which the true order changes: below `low` the band puts the early leader
  ahead at every budget; at `high` it puts the other run ahead (None: it never does, so the order
  may not change at all). `established` when the band orders the runs both ways.
- The unit: US$ when every call of both runs was priced and both cost something; tokens (input +
  output) when not, but both runs pay the same models in every role; else nothing is compared
  (tokens of different models are not the same money) and `refusal` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from seqk.analysis.budget import (
    CellFigure,
    Frontier,
    SpendRow,
    compare_at_equal_spend,
    point_differences,
    shared_figures,
)
from seqk.analysis.cells import pass_frontier, seq_frontier
from seqk.analysis.envelope import with_error_ranges
from seqk.analysis.formats import fmt_spend
from seqk.analysis.frontier import unit_of
from seqk.analysis.memo import remembered
from seqk.analysis.survival import RunChains, value_policy
from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED

REFUSAL = ("not compared at equal budget: a call of these runs has no price and their models differ, so "
           "their tokens are not the same money; give each role a `price:` in the variants to compare "
           "them in US$")


@dataclass(frozen=True)
class Crossover:
    """Where the order of the two runs changes along the budgets."""

    budget: float
    """The first budget at which the estimated difference changes sign (a point estimate)."""
    before: str
    """'a' or 'b': the run ahead at the budgets below it."""
    low: float
    """The lowest budget at which the band lets the order change (the early leader is ahead at
    every budget below it)."""
    high: float | None
    """The first budget at which the band puts the other run ahead; None when it never does."""
    established: bool
    """The band puts `before` ahead at some budget and the other run ahead at a later one."""


@dataclass
class BudgetComparison:
    """Run a against run b at equal spend per task (module docstring); every difference a − b."""

    unit: str | None
    """'US$', 'tokens', or None when refused."""
    refusal: str | None = None
    unit_reason: str | None = None
    """Why the comparison is in tokens, when it is."""
    n_shared: int = 0
    rows: list[SpendRow] = field(default_factory=list)
    cells_a: list[CellFigure] = field(default_factory=list)
    """Every frontier cell of a on the shared tasks (what the charts draw)."""
    cells_b: list[CellFigure] = field(default_factory=list)
    crossover: Crossover | None = None
    band_critical: float | None = None
    a_better: list[float] = field(default_factory=list)
    """Budgets where the band lies above 0."""
    b_better: list[float] = field(default_factory=list)
    if_failures: list[float | None] = field(default_factory=list)
    """Per row, a − b with every errored attempt (sample) of both runs counted as a failure, each
    side's best cell chosen again; empty when neither run has an error."""
    if_successes: list[float | None] = field(default_factory=list)
    """The same with every errored attempt counted as a success at its index."""


def spend_unit(spend_rows: Sequence[dict[str, Any]], run_a: str, run_b: str) -> tuple[str | None, str | None]:
    """(unit, why) from spend_by_role's rows of the two runs: ('US$', None) when every call was
    priced and both cost something; ('tokens', why) when both runs pay the same models in every
    role; else (None, the refusal)."""
    unit, reason = unit_of(spend_rows, [run_a, run_b])
    if unit == "US$":
        return unit, None
    models = [{(r["role"], r["model"]) for r in spend_rows if r["run_id"] == run_id} for run_id in (run_a, run_b)]
    if models[0] == models[1]:
        return "tokens", f"{reason}; both runs pay the same models"
    return None, REFUSAL


def frontier(run: RunChains, policy: str, unit: str) -> Frontier:
    """A run's frontier: seq@k cells, or a pass@k run's resample-until-success cells (and pass@m)."""
    return seq_frontier(run, policy, unit) if run.is_seq else pass_frontier(run, policy, unit, stopping=True)


def compare_runs(a: RunChains, b: RunChains, unit: str, *, errors_as_failures: bool = False,
                 seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> BudgetComparison:
    """Two runs' frontiers at equal spend in `unit` ('US$' or 'tokens')."""
    policy = value_policy(errors_as_failures)
    found = compare_at_equal_spend(frontier(a, policy, unit), frontier(b, policy, unit),
                                   name=f"compare-budget:{a.run_id}:{b.run_id}", seed=seed, n_boot=n_boot)
    out = BudgetComparison(unit, n_shared=found.n_shared, rows=found.rows, cells_a=found.cells_a,
                           cells_b=found.cells_b, crossover=crossover_of(found.rows),
                           band_critical=found.band_critical, a_better=found.a_better, b_better=found.b_better)
    if int(a.n_error.sum()) + int(b.n_error.sum()):
        others = [(frontier(a, other, unit), frontier(b, other, unit)) for other in ("failures", "successes")]
        if out.rows:
            budgets = [r.budget for r in out.rows]
            out.if_failures, out.if_successes = (point_differences(*sides, budgets) for sides in others)
        (fa, fb), (sa, sb) = (shared_figures(*sides) for sides in others)
        out.cells_a, out.cells_b = with_error_ranges(out.cells_a, fa, sa), with_error_ranges(out.cells_b, fb, sb)
    return out


def crossover_of(rows: Sequence[SpendRow]) -> Crossover | None:
    """The cross-over of a comparison's rows (budgets ascending), None when the estimated order never
    changes (module docstring)."""
    signed = [(r, float(np.sign(r.difference.value))) for r in rows
              if r.difference is not None and r.difference.value is not None]
    signed = [(r, s) for r, s in signed if s != 0]
    change = next((i for i in range(1, len(signed)) if signed[i][1] != signed[i - 1][1]), None)
    if change is None:
        return None
    first = signed[0][1]
    banded = [r for r in rows if r.band is not None]

    def ahead(r: SpendRow, sign: float) -> bool:
        assert r.band is not None
        return r.band[0] > 0 if sign > 0 else r.band[1] < 0

    low = next((r.budget for r in banded if not ahead(r, first)), signed[change][0].budget)
    high = next((r.budget for r in banded if ahead(r, -first)), None)
    led = any(ahead(r, first) for r in banded if high is None or r.budget < high)
    return Crossover(signed[change][0].budget, "a" if first > 0 else "b", min(low, signed[change][0].budget), high,
                     high is not None and led)


def summary(c: BudgetComparison) -> list[str]:
    """The cross-over and what the band settles, in words (the command line and the viewer)."""
    x = c.crossover
    if x is None:
        lines = ["cross-over: none (the estimated order is the same at every budget)"]
    else:
        after = "b" if x.before == "a" else "a"
        until = (f" and at or before {fmt_spend(x.high, c.unit)}" if x.high is not None else
                 f", if at all (the band never puts {after} ahead)")
        lines = [f"cross-over: {x.before} ahead below {fmt_spend(x.budget, c.unit)}, {after} from there (estimated); "
                 f"by the band, the order changes after {fmt_spend(x.low, c.unit)}{until}"
                 + ("" if x.established else ": not established")]
    ahead = [f"{side} ahead at {', '.join(fmt_spend(b, c.unit) for b in budgets)}"
             for side, budgets in (("a", c.a_better), ("b", c.b_better)) if budgets]
    return lines + ["by the band: " + ("; ".join(ahead) if ahead else "neither run ahead at any budget (no finding)")]


def equal_budget(run_a: str, run_b: str, spend_rows: Sequence[dict[str, Any]], chains: dict[str, RunChains], *,
                 errors_as_failures: bool = False, seed: int = DEFAULT_SEED,
                 n_boot: int = DEFAULT_N_BOOT) -> BudgetComparison:
    """The two runs at equal budget from their rows (spend_by_role's rows of both runs, or more;
    `chains`: both runs' rows, a run without attempts absent), or the refusal; remembered
    (seqk.analysis.memo). No SQL: the caller reads once what every part of `seqk compare` uses."""
    unit, reason = spend_unit(spend_rows, run_a, run_b)
    if unit is None:
        return BudgetComparison(None, refusal=reason)
    if run_a not in chains or run_b not in chains:
        return BudgetComparison(unit, unit_reason=reason)
    a, b = chains[run_a], chains[run_b]
    found = remembered("compare-budget", (a, b, unit, errors_as_failures, seed, n_boot), lambda: compare_runs(
        a, b, unit, errors_as_failures=errors_as_failures, seed=seed, n_boot=n_boot))
    found.unit_reason = reason
    return found


def to_dict(c: BudgetComparison) -> dict[str, Any]:
    """The JSON of `equal_budget`: {unit, points: [{budget, a: {value, cell}, b: {value, cell},
    difference: {value, low, high}, band: {low, high}}], crossover} and beside those each point's
    n, p and cells' spend, the refusal, the band's critical value, and every cell of both frontiers."""
    def side(f: CellFigure | None) -> dict[str, Any] | None:
        return None if f is None else {"value": f.value, "cell": {"width": f.width, "depth": f.depth},
                                       "spend": f.spend, "mix": None if f.mixed is None else dict(
                                           zip(("width", "depth", "share"), f.mixed, strict=True))}

    def cells(found: list[CellFigure]) -> list[dict[str, Any]]:
        return [{"width": f.width, "depth": f.depth, "value": f.value, "spend": f.spend, "n": f.n_tasks,
                 **({"value_if_failures": f.value_if_failures, "value_if_successes": f.value_if_successes}
                    if f.value_if_failures is not None or f.value_if_successes is not None else {})}
                for f in found]

    x = c.crossover
    return {
        "unit": c.unit, "refusal": c.refusal, "unit_reason": c.unit_reason, "n_shared": c.n_shared,
        "points": [{"budget": r.budget, "n": r.n_tasks, "a": side(r.a), "b": side(r.b),
                    "difference": None if r.difference is None else {
                        "value": r.difference.value, "low": r.difference.low, "high": r.difference.high},
                    "p_value": r.p_value,
                    "band": None if r.band is None else {"low": r.band[0], "high": r.band[1]},
                    **({"if_failures": c.if_failures[i], "if_successes": c.if_successes[i]} if c.if_failures else {})}
                   for i, r in enumerate(c.rows)],
        "crossover": None if x is None else {"budget": x.budget, "before": x.before, "low": x.low, "high": x.high,
                                             "established": x.established},
        "a_better": c.a_better, "b_better": c.b_better, "band_critical": c.band_critical,
        "cells": {"a": cells(c.cells_a), "b": cells(c.cells_b)},
    }
