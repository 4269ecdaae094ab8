"""Start-up, measured (issue 18): how long `seqk run` takes from process start to its first
request, on the engine benchmark's variant (arcagi2 evaluation, 120 tasks, seq@k k=3
cell_match, a wrong answer every time, against bench/openai_server.py on loopback).

The clock: this script takes time.time() just before it starts the process; the server
stamps time.time() when the first chat request arrives (GET /stats `first_request_at`).
Every run gets a fresh database, so it is a new run's whole path: interpreter, imports,
variant and task load, preflight, prepare (DuckDB open, schema, tasks insert), first call.
A new database is a copy of the template in the user's cache (seqk.store.template; the first,
unmeasured run of each tree makes it); --cold-cache gives each run an empty cache folder, so
every database is built from sql/ as the first one ever made is.
Modules load from their .pyc files, as an installed seqk's do (PYTHONDONTWRITEBYTECODE is
dropped for the runs; the first, unmeasured run of each tree writes them).

    python bench/bench_startup.py                       # median of 9 runs + a breakdown
    python bench/bench_startup.py --compare /work/main  # the same, alternating with other code
    python bench/bench_startup.py --importtime          # + `python -X importtime` by package
    python bench/bench_startup.py --cold-cache          # no template database

The breakdown runs `seqk run` under a small harness (this file with --child) that stamps
the phases by wrapping seqk's functions when their modules are first imported, and counts
the imports in each phase from `-X importtime`; it imports nothing ahead of seqk.
"""

from __future__ import annotations

import sys
import time


def _child() -> None:
    """`seqk run` as the console script and `python -m seqk run` do it, with a stamp at each
    phase on stderr."""
    import functools
    import importlib.machinery
    import os
    from importlib.abc import MetaPathFinder

    def mark(label: str) -> None:
        # Wall clock, and the CPU seconds of every thread so far: a figure that the other jobs
        # on the machine inflate far less than wall time.
        # One write() per line: prepare stamps from its thread while the main one imports, and
        # print() writes the text and its newline apart, so -X importtime lines could split it.
        sys.stderr.flush()
        os.write(2, f"seqk-mark {label} {time.time():.6f} {time.process_time():.6f}\n".encode())

    def timed(fn, label):  # type: ignore[no-untyped-def]
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            mark(label + ">")
            try:
                return fn(*args, **kwargs)
            finally:
                mark(label + "<")
        return wrapper

    def on_scheduler(module) -> None:  # type: ignore[no-untyped-def]
        if hasattr(module, "prepare"):
            module.prepare = timed(module.prepare, "prepare")
        if hasattr(module, "import_clients"):  # in the main thread while prepare runs in another
            module.import_clients = timed(module.import_clients, "clients")
        engine_run = module.Engine.run

        async def run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            mark("engine")
            return await engine_run(self, *args, **kwargs)
        module.Engine.run = run

    def on_client(module) -> None:  # type: ignore[no-untyped-def]
        # seqk's own HTTP/1.1 client (stop 45) sends every request of an OpenAI-compatible endpoint
        request = module.Client.post
        sent = []

        async def first_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            if not sent:
                sent.append(True)
                mark("request")
            return await request(self, *args, **kwargs)
        module.Client.post = first_request

    def patch(name: str):  # type: ignore[no-untyped-def]
        def hook(module) -> None:  # type: ignore[no-untyped-def]
            setattr(module, name, timed(getattr(module, name), name))
        return hook

    hooks = {
        "seqk.config.runspec": patch("load_with_settings"),
        "seqk.io.publish": patch("preflight"),
        "seqk.run.preflight": patch("before_run"),
        "seqk.run.engine": on_scheduler,
        "seqk.models.http1": on_client,
        "seqk.cli": lambda module: mark("cli"),
    }

    class AfterImport(MetaPathFinder):
        def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
            if name not in hooks:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            exec_module = spec.loader.exec_module

            def run_then_hook(module):  # type: ignore[no-untyped-def]
                exec_module(module)
                hooks[name](module)
            spec.loader.exec_module = run_then_hook  # type: ignore[method-assign]
            return spec

    mark("main")
    sys.meta_path.insert(0, AfterImport())
    sys.argv = ["seqk", *sys.argv[2:]]
    from seqk.__main__ import main  # the console script's entry point

    main()


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    _child()
    sys.exit(0)

