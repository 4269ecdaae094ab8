"""The budget's promise against a priced model over HTTP: a run never spends more than its
budget, at concurrency 1, 4 and 16, and stops no further from it than one attempt's reserved
worst case. The model is bench/openai_server.py, an OpenAI-compatible server on loopback (a
real subprocess) that reports honest token counts (words) for every call."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import rows, write_variant
from typer.testing import CliRunner

from seqk.cli import app

ROOT = Path(__file__).resolve().parents[1]
PRICE = {"input": 1000.0, "output": 2000.0}  # a word in costs $0.001, a word out $0.002
runner = CliRunner()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The loopback server answering 'NO' to every call; yields its /v1 address."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "openai_server.py"), "--port", str(port),
                             "--delay", "0.01", "--reply", "NO"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("bench/openai_server.py did not start")
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


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
