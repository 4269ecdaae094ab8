"""What a budget costs on Ray: the time of one attempt's round of calls to the run's ledger (a Ray
actor): reserve, check and pay one model call, release, as a worker makes them.

    python bench/bench_ray_budget.py            # a local Ray (2 CPUs, loopback), 300 rounds
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import yaml


def spec_for(folder: Path):
    from seqk.config import runspec

    path = folder / "variants" / "arcagi2" / "b.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(dict(metric="seq@k", k=3, feedback_mode="cell_match", model="mock/wrong",
                                        max_tokens=64, actor={"price": {"input": 1.0, "output": 1.0}},
                                        budget_usd=1000.0, options={"split": "evaluation"}, max_tasks=4)))
    return runspec.load(path)


async def rounds(ledger, n: int) -> list[float]:
    from seqk.run.ray_budget import JOB, RemoteGate

    gate = RemoteGate(ledger, None)
    JOB.set("bench")
    times = []
    for _ in range(n):
        start = time.perf_counter()
        ticket = await gate.admit({"actor": 0.001})
        assert ticket is not None
        await gate.take(ticket, "actor", 0.001)
        await gate.paid(ticket, "actor", 0.001, 0.0005)
        gate.settle(ticket, [])
        await gate._drain()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    import ray

    from seqk.run.ray_budget import BudgetLedger

    spec = spec_for(Path(tempfile.mkdtemp(prefix="seqk-bench-")))
    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False)
    try:
        ledger = ray.remote(BudgetLedger).options(num_cpus=0).remote(spec, {"run": 1000.0}, {})
        times = asyncio.run(rounds(ledger, args.rounds))
    finally:
        ray.shutdown()
    ms = sorted(t * 1000 for t in times[10:])  # the first rounds start the actor
    print(f"one attempt's ledger round (reserve, check + pay one call, release) over {len(ms)} rounds: "
          f"median {statistics.median(ms):.2f} ms, p90 {ms[int(len(ms) * 0.9)]:.2f} ms")


if __name__ == "__main__":
    main()
