"""`seqk status` never cuts what tells runs apart (issue 17: five ARC runs all read
`arcagi2-eval…` at 120 columns)."""

from __future__ import annotations

import io
import re

import pytest
from helpers import write_variant
from typer.testing import CliRunner

from seqk.cli import app
from seqk.config import runspec
from seqk.render.status import shared_prefix, status_view
from seqk.run import engine

MODELS = ["anthropic__claude-sonnet-4-6", "anthropic__claude-opus-4-1", "openai__gpt-5-mini",
          "openai__gpt-5", "google__gemini-2.5-pro"]
IDS = [f"arcagi2-evaluation/seqk/{m}/deterministic/cell_match" for m in MODELS]


def row(run_id: str) -> dict:
    return {"run_id": run_id, "metric": "seq@k", "k": 8, "n_tasks": 120, "n_finished": 37,
            "n_passed": 12, "n_valid_attempts": 211, "n_error_attempts": 3, "input_tokens": 12345678,
            "output_tokens": 2345678, "cost_usd": 12.3456, "n_unpriced_calls": 0,
            "updated_at": "2026-03-01 12:34:56.123"}


def render(rows: list[dict], width: int) -> str:
    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=width, force_terminal=False, color_system=None).print(status_view(rows, width))
    return out.getvalue()


def test_shared_prefix_is_the_leading_slots_every_id_shares():
    assert shared_prefix(IDS) == "arcagi2-evaluation/seqk"
    assert shared_prefix(["a/b/c", "a/b/c@t1"]) == "a/b"  # each id keeps at least its last slot
    assert shared_prefix(["a/b", "c/d"]) == "" and shared_prefix(IDS[:1]) == ""


@pytest.mark.parametrize("width", [80, 120])
def test_status_shows_every_distinguishing_slot_whole(width):
    text = render([row(i) for i in IDS], width)
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines())
    assert "arcagi2-evaluation/seqk/" in text  # the shared slots, once, in the title
    # Each id after the shared slots is whole on a line of its own (80) or in its cell (120).
    assert all(re.search(rf"^(│ )?{m}/deterministic/cell_match\b", text, re.M) for m in MODELS)
    assert "cost $12.3456 · updated 2026-03-01 12:34:56" in text.replace("\n", " ")


def test_status_is_a_table_when_it_fits():
    text = render([row(i) for i in IDS], 200)
    assert "┏" in text and "…" not in text
    assert all(f"│ {m}/deterministic/cell_match " in text for m in MODELS)


def test_cli_status_prints_the_shared_prefix_once(tmp_path, db):
    for tag in ("t0", "t1"):
        engine.run(runspec.load(write_variant(tmp_path, name=f"{tag}.yaml", benchmark="toy", metric="pass@k",
                                              k=1, model="mock/echo", options={"n": 1}, tag=tag)), db)
    out = CliRunner().invoke(app, ["status", "--db", str(db)]).output
    assert "every id starting toy-plain/passk/mock__echo/deterministic/" in out
    assert "│ binary@t0 " in out and "│ binary@t1 " in out  # piped: a table, never cut
