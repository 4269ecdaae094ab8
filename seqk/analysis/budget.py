"""Two frontiers compared at equal spend: for any two runs whose cells (a width x depth policy
each) have per-task values and expected spends (seqk/analysis/cells.py builds them), each side's
frontier at a budget, their difference, and how sure it is.

The estimand (docs/frontier.md): a side's frontier at a budget B is the best expected success a
policy of its cells reaches at an expected spend of at most B per task, where a policy may mix two
cells across tasks (run the dearer on a share of them): the upper concave envelope of its cells'
(spend, value) at B, from its cheapest cell to its best (extended dominance, as cost-effectiveness
frontiers are drawn). Unlike the best single cell within B, it is continuous in the cells' spends,
so a budget that sits on a cell's estimated spend does not put the figure on a jump: with the best
single cell, the simultaneous band covered the truth in 70-86% of simulated worlds where the runs
truly differ; with the envelope, 94-96% (bench/bench_band.py).

The procedure:
- Budgets: the spends of both sides' frontier vertices, from the cheapest budget at which both
  sides have a cell to the spend of the cheaper of the two sides' best cells (past it one side has
  nothing better to buy: its frontier ends where its samples or chains do).
- One task set per budget: the tasks both runs share (same task_index and content) on which every
  candidate cell of both sides is defined (each side's cells costing no more than B on all shared
  tasks, and its cheapest vertex dearer than B, which the envelope mixes in); every candidate's
  value and spend are recomputed there, and each side's frontier at B is taken over them (`at_budget`).
  n is printed per budget.
- Honest selection: a paired task bootstrap (a task's chains and samples together) recomputes
  every candidate's value and spend in each resample and takes both frontiers again; the
  pointwise percentile interval and its p-value come from those replicates
  (`stats.percentile_test`), and a simultaneous band over the budgets from the max-|t| of the
  studentised replicates (`stats.max_t_band`; Romano & Wolf 2005). A side is better at B only
  where the band excludes 0.
- A budget whose task set has fewer than stats.MIN_BOOTSTRAP_TASKS tasks (or tasks that all look
  alike) has no interval: "too few tasks".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from seqk.analysis.draws import draw, same_rows, shared_tasks
from seqk.analysis.envelope import (
    AtBudget,
    affordable,
    at_budget,
    frontier_value,
    frontier_vertices,
    vertex_budgets,
)
from seqk.stats import (
    DEFAULT_N_BOOT,
    DEFAULT_SEED,
    MIN_BOOTSTRAP_TASKS,
    Estimate,
    group_rows,
    max_t_band,
    percentile_test,
    rng_for,
)

DRAWN_AT_ONCE = 1 << 22
"""Tasks drawn by index per batch of resamples (32 MB of indices): 2,000 resamples of 28,500
tasks at once were 57 M indices, 0.5 GB, and as much again for their types."""


@dataclass(frozen=True)
class Cell:
    """One policy of a frontier (w chains of at most d attempts) and where it is defined."""

    width: int
    depth: int
    defined: np.ndarray
    """Per task of the side: the cell has a value there."""


@dataclass(frozen=True)
class Frontier:
    """One side of a comparison: a run's cells over its tasks (features are 0 where a cell is
    undefined; a task set never holds such a task for a cell it asks about)."""

    run_id: str
    keys: np.ndarray
    """Per task: 'task_index/content_hash'."""
    features: np.ndarray
    cells: list[Cell]
    evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    """Feature means (shape (B, features)) -> every cell's value and expected spend per task
    (each shape (B, cells), in the order of `cells`)."""
    pooled: np.ndarray | None = None
    """Features that estimate what every task shares (the survival curve, the censoring, the mean
    spend of an attempt): on a cell's own figure they are averaged over every task of the set,
    not only those where the cell is defined (in a budget row the two are the same)."""
    rows_of: np.ndarray | None = None
    """Per task of `keys`: its row of features and cells (tasks of one type share one, cells.typed)."""
    counts: np.ndarray | None = None
    """Per row: how many tasks it stands for (None: one each)."""


@dataclass(frozen=True)
class CellFigure:
    """A cell's value and spend on a set of tasks (at a budget: the side's frontier there)."""

    width: int
    depth: int
    value: float
    spend: float
    n_tasks: int
    mixed: tuple[int, int, float] | None = None
    """At a budget between two vertices of the side's frontier: (width, depth, share) of the dearer
    cell, run on that share of the tasks and this one on the rest so that the expected spend is the
    budget; value and spend are then the mixture's. None: this cell alone."""
    value_if_failures: float | None = None
    """Where the runs have errors: the cell's value with every errored attempt (sample) counted as
    a failure (`with_error_ranges`); None without errors."""
    value_if_successes: float | None = None
    """The same with every errored attempt counted as a success at its index."""


