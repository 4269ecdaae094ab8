"""A 100,000-row data set from a variant alone, measured (issue 31: under 2 s to load and register).

Writes a JSONL (and the same rows as CSV and Parquet) of 100,000 arithmetic questions, then, in a
fresh process each time (so no cache of this process helps), times what `seqk run` does before
its first call for a `benchmark: dataset` variant over it, garbage collection paused as the
`seqk` command pauses it until the run is registered (seqk/__main__.py; `--collecting` keeps it
on, as in a notebook that calls runspec.load and prepare):

    load      read the file, hash it, turn every row into a task (runspec.load: the variant
              validated, the benchmark's load_tasks, the run's fingerprint with the data hash)
    register  open the database and register the run and its 100,000 tasks (seqk.run.prepare);
              a new database is a copy of the cached template (seqk.store.template), which the
              bench makes once, in a cache folder of its own, before the first measured process

twice per repeat: `new`, into a new database, then `resume`, the same variant again once the
database holds a failed attempt of every task (and a judge error that kept its output for one in
a hundred): the tasks compared by identity, every chain's history read, what is left asked of SQL.
It prints the median of the repeats per format and scenario: wall seconds, CPU seconds (every
thread: the figure other jobs on the machine inflate least) and the process's peak memory, and
the load average before and after. Imports are not counted (`seqk run`'s start-up is
bench_startup.py's).

With `--reference REV` (a git revision, e.g. main) the same is measured with that revision's code
too, and each format's tasks table as REV registered it is compared with this code's, row for
row, and resumed by this code: the figures before and after a change, and the proof that runs
registered before it resume after it.

    python bench/bench_dataset.py                  # 100,000 rows, 5 repeats per format
    python bench/bench_dataset.py --rows 20000 --repeat 3 --formats jsonl
    python bench/bench_dataset.py --repeat 3 --reference main
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import gc, sys
if sys.argv[3] == "paused":
    gc.disable()  # as the `seqk` console script starts (seqk/__main__.py), until the run is registered
import json, resource, time
from seqk.config import runspec
from seqk.run.prepare import prepare
t1, c1 = time.perf_counter(), time.process_time()
spec = runspec.load(sys.argv[1])
t2, c2 = time.perf_counter(), time.process_time()
prepared = prepare(spec, sys.argv[2])
t3, c3 = time.perf_counter(), time.process_time()
assert len(spec.tasks) == prepared.n_selected, (len(spec.tasks), prepared.n_selected)
print(json.dumps({"load": t2 - t1, "register": t3 - t2, "cpu": c3 - c1, "cpu_load": c2 - c1,
                  "cpu_register": c3 - c2, "tasks": len(spec.tasks), "action": prepared.action, "run_id": spec.run_id,
                  "pending": prepared.n_pending_attempts, "histories": len(prepared.history),
                  "kept": len(prepared.kept_outputs),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

SEED = """
import sys, uuid
from datetime import datetime
from seqk import store
from seqk.config import runspec
from seqk.records import AttemptRecord
spec = runspec.load(sys.argv[1])
at = datetime(2026, 1, 1)
def attempt(task, index, status, output, error=None):
    ok = status == "ok"
    return AttemptRecord(uuid.uuid4().hex, spec.run_id, 1, task.task_index, index, spec.k, status,
                         False if ok else None, 0.0 if ok else None, "the prompt", output, "" if ok else None,
                         None, "Your previous answer was not correct." if ok else None, error, at, at)
records = [attempt(t, 1, "ok", "ANSWER: -1") for t in spec.tasks]
records += [attempt(t, 2, "error", "ANSWER: 2", {"stage": "judge", "message": "the judge failed"})
            for t in spec.tasks[::100]]
with store.connect(sys.argv[2]) as con:
    store.append_attempts(con, records)
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


def checkout(rev: str, folder: Path) -> Path:
    """The code of git revision `rev`, unpacked under `folder` and importable from there."""
    where = folder / "reference"
    where.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    # seqk.sql is the repository's sql/ folder; an editable install maps it to this checkout's.
    (where / "seqk" / "sql").symlink_to(where / "sql")
    return where


WARM = """
import sys
from seqk import store
with store.connect(sys.argv[1]):
    pass
"""


