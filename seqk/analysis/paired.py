"""A paired comparison of two runs' figures on the tasks they share (same task_index, same
content): the difference with its interval and one p-value that agrees with it, the flips, the
smallest difference the comparison could detect, and, where errors struck, the range they leave.

- Both sides 0/1 per task and no chain censored before t: Tango's continuity-corrected score
  interval and test (`stats.paired_difference`), exactly as for a 2x2 table.
- Otherwise (a censored chain, Chen's fractional pass@t, chains): a paired task bootstrap that
  re-estimates each side's figure in every resample (the Kaplan-Meier hazards included), with the
  percentile interval and the p-value read from the same replicates (`stats.percentile_test`), so
  the interval excludes 0 exactly when p < 0.05.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from seqk import store
from seqk.analysis.draws import shared_keys, shared_tasks
from seqk.analysis.memo import remembered
from seqk.analysis.survival import Figure, RunChains, curve, read_chains, value_policy
from seqk.power import detectable_lift, discordance_upper_limit
from seqk.stats import (
    DEFAULT_N_BOOT,
    DEFAULT_SEED,
    Estimate,
    Types,
    bootstrap_tests,
    paired_difference,
)
from seqk.store import queries

ERROR_SHARE_FOR_RANGE = 0.01
"""A comparison whose compared slots are more than 1% errors prints the range errors leave."""


@dataclass(frozen=True)
class Comparison:
    """Run a against run b at t on the tasks both have a value for, paired by task."""

    a_run_id: str
    b_run_id: str
    t: int
    a_value: float | None
    b_value: float | None
    difference: Estimate
    """a - b with its 95% interval (see `interval`); n = shared tasks."""
    n_a_only: int
    """Tasks a solved and b failed, among tasks whose values are 0/1 (for seq@K vs pass@K: failed
    by pass@K, solved by seq@K)."""
    n_b_only: int
    p_value: float | None
    """Two-sided p-value of "no difference" from the procedure whose interval is printed: below
    0.05 exactly when the interval excludes 0. None only when there is no interval."""
    interval: str = "bootstrap"
    """'score' (`stats.paired_difference`, 0/1 outcomes, nothing censored) or 'bootstrap'."""
    q_value: float | None = None
    """Benjamini-Hochberg q-value across the report's table (set by the report)."""
    discordance: float | None = None
    """The expected share of tasks only one run solves: mean of a (1 - b) + b (1 - a)."""
    detectable: float | None = None
    """The smallest difference this many tasks detect with 80% power at 0.05 (seqk.power, the
    discordance at its upper 95% limit); None when none is detectable."""
    error_share: float = 0.0
    """Errored slots among the compared runs' slots on the shared tasks."""
    if_failures: float | None = None
    """a - b with every errored attempt counted as a failure (None without errors)."""
    if_successes: float | None = None
    """a - b with every errored attempt counted as a success at its index."""

    @property
    def shows_range(self) -> bool:
        """More than 1% of the compared slots are errors: the range is printed beside p."""
        return self.error_share > ERROR_SHARE_FOR_RANGE and self.if_failures is not None


def figure_at(run: RunChains, t: int, policy: str) -> Figure:
    """The run's metric@t as a Figure (seq@t by Kaplan-Meier, pass@t by Chen)."""
    return curve(run, policy).at(t)


def shared_figures_at(a: RunChains, b: RunChains, t: int, policy: str) -> tuple[Figure, Figure]:
    """Both runs' metric@t on the tasks both have a value for at t, paired row by row in the order
    of their keys: what paired_figures makes of figure_at's two figures, with the runs' shared
    tasks intersected once for every t and policy (draws.shared_tasks) and each figure's rows
    taken once."""
    ia, ib = shared_tasks(a.keys, b.keys)
    ca, cb = curve(a, policy), curve(b, policy)
    both = ~np.isnan(ca.values[ia, t - 1]) & ~np.isnan(cb.values[ib, t - 1])
    return ca.at(t, ia[both]), cb.at(t, ib[both])


