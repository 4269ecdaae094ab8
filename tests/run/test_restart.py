"""A larger k without `continue:` would restart the run and pay again for every attempt: seqk
refuses until the user chooses, saying how many paid attempts a restart discards and what they
cost; `seqk run --restart` or `continue: false` restarts, `continue: true` extends, and
`seqk plan` says the same before anything is spent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers import rows, write_variant
from servers import openai_server
from typer.testing import CliRunner

from seqk.cli import app

runner = CliRunner()
PRICE = {"input": 1000.0, "output": 1000.0}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A priced-nowhere loopback model answering 'NO'; yields its /v1 address."""
    with openai_server(reply="NO") as base:
        yield base


def _variant(tmp_path, k, **keys):
    keys = {"metric": "seq@k", "k": k, "model": "mock/py:scripts:always_wrong", "max_tokens": 5,
            "options": {"n": 3}, "actor": {"price": PRICE}} | keys
    return write_variant(tmp_path, f"k{k}.yaml", **keys)


def _run(variant, db, *args):
    return runner.invoke(app, ["run", str(variant), "--db", str(db), *args])


def test_a_larger_k_that_would_discard_paid_attempts_is_refused_naming_their_cost(tmp_path, db):
    assert _run(_variant(tmp_path, 2), db, "--no-export").exit_code == 0
    ((n, cost),) = rows(db, "SELECT count(DISTINCT attempt_uid), sum(cost_usd) FROM calls")
    assert n == 6 and cost > 0
    before = rows(db, "SELECT (SELECT count(*) FROM attempts), k, generation, updated_at FROM runs")

    result = _run(_variant(tmp_path, 4), db)
    assert result.exit_code == 2, result.output
    assert (f"error: run toy-plain/seqk/mock__py:scripts:always_wrong/deterministic/binary has k=2; k=4 "
            f"without `continue:` restarts it in a new generation and discards its 6 attempts "
            f"(${cost:.4f}) (they stay in the database but no longer count). To keep them and go on, "
            f"write `continue: true` in the variant; to restart and pay again, run `seqk run --restart` "
            f"(or write `continue: false`).") in result.output
    assert "Traceback" not in result.output
    # Nothing written: no attempt, no change to the run, no export.
    assert rows(db, "SELECT (SELECT count(*) FROM attempts), k, generation, updated_at FROM runs") == before
    assert not (tmp_path / "toy-plain").exists()

    plan = runner.invoke(app, ["plan", str(_variant(tmp_path, 4)), "--db", str(db)])
    assert plan.exit_code == 0, plan.output
    assert "REFUSED: run toy-plain/seqk/mock__py:scripts:always_wrong/deterministic/binary has k=2; " \
           "k=4 without `continue:` restarts it" in plan.output
    assert f"discards its 6 attempts (${cost:.4f})" in plan.output
    assert "attempts to run: 3 to 12" in plan.output  # what --restart would run
    planned = runner.invoke(app, ["plan", str(_variant(tmp_path, 4)), "--db", str(db), "--restart"])
    assert "(restart at k=4 (stored k=2))" in planned.output


def test_restart_flag_or_continue_false_restarts_and_continue_true_extends(tmp_path, db):
    _run(_variant(tmp_path, 2), db, "--no-export")
    restarted = _run(_variant(tmp_path, 3), db, "--no-export", "--restart")
    assert restarted.exit_code == 0, restarted.output
    assert rows(db, "SELECT k, generation FROM runs") == [(3, 2)]
    explicit = _run(_variant(tmp_path, 4, **{"continue": False}), db, "--no-export")
    assert explicit.exit_code == 0, explicit.output
    assert rows(db, "SELECT k, generation FROM runs") == [(4, 3)]
    extended = _run(_variant(tmp_path, 5, **{"continue": True}), db, "--no-export")
    assert extended.exit_code == 0, extended.output
    assert rows(db, "SELECT k, generation FROM runs") == [(5, 3)]


def test_a_larger_k_over_unpriced_attempts_counts_their_tokens(server, tmp_path, db):
    # A run of an unpriced model: the refusal counts tokens, since it cannot count dollars.
    keys = {"model": "openai/bench", "api_base": server, "actor": {}}
    _run(_variant(tmp_path, 1, **keys), db, "--no-export")
    ((tokens_in, tokens_out),) = rows(db, "SELECT sum(input_tokens), sum(output_tokens) FROM calls")
    result = _run(_variant(tmp_path, 2, **keys), db, "--no-export")
    assert result.exit_code == 2, result.output
    assert (f"discards its 3 attempts ({tokens_in:,} tokens in / {tokens_out:,} out; no price known)"
            in result.output)
