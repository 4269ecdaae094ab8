"""Does the equal-budget block's interval and simultaneous band cover the truth, where the runs truly
differ and where they do not? R replicates of bench/null_world.py's world (each task its own chance
p_i ~ Beta(0.6, 1.2), 10% of requests failing for good at random, 150 tasks, a seq@k run of 4
chains x 3 attempts with feedback binary, a seq@k run without feedback, a pass@12 run), with
feedback adding `--boost` to every attempt after the first (0: the null world), each compared at
equal budget by seqk's own estimator (seqk.analysis.budget.compare_at_equal_spend), fed the arrays
the database would give it (null_world.chains_of).

    python bench/bench_band.py                          # 600 worlds per scenario, 1,000 resamples
    python bench/bench_band.py --replicates 100 --boost 0.15 --partner none_feedback

The truth at a budget is each side's frontier there (the best mixture of at most two cells whose
expected spend is within it: null_world.truth_frontier over the cells' true values and spends),
seq minus partner. Prints, per scenario: the share of budget rows whose 95% interval covers the
truth (pointwise), the share of worlds whose band covers it at every budget (simultaneous), the
mean error and its sd beside the mean interval width, and the share of worlds claiming a budget
where seq@k is better (the band above 0) or the partner is. Targets: coverage near 95%; in the null
world, seq@k claimed better in at most 5% of worlds (the partner, which has more cells to choose
from, may truly be better).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import null_world as nw  # noqa: E402

from seqk.analysis import budget, cells  # noqa: E402
from seqk.analysis.compare_budget import crossover_of  # noqa: E402

SCENARIOS = (("none_feedback", 0.0), ("resample_until_success", 0.0), ("none_feedback", 0.15),
             ("resample_until_success", 0.15))


def scenario(world: nw.World, partner: str, replicates: int, n_boot: int, seed: int) -> dict[str, float]:
    """Coverage, errors and claims of `replicates` worlds of one scenario."""
    rng = np.random.default_rng(seed)
    seq_shapes = [(w, d) for w in range(1, world.chains + 1) for d in range(1, world.k + 1)]
    until = [(w, d) for w in range(1, world.pass_k + 1) for d in range(1, world.pass_k // w + 1)]
    covered = rows = worlds = banded = covered_worlds = seq_claims = partner_claims = either = 0
    crossed = established = 0
    errors, widths = [], []
    for r in range(replicates):
        found = nw.draw(world, rng)
        runs = nw.chains_of(found, world, r)
        seq = cells.seq_frontier(runs["seq"], "censored", "tokens")
        truth_seq = [nw.truth_cell(found.p, w, d, boost=world.boost) for w, d in seq_shapes]
        if partner == "none_feedback":
            side = cells.seq_frontier(runs["none"], "censored", "tokens")
            truth_partner = [nw.truth_cell(found.p, w, d) for w, d in seq_shapes]
        else:
            side = cells.pass_frontier(runs["pass"], "censored", "tokens", stopping=True)
            truth_partner = [nw.truth_cell(found.p, w, d) for w, d in until]
        out = budget.compare_at_equal_spend(seq, side, name=f"band:{partner}:{r}", n_boot=n_boot)
        worlds += 1
        seq_claims += bool(out.a_better)
        partner_claims += bool(out.b_better)
        either += bool(out.a_better or out.b_better)
        crossing = crossover_of(out.rows)
        crossed += crossing is not None
        established += bool(crossing is not None and crossing.established)
        all_in, any_band = True, False
        for row in out.rows:
            truth = nw.truth_frontier(truth_seq, row.budget) - nw.truth_frontier(truth_partner, row.budget)
            if np.isnan(truth):
                continue
            if row.difference is not None and row.difference.low is not None:
                rows += 1
                covered += row.difference.low <= truth <= row.difference.high
                errors.append(row.difference.value - truth)
                widths.append(row.difference.high - row.difference.low)
            if row.band is not None:
                any_band = True
                all_in &= row.band[0] <= truth <= row.band[1]
        banded += any_band
        covered_worlds += any_band and all_in
    return {"pointwise": covered / max(rows, 1), "rows": rows,
            "simultaneous": covered_worlds / max(banded, 1), "worlds": banded,
            "error": float(np.mean(errors)), "error_sd": float(np.std(errors)), "width": float(np.mean(widths)),
            "seq_better": seq_claims / worlds, "partner_better": partner_claims / worlds,
            "either": either / worlds, "crossed": crossed / worlds, "established": established / worlds}


def main() -> None:
    """Parse arguments, run the scenarios, print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=600)
    parser.add_argument("--tasks", type=int, default=150)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--boost", type=float, default=None, help="one scenario's boost (default: 0 and 0.15)")
    parser.add_argument("--partner", choices=("none_feedback", "resample_until_success"), default=None)
    parser.add_argument("--seed", type=int, default=101)
    args = parser.parse_args()
    chosen = [(p, b) for p, b in SCENARIOS if (args.partner in (None, p)) and (args.boost in (None, b))]
    if not chosen:
        chosen = [(args.partner or "resample_until_success", args.boost or 0.0)]
    for i, (partner, boost) in enumerate(chosen):
        start = time.perf_counter()
        world = nw.World(n_tasks=args.tasks, boost=boost)
        f = scenario(world, partner, args.replicates, args.n_boot, args.seed + i)
        print(f"{partner:<23} boost {boost:.2f}: pointwise {f['pointwise']:.3f} of {f['rows']} rows, "
              f"simultaneous {f['simultaneous']:.3f} of {f['worlds']} worlds; error {f['error']:+.4f} "
              f"(sd {f['error_sd']:.4f}), interval width {f['width']:.3f}; seq@k claimed better in "
              f"{f['seq_better']:.1%} of worlds, the partner in {f['partner_better']:.1%}, either in "
              f"{f['either']:.1%}; the estimates cross in {f['crossed']:.1%}, established in {f['established']:.1%} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