import argparse  # noqa: E402 - the child above must start with nothing imported
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import urllib.request  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
COLD_CACHE = False
ROOT = HERE.parent
VARIANT = """\
metric: seq@k
k: 3
feedback_mode: cell_match
model: openai/bench
api_base: {api_base}
concurrency: 120
retry: {{max_retries: 0}}
options: {{split: evaluation}}
"""
# Phases: (name, from-stamp, to-stamp); "start" is this script's clock before Popen,
# "first" the server's stamp of the first request.
PHASES = (
    ("interpreter start", "start", "main"),
    ("import seqk.cli (typer)", "main", "cli"),
    ("variant + task load (imports included)", "cli", "load_with_settings<"),
    ("output paths checked (publish.preflight)", "load_with_settings<", "preflight<"),
    ("run imports up to preflight", "preflight<", "before_run>"),
    ("preflight (keys, endpoints)", "before_run>", "before_run<"),
    ("lease + prepare imports", "before_run<", "prepare>"),
    ("prepare (DuckDB open, schema, tasks)", "prepare>", "prepare<"),
    ("  alongside: client import (aiohttp)", "clients>", "clients<"),
    ("engine start (pool, writer, loop)", "prepare<", "engine"),
    ("first call: engine -> request sent", "engine", "request"),
    ("request -> the server's stamp", "request", "first"),
)


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    """bench/openai_server.py answering after 200 ms (bench_engine's), and its root URL."""
    sys.path.insert(0, str(HERE))
    from bench_engine import start_server as start

    proc, api_base = start(0.2)
    return proc, api_base.removesuffix("/v1")


def server_stats(base: str, reset: bool = False) -> dict:
    request = urllib.request.Request(base + ("/stats/reset" if reset else "/stats"),
                                     method="POST" if reset else "GET")
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


def one_run(code: Path, base: str, folder: Path, *, child: bool = False,
            importtime: bool = False) -> tuple[float, str]:
    """Seconds from Popen to the server's first request, and the process's stderr."""
    server_stats(base, reset=True)
    variant = folder / "variants" / "arcagi2" / "bench.yaml"
    variant.parent.mkdir(parents=True, exist_ok=True)
    variant.write_text(VARIANT.format(api_base=base + "/v1"))
    db = folder / f"run-{time.time_ns()}.duckdb"
    env = dict(os.environ, PYTHONPATH=str(code))
    # As an installed seqk starts: from .pyc files (the warm-up run writes them), not recompiling
    # every module from source, which PYTHONDONTWRITEBYTECODE (set on some machines) would force.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if COLD_CACHE:  # no template database (seqk.store.template): the database is built from sql/
        env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="seqk-cache-", dir=folder)
    head = [sys.executable] + (["-X", "importtime"] if importtime else [])
    head += [str(Path(__file__).resolve()), "--child"] if child else ["-m", "seqk"]
    args = [*head, "run", str(variant.relative_to(folder)), "--db", str(db), "--no-export"]
    start = time.time()
    done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"seqk run exited {done.returncode}:\n{done.stderr[-2000:]}")
    first = server_stats(base)["first_request_at"]
    if first is None:
        raise RuntimeError("the server saw no request")
    return first - start, (f"seqk-mark start {start:.6f}\n" + done.stderr
                           + f"seqk-mark first {first:.6f}\n")


def breakdown(stderr: str) -> dict[str, tuple[float, float, float]]:
    """Phase -> (wall seconds, CPU seconds, seconds in imports), from the stamps and the
    -X importtime lines."""
    stamps: dict[str, float] = {}
    cpu: dict[str, float] = {"start": 0.0}
    imports_between: dict[str, float] = {}
    last, pending = None, 0.0
    for line in stderr.splitlines():
        if last == "request":
            break  # what the run imports after its first request is no part of start-up
        if line.startswith("seqk-mark "):
            _, label, at, *used = line.split()
            stamps.setdefault(label, float(at))
            if used:
                cpu.setdefault(label, float(used[0]))
            if last is not None:
                imports_between[last] = imports_between.get(last, 0.0) + pending
            last, pending = label, 0.0
            continue
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m[3]) == 1:  # a top-level import: its cumulative time
            pending += int(m[2]) / 1e6
    stamps["first"] = float(stderr.rsplit("seqk-mark first ", 1)[1])
    order = sorted(stamps, key=stamps.__getitem__)
    out = {}
    for name, a, b in PHASES:
        if a in stamps and b in stamps:
            spent = sum(imports_between.get(label, 0.0) for label in order
                        if stamps[a] <= stamps[label] < stamps[b])
            used = cpu[b] - cpu[a] if a in cpu and b in cpu else float("nan")
            out[name] = (stamps[b] - stamps[a], used, spent)
    return out


