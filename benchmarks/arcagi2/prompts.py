"""The texts arcagi2 writes: the actor's task prompt, the judge's diagnostic, the feedback.

Changing any of them changes results: bump `ArcAgi2.prompt_version`.
"""

from __future__ import annotations

from seqk.verifiers.grids import GridGrade, shape, shape_text

from .data import RawTask
from .grids import render

INTRO = """\
Solve this ARC-AGI-2 puzzle.

A grid is a rectangle of cells, each holding an integer from 0 to 9 (a colour). Grids are \
written as JSON, one row per line: [[0, 1, 2], [3, 4, 5]] has 2 rows and 3 columns, a \
shape written 2x3.

Each training example pairs an input grid with the output grid that one hidden rule makes \
from it. Work out the rule from the examples, then apply it to the test input{s}."""

ANSWER_ONE = """\
Answer format: end your reply with a JSON list holding the output grid for the test input, \
for example [[[0, 1], [1, 0]]] for a 2x2 output; the bare grid [[0, 1], [1, 0]] is accepted \
too. You may reason first: the last JSON grid in your reply is taken as your answer."""

ANSWER_MANY = """\
Answer format: end your reply with a JSON list of {n} output grids, one for each test input, \
in order, for example [[[0, 1], [1, 0]], [[5]]] for two test inputs. You may reason first: \
the last JSON list of grids in your reply is taken as your answer."""

INCORRECT = "Your answer was incorrect."


def task_prompt(raw: RawTask) -> str:
    """The actor's prompt: every training pair and every test input, never a test output."""
    tests = raw["test"]
    parts = [INTRO.format(s="" if len(tests) == 1 else "s")]
    for i, pair in enumerate(raw["train"], 1):
        parts.append(f"## Training example {i}\n\n{_grid_block('Input', pair['input'])}\n\n"
                     f"{_grid_block('Output', pair['output'])}")
    for i, pair in enumerate(tests, 1):
        label = "Test input" if len(tests) == 1 else f"Test input {i}"
        parts.append(f"## {label}\n\n{_grid_block('Input', pair['input'])}")
    parts.append(ANSWER_ONE if len(tests) == 1 else ANSWER_MANY.format(n=len(tests)))
    return "\n\n".join(parts)


def _grid_block(label: str, grid: list[list[int]]) -> str:
    return f"{label} ({shape_text(shape(grid))}):\n{render(grid)}"


def diagnostic(n_given: int | None, grades: list[GridGrade]) -> str:
    """The judge's one-line public diagnostic: counts and shapes, no target cell."""
    lines = [_count_note(n_given, len(grades)) or f"{len(grades)} test output(s)"]
    for g in grades:
        if not g["given"]:
            state = "missing"
        elif not g["parsed"]:
            state = "not a valid grid"
        elif not g["shape_ok"]:
            state = f"shape {_dims(g['shape'])}, expected {_dims(g['expected_shape'])}"
        else:
            state = (f"{'exact match' if g['correct'] else 'wrong'}, "
                     f"{g['cells_correct']}/{g['cells_total']} cells ({_dims(g['shape'])})")
        lines.append(f"test {g['test']}: {state}")
    return "; ".join(lines)


def cell_match_feedback(n_given: int | None, grades: list[GridGrade]) -> str:
    """Per test output: valid or not, shape right or not (naming the expected shape), and
    how many cells match. Never a target cell value nor which cells differ."""
    lines = [INCORRECT]
    if n_given is None:
        lines.append("No JSON grid was found in your answer; end it with a JSON list of output "
                     "grids, one per test input.")
        return "\n".join(lines)
    if n_given != len(grades):
        lines.append(f"Your answer holds {n_given} grid(s) for {len(grades)} test input(s); "
                     "give exactly one grid per test input.")
    for g in grades:
        label = f"Test output {g['test']}"
        if not g["given"]:
            lines.append(f"{label}: missing from your answer.")
        elif not g["parsed"]:
            lines.append(f"{label}: not a valid grid (a rectangular list of rows of "
                         "integers 0-9).")
        elif not g["shape_ok"]:
            lines.append(f"{label}: wrong shape: you gave {_dims(g['shape'])}, "
                         f"the expected output is {_dims(g['expected_shape'])}.")
        elif g["correct"]:
            lines.append(f"{label}: correct.")
        else:
            share = g["cells_correct"] / g["cells_total"]
            lines.append(f"{label}: shape {_dims(g['shape'])} is right; "
                         f"{g['cells_correct']} of {g['cells_total']} cells are correct "
                         f"({share:.0%}).")
    return "\n".join(lines)


def _count_note(n_given: int | None, n_test: int) -> str | None:
    """A remark when the answer does not hold exactly one grid per test input."""
    if n_given is None:
        return "no JSON grid found in the answer"
    if n_given != n_test:
        return f"the answer holds {n_given} grid(s) for {n_test} test input(s)"
    return None


def _dims(dims: list[int] | None) -> str:
    return shape_text(dims) if dims else "?"
