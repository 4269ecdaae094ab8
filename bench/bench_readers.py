"""Readers while a run writes: how long `seqk status` (a second process) and a
read-only open-query-close take while a 0-latency mock run writes as fast as it can.

    python bench/bench_readers.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import yaml


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="seqk-readers-"))
    variant = tmp / "variants" / "arcagi2" / "mock.yaml"
    variant.parent.mkdir(parents=True)
    variant.write_text(yaml.safe_dump(dict(
        metric="pass@k", k=10, model="mock/wrong", feedback_mode="binary", concurrency=64,
        options={"split": "training"})))
    db = tmp / "seqk.duckdb"
    run = subprocess.Popen([sys.executable, "-m", "seqk", "run", str(variant), "--db", str(db),
                            "--no-export"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not db.exists():
        time.sleep(0.01)
    status_s, open_s, seen = [], [], []
    while run.poll() is None:
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "seqk", "sql", "--db", str(db), "--format",
                              "csv", "SELECT count(*) FROM attempts"], capture_output=True, text=True)
        status_s.append(time.perf_counter() - t)
        if out.returncode == 0:
            seen.append(int(out.stdout.splitlines()[1]))
        t = time.perf_counter()
        from seqk import store

        with store.connect(db, read_only=True) as con:
            con.execute("SELECT count(*) FROM attempts").fetchone()
        open_s.append(time.perf_counter() - t)
    print(f"run wrote {seen[-1] if seen else 0}+ attempts while readers polled; every read succeeded: "
          f"{len(seen) == len(status_s)}")
    print(f"`seqk sql` in a second process (interpreter start included): n={len(status_s)}, "
          f"median {statistics.median(status_s) * 1000:.0f} ms, max {max(status_s) * 1000:.0f} ms")
    print(f"read-only open+query+close in this process: n={len(open_s)}, "
          f"median {statistics.median(open_s) * 1000:.0f} ms, max {max(open_s) * 1000:.0f} ms")
    with duckdb.connect(str(db), read_only=True) as con:
        print("final attempts:", con.execute("SELECT count(*) FROM attempts").fetchone()[0])


if __name__ == "__main__":
    main()
