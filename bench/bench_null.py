"""Where feedback does nothing, how often does `seqk report --compare` claim a finding, and how far
are its figures from the truth? R replicates of bench/null_world.py's world (every attempt and
sample an independent draw with its task's own chance, 10% of requests failing for good at random)
written into one database, then reported through the CLI as a user would.

    python bench/bench_null.py                           # 200 replicates of 150 tasks
    python bench/bench_null.py --replicates 400 --tasks 150 --chunk 100

Prints the bias of each figure over the replicates (mean of estimate - truth, with its Monte Carlo
standard error): seq@t, seqk's estimate and the complete-case one it replaced; every seq@k frontier
cell and resample-until-success cell; and the share of reports that claim a finding: a lift with
p < 0.05, a budget where a block's simultaneous band puts seq@k above its partner. Target: every
|bias| < 0.005 and every share at most the nominal 5%; the pass@m block, not spend-matched, is
printed to show the artefact it was (issue 27).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import null_world as nw  # noqa: E402


def report(db: Path) -> dict:
    """`seqk report --compare --format json` on the database, in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-m", "seqk", "report", "--compare", "--format", "json",
                           "--db", str(db)], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"seqk report failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def summarise(values: list[float]) -> str:
    a = np.array(values)
    return f"{a.mean():+.4f} ± {a.std(ddof=1) / np.sqrt(len(a)):.4f}"


def main() -> None:
    """Write the replicates, report them through the CLI, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=150)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--error-rate", type=float, default=0.1)
    parser.add_argument("--chunk", type=int, default=100, help="replicates per database (one report each)")
    parser.add_argument("--seed", type=int, default=2027)
    args = parser.parse_args()
    world = nw.World(n_tasks=args.tasks, chains=args.chains, error_rate=args.error_rate)
    errors: dict[tuple, list[float]] = {}
    claims: dict[str, int] = {}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for first in range(0, args.replicates, args.chunk):
            n = min(args.chunk, args.replicates - first)
            db = Path(folder) / f"null-{first}.duckdb"
            draws = nw.write(db, world, n, seed=args.seed + first, first=first)
            data = report(db)
            runs = {r["run_id"]: r for r in data["runs"]}
            blocks: dict[str, dict[str, dict]] = {}
            for b in data["equal_budget"]:
                blocks.setdefault(b["seq_run_id"], {})[b["partner"]] = b
            for i, found in enumerate(draws, start=first):
                ids = nw.run_ids(i)
                seq = runs[ids["seq"]]
                for point in seq["curve"]:
                    truth = nw.truth_value(found.p, point["t"])
                    errors.setdefault(("seq@t", point["t"]), []).append(point["value"] - truth)
                    errors.setdefault(("seq@t complete case (before)", point["t"]), []).append(
                        point["first_t_value"] - truth)
                for point in runs[ids["pass"]]["curve"][:world.k]:
                    errors.setdefault(("pass@t", point["t"]), []).append(
                        point["value"] - nw.truth_value(found.p, point["t"]))
                lift = seq["lift"]
                claims["lift p < 0.05"] = claims.get("lift p < 0.05", 0) + (lift["p_value"] < 0.05)
                mine = blocks.get(ids["seq"], {})
                for partner, b in mine.items():
                    key = f"{partner}: a budget where seq@k is better"
                    claims[key] = claims.get(key, 0) + bool(b["seq_better"])
                    for c in b["cells"]:
                        kind = "seq cell" if c["series"].startswith("seq@k") else f"{partner} cell"
                        if partner == "pass_at_m" and kind == "seq cell":
                            continue  # the same seq cells as in the other blocks
                        errors.setdefault((kind, c["width"], c["depth"]), []).append(
                            c["value"] - nw.truth_value(found.p, c["width"] * c["depth"]))
                stopping = [b for p, b in mine.items() if p != "pass_at_m"]
                key = "any claim: lift or a stopping-matched budget"
                claims[key] = claims.get(key, 0) + (lift["p_value"] < 0.05 or any(b["seq_better"] for b in stopping))
            print(f"  {first + n} replicates reported ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    print(f"null world: {args.replicates} replicates of {args.tasks} tasks, {args.chains} chains x "
          f"K={world.k}, pass@{world.pass_k}, {args.error_rate:.0%} of requests failing for good "
          "(seqk report --compare --format json, 2000 resamples)")
    print("bias (mean of estimate - truth ± its Monte Carlo standard error):")
    for key in sorted(errors, key=lambda k: (k[0], k[1:])):
        if key[0].endswith("cell") and not key[0].startswith("seq") and key[1] > 1 and key[2] > 1:
            continue  # w x d > w' x d' cells of resampling repeat the 1 x (w d) ones' values
        print(f"  {' '.join(map(str, key)):<44} {summarise(errors[key])}")
    print("share of reports claiming a finding (target: at most 5%):")
    for key, count in claims.items():
        print(f"  {key:<58} {count / args.replicates:6.1%} ({count}/{args.replicates})")


if __name__ == "__main__":
    main()
