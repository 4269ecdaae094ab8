"""Which provider failures are worth another try, and how long to wait before it.

Transient failures (429, 5xx, timeouts, dropped connections) are retried with exponential
backoff and full jitter, honouring Retry-After; permanent ones (auth, bad request, a
quota) fail at once. Rate limits are counted apart from max_retries, up to
max_rate_limit_retries: they say "slower", not "broken". The loop is tenacity's; what is
seqk's own is the classification, the two counts and the Retry-After-aware wait.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from seqk.errors import AuthError, PermanentProviderError, ProviderError, TransientProviderError

if TYPE_CHECKING:
    import tenacity

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


def _retry_after(exc: BaseException) -> float | None:
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


_TRANSIENT_NAMES = ("RateLimit", "ServiceUnavailable", "InternalServer", "BadGateway",
                    "Timeout", "APIConnection", "Connect", "RemoteProtocol", "ReadError",
                    "ServerDisconnected", "ClientOSError", "ClientPayloadError")


_AUTH_NAMES = ("Authentication", "PermissionDenied", "Unauthorized")
_AUTH_MESSAGE = re.compile(
    r"missing credentials|api[_ ]?key (client option )?must be set|invalid (x-)?api[_ ]?key|"
    r"incorrect api key|no api key|api key not valid|unauthorized", re.IGNORECASE)


def classify(exc: BaseException) -> ProviderError:
    """Turn a provider exception into a transient, permanent or auth ProviderError."""
    if isinstance(exc, ProviderError):
        return exc
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    name = type(exc).__name__
    message = f"{name}: {exc}"[:2000]
    # litellm reports a missing key as a 500 InternalServerError: read the words too.
    if status in (401, 403) or any(part in name for part in _AUTH_NAMES) or _AUTH_MESSAGE.search(message):
        return AuthError(message, status_code=status, kind="AuthError")
    transient = (
        status in (408, 409, 425, 429)
        or (status is not None and status >= 500)
        or isinstance(exc, asyncio.TimeoutError | ConnectionError | TimeoutError)
        or (status is None and any(part in name for part in _TRANSIENT_NAMES))
    )
    cls = TransientProviderError if transient else PermanentProviderError
    return cls(message, status_code=status, retry_after=_retry_after(exc), kind=name)


def is_rate_limit(error: ProviderError) -> bool:
    """A 429, or a provider's rate-limit error under another status."""
    return error.status_code == 429 or "RateLimit" in (error.kind or "")


def backoff(policy: RetryPolicy, retry_number: int, error: ProviderError, rng: random.Random) -> float:
    """The wait before retry `retry_number` (0-based, per kind): full jitter under
    base * 2**n capped at max_delay_s, or the provider's Retry-After (capped too) when longer."""
    ceiling = min(policy.max_delay_s, policy.base_delay_s * 2 ** retry_number)
    delay = rng.uniform(0, ceiling)
    if error.retry_after is not None:
        delay = max(delay, min(error.retry_after, policy.max_delay_s))
    return delay


class _Tries:
    """Retries so far, rate limits counted apart; tenacity's hooks read and advance them."""

    def __init__(self, policy: RetryPolicy, rng: random.Random):
        self.policy = policy
        self.rng = rng
        self.retries = 0
        self.rate_limit_retries = 0

    @property
    def total(self) -> int:
        return self.retries + self.rate_limit_retries

    def retryable(self, error: BaseException | None) -> bool:
        """Whether this failure is worth another try under the policy."""
        if not isinstance(error, ProviderError) or isinstance(error, PermanentProviderError):
            return False
        if is_rate_limit(error):
            return self.rate_limit_retries < self.policy.max_rate_limit_retries
        return self.retries < self.policy.max_retries

    def delay(self, error: ProviderError) -> float:
        """The wait before the retry of this failure."""
        n = self.rate_limit_retries if is_rate_limit(error) else self.retries
        return backoff(self.policy, n, error, self.rng)

    def note(self, error: ProviderError) -> None:
        """Count a retry of this failure."""
        if is_rate_limit(error):
            self.rate_limit_retries += 1
        else:
            self.retries += 1

    # tenacity's hooks.
    @staticmethod
    def _error(state: tenacity.RetryCallState) -> ProviderError:
        assert state.outcome is not None
        error = state.outcome.exception()
        assert isinstance(error, ProviderError)
        return error

    def should_retry(self, state: tenacity.RetryCallState) -> bool:
        assert state.outcome is not None
        return self.retryable(state.outcome.exception())

    def wait(self, state: tenacity.RetryCallState) -> float:
        return self.delay(self._error(state))

    def count(self, state: tenacity.RetryCallState) -> None:
        self.note(self._error(state))


async def with_retries(attempt: Callable[[], Awaitable[T]], policy: RetryPolicy, *,
                       rng: random.Random | None = None,
                       sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> tuple[T, int]:
    """`attempt()` until it succeeds, raises a ProviderError not worth retrying, or the policy
    gives up; returns its result and the retries it took. The final error carries `.retries`.

    `attempt` raises ProviderError for provider failures (anything else propagates at once).
    `rng` and `sleep` are the jitter's randomness and the wait, replaceable by a fake clock."""
    tries = _Tries(policy, rng or random.Random())
    # Most calls succeed at the first try, made here: tenacity (and tornado, which it imports
    # when installed: ~50 ms of CPU before a run's first request) loads once a call has failed.
    try:
        return await attempt(), 0
    except ProviderError as error:
        if not tries.retryable(error):
            error.retries = 0
            raise
        wait = tries.delay(error)
        tries.note(error)
    await sleep(wait)
    import tenacity

    retrying = tenacity.AsyncRetrying(
        retry=tries.should_retry, wait=tries.wait, before_sleep=tries.count,
        stop=tenacity.stop_never, sleep=sleep, reraise=True)
    try:
        result: T = await retrying(attempt)
    except ProviderError as error:
        error.retries = tries.total
        raise
    return result, tries.total
