"""A 100,000-row data set from a variant alone, measured (issue 31: under 2 s to load and register).

Writes a JSONL (and the same rows as CSV and Parquet) of 100,000 arithmetic questions, then, in a
fresh process each time (so no cache of this process helps), times what `seqk run` does before
its first call for a `benchmark: dataset` variant over it:

    load      read the file, hash it, turn every row into a task (runspec.load: the variant
              validated, the benchmark's load_tasks, the run's fingerprint with the data hash)
    register  open a new database and write the run and its 100,000 tasks (seqk.run.prepare)

and prints the median of the repeats, per format: wall seconds, CPU seconds (every thread, the
figure other jobs on the machine inflate least) and the process's peak memory. Imports are not
counted (`seqk run`'s start-up is bench_startup.py's).

    python bench/bench_dataset.py                  # 100,000 rows, 5 repeats per format
    python bench/bench_dataset.py --rows 20000 --repeat 3 --formats jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

CHILD = """
import json, resource, sys, time
from seqk.config import runspec
from seqk.run.prepare import prepare
t1, c1 = time.perf_counter(), time.process_time()
spec = runspec.load(sys.argv[1])
t2, c2 = time.perf_counter(), time.process_time()
prepared = prepare(spec, sys.argv[2])
t3, c3 = time.perf_counter(), time.process_time()
assert len(spec.tasks) == prepared.n_selected, (len(spec.tasks), prepared.n_selected)
print(json.dumps({"load": t2 - t1, "register": t3 - t2, "cpu": c3 - c1, "cpu_load": c2 - c1,
                  "cpu_register": c3 - c2, "tasks": len(spec.tasks),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def write_data(folder: Path, rows: int) -> dict[str, Path]:
    """The same rows as JSONL, CSV and Parquet."""
    data = [{"id": f"q{i:06d}", "question": f"What is {i} + {i % 97}?", "answer": i + i % 97}
            for i in range(1, rows + 1)]
    paths = {fmt: folder / f"questions.{fmt}" for fmt in ("jsonl", "csv", "parquet")}
    paths["jsonl"].write_text("".join(json.dumps(r) + "\n" for r in data))
    frame = pl.DataFrame(data)
    frame.write_csv(paths["csv"])
    frame.write_parquet(paths["parquet"])
    return paths


def variant(folder: Path, data: Path) -> Path:
    path = folder / f"{data.suffix[1:]}.yaml"
    path.write_text(json.dumps({"benchmark": "dataset", "metric": "seq@k", "k": 3, "model": "mock/echo",
                                "options": {"path": str(data), "id": "id", "input": "question",
                                            "target": "answer", "scorer": "numeric"}}))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--formats", nargs="+", choices=("jsonl", "csv", "parquet"),
                        default=["jsonl", "csv", "parquet"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        paths = write_data(folder, args.rows)
        print(f"{args.rows:,} rows written in {time.perf_counter() - started:.1f} s "
              f"(JSONL {paths['jsonl'].stat().st_size / 1e6:.1f} MB)")
        for fmt in args.formats:
            data = paths[fmt]
            runs = []
            for i in range(args.repeat):
                db = folder / f"{fmt}-{i}.duckdb"
                done = subprocess.run([sys.executable, "-c", CHILD, str(variant(folder, data)), str(db)],
                                      capture_output=True, text=True, check=True)
                runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            med = {key: statistics.median(r[key] for r in runs)
                   for key in ("load", "register", "cpu", "cpu_load", "cpu_register", "peak_mb")}
            total = statistics.median(r["load"] + r["register"] for r in runs)
            print(f"{fmt:8s} load {med['load']:.2f} s + register {med['register']:.2f} s = {total:.2f} s wall "
                  f"(median of {args.repeat}; min {min(r['load'] + r['register'] for r in runs):.2f} s), "
                  f"{med['cpu']:.2f} s CPU (load {med['cpu_load']:.2f} + register {med['cpu_register']:.2f}, "
                  f"all threads); "
                  f"{runs[0]['tasks']:,} tasks; peak {med['peak_mb']:.0f} MB",
                  flush=True)


if __name__ == "__main__":
    main()
