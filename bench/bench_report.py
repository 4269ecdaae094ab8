"""Time `seqk report` end to end, as a user runs it (a fresh interpreter each time).

    python bench/bench_report.py                  # builds /tmp/seqk-bench/*.duckdb if missing
    python bench/bench_report.py --rebuild --repeat 5

Targets (issue 3): `seqk report --compare` over 1,000,000 attempts under 3 s wall and
1 GB peak memory; `seqk report` for one small run under 1 s, interpreter start included.
Wall time and peak RSS come from /usr/bin/time (GNU time) when present, else from
resource.getrusage. Each figure is the median of --repeat runs (min in brackets).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from make_synthetic_db import build  # noqa: E402

GNU_TIME = shutil.which("time") if Path("/usr/bin/time").exists() else None
SMALL_RUN = "synth-default/seqk/synth__model-00/deterministic/binary"


def measure(command: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one run of `command`, which must succeed."""
    if GNU_TIME:
        done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
        wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
        assert wall, done.stderr
        hours, minutes, seconds = wall.groups()
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        assert rss, done.stderr
        return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds), int(rss[1]) / 1024
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    wall = time.perf_counter() - start
    # ru_maxrss of children is the largest so far: an upper bound for this command.
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def bench(name: str, command: list[str], repeat: int, wall_target: float,
          memory_target_mb: float | None = None) -> bool:
    """Run, print one line of figures, and say whether the targets hold (on the median)."""
    figures = [measure(command) for _ in range(repeat)]
    walls = [w for w, _ in figures]
    peak = max(m for _, m in figures)
    wall = statistics.median(walls)
    ok = wall < wall_target and (memory_target_mb is None or peak < memory_target_mb)
    memory = f"peak {peak:6.0f} MB" + (f" (< {memory_target_mb:.0f})" if memory_target_mb else "")
    print(f"{'ok  ' if ok else 'SLOW'} {name:<44} wall {wall:5.2f} s [min {min(walls):.2f}] "
          f"(< {wall_target:g}) · {memory}")
    print(f"     $ {' '.join(command)}")
    return ok


def main() -> None:
    """Build the databases when needed, then time the report commands."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/seqk-bench"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    big, small = args.dir / "synthetic-1m.duckdb", args.dir / "small.duckdb"
    for path, sizes in ((big, {}), (small, {"models": 1, "tasks": 20, "k": 5})):
        if args.rebuild or not path.exists():
            start = time.perf_counter()
            counts = build(path, **sizes)
            print(f"built {path}: " + ", ".join(f"{n:,} {t}" for t, n in counts.items())
                  + f" in {time.perf_counter() - start:.1f}s")
    seqk = [sys.executable, "-m", "seqk"] if not shutil.which("seqk") else ["seqk"]
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    results = [
        bench("seqk report --compare (1M attempts, 50 runs)",
              [*seqk, "report", "--compare", "--db", str(big)], args.repeat, 3.0, 1024),
        bench("seqk report <one small run>",
              [*seqk, "report", SMALL_RUN, "--db", str(small)], args.repeat, 1.0),
        bench("seqk report <one run of the 1M database>",
              [*seqk, "report", SMALL_RUN, "--db", str(big)], args.repeat, 1.5),
    ]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
