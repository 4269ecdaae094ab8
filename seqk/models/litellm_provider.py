"""Every model no other provider serves goes through litellm, which is imported on the first
call, credential check or price lookup that needs it, and never by `import seqk`."""

from __future__ import annotations

import difflib
import os
import re
import sys
import time
from typing import Any

from seqk.errors import AuthError, ProviderError, TransientProviderError
from seqk.models import litellm_table
from seqk.models.base import Completion, key_env_problem, messages_of, sampling
from seqk.models.batch.anthropic import anthropic_messages
from seqk.models.pricing import Price, is_anthropic
from seqk.models.retry import classify, from_status, retry_after
from seqk.models.role import RoleSpec
from seqk.records import Prompt


def import_litellm() -> Any:
    """litellm, imported on first use with its price map read from disk, not the network."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def _registered(prefix: str) -> bool:
    """A provider registered in this process through litellm's custom_provider_map (a notebook's
    own CustomLLM): only when litellm is imported already, since nobody registers one without it."""
    litellm = sys.modules.get("litellm")
    return litellm is not None and any(item.get("provider") == prefix
                                       for item in getattr(litellm, "custom_provider_map", []))


def _missing_keys(model: str) -> list[str]:
    """The variables litellm would report missing for `model` here, or [] when none is missing."""
    prefix, slash, _ = model.partition("/")
    if slash and prefix in litellm_table.PREFIXES and model not in litellm_table.REROUTED:
        missing, alternatives = litellm_table.KEYS.get(prefix, ((), ()))
        if not missing or any(all(name in os.environ for name in names) for names in alternatives):
            return []
        return list(missing)
    check = import_litellm().validate_environment(model)
    found = check.get("missing_keys") or []
    return [] if check.get("keys_in_environment") else list(found)


_TRANSIENT_NAMES = ("RateLimit", "ServiceUnavailable", "InternalServer", "BadGateway",
                    "Timeout", "APIConnection", "Connect", "RemoteProtocol", "ReadError",
                    "ServerDisconnected", "ClientOSError", "ClientPayloadError")
"""litellm's (and the SDKs' and transports' under it) names of failures worth another try."""
_UNREACHABLE_NAMES = ("APIConnection", "Connect", "ServerDisconnected")
_AUTH_NAMES = ("Authentication", "PermissionDenied", "Unauthorized")
_AUTH_MESSAGE = re.compile(
    r"missing credentials|api[_ ]?key (client option )?must be set|invalid (x-)?api[_ ]?key|"
    r"incorrect api key|no api key|api key not valid|unauthorized", re.IGNORECASE)


def classify_litellm(exc: BaseException) -> ProviderError:
    """A litellm failure. Its exceptions carry the provider's status, but not always the right
    one: a missing key is a 500 InternalServerError whose words say so, and a dropped connection
    has none. So the exception's name and words are read too: seqk's one use of name sniffing,
    litellm's fallback."""
    if isinstance(exc, ProviderError):
        return exc
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    name = type(exc).__name__
    message = f"{name}: {exc}"[:2000]
    if status in (401, 403) or any(part in name for part in _AUTH_NAMES) or _AUTH_MESSAGE.search(message):
        return AuthError(message, status_code=status, kind="AuthError")
    # litellm gives a dropped connection the status 500: its name says the server was not there.
    unreachable = any(part in name for part in _UNREACHABLE_NAMES)
    if status is not None:
        return from_status(status, message, kind=name, retry_after=retry_after(exc),
                           rate_limited="RateLimit" in name, unreachable=unreachable)
    if any(part in name for part in _TRANSIENT_NAMES):
        return TransientProviderError(message, retry_after=retry_after(exc), kind=name,
                                      rate_limited="RateLimit" in name, unreachable=unreachable)
    return classify(exc)


def _usage_field(obj: Any, name: str) -> int:
    value = getattr(obj, name, None) if obj is not None else None
    return int(value or 0)


