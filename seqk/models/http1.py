"""A small HTTP/1.1 client for one kind of request: a POST of a JSON body to an OpenAI-compatible
server, its whole reply read into bytes.

Why seqk has its own: a run against such a server spends most of its event loop on the HTTP client
(bench/pyspy_shares.py: aiohttp and asyncio's callbacks ~26 % of a 1,440-attempt run's samples,
0.25 ms of CPU a call in bench/bench_client.py), and the event loop is what a round of hundreds of
replies waits on. This one is an asyncio.Protocol per connection: a request is one
`transport.write`, a reply is parsed from the bytes `data_received` hands over (Content-Length,
chunked, or up to the end of the connection; gzip and deflate undone where a server sends them
unasked), and a future set once. Connections are kept alive and reused per (scheme, host, port)
in each event loop, as many at once as there are calls in flight (aiohttp's `limit=0`, as
before); https goes through asyncio's TLS with the system's certificates.

Failures, as `classify_http` reads them: `Unreachable` (no connection: refused, no such host, no
route; the server is not there), `Disconnected` (the connection ended before the whole reply),
`BadReply` (not HTTP/1.x), and TimeoutError past the role's timeout. A kept connection that the
server closed while it sat idle is found when the next request on it gets no byte back; that
request is sent once more on a new connection (the server never read it), once.
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from base64 import b64encode
from typing import Any
from urllib.parse import unquote, urlsplit

from seqk.version import __version__


class Unreachable(ConnectionError):
    """No connection could be made to the server (refused, unknown host, no route)."""


class Disconnected(ConnectionError):
    """The connection ended before the whole reply had come."""


class BadReply(ConnectionError):
    """What came back is not an HTTP/1.x reply."""


MAX_HEAD = 64 * 1024
"""The most bytes a reply's status line and headers may take."""

