"""Is each role's server there? Asked with a TCP connection, never with a paid call.

Before a run, every distinct endpoint the roles name with `api_base` is connected to, all
at once, CONNECT_TIMEOUT_S each: one that refuses stops the run before anything is written.
Hosted models (litellm without `api_base`) are not checked: their host is litellm's
business and the machine may be offline until the first call; their key is checked apart.
A `local/...` model's loopback workers are checked by its own readiness check, which
generates a few tokens through them.

During a run, a Breaker per endpoint: a call that cannot connect opens a window; when
BREAKER_WINDOW_S pass with no call succeeding and one more connection is refused, the
endpoint is down. Every later try raises EndpointUnreachable, which is fatal: attempts in
flight (those waiting out a backoff are woken) are recorded as errors and nothing new
starts. A server that answers again within the window, even now and then, is retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol
from urllib.parse import urlsplit

from seqk.errors import EndpointUnreachable, ProviderError

CONNECT_TIMEOUT_S = 3.0
"""How long one connection may take before the endpoint counts as not answering."""

BREAKER_WINDOW_S = 10.0
"""How long an endpoint may refuse every connection, with no call succeeding, before the run
stops: longer than a server's restart, far shorter than max_retries of backoff (~1 min a call)."""

_HINT = "is the server running, and is the port right?"


class Role(Protocol):
    """What this module reads of a seqk.config.spec.RoleSpec (which imports seqk.models: no cycle)."""

    @property
    def role(self) -> str:
        """actor, judge or critic."""
        ...

    @property
    def model(self) -> str | None:
        """The model id."""
        ...

    @property
    def api_base(self) -> str | None:
        """The role's server, if it names one."""
        ...


def endpoint_of(role: Role) -> str | None:
    """The URL the role's calls connect to, when it names one (`api_base`) and it is not a
    mock or local model."""
    if role.model is None or not role.api_base or role.model.startswith(("mock/", "local/")):
        return None
    return role.api_base


def address(url: str) -> tuple[str, int] | None:
    """(host, port) of an http(s) URL, or None when it is not one."""
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or port is None:
        return None
    return parts.hostname, port


def public_url(url: str) -> str | None:
    """`url` as it may be stored or shown: scheme, host, port and path, without the user,
    password, query or fragment (where some servers take a key), lower-case scheme and host, no
    trailing slash; None when it is not an http(s) URL (then it is neither stored nor shown)."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    host = f"[{host}]" if ":" in host else host
    netloc = host + (f":{port}" if port is not None else "")
    return f"{parts.scheme.lower()}://{netloc}{parts.path.rstrip('/')}"


def describe(roles: Sequence[Role]) -> str:
    """'the actor (openai/x) and the judge (openai/y)': who uses an endpoint."""
    names = [f"the {role.role} ({role.model})" for role in roles] or ["a role"]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def unreachable(roles: Sequence[Role], url: str, why: str) -> EndpointUnreachable:
    """The one line a user reads, before a run or when the breaker stops it."""
    return EndpointUnreachable(f"{describe(roles)} cannot reach {url}: {why}; {_HINT}")


async def connect_problem(url: str, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why a TCP connection to `url`'s host and port fails, in words, or None when it opens."""
    where = address(url)
    if where is None:
        return "it is not an http:// or https:// URL with a host"
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(*where), timeout_s)
    except TimeoutError:
        return f"no answer to a connection in {timeout_s:g} s"
    except OSError as exc:
        # A name with several addresses (localhost) fails with one OSError listing each refusal.
        if isinstance(exc, ConnectionRefusedError) or f"[Errno {errno.ECONNREFUSED}]" in str(exc):
            return f"connection refused (nothing listens on port {where[1]})"
        return f"cannot connect ({exc.strerror or exc})"
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return None


def check_endpoints(roles: Sequence[Role], timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Raise EndpointUnreachable naming every endpoint of `roles` that does not accept a
    connection (each distinct host and port once, all in parallel)."""
    users: dict[tuple[str, int] | str, tuple[str, list[Role]]] = {}
    for role in roles:
        url = endpoint_of(role)
        if url is not None:
            users.setdefault(address(url) or url, (url, []))[1].append(role)
    if not users:
        return

    async def everything() -> list[str | None]:
        return await asyncio.gather(*(connect_problem(url, timeout_s) for url, _ in users.values()))

    problems = [unreachable(named, url, why) for (url, named), why
                in zip(users.values(), asyncio.run(everything()), strict=True) if why is not None]
    if problems:
        raise EndpointUnreachable("; ".join(str(p) for p in problems))


class Breaker:
    """One endpoint's health during a run (see the module's docstring)."""

    def __init__(self, url: str, window_s: float = BREAKER_WINDOW_S):
        self.url = url
        self.window_s = window_s
        self._roles: dict[tuple[str, str | None], Role] = {}
        self._failing_since: float | None = None
        self._tripped: str | None = None
        self._event = asyncio.Event()
        self._confirming: asyncio.Task[None] | None = None

    def check(self, role: Role) -> None:
        """Raise EndpointUnreachable when the endpoint is down; else note who uses it."""
        if self._tripped is not None:
            raise EndpointUnreachable(self._tripped)
        self._roles.setdefault((role.role, role.model), role)

    def on_success(self) -> None:
        """A call got through: whatever failed before, the endpoint is there."""
        self._failing_since = None

    def on_failure(self, error: ProviderError) -> None:
        """A call failed; one that could not connect opens the window (if none is open)."""
        # A call that never reached a listening server, as its provider's `classify` says.
        if not error.unreachable or self._tripped is not None:
            return
        if self._failing_since is None:
            self._failing_since = time.monotonic()
        if self._confirming is None or self._confirming.done():
            self._confirming = asyncio.create_task(self._confirm())

    async def _confirm(self) -> None:
        while self._failing_since is not None:
            since = self._failing_since
            await asyncio.sleep(max(0.0, since + self.window_s - time.monotonic()))
            if self._failing_since != since:  # a call got through; a new window may have opened
                continue
            why = await connect_problem(self.url)
            if self._failing_since != since:
                continue
            if why is None:  # it listens again: let the calls tell
                self._failing_since = None
                return
            self._tripped = str(unreachable(list(self._roles.values()), self.url,
                                            f"{why}, and no call succeeded for {self.window_s:g} s"))
            self._event.set()
            return

    def sleeper(self, sleep: Callable[[float], Awaitable[None]]) -> Callable[[float], Awaitable[None]]:
        """`sleep`, cut short when the breaker trips, so a call waiting out its backoff stops
        at once instead of after minutes."""

        async def wait(delay: float) -> None:
            nap = asyncio.ensure_future(sleep(delay))
            trip = asyncio.ensure_future(self._event.wait())
            try:
                await asyncio.wait({nap, trip}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for job in (nap, trip):
                    job.cancel()
                await asyncio.gather(nap, trip, return_exceptions=True)

        return wait

    async def close(self) -> None:
        """Stop a confirmation in progress (the run is over)."""
        if self._confirming is not None:
            self._confirming.cancel()
            await asyncio.gather(self._confirming, return_exceptions=True)
