"""Anthropic's Message Batches, through the anthropic SDK (imported here; litellm cannot create
them). Prompts carry a cache_control breakpoint at their stable prefix, so the part a later
request repeats is written to the cache once and read at a tenth of the price."""

from __future__ import annotations

from typing import Any

from seqk.errors import PermanentProviderError, TransientProviderError
from seqk.models.base import Completion
from seqk.models.batch.base import BatchRequest, BatchStatus, ItemResult, SdkBatch
from seqk.models.role import RoleSpec
from seqk.records import Prompt

DEFAULT_MAX_TOKENS = 4096
"""Anthropic requires max_tokens; a role without one gets this."""


def anthropic_content(prompt: str, cache_prefix: str | None) -> str | list[dict[str, Any]]:
    """The user message's content: text blocks with a cache breakpoint after the stable prefix
    (the prompt as a plain string when there is none)."""
    if not cache_prefix or not prompt.startswith(cache_prefix):
        return prompt
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": cache_prefix, "cache_control": {"type": "ephemeral"}}]
    if len(prompt) > len(cache_prefix):
        blocks.append({"type": "text", "text": prompt[len(cache_prefix):]})
    return blocks


def anthropic_messages(prompt: Prompt, cache_prefix: str | None) -> list[dict[str, Any]]:
    """The prompt's messages with a cache breakpoint where the part the next call repeats ends:
    after `cache_prefix` in a str prompt, at a Chat's `cache_at`."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": anthropic_content(prompt, cache_prefix)}]
    at = prompt.cache_at
    return [{"role": m.role, "content": anthropic_content(m.content, m.content[:at[1]])
             if at is not None and at[0] == i else m.content}
            for i, m in enumerate(prompt.messages)]


def message_params(spec: RoleSpec, prompt: Prompt, cache_prefix: str | None) -> dict[str, Any]:
    """The Messages API parameters of one call (Anthropic takes no seed; a system message goes
    in `system`)."""
    assert spec.model is not None
    messages = anthropic_messages(prompt, cache_prefix)
    params: dict[str, Any] = {
        "model": spec.model.removeprefix("anthropic/"),
        "max_tokens": spec.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": [m for m in messages if m["role"] != "system"]}
    system = [m["content"] for m in messages if m["role"] == "system"]
    if system:
        params["system"] = system[0]
    if spec.temperature is not None:
        params["temperature"] = spec.temperature
    if spec.top_p is not None:
        params["top_p"] = spec.top_p
    params.update(spec.extra)
    return params


def message_completion(message: dict[str, Any], model: str) -> Completion:
    """A Messages API reply as a Completion. Anthropic's input_tokens leaves out cache reads and
    writes; seqk's input_tokens counts every input token, cached and written ones included."""
    usage = message.get("usage") or {}
    read = int(usage.get("cache_read_input_tokens") or 0)
    write = int(usage.get("cache_creation_input_tokens") or 0)
    text = "".join(block.get("text", "") for block in message.get("content") or []
                   if block.get("type") == "text")
    return Completion(text=text, model=model, input_tokens=int(usage.get("input_tokens") or 0) + read + write,
                      cached_tokens=read, thinking_tokens=0,
                      output_tokens=int(usage.get("output_tokens") or 0), latency_s=0.0,
                      cache_write_tokens=write)


class AnthropicBatch(SdkBatch):
    """POST /v1/messages/batches, GET /v1/messages/batches/{id} and its results."""

    name = "anthropic"
    sdk = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    max_items = 100_000
    max_bytes = 256 * 1024 * 1024

    def new_client(self, module: Any, key: str | None) -> Any:
        return module.AsyncAnthropic(base_url=self.api_base, api_key=key, max_retries=3)

    def request(self, request: BatchRequest) -> dict[str, Any]:
        """The request as the batch holds it."""
        return {"custom_id": request.custom_id,
                "params": message_params(request.spec, request.prompt, request.cache_prefix)}

    def request_bytes(self, request: BatchRequest) -> int:
        """Bytes of the request's JSON."""
        import json

        return len(json.dumps(self.request(request)).encode())

    async def submit(self, requests: list[BatchRequest], key: str) -> str:
        """Create the batch. Message Batches take no metadata: `key` is found again by time and
        size (find)."""
        batch = await self.client().messages.batches.create(requests=[self.request(r) for r in requests])
        return str(batch.id)

    async def find(self, key: str, n_items: int, since_unix: float) -> str | None:
        """The oldest batch created since `since_unix` (less a minute of clock skew) with
        `n_items` requests: the one a crash kept seqk from recording."""
        found = None
        async for batch in self.client().messages.batches.list(limit=100):
            created = batch.created_at.timestamp()
            if created < since_unix - 60:
                break
            counts = batch.request_counts
            total = (counts.processing + counts.succeeded + counts.errored + counts.canceled
                     + counts.expired)
            if total == n_items:
                found = str(batch.id)
        return found

    async def poll(self, batch_id: str) -> BatchStatus:
        """The batch's state and counts."""
        batch = await self.client().messages.batches.retrieve(batch_id)
        c = batch.request_counts
        done = c.succeeded + c.errored + c.canceled + c.expired
        state = "ended" if batch.processing_status == "ended" else "in_progress"
        return BatchStatus(state, done, done + c.processing)

    async def results(self, batch_id: str) -> dict[str, ItemResult]:
        """Every item's outcome: a message, or its error, cancellation or expiry."""
        out: dict[str, ItemResult] = {}
        async for row in await self.client().messages.batches.results(batch_id):
            data = row.model_dump()
            result = data["result"]
            kind = result["type"]
            if kind == "succeeded":
                out[row.custom_id] = ItemResult(row.custom_id, message_completion(result["message"], ""))
            elif kind in ("expired", "canceled"):
                out[row.custom_id] = ItemResult(row.custom_id, error=TransientProviderError(
                    f"batch item {kind}", kind="BatchExpired" if kind == "expired" else "BatchCanceled"))
            else:
                error = (result.get("error") or {}).get("error") or result.get("error") or {}
                transient = error.get("type") in ("overloaded_error", "api_error", "rate_limit_error")
                cls = TransientProviderError if transient else PermanentProviderError
                out[row.custom_id] = ItemResult(row.custom_id, error=cls(
                    f"batch item failed ({error.get('type')}): {error.get('message')}"[:2000],
                    kind="BatchItemError"))
        return out