@dataclass
class SpendRow:
    """One budget: each side's best cell within it on the row's tasks, and a − b."""

    budget: float
    n_tasks: int
    """Shared tasks on which every candidate cell of both sides is defined."""
    a: CellFigure | None = None
    b: CellFigure | None = None
    difference: Estimate | None = None
    """a − b with its 95% pointwise interval (the cells chosen again in every resample)."""
    p_value: float | None = None
    band: tuple[float, float] | None = None
    """The simultaneous 95% band over the comparison's budgets."""


@dataclass
class EqualSpend:
    """Side a against side b at equal spend."""

    a_run_id: str
    b_run_id: str
    n_shared: int
    rows: list[SpendRow] = field(default_factory=list)
    cells_a: list[CellFigure] = field(default_factory=list)
    """Every cell of a on the shared tasks where it is defined."""
    cells_b: list[CellFigure] = field(default_factory=list)
    band_critical: float | None = None
    """c of the band: each row's difference ± c bootstrap standard errors."""

    @property
    def a_better(self) -> list[float]:
        """Budgets where the band lies above 0."""
        return [r.budget for r in self.rows if r.band is not None and r.band[0] > 0]

    @property
    def b_better(self) -> list[float]:
        """Budgets where the band lies below 0."""
        return [r.budget for r in self.rows if r.band is not None and r.band[1] < 0]

    @property
    def crossover(self) -> float | None:
        """The first budget at which the estimated order of the two sides changes (None if it
        never does): a point estimate, read with the band."""
        signs = [(r.budget, np.sign(r.difference.value)) for r in self.rows
                 if r.difference is not None and r.difference.value is not None]
        signs = [(b, s) for b, s in signs if s != 0]
        for (_, before), (budget, after) in zip(signs, signs[1:], strict=False):
            if after != before:
                return budget
        return None


def _figures(side: Frontier, rows: np.ndarray) -> list[CellFigure]:
    """Every cell's value and spend on `rows`, where it is defined (the shared estimates, the
    `pooled` features, over every row)."""
    if not rows.any():
        return []
    shared = _mean(side, rows)
    masks = [rows & c.defined for c in side.cells]
    same: dict[bytes, list[int]] = {}  # cells defined on the same tasks share their means
    for i, mask in enumerate(masks):
        same.setdefault(mask.tobytes(), []).append(i)
    found: dict[int, CellFigure] = {}
    for members in same.values():
        mask = masks[members[0]]
        if not mask.any():
            continue
        means = (shared.copy() if np.array_equal(mask, rows) else _mean(side, mask))[None, :]
        if side.pooled is not None:
            means[0, side.pooled] = shared[side.pooled]
        values, spends = side.evaluate(means)
        for i in members:
            c = side.cells[i]
            found[i] = CellFigure(c.width, c.depth, float(values[0, i]), float(spends[0, i]), _tasks(side, mask))
    return [found[i] for i in sorted(found)]


def _mean(side: Frontier, rows: np.ndarray) -> np.ndarray:
    """The mean features of the tasks in `rows`: features[rows].mean(axis=0), without the copy when
    every row is in (the same sums: a C-contiguous array is summed row after row either way); over
    types, each row weighted by its count."""
    features = side.features
    if side.counts is not None:
        weights = side.counts[rows].astype(float)
        return (weights @ features[rows]) / weights.sum()
    if features.flags.c_contiguous and rows.all():
        return features.mean(axis=0)
    return features[rows].mean(axis=0)


