"""Which provider failures are worth another try, and how long to wait before it.

Transient failures (429, 5xx, timeouts, dropped connections) are retried with exponential
backoff and full jitter, honouring Retry-After; permanent ones (auth, bad request, a
quota) fail at once. Rate limits are counted apart from max_retries, up to
max_rate_limit_retries: they say "slower", not "broken". Each provider classifies its own
failures (`Provider.classify`, as inspect_ai's `ModelAPI.should_retry`); `classify` here is what
they build on: a ProviderError as it is, an HTTP status, a timeout or a refused connection.
The loop is seqk's own, a few lines: the first try costs no import, and every try counts the
same way.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from seqk.errors import AuthError, PermanentProviderError, ProviderError, TransientProviderError

T = TypeVar("T")


class RetryPolicy(BaseModel):
    """How transient provider errors are retried: exponential backoff with full jitter."""

    model_config = ConfigDict(extra="forbid")

    max_retries: int = Field(6, ge=0)
    """Retries after the first try, for 429 / 5xx / timeouts / dropped connections."""
    base_delay_s: float = Field(1.0, ge=0)
    """First backoff; doubles each retry. Retry-After from the provider wins when longer."""
    max_delay_s: float = Field(60.0, ge=0)
    """Longest single wait."""
    max_rate_limit_retries: int = Field(30, ge=0)
    """Retries after a rate limit (429), counted apart from max_retries: the model's limit on
    calls in flight adapts instead; the ceiling keeps a 429 that never ends from looping forever."""


def retry_after(exc: BaseException) -> float | None:
    """The wait a failed call's response asks for (retry-after-ms, Retry-After), in seconds."""
    headers = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    headers = headers or getattr(exc, "litellm_response_headers", None)
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return float(ms) / 1000
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def from_status(status: int, message: str, *, kind: str, retry_after: float | None = None,
                rate_limited: bool = False, unreachable: bool = False) -> ProviderError:
    """What an HTTP status says: 401 and 403 an AuthError; 408, 409, 425, 429 and 5xx worth
    another try; any other a permanent failure."""
    if status in (401, 403):
        return AuthError(message, status_code=status, kind="AuthError")
    if status in (408, 409, 425, 429) or status >= 500:
        return TransientProviderError(message, status_code=status, retry_after=retry_after, kind=kind,
                                      rate_limited=rate_limited or status == 429, unreachable=unreachable)
    return PermanentProviderError(message, status_code=status, retry_after=retry_after, kind=kind)


def classify(exc: BaseException) -> ProviderError:
    """A failure as any provider sees it when it knows no better: a ProviderError as it is; an
    exception with an int `status_code` by that status; a refused or dropped connection and a
    timeout worth another try (a refused one says the server is not there); anything else
    permanent."""
    if isinstance(exc, ProviderError):
        return exc
    name = type(exc).__name__
    message = f"{name}: {exc}"[:2000]
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return from_status(status, message, kind=name, retry_after=retry_after(exc))
    if isinstance(exc, ConnectionError | TimeoutError):
        return TransientProviderError(message, kind=name, unreachable=isinstance(exc, ConnectionRefusedError))
    return PermanentProviderError(message, kind=name)


def is_rate_limit(error: ProviderError) -> bool:
    """A 429, or a failure its provider classified as a rate limit under another status."""
    return error.status_code == 429 or error.rate_limited


def backoff(policy: RetryPolicy, retry_number: int, error: ProviderError, rng: random.Random) -> float:
    """The wait before retry `retry_number` (0-based, per kind): full jitter under
    base * 2**n capped at max_delay_s, or the provider's Retry-After (capped too) when longer."""
    ceiling = min(policy.max_delay_s, policy.base_delay_s * 2 ** retry_number)
    delay = rng.uniform(0, ceiling)
    if error.retry_after is not None:
        delay = max(delay, min(error.retry_after, policy.max_delay_s))
    return delay


class _Tries:
    """Retries so far, rate limits counted apart."""

    def __init__(self, policy: RetryPolicy, rng: random.Random):
        self.policy = policy
        self.rng = rng
        self.retries = 0
        self.rate_limit_retries = 0

    @property
    def total(self) -> int:
        return self.retries + self.rate_limit_retries

    def retryable(self, error: ProviderError) -> bool:
        """Whether this failure is worth another try under the policy."""
        if isinstance(error, PermanentProviderError):
            return False
        if is_rate_limit(error):
            return self.rate_limit_retries < self.policy.max_rate_limit_retries
        return self.retries < self.policy.max_retries

    def next_wait(self, error: ProviderError) -> float:
        """The wait before the retry of this failure, counted as one retry of its kind."""
        if is_rate_limit(error):
            wait = backoff(self.policy, self.rate_limit_retries, error, self.rng)
            self.rate_limit_retries += 1
        else:
            wait = backoff(self.policy, self.retries, error, self.rng)
            self.retries += 1
        return wait


async def with_retries(attempt: Callable[[], Awaitable[T]], policy: RetryPolicy, *,
                       rng: random.Random | None = None,
                       sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> tuple[T, int]:
    """`attempt()` until it succeeds, raises a ProviderError not worth retrying, or the policy
    gives up; returns its result and the retries it took. The final error carries `.retries`.

    `attempt` raises ProviderError for provider failures (anything else propagates at once).
    `rng` and `sleep` are the jitter's randomness and the wait, replaceable by a fake clock."""
    tries = _Tries(policy, rng or random.Random())
    while True:
        try:
            return await attempt(), tries.total
        except ProviderError as error:
            if not tries.retryable(error):
                error.retries = tries.total
                raise
            wait = tries.next_wait(error)
        await sleep(wait)
