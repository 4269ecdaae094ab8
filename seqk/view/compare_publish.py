"""The compare pages of a static bundle (`seqk view --bundle`): for each pair of bundled runs of one
benchmark slice, its compare page under each flip filter, and the side-by-side story of each flip
among the first `max_tasks` tasks (the bound the bundle puts on every run's stories)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from seqk import store
from seqk.store import queries
from seqk.view import compare, compare_render
from seqk.view.pages import WAIT_S
from seqk.view.render import Urls

MAX_PAIRS = 100
"""A bundle holds the compare pages of at most this many pairs (by run id), as it bounds tasks."""


def pairs_of(db: store.DbLike, run_ids: Sequence[str]) -> tuple[list[tuple[str, str]], int]:
    """The pairs of the given runs that share a benchmark and slice, by run id (at most MAX_PAIRS),
    and how many there are in all."""
    with store.connect(db, read_only=True, wait_s=WAIT_S) as con:
        rows = queries.report_runs(con, run_ids=list(run_ids), benchmark=None, model=None)
    found = [(a["run_id"], b["run_id"]) for a, b in combinations(rows, 2)
             if (a["benchmark"], a["slice"]) == (b["benchmark"], b["slice"])]
    return found[:MAX_PAIRS], len(found)


def pages_of(db: store.DbLike, pairs: Sequence[tuple[str, str]],
             task_limit: Callable[[str], int]) -> tuple[dict[tuple[str, str, str], compare.ComparePage],
                                                        set[tuple[str, str, int]]]:
    """Each pair's compare page under each filter, and the (a, b, task) stories to write: the flips
    whose task a's bundle holds (index up to task_limit(a))."""
    found: dict[tuple[str, str, str], compare.ComparePage] = {}
    tasks: set[tuple[str, str, int]] = set()
    for a, b in pairs:
        every = compare.compare_page(a, b, db)
        for name in compare.FLIP_FILTERS:
            page = compare.filtered(every, name)
            found[(a, b, name)] = page
            tasks |= {(a, b, f.task_index) for f in page.flips if f.task_index <= task_limit(a)}
    return found, tasks


def write(folder: Path, db: store.DbLike, found: dict[tuple[str, str, str], compare.ComparePage],
          tasks: set[tuple[str, str, int]], urls: Callable[[str], Urls], note: str,
          write_page: Callable[[Path, str, str], Any]) -> int:
    """Write the pages; the number written."""
    n = 0
    for (a, b, name), page in found.items():
        relative = f"compare/{compare.bundle_key(a, b)}/{'index' if name == 'flips' else name}.html"
        write_page(folder, relative, compare_render.render_compare(page, urls(relative), note=note))
        n += 1
    for a, b, index in sorted(tasks):
        relative = f"compare/{compare.bundle_key(a, b)}/tasks/{index}.html"
        write_page(folder, relative, compare_render.render_compare_task(
            compare.compare_task_page(a, b, index, db), urls(relative)))
        n += 1
    return n
