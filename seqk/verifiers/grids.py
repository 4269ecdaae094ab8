"""Grids (rows of cells, every row the same length) in a reply, graded cell by cell: what ARC-AGI-2
grades, and any answer that is a table of values.

    json_grid   the last rectangular JSON grid in the reply equals the expected grid; the score
                is the share of matching cells when the shapes agree, else 0
    grade_grid  one candidate against one target, as shapes and counts only (never a target
                cell), for feedback that must not give the answer away
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, TypedDict

from seqk.benchmark import Verdict
from seqk.verifiers.base import verdict
from seqk.verifiers.jsonextract import extract_all_json

_INT_ONLY = frozenset({int})


def is_grid(value: Any, cells: frozenset[int] | None = None) -> bool:
    """True if `value` is a non-empty rectangular list of non-empty rows; with `cells`, every
    cell an int (never a bool or a float that equals one) in that set."""
    if not isinstance(value, list) or not value or not isinstance(value[0], list):
        return False
    width = len(value[0])
    if cells is None:
        return width > 0 and all(isinstance(row, list) and len(row) == width for row in value)
    return width > 0 and all(
        isinstance(row, list)
        and len(row) == width
        # Types first: True and 1.0 equal colours in a set, and unhashable cells must not reach
        # it. Both loops run in C: ARC grids reach 900 cells.
        and _INT_ONLY.issuperset(map(type, row))
        and cells.issuperset(row)
        for row in value
    )


def shape(grid: Sequence[Sequence[Any]]) -> tuple[int, int]:
    """(rows, columns) of a rectangular grid."""
    return len(grid), len(grid[0])


def shape_text(dims: tuple[int, int] | list[int]) -> str:
    """'3x4' for 3 rows and 4 columns."""
    return f"{dims[0]}x{dims[1]}"


class GridGrade(TypedDict):
    """One grid's grade: shapes and counts only, never a target cell."""

    test: int
    """1-based position of the grid among those graded."""
    given: bool
    """False when no candidate was given for this position."""
    parsed: bool
    """The candidate is a valid grid."""
    shape: list[int] | None
    """[rows, columns] of the candidate, when parsed."""
    expected_shape: list[int]
    """[rows, columns] of the target."""
    shape_ok: bool
    cells_correct: int | None
    """Cells equal to the target's, when the shape is right."""
    cells_total: int
    correct: bool
    """The candidate equals the target exactly."""


def grade_grid(candidate: Any, target: Sequence[Sequence[Any]], test: int = 1, *,
               cells: frozenset[int] | None = None) -> GridGrade:
    """How `candidate` compares with `target`; `cells_correct` is None unless the candidate is a
    grid (of `cells`, when given) of the target's shape."""
    expected = shape(target)
    total = expected[0] * expected[1]
    result = GridGrade(test=test, given=candidate is not None, parsed=False, shape=None,
                       expected_shape=list(expected), shape_ok=False, cells_correct=None,
                       cells_total=total, correct=False)
    if candidate is None or not is_grid(candidate, cells):
        return result
    got = shape(candidate)
    result["parsed"], result["shape"], result["shape_ok"] = True, list(got), got == expected
    if got != expected:
        return result
    if candidate == target:
        correct = total
    else:
        pairs = zip(candidate, target, strict=True)
        correct = sum(sum(map(operator.eq, row, goal)) for row, goal in pairs)
    result["cells_correct"], result["correct"] = correct, correct == total
    return result


def cell_accuracy(result: GridGrade) -> float:
    """The share of target cells matched; 0 when the grid is missing, malformed or misshapen."""
    if result["cells_correct"] is None:
        return 0.0
    return result["cells_correct"] / result["cells_total"]


def json_grid(output: str, expected: Sequence[Sequence[Any]], *, cells: frozenset[int] | None = None) -> Verdict:
    """Success when the last rectangular JSON grid in the reply equals `expected`; the score is
    the share of matching cells when the shapes agree, else 0."""
    target = [list(row) for row in expected]
    grids = [value for value in extract_all_json(output) if is_grid(value, cells)]
    if not grids:
        return verdict(False, "no JSON grid in the reply", score=0.0, answer=None,
                       format="no JSON grid (a list of equal-length rows) in the reply")
    graded = grade_grid(grids[-1], target, cells=cells)
    got, want = graded["shape"] or [0, 0], graded["expected_shape"]
    if not graded["shape_ok"]:
        return verdict(False, f"the grid is {shape_text(got)}, expected {shape_text(want)}", score=0.0,
                       answer=grids[-1], shape=got, expected_shape=want)
    cells_ok, total = graded["cells_correct"] or 0, graded["cells_total"]
    return verdict(graded["correct"], f"{cells_ok} of {total} cells match", score=cells_ok / total,
                   answer=grids[-1], shape=got, expected_shape=want, cells_correct=cells_ok)
