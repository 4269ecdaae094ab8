"""Time `seqk view`'s pages over the 1,000,000-attempt synthetic database, as a browser asks
for them: a real server on loopback, real HTTP requests.

    python bench/bench_view.py                  # builds /tmp/seqk-bench/synthetic.duckdb if missing
    python bench/bench_view.py --repeat 7
    python bench/bench_view.py --db /tmp/s10m.duckdb --never-viewed 4   # first requests only

Target (issue 20): the run list and a run page each answer in under 1 s. Each page gets a
server of its own: its first request (nothing kept), then, when the page says a verdict is
computing, how long until a poll finds them all filled in, then the median of --repeat reloads
(min and max in brackets), with the page cache off, so every request reads the database (the
verdicts and charts are kept all the same: seqk.view.verdict_cache); then the same with the page
cache on (what a page that polls while nothing is written costs). Each line then gives the
server's CPU time (the first request's, the reloads' mean; all its threads; DuckDB reads on
every core) and the 1-minute load average when it was measured:
the wall time grows with what else the machine runs, the CPU time much less.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from make_synthetic_db import build  # noqa: E402

from seqk.view.render import run_path  # noqa: E402

SEQ_RUN = "synth-default/seqk/synth__model-03/deterministic/hint"
SERVER = """
import sys, uvicorn
from seqk import store
from seqk.view import app
sock = app.listen("127.0.0.1", 0)
print(sock.getsockname()[1], flush=True)
uvicorn.Server(uvicorn.Config(app.create_app(store.open(sys.argv[1]), cache=sys.argv[2] == "on"),
                              log_level="warning")).run(sockets=[sock])
"""


@contextlib.contextmanager
def server(db: Path, cache: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, int]]:
    """A viewer of `db` in a process of its own (page cache `cache`: on or off): its base URL and
    pid, the process ended on leaving."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(db), cache], stdout=subprocess.PIPE, text=True,
                            env=env)
    try:
        yield f"http://127.0.0.1:{proc.stdout.readline().strip()}", proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def fetch(url: str) -> tuple[float, bytes]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as answer:
        body = answer.read()
        assert answer.status == 200 and b"Traceback" not in body, url
    return time.perf_counter() - start, body


def timed(url: str) -> float:
    return fetch(url)[0]


def cpu_s(pid: int) -> float:
    """The server's CPU time so far (user + system, every thread): what a request costs
    whatever else the machine runs, where the wall time grows with the load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


COMPUTING = b'<p class="computing">'
"""What a page holds while the viewer computes a verdict or a chart (seqk.view.verdict_cache)."""

PAGES = {"run list /": "/", "run page (all tasks, page 1)": f"/runs/{run_path(SEQ_RUN)}",
         "run page, page 20 of 29": f"/runs/{run_path(SEQ_RUN)}?page=20",
         "run page, filter feedback_only": f"/runs/{run_path(SEQ_RUN)}?filter=feedback_only",
         "run page, filter never": f"/runs/{run_path(SEQ_RUN)}?filter=never",
         "run page, search 'answer 3'": f"/runs/{run_path(SEQ_RUN)}?q=answer+3",
         "task page (story + pass@k samples)": f"/runs/{run_path(SEQ_RUN)}/tasks/6"}


def bench(db: Path, cache: str, repeat: int) -> None:
    """Each page on a server of its own: the first request (nothing kept: interpreter, templates,
    file cache and verdicts cold), then, when it said "computing", how long until a poll finds
    every verdict filled in, then the median of `repeat` reloads."""
    for name, path in PAGES.items():
        with server(db, cache) as (base, pid):
            cpu = cpu_s(pid)
            first, body = fetch(base + path)
            cpu_first = cpu_s(pid) - cpu
            filled = ""
            if COMPUTING in body:
                start = time.perf_counter()
                while COMPUTING in body:
                    time.sleep(0.25)
                    body = fetch(base + path)[1]
                filled = (f"; every verdict and chart filled in {first + time.perf_counter() - start:.1f} s after "
                          f"(server cpu {cpu_s(pid) - cpu:.1f} s)")
            cpu = cpu_s(pid)
            times = [timed(base + path) for _ in range(repeat)]
            cpu = (cpu_s(pid) - cpu) / repeat
            print(f"  {name:38} first {first:6.3f} s cpu {cpu_first:.2f} s{filled}\n"
                  f"  {'':38} reload {statistics.median(times):6.3f} s  [{min(times):.3f}–{max(times):.3f}]"
                  f"  cpu {cpu:.2f} s  load {os.getloadavg()[0]:.1f}", flush=True)


def never_viewed(db: Path, rounds: int) -> None:
    """The first request of the run list and of a run page over a store never viewed: each on a
    server of its own whose cache folder ($XDG_CACHE_HOME) holds the compiled templates and nothing
    else (no figure kept), `rounds` times after one discarded round (the first open of a file whose
    views another checkout stored redoes them: ~0.5 s that is not the page's). Prints the median
    [min–max] wall time and the server's CPU time of each."""
    import shutil
    import tempfile

    from seqk.cache import folder

    root = folder()
    if root is None:
        sys.exit("bench_view: no cache folder (set XDG_CACHE_HOME)")
    templates = root / "templates"
    if not templates.is_dir():  # compile them once, as the first viewer would
        with server(db, "on") as (base, _):
            fetch(base + "/")
    pages = {"run list /": "/", "run page": f"/runs/{run_path(SEQ_RUN)}"}
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name in pages}
    for round_ in range(rounds + 1):
        for name, path in pages.items():
            with tempfile.TemporaryDirectory() as cache:
                shutil.copytree(templates, Path(cache) / "seqk" / "templates")
                with server(db, "on", dict(os.environ, XDG_CACHE_HOME=cache)) as (base, pid):
                    cpu = cpu_s(pid)
                    first = fetch(base + path)[0]
                    if round_:
                        seen[name].append((first, cpu_s(pid) - cpu))
    for name, got in seen.items():
        walls, cpus = [w for w, _ in got], [c for _, c in got]
        print(f"  {name:12} first request {statistics.median(walls):.2f} s [{min(walls):.2f}–{max(walls):.2f}]"
              f"  cpu {statistics.median(cpus):.2f} s  load {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("/tmp/seqk-bench/synthetic.duckdb"))
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--never-viewed", type=int, default=0, metavar="ROUNDS",
                        help="time only the first requests over a store never viewed, ROUNDS times")
    args = parser.parse_args()
    if args.rebuild or not args.db.exists():
        args.db.parent.mkdir(parents=True, exist_ok=True)
        counts = build(args.db)
        print(f"built {args.db}: " + ", ".join(f"{n:,} {t}" for t, n in counts.items()))
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
          + f" on {os.cpu_count()} cores")
    if args.never_viewed:
        print(f"a store never viewed, the first request of a server of its own, {args.never_viewed} rounds:")
        never_viewed(args.db, args.never_viewed)
        return
    for cache in ("off", "on"):
        print(f"page cache {cache}, median of {args.repeat} requests:")
        bench(args.db, cache, args.repeat)


if __name__ == "__main__":
    main()
