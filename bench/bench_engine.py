"""Harness speed, measured (issue 2's benchmark).

1. arcagi2 evaluation (120 tasks), seq@k, k=3, cell_match, a wrong answer every
   time, against a loopback OpenAI-compatible server that answers after 200 ms:
   at concurrency 120 (target: within the 3 x 200 ms critical path + 0.5 s), into a fresh store
   (the endpoint's limit slow-starts from 4) and into a store where a run against the endpoint
   ran before (it starts at the limit the endpoint sustained), alternated; and at concurrency 1
   (target: the first at least 10x faster end to end).
2. A 0-latency mock model: attempts per second of the harness itself, database
   writes included (target: 300/s on 2 cores).
3. Peak memory (ru_maxrss) of this process.

    python bench/bench_engine.py            # all three; ~90 s, most of it concurrency 1
    python bench/bench_engine.py --quick    # skips concurrency 1
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(delay: float, *extra: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(HERE / "openai_server.py"), "--port", str(port),
                             "--delay", str(delay), *extra])
    base = f"http://127.0.0.1:{port}/v1"
    for _ in range(100):
        try:
            urllib.request.urlopen(base + "/models", timeout=1).read()
            return proc, base
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("bench server did not start")


def variant(folder: Path, name: str, **keys) -> Path:
    path = folder / "variants" / "arcagi2" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(keys))
    return path


def warm_imports() -> None:
    """Import what a run imports, so timings exclude interpreter and module start-up."""
    import aiohttp  # noqa: F401
    import duckdb  # noqa: F401
    import pyarrow  # noqa: F401

    from seqk import models, store  # noqa: F401
    from seqk.config import runspec  # noqa: F401
    from seqk.run import engine  # noqa: F401


def timed_run(path: Path, db: Path) -> tuple[float, object]:
    """Wall time of engine.run (prepare, schedule, write); variant parsing excluded."""
    from seqk.config import runspec
    from seqk.run import engine

    spec = runspec.load(path)
    start = time.perf_counter()
    result = engine.run(spec, db)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="skip the concurrency-1 run")
    parser.add_argument("--repeat", type=int, default=5, help="fresh runs at concurrency 120")
    args, tmp = started(parser, "seqk-bench-")
    base_keys = dict(metric="seq@k", k=3, feedback_mode="cell_match",
                     options={"split": "evaluation"}, retry={"max_retries": 0})

    proc, api_base = start_server(0.2)
    try:
        warm = warm_store(tmp, api_base)
        results = {}
        for conc in ([120] if args.quick else [120, 1]):
            walls: dict[str, list[float]] = {"a fresh store": [], "a store that ran before": []}
            began: dict[str, set[int]] = {kind: set() for kind in walls}
            for rep in range(args.repeat if conc > 1 else 1):
                path = variant(tmp, f"c{conc}r{rep}", model="openai/bench", api_base=api_base,
                               concurrency=conc, **base_keys)
                for kind, db in (("a fresh store", tmp / f"c{conc}r{rep}.duckdb"),
                                 ("a store that ran before", copy_of(warm, tmp / f"c{conc}r{rep}-ran.duckdb"))):
                    if conc == 1 and kind != "a fresh store":
                        continue
                    wall, result = timed_run(path, db)
                    assert result.attempts_written == 360 and result.tasks_failed == 120, result
                    walls[kind].append(wall)
                    began[kind].update(m.start for m in result.model_limits)
            for kind, found in walls.items():
                if not found:
                    continue
                results[conc] = statistics.median(found)
                print(f"server 200 ms, 120 tasks x 3 seq attempts, concurrency {conc:>3}, {kind}: median "
                      f"{results[conc]:6.2f} s ({results[conc] - 0.6:+.2f} s over the 0.6 s critical path) "
                      f"over {len(found)} runs, min {min(found):.2f} s, max {max(found):.2f} s, "
                      f"load average {os.getloadavg()[0]:.1f}; the limit started at "
                      f"{', '.join(map(str, sorted(began[kind])))} calls in flight")
        if 1 in results:
            print(f"speed-up concurrency 120 vs 1: {results[1] / results[120]:.1f}x")
    finally:
        proc.terminate()
        proc.wait()

    path = variant(tmp, "mock", model="mock/wrong", metric="pass@k", k=10, feedback_mode="binary",
                   options={"split": "training"}, concurrency=64)
    wall, result = timed_run(path, tmp / "mock.duckdb")
    n = result.attempts_written
    print(f"0-latency mock, arcagi2 training, pass@k k=10: {n} attempts in {wall:.2f} s "
          f"= {n / wall:.0f} attempts/s (database writes included)")
    path = variant(tmp, "mockseq", model="mock/wrong", metric="seq@k", k=5,
                   feedback_mode="cell_match", options={"split": "training"}, concurrency=64)
    wall, result = timed_run(path, tmp / "mockseq.duckdb")
    n = result.attempts_written
    print(f"0-latency mock, arcagi2 training, seq@k k=5 cell_match: {n} attempts in {wall:.2f} s "
          f"= {n / wall:.0f} attempts/s")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (ru_maxrss): {peak_mb:.0f} MB; db sizes: "
          + ", ".join(f"{p.name} {p.stat().st_size / 1e6:.1f} MB" for p in sorted(tmp.glob("*.duckdb"))))
    if "litellm" in sys.modules:
        print("note: litellm was imported")


def started(parser: argparse.ArgumentParser, prefix: str) -> tuple[argparse.Namespace, Path]:
    """A bench's start: its arguments and --first-start parsed (and applied), a temporary folder
    named `prefix`..., and what a run imports imported."""
    parser.add_argument("--first-start", type=int, metavar="N",
                        help="where a never-seen endpoint's limit starts (default: seqk's, 4)")
    args = parser.parse_args()
    first_start(args.first_start)
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    warm_imports()
    return args, tmp


def first_start(n: int | None) -> None:
    """Make a never-seen endpoint's limit start at `n` calls in flight (for measuring the choice)."""
    if n is not None:
        from seqk.models import pool

        pool.DEFAULT_START = n  # type: ignore[attr-defined]
        print(f"a never-seen endpoint's limit starts at {n} calls in flight")


def warm_store(tmp: Path, api_base: str, tasks: int = 120, k: int = 1) -> Path:
    """A store in which a pass@k run of `tasks` tasks ran against `api_base`: a later run in a copy
    of it starts at the limit the endpoint sustained (seqk.run.limits)."""
    db = tmp / f"warm{k}.duckdb"
    path = variant(tmp, f"warm{k}", model="openai/bench", api_base=api_base, metric="pass@k", k=k,
                   options={"split": "evaluation"}, max_tasks=tasks, concurrency=tasks, tag="warm")
    timed_run(path, db)
    return db


def copy_of(db: Path, to: Path) -> Path:
    """A copy of a store (its .wal too, if any)."""
    import shutil

    shutil.copy(db, to)
    if db.with_name(db.name + ".wal").exists():
        shutil.copy(db.with_name(db.name + ".wal"), to.with_name(to.name + ".wal"))
    return to


if __name__ == "__main__":
    os.environ.setdefault("SEQK_BENCH", "1")
    main()
