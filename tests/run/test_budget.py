"""Budgets read what a run has spent from the database, never let it pass the limit (exit 3),
and hold on the next invocation; a call larger than its attempt reserved is not sent when the
budget cannot cover it; an unpriced role cannot be budgeted (C11) unless the variant prices it,
nor one without max_tokens (C12); `seqk plan` shows what is left."""

from __future__ import annotations

import duckdb
import pytest
from helpers import rows, write_variant
from typer.testing import CliRunner

from seqk import models
from seqk.cli import app
from seqk.config import runspec
from seqk.errors import ConfigError
from seqk.models import pricing

runner = CliRunner()
# $1000 per million tokens: a mock token costs $0.001, so costs are easy to read.
PRICE = {"input": 1000.0, "output": 1000.0}
# pass@k on toy: "Say the word wN." is 5 mock tokens, "wrong" 1: each attempt costs $0.006.
ATTEMPT_USD = 0.006
# Its worst case, reserved before it starts: the prompt's 16 bytes + 16 chat-template tokens in,
# max_tokens (5) out: 37 tokens, $0.037.
WORST_USD = 0.037


def _variant(tmp_path, **keys):
    keys = {"metric": "pass@k", "k": 3, "model": "mock/py:scripts:always_wrong",
            "max_tokens": 5, "options": {"n": 4}, "actor": {"price": PRICE}} | keys
    return write_variant(tmp_path, **keys)


def _spend(db):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(DISTINCT attempt_uid), sum(cost_usd) FROM calls").fetchone()


def test_a_run_budget_is_never_passed_and_holds_on_the_next_invocation(tmp_path, db):
    variant = _variant(tmp_path, budget_usd=0.08)
    first = runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"])
    assert first.exit_code == 3, first.output
    n, spent = _spend(db)
    # An attempt starts only while spend + its worst case ($0.037) fit: up to $0.043 spent, so
    # 8 attempts ($0.048); 12 were pending.
    assert n == 8 and spent == pytest.approx(8 * ATTEMPT_USD)
    assert 0.08 - WORST_USD < spent <= 0.08
    assert ("budget reached: the run has spent $0.0480 of its $0.0800 budget ($0.0320 left), and the "
            "next attempt's reserved worst case is $0.0370 (actor $0.0370); raise budget_usd to go on"
            ) in first.output

    again = runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"])
    assert again.exit_code == 3, again.output
    assert _spend(db) == (n, spent)  # nothing spent until the budget is raised

    raised = _variant(tmp_path, budget_usd=0.09)
    more = runner.invoke(app, ["run", str(raised), "--db", str(db), "--no-export"])
    assert more.exit_code == 3, more.output
    assert _spend(db)[0] == 9


def test_a_budget_that_is_never_reached_changes_nothing(tmp_path, db):
    result = runner.invoke(app, ["run", str(_variant(tmp_path, budget_usd=1.0)), "--db", str(db),
                                 "--no-export"])
    assert result.exit_code == 0, result.output
    assert _spend(db) == (12, pytest.approx(12 * ATTEMPT_USD))


def _judged(tmp_path, actor, judge_budget):
    models.register_mock("mock/judge", lambda prompt: "NO")
    return write_variant(tmp_path, benchmark="toyjudge", metric="pass@k", k=3, model=actor,
                         judge_model="mock/judge", max_tokens=5,
                         judge={"price": PRICE, "budget_usd": judge_budget, "max_tokens": 2},
                         options={"n": 4})


def test_a_role_budget_holds_that_role_alone(tmp_path, db):
    # The judge's worst case: "Is '' the word w1? Answer YES or NO." (36 bytes) + the answer at
    # 4 bytes per max_tokens (20) + 16 in, 2 out: $0.074. Its real call: 13 + 1 tokens, $0.014.
    variant = _judged(tmp_path, "mock/py:scripts:always_wrong", 0.1)
    result = runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"])
    assert result.exit_code == 3, result.output
    assert ("budget reached: the judge has spent $0.0280 of its $0.1000 budget ($0.0720 left), and the "
            "next attempt's reserved worst case is $0.0740 (judge $0.0740)") in result.output
    with duckdb.connect(str(db), read_only=True) as con:
        judge_usd = con.execute("SELECT sum(cost_usd) FROM calls WHERE role = 'judge'").fetchone()[0]
    assert judge_usd == pytest.approx(2 * 0.014)


