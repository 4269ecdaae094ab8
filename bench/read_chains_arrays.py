"""read_chains' conversion of chain_rows' Arrow table into each run's arrays, timed alone: the
SQL runs once, then the conversion three times over the same table (the least printed).

    python bench/read_chains_arrays.py DB
"""

from __future__ import annotations

import sys
import time

from seqk import store
from seqk.analysis import survival
from seqk.store import queries


def main() -> None:
    with store.connect(sys.argv[1], read_only=True) as con:
        ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        table = queries.chain_rows(con, run_ids=ids)
        read = queries.chain_rows
        queries.chain_rows = lambda con, run_ids: table
        try:
            times = []
            for _ in range(3):
                began = time.perf_counter()
                survival.read_chains(con, ids)
                times.append(time.perf_counter() - began)
        finally:
            queries.chain_rows = read
    print(f"{table.num_rows:,} chain rows of {len(ids)} runs: to arrays, least of 3: {min(times):.3f} s")


if __name__ == "__main__":
    main()