def paired_figures(a: Figure, b: Figure, a_run_id: str, b_run_id: str, t: int, *, name: str,
                   seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> Comparison:
    """a - b on the shared tasks (module docstring)."""
    ia, ib = shared_keys(a.keys, b.keys)
    return paired_rows(a.subset(ia), b.subset(ib), a_run_id, b_run_id, t, name=name, seed=seed, n_boot=n_boot)


def paired_rows(fa: Figure, fb: Figure, a_run_id: str, b_run_id: str, t: int, *, name: str,
                seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> Comparison:
    """paired_figures on two figures already paired task by task (row i of each the same task)."""
    n = len(fa.keys)
    if not n:
        return Comparison(a_run_id, b_run_id, t, None, None, Estimate(None, None, None, 0), 0, 0, None)
    va, vb = fa.values, fb.values
    a_only, b_only = int(np.sum((va == 1) & (vb == 0))), int(np.sum((va == 0) & (vb == 1)))
    discordance = float(np.mean(va * (1 - vb) + vb * (1 - va)))
    # no disagreement seen is no proof there is none: the discordance at its upper 95% limit
    detectable = detectable_lift(n, discordance_upper_limit(discordance * n, n))
    zero_one = bool(np.isin(va, (0.0, 1.0)).all() and np.isin(vb, (0.0, 1.0)).all()
                    and not fa.censored.any() and not fb.censored.any())
    if zero_one:
        both = int(np.sum((va == 1) & (vb == 1)))
        found = paired_difference(both, a_only, b_only, n - both - a_only - b_only)
        return Comparison(a_run_id, b_run_id, t, float(va.mean()), float(vb.mean()),
                          Estimate(found.estimate, found.low, found.high, n), a_only, b_only,
                          found.p_value, "score", discordance=discordance, detectable=detectable)
    split = fa.features.shape[1]

    def difference(m: np.ndarray) -> np.ndarray:
        return fa.estimate(m[:, :split]) - fb.estimate(m[:, split:])

    test = bootstrap_tests(Types.from_array(np.hstack([fa.features, fb.features])),
                           {name: difference}, name=name, seed=seed, n_boot=n_boot)[name]
    return Comparison(a_run_id, b_run_id, t, fa.point, fb.point, test.estimate, a_only, b_only,
                      test.p_value, discordance=discordance, detectable=detectable)


def compare_chains(a: RunChains, b: RunChains, t: int, *, errors_as_failures: bool = False,
                   a_figure: Figure | None = None, b_figure: Figure | None = None, name: str,
                   seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> Comparison:
    """Run a against run b at t (their own figures unless given, e.g. a pass@k run's sample 1),
    with the error range where errors struck the compared slots."""
    policy = value_policy(errors_as_failures)
    if a_figure is None and b_figure is None:
        found = paired_rows(*shared_figures_at(a, b, t, policy), a.run_id, b.run_id, t, name=name, seed=seed,
                            n_boot=n_boot)
    else:
        found = paired_figures(a_figure or figure_at(a, t, policy), b_figure or figure_at(b, t, policy),
                               a.run_id, b.run_id, t, name=name, seed=seed, n_boot=n_boot)
    share = _error_share(a, b)
    if not share:
        return found
    ends = []
    for policy in ("failures", "successes"):
        fa, fb = shared_figures_at(a, b, t, policy)
        ends.append(fa.point - fb.point if len(fa.keys) else None)
    return replace(found, error_share=share, if_failures=ends[0], if_successes=ends[1])


def _error_share(a: RunChains, b: RunChains) -> float:
    """Errored slots among both runs' slots on the tasks they share."""
    ia, ib = shared_tasks(a.keys, b.keys)
    errors = slots = 0.0
    for run, rows in ((a, ia), (b, ib)):
        err = run.per_task(run.n_error.astype(float))[rows]
        errors += err.sum()
        slots += err.sum() + run.per_task(run.n_valid.astype(float))[rows].sum()
    return float(errors / slots) if slots else 0.0


def compare_runs(run_a: str, run_b: str, *, t: int | None = None, db: store.DbLike = None,
                 errors_as_failures: bool = False, seed: int = DEFAULT_SEED,
                 n_boot: int = DEFAULT_N_BOOT) -> Comparison:
    """Paired comparison of two runs at t (default: the smaller K) on their shared tasks:
    difference a - b with its 95% interval, flips, p-value."""
    with store.connect(db, read_only=True) as con:
        a_id, b_id = (store.resolve_run_id(con, pattern) for pattern in (run_a, run_b))
        if t is None:
            t = min(r["k"] for r in queries.report_runs(con, run_ids=[a_id, b_id], benchmark=None,
                                                                        model=None))
        return compare_on(con, a_id, b_id, t, errors_as_failures=errors_as_failures, seed=seed,
                          n_boot=n_boot)


def compare_on(con: Any, a_id: str, b_id: str, t: int, *, errors_as_failures: bool = False,
               seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT,
               chains: dict[str, RunChains] | None = None) -> Comparison:
    """compare_runs on an open connection, for exact run ids (`chains`: both runs' rows, when the
    caller has read them), remembered (seqk.analysis.memo)."""
    if chains is None:
        chains = read_chains(con, [a_id, b_id])
    return compare_read(a_id, b_id, t, chains, errors_as_failures=errors_as_failures, seed=seed, n_boot=n_boot)


def compare_read(a_id: str, b_id: str, t: int, chains: dict[str, RunChains], *, errors_as_failures: bool = False,
                 seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_N_BOOT) -> Comparison:
    """compare_on over rows read already (`chains`: both runs' rows; a run absent has no
    attempts), remembered (seqk.analysis.memo); no SQL, so that the t's can run on threads."""
    name = f"compare:{a_id}:{b_id}:{t}"
    if a_id not in chains or b_id not in chains:
        return Comparison(a_id, b_id, t, None, None, Estimate(None, None, None, 0), 0, 0, None)
    a, b = chains[a_id], chains[b_id]
    return remembered("compare", (a, b, t, errors_as_failures, name, seed, n_boot), lambda: compare_chains(
        a, b, t, errors_as_failures=errors_as_failures, name=name, seed=seed, n_boot=n_boot))
