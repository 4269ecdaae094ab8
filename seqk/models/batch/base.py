"""What every batch API takes and gives: requests, a batch's status, per-item results, and the
interface (BatchProvider) the rounds call."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, Protocol

from seqk.errors import MissingExtra, ProviderError
from seqk.models.base import Completion
from seqk.models.role import RoleSpec
from seqk.records import Prompt


@dataclass(frozen=True)
class BatchRequest:
    """One call to make inside a batch."""

    custom_id: str
    """Unique inside its batch; seqk's slot of the call (seqk.run.rounds.custom_id)."""
    spec: RoleSpec
    prompt: Prompt
    cache_prefix: str | None = None
    """The start of a str `prompt` the next request repeats (Anthropic: marked cache_control; a
    Chat carries its own `cache_at`)."""


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


def missing_sdk(sdk: str) -> str:
    """What to say when a batch SDK is not installed."""
    return f"batch mode for {sdk}/ models needs the {sdk} SDK: pip install 'seqk[batch]'"


class SdkBatch:
    """What the SDK-backed providers share: the role's api_base and key variable, and one async
    client of the provider's SDK, imported on first use (the `batch` extra)."""

    sdk: str
    """The SDK's module, also the prefix of the models it serves."""
    key_env: str
    """Where the key is when the role names no api_key_env."""

    def __init__(self, api_base: str | None, api_key_env: str | None):
        self.api_base = api_base
        self.api_key_env = api_key_env
        self._client: Any = None

    def client(self) -> Any:
        """The SDK's async client (one per provider object)."""
        if self._client is None:
            try:
                module = importlib.import_module(self.sdk)
            except ImportError:
                raise MissingExtra(missing_sdk(self.sdk)) from None
            self._client = self.new_client(module, os.environ.get(self.api_key_env or self.key_env))
        return self._client

    def new_client(self, module: Any, key: str | None) -> Any:
        """The SDK's async client for this api_base and key."""
        raise NotImplementedError
