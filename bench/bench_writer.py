"""The writer alone, measured (issue 30: the CPU per attempt of bench/bench_chains.py's run).

The records of one chains run (arcagi2 evaluation, 120 tasks x 4 chains x seq@3, cell_match, 1,440
attempts with their calls, against the loopback server at 200 ms) are captured, then written again,
each replay into a new store, by seqk.run.writer.Writer at the pace they came (a share of them
every batch interval, over `--spread` seconds), with each way of holding the file: the process's
CPU seconds (all threads: DuckDB's work included) per attempt, and the time close() took (the last
batch, the remembered limits and the CHECKPOINT), which a run's end waits for.

    python bench/bench_writer.py                      # hold 0 (open per batch), 1 s, the whole run
    python bench/bench_writer.py --hold 0 1 --repeat 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import start_server, timed_run, variant, warm_imports  # noqa: E402


def capture(tmp: Path) -> list:
    """The records a chains run writes, in the order it put them."""
    from seqk.run import writer

    records: list = []
    put = writer.Writer.put

    def keep(self, record):  # type: ignore[no-untyped-def]
        records.append(record)
        put(self, record)

    proc, api_base = start_server(0.2)
    writer.Writer.put = keep  # type: ignore[method-assign]
    try:
        path = variant(tmp, "chains", metric="seq@k", k=3, chains=4, feedback_mode="cell_match",
                       options={"split": "evaluation"}, retry={"max_retries": 0},
                       model="openai/bench", api_base=api_base, concurrency=120)
        timed_run(path, tmp / "captured.duckdb")
    finally:
        writer.Writer.put = put  # type: ignore[method-assign]
        proc.terminate()
        proc.wait()
    return records


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def replay(records: list, db_path: Path, hold_s: float, spread_s: float) -> tuple[float, float]:
    """(CPU seconds, seconds close() took) of writing `records` into a new store at db_path."""
    from seqk import store
    from seqk.run.writer import Writer

    db = store.open(db_path)
    with db.connect():  # the store made before the clock starts, as a run's registration does
        pass
    w = Writer(db, interval_s=db.commit_interval_s, hold_s=hold_s)
    steps = max(1, round(spread_s / w.interval_s))
    per_step = -(-len(records) // steps)
    began = cpu_s()
    w.start()
    for start in range(0, len(records), per_step):
        for record in records[start:start + per_step]:
            w.put(record)
        await asyncio.sleep(w.interval_s)
    closing = time.perf_counter()
    await w.close()
    closed = time.perf_counter() - closing
    assert w.written == len(records), (w.written, len(records))
    return cpu_s() - began, closed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hold", type=float, nargs="+", default=[0.0, 1.0, 600.0],
                        help="Writer hold_s values to compare (0: an open per batch)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spread", type=float, default=3.0, help="seconds over which the records come")
    args = parser.parse_args()
    warm_imports()
    tmp = Path(tempfile.mkdtemp(prefix="seqk-bench-writer-"))
    records = capture(tmp)
    print(f"{len(records)} records captured; replayed over {args.spread:.1f} s, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    found: dict[float, list[tuple[float, float]]] = {h: [] for h in args.hold}
    for rep in range(args.repeat):
        for hold in args.hold:  # alternated, so each sees the same load
            found[hold].append(asyncio.run(replay(records, tmp / f"r{rep}-{hold}.duckdb", hold, args.spread)))
    for hold, runs in found.items():
        cpus = [c for c, _ in runs]
        closes = [c for _, c in runs]
        print(f"hold_s {hold:g}: CPU median {statistics.median(cpus):.2f} s "
              f"({statistics.median(cpus) / len(records) * 1000:.2f} ms per attempt; min {min(cpus):.2f}, "
              f"max {max(cpus):.2f}) over {len(runs)} replays; close() median {statistics.median(closes):.2f} s")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    os.environ.setdefault("SEQK_BENCH", "1")
    main()
