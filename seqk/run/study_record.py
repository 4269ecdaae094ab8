"""What a study keeps and tells: its row in `studies` (registered once, checked on resume), its
stored state (the tasks entered, the looks, the cells, the spend), the result a run returns, and
the observer that hears it (seqk.run.study runs it)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from seqk import store
from seqk.config.study import StudySpec
from seqk.errors import RunConflict
from seqk.records import StudyUpdate
from seqk.run.observer import AttemptEvent, RunObserver
from seqk.store import queries
from seqk.version import __version__

log = logging.getLogger("seqk")


@dataclass
class StudyResult:
    """What one `seqk study` did, and where the study stands."""

    spec: StudySpec
    updates: list[StudyUpdate]
    """Every look, stored ones first (a resumed study carries its earlier looks)."""
    tasks_available: int
    resumed: bool = False
    notes: list[str] = field(default_factory=list)
    """Said once at the start (attempts the runs held before the study, other studies of a run)."""
    interrupted: bool = False
    error: str | None = None
    """A fatal error of an arm (a key refused, the model's server gone): the study stopped
    without a decision, and the same command resumes it once the cause is fixed."""
    pilot_note: str | None = None
    """equal_budget: how the cells were chosen on the pilot."""
    attempts: dict[str, int] = field(default_factory=lambda: {"seq": 0, "partner": 0})
    """Attempts this invocation ran, per arm."""
    attempts_errored: dict[str, int] = field(default_factory=lambda: {"seq": 0, "partner": 0})

    @property
    def last(self) -> StudyUpdate | None:
        """The latest look."""
        return self.updates[-1] if self.updates else None

    @property
    def stop_reason(self) -> str | None:
        """Why the study stopped (None while it can go on)."""
        return self.last.stop_reason if self.last else None

    @property
    def decision(self) -> str:
        """The sequence's decision at the latest look."""
        return self.last.decision if self.last else "undecided"

    def to_json(self) -> dict[str, Any]:
        """What `seqk study --format json` prints."""
        last = self.last
        spec = self.spec
        return {
            "decision": self.decision, "stop_reason": self.stop_reason,
            "tasks_used": last.n_used if last else 0, "tasks_available": self.tasks_available,
            "spent_usd": last.spent_usd if last else None,
            "full_cost_usd": last.full_cost_usd if last else None,
            "sequence": {"low": last.low if last else -1.0, "high": last.high if last else 1.0,
                         "estimate": last.estimate if last else None, "n_tasks": last.n_tasks if last else 0,
                         "n_ranged": last.n_ranged if last else 0, "alpha": spec.alpha},
            "study_id": spec.study_id, "question": spec.question, "margin": spec.margin,
            "runs": {"seq": spec.seq.run_id, "partner": spec.partner.run_id},
            "cells": last.cells if last else None, "interrupted": self.interrupted, "error": self.error,
        }


class StudyObserver(Protocol):
    """Hears a study; subclass it and override what you need (the others do nothing)."""

    def started(self, result: StudyResult) -> None:
        """Once: the study (its order, whether it resumes, notes, the looks stored so far)."""
        return None

    def window(self, positions: list[int], tasks: list[int], pilot: bool = False) -> None:
        """A window of tasks starts in both arms (`pilot`: equal_budget's cell-choosing window)."""
        return None

    def retrying(self, tasks: list[int]) -> None:
        """Tasks an error censored are run once more."""
        return None

    def attempt(self, arm: str, event: AttemptEvent) -> None:
        """An arm finished an attempt ('seq' or 'partner')."""
        return None

    def updated(self, update: StudyUpdate) -> None:
        """A look: tasks entered the sequence (or the study stopped)."""
        return None

    def interrupted(self) -> None:
        """The first Ctrl-C or SIGTERM."""
        return None

    def finished(self, result: StudyResult) -> None:
        """Once, when the study returns."""
        return None


class Guarded:
    """An observer as the study calls it: none is a no-op, and its exceptions are logged."""

    def __init__(self, observer: StudyObserver | None):
        self.observer = observer

    def __getattr__(self, event: str) -> Any:
        method = getattr(self.observer, event, None)

        def call(*args: Any, **kwargs: Any) -> None:
            if method is None:
                return
            try:
                method(*args, **kwargs)
            except Exception:  # noqa: BLE001 - a display bug must not stop a paid-for study
                log.exception("the study's observer failed on %r; the study goes on", event)

        return call


class ArmWatch(RunObserver):
    """One arm's engine observer: its attempts go to the study's observer, named by arm."""

    def __init__(self, watch: Guarded, arm: str):
        self.watch, self.arm = watch, arm

    def attempt(self, event: AttemptEvent) -> None:
        """See RunObserver.attempt."""
        self.watch.attempt(self.arm, event)


def register(study: StudySpec, db: store.DbLike) -> tuple[bool, list[str]]:
    """Register the study, or find it (True) and check that its tasks are those it started with.
    RunConflict when these two runs already have a study with another declaration."""
    seq, partner = study.seq.run_id, study.partner.run_id
    notes: list[str] = []
    with store.connect(db, checkpoint=False) as con, store.transaction(con):
        found = queries.studies_of_runs(con, seq_run_id=seq, partner_run_id=partner)
        for other in found:
            if other["study_id"] == study.study_id:
                if json.loads(other["task_order"]) != study.order:
                    raise RunConflict(
                        f"study {study.study_id}: the arms' shared tasks changed since it started "
                        f"(max_tasks, task_indices or the data set); resuming would change its order. "
                        f"Restore them, or use another database (--db).")
                return True, notes
        for other in found:
            if (other["seq_run_id"], other["partner_run_id"]) == (seq, partner):
                raise RunConflict(
                    f"runs {seq} and {partner} already have study {other['study_id']} in this database "
                    f"(alpha {other['alpha']:g}, margin {other['margin']:g}, seed {other['order_seed']}, "
                    f"question {other['question']}); another declaration over the same runs would read "
                    f"what that one saw. Restore its declaration to resume it, or use another database.")
            notes.append(f"run {other['seq_run_id']} / {other['partner_run_id']} is also in study "
                         f"{other['study_id']}")
        paid = queries.study_task_spend(con, run_ids=[seq, partner], task_indices=store.int_list(study.order))
        if paid:
            notes.append(f"{len({r['task_index'] for r in paid})} of the study's tasks already had attempts in "
                         "its runs; they count in the study's order and spend, and are not run again")
        queries.insert_study(
            con, study_id=study.study_id, seq_run_id=seq, partner_run_id=partner, question=study.question,
            alpha=study.alpha, margin=study.margin, budget_usd=study.budget_usd,
            budget_usd_per_task=study.budget_usd_per_task, order_seed=study.seed,
            task_order=json.dumps(study.order), declaration=json.dumps(study.declaration),
            seqk_version=__version__)
    return False, notes


@dataclass
class StoredState:
    """A study as the database holds it, read once when it starts and kept up to date in memory by
    the study that writes it."""

    study: StudySpec
    updates: list[StudyUpdate]
    entered: list[dict[str, Any]]
    """study_tasks rows, in order."""
    cells: dict[str, Any] | None
    """The cells compared (None: an equal_budget study before its pilot)."""
    pilot_tasks: int
    used: int
    """Tasks the study has run so far (the latest look's n_used)."""

    @property
    def spent_usd(self) -> float | None:
        """Both arms' spend on the study's tasks at the latest look."""
        return self.updates[-1].spent_usd if self.updates else 0.0

    def _means(self, entered: list[dict[str, Any]]) -> dict[str, float] | None:
        means = {}
        for arm in ("seq", "partner"):
            costs = [r[f"{arm}_cost_usd"] for r in entered if r[f"{arm}_cost_usd"] is not None]
            if not costs:
                return None
            means[arm] = sum(costs) / len(entered)
        return means

    @property
    def cost_per_task(self) -> float | None:
        """Both arms' mean spend per entered task (None before any, or when unpriced)."""
        means = self._means(self.entered)
        return None if means is None else means["seq"] + means["partner"]

    @property
    def arm_shares(self) -> dict[str, float]:
        """Each arm's share of the spend per task so far (half each before any)."""
        means = self._means(self.entered)
        total = sum(means.values()) if means else 0.0
        if means is None or total <= 0:
            return {"seq": 0.5, "partner": 0.5}
        return {arm: value / total for arm, value in means.items()}

    def full_cost(self, entered: list[dict[str, Any]], n_available: int) -> float | None:
        """Both arms on all `n_available` tasks at the mean spend per entered task."""
        means = self._means(entered)
        return None if means is None else n_available * (means["seq"] + means["partner"])


def stored_state(study: StudySpec, db: store.DbLike) -> StoredState:
    """The study's looks, entered tasks and cells as stored."""
    with store.connect(db, read_only=True) as con:
        updates = [StudyUpdate.from_row(r) for r in queries.study_updates_of(con, study_id=study.study_id)]
        entered = queries.study_tasks_of(con, study_id=study.study_id)
    cells: dict[str, Any] | None = None
    pilot = 0
    if study.question == "lift":
        cells = {arm: list(cell) for arm, cell in study.lift_cells().items()}
    else:
        chosen = next((u.cells for u in reversed(updates) if u.cells), None)
        if chosen is not None:
            pilot = int(chosen["pilot_tasks"])
            cells = chosen if "seq" in chosen else None
    return StoredState(study, updates, entered, cells, pilot, updates[-1].n_used if updates else 0)


@dataclass(frozen=True)
class Reading:
    """What a look reads of the two runs, in one read-only open."""

    chains: list[dict[str, Any]]
    """sql/studies.sql study_chain_outcomes of the window's tasks, both runs."""
    task_spend: dict[str, dict[int, float | None]]
    """arm -> task -> what the arm's run paid on it (None when none of its calls was priced)."""
    spent_usd: float | None
    """Both runs' spend on the study's first `used` tasks (None when no call was priced)."""


def read_runs(study: StudySpec, db: store.DbLike, window: list[int], used: int) -> Reading:
    """The window's per-chain outcomes and spend, and the spend on the tasks run so far."""
    arms = {study.seq.run_id: "seq", study.partner.run_id: "partner"}
    spend: dict[str, dict[int, float | None]] = {"seq": {}, "partner": {}}
    with store.connect(db, read_only=True) as con:
        chains = queries.study_chain_outcomes(con, run_ids=list(arms), task_indices=store.int_list(window))
        paid = queries.study_task_spend(con, run_ids=list(arms), task_indices=store.int_list(study.order[:used]))
    for row in paid:
        spend[arms[row["run_id"]]][row["task_index"]] = row["cost_usd"]
    costs = [row["cost_usd"] for row in paid]
    priced = [c for c in costs if c is not None]
    return Reading(chains, spend, sum(priced) if priced else (None if costs else 0.0))


def choose_cells(study: StudySpec, db: store.DbLike, pilot: list[int]) -> tuple[dict[str, Any] | None, str]:
    """equal_budget: each arm's cell at `budget_usd_per_task`, chosen on the pilot tasks
    (`pick_cell`). None when an arm has no such cell. The pilot's tasks never enter the sequence,
    so choosing on them selects nothing the sequence then tests."""
    budget = study.budget_usd_per_task
    assert budget is not None
    with store.connect(db, read_only=True) as con:
        rows = queries.study_cells(con, run_ids=[study.seq.run_id, study.partner.run_id],
                                   task_indices=store.int_list(pilot))
    cells: dict[str, Any] = {"pilot_tasks": len(pilot), "budget_usd_per_task": budget}
    said = []
    for arm, spec in (("seq", study.seq), ("partner", study.partner)):
        mine = [r for r in rows if r["run_id"] == spec.run_id and r["n_tasks"]]
        best = pick_cell(mine, budget)
        if best is None:
            cheapest = min((r["cost_usd_per_task"] for r in mine if r["cost_usd_per_task"] is not None),
                           default=None)
            shown = f"${cheapest:.4f}" if cheapest is not None else "unknown (nothing priced)"
            return None, (f"no cell of the {arm} arm costs at most ${budget:g} per task on the "
                          f"{len(pilot)} pilot tasks (its cheapest: {shown})")
        cells[arm] = [best["width"], best["depth"]]
        said.append(f"{arm} {best['width']}x{best['depth']} (${best['cost_usd_per_task']:.4f} per task, "
                    f"value {best['value']:.3f} on the pilot)")
    return cells, f"cells chosen on the {len(pilot)} pilot tasks at ${budget:g} per task: " + ", ".join(said)


def pick_cell(cells: list[dict[str, Any]], budget: float) -> dict[str, Any] | None:
    """An arm's cell at the budget from its frontier's cells on the pilot (rows of `study_cells`):
    the best (highest mean value) whose mean spend per task is at most the budget, ties to the
    cheaper, then the fewer attempts. For a pass@k partner the cells resample until success (w
    chains of at most d samples, each stopping at its first success, as seq@k's do), so the partner
    stops too; its depth-1 cells are pass@w. None when no cell fits."""
    fits = [r for r in cells if r["cost_usd_per_task"] is not None and r["cost_usd_per_task"] <= budget]
    return max(fits, key=lambda r: (r["value"], -r["cost_usd_per_task"], -r["width"] * r["depth"]),
               default=None)