def _tasks(side: Frontier, rows: np.ndarray) -> int:
    """How many tasks `rows` stand for."""
    return int(rows.sum() if side.counts is None else side.counts[rows].sum())


def compare_at_equal_spend(a: Frontier, b: Frontier, *, name: str, seed: int = DEFAULT_SEED,
                           n_boot: int = DEFAULT_N_BOOT, alpha: float = 0.05) -> EqualSpend:
    """Side a against side b at equal spend on their shared tasks (module docstring)."""
    sides = _shared_sides(a, b)
    everywhere = np.ones(len(sides[0].keys), dtype=bool)
    out = EqualSpend(a.run_id, b.run_id, _tasks(sides[0], everywhere))
    if not len(sides[0].keys):
        return out
    out.cells_a, out.cells_b = _figures(sides[0], everywhere), _figures(sides[1], everywhere)
    hulls = [frontier_vertices(out.cells_a), frontier_vertices(out.cells_b)]
    plans = [(budget, *_plan(sides, [out.cells_a, out.cells_b], budget, hulls))
             for budget in vertex_budgets(out.cells_a, out.cells_b)]
    if not plans:
        return out
    resampled = _Resampled(sides, [rows for _, _, rows in plans], rng_for(seed, name), n_boot)
    replicates, points = [], []
    for r, (budget, candidates, rows) in enumerate(plans):
        row = SpendRow(budget, _tasks(sides[0], rows))
        out.rows.append(row)
        if not rows.any() or not all(candidates):
            replicates.append(np.full(n_boot, np.nan))
            points.append(np.nan)
            continue
        fronts = [at_budget(values[:, chosen], spends[:, chosen], budget)
                  for (values, spends), chosen in zip(resampled.cells(r), candidates, strict=True)]
        va, vb = (f.value[:1] for f in fronts)
        for side_index, f in enumerate(fronts):
            if not np.isnan(f.value[0]):
                figure = _figure_at(sides[side_index], candidates[side_index], f, row.n_tasks)
                row.a, row.b = (figure, row.b) if side_index == 0 else (row.a, figure)
        point = float(va[0] - vb[0])
        draws = fronts[0].value[1:] - fronts[1].value[1:]
        points.append(point)
        too_few = row.n_tasks < MIN_BOOTSTRAP_TASKS or resampled.n_types(r) < 2
        if np.isnan(point):
            replicates.append(np.full(n_boot, np.nan))
            continue
        defined = draws[~np.isnan(draws)]
        found = None if too_few or len(defined) < n_boot / 2 else percentile_test(defined, alpha)
        if found is None:
            row.difference = Estimate(point, None, None, row.n_tasks, too_few_tasks=too_few)
            replicates.append(np.full(n_boot, np.nan))
            continue
        low, high, p_value = found
        row.difference, row.p_value = Estimate(point, low, high, row.n_tasks), p_value
        replicates.append(draws)
    _band(out, np.array(points), np.column_stack(replicates), alpha)
    return out


