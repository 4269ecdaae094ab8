"""Providers' batch APIs behind one small interface: submit requests, poll, read results.

    openai/...     OpenAIBatch      files + batches (api.openai.com, or any server at api_base
                                    that speaks them: vLLM, a proxy, the tests' fake)
    anthropic/...  AnthropicBatch   Message Batches (litellm cannot create them)

Each SDK is imported when a batch is first needed, never by `import seqk`. What to batch and when
(rounds), and the record that keeps a batch from being paid twice, live in seqk.run.rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from seqk.errors import ProviderError
from seqk.models.base import Completion
from seqk.models.role import RoleSpec


@dataclass(frozen=True)
class BatchRequest:
    """One call to make inside a batch."""

    custom_id: str
    """Unique inside its batch; seqk's slot of the call (seqk.run.rounds.custom_id)."""
    spec: RoleSpec
    prompt: str
    cache_prefix: str | None = None
    """The start of `prompt` the next request repeats (Anthropic: marked cache_control)."""


@dataclass(frozen=True)
class BatchStatus:
    """A batch as the provider reports it."""

    state: str
    """'in_progress' (validating, running, finalizing) | 'ended' | 'failed' | 'expired' |
    'cancelled': every state but in_progress is final, and results() reads what finished."""
    n_done: int = 0
    """Items finished (successfully or not), as the provider counts them."""
    n_items: int = 0


@dataclass
class ItemResult:
    """One item's outcome: a completion, or the error the provider gave it."""

    custom_id: str
    completion: Completion | None = None
    error: ProviderError | None = None


FINAL_STATES = ("ended", "failed", "expired", "cancelled")


class BatchProvider(Protocol):
    """One provider's batch API."""

    name: str
    max_items: int
    """Most requests in one batch."""
    max_bytes: int
    """Most bytes of requests in one batch."""

    def request_bytes(self, request: BatchRequest) -> int:
        """Bytes this request adds to a batch (to split at max_bytes)."""
        ...

    async def submit(self, requests: list[BatchRequest], key: str) -> str:
        """Create a batch of `requests` tagged with seqk's idempotency `key`; its batch id."""
        ...

    async def find(self, key: str, n_items: int, since_unix: float) -> str | None:
        """The id of a batch submitted with `key` (after a crash between submit and record), or None."""
        ...

    async def poll(self, batch_id: str) -> BatchStatus:
        """The batch's state now."""
        ...

    async def results(self, batch_id: str) -> dict[str, ItemResult]:
        """custom_id -> outcome of every item the provider reports (final batches only)."""
        ...


def batch_problem(role: RoleSpec) -> str | None:
    """Why the role's model has no batch API seqk can use, or None."""
    model = role.model or ""
    if model.startswith(("openai/", "anthropic/")):
        return None
    return (f"{model or 'no model'} has no batch API seqk can reach: batch works with openai/... "
            "(api.openai.com or an api_base that serves /v1/files and /v1/batches) and anthropic/... models")


def batch_provider(role: RoleSpec) -> BatchProvider:
    """The batch API that serves the role's model (batch_problem(role) is None)."""
    assert role.model is not None
    if role.model.startswith("anthropic/"):
        from seqk.models.batch.anthropic import AnthropicBatch

        return AnthropicBatch(role.api_base, role.api_key_env)
    from seqk.models.batch.openai import OpenAIBatch

    return OpenAIBatch(role.api_base, role.api_key_env)