def importtime_by_package(stderr: str) -> Counter[str]:
    """Self time (s) of every import, summed by top-level package."""
    by = Counter[str]()
    for line in stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            by[m[4].split(".")[0]] += int(m[1]) / 1e6
    return by


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def cpu_of(stderr: str) -> float:
    """CPU seconds the child had used when it sent its first request."""
    return float(stderr.split("seqk-mark request ", 1)[1].split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=9, help="runs per code tree (median reported)")
    parser.add_argument("--compare", type=Path, action="append", default=[],
                        help="another seqk tree (e.g. /work/main), run alternately with this one")
    parser.add_argument("--importtime", action="store_true", help="also attribute import time by package")
    parser.add_argument("--cold-cache", action="store_true",
                        help="every run with an empty cache folder: new databases built from sql/, not copied")
    args = parser.parse_args()
    global COLD_CACHE
    COLD_CACHE = args.cold_cache
    trees = [ROOT, *args.compare]
    folder = Path(tempfile.mkdtemp(prefix="seqk-startup-"))
    proc, base = start_server()
    try:
        print(f"load average before: {load()} (1/5/15 min) on {os.cpu_count()} cores")
        for tree in trees:  # warm the page cache and write each tree's .pyc files
            one_run(tree, base, folder)
        walls: dict[Path, list[float]] = {t: [] for t in trees}
        cpus: dict[Path, list[float]] = {t: [] for t in trees}
        phases: dict[Path, dict[str, list[tuple[float, float]]]] = {t: {} for t in trees}
        for _ in range(args.repeat):
            for tree in trees:
                walls[tree].append(one_run(tree, base, folder)[0])
                _, stderr = one_run(tree, base, folder, child=True)
                cpus[tree].append(cpu_of(stderr))
                for name, (wall, used, _imports) in breakdown(stderr).items():
                    phases[tree].setdefault(name, []).append((wall, used))
        for tree in trees:
            ts, cs = walls[tree], cpus[tree]
            print(f"{tree}: `python -m seqk run` start -> first request: median {statistics.median(ts):.3f} s "
                  f"over {len(ts)} fresh runs (min {min(ts):.3f}, max {max(ts):.3f}); CPU used by then: "
                  f"median {statistics.median(cs):.3f} s (min {min(cs):.3f}, max {max(cs):.3f})")
        for tree in trees:
            _, stderr = one_run(tree, base, folder, child=True, importtime=True)
            imports = breakdown(stderr)
            print(f"\nbreakdown of {tree}: median wall and CPU of {args.repeat} runs; imports "
                  "from one run under -X importtime (which adds its own cost)")
            print(f"  {'phase':<44} {'wall':>7}    {'CPU':>5}     {'imports':>7}")
            for name, values in phases[tree].items():
                spent = imports.get(name, (0.0, 0.0, 0.0))[2]
                wall = statistics.median(v[0] for v in values)
                used = statistics.median(v[1] for v in values)
                used_ms = "    -" if used != used else f"{used * 1000:5.0f}"  # NaN: no CPU stamp
                print(f"  {name:<44} {wall * 1000:7.0f} ms {used_ms} ms  {spent * 1000:7.0f} ms")
            if args.importtime:
                by = importtime_by_package(stderr)
                print(f"  import self time by package, whole run ({sum(by.values()):.2f} s in all):")
                for name, spent in by.most_common(15):
                    print(f"    {name:<24} {spent * 1000:6.0f} ms")
        print(f"\nload average after: {load()}")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
