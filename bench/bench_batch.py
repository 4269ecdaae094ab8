"""Batch mode against the loopback fake of OpenAI's batch API (tests/batchfakes.py): the same
seq@k variant synchronously and with `batch: true`, its rounds, wall time at the fake's
turnaround, and the cost of each.

The toy benchmark (tests/toybench.py, 30 tasks, K=3, an LLM critic) with a deterministic fake
model: task i is solved on attempt (i mod 3) + 1. Prices: $2 in / $8 out per million tokens.

    python bench/bench_batch.py --turnaround 2     # ~30 s
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from batchfakes import FakeOpenAI  # noqa: E402
from helpers import rows, write_variant  # noqa: E402
from toybench import ToyBench  # noqa: E402

from seqk import api  # noqa: E402
from seqk.benchmark import discovery  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turnaround", type=float, default=2.0, help="seconds the fake takes per batch")
    parser.add_argument("--tasks", type=int, default=30)
    args = parser.parse_args()
    discovery.registry()["toy"] = ToyBench()
    price = {"input": 2.0, "output": 8.0}
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(delay_s=args.turnaround) as fake:
        folder = Path(tmp)
        for name, batch in (("sync", False), ("batch", True)):
            path = write_variant(folder, f"{name}.yaml", benchmark="toy", metric="seq@k", k=3,
                                 feedback_mode="critic", model="openai/fake", api_base=fake.url + "/v1",
                                 temperature=0.0, actor={"price": price}, critic={"price": price},
                                 options={"n": args.tasks}, batch=batch, batch_poll_s=0.2)
            db = folder / f"{name}.duckdb"
            start = time.perf_counter()
            out = api.run_variant(path, db, export=False)
            wall = time.perf_counter() - start
            (cost, n_calls), = rows(db, "SELECT sum(cost_usd), count(*) FROM calls")
            batches = rows(db, "SELECT count(*), count(DISTINCT round) FROM batches")[0]
            print(f"{name:5}  attempts {out.result.attempts_written:3}  calls {n_calls:3}  "
                  f"batches {batches[0]} over {batches[1]} attempt rounds  wall {wall:5.1f} s  "
                  f"cost ${cost:.6f}")


if __name__ == "__main__":
    main()
