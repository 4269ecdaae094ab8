"""What a study would cost before it runs (`seqk plan study.yaml`): for a lift of D, the tasks and
US$ to a decision simulated from the study's own rule (seqk.anytime.stopping_looks: the same
sequence, looks after each window, margin and alpha), beside the fixed-n figures of today's
`seqk plan` (McNemar's test at 80% power, seqk.stats).

The simulated world is McNemar's: each task's paired difference is +1 with probability
(psi + D) / 2, -1 with (psi - D) / 2, else 0, psi the discordance (the share of tasks one arm
solves and the other does not). psi is the stored pair's when one has been measured (the study's
own entered tasks first, then the seq run's same-k pass@k partner), else seqk's default 0.3, and
the plan says which. A partner whose values are fractions (Chen's pass@K over more samples) makes
smaller differences than this world, so the figures lean to more tasks, not fewer.
"""

from __future__ import annotations

import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from seqk import store
from seqk.anytime import stopping_looks
from seqk.config.study import StudySpec
from seqk.errors import BadInput
from seqk.power import DEFAULT_DISCORDANCE, tasks_needed
from seqk.run.plan import plan_run
from seqk.run.study_record import stored_state
from seqk.store import queries

DEFAULT_LIFTS = (0.05, 0.1, 0.2)
"""The lifts a plan shows when none is asked for (those below the discordance)."""
POWER = 0.8


@dataclass(frozen=True)
class PlanRow:
    """The study's rule in worlds with one lift, against a fixed-n test."""

    lift: float
    decided_seq: float
    """Share of simulated studies that decide seq_better."""
    decided: float
    """Share that decide anything (a sign, or no practical difference)."""
    mean_tasks: float
    """Mean tasks used (an undecided study uses every task)."""
    median_tasks: float
    mean_cost_usd: float | None
    """mean_tasks x the spend per task of both arms (None when unknown)."""
    fixed_n_tasks: int | None
    """Tasks McNemar's test needs for 80% power at alpha (None when the lift is not below psi)."""
    fixed_n_cost_usd: float | None


@dataclass
class StudyPlan:
    """`seqk plan study.yaml`, as data."""

    study_id: str
    state: str
    """'new study', or where a stored one stands."""
    n_available: int
    window: int
    alpha: float
    margin: float
    discordance: float
    discordance_source: str
    cost_per_task_usd: float | None
    """Both arms' spend per task: measured on the study's entered tasks, else a rough estimate."""
    cost_source: str
    replicates: int
    null_decided: float
    """Share of simulated studies in a world with no lift that decide a sign (at most alpha)."""
    rows: list[PlanRow] = field(default_factory=list)


