"""Adaptive concurrency against a rate-limited provider (issue 13's benchmark).

arcagi2 evaluation (120 tasks), pass@k k=3, concurrency 64, against a loopback
OpenAI-compatible server that answers after 200 ms and answers 429 (Retry-After: 1 s)
to any request that arrives while 8 are in flight. The run must complete with every
attempt valid; printed: the share of requests answered 429, the wall time against the
8-in-flight ideal (360 calls x 0.2 s / 8 = 9 s), and the model's limit at the end.
For reference, the same run with `max_concurrency: 8` (the limit known in advance).

    python bench/bench_ratelimit.py              # ~1 minute
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import urllib.request
from pathlib import Path

from bench_engine import start_server, variant, warm_imports

CALLS, DELAY_S, SERVER_LIMIT = 360, 0.2, 8
IDEAL_S = CALLS * DELAY_S / SERVER_LIMIT


def one_run(tmp: Path, name: str, actor: dict[str, object]) -> None:
    from seqk import store
    from seqk.config import spec as runspec
    from seqk.run import scheduler as engine

    proc, api_base = start_server(DELAY_S, "--max-in-flight", str(SERVER_LIMIT), "--retry-after", "1")
    try:
        path = variant(tmp, name, model="openai/bench", api_base=api_base, metric="pass@k", k=3,
                       concurrency=64, options={"split": "evaluation"}, actor=actor,
                       retry={"max_retries": 0})
        db = tmp / f"{name}.duckdb"
        spec = runspec.load(path)
        start = time.perf_counter()
        result = engine.run(spec, db)
        wall = time.perf_counter() - start
        stats = json.loads(urllib.request.urlopen(api_base.removesuffix("/v1") + "/stats").read())
    finally:
        proc.terminate()
        proc.wait()
    with store.connect(db, read_only=True) as con:
        valid, total = con.execute(
            "SELECT count(*) FILTER (WHERE status = 'ok'), count(*) FROM attempts").fetchone()
    assert valid == total == CALLS and result.attempts_errored == 0, (valid, total, result.error_kinds)
    [limit] = result.model_limits
    share = stats["rate_limited"] / stats["requests"]
    print(f"{name}: {valid}/{total} attempts valid; {stats['rate_limited']} of {stats['requests']} "
          f"requests answered 429 ({share:.1%}); server peak in flight {stats['peak_in_flight']}; "
          f"wall {wall:.1f} s = {wall / IDEAL_S:.2f}x the {IDEAL_S:.0f} s 8-in-flight ideal; "
          f"model limit at the end {limit.limit} of {limit.ceiling} (lowest {limit.lowest})")


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="seqk-bench-rl-"))
    warm_imports()
    one_run(tmp, "adaptive (ceiling 192)", {})
    one_run(tmp, "known limit (max_concurrency 8)", {"max_concurrency": 8})


if __name__ == "__main__":
    main()
