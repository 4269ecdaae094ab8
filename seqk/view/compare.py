"""The data of the viewer's compare pages: `/compare/<a>/<b>` (both runs' curves and frontiers, the
paired difference at each t, the flips, filterable) and `/compare/<a>/<b>/tasks/<n>` (the two
stories of one task side by side, attempt by attempt). Built on `seqk compare`'s analysis
(seqk/analysis/compare.py), so the page and the command line show the same figures."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from seqk import store
from seqk.analysis.budget import CellFigure
from seqk.analysis.compare import Flip, RunComparison, compare
from seqk.errors import NotFound
from seqk.store import queries
from seqk.view.budget import BudgetLine, BudgetPoint
from seqk.view.pages import WAIT_S
from seqk.view.story import AttemptView, read_attempts

FLIP_FILTERS: dict[str, str] = {
    "flips": "every flip",
    "a_only": "solved by a only",
    "b_only": "solved by b only",
}
"""The flip list's filters, by the name the URL carries."""


@dataclass(frozen=True)
class Frontier:
    """A run's frontier cells as lines of success against expected spend per task."""

    run_id: str
    lines: list[BudgetLine]


@dataclass(frozen=True)
class ComparePage:
    """`/compare/<a>/<b>`."""

    comparison: RunComparison
    filter: str
    search: str
    flips: list[Flip]
    """The flips the filter and the search keep, a's first."""
    unit: str | None
    """'US$' or 'tokens': the spend both frontiers are drawn against; None when they cannot share
    an axis (`refusal` says why)."""
    frontiers: list[Frontier] = field(default_factory=list)
    refusal: str | None = None

    @property
    def a(self) -> str:
        return self.comparison.a.run.run_id

    @property
    def b(self) -> str:
        return self.comparison.b.run.run_id


def bundle_key(run_a: str, run_b: str) -> str:
    """The folder of a pair's compare pages in a static bundle (a run id's `/` cannot be in a file's
    name): a short hash of the pair, in order."""
    import hashlib

    return hashlib.sha256(f"{run_a}\n{run_b}".encode()).hexdigest()[:16]


def compare_page(run_a: str, run_b: str, db: store.DbLike = None, *, filter: str = "flips",
                 search: str = "") -> ComparePage:
    """Two runs side by side (exact ids), their flips filtered ('flips', 'a_only', 'b_only') and
    searched by task id. The frontiers are the cells `seqk compare` matches at equal spend."""
    _check(filter)  # before the work
    comparison = compare(run_a, run_b, db)
    budget = comparison.equal_budget
    frontiers: list[Frontier] = []
    if budget.unit is not None:
        for side, cells in ((comparison.a, budget.cells_a), (comparison.b, budget.cells_b)):
            frontiers.append(Frontier(side.run.run_id, _lines(side.run.metric, cells)))
    return filtered(ComparePage(comparison, "flips", "", [], budget.unit, frontiers, budget.refusal), filter, search)


def filtered(page: ComparePage, filter: str, search: str = "") -> ComparePage:
    """The same page with its flip list filtered ('flips', 'a_only', 'b_only') and searched (a task id
    holding the text, or the task index)."""
    _check(filter)
    f = page.comparison.flips
    flips = {"flips": f.a_only + f.b_only, "a_only": f.a_only, "b_only": f.b_only}[filter]
    needle = search.strip().lower()
    kept = [x for x in flips if needle in x.task_id.lower() or needle == str(x.task_index)] if needle else flips
    return dataclasses.replace(page, filter=filter, search=search.strip(), flips=kept)


def _check(filter: str) -> None:
    if filter not in FLIP_FILTERS:
        raise NotFound(f"no flip filter named {filter!r}; the filters are {', '.join(FLIP_FILTERS)}")


def _lines(metric: str, found: list[CellFigure]) -> list[BudgetLine]:
    """A run's cells as lines: a seq@k run's one line per depth across its chains (one line when it
    has one chain); a pass@k run's pass@m (depth 1) and one line per depth of resampling until success."""
    cells = [BudgetPoint(c.width, c.depth, c.value, c.spend, c.n_tasks) for c in found]
    if not cells:
        return []
    depths = sorted({c.depth for c in cells})
    if metric == "pass@k":
        top = max(c.width for c in cells if c.depth == 1)
        lines = [BudgetLine(f"pass@m, m = 1..{top}" if top > 1 else "pass@1",
                            [c for c in cells if c.depth == 1], is_pass=True)]
        return lines + [BudgetLine(f"until success, depth {d}", [c for c in cells if c.depth == d])
                        for d in depths if d > 1]
    if len({c.width for c in cells}) == 1:
        return [BudgetLine(f"depth 1..{max(depths)}", sorted(cells, key=lambda c: c.depth))]
    return [BudgetLine(f"depth {d}", [c for c in cells if c.depth == d]) for d in depths]


@dataclass(frozen=True)
class SlotRow:
    """One row of the side-by-side story: attempt `attempt_index` of chain `chain_index` in each run
    (a pass@k run's samples in order down its one column; superseded error rows kept)."""

    chain_index: int
    attempt_index: int
    a: list[AttemptView]
    b: list[AttemptView]


@dataclass(frozen=True)
class CompareTaskPage:
    """`/compare/<a>/<b>/tasks/<n>`: one task's two stories side by side."""

    runs: tuple[dict[str, Any], dict[str, Any]]
    task_index: int
    task_id: str
    prompt: str
    same_task: bool
    """False when b holds other content under this index: not the same task, nothing shown for b."""
    rows: list[SlotRow]
    first_success: tuple[int | None, int | None]


def compare_task_page(run_a: str, run_b: str, task_index: int, db: store.DbLike = None) -> CompareTaskPage:
    """The task's attempts in both runs, row by row (chain, attempt), read in one open."""
    with store.connect(db, read_only=True, wait_s=WAIT_S) as con:
        runs = [store.get_run(con, run_id) for run_id in (run_a, run_b)]
        for run_id, run in zip((run_a, run_b), runs, strict=True):
            if run is None:
                raise NotFound(f"no run {run_id!r} in {store.open(db)}")
        found = queries.find_task(con, run_id=run_a, task_index=task_index, task_id=None)
        if not found:
            raise NotFound(f"run {run_a} has no task {task_index}")
        task = found[0]
        same = (store.task_identities(con, run_a).get(task_index, (None, None))[1]
                == store.task_identities(con, run_b).get(task_index, (None, ""))[1])
        a_attempts = read_attempts(con, run_a, task_index, task["prompt"])
        b_attempts = read_attempts(con, run_b, task_index, task["prompt"]) if same else []
    slots: dict[tuple[int, int], SlotRow] = {}
    for side, attempts in (("a", a_attempts), ("b", b_attempts)):
        for attempt in attempts:
            key = (attempt.row["chain_index"], attempt.row["attempt_index"])
            row = slots.setdefault(key, SlotRow(key[0], key[1], [], []))
            (row.a if side == "a" else row.b).append(attempt)

    def first(attempts: list[AttemptView]) -> int | None:
        return min((x.row["attempt_index"] for x in attempts if x.row["counts"] and x.row["success"]), default=None)

    return CompareTaskPage((runs[0] or {}, runs[1] or {}), task_index, task["task_id"], task["prompt"], same,
                           [slots[k] for k in sorted(slots)], (first(a_attempts), first(b_attempts)))
