"""The HTTP client alone, measured (issue 30: the CPU per call of an OpenAI-compatible endpoint).

`--calls` calls of seqk.models.openai_http.chat_completion (the direct aiohttp path a role with an
`api_base` takes), each with a 9.4 KB prompt like an ARC task's, `--in-flight` at a time, against
bench/openai_server.py on loopback (200 ms a call, a server process of its own): this process's
CPU seconds per call, connections included (a fresh session each round, as a run's), with the
garbage collection thresholds of a run (seqk.run.gc_tuning) unless --gc-default.

    python bench/bench_client.py                      # 1,440 calls at 480 in flight, 5 rounds
    python bench/bench_client.py --in-flight 120 --rounds 3
    python bench/bench_client.py --gc-default         # Python's collection thresholds, not a run's
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import resource
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import start_server  # noqa: E402


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def arc_like_prompt(rng: random.Random) -> str:
    rows = [" ".join(str(rng.randrange(10)) for _ in range(20)) for _ in range(230)]
    return "Solve the puzzle. Input grid:\n" + "\n".join(rows)


async def one_round(api_base: str, calls: int, in_flight: int, prompts: list[str]) -> float:
    from seqk.models.openai_http import chat_completion, close_sessions
    from seqk.models.role import RoleSpec

    spec = RoleSpec(role="actor", model="openai/bench", api_base=api_base, temperature=0.0)
    gate = asyncio.Semaphore(in_flight)

    async def call(i: int) -> None:
        async with gate:
            done = await chat_completion(spec, prompts[i % len(prompts)], api_base)
            assert done.text

    began = cpu_s()
    await asyncio.gather(*(call(i) for i in range(calls)))
    await close_sessions()
    return cpu_s() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1440)
    parser.add_argument("--in-flight", type=int, default=480)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gc-default", action="store_true",
                        help="Python's collection thresholds, not a run's (seqk.run.gc_tuning)")
    args = parser.parse_args()
    import aiohttp  # noqa: F401  (imports outside the clock)

    import seqk.models.openai_http  # noqa: F401
    from seqk.run.gc_tuning import fewer_collections

    rng = random.Random(0)
    prompts = [arc_like_prompt(rng) for _ in range(120)]
    proc, api_base = start_server(0.2)
    try:
        asyncio.run(one_round(api_base, 50, 50, prompts))  # warm-up
        load = os.getloadavg()[0]
        with contextlib.nullcontext() if args.gc_default else fewer_collections():
            cpus = [asyncio.run(one_round(api_base, args.calls, args.in_flight, prompts)) for _ in range(args.rounds)]
    finally:
        proc.terminate()
        proc.wait()
    per_call = [c / args.calls * 1000 for c in cpus]
    print(f"{args.calls} calls at {args.in_flight} in flight, {len(prompts[0]) / 1000:.1f} KB prompts: CPU per call "
          f"median {statistics.median(per_call):.3f} ms (min {min(per_call):.3f}, max {max(per_call):.3f}) over "
          f"{args.rounds} rounds; load average {load:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
