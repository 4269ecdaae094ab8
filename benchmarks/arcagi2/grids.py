"""ARC grids: what counts as one (colours 0..9), how a prompt shows one, where an answer keeps
them. Grading, shapes and cell counts are seqk.verifiers.grids'."""

from __future__ import annotations

from typing import Any

from seqk.verifiers.grids import GridGrade, grade_grid
from seqk.verifiers.grids import is_grid as _is_grid

Grid = list[list[int]]
"""Rows of cells; every cell an int 0..9 (a colour), every row the same length."""

COLOURS = frozenset(range(10))


def is_grid(value: Any) -> bool:
    """True if `value` is a non-empty rectangular list of rows of ints 0..9."""
    return _is_grid(value, COLOURS)


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
    """How one answer grid compares with the target (a grid of colours), without any of its cells."""
    return grade_grid(candidate, target, test, cells=COLOURS)
