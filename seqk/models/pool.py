"""The pool: each model's limit on calls in flight, quotas and retries around one provider call.

`Pool` is what the engine calls models through: ModelPool here, or one that wraps it (a budget's,
seqk.run.budget.BudgetedPool; a Ray worker's, seqk.run.ray_budget.RemotePool; batch mode's
router, seqk.run.rounds.BatchRouter).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

from seqk.errors import ProviderError, QuotaExceeded
from seqk.models.base import Completion, Provider
from seqk.models.endpoints import Breaker, address, endpoint_of, public_url
from seqk.models.limiter import DEFAULT_START, AdaptiveLimit, LimitState
from seqk.models.registry import cost_usd, provider_of
from seqk.models.retry import RetryPolicy, is_rate_limit, with_retries
from seqk.models.role import RoleSpec
from seqk.records import Prompt


class Pool(Protocol):
    """Calls models for a run."""

    async def complete(self, spec: RoleSpec, prompt: Prompt, cache_prefix: str | None = None) -> Completion:
        """One call of the role's model, retried as its policy says; ProviderError when it fails."""
        ...

    def sustained(self) -> list[tuple[str, str | None, int, bool, AdaptiveLimit]]:
        """(model, api_base, calls in flight held, bounded by a rate limit, the limit) of each model
        whose limit saw a success since its last decrease (seqk.run.limits remembers them)."""
        ...

    def limit_states(self) -> list[LimitState]:
        """Each model's current limit on calls in flight, and how rate limits moved it."""
        ...

    async def close(self) -> None:
        """The run is over: stop what the pool started (breakers' checks, sessions)."""
        ...


class ModelPool:
    """Calls models for a run: per-model adaptive concurrency limits, quotas and retries.

    `starts` maps (model, api_base) to where that model's limit starts and where its slow start
    ends (calls in flight, or None for the ceiling), as remembered from earlier runs
    (seqk.run.limits); the others start at DEFAULT_START. `rng` and `sleep` are the backoff's jitter and wait; a test
    passes a seeded Random and a fake clock."""

    def __init__(self, retry: RetryPolicy, quota: dict[str, int] | None = None,
                 default_concurrency: int = 64, quiet_s: float = 3.0, *,
                 starts: Mapping[tuple[str, str | None], tuple[int, int | None]] | None = None,
                 rng: random.Random | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.retry = retry
        self.quota = dict(quota or {})
        self.default_concurrency = default_concurrency
        self.quiet_s = quiet_s
        self.starts = dict(starts or {})
        self.calls_made: dict[str, int] = {}
        self._limits: dict[tuple[str, str | None], AdaptiveLimit] = {}
        self._breakers: dict[tuple[str, int] | str, Breaker] = {}
        self._providers: dict[tuple[str, str | None], Provider] = {}
        self._public: dict[str, str | None] = {}
        self._rng = rng or random.Random()
        self._sleep = sleep

    def _limit(self, spec: RoleSpec) -> AdaptiveLimit:
        assert spec.model is not None
        key = (spec.model, spec.api_base)
        limit = self._limits.get(key)
        if limit is None:
            start, threshold = self.starts.get(key, (DEFAULT_START, None))
            limit = self._limits[key] = AdaptiveLimit(
                spec.max_concurrency or self.default_concurrency, start=start,
                threshold=threshold, quiet_s=self.quiet_s)
        return limit

    def _breaker(self, spec: RoleSpec) -> Breaker | None:
        url = endpoint_of(spec)
        if url is None:
            return None
        key = address(url) or url
        if key not in self._breakers:
            self._breakers[key] = Breaker(url)
        return self._breakers[key]

    async def close(self) -> None:
        """Stop the breakers' pending checks (the run is over)."""
        for breaker in self._breakers.values():
            await breaker.close()

    def limit_states(self) -> list[LimitState]:
        """Each model's current limit on calls in flight, and how rate limits moved it."""
        return [LimitState(model, self._shown(api_base), lim.limit, lim.ceiling, lim.lowest,
                           lim.rate_limited, lim.start, lim.peak_in_flight)
                for (model, api_base), lim in self._limits.items()]

    def _shown(self, api_base: str | None) -> str | None:
        """The api_base as the console shows it (public_url), worked out once: the progress view
        asks for every limit after every attempt."""
        if not api_base:
            return None
        if api_base not in self._public:
            self._public[api_base] = public_url(api_base)
        return self._public[api_base]

    def sustained(self) -> list[tuple[str, str | None, int, bool, AdaptiveLimit]]:
        """(model, api_base, calls in flight held, bounded by a rate limit, the limit) of each model
        whose limit saw a success since its last decrease (AdaptiveLimit.sustained)."""
        found = []
        for (model, api_base), lim in self._limits.items():
            held = lim.sustained()
            if held is not None:
                found.append((model, api_base, *held, lim))
        return found

    async def complete(self, spec: RoleSpec, prompt: Prompt, cache_prefix: str | None = None) -> Completion:
        """One call with retries. Raises ProviderError (with `.retries`) when it finally fails.

        Rate limits are retried apart from max_retries (up to max_rate_limit_retries): they say
        "slower", not "broken", and the model's limit on calls in flight adapts to them.
        `cache_prefix`, the start of the prompt a later call repeats, goes to the provider, which
        may mark it for its cache (Provider.call; a Chat carries its own, `cache_at`). Each failure
        is the provider's to classify."""
        model = spec.model
        assert model is not None
        provider = self._providers.get((model, spec.api_base))
        if provider is None:
            provider = self._providers[(model, spec.api_base)] = provider_of(spec)
        limit = self._limit(spec)
        breaker = self._breaker(spec)

        async def attempt() -> Completion:
            if breaker is not None:
                breaker.check(spec)
            used = self.calls_made.get(model, 0)
            if model in self.quota and used >= self.quota[model]:
                raise QuotaExceeded(f"quota of {self.quota[model]} calls to {model} reached in this run")
            self.calls_made[model] = used + 1
            slot = await limit.acquire()
            try:
                completion = await provider.call(spec, prompt, cache_prefix)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every provider failure is classified
                error: ProviderError = provider.classify(exc)
                if is_rate_limit(error):
                    limit.on_rate_limit(slot)
                if breaker is not None:
                    breaker.on_failure(error)
                raise error from exc
            else:
                limit.on_success(slot)
                if breaker is not None:
                    breaker.on_success()
                return completion
            finally:
                limit.release()

        sleep = self._sleep if breaker is None else breaker.sleeper(self._sleep)
        completion, retries = await with_retries(attempt, self.retry, rng=self._rng, sleep=sleep)
        completion.retries = retries
        completion.price_tier = spec.price_tier
        completion.cost_usd = cost_usd(model, completion.input_tokens, completion.cached_tokens,
                                       completion.output_tokens, spec.price, spec.api_base,
                                       cache_write_tokens=completion.cache_write_tokens,
                                       tier=completion.price_tier)
        return completion
