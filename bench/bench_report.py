"""Time `seqk report` end to end, as a user runs it (a fresh interpreter each time).

    python bench/bench_report.py                  # builds /tmp/seqk-bench/*.duckdb if missing
    python bench/bench_report.py --rebuild --repeat 5
    python bench/bench_report.py --big /tmp/synthetic-10m.duckdb --only compare   # another database

Targets (issue 30): `seqk report --compare` over 1,000,000 attempts under 1 s wall (3 s at
10,000,000) and 1 GB peak memory; `seqk report` for one small run under 1 s, interpreter start
included. The --compare report is timed twice: computing every figure (SEQK_FIGURE_CACHE=0), and
asked again with its figures remembered (seqk/analysis/memo.py, in a cache folder of the bench's
own, filled by one run first). Each figure is the median of --repeat runs (min in brackets): wall, CPU (user + sys, all
threads) and peak RSS from /usr/bin/time (GNU time) when present, else from resource.getrusage.

The report's split (`--split`, on by default for --compare): the same command with every
estimator stubbed out (the curves' and lifts' bootstraps, the exact power, the equal-budget
blocks; what is left is the SQL, reading its rows into arrays, imports and the JSON), so
"SQL" is that run's figures and "Python" the difference. On 2 shared cores wall times follow
the load; CPU times much less: say the load average beside every figure.
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
SQL_ONLY = """
import sys
from seqk.analysis import budget, frontier, metrics, report

def nothing(*args, **kwargs):
    return None

metrics._seq_estimates = metrics.curve = nothing
metrics.paired_estimates = lambda *args, **kwargs: (None, None, None)
frontier.compare_at_equal_spend = lambda a, b, **kw: budget.EqualSpend(a.run_id, b.run_id, 0)
frontier._sides = lambda block, seq, partner, policy, built: tuple(
    budget.Frontier(run.run_id, run.keys, None, [], None) for run in (seq, partner))
frontier.point_differences = lambda a, b, budgets: [None] * len(budgets)
frontier.shared_figures = lambda a, b: ([], [])
print(report.to_json(report.report(db=sys.argv[1], compare=True))[:0], end="")
"""
"""The report with its estimators stubbed: what is left is the SQL and reading its rows."""


COLD = {"SEQK_FIGURE_CACHE": "0"}
"""Every figure computed (and a stubbed estimator's output never remembered)."""


def measure(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds (user + sys), peak RSS MB) of one run of `command` (with `env`
    added to the environment), which must succeed."""
    env = {**os.environ, **(env or {})}
    if GNU_TIME:
        done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, env=env)
        if done.returncode:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
        wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
        assert wall, done.stderr
        hours, minutes, seconds = wall.groups()
        cpu = sum(float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", done.stderr)[1])  # type: ignore[index]
                  for kind in ("User", "System"))
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        assert rss, done.stderr
        return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds), cpu, int(rss[1]) / 1024
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    # ru_maxrss of children is the largest so far: an upper bound for this command.
    return wall, cpu, after.ru_maxrss / 1024


def bench(name: str, command: list[str], repeat: int, wall_target: float | None = None,
          memory_target_mb: float | None = None, shown: str | None = None,
          env: dict[str, str] | None = None) -> tuple[bool, tuple[float, float, float]]:
    """Run, print one line of figures, and say whether the targets hold (on the median); the
    medians (wall, CPU, peak of the peaks)."""
    figures = [measure(command, env if env is not None else COLD) for _ in range(repeat)]
    walls, cpus = [w for w, _, _ in figures], [c for _, c, _ in figures]
    peak = max(m for _, _, m in figures)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    ok = (wall_target is None or wall < wall_target) and (memory_target_mb is None or peak < memory_target_mb)
    target = f" (< {wall_target:g})" if wall_target else ""
    memory = f"peak {peak:6.0f} MB" + (f" (< {memory_target_mb:.0f})" if memory_target_mb else "")
    print(f"{'ok  ' if ok else 'SLOW'} {name:<46} wall {wall:6.2f} s [min {min(walls):.2f}]{target} · "
          f"CPU {cpu:6.2f} s [min {min(cpus):.2f}] · {memory} · load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"     $ {shown or ' '.join(command)}")
    return ok, (wall, cpu, peak)


def main() -> None:
    """Build the databases when needed, then time the report commands."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/seqk-bench"))
    parser.add_argument("--big", type=Path, help="the database for the --compare figures (default: "
                                                 "DIR/synthetic-1m.duckdb, built when missing)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--only", choices=("compare", "runs"), help="only the --compare figures, or only "
                                                                     "the one-run figures")
    parser.add_argument("--no-split", dest="split", action="store_false",
                        help="skip the SQL-only run of the --compare report")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    big, small = args.big or args.dir / "synthetic-1m.duckdb", args.dir / "small.duckdb"
    needed = [(small, {"models": 1, "tasks": 20, "k": 5})] + ([] if args.big else [(big, {})])
    for path, sizes in needed:
        if args.rebuild or not path.exists():
            start = time.perf_counter()
            counts = build(path, **sizes)
            print(f"built {path}: " + ", ".join(f"{n:,} {t}" for t, n in counts.items())
                  + f" in {time.perf_counter() - start:.1f}s")
    seqk = [sys.executable, "-m", "seqk"] if not shutil.which("seqk") else ["seqk"]
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    results = []
    if args.only != "runs":
        compare = [*seqk, "report", "--compare", "--db", str(big)]
        ok, whole = bench(f"seqk report --compare ({big.name})", compare, args.repeat, 1.0, 1024,
                          shown=f"SEQK_FIGURE_CACHE=0 {' '.join(compare)}")
        results.append(ok)
        remembered = {"XDG_CACHE_HOME": str(args.dir / "cache")}
        shutil.rmtree(args.dir / "cache", ignore_errors=True)
        measure(compare, remembered)  # fills the folder
        ok, _ = bench("  asked again, its figures remembered", compare, args.repeat, 1.0, 1024,
                      shown=f"XDG_CACHE_HOME={args.dir / 'cache'} {' '.join(compare)}", env=remembered)
        results.append(ok)
        if args.split:
            _, sql = bench("  of which SQL and reading rows (estimators stubbed)",
                           [sys.executable, "-c", SQL_ONLY, str(big)], args.repeat,
                           shown=f"SEQK_FIGURE_CACHE=0 {sys.executable} -c <bench_report.SQL_ONLY> {big}")
            print(f"     Python estimators: wall {whole[0] - sql[0]:.2f} s, CPU {whole[1] - sql[1]:.2f} s "
                  "(the difference of the medians)")
    if args.only != "compare":
        results += [bench("seqk report <one small run>", [*seqk, "report", SMALL_RUN, "--db", str(small)],
                          args.repeat, 1.0)[0],
                    bench(f"seqk report <one run of {big.name}>", [*seqk, "report", SMALL_RUN, "--db", str(big)],
                          args.repeat, 1.5)[0]]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
