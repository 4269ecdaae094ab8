"""OpenAI-compatible servers (vLLM, llama.cpp server, Ollama, ...) reached directly over HTTP/1.1.

Measured on 2 cores against a loopback server that answers after 200 ms:
120 concurrent calls take 0.86-1.04 s through litellm.acompletion and
0.65-5.1 s through the openai SDK, but 0.24-0.31 s through one shared aiohttp
session. litellm's per-call CPU cost serialises on the event loop, so a role
that names an `api_base` with an `openai/` model id takes this direct path,
and litellm is not imported for it (not even for its price map: 3.7 s here).
The client is seqk's own (seqk.models.http1: a protocol per kept connection),
which costs a fraction of aiohttp's CPU per call (bench/bench_client.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from seqk.errors import HTTPStatusError, ProviderError, TransientProviderError
from seqk.models import http1
from seqk.models.base import Completion, key_env_problem, messages_of, sampling
from seqk.models.pricing import Price
from seqk.models.retry import classify, from_status, retry_after
from seqk.models.role import RoleSpec
from seqk.records import Prompt

_SESSIONS: dict[int, http1.Client] = {}
_KEPT: dict[int, int] = {}


def _session() -> http1.Client:
    loop = asyncio.get_running_loop()
    session = _SESSIONS.get(id(loop))
    if session is None or session.closed:
        session = _SESSIONS[id(loop)] = http1.Client()
    return session


async def close_sessions() -> None:
    """Close this loop's kept connections (the engine calls it when a run ends); inside
    `sessions_kept`, nothing: another run in the same loop may have calls in flight on them."""
    if _KEPT.get(id(asyncio.get_running_loop())):
        return
    session = _SESSIONS.pop(id(asyncio.get_running_loop()), None)
    if session is not None:
        session.close()


_JSON = {"Content-Type": "application/json", "Accept": "application/json"}


@contextlib.asynccontextmanager
async def sessions_kept() -> AsyncIterator[None]:
    """Several runs in one event loop (a study runs its two arms together): this loop's session
    stays open until the block ends, whichever run ends first, then it is closed."""
    key = id(asyncio.get_running_loop())
    _KEPT[key] = _KEPT.get(key, 0) + 1
    try:
        yield
    finally:
        _KEPT[key] -= 1
        if not _KEPT[key]:
            del _KEPT[key]
            await close_sessions()


async def chat_completion(spec: RoleSpec, prompt: Prompt, api_base: str) -> Completion:
    """One POST to `api_base`/chat/completions; HTTPStatusError on a 4xx or 5xx.

    The body goes as bytes encoded here and the reply is read as bytes and parsed here
    (seqk.models.http1: one write a request, the reply parsed as it arrives)."""
    assert spec.model is not None
    data = encode_body(request_body(spec, prompt))
    headers = _JSON
    key = os.environ.get(spec.api_key_env or "", "")
    if key:
        headers = {**_JSON, "Authorization": f"Bearer {key}"}
    url = api_base.rstrip("/") + "/chat/completions"
    start = time.perf_counter()
    status, reply_headers, body = await _session().post(url, data, headers, timeout_s=spec.timeout_s or 600)
    if status >= 400:
        raise HTTPStatusError(status, body.decode(errors="replace"), reply_headers)
    try:
        reply = decode_reply(body)
    except ValueError as exc:
        raise http1.BadReply(f"HTTP {status} with a body that is not JSON: "
                             f"{body[:200].decode(errors='replace')!r}") from exc
    return parse_chat_completion(reply, spec.model, time.perf_counter() - start)


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body as UTF-8 JSON bytes: orjson's (a 20 KB body in 4 us against the standard
    library's 120-160 us: ~6 % of the CPU of 120 x 4 chains, docs/performance.md), the standard
    library's for what orjson refuses (an integer past 64 bits in `extra`), so a body that encoded
    before encodes now, to the same JSON values; a NaN or an infinity in `extra` goes as null
    (the standard library wrote NaN, which is not JSON)."""
    try:
        return orjson.dumps(body)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(body, ensure_ascii=False).encode()


