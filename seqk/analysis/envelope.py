"""A side's frontier under mixing, the estimand of every equal-budget figure (docs/frontier.md):
the upper concave envelope of its cells' (expected spend, expected value), from its cheapest cell
to its best. At a budget between two vertices the best expected value is the mixture of the two
(the dearer run on a share of the tasks) that spends the budget (extended dominance, as
cost-effectiveness frontiers are drawn); `at_budget` takes it per bootstrap replicate.
seqk/analysis/budget.py compares two sides with it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

import numpy as np

TOLERANCE = 1e-9
"""Relative: equal spends computed by different sums compare equal."""


class Point(Protocol):
    """Anything with a spend and a value (a CellFigure, a chart's point)."""

    @property
    def spend(self) -> float: ...

    @property
    def value(self) -> float: ...


P = TypeVar("P", bound=Point)


def frontier_vertices(cells: Sequence[P]) -> list[P]:
    """The vertices of a side's frontier under mixing: the upper concave envelope of its cells'
    (spend, value) from its cheapest cell to its best (extended dominance). At a budget between two
    vertices the best expected value is the mixture of the two that spends the budget. Of cells
    of the same spend the best counts; of collinear ones only the ends."""
    ordered = sorted(cells, key=lambda c: (c.spend, -c.value))
    if not ordered:
        return []
    out = [ordered[0]]
    while True:
        here = out[-1]
        dearer = [c for c in ordered if c.spend > here.spend * (1 + TOLERANCE) + 1e-15
                  and c.value > here.value + 1e-12]
        if not dearer:
            return out
        slopes = [(c.value - here.value) / (c.spend - here.spend) for c in dearer]
        steepest = max(slopes)
        out.append(max((c for c, s in zip(dearer, slopes, strict=True) if s >= steepest * (1 - 1e-12)),
                       key=lambda c: c.spend))


def frontier_value(cells: Sequence[Point], budget: float) -> float | None:
    """A side's frontier at the budget from its cells' figures: the best cell within it or the
    mixture of two that spends it (`at_budget`); None when every cell costs more."""
    found = at_budget(np.array([[c.value for c in cells]]), np.array([[c.spend for c in cells]]), budget)
    return None if np.isnan(found.value[0]) else float(found.value[0])


def affordable(spends: np.ndarray, budget: float) -> np.ndarray:
    return spends <= budget * (1 + TOLERANCE) + 1e-15


@dataclass(frozen=True)
class AtBudget:
    """Each replicate's frontier at one budget, over a side's candidate cells (`at_budget`)."""

    value: np.ndarray
    """The best expected value within the budget; NaN where no candidate is within it."""
    cell: np.ndarray
    """The candidate run alone, or the cheaper of the two mixed."""
    mixed: np.ndarray
    """The dearer candidate mixed in; -1 where `cell` runs alone."""
    share: np.ndarray
    """The share of tasks given to `mixed` (0 where `cell` runs alone)."""
    spend: np.ndarray
    """The expected spend: `cell`'s alone, the budget where two are mixed."""


def at_budget(values: np.ndarray, spends: np.ndarray, budget: float) -> AtBudget:
    """Each replicate's frontier at the budget from its candidates' values and spends (each shape
    (B, candidates)): the best candidate within it (ties: the cheaper) or, where better, the
    mixture of one within it and one dearer whose expected spend is the budget. The frontier under
    mixing is continuous in the spends, so a cell whose spend straddles the budget across
    resamples moves the figure a little, not by a jump."""
    within = affordable(spends, budget)
    masked = np.where(within, values, -np.inf)
    top = masked.max(axis=1)
    ties = masked >= top[:, None] - 1e-12
    cell = np.argmin(np.where(ties, spends, np.inf), axis=1)
    rows = np.arange(len(values))
    value, spend = top.copy(), spends[rows, cell].astype(float)
    mixed, share = np.full(len(values), -1), np.zeros(len(values))
    dearer = ~within & np.isfinite(values)
    for j in np.flatnonzero(dearer.any(axis=0)):
        with np.errstate(divide="ignore", invalid="ignore"):
            on_j = (budget - spends) / (spends[:, j:j + 1] - spends)  # share on j, per cheaper cell
            mix = np.where(within & dearer[:, j:j + 1], values + on_j * (values[:, j:j + 1] - values), -np.inf)
        cheaper = np.argmax(mix, axis=1)
        best = mix[rows, cheaper]
        better = best > value + 1e-12
        value, spend = np.where(better, best, value), np.where(better, budget, spend)
        cell, mixed = np.where(better, cheaper, cell), np.where(better, j, mixed)
        share = np.where(better, on_j[rows, cheaper], share)
    found = np.isfinite(top)
    return AtBudget(np.where(found, value, np.nan), cell, mixed, share, np.where(found, spend, np.nan))


def vertex_budgets(a: Sequence[Point], b: Sequence[Point]) -> list[float]:
    """The spends of both sides' frontier vertices (`frontier_vertices`), from the cheapest budget at which
    both sides have a cell to the spend of the side whose best cell is the cheaper (past it that
    side has no better cell to buy: its frontier is truncated by its samples, and a difference
    there would be about that, not about spend)."""
    if not a or not b:
        return []
    ha, hb = frontier_vertices(a), frontier_vertices(b)
    low = max(ha[0].spend, hb[0].spend)
    high = min(ha[-1].spend, hb[-1].spend)
    spends = sorted(c.spend for c in ha + hb if low * (1 - TOLERANCE) <= c.spend <= high * (1 + TOLERANCE))
    out: list[float] = []
    for s in spends:
        if not out or s > out[-1] * (1 + TOLERANCE) + 1e-15:
            out.append(s)
    return out


def with_error_ranges(cells: list[Any], if_failures: list[Any], if_successes: list[Any]) -> list[Any]:
    """`cells` with each one's value read with errors as failures and as successes (the same
    cells of the two other readings, matched by width and depth; spend does not change with the
    reading: errors are the provider's, not the policy's)."""
    ends = [{(c.width, c.depth): c.value for c in found} for found in (if_failures, if_successes)]
    return [replace(c, value_if_failures=ends[0].get((c.width, c.depth)),
                    value_if_successes=ends[1].get((c.width, c.depth))) for c in cells]
