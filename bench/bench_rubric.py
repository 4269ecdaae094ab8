"""Rubric judging speed, measured (issue 11's benchmark).

HealthBench grades an answer with one judge call per rubric item. Those calls run at once,
so an attempt with 12 items should take about one judge latency, not twelve.

1. One HealthBench attempt with 12 rubric items, actor and judge on loopback
   OpenAI-compatible servers that answer after 200 ms: its duration (ideal 0.4 s = one actor
   call then one round of judge calls; made one by one, the judge calls alone take 2.4 s).
2. 120 such tasks, seq@k k=3, feedback binary, every answer failing (so 360 attempts and
   4,320 judge calls): wall time, attempts/s, and the median attempt duration
   (critical path 3 x 0.4 s = 1.2 s).

    python bench/bench_rubric.py                       # ~15 s
    python bench/bench_rubric.py --judge-concurrency 360
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

import duckdb
import yaml
from bench_engine import start_server, timed_run, warm_imports

HERE = Path(__file__).resolve().parent
JUDGE_REPLY = '{"explanation": "The response does not do this.", "criteria_met": false}'


def write_data(path: Path, n_tasks: int, n_items: int) -> None:
    """Synthetic HealthBench records in the official schema, `n_items` rubric items each."""
    with path.open("w") as f:
        for i in range(n_tasks):
            f.write(json.dumps({
                "prompt_id": f"bench-{i:04d}", "example_tags": ["theme:hedging"],
                "prompt": [{"role": "user", "content": f"FAKE question {i}: is the invented remedy safe?"}],
                "rubrics": [{"criterion": f"Mentions consideration {j} of question {i}.", "points": 5,
                             "tags": ["axis:completeness"]} for j in range(n_items)]}) + "\n")


def variant(folder: Path, name: str, **keys) -> Path:
    path = folder / "variants" / "healthbench" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(keys))
    return path


def attempt_durations(db: Path) -> list[float]:
    with duckdb.connect(str(db), read_only=True) as con:
        return [r[0] for r in con.execute(
            "SELECT epoch(finished_at) - epoch(started_at) FROM attempts").fetchall()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.2, help="server latency, seconds")
    parser.add_argument("--judge-concurrency", type=int, default=120 * 12,
                        help="judge calls in flight at once (the judge role's max_concurrency)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="seqk-bench-rubric-"))
    warm_imports()
    data = tmp / "healthbench.jsonl"
    write_data(data, 120, 12)
    actor, actor_base = start_server(args.delay, "--reply", "Please see a clinician.")
    judge, judge_base = start_server(args.delay, "--reply", JUDGE_REPLY)
    try:
        keys = dict(metric="seq@k", k=3, feedback_mode="binary", model="openai/bench-actor",
                    judge_model="openai/bench-judge", actor={"api_base": actor_base},
                    judge={"api_base": judge_base, "max_concurrency": args.judge_concurrency},
                    options={"data_path": str(data), "themes": []}, retry={"max_retries": 0})
        one = variant(tmp, "one", task_indices=[1], **(keys | {"metric": "pass@k", "k": 1}))
        wall, result = timed_run(one, tmp / "one.duckdb")
        assert result.attempts_written == 1 and result.tasks_failed == 1, result
        (duration,) = attempt_durations(tmp / "one.duckdb")
        print(f"one attempt, 12 rubric items, servers {args.delay * 1000:.0f} ms: attempt {duration:.2f} s "
              f"(ideal {2 * args.delay:.2f} s = actor + one judge round; sequential judging would be "
              f"{args.delay * 13:.2f} s); run wall {wall:.2f} s")

        full = variant(tmp, "full", concurrency=120, **keys)
        wall, result = timed_run(full, tmp / "full.duckdb")
        assert result.attempts_written == 360 and result.tasks_failed == 120, result
        durations = attempt_durations(tmp / "full.duckdb")
        critical = 3 * 2 * args.delay
        print(f"120 tasks x 12 items, seq@k k=3, concurrency 120, judge max_concurrency "
              f"{args.judge_concurrency}: {result.attempts_written} attempts, 4320 judge calls in "
              f"{wall:.2f} s = {result.attempts_written / wall:.0f} attempts/s "
              f"({wall / critical:.2f}x the {critical:.1f} s critical path); median attempt "
              f"{statistics.median(durations):.2f} s, max {max(durations):.2f} s")
    finally:
        for proc in (actor, judge):
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
