"""Where a run's CPU goes, by component, from a py-spy profile (issue 30's profile).

    py-spy record -r 500 -f raw --threads -o /tmp/chains.raw -- \\
        python bench/bench_chains.py --skip-frontier --repeat 1
    python bench/pyspy_shares.py /tmp/chains.raw

py-spy samples every thread that is on a CPU (DuckDB's work in the writer's thread included,
with the GIL released); imports are left out (a run's start-up is bench/bench_startup.py's). Each
sample is charged to the innermost frame that names a component; the writer's and the
registration's threads are charged whole. Shares, not seconds: on 2 cores shared with other work
the shares move far less than the seconds.
"""

from __future__ import annotations

import argparse
import collections
import re

COMPONENTS = (
    ("writer: DuckDB appends, opens, checkpoints", ("Writer._write",)),
    ("registration (prepare)", ("prepare (seqk/run/prepare.py)", "seqk-prepare")),
    ("JSON encode", ("json/encoder", "JsonPayload", "dumps (json", "encode_body (seqk")),
    ("JSON decode", ("json/decoder", "loads (json", "ClientResponse.json", "decode_reply (seqk")),
    ("aiohttp: connections", ("BaseConnector.connect", "TCPConnector", "aiohappyeyeballs")),
    ("aiohttp: requests and replies", ("aiohttp/",)),
    ("the seq@k prompt", ("seqk/benchmark/prompt.py",)),
    ("ARC grading and feedback", ("benchmarks/arcagi2", "benchmarks/_common")),
    ("observer and progress", ("seqk/run/observer.py", "seqk/render/")),
    ("pydantic", ("pydantic",)),
    ("pool, limiter, retry, metering", ("seqk/models/pool.py", "seqk/models/limiter.py", "seqk/models/retry.py",
                                        "seqk/run/metering.py", "seqk/models/registry.py")),
    ("scheduler", ("seqk/run/engine.py",)),
    ("asyncio event loop", ("asyncio/", "selectors.py")),
)
WHOLE = ("writer: DuckDB appends, opens, checkpoints", "registration (prepare)")
SKIP = ("_find_and_load", "_make_ssl_context", "warm_imports")


def shares(path: str) -> tuple[int, collections.Counter[str]]:
    """(samples counted, samples per component) of a py-spy raw file."""
    found: collections.Counter[str] = collections.Counter()
    total = 0
    with open(path) as lines:
        stacks = [line.rstrip().rpartition(" ") for line in lines]
    for stack, _, n in stacks:
        frames = [re.sub(r":\d+\)", ")", f) for f in stack.split(";")]
        if any(s in f for f in frames for s in SKIP):
            continue
        total += int(n)
        chosen = next((name for name, keys in COMPONENTS if name in WHOLE
                       and any(k in f for f in frames for k in keys)), None)
        for frame in reversed(frames):
            if chosen:
                break
            chosen = next((name for name, keys in COMPONENTS if any(k in frame for k in keys)), None)
        found[chosen or "other"] += int(n)
    return total, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("raw", help="py-spy record -f raw output")
    args = parser.parse_args()
    total, found = shares(args.raw)
    print(f"{total} samples (imports left out)")
    for name, n in found.most_common():
        print(f"{n / total:6.1%}  {name}")


if __name__ == "__main__":
    main()
