"""A missing key stops a run before it starts; an auth error stops it at once; `seqk probe`
checks keys and endpoints; a run whose every attempt errored exits 1 and says why."""

from __future__ import annotations

import pytest
from helpers import write_variant
from typer.testing import CliRunner

from seqk import models
from seqk.config import runspec
from seqk.errors import AuthError, TransientProviderError
from seqk.models.litellm_provider import LiteLLMProvider
from seqk.models.retry import RetryPolicy
from seqk.models.role import RoleSpec
from seqk.run import engine

runner = CliRunner()


class InternalServerError(Exception):
    """What litellm raises when the OpenAI key is missing: a 500, with the cause in words."""

    status_code = 500


MISSING_KEY = InternalServerError(
    "litellm.InternalServerError: OpenAIException - Missing credentials. Please pass an `api_key`, "
    "or set the `OPENAI_API_KEY` environment variable.")


@pytest.fixture
def no_openai_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_plan_and_run_refuse_a_provider_model_without_its_key(tmp_path, db, no_openai_key):
    variant = write_variant(tmp_path, metric="pass@k", k=2, model="openai/gpt-4o", options={"n": 2})
    for command in ("plan", "run"):
        result = runner.invoke(app(), [command, str(variant), "--db", str(db)])
        assert result.exit_code == 2, result.output
        assert "[C10] model: the actor (openai/gpt-4o) needs $OPENAI_API_KEY, which is not set" in result.output
        assert not db.exists()


def test_plan_and_run_refuse_a_misspelled_provider_in_one_line_and_register_nothing(tmp_path, db):
    variant = write_variant(tmp_path, metric="seq@k", k=2, model="openaii/gpt-4o-mini", options={"n": 2})
    for command in ("plan", "run"):
        result = runner.invoke(app(), [command, str(variant), "--db", str(db)])
        assert result.exit_code == 2, result.output
        assert result.output.strip().splitlines() == [
            f"error: {variant}: [C03] model: 'openaii/gpt-4o-mini': no provider is called 'openaii' "
            "(did you mean 'openai'? litellm's providers: https://docs.litellm.ai/docs/providers; "
            "seqk's own: mock/..., local/...)"]
        assert not db.exists()


