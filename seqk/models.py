"""The one door to LLMs.

Every call of every role goes through `ModelPool.complete`, which returns the
text, the four token fields, latency and cost. Transient failures (429, 5xx,
timeouts, dropped connections) are retried with exponential backoff and full
jitter, honouring Retry-After; permanent ones (auth, bad request) fail at once.

Providers: `mock/...` is built in and needs nothing (scripted replies for tests
and benchmarks of the harness); `local/...` runs in worker processes of its own
(seqk.llm_local) reached over loopback; a role with an `api_base` and an `openai/`
id talks to that server directly; everything else goes through litellm, which is
imported on the first real call and never by `import seqk`.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import random
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from seqk.config import RetryPolicy
from seqk.errors import (
    AuthError,
    ConfigIssue,
    HTTPStatusError,
    PermanentProviderError,
    ProviderError,
    QuotaExceeded,
    TransientProviderError,
)
from seqk.limiter import AdaptiveLimit, LimitState
from seqk.pricing import cost_usd
from seqk.runspec import RoleSpec


@dataclass
class Completion:
    """One successful call."""

    text: str
    model: str
    input_tokens: int
    cached_tokens: int
    thinking_tokens: int
    output_tokens: int
    latency_s: float
    cost_usd: float | None
    retries: int = 0


# ---------------------------------------------------------------------------
# Mock models

_TOKEN = re.compile(r"\w+|[^\w\s]")

MockReply = str | BaseException | Callable[[str], "str | Awaitable[str]"]


def count_tokens(text: str) -> int:
    """Mock token count: words and punctuation marks. Honest about the text, unlike a constant."""
    return len(_TOKEN.findall(text))


@dataclass
class MockModel:
    """Scripted replies: a function of the prompt, or a list served in call order
    (the last one repeats). An exception in the script is raised, as a provider would."""

    replies: Sequence[MockReply] | Callable[[str], Any]
    latency_s: float = 0.0
    calls: int = 0

    async def reply(self, prompt: str) -> str:
        """The next scripted reply to `prompt`."""
        n = self.calls
        self.calls += 1
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        script = self.replies
        item: Any = script if callable(script) else script[min(n, len(script) - 1)]
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            item = item(prompt)
            if inspect.isawaitable(item):
                item = await item
        return str(item)


_MOCKS: dict[str, MockModel] = {}
_BUILTIN_MOCKS: dict[str, Callable[[], MockModel]] = {
    "mock/echo": lambda: MockModel(lambda prompt: prompt),
    "mock/wrong": lambda: MockModel(["[[-1]]"]),
}


def register_mock(model: str, replies: Sequence[MockReply] | Callable[[str], Any],
                  latency_s: float = 0.0) -> MockModel:
    """Make `model` (a `mock/...` id) answer with a script; returns the mock for inspection."""
    if not model.startswith("mock/"):
        raise ValueError(f"mock model ids start with 'mock/': {model!r}")
    mock = MockModel(replies, latency_s)
    _MOCKS[model] = mock
    return mock


def clear_mocks() -> None:
    """Forget every registered mock."""
    _MOCKS.clear()


def _mock_for(model: str) -> MockModel:
    if model in _MOCKS:
        return _MOCKS[model]
    if model in _BUILTIN_MOCKS:
        _MOCKS[model] = _BUILTIN_MOCKS[model]()
        return _MOCKS[model]
    if model.startswith("mock/py:"):
        # mock/py:package.module:attr names a script importable in this process.
        module_name, _, attr = model.removeprefix("mock/py:").partition(":")
        try:
            target = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise PermanentProviderError(f"cannot load mock script {model!r}: {exc}") from None
        _MOCKS[model] = target if isinstance(target, MockModel) else MockModel(target)
        return _MOCKS[model]
    known = ", ".join(sorted(set(_MOCKS) | set(_BUILTIN_MOCKS)))
    raise PermanentProviderError(f"unknown mock model {model!r} (known: {known}, or mock/py:module:attr)")


def mock_problem(model: str) -> str | None:
    """Why the `mock/...` id `model` cannot answer (unknown, or its script does not import), or None.

    Checked when a variant loads, so a typo stops the run before any attempt is written.
    """
    if model in _MOCKS or model in _BUILTIN_MOCKS:
        return None
    if model.startswith("mock/py:"):
        module_name, _, attr = model.removeprefix("mock/py:").partition(":")
        if not module_name or not attr:
            return f"{model!r} should read mock/py:module:attr"
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # noqa: BLE001 - importing the script runs the user's code
            return f"cannot import the mock script's module {module_name!r}: {exc}"
        if not hasattr(module, attr):
            return f"module {module_name!r} has no {attr!r} for the mock script {model!r}"
        return None
    known = ", ".join(sorted(set(_MOCKS) | set(_BUILTIN_MOCKS)))
    return f"unknown mock model {model!r}; known: {known}, or mock/py:module:attr"


async def _call_mock(spec: RoleSpec, prompt: str) -> Completion:
    assert spec.model is not None
    mock = _mock_for(spec.model)
    start = time.perf_counter()
    text = await mock.reply(prompt)
    input_tokens, output_tokens = count_tokens(prompt), count_tokens(text)
    return Completion(
        text=text, model=spec.model, input_tokens=input_tokens, cached_tokens=0,
        thinking_tokens=0, output_tokens=output_tokens, latency_s=time.perf_counter() - start,
        cost_usd=cost_usd(spec.model, input_tokens, 0, output_tokens, spec.price))


# ---------------------------------------------------------------------------
# litellm


def import_litellm() -> Any:
    """litellm, imported on first use with its price map read from disk, not the network."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def _usage_field(obj: Any, name: str) -> int:
    value = getattr(obj, name, None) if obj is not None else None
    return int(value or 0)