def decode_reply(body: bytes) -> Any:
    """A reply's JSON: orjson's, the standard library's for what orjson refuses but it reads
    (NaN, an integer past 64 bits, a lone surrogate escaped); ValueError when neither reads it."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)


def request_body(spec: RoleSpec, prompt: Prompt) -> dict[str, Any]:
    """The chat-completions body of one call: model, the prompt's messages (a str: one user
    message), the role's sampling settings, its service tier and its extra parameters."""
    assert spec.model is not None
    body: dict[str, Any] = {"model": spec.model.removeprefix("openai/"),
                            "messages": messages_of(prompt), **sampling(spec)}
    if spec.service_tier:
        body["service_tier"] = spec.service_tier
    body.update(spec.extra)
    return body


def parse_chat_completion(data: dict[str, Any], model: str, latency_s: float) -> Completion:
    """A chat-completions response body as a Completion (the four token fields from its usage)."""
    usage = data.get("usage") or {}
    input_tokens = int(usage.get("prompt_tokens") or 0)
    output_tokens = int(usage.get("completion_tokens") or 0)
    cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    thinking = int((usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)
    text = data["choices"][0]["message"].get("content") or ""
    return Completion(
        text=text, model=model, input_tokens=input_tokens, cached_tokens=cached,
        thinking_tokens=thinking, output_tokens=output_tokens, latency_s=latency_s)


def classify_http(exc: BaseException) -> ProviderError:
    """A failure of chat_completion: an HTTP status by its status (Retry-After read); no
    connection (the server was not there) worth another try and said to be unreachable; a dropped
    connection, a reply that is not HTTP or not JSON, and a timeout worth another try; else
    seqk.models.retry.classify."""
    message = f"{type(exc).__name__}: {exc}"[:2000]
    if isinstance(exc, HTTPStatusError):
        return from_status(exc.status_code, message, kind=type(exc).__name__, retry_after=retry_after(exc))
    if isinstance(exc, http1.Unreachable):
        return TransientProviderError(message, kind=type(exc).__name__, unreachable=True)
    if isinstance(exc, http1.Disconnected | http1.BadReply | TimeoutError):
        return TransientProviderError(message, kind=type(exc).__name__)
    return classify(exc)


class OpenAIHTTPProvider:
    """An `openai/...` id at a role's `api_base`: connections kept per event loop (seqk.models.http1)."""

    name = "openai-http"

    def serves(self, model: str, api_base: str | None) -> bool:
        """An `openai/` id with an `api_base`."""
        return bool(api_base) and model.startswith("openai/")

    async def call(self, spec: RoleSpec, prompt: Prompt, cache_prefix: str | None = None) -> Completion:
        """One chat completion from the role's server."""
        assert spec.api_base is not None
        return await chat_completion(spec, prompt, spec.api_base)

    def model_problem(self, model: str, api_base: str | None) -> str | None:
        """None: the server decides which models it serves (`seqk probe` asks it)."""
        return None

    def classify(self, exc: BaseException) -> ProviderError:
        """classify_http."""
        return classify_http(exc)

    def credential_problem(self, role: RoleSpec) -> str | None:
        """Only a named `api_key_env` can be missing: many servers need no key."""
        return key_env_problem(role)

    def ensure_ready(self, role: RoleSpec) -> None:
        """Nothing: the server is reached by the first call (`seqk probe` checks it sooner)."""

    def check_installed(self, role: RoleSpec) -> None:
        """Nothing: the model runs on the server."""

    def price(self, model: str) -> Price | None:
        """None: a server named by `api_base` is priced by whoever runs it (the role's `price:`)."""
        return None

    def import_client(self) -> None:
        """Nothing: seqk.models.http1 is imported with this module."""
