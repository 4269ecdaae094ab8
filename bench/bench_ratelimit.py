"""Adaptive concurrency against a rate-limited provider (issue 13's benchmark).

arcagi2 evaluation (120 tasks), pass@k k=3, concurrency 64, against a loopback
OpenAI-compatible server that answers after 200 ms and answers 429 (Retry-After: 1 s)
to any request that arrives while 8 are in flight. The run must complete with every
attempt valid; printed: the share of requests answered 429, the wall time against the
8-in-flight ideal (360 calls x 0.2 s / 8 = 9 s), and the model's limit at the end. Then the
same run again in the same store (another `tag:`): it starts at the limit the first remembered
(seqk.run.limits). For reference, the same run with `max_concurrency: 8` (the limit known in
advance).

    python bench/bench_ratelimit.py              # ~1 minute
    python bench/bench_ratelimit.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import time
import urllib.request
from pathlib import Path

from bench_engine import start_server, started, variant

CALLS, DELAY_S, SERVER_LIMIT = 360, 0.2, 8
IDEAL_S = CALLS * DELAY_S / SERVER_LIMIT


def one_run(tmp: Path, api_base: str, name: str, db: Path, actor: dict[str, object], tag: str) -> None:
    from seqk import store
    from seqk.config import runspec
    from seqk.run import engine

    urllib.request.urlopen(urllib.request.Request(api_base.removesuffix("/v1") + "/stats/reset",
                                                  method="POST")).read()
    path = variant(tmp, tag, model="openai/bench", api_base=api_base, metric="pass@k", k=3,
                   concurrency=64, options={"split": "evaluation"}, actor=actor,
                   retry={"max_retries": 0}, tag=tag)
    spec = runspec.load(path)
    start = time.perf_counter()
    result = engine.run(spec, db)
    wall = time.perf_counter() - start
    stats = json.loads(urllib.request.urlopen(api_base.removesuffix("/v1") + "/stats").read())
    with store.connect(db, read_only=True) as con:
        valid, total = con.execute(
            "SELECT count(*) FILTER (WHERE status = 'ok'), count(*) FROM attempts WHERE run_id = ?",
            [spec.run_id]).fetchone()
    assert valid == total == CALLS and result.attempts_errored == 0, (valid, total, result.error_kinds)
    [limit] = result.model_limits
    share = stats["rate_limited"] / stats["requests"]
    print(f"{name}: {valid}/{total} attempts valid; {stats['rate_limited']} of {stats['requests']} "
          f"requests answered 429 ({share:.1%}); server peak in flight {stats['peak_in_flight']}; "
          f"wall {wall:.1f} s = {wall / IDEAL_S:.2f}x the {IDEAL_S:.0f} s 8-in-flight ideal; "
          f"model limit started at {limit.start}, at the end {limit.limit} of {limit.ceiling} "
          f"(lowest {limit.lowest}); load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=1)
    args, tmp = started(parser, "seqk-bench-rl-")
    for rep in range(args.repeat):
        proc, api_base = start_server(DELAY_S, "--max-in-flight", str(SERVER_LIMIT), "--retry-after", "1")
        try:
            db = tmp / f"adaptive{rep}.duckdb"
            one_run(tmp, api_base, "adaptive (ceiling 192), a fresh store", db, {}, f"first{rep}")
            one_run(tmp, api_base, "adaptive, the same store again (its remembered limit)", db, {}, f"again{rep}")
            one_run(tmp, api_base, "known limit (max_concurrency 8)", tmp / f"known{rep}.duckdb",
                    {"max_concurrency": 8}, f"known{rep}")
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