class LiteLLMProvider:
    """Hosted APIs (OpenAI, Anthropic, Gemini, Bedrock, ...) through litellm.acompletion."""

    name = "litellm"

    def serves(self, model: str, api_base: str | None) -> bool:
        """Everything: litellm is the provider of last resort."""
        return True

    async def call(self, spec: RoleSpec, prompt: Prompt, cache_prefix: str | None = None) -> Completion:
        """One litellm.acompletion, its own retries off (the pool retries). For an Anthropic
        model the stable prefix (a Chat's `cache_at`) carries cache_control (others cache without
        being asked)."""
        assert spec.model is not None
        litellm = import_litellm()
        kwargs: dict[str, Any] = {"num_retries": 0, **sampling(spec)}
        if spec.service_tier:
            kwargs["service_tier"] = spec.service_tier
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
        messages = (anthropic_messages(prompt, cache_prefix) if is_anthropic(spec.model)
                    else messages_of(prompt))
        response = await litellm.acompletion(model=spec.model, messages=messages, **kwargs)
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
            cache_write_tokens=_usage_field(usage, "cache_creation_input_tokens"))

    def model_problem(self, model: str, api_base: str | None) -> str | None:
        """An id whose `provider/` prefix litellm does not route (`openaii/gpt-4o-mini`), from
        the generated table of litellm's providers (seqk/models/litellm_table.py), so a typo is
        refused before anything runs, without importing litellm. An id without a prefix
        (litellm infers its provider) and any id sent to an `api_base` are left to litellm."""
        prefix, slash, _ = model.partition("/")
        if not slash or api_base or prefix in litellm_table.PREFIXES or _registered(prefix):
            return None
        close = difflib.get_close_matches(prefix, [*sorted(litellm_table.PREFIXES), "mock", "local"], n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return (f"{model!r}: no provider is called {prefix!r} ({hint}litellm's providers: "
                "https://docs.litellm.ai/docs/providers; seqk's own: mock/..., local/...)")


    def classify(self, exc: BaseException) -> ProviderError:
        """classify_litellm."""
        return classify_litellm(exc)

    def credential_problem(self, role: RoleSpec) -> str | None:
        """The role's `api_key_env` when it names one; else none needed with an `api_base`;
        else whatever litellm says the model's provider reads from the environment: from the
        generated table for a `provider/model` id (no import), else from litellm itself."""
        if role.api_key_env:
            return key_env_problem(role)
        if role.api_base:
            return None
        assert role.model is not None
        missing = _missing_keys(role.model)
        if not missing:
            return None
        # litellm lists alternatives (GOOGLE_API_KEY, GEMINI_API_KEY) and companions
        # (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) alike; keys are alternatives.
        joiner = " or " if all(name.endswith("_API_KEY") for name in missing) else " and "
        names = joiner.join(f"${name}" for name in missing)
        return (f"the {role.role} ({role.model}) needs {names}, which is not set "
                "(or set api_key_env: to the variable that holds the key)")

    def ensure_ready(self, role: RoleSpec) -> None:
        """Nothing beyond the key: a hosted model is ready when its key is there."""

    def import_client(self) -> None:
        """litellm (~4 s)."""
        import_litellm()

    def check_installed(self, role: RoleSpec) -> None:
        """Nothing: the model is hosted."""

    def price(self, model: str) -> Price | None:
        """litellm's price map entry for the model (with or without its provider prefix)."""
        model_cost = import_litellm().model_cost
        entry = None
        for key in (model, model.split("/", 1)[-1]):
            entry = model_cost.get(key)
            if entry:
                break
        if not entry or entry.get("input_cost_per_token") is None:
            return None
        return Price(*_tier_figures(entry, ""), batch=_tier_price(entry, "_batches"),
                     flex=_tier_price(entry, "_flex"))


def _tier_figures(entry: dict[str, Any], suffix: str) -> tuple[float, float, float, float | None]:
    """(input, cached_input, output, cache_write) per million tokens from litellm's keys for a
    tier ("" for synchronous, "_batches", "_flex")."""
    inp = float(entry["input_cost_per_token" + suffix])
    out = float(entry.get("output_cost_per_token" + suffix) or 0.0)
    cached = entry.get("cache_read_input_token_cost" + suffix)
    write = entry.get("cache_creation_input_token_cost" + suffix)
    if suffix:
        # Where litellm has no tier figure for the cache, the tier's discount applies to it too.
        ratio = inp / float(entry["input_cost_per_token"] or inp or 1.0)
        if cached is None and entry.get("cache_read_input_token_cost") is not None:
            cached = float(entry["cache_read_input_token_cost"]) * ratio
        if write is None and entry.get("cache_creation_input_token_cost") is not None:
            write = float(entry["cache_creation_input_token_cost"]) * ratio
    per_m = 1_000_000
    return (inp * per_m, float(cached if cached is not None else inp) * per_m, out * per_m,
            float(write) * per_m if write is not None else None)


def _tier_price(entry: dict[str, Any], suffix: str) -> Price | None:
    """litellm's batch or flex price of a model, when its map has one."""
    if entry.get("input_cost_per_token" + suffix) is None:
        return None
    return Price(*_tier_figures(entry, suffix))
