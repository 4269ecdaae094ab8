"""A role as the providers see it: the model and its resolved settings.

It lives with the providers, below the variant that builds it, so the model layer never reaches up
into configuration."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from seqk.models.pricing import Price

_RESULT_PARAMS = ("temperature", "max_tokens", "top_p", "seed", "extra")


@dataclass(frozen=True)
class RoleSpec:
    """One role's model and its resolved settings."""

    role: str
    model: str | None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    max_concurrency: int | None = None
    timeout_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    price: Price | None = None
    """The variant's price for this role; None: seqk's table, then litellm's map."""
    budget_usd: float | None = None
    """Most this role may spend on the run (every invocation), in US dollars."""
    batch: bool = False
    """Send this role's calls through the provider's batch API (seqk.models.batch): half price,
    answers within the provider's window (24 h) instead of seconds."""
    service_tier: str | None = None
    """'flex': OpenAI's flex tier (synchronous, cheaper, slower, more 429s); None: the default."""

    @property
    def price_tier(self) -> str:
        """The tier this role's calls are priced at: 'batch', 'flex' or 'sync'."""
        return "batch" if self.batch else "flex" if self.service_tier == "flex" else "sync"

    def result_fields(self) -> dict[str, Any]:
        """The settings that change what the model says (they go in the fingerprint)."""
        return {"model": self.model} | {name: getattr(self, name) for name in _RESULT_PARAMS}

    def public(self) -> dict[str, Any]:
        """Every setting, for the stored config: names of key variables, never keys (nor the
        user, password or query an api_base may carry: seqk.models.endpoints.public_url)."""
        from seqk.models.endpoints import public_url

        return self.result_fields() | {
            "api_base": public_url(self.api_base) if self.api_base else None,
            "api_key_env": self.api_key_env,
            "max_concurrency": self.max_concurrency, "timeout_s": self.timeout_s,
            "price": dataclasses.asdict(self.price) if self.price else None,
            "budget_usd": self.budget_usd, "batch": self.batch, "service_tier": self.service_tier}
