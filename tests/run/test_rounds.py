"""Batch mode against loopback fakes of the providers' batch APIs: the same attempts as the
synchronous path, seq@k in K rounds, batch prices, never a batch paid twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
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


TESTS = Path(__file__).resolve().parents[1]


def seqk_cli(*args: str) -> list[str]:
    """`seqk ARGS` in a fresh interpreter with the toy benchmark registered."""
    code = ("import sys; from seqk import benchmark; from toybench import ToyBench; "
            "benchmark.registry()['toy'] = ToyBench(); from seqk.cli import main; "
            "sys.argv = ['seqk', *sys.argv[1:]]; main()")
    return [sys.executable, "-c", code, *args]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(TESTS), e.get("PYTHONPATH", "")])
    return e


@pytest.mark.slow
def test_a_run_killed_while_its_batch_is_in_flight_submits_nothing_twice_and_loses_nothing(tmp_path: Path):
    db = tmp_path / "b.duckdb"
    with FakeOpenAI(delay_s=4.0) as fake:
        path = variant(tmp_path, fake, metric="pass@k", k=2, batch=True)
        proc = subprocess.Popen(seqk_cli("run", str(path), "--db", str(db), "--no-export"), env=env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while fake.posted_batches == 0 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert fake.posted_batches == 1, proc.communicate(timeout=10)
            time.sleep(0.5)  # the batch id is recorded right after the provider answers
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        assert rows(db, "SELECT count(*) FROM attempts") == [(0,)]
        out = api.run_variant(path, db, export=False)
        assert fake.posted_batches == 1  # the second run polled the first run's batch
    assert out.result.attempts_written == 12
    assert rows(db, "SELECT count(DISTINCT (task_index, attempt_index)), count(*) FROM attempts") == [(12, 12)]
    assert rows(db, "SELECT count(*), min(state) FROM batches") == [(1, "ended")]


def test_a_batch_the_provider_got_but_seqk_never_recorded_is_found_by_its_key(tmp_path: Path):
    """A kill between the provider's answer and the record: the 'submitting' row's key finds it."""
    import asyncio

    from seqk import store
    from seqk.config import runspec
    from seqk.models.batch import BatchRequest, batch_provider
    from seqk.run import rounds
    from seqk.run.prepare import prepare
    from seqk.store import queries

    db = tmp_path / "b.duckdb"
    with FakeOpenAI(delay_s=0.2) as fake:
        path = variant(tmp_path, fake, metric="pass@k", k=1, batch=True, options={"n": 2})
        spec = runspec.load(path)
        prepared = prepare(spec, db)
        calls = [(t.task_index, rounds.custom_id(t.task_index, 1, "actor", 1), t.prompt) for t in spec.tasks]
        asyncio.run(batch_provider(spec.actor).submit(
            [BatchRequest(cid, spec.actor, prompt, prompt) for _, cid, prompt in calls], "seqk-lost-key"))
        with store.connect(db) as con:
            queries.insert_batch(con, batch_key="seqk-lost-key", run_id=spec.run_id,
                                 generation=prepared.generation, provider="openai", api_base=spec.actor.api_base,
                                 model=spec.actor.model, role="actor", round=1, n_items=2,
                                 at=datetime.now(UTC).replace(tzinfo=None))
            queries.insert_batch_items(con, batch_key="seqk-lost-key", run_id=spec.run_id,
                                       generation=prepared.generation, custom_ids=[c[1] for c in calls],
                                       task_indices=[c[0] for c in calls], attempt_indices=[1, 1],
                                       roles=["actor", "actor"],
                                       prompt_sha256s=[rounds.prompt_sha256(spec.actor, c[2]) for c in calls])
        out = api.run_variant(path, db, export=False)
        assert fake.posted_batches == 1
    assert out.result.attempts_written == 2
    assert rows(db, "SELECT state, batch_id IS NOT NULL FROM batches") == [("ended", True)]


def test_expired_and_failed_items_go_into_the_next_batch_and_errors_stay_apart(tmp_path: Path):
    db = tmp_path / "b.duckdb"
    with FakeOpenAI(delay_s=0.1, expire_first=True, fail=lambda cid: cid.startswith("t1-")) as fake:
        out = api.run_variant(variant(tmp_path, fake, metric="pass@k", k=2, batch=True), db, export=False)
        assert fake.posted_batches == 2
    assert out.result.attempts_written == 12 and out.result.attempts_errored == 0
    assert rows(db, "SELECT state, n_items FROM batches ORDER BY submitted_at") == [("expired", 12), ("ended", 8)]
    assert rows(db, "SELECT max(retries) FROM calls") == [(1,)]


def test_an_item_that_keeps_failing_is_an_error_with_its_stage_not_a_wrong_answer(tmp_path: Path, monkeypatch):
    from seqk.run import batches

    monkeypatch.setattr(batches, "MAX_ITEM_TRIES", 1)
    db = tmp_path / "b.duckdb"
    with FakeOpenAI(delay_s=0.1, fail=lambda cid: cid.startswith("t1-c1-a1-")) as fake:
        out = api.run_variant(variant(tmp_path, fake, metric="pass@k", k=2, batch=True), db, export=False)
        assert fake.posted_batches == 1
    assert out.result.error_kinds == {"actor:BatchItemError": 1}
    assert rows(db, "SELECT task_index, attempt_index, success, error->>'stage' FROM attempts "
                    "WHERE status = 'error'") == [(1, 1, None, "actor")]


def test_no_wait_submits_and_returns_then_a_later_run_collects(tmp_path: Path):
    from typer.testing import CliRunner

    from seqk.cli import app

    db = tmp_path / "b.duckdb"
    with FakeOpenAI(delay_s=0.1, held=True) as fake:  # the batch ends only when the test says
        path = variant(tmp_path, fake, metric="pass@k", k=2, batch=True)
        first = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--no-wait", "--no-export"])
        assert first.exit_code == 0, first.output
        assert "submitted: 1 batch(es) in flight" in first.output and f"seqk run {path}" in first.output
        assert rows(db, "SELECT count(*) FROM attempts") == [(0,)]
        status = CliRunner().invoke(app, ["status", "--db", str(db)])
        assert "in_progress" in status.output and "0/12" in status.output
        fake.held = False
        second = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--no-export"])
        assert second.exit_code == 0, second.output
        assert fake.posted_batches == 1
    assert rows(db, "SELECT count(*) FROM attempts WHERE status = 'ok'") == [(12,)]


@pytest.mark.slow  # Anthropic's batch API through its SDK (~2.5 s of CPU); OpenAI's batch tests stay
def test_anthropic_message_batches_mark_the_stable_prefix_and_price_cache_reads_and_writes(
        tmp_path: Path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    db = tmp_path / "b.duckdb"
    price = {"input": 3.0, "cached_input": 0.3, "output": 15.0}
    with FakeAnthropic(delay_s=0.1, cache={"write": 10, "read": 20}) as fake:
        path = write_variant(tmp_path, benchmark="toy", metric="seq@k", k=3, model="anthropic/claude-fake",
                             api_base=fake.url, temperature=0.0, actor={"price": price}, options={"n": 3},
                             batch=True, batch_poll_s=0.05)
        out = api.run_variant(path, db, export=False)
        assert fake.posted_batches == 3  # binary feedback: no critic, one batch per round
        later = [b for b in fake.bodies if "This is attempt 2" in str(b["messages"])]
    assert out.result.attempts_written == 6
    # The task is the prefix the next attempt repeats: it carries the cache breakpoint.
    assert later and all(b["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
                         and b["messages"][0]["content"][0]["text"].startswith("Say the word") for b in later)
    calls = rows(db, "SELECT input_tokens, cached_tokens, cache_write_tokens, output_tokens, cost_usd, price_tier "
                     "FROM calls")
    # Batch tier (half): input 1.5, cache read 0.15, cache write 1.25 x 1.5, output 7.5 per million.
    for inp, read, write, out_tokens, cost, tier in calls:
        assert (read, write, tier) == (20, 10, "batch")
        expected = ((inp - read - write) * 1.5 + read * 0.15 + write * 1.875 + out_tokens * 7.5) / 1e6
        assert abs(cost - expected) < 1e-12


def test_plan_shows_the_cost_synchronous_batched_and_cached_with_critical_paths(tmp_path: Path, monkeypatch):
    from typer.testing import CliRunner

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    from seqk.cli import app

    path = write_variant(tmp_path, benchmark="toy", metric="seq@k", k=3, model="anthropic/claude-fake",
                         max_tokens=10, actor={"price": {"input": 3.0, "cached_input": 0.3, "output": 15.0}})
    out = CliRunner().invoke(app, ["plan", str(path), "--db", str(tmp_path / "x.duckdb")])
    assert out.exit_code == 0, out.output
    lines = {line.split("$")[0].strip(): line for line in out.output.splitlines() if "critical path" in line}
    assert set(lines) == {"synchronous", "batch", "synchronous + caching", "batch + caching"}
    cost = {name: float(line.split("$")[1].split()[0]) for name, line in lines.items()}
    assert cost["batch"] == pytest.approx(cost["synchronous"] / 2, abs=1e-4)
    assert cost["synchronous + caching"] < cost["synchronous"]
    assert "3 batch round(s) × turnaround (≤ 24 h each" in lines["batch"]
    assert "3 calls in a row per task" in lines["synchronous"]


def test_flex_tier_is_sent_to_the_provider_and_priced_as_flex(tmp_path: Path):
    db = tmp_path / "f.duckdb"
    with FakeOpenAI() as fake:
        path = variant(tmp_path, fake, metric="pass@k", k=1,
                       actor={"price": PRICE | {"flex_output": 6.0}, "service_tier": "flex"})
        api.run_variant(path, db, export=False)
        assert fake.sync_calls and {c["service_tier"] for c in fake.sync_calls} == {"flex"}
    calls = rows(db, "SELECT input_tokens, output_tokens, cost_usd, price_tier FROM calls")
    # flex: input at half of $2 (no flex_input given), output at the given $6 per million.
    assert calls and all(t == "flex" and abs(c - (i * 1.0 + o * 6.0) / 1e6) < 1e-12 for i, o, c, t in calls)


def test_report_shows_the_share_of_input_served_from_cache(tmp_path: Path, monkeypatch):
    from typer.testing import CliRunner

    from seqk.cli import app

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    db = tmp_path / "b.duckdb"
    with FakeAnthropic(delay_s=0.05, cache={"write": 0, "read": 4}) as fake:
        path = write_variant(tmp_path, benchmark="toy", metric="pass@k", k=2, model="anthropic/claude-fake",
                             api_base=fake.url, actor={"price": {"input": 3.0, "output": 15.0}},
                             options={"n": 2}, batch=True, batch_poll_s=0.05)
        api.run_variant(path, db, export=False)
    (inp,) = rows(db, "SELECT sum(input_tokens) FROM calls")[0]
    out = CliRunner().invoke(app, ["report", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert f"  cache: {16 / inp:.0%} of {inp:,} input tokens served from it\n" in out.output


def test_the_observer_hears_each_batch_between_prepared_and_finished(tmp_path: Path):
    from seqk.run.observer import RunObserver

    class Recorder(RunObserver):
        def __init__(self) -> None:
            self.events: list[str] = []
            self.states: set[tuple[str, int, str]] = set()

        def prepared(self, prepared) -> None:
            self.events.append("prepared")

        def batch(self, views) -> None:
            self.events.append("batch")
            self.states |= {(v.role, v.round, v.state) for v in views}

        def attempt(self, event) -> None:
            self.events.append("attempt")

        def finished(self, result) -> None:
            self.events.append("finished")

    seen = Recorder()
    with FakeOpenAI(delay_s=0.1) as fake:
        out = api.run_variant(variant(tmp_path, fake, metric="pass@k", k=2, batch=True), tmp_path / "b.duckdb",
                              export=False, observer=seen)
    assert seen.events[0] == "prepared" and seen.events[-1] == "finished"
    assert seen.events.count("attempt") == out.result.attempts_written == 12
    # The batch was heard before any attempt it answered, and once it had ended.
    assert seen.events.index("batch") < seen.events.index("attempt")
    assert ("actor", 1, "ended") in seen.states


@pytest.mark.slow
def test_a_batch_that_cannot_be_sent_ends_the_run_instead_of_leaving_its_attempts_waiting(tmp_path: Path,
                                                                                         monkeypatch):
    """Before, the calls taken out for a round were lost when sending failed: the run waited for
    ever (a batched anthropic/ model whose SDK was missing never returned)."""
    import threading

    from seqk.models.batch.openai import OpenAIBatch

    async def refuse(self, requests, key):
        raise RuntimeError("the provider's SDK is broken")

    monkeypatch.setattr(OpenAIBatch, "submit", refuse)
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(api.run_variant(variant(tmp_path, fake, metric="pass@k", k=2, batch=True),
                                           tmp_path / "b.duckdb", export=False))
        except BaseException as exc:  # noqa: BLE001 - whatever it ends with, it must end
            outcome.append(exc)

    with FakeOpenAI(delay_s=0.1) as fake:
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(120)
        assert not thread.is_alive(), "the run still waits on a batch that was never sent"
    [ended] = outcome
    assert isinstance(ended, RuntimeError) and str(ended) == "the provider's SDK is broken"  # raised, as before


CUSTOM = {"system": "Answer with the word only.", "framing_first": "This is attempt {t} of {k}. Go.",
          "framing_later": "This is attempt {t} of {k}. Again.", "attempt": "[{i}] {output}"}


def test_a_custom_protocol_builds_the_same_prompts_in_batch_mode(tmp_path: Path):
    with FakeOpenAI(delay_s=0.1) as fake:
        sync = api.run_variant(variant(tmp_path, fake, "sync.yaml", prompt=CUSTOM), tmp_path / "sync.duckdb",
                               export=False)
        batch = api.run_variant(variant(tmp_path, fake, "batch.yaml", prompt=CUSTOM, batch=True),
                                tmp_path / "batch.duckdb", export=False)
    assert sync.spec.run_id == batch.spec.run_id and "+prompt-" in sync.spec.run_id
    assert sync.result.attempts_written == batch.result.attempts_written > 6
    assert rows(tmp_path / "sync.duckdb", ATTEMPTS) == rows(tmp_path / "batch.duckdb", ATTEMPTS)
    later = rows(tmp_path / "batch.duckdb", "SELECT prompt FROM attempts WHERE attempt_index = 2 LIMIT 1")[0][0]
    assert json.loads(later)[0] == {"role": "system", "content": CUSTOM["system"]}
    assert "This is attempt 2 of 3. Again.\n\n[1] not-w" in json.loads(later)[1]["content"]


def test_anthropic_batches_send_the_system_message_apart_and_cache_the_task(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    with FakeAnthropic(delay_s=0.1) as fake:
        path = write_variant(tmp_path, benchmark="toy", metric="seq@k", k=2, model="anthropic/claude-fake",
                             api_base=fake.url, temperature=0.0, options={"n": 2}, batch=True,
                             batch_poll_s=0.05, prompt=CUSTOM)
        api.run_variant(path, tmp_path / "a.duckdb", export=False)
        bodies = list(fake.bodies)
    assert bodies and all(b["system"] == CUSTOM["system"] for b in bodies)
    assert all([m["role"] for m in b["messages"]] == ["user"] for b in bodies)
    for b in bodies:
        first = b["messages"][0]["content"][0]
        assert first["cache_control"] == {"type": "ephemeral"} and first["text"].startswith("Say the word w")
        assert first["text"].endswith(".")  # the task alone: the framing after it changes every attempt
