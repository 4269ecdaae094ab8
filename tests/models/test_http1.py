"""seqk.models.http1, the HTTP/1.1 client of OpenAI-compatible servers, against real loopback
servers that send replies byte by byte as servers do: framed by Content-Length, chunked (with
extensions and trailers), to the end of the connection, compressed unasked, split into one-byte
writes; kept connections reused, one closed by the server while idle sent again, a connection cut
mid-reply, a refused port, a timeout, a reply that is not HTTP, TLS with the system's trust store
pointed at a test authority. Each failure must classify as the run's retry loop needs it."""

from __future__ import annotations

import asyncio
import datetime
import gzip
import ipaddress
import json
import socket
import ssl
import zlib

import pytest

from seqk.errors import HTTPStatusError, TransientProviderError
from seqk.models import http1
from seqk.models.openai_http import OpenAIHTTPProvider, chat_completion
from seqk.models.role import RoleSpec

classify = OpenAIHTTPProvider().classify


class RawServer:
    """A loopback TCP server: reads each request whole (head and Content-Length body), records
    it, and answers with `reply(n)` for the n-th request: bytes, or a list of writes 10 ms apart;
    ("close", either): that, then the connection closed; None: closed without a word. Counts the
    connections it accepted."""

    def __init__(self, reply, *, chunk: int | None = None, tls: ssl.SSLContext | None = None):
        self.reply, self.chunk, self.tls = reply, chunk, tls
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.connections = 0
        self.writers: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> RawServer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self.server.sockets[0].getsockname()[1]
        scheme = "https" if self.tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}/v1/chat/completions"
        return self

    async def __aexit__(self, *exc) -> None:
        for w in self.writers:
            w.close()
        self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, _, v in
                           (line.partition(":") for line in lines[1:] if line)}
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                self.requests.append((lines[0], headers, body))
                out = self.reply(len(self.requests))
                close = isinstance(out, tuple)
                if close:
                    out = out[1]
                if out is None:
                    writer.close()
                    return
                for part in out if isinstance(out, list) else [out]:
                    step = self.chunk or len(part) or 1
                    for i in range(0, len(part), step):
                        writer.write(part[i:i + step])
                        await writer.drain()
                        if self.chunk:
                            await asyncio.sleep(0)
                    if isinstance(out, list):
                        await asyncio.sleep(0.01)
                if close:
                    writer.close()
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return


def ok(body: bytes, *extra: str, version: str = "HTTP/1.1") -> bytes:
    head = [f"{version} 200 OK", "Content-Type: application/json", *extra]
    if not any(h.lower().startswith(("transfer-encoding", "content-length")) for h in extra):
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def chunked(body: bytes, sizes=(1, 7, 100)) -> bytes:
    out, i, n = [], 0, 0
    while i < len(body):
        size = sizes[n % len(sizes)]
        part = body[i:i + size]
        out.append(f"{len(part):x};ext=1\r\n".encode() + part + b"\r\n")
        i, n = i + size, n + 1
    return b"".join(out) + b"0\r\nX-Trailer: yes\r\n\r\n"


