"""A sequential study: two ordinary runs (the seq@k arm and its partner) run in lockstep, a window
of tasks at a time in a seeded order, until an anytime-valid confidence sequence for their paired
difference decides (seqk.anytime), the tasks or the budget run out, or errors censor too many.

Both arms are ordinary runs of the database, resumable, exportable and reportable as any; the
study only chooses which of their tasks run next (each window's tasks in both arms at once, the
two engines sharing one event loop) and when to stop. After a window, a task whose value an error
left censored is run once more (the engine redoes slots without a valid row, never a paid one);
then every task of the window that is settled in both arms enters the sequence, in the study's
order, with its value frozen (a range if still censored) in `study_tasks`. The sequence is
recomputed from those rows alone, so a killed study resumes with the same order and the same
sequence, and never repeats a paid attempt (the engine's own rule).

Stops (`stop_reason`): 'decided' (the sequence excludes 0, or lies inside ±margin), then
'error_share' (more than 5% of at least 20 entered tasks are censored ranges), 'tasks_exhausted',
'budget' (the cap over both arms: a window is shrunk to what the per-task spend so far says still
fits, and each arm's engine holds its share of what is left as a hard budget), and for
equal_budget 'no_cell' (no cell fits the budget per task on the pilot).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

from seqk import store
from seqk.anytime import UNDECIDED, confidence_sequence
from seqk.config.spec import RunSpec
from seqk.config.study import StudySpec
from seqk.models import sessions_kept
from seqk.records import StudyUpdate
from seqk.run import preflight, signals
from seqk.run.budget import RUN, BudgetGate, budgets_of, stored_spend
from seqk.run.observer import RunResult
from seqk.run.prepare import Prepared, prepare
from seqk.run.scheduler import Engine
from seqk.run.study_record import (
    ArmWatch,
    Guarded,
    Reading,
    StoredState,
    StudyObserver,
    StudyResult,
    choose_cells,
    read_runs,
    register,
    stored_state,
)
from seqk.run.study_values import ArmValue, arm_values
from seqk.run.writer import WRITE_LOCK
from seqk.store import queries

ERROR_SHARE = 0.05
"""A study stops when more than this share of its entered tasks are censored ranges..."""
ERROR_SHARE_MIN_TASKS = 20
"""...once at least this many tasks have entered (one error among the first few is no pattern)."""
ARMS = ("seq", "partner")


def run(study: StudySpec, db: store.DbLike, observer: StudyObserver | None = None) -> StudyResult:
    """Run (or resume) the study until it stops, is interrupted (Ctrl-C, SIGTERM) or an arm hits a
    fatal error; what finished is kept either way."""
    db = store.open(db)
    for spec in (study.seq, study.partner):
        preflight.before_run(spec)
    watch = Guarded(observer)
    with store.run_lease(db, study.seq.run_id, study.order), \
            store.run_lease(db, study.partner.run_id, study.order):
        resumed, notes = register(study, db)
        state = stored_state(study, db)
        result = StudyResult(study, list(state.updates), len(study.order), resumed=resumed, notes=notes)
        watch.started(result)
        looper = _Study(study, db, watch, result, state)
        signals.run_until_signalled(looper.loop, watch.interrupted)
    watch.finished(result)
    return result


class _Study:
    def __init__(self, study: StudySpec, db: store.Database, watch: Guarded, result: StudyResult,
                 state: StoredState):
        self.study, self.db, self.watch, self.result, self.state = study, db, watch, result, state
        self.specs = {"seq": study.seq, "partner": study.partner}
        self.tasks = {arm: {t.task_index: t for t in spec.tasks} for arm, spec in self.specs.items()}

    async def loop(self) -> StudyResult:
        async with sessions_kept():
            while await self._step():
                pass
        return self.result

    def _over(self) -> bool:
        """Stopped for good: any stop but the budget's, or the budget's with the cap not raised."""
        study, state = self.study, self.state
        last = state.updates[-1] if state.updates else None
        if last is None or last.stop_reason is None:
            return False
        return not (last.stop_reason == "budget" and study.budget_usd is not None
                    and (last.budget_usd is None or study.budget_usd > last.budget_usd))

    async def _step(self) -> bool:
        """One look: run the next window and enter what settled. False when the study is over
        (stopped, interrupted, or a fatal error)."""
        study, state = self.study, self.state
        if self._over():
            return False
        if state.cells is None:  # equal_budget, before its pilot
            return await self._pilot()
        start = state.pilot_tasks + len(state.entered)
        size = self._affordable(start)
        if size == 0 or start >= len(study.order):
            self._record([], "budget" if start < len(study.order) else "tasks_exhausted", start, None)
            return False
        window = study.order[start:start + size]
        positions = range(start + 1, start + len(window) + 1)
        used = max(state.used, positions.stop - 1)
        self.watch.window(list(positions), window)
        runs = await self._run_window(window)
        if runs is None:
            return False
        reading, values = self._read(window, used)
        ranged = [t for t in window if any(values[arm][t].settled and values[arm][t].ranged for arm in ARMS)]
        if ranged and not any(r.stopped for r in runs):
            self.watch.retrying(ranged)
            runs = await self._run_window(ranged)
            if runs is None:
                return False
            reading, values = self._read(window, used)
        entering = []
        for position, task in zip(positions, window, strict=True):
            if not all(values[arm][task].settled for arm in ARMS):
                break
            entering.append((position, task, values["seq"][task], values["partner"][task]))
        budget_stop = any(r.stopped_by == "budget" for r in runs)
        if not entering and not budget_stop:
            self.result.error = (f"the tasks at positions {positions.start}-{positions.stop - 1} did not finish "
                                 "in both arms (an attempt was neither run nor recorded as an error)")
            return False
        return self._record(entering, "budget" if budget_stop else None, used, reading)

    async def _pilot(self) -> bool:
        """equal_budget: run the first window, choose each arm's cell on it (those tasks never
        enter the sequence), and record the choice."""
        study = self.study
        window = study.order[:min(study.window, len(study.order))]
        self.watch.window(list(range(1, len(window) + 1)), window, pilot=True)
        runs = await self._run_window(window)
        if runs is None:
            return False
        if any(r.stopped for r in runs):
            self.result.error = "the pilot did not finish within the budget"
            return False
        cells, reason = choose_cells(study, self.db, window)
        self.state.cells = cells
        self.state.pilot_tasks = len(window)
        self.result.pilot_note = reason
        reading = read_runs(study, self.db, [], len(window))
        return self._record([], None if cells is not None else "no_cell", len(window), reading,
                            cells=cells or {"pilot_tasks": len(window)})

    def _affordable(self, start: int) -> int:
        """The next window's size: the study's window, shrunk to what the budget cap still covers
        at the per-task spend so far (both arms); 0 when not even one task does."""
        size = min(self.study.window, len(self.study.order) - start)
        cap, per_task, spent = self.study.budget_usd, self.state.cost_per_task, self.state.spent_usd
        if cap is None or per_task is None or per_task <= 0 or spent is None:
            return size
        return max(0, min(size, int((cap - spent) // per_task)))

    def _gates(self) -> dict[str, BudgetGate | None]:
        """Each arm's budget gate: its variant's budgets, with the whole run's capped at what it has
        spent plus its share of what the study's cap has left (shared in proportion to each arm's
        spend per task so far, half each before any). The study's spend is read afresh: a study
        killed mid-window paid for attempts no look has counted yet."""
        gates: dict[str, BudgetGate | None] = {}
        cap = self.study.budget_usd
        left = None
        if cap is not None:
            spent = read_runs(self.study, self.db, [], len(self.study.order)).spent_usd or 0.0
            left = max(cap - spent, 0.0)
        for arm, spec in self.specs.items():
            budgets = budgets_of(spec)
            if not budgets and left is None:
                gates[arm] = None
                continue
            paid = stored_spend(spec, self.db)
            if left is not None:
                mine = sum(paid.values()) + left * self.state.arm_shares[arm]
                budgets[RUN] = min(budgets.get(RUN, mine), mine)
            gates[arm] = BudgetGate(spec, budgets, paid)
        return gates

    async def _run_window(self, window: list[int]) -> list[RunResult] | None:
        """Both arms' engines on `window`, together; None (and the result says why) when the
        study was interrupted or an arm hit a fatal error."""
        gates = self._gates()
        jobs = [asyncio.ensure_future(self._run_arm(arm, window, gates[arm])) for arm in ARMS]
        try:
            runs = list(await asyncio.gather(*jobs))
        except asyncio.CancelledError:
            # The first signal: the engines write what finished, then the study stops.
            await asyncio.wait(jobs)
            self.result.interrupted = True
            return None
        for arm, run in zip(ARMS, runs, strict=True):
            self.result.attempts[arm] += run.attempts_run
            self.result.attempts_errored[arm] += run.attempts_errored
        if any(r.interrupted for r in runs):
            self.result.interrupted = True
            return None
        fatal = [f"{arm}: {r.stopped}" for arm, r in zip(ARMS, runs, strict=True) if r.stopped_by == "error"]
        if fatal:
            self.result.error = "; ".join(fatal)
            return None
        return runs

    async def _run_arm(self, arm: str, window: list[int], gate: BudgetGate | None) -> RunResult:
        spec = dataclasses.replace(self.specs[arm], tasks=[self.tasks[arm][t] for t in window])
        prepared = await asyncio.to_thread(self._prepare, spec)
        engine = Engine(spec, prepared, self.db, ArmWatch(self.watch, arm), budget=gate)
        return await engine.run()

    def _prepare(self, spec: RunSpec) -> Prepared:
        # The other arm's engine may be writing its last batch (and CHECKPOINT) meanwhile.
        with WRITE_LOCK:
            return prepare(spec, self.db)

    def _read(self, window: list[int], used: int) -> tuple[Reading, dict[str, dict[int, ArmValue]]]:
        reading = read_runs(self.study, self.db, window, used)
        cells = self.state.cells or {}
        return reading, {arm: arm_values(spec, tuple(cells[arm]),
                                         [r for r in reading.chains if r["run_id"] == spec.run_id], window)
                         for arm, spec in self.specs.items()}

    def _record(self, entering: list[tuple[int, int, ArmValue, ArmValue]], stop: str | None, used: int,
                reading: Reading | None, cells: dict[str, Any] | None = None) -> bool:
        """Enter `entering` and record the look, in one transaction. True when the study goes on."""
        study, state = self.study, self.state
        spend = reading.task_spend if reading is not None else {"seq": {}, "partner": {}}
        rows = [{"position": p, "task_index": t, "seq_low": s.low, "seq_high": s.high,
                 "partner_low": q.low, "partner_high": q.high, "seq_cost_usd": spend["seq"].get(t),
                 "partner_cost_usd": spend["partner"].get(t)} for p, t, s, q in entering]
        entered = state.entered + rows
        lows = [r["seq_low"] - r["partner_high"] for r in entered]
        highs = [r["seq_high"] - r["partner_low"] for r in entered]
        sequence = confidence_sequence(lows, highs, alpha=study.alpha, margin=study.margin)
        n_ranged = sum(1 for lo, hi in zip(lows, highs, strict=True) if hi > lo)
        if sequence.decision != UNDECIDED:
            stop = "decided"
        elif len(entered) >= ERROR_SHARE_MIN_TASKS and n_ranged > ERROR_SHARE * len(entered):
            stop = "error_share"
        elif stop is None and state.pilot_tasks + len(entered) >= len(study.order):
            stop = "tasks_exhausted"
        update = StudyUpdate(
            len(state.updates) + 1, len(entered), max(used, state.used), n_ranged, sequence.estimate, sequence.low,
            sequence.high, sequence.decision, stop, reading.spent_usd if reading is not None else state.spent_usd,
            state.full_cost(entered, len(study.order)), study.budget_usd, cells or state.cells)
        with store.connect(self.db, checkpoint=False) as con, store.transaction(con):
            if rows:
                queries.insert_study_tasks(con, study_id=study.study_id, rows=json.dumps(rows))
            queries.insert_study_update(
                con, study_id=study.study_id, update_index=update.update_index, n_tasks=update.n_tasks,
                n_used=update.n_used, n_ranged=update.n_ranged, estimate=update.estimate, low=update.low,
                high=update.high, decision=update.decision, stop_reason=update.stop_reason,
                spent_usd=update.spent_usd, full_cost_usd=update.full_cost_usd, budget_usd=update.budget_usd,
                cells=json.dumps(update.cells) if update.cells is not None else None)
        state.entered, state.used = entered, update.n_used
        state.updates.append(update)
        self.result.updates.append(update)
        self.watch.updated(update)
        return stop is None
