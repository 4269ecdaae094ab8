"""ARC grids: what counts as one, how a prompt shows one, how an answer grid is graded."""

from __future__ import annotations

import operator
from typing import Any, TypedDict

Grid = list[list[int]]
"""Rows of cells; every cell an int 0..9 (a colour), every row the same length."""

_COLOURS = frozenset(range(10))
_INT_ONLY = frozenset({int})


class GridGrade(TypedDict):
    """One test output's grade: shapes and counts only, never a target cell."""

    test: int
    """1-based position of the test input."""
    given: bool
    """False when the answer holds fewer grids than this position."""
    parsed: bool
    """The given value is a valid grid."""
    shape: list[int] | None
    """[rows, columns] of the given grid, when parsed."""
    expected_shape: list[int]
    """[rows, columns] of the target."""
    shape_ok: bool
    cells_correct: int | None
    """Cells equal to the target's, when the shape is right."""
    cells_total: int
    correct: bool
    """The grid equals the target exactly."""


def is_grid(value: Any) -> bool:
    """True if `value` is a non-empty rectangular list of rows of ints 0..9."""
    if not isinstance(value, list) or not value or not isinstance(value[0], list):
        return False
    width = len(value[0])
    return width > 0 and all(
        isinstance(row, list)
        and len(row) == width
        # Checking types first rejects true/false and 1.0, which equal colours in a set, and
        # keeps unhashable cells away from the set. Both loops run in C: grids reach 900 cells.
        and _INT_ONLY.issuperset(map(type, row))
        and _COLOURS.issuperset(row)
        for row in value
    )


def shape(grid: list[list[Any]]) -> tuple[int, int]:
    """(rows, columns) of a rectangular grid."""
    return len(grid), len(grid[0])


def shape_text(dims: tuple[int, int] | list[int]) -> str:
    """'3x4' for 3 rows and 4 columns."""
    return f"{dims[0]}x{dims[1]}"


def render(grid: Grid) -> str:
    """The grid as JSON, one row per line, so rows line up and read at a glance."""
    # str() of a list of integer rows is that JSON on one line, built in C: splitting it between
    # rows is ~1.5x faster than joining each row (a run renders every task's grids as it starts).
    return str([list(row) for row in grid]).replace("], [", "],\n [")


ANSWER_KEYS = ("test", "output", "outputs", "answer", "grids")
"""Keys of an answer object whose value holds the grids, in the order they are looked up
(any case): seq_k's prompt asks for `{"test": [grid, ...]}`, and models answer in the others."""
_MAX_WRAPPING = 3
"""How many objects deep the grids may sit (`{"answer": {"test": [...]}}` is two)."""


def answer_grids(value: Any) -> list[Any] | None:
    """The grids an extracted answer gives, in order; None when it holds no grid at all.

    The grids may sit in an object under one of ANSWER_KEYS (`{"test": [...]}`), and each
    may be ARC's own pair form `{"output": grid}`. A list whose first item is a list of
    lists is a list of grids; any other list is a single grid (the bare form a one-test task
    accepts). Items are not validated here: a malformed grid is graded, not dropped.
    """
    value = _unwrap(value)
    if not isinstance(value, list) or not value:
        return None
    first = _unwrap(value[0])
    if isinstance(first, list) and first and isinstance(first[0], list):
        return [_unwrap(item) for item in value]
    return [value]


def looks_like_answer(value: Any) -> bool:
    """A grid or a list of grids, bare or in an answer object, even if malformed; unlike `[2]`
    or `{"answer": "blue"}` in prose."""
    value = _unwrap(value)
    return isinstance(value, list) and bool(value) and isinstance(_unwrap(value[0]), list)


def _unwrap(value: Any) -> Any:
    """The value under the first of ANSWER_KEYS, object by object; anything else as it is."""
    for _ in range(_MAX_WRAPPING):
        if not isinstance(value, dict):
            break
        by_key = {key.lower(): item for key, item in value.items() if isinstance(key, str)}
        found = next((by_key[key] for key in ANSWER_KEYS if by_key.get(key) is not None), None)
        if found is None:
            break
        value = found
    return value


def grade(candidate: Any, target: Grid, test: int) -> GridGrade:
    """How one answer grid compares with the target, without any of the target's cells.

    `cells_correct` is None unless the candidate is a grid of the target's shape.
    """
    expected = shape(target)
    total = expected[0] * expected[1]
    result = GridGrade(test=test, given=candidate is not None, parsed=False, shape=None,
                       expected_shape=list(expected), shape_ok=False, cells_correct=None,
                       cells_total=total, correct=False)
    if candidate is None or not is_grid(candidate):
        return result
    got = shape(candidate)
    result.update(parsed=True, shape=list(got), shape_ok=got == expected)
    if got != expected:
        return result
    if candidate == target:
        correct = total
    else:
        pairs = zip(candidate, target, strict=True)
        correct = sum(sum(map(operator.eq, row, goal)) for row, goal in pairs)
    result.update(cells_correct=correct, correct=correct == total)
    return result


def cell_accuracy(result: GridGrade) -> float:
    """The share of target cells matched; 0 when the grid is missing, malformed or misshapen."""
    if result["cells_correct"] is None:
        return 0.0
    return result["cells_correct"] / result["cells_total"]
