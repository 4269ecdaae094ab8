"""Time the report's estimators alone, over rows read from the database once: the curves' and
lifts' bootstraps with the exact power (`metrics.compute` without its queries) and the
equal-budget blocks (`equal_budget_blocks`), with a digest of their output to compare checkouts.

    python bench/bench_estimators.py /tmp/synthetic-1m.duckdb            # rows cached beside it
    /work/venv/bin/python bench/bench_estimators.py /tmp/synthetic-1m.duckdb   # another checkout

The rows (chain_rows, run_curves, report_runs, pair_choices, spend_by_role, the block plans) are
pickled to DB.rows.pickle on the first run; each part then runs in this process and prints its
CPU (all threads) and wall seconds, the load average, and the SHA-1 of its JSON: equal digests
from two checkouts mean the same figures, bit for bit.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import json
import os
import pickle
import time
from pathlib import Path
from typing import Any


def read_rows(db: Path) -> dict[str, Any]:
    """Everything the estimators read from the database, as the report reads it."""
    from seqk import store
    from seqk.analysis.frontier import budget_plans
    from seqk.analysis.survival import read_chains
    from seqk.store import queries

    with store.connect(db, read_only=True) as con:
        runs = queries.report_runs(con, run_ids=store.resolve_run_ids(con, []), benchmark=None, model=None)
        ids = [r["run_id"] for r in runs]
        seq_ids = [r["run_id"] for r in runs if r["metric"] == "seq@k"]
        return {"ids": ids, "report_runs": runs, "plans": budget_plans(con, seq_ids),
                "chains": read_chains(con, ids), "spend": queries.spend_by_role(con, run_ids=ids),
                "choices": queries.pair_choices(con, run_ids=seq_ids),
                "curves": list(queries.run_curves(con, errors_as_failures=False, run_ids=ids))}


def main() -> None:
    """Read (or load) the rows, then time each part."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--rows", type=Path, help="the pickled rows (default: DB.rows.pickle)")
    args = parser.parse_args()
    path = args.rows or args.db.with_suffix(".rows.pickle")
    if not path.exists():
        start = time.perf_counter()
        path.write_bytes(pickle.dumps(read_rows(args.db)))
        print(f"read the rows into {path} in {time.perf_counter() - start:.1f} s")
    rows = pickle.loads(path.read_bytes())
    for run in rows["chains"].values():  # rows pickled by a checkout whose keys were objects
        object.__setattr__(run, "keys", run.keys.astype(str))

    from seqk.analysis import metrics
    from seqk.analysis.frontier import equal_budget_blocks

    class Rows:
        """The queries metrics.compute makes, answered from the rows."""

        def report_runs(self, con: Any, **_: Any) -> Any:
            return rows["report_runs"]

        def run_curves(self, con: Any, **_: Any) -> Any:
            return iter(rows["curves"])

        def pair_choices(self, con: Any, **_: Any) -> Any:
            return rows["choices"]

        def spend_by_role(self, con: Any, **_: Any) -> Any:
            return copy.deepcopy(rows["spend"])

    metrics.queries = Rows()  # type: ignore[assignment]

    def estimates() -> list[Any]:
        return metrics.compute(None, rows["ids"], chains=copy.deepcopy(rows["chains"]))

    def blocks() -> list[Any]:
        found, compute = equal_budget_blocks(rows["plans"], copy.deepcopy(rows["chains"]), rows["spend"],
                                             errors_as_failures=False, seed=20260101, n_boot=2000)
        compute()
        return found

    for name, part in (("curves, lifts, framings, power", estimates), ("equal-budget blocks", blocks)):
        cpu, wall = time.process_time(), time.perf_counter()
        found = part()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        digest = hashlib.sha1(json.dumps([dataclasses.asdict(r) for r in found], default=str).encode()).hexdigest()
        print(f"{name:<32} CPU {cpu:6.2f} s · wall {wall:6.2f} s · load {os.getloadavg()[0]:.1f} · "
              f"sha1 {digest[:12]}", flush=True)


if __name__ == "__main__":
    main()
