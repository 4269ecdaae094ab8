"""Chains and the frontier, measured (issue 19's benchmark).

1. arcagi2 evaluation (120 tasks), seq@k, k=3, chains=4, cell_match, a wrong answer every time,
   against a loopback OpenAI-compatible server that answers after 200 ms: 1,440 attempts whose
   chains all run concurrently; wall time against the critical path, K x 200 ms = 0.6 s, into a
   fresh store and into a store where a run against the endpoint ran before, alternated.
2. The `frontier` view over the ~1M-attempt synthetic database (bench/make_synthetic_db.py;
   target under 1 s), and run_curve on the same database for scale.

    python bench/bench_chains.py                    # both; builds the synthetic db (~1 min)
    python bench/bench_chains.py --db /tmp/s.duckdb  # reuse a synthetic db
    python bench/bench_chains.py --skip-frontier     # the engine run only
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import resource
import statistics
import sys
import time
import urllib.request
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import copy_of, start_server, started, timed_run, variant, warm_store  # noqa: E402


def ideal_wall(n_chains: int, k: int, latency: float, ceiling: int, start: int) -> float:
    """The wall time of n_chains chains of k calls each, `latency` per call, with no time spent
    anywhere but in calls, under the pool's limit on calls in flight (seqk.models.limiter):
    `start` at first, one more per success until `ceiling`, waiting calls served first come
    first served. An event simulation of that rule, not of the code."""
    limit, in_flight, now = min(start, ceiling), 0, 0.0
    waiting = deque((chain, 1) for chain in range(n_chains))
    running: list[tuple[float, int, int]] = []
    while waiting or running:
        while waiting and in_flight < limit:
            chain, attempt = waiting.popleft()
            heapq.heappush(running, (now + latency, chain, attempt))
            in_flight += 1
        now, chain, attempt = heapq.heappop(running)
        in_flight -= 1
        limit = min(ceiling, limit + 1)
        if attempt < k:
            waiting.append((chain, attempt + 1))
    return now


def _cpu_s(pid: int | None = None) -> float:
    """CPU seconds (user + system) used so far by this process, or by process `pid`."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_times(api_base: str) -> list[tuple[float, float]]:
    url = api_base.removesuffix("/v1") + "/stats?times=1"
    return [tuple(t) for t in json.loads(urllib.request.urlopen(url, timeout=10).read())["times"]]


def _peak(times: list[tuple[float, float]]) -> int:
    """The most requests in the server at once, from their (arrival, reply) times."""
    peak = now = 0
    for _, step in sorted([(a, 1) for a, _ in times] + [(r, -1) for _, r in times], key=lambda e: (e[0], e[1])):
        now += step
        peak = max(peak, now)
    return peak


def engine_bench(tmp: Path, repeat: int) -> None:
    from seqk.models.limiter import DEFAULT_START

    latency, k, chains, tasks, concurrency = 0.2, 3, 4, 120, 120
    ceiling = max(concurrency * max(k, chains), 16)  # the pool's default, seqk/run/engine.py
    critical = k * latency
    waves = -(-tasks * chains // ceiling) * critical
    slow = ideal_wall(tasks * chains, k, latency, ceiling, DEFAULT_START)
    print(f"ideal for {tasks} tasks x {chains} chains x {k} seq attempts at {latency * 1000:.0f} ms a call: "
          f"critical path K x latency = {critical:.2f} s; with at most {ceiling} calls in flight "
          f"(concurrency {concurrency} x max(k, chains)) {waves:.2f} s; with the pool's slow start "
          f"({DEFAULT_START} calls in flight, one more per success) {slow:.2f} s")
    proc, api_base = start_server(latency)
    try:
        warm = warm_store(tmp, api_base, tasks, k=chains)  # 480 calls in flight at most, as the chains
        seen = len(_server_times(api_base))
        walls: dict[str, list[float]] = {"a fresh store": [], "a store that ran before": []}
        for rep in range(repeat):
            path = variant(tmp, f"chains{rep}", metric="seq@k", k=k, chains=chains, feedback_mode="cell_match",
                           options={"split": "evaluation"}, retry={"max_retries": 0},
                           model="openai/bench", api_base=api_base, concurrency=concurrency)
            for kind, db in (("a fresh store", tmp / f"chains{rep}.duckdb"),
                             ("a store that ran before", copy_of(warm, tmp / f"chains{rep}-ran.duckdb"))):
                load = os.getloadavg()[0]
                cpu, server_cpu = _cpu_s(), _cpu_s(proc.pid)
                began = time.time()
                wall, result = timed_run(path, db)
                ended = time.time()
                cpu, server_cpu = _cpu_s() - cpu, _cpu_s(proc.pid) - server_cpu
                assert result.attempts_written == tasks * chains * k and result.tasks_failed == tasks, result
                walls[kind].append(wall)
                times = _server_times(api_base)[seen:]
                seen += len(times)
                first, last = min(t[0] for t in times), max(t[1] for t in times)
                in_server = statistics.mean(t[1] - t[0] for t in times)
                peak = _peak(times)
                print(f"  run {rep + 1}, {kind}: {wall:.2f} s at load average {load:.1f} on {os.cpu_count()} "
                      f"cores: {first - began:.2f} s before the first request, {last - first:.2f} s from it to "
                      f"the last reply, {ended - last:.2f} s after; at most {peak} requests in the server at "
                      f"once, {in_server * 1000:.0f} ms each on average; limit started at "
                      f"{result.model_limits[0].start}; CPU: the harness {cpu:.2f} s "
                      f"({cpu / len(times) * 1000:.2f} ms per attempt), the server {server_cpu:.2f} s")
        for kind, found in walls.items():
            median = statistics.median(found)
            print(f"server {latency * 1000:.0f} ms, {tasks} tasks x {chains} chains x {k} seq attempts "
                  f"({tasks * chains * k:,} attempts), concurrency {concurrency}, {kind}: median {median:.2f} s "
                  f"({median - critical:+.2f} s over the critical path, {median / slow:.2f}x the slow-start "
                  f"ideal) over {repeat} runs, min {min(found):.2f} s, max {max(found):.2f} s")
    finally:
        proc.terminate()
        proc.wait()


def frontier_bench(db: Path, repeat: int) -> None:
    from seqk import store
    from seqk.store import queries

    if not db.exists():
        from make_synthetic_db import build

        counts = build(db)
        print(f"built {db}: {counts}")
    with store.connect(db, read_only=True) as con:
        n_attempts = con.execute("SELECT count(*) FROM attempts").fetchone()[0]
        for name, call in (
                ("frontier (all runs)", lambda: queries.frontier_rows(con, errors_as_failures=False,
                                                                      run_ids=None)),
                ("run_curve (all runs)", lambda: queries.run_curves(con, errors_as_failures=False,
                                                                    run_ids=None))):
            times, rows = [], []
            for _ in range(repeat):
                start = time.perf_counter()
                rows = call()
                times.append(time.perf_counter() - start)
            print(f"{name} over {n_attempts:,} attempts: median {statistics.median(times):.3f} s over "
                  f"{repeat} runs (min {min(times):.3f}, max {max(times):.3f}), {len(rows)} rows")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, help="synthetic database to reuse (built when missing)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-engine", action="store_true")
    parser.add_argument("--skip-frontier", action="store_true")
    args, tmp = started(parser, "seqk-bench-chains-")
    if not args.skip_engine:
        engine_bench(tmp, args.repeat)
    if not args.skip_frontier:
        frontier_bench(args.db or tmp / "synthetic.duckdb", args.repeat)


if __name__ == "__main__":
    main()
