"""The embedded model, for real: SmolLM2-135M run by llama.cpp in seqk's worker
processes, offline, the way `seqk run` uses it. Needs llama-cpp-python and the model
package, which the README's install puts in place. Marked `native`: deselected (and said so) where
llama.cpp is not installed, run by CI, where a missing build fails the run (tests/conftest.py)."""

from __future__ import annotations

import asyncio
import atexit
import functools
import json
import os
import sys
from pathlib import Path

import duckdb
import pytest

from seqk import models
from seqk.errors import MissingExtra, PermanentProviderError, TransientProviderError
from seqk.models.local import workers
from seqk.models.retry import RetryPolicy
from seqk.models.role import RoleSpec

ROOT = Path(__file__).resolve().parents[2]
MODEL = "local/smollm2-135m"

pytestmark = pytest.mark.native


@pytest.fixture(autouse=True)
def _fresh_workers():
    yield
    workers.close_all()


def complete(prompt: str, **settings) -> models.Completion:
    """One call through the same door as every run: ModelPool.complete."""
    return asyncio.run(closing(_complete(prompt, **settings)))


async def closing(calls):
    """Await `calls`, then close the loop's HTTP session, as the engine does at the end of a run."""
    try:
        return await calls
    finally:
        await models.close_sessions()


async def _complete(prompt: str, **settings) -> models.Completion:
    settings.setdefault("temperature", 0)
    settings.setdefault("max_tokens", 16)
    settings.setdefault("seed", 1)
    model = settings.pop("model", MODEL)
    pool = models.ModelPool(RetryPolicy(max_retries=0))
    return await pool.complete(RoleSpec(role="actor", model=model, **settings), prompt)


@functools.cache
def _vocabulary():
    """SmolLM2's tokenizer alone, in this process (no weights: nothing is computed here)."""
    import llama_cpp

    llama = llama_cpp.Llama(model_path=str(workers.model_path(MODEL)), vocab_only=True, verbose=False)
    # Left to __del__ at interpreter shutdown, llama-cpp-python prints a TypeError traceback.
    atexit.register(llama.close)
    return llama


