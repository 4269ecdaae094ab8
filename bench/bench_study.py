"""Sequential studies against fixed-n runs, in simulated worlds (seqk.anytime's rule, the one
`seqk study` stops on).

For each lift D (default 0, 0.05, 0.10, 0.20) it simulates R studies of N tasks, each task's
paired difference +1 with probability (psi + D)/2, -1 with (psi - D)/2, else 0 (McNemar's world, psi
the discordance), looked at after every window of W tasks, and prints: the share that decide
seq better (and the wrong sign), the mean share of the N tasks used, the mean share of money saved
against running all N tasks in both arms (spend per task is the same for every task here, so the
money saved is the share of tasks not run), and against it two fixed-n runs analysed with the
report's paired test (seqk.stats.paired_difference, Tango's score test, at alpha): one on all N
tasks (what a study that never stops pays) and one on as many tasks as the study used on average
(the same budget). With --chen, the partner's value is Chen's pass@3 over 12 samples (a fraction),
the seq arm's a 0/1 outcome, the fixed-n test a paired t-test (scipy).

    python bench/bench_study.py                      # R = 2000, N = 600, W = 32, psi = 0.3; ~1 minute
    python bench/bench_study.py --replicates 500 --tasks 300 --discordance 0.5
"""

from __future__ import annotations

import argparse
import time
from math import comb

import numpy as np

from seqk.anytime import stopping_looks
from seqk.stats import paired_difference


def mcnemar_world(rng: np.random.Generator, shape: tuple[int, int], lift: float, psi: float) -> np.ndarray:
    return rng.choice([-1.0, 0.0, 1.0], size=shape, p=[(psi - lift) / 2, 1 - psi, (psi + lift) / 2])


def chen_world(rng: np.random.Generator, shape: tuple[int, int], lift: float) -> np.ndarray:
    """seq@3 outcome minus the partner's Chen pass@3 over 12 samples; per-task success p ~ U(0.05, 0.6)."""
    p = rng.uniform(0.05, 0.6, size=shape)
    partner_k = rng.binomial(12, p)
    partner = 1 - np.vectorize(lambda c: comb(12 - c, 3) / comb(12, 3))(partner_k)
    seq = rng.random(shape) < np.clip(1 - (1 - p) ** 3 + lift, 0, 1)
    return seq - partner


def fixed_n_decides(d: np.ndarray, n: int, alpha: float, chen: bool) -> tuple[float, float]:
    """(share deciding seq better, share deciding the wrong sign) of fixed-n tests on the first n tasks."""
    if chen:
        from scipy.stats import ttest_1samp

        result = ttest_1samp(d[:, :n], 0.0, axis=1)
        seq = (result.pvalue < alpha) & (result.statistic > 0)
        return float(seq.mean()), float(((result.pvalue < alpha) & (result.statistic < 0)).mean())
    seq = wrong = 0
    for row in d[:, :n]:
        b, c = int((row > 0).sum()), int((row < 0).sum())
        found = paired_difference(0, b, c, n - b - c, alpha=alpha)
        seq += found.low > 0
        wrong += found.high < 0
    return seq / len(d), wrong / len(d)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--tasks", type=int, default=600)
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--discordance", type=float, default=0.3)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--lifts", type=float, nargs="+", default=[0.0, 0.05, 0.10, 0.20])
    parser.add_argument("--chen", action="store_true", help="the partner's value is Chen's pass@3 of 12 samples")
    parser.add_argument("--seed", type=int, default=20260101)
    args = parser.parse_args()
    n, looks = args.tasks, list(range(args.window, args.tasks + 1, args.window))
    if looks[-1] != n:
        looks.append(n)
    world = "Chen pass@3 of 12 partner" if args.chen else f"McNemar, psi = {args.discordance}"
    print(f"{args.replicates} worlds per lift, {n} tasks, a look every {args.window}, alpha = {args.alpha}, {world}")
    print("| lift | study: decides seq better | wrong sign | mean tasks used | mean money saved "
          "| fixed n = all tasks: decides | fixed n = the study's mean tasks: n, decides |")
    print("|---|---|---|---|---|---|---|")
    start = time.perf_counter()
    for lift in args.lifts:
        rng = np.random.default_rng([args.seed, int(lift * 1000)])
        d = (chen_world(rng, (args.replicates, n), lift) if args.chen
             else mcnemar_world(rng, (args.replicates, n), lift, args.discordance))
        code, used = stopping_looks(d, looks=looks, alpha=args.alpha)
        share_used = used.mean() / n
        same_budget = max(1, round(used.mean()))
        full_seq, _ = fixed_n_decides(d, n, args.alpha, args.chen)
        budget_seq, _ = fixed_n_decides(d, same_budget, args.alpha, args.chen)
        print(f"| {lift:.2f} | {np.mean(code == 1):.1%} | {np.mean(code == -1):.1%} | {share_used:.1%} "
              f"| {1 - share_used:.1%} | {full_seq:.1%} | {same_budget}, {budget_seq:.1%} |")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
