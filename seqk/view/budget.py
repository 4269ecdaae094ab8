"""The equal-budget chart of the run list: for each seq@k run with a budget partner (a pass@k run
of the same benchmark, slice, actor, verifier and judge, the largest k; sql/frontier.sql
budget_partners), success against expected spend per task, for the partner resampling until
success (the vertices of its frontier under mixing, the upper concave envelope of its width x
depth cells that the report's equal-budget block compares at, seqk.analysis.budget: a partner that
stops at its first success, as seq@k does; pass@m, which never stops, would favour seq@k, issue 27) and for
each depth of the seq@k run's width x depth frontier, as in `seqk report`'s resample-until-success
block: the cells of frontier_of (errors censor a chain, every run), with each cell's spend.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from seqk.analysis.envelope import frontier_vertices
from seqk.store import queries


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
    def curve(self) -> Sequence[Any]: ...


def chart_partners(con: Any, runs: Sequence[_Run]) -> list[dict[str, Any]]:
    """The budget partner of each seq@k run of `runs` (budget_partners rows) that is among `runs`."""
    by_id = {r.run_id for r in runs}
    seq_ids = [r.run_id for r in runs if r.metric == "seq@k"]
    return [p for p in queries.budget_partners(con, run_ids=seq_ids) if p["pass_run_id"] in by_id] \
        if seq_ids else []


def budget_charts(con: Any, runs: Sequence[_Run],
                  partners: Sequence[dict[str, Any]] | None = None) -> dict[str, BudgetChart]:
    """The chart of each seq@k run of `runs` whose budget partner is among `runs`, by seq run id
    (only those of `partners`, chart_partners rows, when given)."""
    by_id = {r.run_id: r for r in runs}
    partners = chart_partners(con, runs) if partners is None else partners
    frontier: dict[str, list[dict[str, Any]]] = {}
    ids = sorted({i for p in partners for i in (p["seq_run_id"], p["pass_run_id"])})
    if ids:
        for row in queries.frontier_rows(con, errors_as_failures=False, run_ids=ids):
            if row["run_id"] in by_id:
                frontier.setdefault(row["run_id"], []).append(row)
    charts = {}
    for p in partners:
        seq, pas = by_id[p["seq_run_id"]], by_id[p["pass_run_id"]]
        # as the report: runs that cost nothing (free or local models) are drawn in tokens, where a
        # US$ axis would put every point at 0
        usd = all(r.n_unpriced_calls == 0 and r.cost_usd for r in (seq, pas))
        key = "cost_usd_per_task" if usd else "tokens_per_task"
        seq_cells, pass_cells = ([{"width": c["width"], "depth": c["depth"], "value": c["value"],
                                   "spend": c[key], "n_tasks": c["n_tasks"]} for c in frontier.get(r.run_id, [])]
                                 for r in (seq, pas))
        chart = BudgetChart(seq.run_id, pas.run_id, p["pass_k"], "US$" if usd else "tokens")
        pass_points = frontier_vertices(_points(pass_cells))
        if pass_points:
            chart.lines.append(BudgetLine(f"resample until success (pass@{p['pass_k']}'s samples)",
                                          pass_points, is_pass=True))
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