REPLY = json.dumps({"choices": [{"message": {"content": "ok ünïcode \u2028 line"}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 2}}).encode()


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("framing", ["length", "chunked", "eof-1.0", "close", "gzip", "deflate", "one-byte"])
def test_every_framing_of_a_reply_reads_the_same_body(framing):
    def reply(n):
        if framing == "chunked":
            return ok(chunked(REPLY), "Transfer-Encoding: chunked")
        if framing == "eof-1.0":  # HTTP/1.0, no length: the body is what comes before the close
            return ("close", [b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + REPLY[:10],
                              REPLY[10:]])
        if framing == "close":
            return ok(REPLY, "Connection: close")
        if framing == "gzip":
            return ok(gzip.compress(REPLY), "Content-Encoding: gzip")
        if framing == "deflate":
            return ok(zlib.compress(REPLY), "Content-Encoding: deflate")
        return ok(REPLY)

    async def go():
        async with RawServer(reply, chunk=1 if framing == "one-byte" else None) as server:
            client = http1.Client()
            got = [await client.post(server.url, b'{"a": 1}', {"Content-Type": "application/json"})
                   for _ in range(3)]
            client.close()
            return server, got

    server, got = run(go())
    for status, headers, body in got:
        assert status == 200 and body == REPLY and headers["content-type"] == "application/json"
    line, headers, body = server.requests[0]
    assert line == "POST /v1/chat/completions HTTP/1.1" and body == b'{"a": 1}'
    assert headers["host"] == f"127.0.0.1:{server.port}" and headers["content-type"] == "application/json"
    # kept alive unless the reply said otherwise: three requests on one connection
    want = {"close": 3, "eof-1.0": 3}.get(framing, 1)
    assert server.connections == want


def test_concurrent_calls_open_connections_and_reuse_them():
    async def go():
        async with RawServer(lambda n: ok(REPLY)) as server:
            client = http1.Client()
            for _ in range(3):
                got = await asyncio.gather(*[client.post(server.url, b"{}") for _ in range(20)])
                assert all(body == REPLY for _, _, body in got)
            client.close()
            return server

    server = run(go())
    assert len(server.requests) == 60 and server.connections == 20


def test_a_connection_the_server_closed_while_idle_is_sent_again_once():
    async def go():
        # the server answers the first request and then closes each connection without a word
        async with RawServer(lambda n: ok(REPLY) if n % 2 == 1 else None) as server:
            client = http1.Client()
            await client.post(server.url, b"{}")
            got = await client.post(server.url, b"{}")  # on the kept connection, closed unanswered
            client.close()
            return server, got

    server, (status, _, body) = run(go())
    # request 2 reached the server and got nothing (a close); request 3, on a new connection, the reply
    assert status == 200 and body == REPLY and len(server.requests) == 3 and server.connections == 2


def test_a_connection_cut_mid_reply_is_a_transient_failure():
    async def go():
        async with RawServer(lambda n: ("close", ok(REPLY)[:60])) as server:
            with pytest.raises(http1.Disconnected) as caught:
                await http1.Client().post(server.url, b"{}")
            return server, caught.value

    server, cut = run(go())
    failure = classify(cut)
    assert isinstance(failure, TransientProviderError) and not failure.unreachable
    assert len(server.requests) == 1  # a fresh connection's cut reply is not sent again


def test_a_refused_port_is_unreachable_in_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: refused
        with pytest.raises(http1.Unreachable) as caught:
            run(http1.Client().post(f"http://127.0.0.1:{port}/v1/chat/completions", b"{}"))
    failure = classify(caught.value)
    assert isinstance(failure, TransientProviderError) and failure.unreachable
    assert f"127.0.0.1:{port}" in str(failure) and "\n" not in str(failure)


def test_a_timeout_and_a_reply_that_is_not_http():
    async def slow():
        async with RawServer(lambda n: [b"HTTP/1.1 200 OK\r\n", b""]) as server:
            with pytest.raises(TimeoutError) as caught:
                await http1.Client().post(server.url, b"{}", timeout_s=0.3)
            return caught.value

    assert isinstance(classify(run(slow())), TransientProviderError)

    async def garbage():
        async with RawServer(lambda n: b"SSH-2.0-OpenSSH_9.6\r\n\r\n") as server:
            with pytest.raises(http1.BadReply) as caught:
                await http1.Client().post(server.url, b"{}")
            return caught.value

    bad = run(garbage())
    assert "not an HTTP/1.x reply" in str(bad) and isinstance(classify(bad), TransientProviderError)


def test_an_interim_reply_and_a_429_with_retry_after_through_chat_completion():
    limited = (b"HTTP/1.1 100 Continue\r\n\r\n"
               b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 9\r\n\r\nslow down")

    async def go():
        async with RawServer(lambda n: limited if n == 1 else ok(REPLY)) as server:
            spec = RoleSpec(role="actor", model="openai/m", api_base=server.url.removesuffix("/chat/completions"))
            with pytest.raises(HTTPStatusError) as caught:
                await chat_completion(spec, "hello", spec.api_base)
            done = await chat_completion(spec, "hello", spec.api_base)
            return server, caught.value, done

    server, error, done = run(go())
    failure = classify(error)
    assert failure.retry_after == 3.0 and "slow down" in str(failure)
    assert done.text == "ok ünïcode \u2028 line" and done.input_tokens == 5 and done.output_tokens == 2
    sent = json.loads(server.requests[1][2])
    assert sent["model"] == "m" and sent["messages"] == [{"role": "user", "content": "hello"}]
    assert server.connections == 1  # the 429's connection kept and reused


def test_tls_with_the_trust_store_pointed_at_a_test_authority(tmp_path, monkeypatch):
    # cryptography comes with moto (a test dependency)
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "seqk test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")

    async def go(trusted: bool):
        async with RawServer(lambda n: ok(REPLY), tls=tls) as server:
            if not trusted:
                with pytest.raises(http1.Unreachable) as caught:  # an unknown authority: refused
                    await http1.Client().post(server.url, b"{}")
                return str(caught.value)
            monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "cert.pem"))
            client = http1.Client()
            got = [await client.post(server.url, b"{}") for _ in range(2)]
            client.close()
            return server, got

    assert "CERTIFICATE_VERIFY_FAILED" in run(go(False))
    server, got = run(go(True))
    assert all(body == REPLY for _, _, body in got) and server.connections == 1


