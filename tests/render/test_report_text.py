"""`seqk report` in a terminal: blocks that read at 80 columns, never a cut id or number."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from typer.testing import CliRunner

from seqk.analysis import report as reports
from seqk.cli import app
from seqk.render.text import to_text

NUMBER = re.compile(r"[+−-]?\d+\.\d+|\[[^\]]*\]|p=[\d.e-]+|n=\d+|\$[\d.]+")

runner = CliRunner()


def report(*args: str):
    return runner.invoke(app, ["report", *args])


def rendered(text: str, width: int) -> str:
    """What a terminal of `width` columns shows: rich wraps what does not fit."""
    out = io.StringIO()
    Console(file=out, width=width, soft_wrap=False, highlight=False).print(text, markup=False)
    return out.getvalue()


def expected_words(rep: reports.Report) -> set[str]:
    """Every id, model and number the report must show whole: all of the table's cells
    broken into their parts (a cell stacks several figures)."""
    words = {r.run_id for r in rep.runs} | {r.actor_model for r in rep.runs}
    for row in reports.cells(rep)[1]:
        for cell in row:
            words |= set(NUMBER.findall(cell))
    return words


@pytest.mark.parametrize("width", [80, 160])
@pytest.mark.parametrize("compare", [True, False])
def test_every_id_and_number_is_whole_at_80_and_160_columns(mock_db, width, compare):
    rep = reports.report(compare=compare, db=mock_db)
    text = to_text(rep)
    shown = rendered(text, width)
    assert "…" not in shown
    blocks = rendered(text.split("\n• ")[0], width)  # the notes after them are prose
    assert all(len(line) <= 80 for line in blocks.splitlines()), blocks
    words = expected_words(rep)
    assert len(words) >= 15  # (5 tasks: the bootstrap figures say "too few tasks", not numbers)
    lines = shown.splitlines()
    for word in words:
        assert any(word in line for line in lines), word


def test_compare_block_reads_like_the_table(mock_db):
    text = to_text(reports.report(compare=True, db=mock_db))
    alpha = text.split("toy-plain · mock/alpha · binary")[1].split("toy-plain · mock/beta")[0]
    assert "seq  toy-plain/seqk/mock__alpha/deterministic/binary" in alpha
    assert "pass toy-plain/passk/mock__alpha/deterministic/binary" in alpha
    at_3 = next(line for line in alpha.splitlines() if line.strip().startswith("3 "))
    assert at_3.split() == ["3", "0.60", "[0.23,", "0.88]", "0.20", "[0.04,", "0.62]"]
    assert "lift     +0.40 [" in alpha and "flips +2/−0" in alpha
    assert "seq@1 vs pass@1 (Chen mean)" in alpha


def test_compare_block_shows_what_a_task_cost_up_to_each_t_in_one_unit(mock_db):
    rep = reports.report(compare=True, db=mock_db)
    text = to_text(rep)
    alpha = text.split("toy-plain · mock/alpha · binary")[1].split("toy-plain · mock/beta")[0]
    row = next(r for r in rep.rows if r.actor_model == "mock/alpha")
    # Mock models are free: dollars would read $0.0000 for both, so the unit is tokens.
    for name, run in (("seq", row.seq), ("pass", row.pass_run)):
        values = " · ".join(f"{p.tokens_per_task:,.0f}" for p in run.curve)
        assert f"{name:<5}{values} (t = 1..3)" in alpha, alpha
    assert "  tok/task seq  " in alpha and "$/task" not in alpha


def test_cli_prints_the_blocks(mock_db):
    result = report("--compare", "--db", str(mock_db))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("toy-plain · mock/alpha · binary\n")
    assert "• Intervals: 95%. metric@t: Wilson where no chain is censored" in result.output
    per_run = report("--db", str(mock_db))
    assert per_run.exit_code == 0
    assert ("toy-plain/passk/mock__beta/deterministic/binary\n  pass@k · K=3 · mock/beta · binary\n"
            "  5 task(s)") in per_run.output

