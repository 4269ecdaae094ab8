"""A minimal OpenAI-compatible chat server on loopback that answers every call
after a fixed delay, for measuring the harness without a real model.

    python bench/openai_server.py --port 8765 --delay 0.2 --reply '[[-1]]'

Usage figures are honest counts of whitespace-separated words in the prompt and reply.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from aiohttp import web


def make_app(delay_s: float, reply: str) -> web.Application:
    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(delay_s)
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        p, c = len(prompt.split()), len(reply.split())
        return web.json_response({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "bench"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
        })

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "bench", "object": "model"}]})

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--reply", default="[[-1]]")
    args = parser.parse_args()
    web.run_app(make_app(args.delay, args.reply), host="127.0.0.1", port=args.port,
                print=None, access_log=None, backlog=1024)


if __name__ == "__main__":
    main()
