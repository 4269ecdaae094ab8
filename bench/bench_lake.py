"""Writers into one lake (PostgreSQL catalog + moto S3 on loopback), through seqk's own writer.

    python bench/bench_lake.py                         # 1, 2, 4 writers; 3 runs each; 10 s each
    python bench/bench_lake.py --writers 1,4 --runs 5 --seconds 15
    python bench/bench_lake.py --batch 200             # commits of 200 back to back (sized by count)
    python bench/bench_lake.py --probe                 # also: the cost of one commit, by size and inlining
    python bench/bench_lake.py --cold-reads            # also: cold reads before and after compaction

Each run: a fresh lake; N writer processes, each with its session open, start together and for
`--seconds` hand finished attempts (each with one call) to `seqk.run.writer.Writer`, the
writer of `seqk run`, which commits what it holds about once a second (the lake's commit
interval: commits sized by time), as fast as the process can make them; then each closes its
writer (the last commit included). Reported: attempts committed per second by all writers
(the sum over writers / the time from the common start to the last close), commits per second,
the median time of one commit, how many commits lost a race in the catalog (PostgreSQL's log:
each is a duplicate key on ducklake_snapshot, retried inside DuckLake) and how many DuckLake
gave up on (written again by seqk), the 1-minute load average before and after; and a check
that every attempt is stored exactly once; beside the rate to the last close, a steady rate
(commits that ended between 2 s in and the end of the making), and with --verbose each writer's
rusage per 1,000 attempts (user and system CPU, context switches, page faults). The median over
`--runs` runs per N closes.

With `--batch B`, writers instead commit B attempts at a time back to back through the same
store door (`store.append_attempts`, retried as the writer retries it): the measure this file
used to take, where four writers fell behind one.

PostgreSQL and moto are started here and stopped at the end; moto serves S3 from this process.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import re
import resource
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from datetime import datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

WARM = 2.0
"""Seconds after the start that the steady rate leaves out (the first commits)."""
LOST = re.compile(r"duplicate key value violates unique constraint \"ducklake_snapshot_pkey\"")


def template(run_id: str) -> Any:
    from seqk.records import AttemptRecord, CallRecord

    now = datetime.now()
    call = CallRecord(role="actor", model="mock/x", prompt="p" * 200, output="o" * 100, input_tokens=50,
                      cached_tokens=0, thinking_tokens=0, output_tokens=25, cost_usd=0.0, latency_s=0.01,
                      retries=0, error=None, started_at=now)
    return AttemptRecord(attempt_uid="", run_id=run_id, generation=1, task_index=0, attempt_index=1, k=1,
                         status="ok", success=True, score=1.0, prompt="p" * 200, output="o" * 100,
                         raw_eval_output="", judge_details=None, feedback=None, error=None, started_at=now,
                         finished_at=now, calls=[call])


def attempts(base: Any, first: int, n: int) -> list[Any]:
    return [replace(base, attempt_uid=str(uuid.uuid4()), task_index=first + i, success=(first + i) % 3 == 0)
            for i in range(n)]


def writer_process(url: str, seconds: float, batch: int, max_batch: int, go: Any, ready: Any, out: Any,
                   threads: int = 0) -> None:
    from seqk import store
    from seqk.run.writer import Writer
    from seqk.store import lake_retry

    db = store.open(url)
    with db.connect(checkpoint=False) as con:  # the session (extensions, catalog, views) before the clock
        if threads:
            con.execute(f"SET threads = {int(threads)}")
    base = template(f"bench/{uuid.uuid4().hex[:8]}")
    commit_s: list[float] = []
    commit_cpu: list[float] = []
    ended: list[tuple[float, int]] = []  # (when a commit ended, on the monotonic clock; its attempts)

    class Timed(Writer):  # seqk's writer, each of its commits timed
        def _commit(self, records: list[Any], final: bool, converted: Any = None) -> None:
            start, cpu, size = time.perf_counter(), time.thread_time(), len(records)
            super()._commit(records, final, converted)
            commit_s.append(time.perf_counter() - start)
            commit_cpu.append(time.thread_time() - cpu)
            ended.append((time.monotonic(), size))

    ready.put(os.getpid())
    go.wait()
    start, cpu, use = time.monotonic(), time.process_time(), resource.getrusage(resource.RUSAGE_SELF)
    if batch:
        written = 0
        while time.monotonic() < start + seconds:
            records = attempts(base, written, batch)
            started = time.perf_counter()
            db.retrying(functools.partial(_append, db, records))
            commit_s.append(time.perf_counter() - started)
            ended.append((time.monotonic(), batch))
            written += batch
    else:
        writer = Timed(db, interval_s=db.commit_interval_s, **({"max_batch": max_batch} if max_batch else {}))
        written = asyncio.run(_produce(writer, base, start + seconds))
    # Steady: the attempts of the commits that ended between WARM s after the start and the end of
    # the making, per second of that window (the close's drain of what was pending left out). It
    # leaves out the commit in flight at the end too, so it runs low by up to one commit period
    # per writer over the window: read it beside the rate to the last close, in long runs.
    steady = sum(size for when, size in ended if start + WARM <= when <= start + seconds)
    out.put((written, len(commit_s), start, time.monotonic(), commit_s, lake_retry.runs_again(),
             time.process_time() - cpu, sum(commit_cpu), steady / max(seconds - WARM, 1e-9), usage(use)))


def usage(before: Any) -> tuple[float, float, int, int, int]:
    """Since `before`, this process's: user and system CPU seconds, voluntary and involuntary
    context switches, minor page faults (all its threads, DuckDB's included)."""
    now = resource.getrusage(resource.RUSAGE_SELF)
    return (now.ru_utime - before.ru_utime, now.ru_stime - before.ru_stime, now.ru_nvcsw - before.ru_nvcsw,
            now.ru_nivcsw - before.ru_nivcsw, now.ru_minflt - before.ru_minflt)


def _append(db: Any, records: list[Any]) -> None:
    from seqk import store

    with db.connect(checkpoint=False) as con:
        store.append_attempts(con, records)


async def _produce(writer: Any, base: Any, deadline: float) -> int:
    """Attempts as fast as this process makes them, handed to the writer; the making pauses while
    the writer holds a full batch (max_batch) it has not begun to write, so memory stays bounded
    when the writer falls behind, as it does here: making an attempt costs less than writing it."""
    writer.start()
    made = 0
    while time.monotonic() < deadline:
        if len(writer.buffer) >= writer.max_batch:
            # Looked at again every 50 ms (a commit takes a second or more here): every 10 ms, four
            # paused writers made 12-16 voluntary context switches per 1,000 attempts against one
            # writer's 8-11; every 50 ms, 11 against 9-10.
            await asyncio.sleep(0.05)
            continue
        for record in attempts(base, made, 100):
            writer.put(record)
        made += 100
        await asyncio.sleep(0)
    await writer.close()
    return int(writer.written)


def one_run(pg: Any, endpoint: str, name: str, n: int, seconds: float, batch: int, max_batch: int,
            threads: int = 0) -> dict[str, Any]:
    import servers

    from seqk import store
    from seqk.store import lake

    url = f"ducklake:postgres:{servers.create_database(pg, name)};data=s3://seqk-bench/{name}/"
    with store.connect(url):  # the lake made before the clock starts
        pass
    lake.close_all()
    log_before = pg.log.read_text(errors="replace") if pg.log else ""
    ctx = get_context("spawn")
    go, ready, out = ctx.Event(), ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=writer_process, args=(url, seconds, batch, max_batch, go, ready, out, threads))
             for _ in range(n)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=600)
    load_before = os.getloadavg()[0]
    pg_cpu, moto_cpu = postgres_cpu(pg), time.process_time()
    go.set()  # every process has its session open
    results = [out.get(timeout=seconds + 600) for _ in procs]
    load_after = os.getloadavg()[0]
    for p in procs:
        p.join(timeout=60)
    time.sleep(0.5)  # their catalog sessions end, and PostgreSQL counts their time
    pg_cpu, moto_cpu = postgres_cpu(pg) - pg_cpu, time.process_time() - moto_cpu
    written = sum(r[0] for r in results)
    elapsed = max(r[3] for r in results) - min(r[2] for r in results)
    commit_s = [s for r in results for s in r[4]]
    log_after = pg.log.read_text(errors="replace") if pg.log else ""
    with store.connect(url, read_only=True) as con:
        total, distinct = con.execute("SELECT count(*), count(DISTINCT attempt_uid) FROM attempts").fetchone()
    lake.close_all()
    return {"writers": n, "attempts_s": written / elapsed, "steady_s": sum(r[8] for r in results),
            "commits_s": sum(r[1] for r in results) / elapsed,
            "commit_median_s": statistics.median(commit_s), "written": written, "stored": total,
            "distinct": distinct, "lost_races": len(LOST.findall(log_after[len(log_before):])),
            "written_again": sum(r[5] for r in results), "load": (load_before, load_after),
            "cpu_ms_per_1000": 1e6 * (sum(r[6] for r in results) + pg_cpu + moto_cpu) / max(written, 1),
            "pg_ms_per_commit": 1000 * pg_cpu / max(sum(r[1] for r in results), 1),
            "cpu_split": tuple(1e6 * x / max(written, 1) for x in (sum(r[6] for r in results), pg_cpu, moto_cpu)),
            "usage": tuple(sum(r[9][i] for r in results) * (1e6 if i < 2 else 1000) / max(written, 1)
                           for i in range(5)),
            "elapsed": elapsed, "url": url,
            "each": [(r[0], r[1], r[2] - min(x[2] for x in results), r[3] - min(x[2] for x in results), r[6],
                      sum(r[4]), r[7]) for r in results]}


