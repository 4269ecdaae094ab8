"""Throwaway servers the lake tests (and bench/bench_lake.py) start on loopback: PostgreSQL 15
from Debian's package (its own data dir, port and socket dir; run as the `postgres` user when
we are root, as initdb refuses root) and moto's S3. Both are stopped by whoever started them.
Also the model servers: `ScriptedServer` (in-process aiohttp, answers from a script),
`CountingServer` (in-process, counts calls in flight, may refuse past a limit or hold its replies)
and `openai_server` (bench/openai_server.py as a subprocess)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

PG_BIN_DIRS = [Path("/usr/lib/postgresql") / v / "bin" for v in ("17", "16", "15")]


def pg_bin() -> Path | None:
    """The folder of initdb/pg_ctl, or None when PostgreSQL is not installed."""
    for folder in PG_BIN_DIRS:
        if (folder / "initdb").exists():
            return folder
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Postgres:
    port: int
    user: str
    database: str
    log: Path | None = None
    """The server's log (its errors: a lake commit that lost a race is a duplicate key there)."""

    def dsn(self) -> str:
        return f"dbname={self.database} host=127.0.0.1 port={self.port} user={self.user}"


def _as_postgres(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", "postgres", "--", *args]


@contextlib.contextmanager
def postgres(database: str = "seqk") -> Iterator[Postgres]:
    """A PostgreSQL server on 127.0.0.1 (trust auth), stopped and removed on exit."""
    bindir = pg_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="seqk-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    user = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "postgres")
    port = free_port()
    run = {"check": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "timeout": 120}
    subprocess.run(_as_postgres([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", user,
                                 "--no-sync"]), **run)
    opts = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60"
    subprocess.run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-o", opts, "-w", "-t", "60",
                                 "-l", str(root / "log"), "start"]), **run)
    try:
        subprocess.run(_as_postgres([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port),
                                     "-U", user, database]), **run)
        yield Postgres(port, user, database, root / "log")
    finally:
        subprocess.run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w",
                                     "-t", "60", "stop"]), check=False, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)
        shutil.rmtree(root, ignore_errors=True)


