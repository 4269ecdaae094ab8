"""Test doubles for the rubric benchmarks: a scripted judge or critic handed straight to
verify/feedback, an OpenAI-compatible loopback server per role, and the fixture files."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from aiohttp import web

FIXTURES = Path(__file__).with_name("fixtures")


class ScriptedRole:
    """A RoleClient replying from a list (in call order) or a function of the prompt."""

    def __init__(self, replies: Sequence[str] | Callable[[str], str], role: str = "judge"):
        self.replies = replies
        self.role = role
        self.model = "scripted"
        self.prompts: list[str] = []

    async def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if callable(self.replies):
            return self.replies(prompt)
        return self.replies[len(self.prompts) - 1]


class GatedRole(ScriptedRole):
    """Holds every call until `expected` calls are in flight at once, so a test proves that
    calls overlap without timing anything (calls made one by one would never get there)."""

    def __init__(self, replies: Sequence[str] | Callable[[str], str], expected: int):
        super().__init__(replies)
        self.expected = expected
        self.most_in_flight = 0
        self._in_flight = 0
        self._all_in = asyncio.Event()

    async def complete(self, prompt: str) -> str:
        self._in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self._in_flight)
        if self._in_flight >= self.expected:
            self._all_in.set()
        await asyncio.wait_for(self._all_in.wait(), 5)
        self._in_flight -= 1
        return await super().complete(prompt)


def run(coro):
    return asyncio.run(coro)


class LoopbackServer:
    """An OpenAI-compatible chat server on 127.0.0.1 whose reply is a function of the prompt."""

    def __init__(self, reply: Callable[[str], str]):
        self.reply = reply
        self.prompts: list[str] = []

    async def chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        prompt = body["messages"][-1]["content"]
        self.prompts.append(prompt)
        text = self.reply(prompt)
        return web.json_response({
            "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "test"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(text.split())}})

    def __enter__(self) -> LoopbackServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        self.loop = asyncio.new_event_loop()
        self.runner = web.AppRunner(app)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"