def templated_prompt_tokens(prompt: str) -> int:
    """The prompt's length in SmolLM2's own tokens, once wrapped in its own chat template."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llama = _vocabulary()
    formatter = Jinja2ChatFormatter(
        template=llama.metadata["tokenizer.chat_template"],
        eos_token=llama._model.token_get_text(llama.token_eos()),
        bos_token=llama._model.token_get_text(llama.token_bos()))
    rendered = formatter(messages=[{"role": "user", "content": prompt}])
    return len(llama.tokenize(rendered.prompt.encode(), add_bos=not rendered.added_special,
                              special=True))


def worker_pids() -> set[int]:
    """The live worker processes this test process started."""
    return {w.proc.pid for s in workers._servers.values() for w in s.workers if w.alive()}


def test_a_call_returns_text_and_the_tokenizers_real_counts():
    c = complete("What is 2 + 3? Reply with just the number.")
    assert c.text.strip()
    assert c.input_tokens == templated_prompt_tokens("What is 2 + 3? Reply with just the number.")
    assert 0 < c.output_tokens <= 16
    assert c.cost_usd == 0.0
    assert (c.cached_tokens, c.thinking_tokens, c.retries) == (0, 0, 0)


def test_the_model_runs_in_a_worker_process_not_in_seqk():
    complete("Hi", max_tokens=2)
    (pid,) = worker_pids()
    assert pid != os.getpid()
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert b"seqk.models.local.worker" in cmdline


def test_temperature_zero_is_reproducible():
    first = complete("Name three colours.", max_tokens=24)
    second = complete("Name three colours.", max_tokens=24)
    assert first.text == second.text
    assert (first.input_tokens, first.output_tokens) == (second.input_tokens, second.output_tokens)


def test_the_seed_reaches_the_sampler():
    def poem(seed: int) -> str:
        return complete("Write a short poem about the sea.", temperature=1.0, max_tokens=24,
                        seed=seed).text

    assert poem(7) == poem(7)
    assert len({poem(1), poem(2), poem(3)}) > 1


def test_concurrent_calls_share_one_worker_and_match_a_sequential_run():
    prompts = ["What is 6 times 7?", "Say the word 'green'.", "Is 7 even? Answer yes or no.",
               "What is the capital of Italy?"]
    sequential = [complete(p).text for p in prompts]

    async def gather(**settings) -> list[models.Completion]:
        return await asyncio.gather(*(_complete(p, **settings) for p in prompts))

    def together(**settings) -> list[models.Completion]:
        return asyncio.run(closing(gather(**settings)))

    assert [c.text for c in together()] == sequential
    assert len(worker_pids()) == 1
    # max_concurrency starts that many workers, and they answer exactly as one does.
    assert [c.text for c in together(max_concurrency=2)] == sequential
    assert len(worker_pids()) == 3


def test_timeout_stops_a_runaway_generation_and_the_next_call_works():
    complete("Hi", max_tokens=2)
    (first,) = worker_pids()
    with pytest.raises(TransientProviderError, match="did not finish within timeout_s") as caught:
        complete("Write a very long story about the sea, with many chapters.", temperature=1.0,
                 max_tokens=4000, timeout_s=1.0)
    assert caught.value.kind == "Timeout"
    assert first not in worker_pids()  # killed: llama.cpp cannot be interrupted otherwise
    assert complete("What is 2 + 3?").text.strip()
    (second,) = worker_pids()
    assert second != first


def test_a_missing_model_file_says_which_file_and_is_not_retried():
    with pytest.raises(PermanentProviderError) as caught:
        complete("Hi", model="local//nonexistent.gguf")
    assert "/nonexistent.gguf does not exist" in str(caught.value)
    assert caught.value.retries == 0


def test_a_file_that_is_not_a_model_says_so(tmp_path):
    fake = tmp_path / "notes.gguf"
    fake.write_text("not a model")
    with pytest.raises(PermanentProviderError, match="is not a GGUF file"):
        complete("Hi", model=f"local/{fake}")


def test_an_unknown_local_name_lists_what_exists():
    with pytest.raises(MissingExtra, match="local/smollm2-135m, or local/<path to a .gguf"):
        workers.model_path("local/gpt-5")


def test_without_llama_cpp_the_message_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # find_spec then finds nothing
    with pytest.raises(MissingExtra, match=r"install\.sh"):
        workers.check(MODEL)
    with pytest.raises(PermanentProviderError, match=r"install\.sh"):
        complete("Hi")


def test_without_the_model_package_the_message_says_what_to_install(monkeypatch):
    monkeypatch.setitem(workers.BUILTIN_MODELS, "ghost", ("no_such_package", "x.gguf"))
    with pytest.raises(MissingExtra, match=r"no_such_package.*install\.sh"):
        workers.model_path("local/ghost")


def test_a_prompt_longer_than_the_context_fails_at_once_and_clearly():
    with pytest.raises(PermanentProviderError, match="prompt is too long") as caught:
        complete("word " * (workers.N_CTX + 100))
    assert caught.value.retries == 0


def test_the_local_model_can_be_the_critic(tmp_path):
    from helpers import write_variant

    from seqk.config import runspec
    from seqk.run import engine

    models.register_mock("mock/actor", ["wrong"])
    db = tmp_path / "critic.duckdb"
    spec = runspec.load(write_variant(
        tmp_path, benchmark="toy", metric="seq@k", k=2, feedback_mode="critic",
        model="mock/actor", critic_model=MODEL, options={"n": 1},
        critic={"temperature": 0, "max_tokens": 16, "seed": 1}))
    assert engine.run(spec, db).tasks_failed == 1
    with duckdb.connect(str(db), read_only=True) as con:
        critic_calls = con.execute(
            "SELECT c.output, c.input_tokens, c.output_tokens, a.feedback FROM calls c "
            "JOIN attempts a USING (attempt_uid) WHERE c.role = 'critic'").fetchall()
    assert len(critic_calls) == 2
    for output, input_tokens, output_tokens, feedback in critic_calls:
        assert output.strip() and output == feedback
        assert input_tokens > 0 and 0 < output_tokens <= 16


# ---------------------------------------------------------------------------
# The quickstart, end to end


@pytest.mark.parametrize("variant", ["passk.yaml", "seqk.yaml"])
def test_a_short_quickstart_run_stores_real_token_counts(variant, tmp_path):
    from typer.testing import CliRunner

    from seqk.cli import app
    from seqk.config import runspec
    from seqk.run import engine

    db = tmp_path / "quickstart.duckdb"
    spec = runspec.load(ROOT / "variants" / "quickstart" / variant,
                        overrides={"max_tasks": 2, "k": 2})
    result = engine.run(spec, db)
    assert result.tasks_error == 0 and result.tasks_passed + result.tasks_failed == 2

    with duckdb.connect(str(db), read_only=True) as con:
        calls = con.execute("SELECT prompt, input_tokens, output_tokens, cost_usd, error "
                            "FROM calls").fetchall()
    assert 2 <= len(calls) <= 4
    for prompt, input_tokens, output_tokens, cost, error in calls:
        assert error is None
        assert input_tokens == templated_prompt_tokens(prompt)
        assert 0 < output_tokens <= spec.actor.max_tokens
        assert cost == 0.0

    shown = CliRunner().invoke(app, ["status", "--db", str(db), "--json"])
    assert shown.exit_code == 0, shown.output
    (row,) = json.loads(shown.output)
    assert row["input_tokens"] == sum(c[1] for c in calls)
    assert row["output_tokens"] == sum(c[2] for c in calls)

    report = CliRunner().invoke(app, ["report", "--db", str(db), "--format", "json"])
    assert report.exit_code == 0, report.output
    (run,) = json.loads(report.output)["runs"]
    assert run["spend"]["input_tokens"] == sum(c[1] for c in calls)
    assert run["spend"]["output_tokens"] == sum(c[2] for c in calls)
