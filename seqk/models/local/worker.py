"""The embedded model's own process: one GGUF loaded by llama.cpp, served as an
OpenAI-compatible chat endpoint on loopback.

    python -m seqk.models.local.worker --model PATH [--threads N] [--n-ctx N]

seqk starts one (or more) of these per `local/...` model and talks to it through the
same HTTP path as any OpenAI-compatible server. Keeping llama.cpp out of seqk's process
means a crash of the library (a build for another CPU, out of memory) ends this process
only: seqk records the attempts in flight as errors and stops cleanly, and a runaway
generation can be stopped by killing it.

Protocol with the parent: once listening, the worker prints one line,
`SEQK_WORKER_READY {json}` (port, versions, the build's CPU features), on stdout. It
exits when its stdin closes, so it never outlives seqk, even after a SIGKILL.
It needs only llama-cpp-python and aiohttp.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

READY = "SEQK_WORKER_READY"
SAMPLING_PARAMS = ("temperature", "top_p", "max_tokens", "seed", "stop", "top_k", "min_p",
                   "repeat_penalty", "presence_penalty", "frequency_penalty")
"""Request fields passed on to llama.cpp; anything else in the body is ignored."""
DEFAULT_MAX_TOKENS = 512
"""Output cap when the request sets none; llama.cpp would otherwise run to the end of the context."""


def _exit_when_parent_goes() -> None:
    """Block on stdin; the parent holds its other end, so EOF means seqk is gone."""
    try:
        sys.stdin.buffer.read()
    finally:
        os._exit(0)


def _error(status: int, kind: str, message: str) -> Any:
    from aiohttp import web

    return web.json_response({"error": {"type": kind, "message": message}}, status=status)


def serve(model_path: str, threads: int, n_ctx: int, host: str = "127.0.0.1") -> None:
    """Load the model, listen on a free loopback port, announce it, serve until stdin closes."""
    import llama_cpp
    from aiohttp import web

    try:
        llama = llama_cpp.Llama(model_path=model_path, n_ctx=n_ctx, n_threads=threads, verbose=False)
    except ValueError as exc:
        # The parent shows the last line of stderr: make it the whole story.
        print(f"llama.cpp cannot load {model_path} ({exc}): is it a GGUF file?", file=sys.stderr)
        sys.exit(2)
    # llama.cpp is not thread-safe: one thread runs every generation, in arrival order.
    executor = ThreadPoolExecutor(1, thread_name_prefix="seqk-llama")

    def chat(messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
        # Forget the previous prompt's KV cache. Reusing a shared prefix is faster, but
        # llama.cpp does not promise bit-identical logits across different batch splits,
        # and then the same call could answer differently depending on what ran before.
        llama.reset()
        return dict(llama.create_chat_completion(messages=messages, **params))

    async def completions(request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
            messages = body["messages"]
        except (ValueError, KeyError, TypeError):
            return _error(400, "invalid_request_error", "the body must be JSON with 'messages'")
        params = {name: body[name] for name in SAMPLING_PARAMS if body.get(name) is not None}
        params.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(executor, chat, messages, params)
        except ValueError as exc:
            if "context window" in str(exc):
                return _error(400, "context_length_exceeded",
                              f"the prompt is too long for {os.path.basename(model_path)}: {exc}")
            return _error(400, "invalid_request_error", f"{type(exc).__name__}: {exc}")
        result.setdefault("id", f"chatcmpl-{uuid.uuid4().hex}")
        result.setdefault("created", int(time.time()))
        return web.json_response(result)

    info = {"pid": os.getpid(), "model": model_path, "threads": threads, "n_ctx": n_ctx,
            "llama_cpp_python": llama_cpp.__version__,
            "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip()}

    async def health(_: web.Request) -> web.StreamResponse:
        return web.json_response(info)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/health", health)

    async def main() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(f"{READY} {json.dumps({**info, 'port': port})}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def _no_core_file() -> None:
    """A crash writes no core file: with the model mapped in, it would be as large as the model
    (gigabytes), and seqk, waiting for the process to exit to say why it crashed, would wait for
    the dump too (seqk.models.local.workers.Worker.exit_message)."""
    try:
        import resource
    except ImportError:  # not POSIX
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, hard))


def main(argv: list[str] | None = None) -> None:
    """Entry point of `python -m seqk.models.local.worker`."""
    parser = argparse.ArgumentParser(prog="python -m seqk.models.local.worker", description=__doc__)
    parser.add_argument("--model", required=True, help="path of the GGUF file")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    parser.add_argument("--n-ctx", type=int, default=8192, help="context window in tokens")
    args = parser.parse_args(argv)
    _no_core_file()
    threading.Thread(target=_exit_when_parent_goes, daemon=True).start()
    serve(args.model, args.threads, args.n_ctx)


if __name__ == "__main__":
    main()