def _retry_after(exc: BaseException) -> float | None:
    headers = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    headers = headers or getattr(exc, "litellm_response_headers", None)
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return float(ms) / 1000
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


_TRANSIENT_NAMES = ("RateLimit", "ServiceUnavailable", "InternalServer", "BadGateway",
                    "Timeout", "APIConnection", "Connect", "RemoteProtocol", "ReadError",
                    "ServerDisconnected", "ClientOSError", "ClientPayloadError")


_AUTH_NAMES = ("Authentication", "PermissionDenied", "Unauthorized")
_AUTH_MESSAGE = re.compile(
    r"missing credentials|api[_ ]?key (client option )?must be set|invalid (x-)?api[_ ]?key|"
    r"incorrect api key|no api key|api key not valid|unauthorized", re.IGNORECASE)


def classify(exc: BaseException) -> ProviderError:
    """Turn a provider exception into a transient, permanent or auth ProviderError."""
    if isinstance(exc, ProviderError):
        return exc
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    name = type(exc).__name__
    message = f"{name}: {exc}"[:2000]
    # litellm reports a missing key as a 500 InternalServerError: read the words too.
    if status in (401, 403) or any(part in name for part in _AUTH_NAMES) or _AUTH_MESSAGE.search(message):
        return AuthError(message, status_code=status, kind="AuthError")
    transient = (
        status in (408, 409, 425, 429)
        or (status is not None and status >= 500)
        or isinstance(exc, asyncio.TimeoutError | ConnectionError | TimeoutError)
        or (status is None and any(part in name for part in _TRANSIENT_NAMES))
    )
    cls = TransientProviderError if transient else PermanentProviderError
    return cls(message, status_code=status, retry_after=_retry_after(exc), kind=name)


