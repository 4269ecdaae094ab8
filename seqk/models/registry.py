"""Which provider serves a model: the one place that reads model ids.

    mock/...                      MockProvider         scripted, free
    local/...                     LocalProvider        llama.cpp workers, free
    openai/... with an api_base   OpenAIHTTPProvider   direct aiohttp, priced by the role
    anything else                 LiteLLMProvider      litellm, priced by its map
"""

from __future__ import annotations

from collections.abc import Sequence

from seqk.errors import ConfigIssue
from seqk.models.base import Provider
from seqk.models.litellm_provider import LiteLLMProvider
from seqk.models.local.provider import LocalProvider
from seqk.models.mock import MockProvider
from seqk.models.openai_http import OpenAIHTTPProvider
from seqk.models.pricing import PRICES, Price, cost_at
from seqk.models.role import RoleSpec

PROVIDERS: tuple[Provider, ...] = (MockProvider(), LocalProvider(), OpenAIHTTPProvider(), LiteLLMProvider())
"""In order of precedence; the last serves every model."""


def provider_for(model: str, api_base: str | None = None) -> Provider:
    """The provider that answers `model` at `api_base`."""
    return next(provider for provider in PROVIDERS if provider.serves(model, api_base))


def provider_of(role: RoleSpec) -> Provider:
    """The provider that answers the role's model."""
    assert role.model is not None
    return provider_for(role.model, role.api_base)


def price_of(model: str, own: Price | None = None, api_base: str | None = None) -> Price | None:
    """The model's price, or None when nobody knows it. `own` (a role's `price:` in the variant)
    wins over every table: a self-hosted model is priced by whoever pays for its server. Then
    the project table (seqk.models.pricing.PRICES), then the provider that serves the model at
    `api_base`: free for mock and local models, litellm's price map (loaded on first need) for
    the rest, nothing for an OpenAI-compatible server a role names."""
    if own is not None:
        return own
    if model in PRICES:
        return PRICES[model]
    return provider_for(model, api_base).price(model)


known_price = price_of
"""The name budget and validation read: a price known before the first call."""


def cost_usd(model: str, input_tokens: int | None, cached_tokens: int | None, output_tokens: int | None,
             own: Price | None = None, api_base: str | None = None, *,
             cache_write_tokens: int | None = None, tier: str = "sync") -> float | None:
    """Dollar cost of one call at its price tier; None (plus one warning per model) when the
    price is unknown."""
    return cost_at(model, price_of(model, own, api_base), input_tokens, cached_tokens, output_tokens,
                   cache_write_tokens, tier)


def model_problem(model: str, api_base: str | None = None) -> str | None:
    """Why no provider can serve `model` (at `api_base`), in words, or None: an unknown mock, a
    `mock/py:` script that does not import, a `provider/` prefix litellm does not route. Cheap:
    imports no client library."""
    return provider_for(model, api_base).model_problem(model, api_base)


def missing_credentials(role: RoleSpec) -> str | None:
    """What this role's key problem is, in words, or None when its key is there (or none
    is needed: mock and local models, OpenAI-compatible servers without `api_key_env`)."""
    return None if role.model is None else provider_of(role).credential_problem(role)


def ensure_ready(role: RoleSpec) -> None:
    """Raise when the role's model cannot run at all (a local model's file, build or worker)."""
    if role.model is not None:
        provider_of(role).ensure_ready(role)


def import_clients(roles: Sequence[RoleSpec]) -> None:
    """Import the client library that the roles' calls need (aiohttp, litellm), each once."""
    providers = {id(p): p for p in (provider_of(role) for role in roles if role.model is not None)}
    for provider in providers.values():
        provider.import_client()


def check_installed(role: RoleSpec) -> None:
    """Raise MissingExtra when the role's model lacks a file or package here; starts nothing."""
    if role.model is not None:
        provider_of(role).check_installed(role)


_ROLE_FIELD = {"actor": "model", "judge": "judge_model", "critic": "critic_model"}


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
