"""The pool: each model's limit on calls in flight, quotas and retries around one provider call.

`Pool` is what the engine calls models through: ModelPool here, or one that wraps it (a budget's,
seqk.run.budget.BudgetedPool; a Ray worker's, seqk.run.ray_budget.RemotePool; batch mode's
router, seqk.run.rounds.BatchRouter).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Protocol

from seqk.errors import ProviderError, QuotaExceeded
from seqk.models.base import Completion
from seqk.models.endpoints import Breaker, address, endpoint_of
from seqk.models.limiter import AdaptiveLimit, LimitState
from seqk.models.registry import cost_usd, provider_of
from seqk.models.retry import RetryPolicy, is_rate_limit, with_retries
from seqk.models.role import RoleSpec


class Pool(Protocol):
    """Calls models for a run."""

    async def complete(self, spec: RoleSpec, prompt: str, cache_prefix: str | None = None) -> Completion:
        """One call of the role's model, retried as its policy says; ProviderError when it fails."""
        ...

    def limit_states(self) -> list[LimitState]:
        """Each model's current limit on calls in flight, and how rate limits moved it."""
        ...

    async def close(self) -> None:
        """The run is over: stop what the pool started (breakers' checks, sessions)."""
        ...


class ModelPool:
    """Calls models for a run: per-model adaptive concurrency limits, quotas and retries.

    `rng` and `sleep` are the backoff's jitter and wait; a test passes a seeded Random and a
    fake clock."""

    def __init__(self, retry: RetryPolicy, quota: dict[str, int] | None = None,
                 default_concurrency: int = 64, quiet_s: float = 3.0, *,
                 rng: random.Random | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.retry = retry
        self.quota = dict(quota or {})
        self.default_concurrency = default_concurrency
        self.quiet_s = quiet_s
        self.calls_made: dict[str, int] = {}
        self._limits: dict[tuple[str, str | None], AdaptiveLimit] = {}
        self._breakers: dict[tuple[str, int] | str, Breaker] = {}
        self._rng = rng or random.Random()
        self._sleep = sleep

    def _limit(self, spec: RoleSpec) -> AdaptiveLimit:
        assert spec.model is not None
        key = (spec.model, spec.api_base)
        if key not in self._limits:
            self._limits[key] = AdaptiveLimit(spec.max_concurrency or self.default_concurrency,
                                              quiet_s=self.quiet_s)
        return self._limits[key]

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
        return [LimitState(model, api_base, lim.limit, lim.ceiling, lim.lowest, lim.rate_limited)
                for (model, api_base), lim in self._limits.items()]

    async def complete(self, spec: RoleSpec, prompt: str, cache_prefix: str | None = None) -> Completion:
        """One call with retries. Raises ProviderError (with `.retries`) when it finally fails.

        Rate limits are retried apart from max_retries (up to max_rate_limit_retries): they say
        "slower", not "broken", and the model's limit on calls in flight adapts to them.
        `cache_prefix`, the start of the prompt a later call repeats, goes to the provider, which
        may mark it for its cache (Provider.call). Each failure is the provider's to classify."""
        model = spec.model
        assert model is not None
        provider = provider_of(spec)
        limit = self._limit(spec)
        breaker = self._breaker(spec)

        async def attempt() -> Completion:
            if breaker is not None:
                breaker.check(spec)
            used = self.calls_made.get(model, 0)
            if model in self.quota and used >= self.quota[model]:
                raise QuotaExceeded(f"quota of {self.quota[model]} calls to {model} reached in this run")
            self.calls_made[model] = used + 1
            epoch = await limit.acquire()
            try:
                completion = await provider.call(spec, prompt, cache_prefix)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every provider failure is classified
                error: ProviderError = provider.classify(exc)
                if is_rate_limit(error):
                    limit.on_rate_limit(epoch)
                if breaker is not None:
                    breaker.on_failure(error)
                raise error from exc
            else:
                limit.on_success()
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
