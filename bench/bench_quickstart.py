"""The quickstart on the embedded model, measured (issue 5's benchmark).

Runs variants/quickstart/passk.yaml then seqk.yaml, as they ship, against a fresh
temporary database, and prints for each and for both together:

- generation tokens/s: output tokens / the summed latency of the model calls (one
  worker serves one call at a time, so these intervals never overlap); prompt
  evaluation and the loopback HTTP hop included;
- end-to-end output tokens/s and attempts per minute: over the run's wall time,
  which adds the worker's start, the engine and the database;
- peak memory (ru_maxrss) of this process and of the model's worker process.

    python bench/bench_quickstart.py                 # ~3 min on 2 idle cores
    python bench/bench_quickstart.py --max-tasks 4   # a quicker look

The figures depend on how busy the cores are; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seqk.config import runspec  # noqa: E402
from seqk.models.local import workers  # noqa: E402
from seqk.run import engine  # noqa: E402


def run_variant(path: Path, db: Path, max_tasks: int | None) -> dict[str, float]:
    """Run one variant; its figures."""
    overrides = {"max_tasks": max_tasks} if max_tasks else {}
    spec = runspec.load(path, overrides=overrides)
    start = time.perf_counter()
    result = engine.run(spec, db)
    wall = time.perf_counter() - start
    with duckdb.connect(str(db), read_only=True) as con:
        calls, tokens_in, tokens_out, busy_s = con.execute(
            "SELECT count(*), sum(input_tokens), sum(output_tokens), sum(latency_s) FROM calls "
            "WHERE run_id = ?", [spec.run_id]).fetchone()
        passed, tasks = con.execute(
            "SELECT count(*) FILTER (WHERE success), count(*) FROM ("
            " SELECT task_index, bool_or(success) AS success FROM attempts"
            " WHERE run_id = ? GROUP BY task_index)", [spec.run_id]).fetchone()
    return {"tasks": tasks, "passed": passed, "attempts": result.attempts_written,
            "calls": calls, "input_tokens": tokens_in or 0, "output_tokens": tokens_out or 0,
            "generation_s": busy_s or 0.0, "wall_s": wall}


def report(name: str, f: dict[str, float]) -> None:
    """Print one line of figures."""
    print(f"{name:<10} tasks {f['passed']:.0f}/{f['tasks']:.0f} passed | "
          f"{f['attempts']:.0f} attempts, {f['calls']:.0f} calls | "
          f"tokens in/out {f['input_tokens']:.0f}/{f['output_tokens']:.0f} | "
          f"generation {f['output_tokens'] / f['generation_s']:.1f} tok/s "
          f"({f['generation_s']:.1f} s) | end to end {f['output_tokens'] / f['wall_s']:.1f} tok/s, "
          f"{60 * f['attempts'] / f['wall_s']:.1f} attempts/min ({f['wall_s']:.1f} s)")


def main() -> None:
    """Run both quickstart variants and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tasks", type=int, default=None,
                        help="Run only the first N tasks (default: all).")
    args = parser.parse_args()
    print(f"cores: {len(os.sched_getaffinity(0))}, load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "quickstart.duckdb"
        for name in ("passk", "seqk"):
            figures[name] = run_variant(ROOT / "variants" / "quickstart" / f"{name}.yaml", db,
                                        args.max_tasks)
    both = {key: figures["passk"][key] + figures["seqk"][key] for key in figures["passk"]}
    for name, f in [*figures.items(), ("both", both)]:
        report(name, f)
    workers.close_all()  # so the worker counts among the finished children
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    worker_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak memory (ru_maxrss): seqk {peak_mb:.0f} MiB, model worker {worker_mb:.0f} MiB; "
          f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
