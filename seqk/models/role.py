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

    def result_fields(self) -> dict[str, Any]:
        """The settings that change what the model says (they go in the fingerprint)."""
        return {"model": self.model} | {name: getattr(self, name) for name in _RESULT_PARAMS}

    def public(self) -> dict[str, Any]:
        """Every setting, for the stored config: names of key variables, never keys."""
        return self.result_fields() | {
            "api_base": self.api_base, "api_key_env": self.api_key_env,
            "max_concurrency": self.max_concurrency, "timeout_s": self.timeout_s,
            "price": dataclasses.asdict(self.price) if self.price else None,
            "budget_usd": self.budget_usd}
