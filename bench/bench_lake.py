"""Writes into a lake (PostgreSQL catalog + moto S3 on loopback), through seqk's own store door.

    python bench/bench_lake.py                    # 1, 2 and 4 writers, 200 attempts a commit, 8 s each
    python bench/bench_lake.py --batch 1000 --seconds 15

For each number of writer processes: attempts/s and commits/s into one fresh lake, all
writers at once, each appending batches of whole attempts (one call each) back to back with
`store.append_attempts`, the writer's own path; then a check that every attempt is there
once. Then cold reads (a fresh `seqk sql` process counting the attempts) before and after
`seqk lake compact`. PostgreSQL and moto are started here and stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from datetime import datetime
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def writer(url: str, seconds: float, batch: int, out: object) -> None:
    from seqk import store
    from seqk.records import AttemptRecord, CallRecord

    run_id = f"bench/{uuid.uuid4().hex[:8]}"
    written = commits = 0
    deadline = time.monotonic() + seconds
    index = 0
    while time.monotonic() < deadline:
        now = datetime.now()
        records = []
        for _ in range(batch):
            index += 1
            records.append(AttemptRecord(
                attempt_uid=str(uuid.uuid4()), run_id=run_id, generation=1, task_index=index,
                attempt_index=1, k=1, status="ok", success=index % 3 == 0, score=1.0, prompt="p" * 200,
                output="o" * 100, raw_eval_output="", judge_details=None, feedback=None, error=None,
                started_at=now, finished_at=now,
                calls=[CallRecord(role="actor", model="mock/x", prompt="p" * 200, output="o" * 100,
                                  input_tokens=50, cached_tokens=0, thinking_tokens=0, output_tokens=25,
                                  cost_usd=0.0, latency_s=0.01, retries=0, error=None, started_at=now)]))
        with store.connect(url, checkpoint=False) as con:
            store.append_attempts(con, records)
        written += batch
        commits += 1
    out.put((written, commits))  # type: ignore[attr-defined]


def seqk_sql(url: str, query: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "seqk", "sql", query, "--db", url, "--format", "csv"],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ))
    if done.returncode:
        raise SystemExit(done.stderr)
    return time.perf_counter() - start, done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writers", default="1,2,4")
    parser.add_argument("--batch", type=int, default=200, help="attempts per commit")
    parser.add_argument("--seconds", type=float, default=8.0, help="writing time per configuration")
    args = parser.parse_args()

    import boto3
    import servers

    ctx = get_context("spawn")
    with servers.postgres() as pg, servers.moto_s3() as endpoint:
        os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1",
                          AWS_ENDPOINT_URL=endpoint)
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="seqk-bench")
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
              f"{args.batch} attempts (+1 call each) per commit, {args.seconds:g} s per configuration")
        url = ""
        for n in [int(x) for x in args.writers.split(",")]:
            name = f"w{n}"
            url = f"ducklake:postgres:{servers.create_database(pg, name)};data=s3://seqk-bench/{name}/"
            from seqk import store

            with store.connect(url):  # create the lake before the clock starts
                pass
            from seqk.store import lake

            lake.close_all()
            queue = ctx.Queue()
            procs = [ctx.Process(target=writer, args=(url, args.seconds, args.batch, queue)) for _ in range(n)]
            start = time.perf_counter()
            for p in procs:
                p.start()
            results = [queue.get(timeout=args.seconds + 300) for _ in procs]
            for p in procs:
                p.join(timeout=60)
            elapsed = time.perf_counter() - start
            written, commits = sum(r[0] for r in results), sum(r[1] for r in results)
            _, stored = seqk_sql(url, "SELECT count(*) || '/' || count(DISTINCT attempt_uid) FROM attempts")
            total, distinct = (int(x) for x in stored.split("/"))
            ok = "ok" if total == distinct == written else "LOST OR DUPLICATED"
            print(f"{n} writer(s): {written / elapsed:8.0f} attempts/s, {commits / elapsed:5.1f} commits/s in all "
                  f"({written} attempts, {commits} commits in {elapsed:.1f} s, writers' start-up included); "
                  f"stored {total}, distinct {distinct}: {ok}")
        # Cold reads of the last (largest) lake: a fresh process each time.
        before = [seqk_sql(url, "SELECT count(*), sum(length(output)) FROM attempts")[0] for _ in range(3)]
        done = subprocess.run([sys.executable, "-m", "seqk", "lake", "compact", "--db", url, "--keep-hours", "0"],
                              capture_output=True, text=True, timeout=900)
        print("seqk lake compact:", done.stdout.strip() or done.stderr.strip())
        after = [seqk_sql(url, "SELECT count(*), sum(length(output)) FROM attempts")[0] for _ in range(3)]
        print(f"cold read (fresh `seqk sql` process, interpreter start included): median "
              f"{statistics.median(before):.2f} s before compaction, {statistics.median(after):.2f} s after")


if __name__ == "__main__":
    main()
