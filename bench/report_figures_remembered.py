"""`seqk report --compare`'s figures computed with every figure already remembered: what a report
asked after one more run was added pays for the runs that did not change (the whole report's memo
misses; each run's and block's figures hit, seqk.analysis.memo). The first call computes and
remembers the figures and each run's rows (seqk.analysis.inputs); later calls time the rest: the
runs' digests, reading every run's rows back (its chains key the figures), the figure files.

    python bench/report_figures_remembered.py DB --repeat 3    # the first line computes
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from typing import Any

from seqk import store
from seqk.analysis import inputs, report
from seqk.analysis.frontier import budget_plans
from seqk.stats import DEFAULT_N_BOOT, DEFAULT_SEED
from seqk.store import queries


def once(db: str) -> str:
    start = time.perf_counter()
    read: dict[str, float] = {}
    chains_of = inputs.chains_of

    def timed_read(con: Any, run_ids: list[str], keys: Any) -> Any:
        began = time.perf_counter()
        try:
            return chains_of(con, run_ids, keys)
        finally:
            read["s"] = time.perf_counter() - began

    inputs.chains_of = timed_read
    try:
        with store.connect(db, read_only=True) as con:
            chosen = queries.report_runs(con, run_ids=store.resolve_run_ids(con, []), benchmark=None, model=None)
            ids = [r["run_id"] for r in chosen]
            partners = {p["pass_run_id"] for p in queries.pair_choices(con, run_ids=ids)}
            ids = sorted(set(ids) | partners)
            seq_ids = [r["run_id"] for r in chosen if r["metric"] == "seq@k"]
            plans = budget_plans(con, seq_ids)
            every = sorted(set(ids) | {p["pass_run_id"] for p in plans})
            planned = time.perf_counter()
            found = report._computed(con, ids, every, seq_ids, plans, {}, compare=True, errors_as_failures=False,
                                     seed=DEFAULT_SEED, n_boot=DEFAULT_N_BOOT)
            done = time.perf_counter()
    finally:
        inputs.chains_of = chains_of
    return (f"{len(found.runs)} runs: choosing them {planned - start:.2f} s, the figures {done - planned:.2f} s "
            f"(of which the chains {read.get('s', 0.0):.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for i in range(args.repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--one", args.db], capture_output=True, text=True,
                              check=True)
        wall = time.perf_counter() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(f"run {i + 1}: {done.stdout.strip()}; process {wall:.2f} s wall, {cpu:.2f} s CPU, "
              f"peak {after.ru_maxrss / 1024:.0f} MB (largest so far)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(once(sys.argv[2]))
    else:
        main()