async def _call_litellm(spec: RoleSpec, prompt: str) -> Completion:
    assert spec.model is not None
    litellm = import_litellm()
    kwargs: dict[str, Any] = {"num_retries": 0}
    for name in ("temperature", "max_tokens", "top_p", "seed"):
        value = getattr(spec, name)
        if value is not None:
            kwargs[name] = value
    if spec.timeout_s is not None:
        kwargs["timeout"] = spec.timeout_s
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
        # OpenAI-compatible servers often need no key, but the client insists on one.
        kwargs["api_key"] = os.environ.get(spec.api_key_env or "", "") or "no-key-needed"
    elif spec.api_key_env:
        kwargs["api_key"] = os.environ.get(spec.api_key_env)
    kwargs.update(spec.extra)
    start = time.perf_counter()
    response = await litellm.acompletion(
        model=spec.model, messages=[{"role": "user", "content": prompt}], **kwargs)
    latency = time.perf_counter() - start
    text = response.choices[0].message.content or ""
    usage = getattr(response, "usage", None)
    input_tokens = _usage_field(usage, "prompt_tokens")
    output_tokens = _usage_field(usage, "completion_tokens")
    cached = _usage_field(getattr(usage, "prompt_tokens_details", None), "cached_tokens")
    thinking = _usage_field(getattr(usage, "completion_tokens_details", None), "reasoning_tokens")
    return Completion(
        text=text, model=spec.model, input_tokens=input_tokens, cached_tokens=cached,
        thinking_tokens=thinking, output_tokens=output_tokens, latency_s=latency,
        cost_usd=cost_usd(spec.model, input_tokens, cached, output_tokens, spec.price))


# ---------------------------------------------------------------------------
# OpenAI-compatible servers (vLLM, llama.cpp server, Ollama, ...)
#
# Measured on 2 cores against a loopback server that answers after 200 ms:
# 120 concurrent calls take 0.86-1.04 s through litellm.acompletion and
# 0.65-5.1 s through the openai SDK, but 0.24-0.31 s through one shared aiohttp
# session. litellm's per-call CPU cost serialises on the event loop, so a role
# that names an `api_base` with an `openai/` model id takes this direct path.

_SESSIONS: dict[int, Any] = {}


def _session() -> Any:
    import aiohttp

    loop = asyncio.get_running_loop()
    session = _SESSIONS.get(id(loop))
    if session is None or session.closed:
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        _SESSIONS[id(loop)] = session
    return session


async def close_sessions() -> None:
    """Close this loop's HTTP session (the engine calls it when a run ends)."""
    session = _SESSIONS.pop(id(asyncio.get_running_loop()), None)
    if session is not None:
        await session.close()


def uses_direct_http(spec: RoleSpec) -> bool:
    """True when the role talks to an OpenAI-compatible server without litellm."""
    return bool(spec.api_base) and (spec.model or "").startswith("openai/")


