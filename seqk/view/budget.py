"""The equal-budget chart of the run list: for each seq@k run with a budget partner (a pass@k run
of the same benchmark, slice, actor, verifier and judge, the largest k; sql/frontier.sql
budget_partners), success against expected spend per task, for pass@m (m = 1..n) and for each
depth of the seq@k run's width x depth frontier, as in `seqk report`'s equal-budget block.

A run with one chain per task needs no frontier query: its frontier is its curve, and view_runs
gives each point's spend (`budget`). A seq@k run with several chains reads frontier_of.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from seqk.store import queries


@dataclass(frozen=True)
class SpendPoint:
    """The expected spend per task at the curve's point t, as frontier_of has it (seq@k: attempts
    1..t of one chain; pass@k: t samples)."""

    t: int
    cost_usd_per_task: float | None
    """NULL when no call of the run was priced."""
    tokens_per_task: float | None


@dataclass(frozen=True)
class BudgetPoint:
    """One cell of a frontier: its success and its expected spend per task."""

    width: int
    depth: int
    value: float
    spend: float
    n_tasks: int
    """Tasks the value is over."""


@dataclass(frozen=True)
class BudgetLine:
    """pass@m for m = 1..n (width grows), or one depth of the seq@k frontier (width grows)."""

    label: str
    points: list[BudgetPoint]
    is_pass: bool = False


@dataclass(frozen=True)
class BudgetChart:
    """A seq@k run against its budget partner at equal spend."""

    seq_run_id: str
    pass_run_id: str
    pass_k: int
    unit: str
    """'US$' when every call of both runs was priced (and they cost something), else 'tokens'
    (input + output)."""
    lines: list[BudgetLine] = field(default_factory=list)


class _Run(Protocol):
    """What the chart reads of a run (pages.RunSummary), read-only."""

    @property
    def run_id(self) -> str: ...
    @property
    def metric(self) -> str: ...
    @property
    def cost_usd(self) -> float | None: ...
    @property
    def n_unpriced_calls(self) -> int: ...
    @property
    def budget(self) -> list[SpendPoint] | None: ...
    @property
    def curve(self) -> Sequence[Any]: ...


def _cells_of_curve(run: _Run, usd: bool) -> list[dict[str, Any]]:
    spends = {p.t: p for p in run.budget or []}
    cells = []
    for p in run.curve:
        s = spends.get(p.t)
        spend = None if s is None else (s.cost_usd_per_task if usd else s.tokens_per_task)
        width, depth = (p.t, 1) if run.metric == "pass@k" else (1, p.t)
        cells.append({"width": width, "depth": depth, "value": p.value, "spend": spend, "n_tasks": p.n_tasks})
    return cells


def budget_charts(con: Any, runs: Sequence[_Run]) -> dict[str, BudgetChart]:
    """The chart of each seq@k run of `runs` whose budget partner is among `runs`, by seq run id."""
    by_id = {r.run_id: r for r in runs}
    seq_ids = [r.run_id for r in runs if r.metric == "seq@k"]
    partners = [p for p in queries.budget_partners(con, run_ids=seq_ids) if p["pass_run_id"] in by_id] \
        if seq_ids else []
    # several chains: the frontier has more widths than the curve has points
    multi = sorted({p["seq_run_id"] for p in partners if by_id[p["seq_run_id"]].budget is None})
    frontier: dict[str, list[dict[str, Any]]] = {}
    if multi:
        for row in queries.frontier_rows(con, errors_as_failures=False, run_ids=multi):
            frontier.setdefault(row["run_id"], []).append(row)
    charts = {}
    for p in partners:
        seq, pas = by_id[p["seq_run_id"]], by_id[p["pass_run_id"]]
        # as the report; but runs that cost nothing (free or local models) are drawn in tokens,
        # where a US$ axis would put every point at 0
        usd = all(r.n_unpriced_calls == 0 and r.cost_usd for r in (seq, pas))
        if seq.run_id in frontier:
            key = "cost_usd_per_task" if usd else "tokens_per_task"
            seq_cells = [{"width": c["width"], "depth": c["depth"], "value": c["value"],
                          "spend": c[key], "n_tasks": c["n_tasks"]} for c in frontier[seq.run_id]]
        else:
            seq_cells = _cells_of_curve(seq, usd)
        chart = BudgetChart(seq.run_id, pas.run_id, p["pass_k"], "US$" if usd else "tokens")
        pass_points = _points(_cells_of_curve(pas, usd))
        if pass_points:
            chart.lines.append(BudgetLine(f"pass@m, m = 1..{p['pass_k']}", pass_points, is_pass=True))
        depths = sorted({c["depth"] for c in seq_cells})
        if len({c["width"] for c in seq_cells}) == 1:  # one chain per task: one line over depths
            points = _points(seq_cells)
            if points:
                chart.lines.append(BudgetLine(f"seq@k, depth 1..{depths[-1]}", points))
        else:
            for d in depths:
                points = _points([c for c in seq_cells if c["depth"] == d])
                if points:
                    chart.lines.append(BudgetLine(f"seq@k depth {d}", points))
        if len(chart.lines) > 1:
            charts[seq.run_id] = chart
    return charts


def _points(cells: list[dict[str, Any]]) -> list[BudgetPoint]:
    return [BudgetPoint(c["width"], c["depth"], c["value"], c["spend"], c["n_tasks"])
            for c in sorted(cells, key=lambda c: (c["width"], c["depth"]))
            if c["value"] is not None and c["spend"] is not None]