def postgres_cpu(pg: Any) -> float:
    """CPU seconds the PostgreSQL server has used so far: the postmaster, the sessions it has
    reaped, and those still open (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    postmaster = int((pg.log.parent / "data" / "postmaster.pid").read_text().split()[0])

    def fields(pid: int | str) -> list[str]:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()

    own = fields(postmaster)
    total = sum(int(x) for x in own[11:15])  # utime stime cutime cstime
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            f = fields(pid)
        except OSError:
            continue
        if int(f[1]) == postmaster:
            total += int(f[11]) + int(f[12])
    return total / tick


def probe(pg: Any, endpoint: str) -> None:
    """One process, one writer: the time of one commit by its size, with DuckLake's data inlining
    off (every commit a Parquet file on S3) and at several row limits."""
    import servers

    from seqk import store
    from seqk.store import lake

    print("\nthe cost of one commit (one writer; median of 9 commits; attempts + one call each):")
    base = template("bench/probe")
    for limit in (0, 10, 25, 50):
        name = f"probe{limit}"
        url = f"ducklake:postgres:{servers.create_database(pg, name)};data=s3://seqk-bench/{name}/"
        db = replace(store.open(url), inline_rows=limit)
        cells = []
        for size in (1, 5, 20, 50, 200):
            times = []
            for i in range(9):
                records = attempts(base, i * size, size)
                start = time.perf_counter()
                _append(db, records)
                times.append(time.perf_counter() - start)
            cells.append(f"{size}: {statistics.median(times) * 1000:4.0f} ms")
        lake.close_all()
        print(f"  inlining below {limit:>3} rows: " + ", ".join(cells) + f"  (load {os.getloadavg()[0]:.1f})")


def cold_reads(url: str) -> None:
    def seqk_sql(query: str) -> float:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "seqk", "sql", query, "--db", url, "--format", "csv"],
                              capture_output=True, text=True, timeout=600)
        if done.returncode:
            raise SystemExit(done.stderr)
        return time.perf_counter() - start

    query = "SELECT count(*), sum(length(output)) FROM attempts"
    before = [seqk_sql(query) for _ in range(3)]
    done = subprocess.run([sys.executable, "-m", "seqk", "lake", "compact", "--db", url, "--keep-hours", "0"],
                          capture_output=True, text=True, timeout=900)
    print("seqk lake compact:", done.stdout.strip() or done.stderr.strip())
    after = [seqk_sql(query) for _ in range(3)]
    print(f"cold read (fresh `seqk sql` process, interpreter start included): median "
          f"{statistics.median(before):.2f} s before compaction, {statistics.median(after):.2f} s after")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writers", default="1,2,4")
    parser.add_argument("--runs", type=int, default=3, help="runs per number of writers (the median is reported)")
    parser.add_argument("--seconds", type=float, default=10.0, help="writing time per run")
    parser.add_argument("--batch", type=int, default=0,
                        help="attempts per commit, back to back (0: seqk's writer, commits sized by time)")
    parser.add_argument("--max-batch", type=int, default=0,
                        help="the writer's max_batch, the most one commit carries (0: the writer's default)")
    parser.add_argument("--threads", type=int, default=0, help="SET threads in each writer session (0: as is)")
    parser.add_argument("--probe", action="store_true", help="also time single commits by size and inlining")
    parser.add_argument("--verbose", action="store_true", help="also each writer's figures")
    parser.add_argument("--cold-reads", action="store_true", help="also time cold reads around compaction")
    args = parser.parse_args()

    import boto3
    import servers

    with servers.postgres() as pg, servers.moto_s3() as endpoint:
        os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1",
                          AWS_ENDPOINT_URL=endpoint)
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="seqk-bench")
        how = f"{args.batch} attempts a commit, back to back" if args.batch else "seqk's writer (commits sized by time)"
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; {how}; "
              f"{args.seconds:g} s a run, {args.runs} runs per number of writers, runs interleaved")
        counts = [int(x) for x in args.writers.split(",")]
        runs: dict[int, list[dict[str, Any]]] = {n: [] for n in counts}
        for r in range(args.runs):
            for n in counts:  # interleaved, so a change in the machine's load touches every N alike
                res = one_run(pg, endpoint, f"w{n}r{r}", n, args.seconds, args.batch, args.max_batch,
                             args.threads)
                runs[n].append(res)
                ok = "ok" if res["stored"] == res["distinct"] == res["written"] else "LOST OR DUPLICATED"
                print(f"  {n} writer(s), run {r + 1}: {res['attempts_s']:7.0f} attempts/s "
                      f"(steady {res['steady_s']:.0f}), "
                      f"{res['commits_s']:5.1f} commits/s, commit median {res['commit_median_s'] * 1000:4.0f} ms, "
                      f"{res['lost_races']} lost races, {res['written_again']} written again, "
                      f"PostgreSQL {res['pg_ms_per_commit']:.0f} ms CPU a commit, "
                      f"{res['cpu_ms_per_1000']:.0f} ms CPU per 1,000 attempts "
                      f"({'/'.join(f'{x:.0f}' for x in res['cpu_split'])} writers/PostgreSQL/moto); "
                      f"stored {res['stored']} / distinct {res['distinct']} / written {res['written']}: {ok}; "
                      f"load {res['load'][0]:.1f} -> {res['load'][1]:.1f}", flush=True)
                if args.verbose:
                    u = res["usage"]
                    print(f"    writers, per 1,000 attempts: {u[0]:.1f} ms user + {u[1]:.1f} ms system CPU, "
                          f"{u[2]:.0f} voluntary + {u[3]:.0f} involuntary context switches, {u[4]:.0f} page faults")
                    for w in res["each"]:
                        n_attempts, n_commits, begun, ended, cpu, busy, commit_cpu = w
                        print(f"    writer: {n_attempts} attempts in {n_commits} commits, from {begun:.2f} s to "
                              f"{ended:.2f} s, {cpu:.2f} s CPU, {busy:.2f} s committing, {commit_cpu:.2f} s CPU "
                              "in the committing thread (DuckDB's threads apart)")
        print("\nwriters | attempts/s (median; min-max) | steady attempts/s (median; min-max) | commits/s | "
              "commit median | lost races / commit | "
              "PostgreSQL CPU / commit | CPU per 1,000 attempts (writers + PostgreSQL + moto) | load")
        for n in counts:
            rs = runs[n]
            a = [x["attempts_s"] for x in rs]
            commits = sum(x["commits_s"] * x["elapsed"] for x in rs)
            loads = [v for x in rs for v in x["load"]]
            st = [x["steady_s"] for x in rs]
            print(f"{n:7d} | {statistics.median(a):8.0f} ({min(a):.0f}-{max(a):.0f}) | "
                  f"{statistics.median(st):8.0f} ({min(st):.0f}-{max(st):.0f}) | "
                  f"{statistics.median(x['commits_s'] for x in rs):9.1f} | "
                  f"{statistics.median(x['commit_median_s'] for x in rs) * 1000:10.0f} ms | "
                  f"{sum(x['lost_races'] for x in rs) / max(commits, 1):.2f} | "
                  f"{statistics.median(x['pg_ms_per_commit'] for x in rs):.0f} ms | "
                  f"{statistics.median(x['cpu_ms_per_1000'] for x in rs):.0f} ms | {min(loads):.1f}-{max(loads):.1f}")
        if args.probe:
            probe(pg, endpoint)
        if args.cold_reads:
            cold_reads(runs[counts[-1]][-1]["url"])


if __name__ == "__main__":
    main()
