"""The one door to LLMs: retries and their classification, Retry-After, honest usage, cost."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import pytest
from servers import ScriptedServer

from seqk import models
from seqk.errors import MissingExtra, PermanentProviderError, TransientProviderError
from seqk.models import pricing
from seqk.models.litellm_provider import LiteLLMProvider
from seqk.models.retry import RetryPolicy
from seqk.models.role import RoleSpec

FAST_RETRY = RetryPolicy(max_retries=3, base_delay_s=0.0, max_delay_s=5.0)


def call(spec, retry=FAST_RETRY):
    async def go():
        try:
            return await models.ModelPool(retry).complete(spec, "Hi")
        finally:
            await models.close_sessions()

    return asyncio.run(go())


def test_openai_compatible_server_usage_and_parameters(monkeypatch):
    monkeypatch.setenv("MY_KEY", "s3cret")
    with ScriptedServer([]) as server:
        spec = RoleSpec("actor", "openai/smol", temperature=0.0, max_tokens=16, seed=7,
                        api_base=server.api_base, api_key_env="MY_KEY", extra={"top_k": 3})
        c = call(spec)
    assert (c.text, c.input_tokens, c.cached_tokens, c.thinking_tokens, c.output_tokens) == (
        "hello there", 1000, 400, 20, 50)
    assert c.cost_usd is None  # a self-hosted model has no known price
    body = server.requests[0]
    assert body["model"] == "smol" and body["temperature"] == 0.0 and body["max_tokens"] == 16
    assert body["seed"] == 7 and body["top_k"] == 3


def test_429_is_retried_honouring_retry_after():
    with ScriptedServer([(429, {"Retry-After": "0.5"}), (503, {})]) as server:
        c = call(RoleSpec("actor", "openai/smol", api_base=server.api_base))
    assert c.text == "hello there" and c.retries == 2
    assert server.times[1] - server.times[0] >= 0.45  # waited as told, though base delay is 0


def test_401_fails_at_once():
    with ScriptedServer([(401, {}), (200, {})]) as server, pytest.raises(PermanentProviderError) as info:
        call(RoleSpec("actor", "openai/smol", api_base=server.api_base))
    assert len(server.requests) == 1 and info.value.status_code == 401


def test_transient_errors_give_up_after_max_retries():
    with ScriptedServer([(500, {})] * 10) as server, pytest.raises(TransientProviderError) as info:
        call(RoleSpec("actor", "openai/smol", api_base=server.api_base),
             RetryPolicy(max_retries=2, base_delay_s=0.0))
    assert len(server.requests) == 3 and info.value.retries == 2


def test_dropped_connection_is_transient():
    # Nothing listens on this port: the connection is refused, which is worth retrying.
    with pytest.raises(TransientProviderError) as info:
        call(RoleSpec("actor", "openai/smol", api_base="http://127.0.0.1:9/v1"),
             RetryPolicy(max_retries=1, base_delay_s=0.0))
    assert info.value.retries == 1


@pytest.mark.parametrize("status, transient", [(408, True), (409, True), (429, True), (500, True),
                                               (502, True), (400, False), (401, False), (403, False),
                                               (404, False), (422, False)])
def test_classification_by_status(status, transient):
    exc = type("APIError", (Exception,), {"status_code": status})("boom")
    assert isinstance(models.classify(exc), TransientProviderError) is transient


def test_classification_of_litellm_exceptions():
    litellm = models.import_litellm()
    classify = LiteLLMProvider().classify
    rate = classify(litellm.RateLimitError("slow down", llm_provider="openai", model="gpt-4o"))
    auth = classify(litellm.AuthenticationError("bad key", llm_provider="openai", model="gpt-4o"))
    gone = classify(litellm.APIConnectionError("refused", llm_provider="openai", model="gpt-4o"))
    assert isinstance(rate, TransientProviderError) and models.is_rate_limit(rate)
    assert isinstance(auth, PermanentProviderError) and auth.fatal
    assert isinstance(gone, TransientProviderError) and gone.unreachable


def test_each_provider_classifies_its_own_failures():
    from seqk.errors import HTTPStatusError
    from seqk.models import http1
    from seqk.models.openai_http import OpenAIHTTPProvider

    http = OpenAIHTTPProvider().classify
    limited = http(HTTPStatusError(429, "slow down", {"retry-after": "3"}))
    assert models.is_rate_limit(limited) and limited.retry_after == 3.0
    refused = http(http1.Unreachable("Cannot connect to 127.0.0.1:9: [Errno 111] refused"))
    assert isinstance(refused, TransientProviderError) and refused.unreachable
    for dropped in (http1.Disconnected("cut"), http1.BadReply("not HTTP"), TimeoutError()):
        failure = http(dropped)
        assert isinstance(failure, TransientProviderError) and not failure.unreachable
    assert isinstance(http(HTTPStatusError(400, "bad", {})), PermanentProviderError)
    # A name is only a name outside litellm: a class called RateLimitError without a status is not one.
    assert not isinstance(http(type("RateLimitError", (Exception,), {})("?")), TransientProviderError)


def test_quota_stops_calls_to_a_model():
    models.register_mock("mock/q", ["ok"])

    async def go():
        pool = models.ModelPool(RetryPolicy(), quota={"mock/q": 2})
        spec = RoleSpec("actor", "mock/q")
        await pool.complete(spec, "a")
        await pool.complete(spec, "b")
        with pytest.raises(models.QuotaExceeded, match="quota of 2 calls to mock/q"):
            await pool.complete(spec, "c")

    asyncio.run(go())


def test_cost_formula_matches_seq_k_published_figure():
    # seq_k's README: 1,375,958 in / 1,218,604 cached / 41,715 out on claude-sonnet-4-6 = $1.463368.
    cost = models.cost_usd("anthropic/claude-sonnet-4-6", 1375958, 1218604, 41715)
    assert round(cost, 6) == 1.463368


def test_litellm_price_map_is_used_after_the_project_table():
    models.import_litellm()
    entry = __import__("litellm").model_cost["gpt-4o"]
    expected = ((1000 - 200) * entry["input_cost_per_token"]
                + 200 * entry["cache_read_input_token_cost"] + 100 * entry["output_cost_per_token"])
    assert models.cost_usd("openai/gpt-4o", 1000, 200, 100) == pytest.approx(expected, rel=1e-12)


def test_unknown_model_costs_null_with_one_warning(caplog):
    pricing._warned.discard("acme/nobody-knows")
    with caplog.at_level(logging.WARNING, logger="seqk"):
        assert models.cost_usd("acme/nobody-knows", 10, 0, 10) is None
        assert models.cost_usd("acme/nobody-knows", 10, 0, 10) is None
    assert [r.getMessage() for r in caplog.records].count(
        "no price known for acme/nobody-knows: its cost_usd is null (set the role's price: in the variant, "
        "or add it to seqk/models/pricing.py)") == 1


def test_mock_scripts_lists_and_exceptions():
    models.register_mock("mock/list", ["a", TransientProviderError("429", status_code=429), "b"])

    async def go():
        pool = models.ModelPool(RetryPolicy(max_retries=1, base_delay_s=0.0))
        spec = RoleSpec("actor", "mock/list")
        first = await pool.complete(spec, "x")
        second = await pool.complete(spec, "x")
        third = await pool.complete(spec, "x")
        return first, second, third

    first, second, third = asyncio.run(go())
    assert (first.text, second.text, second.retries, third.text) == ("a", "b", 1, "b")
    with pytest.raises(PermanentProviderError, match="unknown mock model 'mock/nope'"):
        asyncio.run(models.ModelPool(RetryPolicy()).complete(RoleSpec("actor", "mock/nope"), "x"))


@pytest.mark.parametrize("model, api_base, provider", [
    ("mock/echo", None, "mock"),
    ("local/smollm2-135m", None, "local"),
    ("openai/smol", "http://127.0.0.1:9/v1", "openai-http"),
    ("openai/gpt-4o", None, "litellm"),
    ("anthropic/claude-sonnet-4-6", "http://127.0.0.1:9/v1", "litellm"),
    ("gemini/gemini-2.5-pro", None, "litellm"),
])
def test_one_registry_says_which_provider_serves_a_model(model, api_base, provider):
    assert models.provider_for(model, api_base).name == provider
    assert models.provider_of(RoleSpec("judge", model, api_base=api_base)).name == provider


def test_readiness_is_the_providers_own():
    # A local model's file is checked before a run; the others have nothing to start.
    with pytest.raises(MissingExtra, match="does not exist"):
        models.ensure_ready(RoleSpec("actor", "local//nowhere/model.gguf"))
    for role in (RoleSpec("actor", "mock/echo"), RoleSpec("actor", "openai/smol", api_base="http://x/v1"),
                 RoleSpec("judge", None)):
        models.ensure_ready(role)


@pytest.mark.slow
def test_prices_come_from_the_provider_whether_or_not_litellm_was_imported():
    # A fresh process: a free or self-hosted model is priced without importing litellm, and a
    # hosted one loads litellm's price map on its own instead of depending on an earlier import.
    code = ("import sys; from seqk import models as m; from seqk.models import pricing as p\n"
            "free = [m.price_of(x) for x in ('mock/x', 'local/smollm2-135m')]\n"
            "served = m.price_of('openai/gpt-4o', api_base='http://127.0.0.1:9/v1')\n"
            "own = m.price_of('openai/gpt-4o', p.Price(1, 1, 2), 'http://127.0.0.1:9/v1')\n"
            "before = 'litellm' in sys.modules\n"
            "hosted = m.price_of('openai/gpt-4o')\n"
            "print(free == [p.Price(0, 0, 0)] * 2, served, own == p.Price(1, 1, 2), before,\n"
                "      hosted is not None and hosted.input > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "None", "True", "False", "True"]