class _Resampled:
    """Both sides' cells on each budget row's tasks, for the data and each of the n_boot resamples
    of the shared tasks (drawn once, as counts per task type, from `rng`).

    Tasks in the same rows are one atom; tasks of one atom with the same features are one type.
    A row's feature means add up its atoms' sums, and its cells are evaluated once per distinct
    set of tasks: budgets that share their task set (most do) share their cells."""

    def __init__(self, sides: list[Frontier], rows: list[np.ndarray], rng: np.random.Generator,
                 n_boot: int) -> None:
        self.sides, self.split = sides, sides[0].features.shape[1]
        features = np.hstack([sides[0].features, sides[1].features])
        # rows that are types already (cells.typed) are grouped exactly, weighted by their counts
        group = group_rows if sides[0].counts is None else same_rows
        atoms, atom_of, _ = group(np.column_stack(rows).astype(float))
        self.atoms = atoms.astype(bool)
        types, type_of, counts = group(np.column_stack([atom_of, features]))
        if sides[0].counts is not None:
            counts = np.bincount(type_of, weights=sides[0].counts, minlength=len(types)).astype(np.int64)
        self.type_atom = types[:, 0].astype(int)
        type_features = types[:, 1:]
        drawn = _draw(rng, counts, n_boot)
        # sums and counts per atom, for the data and each resample: a row's means add up its atoms
        in_atom = [self.type_atom == a for a in range(len(self.atoms))]
        self.sums, self.sizes = [], []
        for weights in (counts[None, :].astype(float), drawn):
            parts = [(weights, type_features) if t.all() else (weights[:, t], type_features[t]) for t in in_atom]
            self.sums.append(np.stack([w @ f for w, f in parts]))
            self.sizes.append(np.stack([w.sum(axis=1) for w, _ in parts]))
        self.evaluated: dict[bytes, list[tuple[np.ndarray, np.ndarray]]] = {}

    def n_types(self, r: int) -> int:
        """Distinct task types in row r."""
        return int(self.atoms[self.type_atom, r].sum())

    def cells(self, r: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each side's (values, spends) of every cell on row r's tasks, each shape (1 + n_boot,
        cells): the data's first, then each resample's."""
        in_row = self.atoms[:, r]
        key = in_row.tobytes()
        if key not in self.evaluated:
            with np.errstate(divide="ignore", invalid="ignore"):
                means = np.concatenate([total[in_row].sum(axis=0) / size[in_row].sum(axis=0)[:, None]
                                        for total, size in zip(self.sums, self.sizes, strict=True)])
            self.evaluated[key] = [self.sides[0].evaluate(means[:, :self.split]),
                                   self.sides[1].evaluate(means[:, self.split:])]
        return self.evaluated[key]


def point_differences(a: Frontier, b: Frontier, budgets: list[float]) -> list[float | None]:
    """a − b at each budget as compare_at_equal_spend estimates it (each side's frontier at the
    budget over its candidates, on the row's tasks), without the bootstrap: what the frontiers give
    when errors are read another way (the range beside each row). None where a budget has no cell
    of a side."""
    sides = _shared_sides(a, b)
    everywhere = np.ones(len(sides[0].keys), dtype=bool)
    full = [_figures(side, everywhere) for side in sides]
    # budgets with the same tasks share their cells (most rows are every shared task)
    on_rows: list[dict[bytes, list[CellFigure]]] = [{everywhere.tobytes(): cells} for cells in full]
    hulls = [frontier_vertices(cells) for cells in full]
    out: list[float | None] = []
    for budget in budgets:
        candidates, rows = _plan(sides, full, budget, hulls)
        best = []
        for side, chosen, known in zip(sides, candidates, on_rows, strict=True):
            wanted = {(side.cells[i].width, side.cells[i].depth) for i in chosen}
            key = rows.tobytes()
            if key not in known:
                known[key] = _figures(side, rows) if rows.any() else []
            figures = [f for f in known[key] if (f.width, f.depth) in wanted]
            best.append(frontier_value(figures, budget) if figures else None)
        out.append(best[0] - best[1] if best[0] is not None and best[1] is not None else None)
    return out


def shared_figures(a: Frontier, b: Frontier) -> tuple[list[CellFigure], list[CellFigure]]:
    """Every cell of each side on the tasks both share, where it is defined (what
    compare_at_equal_spend reports as cells_a and cells_b)."""
    sides = _shared_sides(a, b)
    everywhere = np.ones(len(sides[0].keys), dtype=bool)
    return _figures(sides[0], everywhere), _figures(sides[1], everywhere)


def _figure_at(side: Frontier, candidates: list[int], found: AtBudget, n_tasks: int) -> CellFigure:
    """The point estimate's frontier at a budget (replicate 0 of `found`) as a CellFigure."""
    cell = side.cells[candidates[int(found.cell[0])]]
    mixed = None
    if found.mixed[0] >= 0:
        dearer = side.cells[candidates[int(found.mixed[0])]]
        mixed = (dearer.width, dearer.depth, float(found.share[0]))
    return CellFigure(cell.width, cell.depth, float(found.value[0]), float(found.spend[0]), n_tasks, mixed)


def _shared_sides(a: Frontier, b: Frontier) -> list[Frontier]:
    """Both sides restricted to the tasks they share, in the same order; sides grouped into types
    (`rows_of`) give one row per pair of types, with its count of tasks."""
    ia, ib = shared_tasks(a.keys, b.keys)
    if a.rows_of is not None or b.rows_of is not None:
        ta = ia if a.rows_of is None else a.rows_of[ia]
        tb = ib if b.rows_of is None else b.rows_of[ib]
        pairs, counts = np.unique(ta.astype(np.int64) * len(b.features) + tb, return_counts=True)
        ja, jb, keys = pairs // len(b.features), pairs % len(b.features), np.arange(len(pairs))
        return [Frontier(a.run_id, keys, a.features[ja], [_on(c, ja) for c in a.cells], a.evaluate, a.pooled,
                         None, counts),
                Frontier(b.run_id, keys, b.features[jb], [_on(c, jb) for c in b.cells], b.evaluate, b.pooled,
                         None, counts)]
    shared = a.keys[ia]
    return [Frontier(a.run_id, shared, a.features[ia], [_on(c, ia) for c in a.cells], a.evaluate, a.pooled),
            Frontier(b.run_id, shared, b.features[ib], [_on(c, ib) for c in b.cells], b.evaluate, b.pooled)]


def _plan(sides: list[Frontier], full: list[list[CellFigure]], budget: float,
          vertices: list[list[CellFigure]] | None = None) -> tuple[list[list[int]], np.ndarray]:
    """One budget's candidates (each side's cells costing no more than it on every shared task
    where defined, and the side's cheapest frontier vertex dearer than it, which the frontier
    mixes in between vertices) and its row of tasks (those on which every candidate of both sides
    is defined). `vertices`: each side's frontier_vertices(full[side]), the same at every budget
    (computed here when not given)."""
    candidates = []
    for s, (side, figures) in enumerate(zip(sides, full, strict=True)):
        found = {(c.width, c.depth): c for c in figures}
        hull = vertices[s] if vertices is not None else frontier_vertices(figures)
        dearer = [c for c in hull if not affordable(np.array(c.spend), budget)]
        within = affordable(np.array([c.spend for c in figures]), budget)
        wanted = {(c.width, c.depth) for c, ok in zip(figures, within, strict=True) if ok}
        wanted |= {(dearer[0].width, dearer[0].depth)} if dearer and wanted else set()
        candidates.append([i for i, c in enumerate(side.cells) if (c.width, c.depth) in wanted and
                           (c.width, c.depth) in found])
    rows = np.ones(len(sides[0].keys), dtype=bool)
    for side, chosen in zip(sides, candidates, strict=True):
        for i in chosen:
            rows &= side.cells[i].defined
    return candidates, rows


def _on(cell: Cell, rows: np.ndarray) -> Cell:
    return Cell(cell.width, cell.depth, cell.defined[rows])


def _draw(rng: np.random.Generator, counts: np.ndarray, n_boot: int) -> np.ndarray:
    """n_boot resamples of the tasks as counts per type (draws.draw, DRAWN_AT_ONCE tasks a batch)."""
    return draw(rng, counts, n_boot, DRAWN_AT_ONCE)


def _band(out: EqualSpend, points: np.ndarray, replicates: np.ndarray, alpha: float) -> None:
    """The simultaneous band over the rows that have an interval."""
    with_interval = [i for i, r in enumerate(out.rows) if r.p_value is not None]
    if not with_interval:
        return
    band = max_t_band(points[with_interval], replicates[:, with_interval], alpha)
    if band is None:
        return
    out.band_critical = band.critical
    for j, i in enumerate(with_interval):
        out.rows[i].band = (float(band.low[j]), float(band.high[j]))