def create_database(pg: Postgres, name: str) -> str:
    """A fresh database on the server; its DSN."""
    bindir = pg_bin()
    assert bindir is not None
    subprocess.run(_as_postgres([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(pg.port),
                                 "-U", pg.user, name]), check=True, timeout=60,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return f"dbname={name} host=127.0.0.1 port={pg.port} user={pg.user}"


@contextlib.contextmanager
def moto_s3() -> Iterator[str]:
    """moto's S3 on loopback; yields its endpoint URL (http://127.0.0.1:PORT)."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per S3 request otherwise
    # Port 0: the server binds a free port itself (a port picked here and bound later may be
    # taken meanwhile, and moto then waits forever).
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        _host, port = server.get_host_and_port()
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


class ScriptedServer:
    """An OpenAI-compatible server on loopback that answers from a script of (status, headers)."""

    def __init__(self, script):
        self.script = list(script)
        self.requests: list[dict] = []
        self.times: list[float] = []

    async def chat(self, request):
        self.requests.append(await request.json())
        self.times.append(time.monotonic())
        status, headers = self.script.pop(0) if self.script else (200, {})
        if status != 200:
            return web.json_response({"error": {"message": f"status {status}"}}, status=status,
                                     headers=headers)
        return web.json_response({
            "choices": [{"message": {"role": "assistant", "content": "hello there"}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 50,
                      "prompt_tokens_details": {"cached_tokens": 400},
                      "completion_tokens_details": {"reasoning_tokens": 20}}})

    def __enter__(self):
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        self.loop = asyncio.new_event_loop()
        runner = web.AppRunner(app)
        self.loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.runner = runner
        return self

    def __exit__(self, *exc):
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    @property
    def api_base(self):
        return f"http://127.0.0.1:{self.port}/v1"



class CountingServer(ScriptedServer):
    """An OpenAI-compatible server on loopback that answers "NO" after `delay_s`, counting the
    calls in flight. Past `max_in_flight` it answers 429 (Retry-After 0) at once. With
    `hold_until` set, it holds every reply until that many calls are in flight at once (or
    `hold_timeout_s` passed), then answers them all: a client that never sends that many at once
    waits out the timeout. `in_flight_at_first_reply` says how many were in flight when the
    first reply went out."""

    def __init__(self, delay_s: float = 0.02, max_in_flight: int | None = None,
                 hold_timeout_s: float = 30.0):
        super().__init__([])
        self.delay_s, self.max_in_flight, self.hold_timeout_s = delay_s, max_in_flight, hold_timeout_s
        self.hold_until: int | None = None
        self.in_flight = self.peak_in_flight = self.rate_limited = 0
        self.in_flight_at_first_reply: int | None = None
        self.authorization: set[str] = set()
        self._open: asyncio.Event | None = None

    def reset(self, hold_until: int | None = None) -> None:
        """Start counting afresh (before the next run), holding replies until `hold_until` in flight."""
        self.hold_until, self.in_flight_at_first_reply, self._open = hold_until, None, None
        self.peak_in_flight = self.rate_limited = 0
        self.requests.clear()

    async def chat(self, request):
        self.requests.append(await request.json())
        self.authorization.add(request.headers.get("Authorization", ""))
        if self.max_in_flight is not None and self.in_flight >= self.max_in_flight:
            self.rate_limited += 1
            return web.json_response({"error": {"message": "too many requests in flight"}}, status=429,
                                     headers={"Retry-After": "0"})
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.hold_until is not None:
                if self._open is None:
                    self._open = asyncio.Event()
                if self.in_flight >= self.hold_until:
                    self._open.set()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._open.wait(), self.hold_timeout_s)
            await asyncio.sleep(self.delay_s)
            if self.in_flight_at_first_reply is None:
                self.in_flight_at_first_reply = self.in_flight
        finally:
            self.in_flight -= 1
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": "NO"}}],
                                  "usage": {"prompt_tokens": 5, "completion_tokens": 1}})


@contextlib.contextmanager
def openai_server(*, reply: str = "NO", delay: float = 0.01) -> Iterator[str]:
    """bench/openai_server.py on loopback (a real subprocess) answering `reply` after `delay`
    seconds to every call, with honest token counts (words); yields its /v1 address."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    script = Path(__file__).resolve().parents[1] / "bench" / "openai_server.py"
    proc = subprocess.Popen([sys.executable, str(script), "--port", str(port), "--delay", str(delay),
                             "--reply", reply], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("bench/openai_server.py did not start") from None
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# ---------------------------------------------------------------------------
# Lakes on those servers (tests/conftest.py's lake_url)


def lake_bucket(endpoint: str) -> None:
    """The lakes' bucket, made again if gone: moto keeps its buckets in-process, shared by every
    moto server of the session, and tests/io/test_s3.py resets them."""
    import boto3

    client = boto3.session.Session().client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                          aws_secret_access_key="testing", region_name="us-east-1")
    if "seqk-lake" not in {b["Name"] for b in client.list_buckets().get("Buckets", [])}:
        client.create_bucket(Bucket="seqk-lake")


_LAKES = iter(range(1, 10_000))


def new_lake(pg: Postgres, endpoint: str) -> str:
    """The URL of a fresh lake: its own PostgreSQL database, data under its own S3 prefix."""
    lake_bucket(endpoint)
    name = f"lake{next(_LAKES)}"
    dsn = create_database(pg, name)
    return f"ducklake:postgres:{dsn};data=s3://seqk-lake/{name}/"


AWS_SETTINGS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE",
                "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")
"""What points the AWS credential chain somewhere: a test sets its own and removes the rest."""


class WorldServer(ScriptedServer):
    """An OpenAI-compatible server on loopback, in this process, answering each call with
    `script(prompt, seed)` (tests/scripts.py's worlds), with honest usage (words). `hold_after(n)`:
    once n calls were answered, later calls wait until `release()`, so a process killed meanwhile
    dies with calls in flight, whatever the machine's speed."""

    def __init__(self, script, latency_s: float = 0.0):
        super().__init__([])
        self.world, self.latency_s = script, latency_s
        self.answered = 0
        self._limit: int | None = None
        self._open = threading.Event()
        self._open.set()

    def hold_after(self, n: int) -> None:
        self._limit = n
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def holding(self) -> bool:
        return self._limit is not None and self.answered >= self._limit and not self._open.is_set()

    async def chat(self, request):
        body = await request.json()
        if self._limit is not None and self.answered >= self._limit:
            while not self._open.is_set():
                await asyncio.sleep(0.02)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        reply = self.world(prompt, seed=body.get("seed"))
        self.answered += 1
        p, c = len(prompt.split()), len(reply.split())
        return web.json_response({
            "id": "chatcmpl-world", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "world"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}})

    def __exit__(self, *exc):
        self.release()
        super().__exit__(*exc)
