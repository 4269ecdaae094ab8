"""What every provider gives and owns: a Completion per call, a readiness check, prices."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Protocol

from seqk.errors import ProviderError
from seqk.models.pricing import Price
from seqk.models.role import RoleSpec
from seqk.records import Prompt, Usage


@dataclass(kw_only=True)
class Completion(Usage):
    """One successful call: its text and its Usage (cost_usd set by the pool from the role's
    price, seqk.models.registry.price_of; providers leave it)."""

    text: str
    model: str
    latency_s: float
    retries: int = 0
    price_tier: str = "sync"
    """'sync' | 'batch' | 'flex': the tier the call is priced at."""


class Provider(Protocol):
    """One way of reaching models: it alone imports what it needs, and only when used."""

    name: str

    def serves(self, model: str, api_base: str | None) -> bool:
        """True when this provider answers `model` (reached at `api_base`, if any)."""
        ...

    async def call(self, spec: RoleSpec, prompt: Prompt, cache_prefix: str | None = None) -> Completion:
        """One call, no retries; the provider's own exception on failure (`classify` reads it).
        A str prompt is one user message; a Chat, its messages.
        `cache_prefix`, the start of the prompt later calls repeat, is for providers that mark it
        for their cache (Anthropic's cache_control); the others cache by themselves or not at all."""
        ...

    def classify(self, exc: BaseException) -> ProviderError:
        """What a failure of `call` is: worth another try (a TransientProviderError, its
        `rate_limited` and `unreachable` flags set where they hold, with the wait the provider asked
        for), or not (a PermanentProviderError; an AuthError stops the run)."""
        ...

    def model_problem(self, model: str, api_base: str | None) -> str | None:
        """Why `model` is no id this provider can serve, in words, or None. Checked when a
        variant loads (C03), so it must be cheap: no client library is imported."""
        ...

    def credential_problem(self, role: RoleSpec) -> str | None:
        """What keeps the role's key from reaching the provider, in words, or None."""
        ...

    def ensure_ready(self, role: RoleSpec) -> None:
        """Raise (MissingExtra, LocalModelCrashed, ...) when the model cannot run at all."""
        ...

    def check_installed(self, role: RoleSpec) -> None:
        """Raise MissingExtra when something the model needs on this machine (a file, a
        package) is absent. Cheap, for `seqk plan`: nothing is loaded or started."""
        ...

    def price(self, model: str) -> Price | None:
        """The model's price when this provider knows it, else None."""
        ...

    def import_client(self) -> None:
        """Import the library a call needs (litellm, a provider's SDK), so that a run can do it while its
        database is prepared instead of in its first call."""
        ...


FREE = Price(0.0, 0.0, 0.0)
"""Mock and local models: their cost is known, and it is nothing."""

SAMPLING = ("temperature", "max_tokens", "top_p", "seed")
"""The role's sampling settings passed to every provider when set."""


def sampling(spec: RoleSpec) -> dict[str, Any]:
    """The role's sampling settings that are set, by their OpenAI names."""
    return {name: getattr(spec, name) for name in SAMPLING if getattr(spec, name) is not None}


def messages_of(prompt: Prompt) -> list[dict[str, str]]:
    """The prompt as chat-completion messages: a str as one user message."""
    return [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt.wire()


def key_env_problem(role: RoleSpec) -> str | None:
    """The problem with the role's `api_key_env` (the variable is unset), or None."""
    if role.api_key_env and not os.environ.get(role.api_key_env):
        return f"the {role.role} ({role.model}) reads its key from ${role.api_key_env}, which is not set"
    return None