def test_a_batched_role_without_its_sdk_is_refused_before_anything_is_registered(tmp_path, db, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if the `batch` extra were not installed
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    variant = write_variant(tmp_path, metric="seq@k", k=2, model="anthropic/claude-sonnet-4-6", batch=True,
                            max_tokens=64, options={"n": 2})
    for command in ("plan", "run"):
        result = runner.invoke(app(), [command, str(variant), "--db", str(db)])
        assert result.exit_code == 2, result.output
        assert result.output.strip() == ("error: batch mode for anthropic/ models needs the anthropic SDK: "
                                         "pip install 'seqk[batch]'")
        assert not db.exists()


def test_each_role_is_checked_and_named(tmp_path, db, no_openai_key, monkeypatch):
    monkeypatch.delenv("SEQK_TEST_JUDGE_KEY", raising=False)
    models.register_mock("mock/actor", ["w1"])
    variant = write_variant(tmp_path, benchmark="toyjudge", metric="seq@k", k=2, model="mock/actor",
                            feedback_mode="critic", judge_model="openai/judge",
                            judge={"api_base": "http://127.0.0.1:9/v1", "api_key_env": "SEQK_TEST_JUDGE_KEY"},
                            critic_model="openai/gpt-4.1-mini", options={"n": 1})
    result = runner.invoke(app(), ["run", str(variant), "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert ("[C10] judge_model.api_key_env: the judge (openai/judge) reads its key from "
            "$SEQK_TEST_JUDGE_KEY, which is not set") in result.output
    assert "[C10] critic_model: the critic (openai/gpt-4.1-mini) needs $OPENAI_API_KEY" in result.output
    assert not db.exists()


def test_an_openai_compatible_server_without_api_key_env_needs_no_key(no_openai_key):
    role = RoleSpec(role="actor", model="openai/smollm2", api_base="http://127.0.0.1:9/v1")
    assert models.credential_problems([role]) == []


def test_a_missing_key_reported_as_a_500_is_an_auth_error_and_never_retried(no_openai_key):
    """litellm itself, offline: the OpenAI client refuses to start without a key, and litellm says
    so as a 500. Its provider reads the words; no retry waits 30 s for nothing."""
    import asyncio

    pool = models.ModelPool(RetryPolicy(max_retries=6, base_delay_s=30))
    with pytest.raises(AuthError, match="Missing credentials") as caught:
        asyncio.run(pool.complete(RoleSpec(role="actor", model="openai/gpt-4o-mini"), "Hi"))
    assert caught.value.retries == 0 and caught.value.kind == "AuthError"
    litellm = LiteLLMProvider()
    assert litellm.classify(MISSING_KEY).fatal and litellm.classify(MISSING_KEY).status_code == 500
    assert litellm.classify(type("PermissionDeniedError", (Exception,), {})("no")).fatal
    # Name sniffing is litellm's alone: to any other provider a 500 is a 500.
    assert isinstance(models.classify(MISSING_KEY), TransientProviderError)
    assert models.classify(type("E", (Exception,), {"status_code": 401})("no")).kind == "AuthError"
    assert isinstance(models.classify(type("E", (Exception,), {"status_code": 503})("busy")),
                      TransientProviderError)


def test_an_auth_error_stops_the_run_and_exits_1_with_the_cause(tmp_path, db):
    models.register_mock("mock/actor", [AuthError(f"AuthError: {MISSING_KEY}", status_code=500)])
    variant = write_variant(tmp_path, metric="pass@k", k=3, model="mock/actor", concurrency=1,
                            options={"n": 5})
    result = runner.invoke(app(), ["run", str(variant), "--db", str(db), "--no-export"])
    assert result.exit_code == 1, result.output
    assert "the run stopped" in result.output and "Missing credentials" in result.output
    spec = runspec.load(variant)
    assert engine.run(spec, db).stopped is not None
    assert models._mock_for("mock/actor").calls < 2 * 15  # not every attempt of every task


def test_a_run_whose_every_attempt_errored_exits_1_showing_the_first_message(tmp_path, db):
    models.register_mock("mock/actor", [TimeoutError("the server took too long")])
    variant = write_variant(tmp_path, metric="pass@k", k=2, model="mock/actor",
                            retry={"max_retries": 0}, options={"n": 2})
    result = runner.invoke(app(), ["run", str(variant), "--db", str(db), "--no-export"])
    assert result.exit_code == 1, result.output
    assert "4× TimeoutError at actor: TimeoutError: the server took too long" in result.output
    assert "every one of the 4 attempts of this invocation failed with an error" in result.output


def test_some_errors_among_answers_still_exit_0(tmp_path, db):
    models.register_mock("mock/actor", [TimeoutError("slow"), "w1", "w2", "w1"])
    variant = write_variant(tmp_path, metric="pass@k", k=2, model="mock/actor", concurrency=1,
                            retry={"max_retries": 0}, options={"n": 2})
    result = runner.invoke(app(), ["run", str(variant), "--db", str(db), "--no-export"])
    assert result.exit_code == 0, result.output
    assert "1× TimeoutError at actor: TimeoutError: slow" in result.output


def test_probe_reports_each_model_once(no_openai_key):
    models.register_mock("mock/actor", ["ok"])
    result = runner.invoke(app(), ["probe", "mock/actor", "openai/gpt-4o", "mock/actor"])
    assert result.exit_code == 1, result.output
    assert result.output.count("mock/actor") == 1
    assert "ok    mock/actor (actor, actor): " in result.output and "$0.000000: 'ok'" in result.output
    assert "error openai/gpt-4o (actor): the actor (openai/gpt-4o) needs $OPENAI_API_KEY" in result.output


def test_probe_of_a_variant_calls_each_role_model(tmp_path):
    models.register_mock("mock/actor", ["w1"])
    models.register_mock("mock/critic", ["try again"])
    variant = write_variant(tmp_path, metric="seq@k", k=2, model="mock/actor", feedback_mode="critic",
                            critic_model="mock/critic", options={"n": 1})
    result = runner.invoke(app(), ["probe", str(variant)])
    assert result.exit_code == 0, result.output
    assert "ok    mock/actor (actor)" in result.output and "ok    mock/critic (critic)" in result.output
    assert models._mock_for("mock/critic").calls == 1


def app():
    from seqk.cli import app as seqk_app

    return seqk_app
