"""A minimal OpenAI-compatible chat server on loopback that answers every call
after a fixed delay, for measuring the harness without a real model.

    python bench/openai_server.py --port 8765 --delay 0.2 --reply '[[-1]]'
    python bench/openai_server.py --max-in-flight 8 --retry-after 1   # a rate-limited provider

With --max-in-flight N, a request that arrives while N are being answered gets a 429 with
Retry-After at once; GET /stats gives the counts (requests, rate_limited, peak_in_flight) and
`first_request_at`, the wall-clock time (time.time()) the first chat request arrived, which
bench/bench_startup.py reads; POST /stats/reset starts the counts afresh. GET /stats?times=1
also gives each answered request's arrival and reply (epoch seconds), in order of arrival, which
bench/bench_chains.py uses to tell the server's time from the harness's; GET /stats?prompts=1
the sha256 of each request's messages (roles and texts), in order of arrival, by which bench/bench_inspect.py
checks that two harnesses sent byte-identical prompts.
Usage figures are honest counts of whitespace-separated words in the prompt and reply.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import time

from aiohttp import web


def prompt_sha256(body: dict) -> str:
    """sha256 of a request's messages as the model reads them: each role and its text (a list of
    content parts joined), whatever else a client adds to a message."""
    def text(content: object) -> str:
        if isinstance(content, list):
            return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        return str(content or "")

    seen = [(m.get("role"), text(m.get("content"))) for m in body.get("messages", [])]
    return hashlib.sha256(json.dumps(seen).encode()).hexdigest()


def make_app(delay_s: float, reply: str, max_in_flight: int | None = None,
             retry_after_s: float = 1.0) -> web.Application:
    fresh = {"requests": 0, "rate_limited": 0, "in_flight": 0, "peak_in_flight": 0,
             "first_request_at": None}
    stats: dict = dict(fresh)
    times: list[tuple[float, float]] = []
    prompts: list[str] = []

    async def chat(request: web.Request) -> web.Response:
        arrived = time.time()  # before the body is read: the arrival
        if stats["first_request_at"] is None:
            stats["first_request_at"] = arrived
        body = await request.json()
        stats["requests"] += 1
        prompts.append(prompt_sha256(body))
        if max_in_flight is not None and stats["in_flight"] >= max_in_flight:
            stats["rate_limited"] += 1
            return web.json_response(
                {"error": {"message": "Rate limit reached: too many requests in flight",
                           "type": "requests", "code": "rate_limit_exceeded"}},
                status=429, headers={"Retry-After": f"{retry_after_s:g}"})
        stats["in_flight"] += 1
        stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
        try:
            await asyncio.sleep(delay_s)
        finally:
            stats["in_flight"] -= 1
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        p, c = len(prompt.split()), len(reply.split())
        times.append((arrived, time.time()))
        return web.json_response({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "bench"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
        })

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "bench", "object": "model"}]})

    async def get_stats(request: web.Request) -> web.Response:
        extra = {"times": times} if request.query.get("times") else {}
        if request.query.get("prompts"):
            extra["prompts"] = prompts
        return web.json_response({**stats, **extra})

    async def reset_stats(request: web.Request) -> web.Response:
        stats.update(fresh)
        times.clear()
        prompts.clear()
        return web.json_response(stats)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/stats", get_stats)
    app.router.add_post("/stats/reset", reset_stats)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--reply", default="[[-1]]")
    parser.add_argument("--max-in-flight", type=int, default=None,
                        help="answer 429 to a request that arrives while this many are in flight")
    parser.add_argument("--retry-after", type=float, default=1.0, help="Retry-After of a 429, seconds")
    args = parser.parse_args()
    web.run_app(make_app(args.delay, args.reply, args.max_in_flight, args.retry_after),
                host="127.0.0.1", port=args.port, print=None, access_log=None, backlog=1024)


if __name__ == "__main__":
    main()