def test_a_call_larger_than_its_reservation_is_not_sent_when_the_budget_cannot_cover_it(tmp_path, db):
    # The actor writes a 200-byte answer (one mock token): the judge's prompt is then far larger
    # than its attempt reserved, and the judge's budget has not the difference.
    models.register_mock("mock/long", lambda prompt: "x" * 200)
    variant = _judged(tmp_path, "mock/long", 0.1)
    result = runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export", "--concurrency", "1"])
    assert result.exit_code == 3, result.output
    assert "budget reached: the judge has spent $0.0000 of its $0.1000 budget ($0.1000 left), and a " \
           "judge call's worst case is $0.2540; raise budget_usd to go on" in result.output
    attempts = rows(db, "SELECT status, error->>'stage', error->>'type', length(output) FROM attempts")
    assert attempts == [("error", "judge", "BudgetRefused", 200)]
    assert rows(db, "SELECT role, cost_usd, coalesce(error LIKE 'not sent:%', false) FROM calls "
                   "ORDER BY call_index") == [
        ("actor", 0.0, False), ("judge", None, True)]
    # With room, the kept answer is judged: no new actor call for that slot.
    raised = _judged(tmp_path, "mock/long", 1.0)
    again = runner.invoke(app, ["run", str(raised), "--db", str(db), "--no-export", "--concurrency", "1"])
    assert again.exit_code == 0, again.output
    assert rows(db, "SELECT count(*) FROM calls WHERE role = 'actor'") == [(12,)]


def test_a_budget_needs_max_tokens_on_every_role_it_reserves_for(tmp_path):
    variant = _variant(tmp_path, budget_usd=1.0, max_tokens=None)
    result = runner.invoke(app, ["run", str(variant), "--no-export"])
    assert result.exit_code == 2, result.output
    assert ("[C12] actor.max_tokens: a budget reserves each call's worst-case cost before it is sent, "
            "and the actor (mock/py:scripts:always_wrong) has no cap on output tokens") in result.output
    assert not (tmp_path / "runs").exists()


def test_plan_shows_the_budget_left(tmp_path, db):
    variant = _variant(tmp_path, budget_usd=0.08)
    runner.invoke(app, ["run", str(variant), "--db", str(db), "--no-export"])
    result = runner.invoke(app, ["plan", str(variant), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert ("budget (run): $0.0480 spent of $0.0800, $0.0320 left; an attempt reserves up to $0.0370 "
            "(its worst case: attempt 1 of the longest task)") in result.output


def test_an_unpriced_model_cannot_be_budgeted_unless_the_variant_prices_it(tmp_path):
    keys = {"metric": "pass@k", "k": 1, "model": "openai/selfhosted-nobody-prices", "max_tokens": 8,
            "api_base": "http://127.0.0.1:9/v1", "budget_usd": 1.0, "options": {"n": 1}}
    with pytest.raises(ConfigError) as caught:
        runspec.load(write_variant(tmp_path, **keys))
    assert [str(i) for i in caught.value.issues] == [
        "[C11] actor.price: the actor (openai/selfhosted-nobody-prices) has no known price, so a budget "
        "cannot hold its spend: set actor.price: {input, cached_input, output} (US$ per million tokens)"]
    spec = runspec.load(write_variant(tmp_path, **keys, actor={"price": {"input": 0.5, "output": 2.0}}))
    assert spec.actor.price == pricing.Price(0.5, 0.5, 2.0)


def test_a_role_price_gives_a_cost_to_a_model_nobody_prices():
    own = pricing.Price(1.0, 0.1, 4.0)
    assert models.cost_usd("openai/selfhosted-nobody-prices", 1_000_000, 500_000, 250_000, own) == \
        pytest.approx(0.5 + 0.05 + 1.0)
    assert models.cost_usd("mock/x", 10, 0, 10, own) == pytest.approx(50 / 1e6)


def test_a_self_hosted_server_costs_what_the_role_price_says():
    import asyncio
    import dataclasses
    import importlib.util
    import socket
    from pathlib import Path

    from aiohttp import web

    from seqk.models.retry import RetryPolicy
    from seqk.models.role import RoleSpec

    path = Path(__file__).resolve().parents[2] / "bench" / "openai_server.py"
    module_spec = importlib.util.spec_from_file_location("bench_openai_server", path)
    server = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(server)

    async def go():
        runner_ = web.AppRunner(server.make_app(0.0, "four words of reply"))
        await runner_.setup()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        await web.TCPSite(runner_, "127.0.0.1", port).start()
        try:
            pool = models.ModelPool(RetryPolicy(max_retries=0))
            role = RoleSpec(role="actor", model="openai/selfhosted-nobody-prices",
                            api_base=f"http://127.0.0.1:{port}/v1")
            unpriced = await pool.complete(role, "two words")
            priced = await pool.complete(
                dataclasses.replace(role, price=pricing.Price(1000.0, 1000.0, 2000.0)), "two words")
            await models.close_sessions()
            return unpriced, priced
        finally:
            await runner_.cleanup()

    unpriced, priced = asyncio.run(go())
    assert unpriced.cost_usd is None
    # The server counts 2 prompt words and 4 reply words: 2 x $0.001 + 4 x $0.002.
    assert (priced.input_tokens, priced.output_tokens) == (2, 4)
    assert priced.cost_usd == pytest.approx(0.002 + 0.008)
