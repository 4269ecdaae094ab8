"""Chains and the frontier, measured (issue 19's benchmark).

1. arcagi2 evaluation (120 tasks), seq@k, k=3, chains=4, cell_match, a wrong answer every time,
   against a loopback OpenAI-compatible server that answers after 200 ms: 1,440 attempts whose
   chains all run concurrently; wall time against the critical path, K x 200 ms = 0.6 s.
2. The `frontier` view over the ~1M-attempt synthetic database (bench/make_synthetic_db.py;
   target under 1 s), and run_curve on the same database for scale.

    python bench/bench_chains.py                    # both; builds the synthetic db (~1 min)
    python bench/bench_chains.py --db /tmp/s.duckdb  # reuse a synthetic db
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import start_server, timed_run, variant, warm_imports  # noqa: E402


def engine_bench(tmp: Path, repeat: int) -> None:
    proc, api_base = start_server(0.2)
    try:
        walls = []
        for rep in range(repeat):
            path = variant(tmp, f"chains{rep}", metric="seq@k", k=3, chains=4, feedback_mode="cell_match",
                           options={"split": "evaluation"}, retry={"max_retries": 0},
                           model="openai/bench", api_base=api_base, concurrency=120)
            wall, result = timed_run(path, tmp / f"chains{rep}.duckdb")
            assert result.attempts_written == 1440 and result.tasks_failed == 120, result
            walls.append(wall)
        median = statistics.median(walls)
        print(f"server 200 ms, 120 tasks x 4 chains x 3 seq attempts (1,440 attempts), concurrency 120: "
              f"median {median:.2f} s ({median / 0.6:.2f}x the 0.6 s critical path) over {repeat} fresh "
              f"runs, min {min(walls):.2f} s, max {max(walls):.2f} s")
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
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="seqk-bench-chains-"))
    warm_imports()
    if not args.skip_engine:
        engine_bench(tmp, args.repeat)
    frontier_bench(args.db or tmp / "synthetic.duckdb", args.repeat)


if __name__ == "__main__":
    main()
