"""Loopback fakes of the providers' batch APIs, each an aiohttp server on its own thread, started
per test: OpenAI's files + batches (and its synchronous chat completions, for the same answers
without a batch) and Anthropic's Message Batches. A batch ends `delay_s` after it was created;
`fail` makes chosen items fail, `expire` makes a batch expire with part of its items undone.

The model is deterministic: `answer(prompt)` is the reply, both synchronously and in a batch."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

_WORD = re.compile(r"Say the word (w\d+)")
_ATTEMPT = re.compile(r"This is attempt (\d+) of (\d+)")


def answer(prompt: str) -> str:
    """Task i is solved from attempt (i mod 3) + 1 on; a critic's prompt gets a fixed critique."""
    if prompt.startswith("["):
        return "Critique: " + (_WORD.search(prompt).group(1) if _WORD.search(prompt) else "?")
    word = _WORD.search(prompt).group(1)
    attempt = int(_ATTEMPT.search(prompt).group(1)) if _ATTEMPT.search(prompt) else 1
    return word if attempt >= int(word[1:]) % 3 + 1 else f"not-{word}"


def tokens(text: str) -> int:
    return len(text.split())


@dataclass
class FakeBatch:
    id: str
    requests: list[dict[str, Any]]
    created: float
    metadata: dict[str, Any]
    expire: bool = False


@dataclass
class Fake:
    """One fake provider on loopback; `url` is its base address."""

    delay_s: float = 0.2
    fail: Callable[[str], bool] = lambda custom_id: False
    """Items to fail (custom_id -> True), each only the first time it is sent."""
    expire_first: bool = False
    """The first batch expires with only its first half done."""
    cache: dict[str, int] = field(default_factory=dict)
    """Anthropic: cache_creation / cache_read tokens to report per item."""
    held: bool = False
    """While True, no batch ends, whatever its age (a test sets it False to let them end)."""
    url: str = ""
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    posted_batches: int = 0
    sync_calls: list[dict[str, Any]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    failed_once: set[str] = field(default_factory=set)
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Fake:
        self._thread.start()
        assert self._ready.wait(10), "the fake did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application(client_max_size=300 * 1024 * 1024)
        self.routes(app)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        self._ready.set()
        self._loop.run_forever()

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids)}"

    def item_fails(self, custom_id: str) -> bool:
        if self.fail(custom_id) and custom_id not in self.failed_once:
            self.failed_once.add(custom_id)
            return True
        return False

    def done(self, batch: FakeBatch) -> bool:
        return not self.held and time.time() >= batch.created + self.delay_s


