"""The lift's interval and test (`seqk.stats.paired_difference`): agreement and exact coverage.

Prints how many 2x2 tables of 1 to 25 tasks have an interval that excludes 0 while p >= 0.05
or the reverse; the lowest exact coverage of the 95% interval over a grid of n (10 to 100)
and flip rates P(seq only), P(pass only) in 0, 0.01, ..., 0.5 (one-way flips included); and
the highest rejection rate of p < 0.05 where the two rates are equal (the test's size).
Coverage is exact: every outcome of the flips weighted by its trinomial probability.

    python bench/bench_paired.py              # ~1 minute
"""

from __future__ import annotations

import argparse
from math import lgamma

import numpy as np

from seqk.stats import paired_difference

RATES = np.round(np.arange(0.0, 0.505, 0.01), 2)


def disagreements(max_n: int = 25) -> tuple[int, int]:
    bad = total = 0
    for n in range(1, max_n + 1):
        for both in range(n + 1):
            for b in range(n + 1 - both):
                for c in range(n + 1 - both - b):
                    found = paired_difference(both, b, c, n - both - b - c)
                    bad += (found.low > 0 or found.high < 0) != (found.p_value < 0.05)
                    total += 1
    return bad, total


def grid(n: int) -> tuple[float, tuple[float, float], float, float]:
    """Lowest coverage at n (and where), highest size, mean coverage."""
    pairs = [(b, c) for b in range(n + 1) for c in range(n + 1 - b)]
    b, c = (np.array(x) for x in zip(*pairs, strict=True))
    found = [paired_difference(0, int(x), int(y), n - int(x) - int(y)) for x, y in pairs]
    low, high = np.array([f.low for f in found]), np.array([f.high for f in found])
    reject = np.array([f.p_value < 0.05 for f in found])
    log_count = (lgamma(n + 1) - np.vectorize(lgamma)(b + 1) - np.vectorize(lgamma)(c + 1)
                 - np.vectorize(lgamma)(n - b - c + 1))
    worst, where, size, covered_sum, cells = 1.0, (0.0, 0.0), 0.0, 0.0, 0
    for p_b in RATES:
        for p_c in RATES:
            log = log_count.copy()
            for count, p in ((b, p_b), (c, p_c), (n - b - c, 1 - p_b - p_c)):
                log = np.where(count > 0, -np.inf, log) if p == 0 else log + count * np.log(p)
            weight = np.exp(log)
            covered = float(weight[(low <= p_b - p_c) & (p_b - p_c <= high)].sum())
            covered_sum, cells = covered_sum + covered, cells + 1
            if covered < worst:
                worst, where = covered, (float(p_b), float(p_c))
            if p_b == p_c:
                size = max(size, float(weight[reject].sum()))
    return worst, where, size, covered_sum / cells


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    bad, total = disagreements()
    print(f"interval excludes 0 vs p < 0.05: {bad} of {total} tables of 1-25 tasks disagree")
    results = {n: grid(n) for n in range(10, 101, 5)}
    n, (worst, where, _, _) = min(results.items(), key=lambda item: item[1][0])
    print(f"lowest exact coverage of the 95% interval: {worst:.4f} at n={n}, "
          f"P(seq only)={where[0]}, P(pass only)={where[1]} "
          f"(n = 10, 15, ..., 100; flip rates 0, 0.01, ..., 0.5: {len(RATES) ** 2} cells each)")
    print(f"mean coverage over those cells: {np.mean([r[3] for r in results.values()]):.4f}")
    size_n, size = max(((n, r[2]) for n, r in results.items()), key=lambda item: item[1])
    print(f"highest rejection rate of p < 0.05 at equal flip rates: {size:.4f} (n={size_n})")


if __name__ == "__main__":
    main()
