"""The budget's promise against a priced model over HTTP: a run never spends more than its
budget, at concurrency 1, 4 and 16, and stops no further from it than one attempt's reserved
worst case. The model is bench/openai_server.py, an OpenAI-compatible server on loopback (a
real subprocess) that reports honest token counts (words) for every call."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import rows, write_variant
from servers import openai_server
from typer.testing import CliRunner

from seqk.cli import app

ROOT = Path(__file__).resolve().parents[2]
PRICE = {"input": 1000.0, "output": 2000.0}  # a word in costs $0.001, a word out $0.002
runner = CliRunner()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The loopback server answering 'NO' to every call; yields its /v1 address."""
    with openai_server(reply="NO") as base:
        yield base


@pytest.mark.parametrize("concurrency", [1, 4, 16])
def test_a_seq_run_never_spends_past_its_budget(server, tmp_path, concurrency):
    # seq@k with an LLM judge and an LLM critic, all three priced: every prompt grows with
    # the history, so attempts cost more and more, the case an average underestimates.
    budget = 2.0
    role = {"price": PRICE}
    variant = write_variant(tmp_path, benchmark="toyjudge", metric="seq@k", k=4, feedback_mode="critic",
                            model="openai/bench", api_base=server, max_tokens=4, budget_usd=budget,
                            concurrency=concurrency, actor=role, judge=role, critic=role,
                            options={"n": 40})
    db = tmp_path / "seqk.duckdb"
    result = runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"])
    assert result.exit_code == 3, result.output
    ((spent, n_calls),) = rows(db, "SELECT sum(cost_usd), count(*) FROM calls")
    assert n_calls > 20, result.output  # the budget, not a mistake, stopped it
    assert spent <= budget
    stop = re.search(r"budget reached: the run has spent \$([\d.]+) of its \$2\.0000 budget "
                     r"\(\$([\d.]+) left\), and the next attempt's reserved worst case is \$([\d.]+) "
                     r"\(actor \$[\d.]+, judge \$[\d.]+, critic \$[\d.]+\); raise budget_usd to go on",
                     result.output)
    assert stop is not None, result.output
    said_spent, left, worst = (float(x) for x in stop.groups())
    assert said_spent == pytest.approx(spent, abs=5e-5)
    assert left == pytest.approx(budget - spent, abs=5e-5)
    # It stopped because one more attempt's worst case did not fit, not earlier.
    assert budget - worst < spent