_USER_AGENT = f"seqk/{__version__}".encode()


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection: one request at a time, its reply parsed as it arrives."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.used = False  # a reply was read on it before: a kept connection
        self._waiter: asyncio.Future[tuple[int, dict[str, str], bytes]] | None = None
        self._buf = bytearray()
        self._got_bytes = False
        self._reset()

    def _reset(self) -> None:
        self._status = 0
        self._headers: dict[str, str] | None = None
        self._length: int | None = None  # Content-Length; None: chunked or to the end
        self._chunked = False
        self._body = bytearray()
        self._keep_alive = True

    # asyncio.Protocol
    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            self.close()  # bytes no request asked for: the connection cannot be trusted
            return
        self._got_bytes = True
        self._buf += data
        try:
            self._parse()
        except BadReply as exc:
            self._fail(exc)

    def eof_received(self) -> bool:
        return False  # the transport closes itself; connection_lost follows

    def connection_lost(self, exc: BaseException | None) -> None:
        self.closed = True
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._headers is not None and self._length is None and not self._chunked:
            self._done(bytes(self._buf))  # a reply delimited by the end of the connection
            return
        if not self._got_bytes:
            waiter.set_exception(_NothingBack())
        else:
            waiter.set_exception(Disconnected(
                f"the server closed the connection before the whole reply ({exc or 'end of stream'})"))

    # requests
    def request(self, data: bytes) -> asyncio.Future[tuple[int, dict[str, str], bytes]]:
        assert self.transport is not None and self._waiter is None
        self._waiter = asyncio.get_running_loop().create_future()
        self._got_bytes = False
        self.transport.write(data)
        return self._waiter

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def _fail(self, exc: BaseException) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(exc)
        self.abort()

    def _done(self, body: bytes) -> None:
        waiter, status, headers = self._waiter, self._status, self._headers or {}
        keep = self._keep_alive
        self._waiter = None
        self._reset()
        if self._buf:  # more bytes than the reply: nothing else was asked
            keep = False
        self.used = True
        if not keep:
            self.close()
        encoding = headers.get("content-encoding", "").lower()
        try:
            if encoding in ("gzip", "x-gzip"):
                body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
            elif encoding == "deflate":
                body = _inflate(body)
        except zlib.error as exc:
            if waiter is not None and not waiter.done():
                waiter.set_exception(BadReply(f"the reply's {encoding} body does not decompress: {exc}"))
            return
        if waiter is not None and not waiter.done():
            waiter.set_result((status, headers, body))

    def _parse(self) -> None:
        buf = self._buf
        while self._headers is None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_HEAD:
                    raise BadReply(f"a reply's headers longer than {MAX_HEAD} bytes")
                return
            head = bytes(buf[:end]).decode("latin-1")
            del buf[:end + 4]
            lines = head.split("\r\n")
            parts = lines[0].split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
                raise BadReply(f"not an HTTP/1.x reply: {lines[0][:100]!r}")
            status = int(parts[1])
            if 100 <= status < 200:
                continue  # an interim reply (100 Continue): the real one follows
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, sep, value = line.partition(":")
                if not sep:
                    raise BadReply(f"a reply's header line without a colon: {line[:100]!r}")
                name = name.strip().lower()
                value = value.strip()
                headers[name] = f"{headers[name]}, {value}" if name in headers else value
            self._status, self._headers = status, headers
            connection = headers.get("connection", "").lower()
            self._keep_alive = ("close" not in connection
                                and (parts[0] != "HTTP/1.0" or "keep-alive" in connection))
            if "chunked" in headers.get("transfer-encoding", "").lower():
                self._chunked = True
            elif "content-length" in headers:
                try:
                    self._length = int(headers["content-length"])
                except ValueError:
                    raise BadReply(f"a Content-Length that is not a number: "
                                   f"{headers['content-length'][:40]!r}") from None
            elif status in (204, 304):
                self._length = 0
            else:
                self._keep_alive = False  # the body runs to the end of the connection
        if self._chunked:
            self._parse_chunks()
        elif self._length is not None and len(buf) >= self._length:
            body = bytes(buf[:self._length])
            del buf[:self._length]
            self._done(body)

    def _parse_chunks(self) -> None:
        buf = self._buf
        while True:
            line_end = buf.find(b"\r\n")
            if line_end < 0:
                return
            size_text = bytes(buf[:line_end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise BadReply(f"a chunk size that is not hexadecimal: {size_text[:40]!r}") from None
            if size == 0:  # the last chunk, then trailers up to an empty line
                rest = buf.find(b"\r\n", line_end + 2)
                if rest < 0:
                    return
                if rest != line_end + 2:  # trailers: up to the blank line
                    rest = buf.find(b"\r\n\r\n", line_end + 2)
                    if rest < 0:
                        return
                    rest += 2
                del buf[:rest + 2]
                body = bytes(self._body)
                self._done(body)
                return
            if len(buf) < line_end + 2 + size + 2:
                return
            start = line_end + 2
            self._body += buf[start:start + size]
            del buf[:start + size + 2]


def _inflate(body: bytes) -> bytes:
    try:
        return zlib.decompress(body)
    except zlib.error:
        return zlib.decompress(body, -zlib.MAX_WBITS)  # raw deflate, as some servers send it


class _NothingBack(Disconnected):
    """The connection ended before any byte of the reply: on a kept connection, closed while idle."""


class Client:
    """Kept connections of one event loop, per (scheme, host, port)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._targets: dict[str, tuple[tuple[str, str, int], bytes, bytes]] = {}
        self._ssl: ssl.SSLContext | None = None
        self.closed = False

    def _target(self, url: str) -> tuple[tuple[str, str, int], bytes, bytes]:
        """(scheme, host, port), the request line with Host, and the Basic authorization of the
        URL's user and password (b"" without), of a URL, parsed once."""
        found = self._targets.get(url)
        if found is None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"not an http:// or https:// URL: {url!r}")
            port = parts.port or (443 if parts.scheme == "https" else 80)
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            host = parts.hostname
            shown = f"[{host}]" if ":" in host else host
            if parts.port:
                shown += f":{parts.port}"
            line = (f"POST {path} HTTP/1.1\r\nHost: {shown}\r\n").encode("latin-1")
            basic = b""
            if parts.username is not None:
                user = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
                basic = b"Authorization: Basic " + b64encode(user) + b"\r\n"
            found = self._targets[url] = ((parts.scheme, host, port), line, basic)
        return found

    async def _connect(self, key: tuple[str, str, int]) -> _Connection:
        scheme, host, port = key
        context = None
        if scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            context = self._ssl
        loop = asyncio.get_running_loop()
        try:
            _, conn = await loop.create_connection(_Connection, host, port, ssl=context)
        except OSError as exc:
            raise Unreachable(f"Cannot connect to {host}:{port}: {exc}") from exc
        return conn

    async def post(self, url: str, body: bytes, headers: dict[str, str] | None = None,
                   timeout_s: float | None = None) -> tuple[int, dict[str, str], bytes]:
        """POST body to url; (status, headers with lower-case names, body as bytes). A user and
        password in the URL go as Basic authorization unless `headers` has an Authorization."""
        key, line, basic = self._target(url)
        head = [line, b"User-Agent: ", _USER_AGENT, b"\r\nContent-Length: ", str(len(body)).encode(), b"\r\n"]
        authorized = False
        for name, value in (headers or {}).items():
            if "\r" in value or "\n" in value:  # named, never shown: it may be a key
                raise ValueError(f"the {name} header holds a line break (an API key read with its newline?)")
            head.append(f"{name}: {value}\r\n".encode("latin-1"))
            authorized = authorized or name.lower() == "authorization"
        if basic and not authorized:
            head.append(basic)
        head.append(b"\r\n")
        data = b"".join(head) + body
        async with asyncio.timeout(timeout_s):
            for _ in range(2):
                conn = self._take(key)
                if conn is None:
                    conn = await self._connect(key)
                kept = conn.used
                try:
                    reply = await conn.request(data)
                except _NothingBack:
                    if kept:
                        continue  # closed by the server while idle: it never read this request
                    raise
                except BaseException:
                    conn.abort()  # cancelled or timed out mid-reply: the connection is unusable
                    raise
                self._give(key, conn)
                return reply
            raise Disconnected("the server closed two connections before replying")

    def _take(self, key: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if not conn.closed:
                return conn
        return None

    def _give(self, key: tuple[str, str, int], conn: _Connection) -> None:
        if conn.closed:
            return
        if self.closed:
            conn.close()
            return
        self._idle.setdefault(key, []).append(conn)

    def close(self) -> None:
        """Close every kept connection; a connection in use closes when its reply is read."""
        self.closed = True
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()
