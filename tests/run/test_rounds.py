"""Batch mode against loopback fakes of the providers' batch APIs: the same attempts as the
synchronous path, seq@k in K rounds, batch prices, never a batch paid twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from batchfakes import FakeAnthropic, FakeOpenAI
from helpers import rows, write_variant

from seqk import api

PRICE = {"input": 2.0, "output": 8.0}
ATTEMPTS = ("SELECT task_index, attempt_index, status, success, prompt, output, feedback "
            "FROM attempts ORDER BY task_index, attempt_index")


def variant(tmp_path: Path, fake: FakeOpenAI, name: str = "v.yaml", **keys) -> Path:
    base = dict(benchmark="toy", metric="seq@k", k=3, model="openai/fake", api_base=fake.url + "/v1",
                temperature=0.0, actor={"price": PRICE}, critic={"price": PRICE},
                options={"n": 6}, batch_poll_s=0.05)
    return write_variant(tmp_path, name, **(base | keys))


@pytest.mark.parametrize("metric,mode", [("pass@k", "binary"), ("seq@k", "critic")])
def test_batch_mode_gives_the_same_attempts_as_the_synchronous_path(tmp_path: Path, metric: str, mode: str):
    with FakeOpenAI(delay_s=0.1) as fake:
        sync = api.run_variant(variant(tmp_path, fake, "sync.yaml", metric=metric, feedback_mode=mode),
                               tmp_path / "sync.duckdb", export=False)
        n_sync = len(fake.sync_calls)
        batch = api.run_variant(variant(tmp_path, fake, "batch.yaml", metric=metric, feedback_mode=mode,
                                        batch=True), tmp_path / "batch.duckdb", export=False)
        assert len(fake.sync_calls) == n_sync  # nothing synchronous in batch mode
    assert sync.result.attempts_written == batch.result.attempts_written > 6
    assert rows(tmp_path / "sync.duckdb", ATTEMPTS) == rows(tmp_path / "batch.duckdb", ATTEMPTS)
    tiers = rows(tmp_path / "batch.duckdb", "SELECT DISTINCT role, price_tier FROM calls ORDER BY 1")
    assert tiers == ([("actor", "batch"), ("critic", "batch")] if metric == "seq@k" else [("actor", "batch")])
    if metric == "pass@k":
        assert fake.posted_batches == 1 and batch.result.rounds == 1


def test_seq_at_k_runs_in_k_rounds_and_is_priced_at_the_batch_tier(tmp_path: Path):
    with FakeOpenAI(delay_s=0.1) as fake:
        out = api.run_variant(variant(tmp_path, fake, feedback_mode="critic", batch=True),
                              tmp_path / "b.duckdb", export=False)
        # Round t: attempt t of every unfinished chain, then the critics of its failures; task i is
        # solved on attempt (i mod 3) + 1, so round 3 has actors only (no critic after the last).
        assert fake.posted_batches == 5
    db = tmp_path / "b.duckdb"
    assert rows(db, "SELECT round, role, n_items, state FROM batches ORDER BY submitted_at") == [
        (1, "actor", 6, "ended"), (1, "critic", 4, "ended"), (2, "actor", 4, "ended"),
        (2, "critic", 2, "ended"), (3, "actor", 2, "ended")]
    assert out.result.rounds == 5
    # Batch tier, half the role's price: $1 in and $4 out per million tokens.
    priced = rows(db, "SELECT input_tokens, output_tokens, cost_usd FROM calls")
    assert priced and all(abs(c - (i * 1.0 + o * 4.0) / 1e6) < 1e-12 for i, o, c in priced)
