"""Time `seqk compare` and `report --compare --by` end to end over the million-attempt synthetic
database (a fresh interpreter each time), and the viewer's compare page in process.

    python bench/bench_compare.py                 # builds /tmp/seqk-bench/synthetic-1m.duckdb if missing
    python bench/bench_compare.py --repeat 5

Targets: `seqk compare` of two runs of 2,850 tasks and K = 10 in the 1M database under 3 s, as
`seqk report --compare` (it reads the same per-task outcomes); `report --compare --by feedback`
(60 pairs, 10 rankings) under 15 s; the compare page under 3 s. Each figure is the median of
--repeat runs (min in brackets), with the load average it was measured at.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_report import bench  # noqa: E402
from make_synthetic_db import build  # noqa: E402

A = "synth-default/seqk/synth__model-00/deterministic/socratic.synth__critic"
B = "synth-default/seqk/synth__model-00/deterministic/binary"


def page_seconds(db: Path, repeat: int) -> list[float]:
    """Wall seconds of GET /compare/<A>/<B>, rendered afresh each time (no page cache)."""
    from starlette.testclient import TestClient

    from seqk.analysis.compare import view_path
    from seqk.view.app import create_app

    client = TestClient(create_app(db, cache=False))
    found = []
    for _ in range(repeat):
        start = time.perf_counter()
        answer = client.get(view_path(A, B))
        found.append(time.perf_counter() - start)
        assert answer.status_code == 200, answer.text[:500]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/seqk-bench"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    big = args.dir / "synthetic-1m.duckdb"
    if not big.exists():
        counts = build(big)
        print(f"built {big}: " + ", ".join(f"{n:,} {t}" for t, n in counts.items()))
    seqk = [sys.executable, "-m", "seqk"] if not shutil.which("seqk") else ["seqk"]
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    results = [
        bench("seqk compare A B (1M attempts, K = 10)", [*seqk, "compare", A, B, "--db", str(big)],
              args.repeat, 3.0, 1024),
        bench("seqk report --compare --by feedback (60 pairs)",
              [*seqk, "report", "--compare", "--by", "feedback", "--db", str(big)], args.repeat, 15.0, 1024),
    ]
    walls = page_seconds(big, args.repeat)
    wall = statistics.median(walls)
    print(f"{'ok  ' if wall < 3 else 'SLOW'} {'the compare page (in process)':<44} wall {wall:5.2f} s "
          f"[min {min(walls):.2f}] (< 3)")
    print(f"machine: load average {os.getloadavg()[0]:.2f} at the end")
    sys.exit(0 if all(results) and wall < 3 else 1)


if __name__ == "__main__":
    main()