async def _call_openai_compatible(spec: RoleSpec, prompt: str, api_base: str | None = None) -> Completion:
    import aiohttp

    api_base = api_base or spec.api_base
    assert spec.model is not None and api_base is not None
    body: dict[str, Any] = {"model": spec.model.removeprefix("openai/"),
                            "messages": [{"role": "user", "content": prompt}]}
    for name in ("temperature", "max_tokens", "top_p", "seed"):
        value = getattr(spec, name)
        if value is not None:
            body[name] = value
    body.update(spec.extra)
    headers = {}
    key = os.environ.get(spec.api_key_env or "", "")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = api_base.rstrip("/") + "/chat/completions"
    timeout = aiohttp.ClientTimeout(total=spec.timeout_s or 600)
    start = time.perf_counter()
    async with _session().post(url, json=body, headers=headers, timeout=timeout) as response:
        if response.status >= 400:
            raise HTTPStatusError(response.status, await response.text(), response.headers)
        data = await response.json(content_type=None)
    latency = time.perf_counter() - start
    usage = data.get("usage") or {}
    input_tokens = int(usage.get("prompt_tokens") or 0)
    output_tokens = int(usage.get("completion_tokens") or 0)
    cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    thinking = int((usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)
    text = data["choices"][0]["message"].get("content") or ""
    return Completion(
        text=text, model=spec.model, input_tokens=input_tokens, cached_tokens=cached,
        thinking_tokens=thinking, output_tokens=output_tokens, latency_s=latency,
        cost_usd=cost_usd(spec.model, input_tokens, cached, output_tokens, spec.price))


async def _call_local(spec: RoleSpec, prompt: str) -> Completion:
    """A `local/...` model: one of its worker processes, over the OpenAI-compatible path."""
    from seqk import llm_local

    assert spec.model is not None
    local = llm_local.server(spec.model, spec.max_concurrency)
    async with local.lease() as worker:
        try:
            return await _call_openai_compatible(spec, prompt, api_base=worker.api_base)
        except Exception as exc:
            failure = await asyncio.to_thread(local.failure, worker, exc, spec.timeout_s)
            if failure is None:
                raise
            raise failure from exc


# ---------------------------------------------------------------------------
# Credentials, checked before a run spends anything


_ROLE_FIELD = {"actor": "model", "judge": "judge_model", "critic": "critic_model"}


def missing_credentials(role: RoleSpec) -> str | None:
    """What this role's key problem is, in words, or None when its key is there (or none
    is needed: mock and local models, OpenAI-compatible servers without `api_key_env`)."""
    model = role.model
    if model is None or model.startswith(("mock/", "local/")):
        return None
    if role.api_key_env:
        if os.environ.get(role.api_key_env):
            return None
        return f"the {role.role} ({model}) reads its key from ${role.api_key_env}, which is not set"
    if role.api_base:
        return None
    check = import_litellm().validate_environment(model)
    missing = check.get("missing_keys") or []
    if check.get("keys_in_environment") or not missing:
        return None
    # litellm lists alternatives (GOOGLE_API_KEY, GEMINI_API_KEY) and companions
    # (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) alike; keys are alternatives.
    joiner = " or " if all(name.endswith("_API_KEY") for name in missing) else " and "
    names = joiner.join(f"${name}" for name in missing)
    return (f"the {role.role} ({model}) needs {names}, which is not set "
            "(or set api_key_env: to the variable that holds the key)")


def credential_problems(roles: Sequence[RoleSpec]) -> list[ConfigIssue]:
    """Every role whose key is missing from the environment, as validation issues (C10)."""
    issues: list[ConfigIssue] = []
    seen: set[tuple[str | None, str | None, str | None]] = set()
    for role in roles:
        key = (role.model, role.api_base, role.api_key_env)
        if key in seen:
            continue
        seen.add(key)
        problem = missing_credentials(role)
        if problem:
            field = _ROLE_FIELD.get(role.role, role.role)
            issues.append(ConfigIssue("C10", f"{field}.api_key_env" if role.api_key_env else field, problem))
    return issues


# ---------------------------------------------------------------------------
# The pool: limits, quotas and retries


class ModelPool:
    """Calls models for a run: per-model adaptive concurrency limits, quotas and retries."""

    def __init__(self, retry: RetryPolicy, quota: dict[str, int] | None = None,
                 default_concurrency: int = 64, quiet_s: float = 5.0):
        self.retry = retry
        self.quota = dict(quota or {})
        self.default_concurrency = default_concurrency
        self.quiet_s = quiet_s
        self.calls_made: dict[str, int] = {}
        self._limits: dict[tuple[str, str | None], AdaptiveLimit] = {}

    def _limit(self, spec: RoleSpec) -> AdaptiveLimit:
        assert spec.model is not None
        key = (spec.model, spec.api_base)
        if key not in self._limits:
            self._limits[key] = AdaptiveLimit(spec.max_concurrency or self.default_concurrency,
                                              quiet_s=self.quiet_s)
        return self._limits[key]

    def limit_states(self) -> list[LimitState]:
        """Each model's current limit on calls in flight, and how rate limits moved it."""
        return [LimitState(model, api_base, lim.limit, lim.ceiling, lim.lowest, lim.rate_limited)
                for (model, api_base), lim in self._limits.items()]

    def _backoff(self, retry_number: int, error: ProviderError) -> float:
        ceiling = min(self.retry.max_delay_s, self.retry.base_delay_s * 2 ** retry_number)
        delay = random.uniform(0, ceiling)
        if error.retry_after is not None:
            delay = max(delay, min(error.retry_after, self.retry.max_delay_s))
        return delay

    async def complete(self, spec: RoleSpec, prompt: str) -> Completion:
        """One call with retries. Raises ProviderError (with `.retries`) when it finally fails.

        Rate limits are retried apart from max_retries (up to max_rate_limit_retries): they say
        "slower", not "broken", and the model's limit on calls in flight adapts to them."""
        assert spec.model is not None
        if spec.model.startswith("mock/"):
            call = _call_mock
        elif spec.model.startswith("local/"):
            call = _call_local
        elif uses_direct_http(spec):
            call = _call_openai_compatible
        else:
            call = _call_litellm
        limit = self._limit(spec)
        retries = rate_limit_retries = 0
        while True:
            used = self.calls_made.get(spec.model, 0)
            if spec.model in self.quota and used >= self.quota[spec.model]:
                error: ProviderError = QuotaExceeded(
                    f"quota of {self.quota[spec.model]} calls to {spec.model} reached in this run")
                error.retries = retries + rate_limit_retries
                raise error
            self.calls_made[spec.model] = used + 1
            epoch = await limit.acquire()
            try:
                completion = await call(spec, prompt)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every provider failure is classified
                error = classify(exc)
                rate_limited = is_rate_limit(error)
                if rate_limited:
                    limit.on_rate_limit(epoch)
                exhausted = (rate_limit_retries >= self.retry.max_rate_limit_retries if rate_limited
                             else retries >= self.retry.max_retries)
                if isinstance(error, PermanentProviderError) or exhausted:
                    error.retries = retries + rate_limit_retries
                    raise error from exc
            else:
                limit.on_success()
                completion.retries = retries + rate_limit_retries
                return completion
            finally:
                limit.release()
            if rate_limited:
                await asyncio.sleep(self._backoff(rate_limit_retries, error))
                rate_limit_retries += 1
            else:
                await asyncio.sleep(self._backoff(retries, error))
                retries += 1


def is_rate_limit(error: ProviderError) -> bool:
    """A 429, or a provider's rate-limit error under another status."""
    return error.status_code == 429 or "RateLimit" in (error.kind or "")


# ---------------------------------------------------------------------------
# Probe: one tiny call per model, to check keys and endpoints before spending

PROBE_PROMPT = "Reply with the single word: ok"


@dataclass
class ProbeResult:
    """One model's answer to the probe (or why it gave none)."""

    model: str
    roles: list[str]
    api_base: str | None
    ok: bool
    latency_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    text: str | None = None
    error: str | None = None


def probe(roles: Sequence[RoleSpec], max_tokens: int = 8) -> list[ProbeResult]:
    """Call each distinct (model, endpoint) of `roles` once, without retries."""
    import dataclasses

    distinct: dict[tuple[str, str | None, str | None], tuple[RoleSpec, list[str]]] = {}
    for role in roles:
        if role.model is None:
            continue
        key = (role.model, role.api_base, role.api_key_env)
        distinct.setdefault(key, (role, []))[1].append(role.role)
    async def one(spec: RoleSpec, names: list[str]) -> ProbeResult:
        assert spec.model is not None
        result = ProbeResult(spec.model, names, spec.api_base, ok=False)
        result.error = missing_credentials(spec)
        if result.error:
            return result
        pool = ModelPool(RetryPolicy(max_retries=0))
        call = dataclasses.replace(spec, temperature=0, max_tokens=max_tokens)
        try:
            c = await pool.complete(call, PROBE_PROMPT)
        except ProviderError as exc:
            result.error = f"{exc.kind}: {' '.join(str(exc).split())}"[:500]
            return result
        result.ok = True
        result.latency_s, result.text, result.cost_usd = c.latency_s, c.text, c.cost_usd
        result.input_tokens, result.output_tokens = c.input_tokens, c.output_tokens
        return result

    async def everything() -> list[ProbeResult]:
        try:
            return await asyncio.gather(*(one(spec, names) for spec, names in distinct.values()))
        finally:
            await close_sessions()

    return asyncio.run(everything())
