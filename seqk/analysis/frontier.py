"""Feedback against resampling at equal budget, from the width x depth frontier (sql/views.sql
`frontier_of`).

For a seq@k run and its budget partner (a pass@k run of the same benchmark, slice, actor,
verifier and judge, with any k: the largest), at the spend per task of pass@1 .. pass@n: the
best (width, depth) of the seq@k run that costs no more, its value against pass@m, and the
difference on the tasks both runs count, with a paired task bootstrap (a task's chains and
samples are resampled together, since each task's value is computed from all of them). The
cell is chosen on the full data and held fixed in the resamples. Spend is in US$ when every
call of both runs was priced, else in tokens (input + output).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED, Estimate, Types, bootstrap, difference
from seqk.store import int_list, queries


@dataclass
class BudgetPoint:
    """One budget: pass@m's spend per task, and the best frontier cell of the seq@k run within it."""

    pass_width: int
    """m: the pass@k run's samples at this budget."""
    budget: float
    """pass@m's expected spend per task, in the comparison's unit."""
    pass_value: float | None
    """pass@m (Chen et al.'s estimator), over the pass@k run's tasks with at least m samples."""
    width: int | None = None
    """Chains of the best seq@k cell costing no more (None when even one attempt costs more)."""
    depth: int | None = None
    """Attempts per chain of that cell."""
    seq_value: float | None = None
    """That cell's value over the seq@k run's tasks that count there."""
    seq_spend: float | None = None
    """That cell's expected spend per task."""
    difference: Estimate | None = None
    """seq cell − pass@m on the tasks both count, with a 95% paired task-bootstrap interval."""


@dataclass
class EqualBudget:
    """A seq@k run against its budget partner at the spends of pass@1 .. pass@n."""

    seq_run_id: str
    pass_run_id: str
    pass_k: int
    n_candidates: int
    """How many pass@k runs could have been the partner (the largest k was chosen)."""
    unit: str
    """'US$' when every call of both runs was priced, else 'tokens'."""
    points: list[BudgetPoint] = field(default_factory=list)
    cells: list[dict[str, Any]] = field(default_factory=list)
    """What the charts plot: every frontier cell of both runs (series, width, depth, value, spend)
    and, for a seq@k cell, `relative`: its value over pass@k's at the same spend (interpolated
    between pass@m and pass@m+1; None outside pass@1 .. pass@n)."""


