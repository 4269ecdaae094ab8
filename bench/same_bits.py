"""Whether the SQL's figures keep their bits from one read to the next, and what that costs.

DuckDB adds doubles in the order its threads meet the rows; sql/views.sql's exact_sum and exact_avg
make every mean and dollar sum independent of that order. This reads the named queries below in
fresh processes with 1, 2 and 4 DuckDB threads, twice each, and counts the floats that differ from
the first one-thread read (0 expected), then times each query (best of 3 in one process).

    python bench/same_bits.py /tmp/s1m.duckdb            # bench/make_synthetic_db.py's database
    python bench/same_bits.py /tmp/s10m.duckdb --time-only

Compare two checkouts by running it with each on PYTHONPATH (from outside the repository).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time


def _queries(con):
    from seqk.store import queries
    return {
        "run_curves": lambda: queries.run_curves(con, errors_as_failures=False, run_ids=None),
        "run_curves_failures": lambda: queries.run_curves(con, errors_as_failures=True, run_ids=None),
        "frontier_rows": lambda: queries.frontier_rows(con, errors_as_failures=False, run_ids=None),
        "view_runs": lambda: queries.view_runs(con, run_ids=None),
        "run_status": lambda: queries.run_status(con, run_ids=None),
    }


def _floats(rows) -> list[str]:
    out = []
    for row in rows:
        for key, value in (row.items() if isinstance(row, dict) else enumerate(row)):
            if isinstance(value, float):
                out.append(f"{key}={value.hex()}")
            elif isinstance(value, list):  # view_runs' curves
                out.append(f"{key}={json.dumps(value, default=str)}")
    return out


def read(db: str, threads: int) -> None:
    """One read of every query, its floats as hex on stdout (a child process)."""
    from seqk import store
    with store.connect(db, read_only=True) as con:
        con.execute(f"SET threads = {threads}")
        json.dump({name: _floats(run()) for name, run in _queries(con).items()}, sys.stdout)


def timed(db: str) -> None:
    from seqk import store
    with store.connect(db, read_only=True) as con:
        for name, run in _queries(con).items():
            walls, cpus = [], []
            for _ in range(3):
                t0, c0 = time.perf_counter(), time.process_time()
                run()
                walls.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
            print(f"{name:20s} {min(walls):6.3f} s wall  {min(cpus):6.3f} s CPU (best of 3)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--time-only", action="store_true")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        read(args.db, args.child)
        return
    if not args.time_only:
        first = None
        for attempt in (1, 2):
            for threads in (1, 2, 4):
                got = json.loads(subprocess.run(
                    [sys.executable, __file__, args.db, "--child", str(threads)],
                    check=True, capture_output=True, text=True).stdout)
                if first is None:
                    first = got
                n = sum(len(v) for v in first.values())
                differ = {name: sum(a != b for a, b in zip(first[name], got[name], strict=True))
                          for name in first}
                print(f"read {attempt}, {threads} thread(s): {sum(differ.values())} of {n} floats differ "
                      f"from the first one-thread read {differ}")
    timed(args.db)


if __name__ == "__main__":
    main()