class FakeOpenAI(Fake):
    """POST /v1/files, POST /v1/batches, GET /v1/batches[/{id}], GET /v1/files/{id}/content,
    POST /v1/chat/completions."""

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self.upload)
        app.router.add_post("/v1/batches", self.create)
        app.router.add_get("/v1/batches", self.list)
        app.router.add_get("/v1/batches/{id}", self.retrieve)
        app.router.add_get("/v1/files/{id}/content", self.content)
        app.router.add_post("/v1/chat/completions", self.chat)

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["messages"][-1]["content"]
        text = answer(prompt)
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
                "model": body["model"], "service_tier": body.get("service_tier", "default"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": tokens(prompt), "completion_tokens": tokens(text),
                          "total_tokens": tokens(prompt) + tokens(text)}}

    async def chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.sync_calls.append(body)
        return web.json_response(self.completion(body))

    async def upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        data = form["file"].file.read().decode()  # type: ignore[union-attr]
        file_id = self.new_id("file")
        self.files[file_id] = data
        return web.json_response({"id": file_id, "object": "file", "bytes": len(data),
                                  "created_at": int(time.time()), "filename": "batch.jsonl",
                                  "purpose": "batch", "status": "processed"})

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.posted_batches += 1
        lines = [json.loads(x) for x in self.files[body["input_file_id"]].splitlines() if x.strip()]
        batch = FakeBatch(self.new_id("batch"), lines, time.time(), body.get("metadata") or {},
                          expire=self.expire_first and self.posted_batches == 1)
        self.batches[batch.id] = batch
        self.bodies.extend(line["body"] for line in lines)
        return web.json_response(self.view(batch))

    def finished(self, batch: FakeBatch) -> tuple[list[str], list[str]]:
        """The batch's output and error lines, made once when it ends."""
        if not hasattr(batch, "out"):
            out, err = [], []
            for n, line in enumerate(batch.requests):
                cid = line["custom_id"]
                if batch.expire and n >= len(batch.requests) // 2:
                    err.append(json.dumps({"id": f"r{n}", "custom_id": cid, "response": None,
                                           "error": {"code": "batch_expired", "message": "not run before the "
                                                     "completion window expired"}}))
                elif self.item_fails(cid):
                    err.append(json.dumps({"id": f"r{n}", "custom_id": cid, "error": None, "response": {
                        "status_code": 500, "request_id": "x",
                        "body": {"error": {"message": "server overloaded", "type": "server_error"}}}}))
                else:
                    out.append(json.dumps({"id": f"r{n}", "custom_id": cid, "error": None, "response": {
                        "status_code": 200, "request_id": "x", "body": self.completion(line["body"])}}))
            batch.out, batch.err = out, err  # type: ignore[attr-defined]
        return batch.out, batch.err  # type: ignore[attr-defined]

    def view(self, batch: FakeBatch) -> dict[str, Any]:
        n = len(batch.requests)
        state, counts, out_id, err_id = "in_progress", {"total": n, "completed": 0, "failed": 0}, None, None
        if self.done(batch):
            out, err = self.finished(batch)
            state = "expired" if batch.expire else "completed"
            counts = {"total": n, "completed": len(out), "failed": len(err)}
            out_id, err_id = batch.id + "-out", batch.id + "-err"
            self.files[out_id] = "\n".join(out) + "\n"
            self.files[err_id] = "\n".join(err) + "\n"
        return {"id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
                "input_file_id": "file", "completion_window": "24h", "status": state,
                "output_file_id": out_id, "error_file_id": err_id, "created_at": int(batch.created),
                "request_counts": counts, "metadata": batch.metadata}

    async def retrieve(self, request: web.Request) -> web.Response:
        return web.json_response(self.view(self.batches[request.match_info["id"]]))

    async def list(self, request: web.Request) -> web.Response:
        data = [self.view(b) for b in sorted(self.batches.values(), key=lambda b: -b.created)]
        return web.json_response({"object": "list", "data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def content(self, request: web.Request) -> web.Response:
        return web.Response(text=self.files[request.match_info["id"]])


class FakeAnthropic(Fake):
    """POST /v1/messages/batches, GET /v1/messages/batches[/{id}[/results]]."""

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages/batches", self.create)
        app.router.add_get("/v1/messages/batches", self.list)
        app.router.add_get("/v1/messages/batches/{id}", self.retrieve)
        app.router.add_get("/v1/messages/batches/{id}/results", self.results)

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.posted_batches += 1
        batch = FakeBatch(self.new_id("msgbatch"), body["requests"], time.time(), {})
        self.batches[batch.id] = batch
        self.bodies.extend(r["params"] for r in body["requests"])
        return web.json_response(self.view(batch))

    def view(self, batch: FakeBatch) -> dict[str, Any]:
        done = self.done(batch)
        n = len(batch.requests)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(batch.created)) + f".{int(batch.created % 1 * 1e6):06d}Z"
        return {"id": batch.id, "type": "message_batch",
                "processing_status": "ended" if done else "in_progress",
                "request_counts": {"processing": 0 if done else n, "succeeded": n if done else 0,
                                   "errored": 0, "canceled": 0, "expired": 0},
                "created_at": stamp, "expires_at": stamp, "ended_at": stamp if done else None,
                "archived_at": None, "cancel_initiated_at": None,
                "results_url": f"{self.url}/v1/messages/batches/{batch.id}/results" if done else None}

    async def retrieve(self, request: web.Request) -> web.Response:
        return web.json_response(self.view(self.batches[request.match_info["id"]]))

    async def list(self, request: web.Request) -> web.Response:
        data = [self.view(b) for b in sorted(self.batches.values(), key=lambda b: -b.created)]
        return web.json_response({"data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def results(self, request: web.Request) -> web.Response:
        batch = self.batches[request.match_info["id"]]
        lines = []
        for r in batch.requests:
            content = r["params"]["messages"][-1]["content"]
            prompt = content if isinstance(content, str) else "".join(b["text"] for b in content)
            text = answer(prompt)
            if self.item_fails(r["custom_id"]):
                result: dict[str, Any] = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "overloaded_error", "message": "overloaded"}}}
            else:
                write, read = self.cache.get("write", 0), self.cache.get("read", 0)
                result = {"type": "succeeded", "message": {
                    "id": "msg_1", "type": "message", "role": "assistant", "model": r["params"]["model"],
                    "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": tokens(prompt), "output_tokens": tokens(text),
                              "cache_creation_input_tokens": write, "cache_read_input_tokens": read}}}
            lines.append(json.dumps({"custom_id": r["custom_id"], "result": result}))
        return web.Response(text="\n".join(lines) + "\n", content_type="application/binary")