def simulate(n_tasks: int, window: int, lift: float, discordance: float, *, alpha: float, margin: float,
             replicates: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(decision code, tasks used) of `replicates` simulated studies (seqk.anytime.stopping_looks)."""
    rng = np.random.default_rng([seed, zlib.crc32(f"{lift:.6f}/{discordance:.6f}".encode())])
    p_up, p_down = (discordance + lift) / 2, (discordance - lift) / 2
    looks = list(range(window, n_tasks + 1, window))
    if not looks or looks[-1] != n_tasks:
        looks.append(n_tasks)
    codes, used = [], []
    for start in range(0, replicates, 500):  # a few MB at a time
        size = min(500, replicates - start)
        d = rng.choice([-1.0, 0.0, 1.0], size=(size, n_tasks), p=[p_down, 1 - discordance, p_up])
        code, n = stopping_looks(d, looks=looks, alpha=alpha, margin=margin)
        codes.append(code)
        used.append(n)
    return np.concatenate(codes), np.concatenate(used)


def plan(study: StudySpec, db: store.DbLike, *, lift: float | None = None,
         replicates: int = 2000) -> StudyPlan:
    """The plan of `study` against the database `db` (read only; nothing is written)."""
    n = len(study.order)
    state, psi, source, cost, cost_source = "new study", None, "", None, ""
    if store.open(db).exists():
        psi, source, state, cost, cost_source = _measured(study, db)
    if psi is None:
        psi, source = DEFAULT_DISCORDANCE, f"assumed ({DEFAULT_DISCORDANCE}, seqk's default: no pair measured yet)"
    if cost is None:
        cost, cost_source = _rough_cost(study)
    if lift is not None and not 0 < lift < psi:
        raise BadInput(f"--lift {lift}: expected a lift between 0 and the discordance {psi:.3f}")
    lifts = [lift] if lift is not None else [d for d in DEFAULT_LIFTS if d < psi]
    code, _ = simulate(n, study.window, 0.0, psi, alpha=study.alpha, margin=study.margin,
                       replicates=replicates, seed=study.seed)
    out = StudyPlan(study.study_id, state, n, study.window, study.alpha, study.margin, psi, source, cost,
                    cost_source, replicates, float(np.mean((code == 1) | (code == -1))))
    for d in lifts:
        code, used = simulate(n, study.window, d, psi, alpha=study.alpha, margin=study.margin,
                              replicates=replicates, seed=study.seed)
        fixed = tasks_needed(d, psi, study.alpha, POWER)
        out.rows.append(PlanRow(d, float(np.mean(code == 1)), float(np.mean(code != 0)), float(used.mean()),
                                float(np.median(used)), None if cost is None else float(used.mean()) * cost,
                                fixed, None if cost is None else fixed * cost))
    return out


def _measured(study: StudySpec, db: store.DbLike) -> tuple[float | None, str, str, float | None, str]:
    """(discordance, its source, the study's state, spend per task, its source) from the database."""
    state = stored_state(study, db)
    psi, source, cost, cost_source = None, "", None, ""
    where = "new study"
    if state.updates:
        last = state.updates[-1]
        where = (f"stored: {last.n_tasks} tasks entered, {last.decision}"
                 + (f", stopped ({last.stop_reason})" if last.stop_reason else ""))
    entered = state.entered
    if len(entered) >= 20:
        flips = sum(1 for r in entered if r["seq_low"] != r["partner_low"] or r["seq_high"] != r["partner_high"])
        if flips:
            psi = flips / len(entered)
            source = f"measured: {flips} of the study's {len(entered)} entered tasks differ between the arms"
    if psi is None:
        with store.connect(db, read_only=True) as con:
            pair = next(iter(queries.pair_discordance(con, run_id=study.seq.run_id)), None)
        if pair and pair["pass_run_id"] == study.partner.run_id and pair["n_seq_only"] + pair["n_pass_only"]:
            psi = (pair["n_seq_only"] + pair["n_pass_only"]) / pair["n_shared"]
            source = (f"measured: {pair['n_seq_only'] + pair['n_pass_only']} of {pair['n_shared']} shared "
                      "tasks solved by one arm only")
    if state.cost_per_task is not None:
        cost = state.cost_per_task
        cost_source = f"measured on the study's {len(entered)} entered tasks"
    return psi, source, where, cost, cost_source


def _rough_cost(study: StudySpec) -> tuple[float | None, str]:
    """Both arms' actor cost per task, the midpoint of `seqk plan`'s rough range (prompt chars / 4;
    judge and critic not included); None when an actor has no price or no max_tokens."""
    total = 0.0
    for spec in (study.seq, study.partner):
        with tempfile.TemporaryDirectory() as empty:  # as for a new run: every task to do
            arm = plan_run(spec, Path(empty) / "none.duckdb")
        if not arm.price_known or arm.actor_cost_high is None or not arm.n_tasks:
            return None, "unknown (an actor has no price, or no max_tokens to bound its output)"
        total += ((arm.actor_cost_low or 0.0) + arm.actor_cost_high) / 2 / arm.n_tasks
    return total, "rough: the midpoint of each arm's `seqk plan` actor cost (judge and critic not included)"