def equal_budget(con: Any, seq_run_ids: Sequence[str], *, errors_as_failures: bool = False,
                 seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> list[EqualBudget]:
    """The equal-budget comparison of each given seq@k run that has a budget partner."""
    results, bootstraps = equal_budget_reads(con, seq_run_ids, errors_as_failures=errors_as_failures,
                                             seed=seed, n_boot=n_boot)
    bootstraps()
    return results


def equal_budget_reads(con: Any, seq_run_ids: Sequence[str], *, errors_as_failures: bool = False,
                       seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT,
                       ) -> tuple[list[EqualBudget], Callable[[], None]]:
    """`equal_budget` in two steps: what it reads from the database, now, and a function that
    fills each point's difference by its bootstrap (most of the time, with no database), which
    a report calls on another thread while the database computes its other figures."""
    partners = queries.budget_partners(con, run_ids=list(seq_run_ids))
    if not partners:
        return [], lambda: None
    ids = sorted({p["seq_run_id"] for p in partners} | {p["pass_run_id"] for p in partners})
    cells: dict[str, list[dict[str, Any]]] = {}
    for row in queries.frontier_rows(con, errors_as_failures=errors_as_failures, run_ids=ids):
        cells.setdefault(row["run_id"], []).append(row)
    unpriced = {r["run_id"] for r in queries.spend_by_role(con, run_ids=ids)
                if r["n_unpriced_calls"] or r["cost_usd"] is None}
    out = []
    for p in partners:
        seq, pas = p["seq_run_id"], p["pass_run_id"]
        usd = not ({seq, pas} & unpriced)
        spend = "cost_usd_per_task" if usd else "tokens_per_task"
        result = EqualBudget(seq, pas, p["pass_k"], p["n_candidates"], "US$" if usd else "tokens")
        seq_cells = [c for c in cells.get(seq, []) if c["value"] is not None and c[spend] is not None]
        pass_cells = [c for c in sorted(cells.get(pas, []), key=lambda c: c["width"])
                      if c["value"] is not None and c[spend] is not None]
        result.cells = [{"series": "pass@k", "width": c["width"], "depth": 1, "value": c["value"],
                         "spend": c[spend], "relative": None} for c in pass_cells]
        for c in seq_cells:
            at = _pass_at_spend(pass_cells, spend, c[spend])
            result.cells.append({"series": f"seq@k depth {c['depth']}", "width": c["width"],
                                 "depth": c["depth"], "value": c["value"], "spend": c[spend],
                                 "relative": c["value"] / at if at else None})
        for pc in sorted(cells.get(pas, []), key=lambda c: c["width"]):
            if pc[spend] is None:  # nothing spent on record (a re-judging run's actor calls are its source's)
                continue
            point = BudgetPoint(pc["width"], pc[spend], pc["value"])
            # a hair of tolerance: equal spends computed by different sums must compare equal
            within = [c for c in seq_cells if c[spend] <= pc[spend] * (1 + 1e-9)]
            if within and pc["value"] is not None:
                best = max(within, key=lambda c: (c["value"], -c[spend]))
                point.width, point.depth = best["width"], best["depth"]
                point.seq_value, point.seq_spend = best["value"], best[spend]
            result.points.append(point)
        out.append(result)
    return out, _differences(con, out, errors_as_failures, seed, n_boot)


def _differences(con: Any, results: list[EqualBudget], errors_as_failures: bool, seed: int,
                 n_boot: int) -> Callable[[], None]:
    """A function that sets each point's seq − pass difference, bootstrapped over the tasks both
    cells count (their value pairs merged by the database, read here: a million attempts hold a
    million per-task values). Each bootstrap draws from its own seeded stream, so when and on
    which thread they run changes no figure."""
    points = [(r, p) for r in results for p in r.points if p.width is not None]
    cells = [(p.width, p.depth) for _, p in points if p.width is not None and p.depth is not None]
    if not points:
        return lambda: None
    types: dict[int, list[tuple[float, float, int]]] = {}
    for row in queries.equal_budget_types(
            con, errors_as_failures=errors_as_failures,
            seq_run_ids=json.dumps([r.seq_run_id for r, _ in points]),
            seq_widths=int_list(w for w, _ in cells), seq_depths=int_list(d for _, d in cells),
            pass_run_ids=json.dumps([r.pass_run_id for r, _ in points]),
            pass_widths=int_list(p.pass_width for _, p in points)):
        types.setdefault(row["point"], []).append((row["seq_value"], row["pass_value"], row["n_tasks"]))

    def bootstraps() -> None:
        for i, (r, p) in enumerate(points, start=1):
            p.difference = bootstrap(
                Types.from_rows(types.get(i, [])), difference(0, 1),
                name=f"equal-budget:{r.seq_run_id}:{p.pass_width}", seed=seed, n_boot=n_boot)

    return bootstraps


def _pass_at_spend(pass_cells: list[dict[str, Any]], spend: str, x: float) -> float | None:
    """pass@k's value at spend x per task, linear between the two pass@m around it."""
    for lo, hi in zip(pass_cells, pass_cells[1:], strict=False):
        if lo[spend] <= x <= hi[spend]:
            share = (x - lo[spend]) / (hi[spend] - lo[spend]) if hi[spend] > lo[spend] else 0.0
            return lo["value"] + share * (hi["value"] - lo["value"])
    if pass_cells and abs(x - pass_cells[0][spend]) <= 1e-9 * max(x, 1.0):
        return pass_cells[0]["value"]
    return None


def oracle_stopped(run: dict[str, Any]) -> bool:
    """Whether a seq@k run stops its chains on the verdict of the judge that also grades them:
    an LLM judge (Huang et al., ICLR 2024: part of such a gain is an oracle effect)."""
    return run["metric"] == "seq@k" and run["verifier"] == "llm"