def child(script: str, args: list[str], code: Path | None, cache: Path) -> dict[str, object]:
    # A cache folder of the bench's own, so that the template of a new database (seqk.store.template)
    # is the one of this code, made once before the first measured process: the cache a user's
    # machine keeps, not one that other checkouts sharing this machine replace.
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    if code is not None:
        env["PYTHONPATH"] = str(code)
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env,
                          cwd=code or ROOT)
    if done.returncode:
        raise SystemExit(f"a measured process failed:\n{done.stderr[-3000:]}")
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def tasks_table(db: Path, run_id: str) -> list[tuple[object, ...]]:
    """Every row of the run's tasks, by index."""
    from seqk import store

    with store.connect(db, read_only=True) as con:
        table = store.parquet_tables(con, [run_id], ["tasks"])["tasks"]
    columns = ["run_id", "task_index", "task_id", "prompt", "content_hash", "meta"]
    return list(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def report(label: str, runs: list[dict[str, object]]) -> None:
    med = {key: statistics.median(float(r[key]) for r in runs)  # type: ignore[arg-type]
           for key in ("load", "register", "cpu", "cpu_load", "cpu_register", "peak_mb")}
    total = statistics.median(float(r["load"]) + float(r["register"]) for r in runs)  # type: ignore[arg-type]
    low = min(float(r["load"]) + float(r["register"]) for r in runs)  # type: ignore[arg-type]
    first = runs[0]
    print(f"{label:24s} load {med['load']:.2f} s + register {med['register']:.2f} s = {total:.2f} s wall "
          f"(median of {len(runs)}; min {low:.2f} s), {med['cpu']:.2f} s CPU (load {med['cpu_load']:.2f} + "
          f"register {med['cpu_register']:.2f}, all threads); {first['tasks']:,} tasks, {first['action']}, "
          f"{first['pending']:,} attempts pending; peak {med['peak_mb']:.0f} MB", flush=True)


def measure(fmt: str, spec: Path, folder: Path, repeat: int, code: Path | None, tag: str,
            collection: str) -> tuple[Path, str]:
    """`repeat` new registrations and resumes with `code` (None: this checkout); the last
    database and the run's id."""
    new, resumed = [], []
    cache = folder / f"cache-{tag}"
    child(WARM, [str(folder / f"{tag}-warm.duckdb")], code, cache)
    db = folder / "none"
    for i in range(repeat):
        db = folder / f"{tag}-{fmt}-{i}.duckdb"
        new.append(child(CHILD, [str(spec), str(db), collection], code, cache))
        child(SEED, [str(spec), str(db)], None, cache)
        resumed.append(child(CHILD, [str(spec), str(db), collection], code, cache))
        assert resumed[-1]["action"] == "resume", resumed[-1]
    report(f"{fmt} {tag} new", new)
    report(f"{fmt} {tag} resume", resumed)
    return db, str(new[-1]["run_id"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--formats", nargs="+", choices=("jsonl", "csv", "parquet"),
                        default=["jsonl", "csv", "parquet"])
    parser.add_argument("--collecting", action="store_true", help="keep Python's garbage collection on, "
                        "as a notebook's runspec.load and prepare have it (`seqk run` pauses it)")
    parser.add_argument("--reference", metavar="REV", help="also measure git revision REV (e.g. main), "
                        "compare its tasks tables with this code's and resume them with this code")
    args = parser.parse_args()
    collection = "collecting" if args.collecting else "paused"
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        paths = write_data(folder, args.rows)
        print(f"{args.rows:,} rows written in {time.perf_counter() - started:.1f} s "
              f"(JSONL {paths['jsonl'].stat().st_size / 1e6:.1f} MB)")
        reference = checkout(args.reference, folder) if args.reference else None
        for fmt in args.formats:
            spec = variant(folder, paths[fmt])
            if reference is not None:
                before, run_id = measure(fmt, spec, folder, args.repeat, reference, args.reference, collection)
            after, run_id = measure(fmt, spec, folder, args.repeat, None, "this", collection)
            if reference is not None:
                same = tasks_table(before, run_id) == tasks_table(after, run_id)
                again = child(CHILD, [str(spec), str(before), collection], None, folder / "cache-this")
                print(f"{fmt} tasks table as {args.reference} registered it: "
                      f"{'the same, row for row' if same else 'DIFFERENT'}; resumed by this code: "
                      f"{again['action']}", flush=True)
                if not same or again["action"] != "resume":
                    raise SystemExit(1)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