def test_a_url_user_goes_as_basic_auth_and_a_header_with_a_line_break_is_refused():
    async def go():
        async with RawServer(lambda n: ok(REPLY)) as server:
            client = http1.Client()
            url = server.url.replace("http://", "http://al%40ice:s3cr%3At@")
            await client.post(url, b"{}")
            await client.post(url, b"{}", {"Authorization": "Bearer k"})  # the given header wins
            with pytest.raises(ValueError, match="Authorization header holds a line break") as caught:
                await client.post(url, b"{}", {"Authorization": "Bearer secret\n"})
            client.close()
            return server, str(caught.value)

    server, refused = run(go())
    import base64
    assert server.requests[0][1]["authorization"] == "Basic " + base64.b64encode(b"al@ice:s3cr:t").decode()
    assert server.requests[1][1]["authorization"] == "Bearer k" and len(server.requests) == 2
    assert "secret" not in refused


def test_a_body_and_a_reply_read_back_as_the_standard_librarys_json_would():
    """orjson encodes and decodes the hot path; what it refuses goes through the standard library,
    so every body that encoded before encodes to the same JSON values, and every reply reads."""
    from seqk.models.openai_http import decode_reply, encode_body

    body = {"model": "m", "messages": [{"role": "user", "content": "grids\n1 2\t\"3\"\\ ünï \u2028 😀"}],
            "temperature": 0.7, "seed": 3, "extra": {"nested": [True, None, 1.5e-300]}}
    sent = encode_body(body)
    assert json.loads(sent) == body and "ünï".encode() in sent  # UTF-8, not \\u escapes
    huge = {"model": "m", "big": 2**70}  # past 64 bits: orjson refuses, the standard library writes it
    assert json.loads(encode_body(huge)) == huge
    with pytest.raises(TypeError):  # what neither encodes fails as before
        encode_body({"model": object()})

    assert decode_reply(REPLY) == json.loads(REPLY)
    odd = b'{"a": NaN, "b": 123456789012345678901234567890, "c": "\\ud800"}'  # orjson refuses each
    read = decode_reply(odd)
    assert read["b"] == 123456789012345678901234567890 and read["c"] == "\ud800" and read["a"] != read["a"]
    with pytest.raises(ValueError):
        decode_reply(b"<html>not json</html>")
