"""Sequential studies in-process on the toy benchmark (seqk.run.study): both arms run in lockstep
over the same tasks in the seeded order; the sequence is a function of the stored per-task values;
a stopped study runs nothing more; errors are retried once, then enter as ranges, and too many stop
the study; the budget cap holds; equal_budget chooses its cells on a pilot that never enters."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import rows, toy_arms, toy_study_file, write_variant
from scripts import feedback_world, word_of

from seqk import api, models
from seqk.anytime import confidence_sequence
from seqk.config.study import order_of
from seqk.errors import PermanentProviderError, RunConflict, TransientProviderError
from seqk.run.study_values import chen


def attempted(db: Path, run_id: str) -> set[int]:
    return {t for (t,) in rows(db, "SELECT DISTINCT task_index FROM attempts WHERE run_id = ?", [run_id])}


def test_a_study_where_feedback_helps_decides_seq_better_early_in_lockstep(tmp_path, db):
    models.register_mock("mock/actor", feedback_world(0.3, 0.3))
    toy_arms(tmp_path)
    outcome = api.run_study(toy_study_file(tmp_path), db, export=False, upload=False)
    result, spec = outcome.result, outcome.spec
    data = result.to_json()
    assert data["decision"] == "seq_better" and data["stop_reason"] == "decided"
    assert data["sequence"]["low"] > 0 and data["tasks_used"] < 100 == data["tasks_available"] / 2
    # Lockstep in the seeded order: both arms ran exactly the first tasks_used tasks of the order.
    assert spec.order == order_of(list(range(1, 201)), 7) != list(range(1, 201))
    used = set(spec.order[:data["tasks_used"]])
    assert attempted(db, spec.seq.run_id) == attempted(db, spec.partner.run_id) == used
    # Every look entered a window of 16 (2 x concurrency), in order, both arms' values frozen.
    assert [u.n_tasks for u in result.updates] == list(range(16, data["tasks_used"] + 1, 16))
    entered = rows(db, "SELECT position, task_index, seq_low, seq_high, partner_low, partner_high "
                       "FROM study_tasks ORDER BY position")
    assert [(p, t) for p, t, *_ in entered] == list(enumerate(spec.order[:data["tasks_used"]], start=1))
    # The sequence is a function of the stored values: recomputed from them, it is the last look's.
    again = confidence_sequence([r[2] - r[5] for r in entered], [r[3] - r[4] for r in entered])
    assert (again.low, again.high, again.decision) == (data["sequence"]["low"], data["sequence"]["high"],
                                                        "seq_better")
    # Each value is the task's outcome: seq@3 solved or not; pass@3 from its 3 samples.
    seq_solved = dict(rows(db, "SELECT task_index, bool_or(success)::INT FROM attempts WHERE run_id = ? "
                               "GROUP BY ALL", [spec.seq.run_id]))
    pass_successes = dict(rows(db, "SELECT task_index, count(*) FILTER (WHERE success) FROM attempts "
                                   "WHERE run_id = ? GROUP BY ALL", [spec.partner.run_id]))
    for _, task, seq_low, seq_high, partner_low, partner_high in entered:
        assert seq_low == seq_high == seq_solved[task]
        assert partner_low == partner_high == chen(3, pass_successes[task], 3)
    # Spend: both arms on the tasks run; a full run at the same spend per task costs more.
    assert data["spent_usd"] == pytest.approx(rows(db, "SELECT sum(cost_usd) FROM calls")[0][0])
    assert data["full_cost_usd"] > 2 * data["spent_usd"]


def test_a_stopped_study_runs_nothing_more_and_says_the_same(tmp_path, db):
    models.register_mock("mock/actor", feedback_world(0.3, 0.3))
    toy_arms(tmp_path)
    first = api.run_study(toy_study_file(tmp_path), db, export=False, upload=False).result
    n_attempts = rows(db, "SELECT count(*) FROM attempts")[0][0]
    again = api.run_study(toy_study_file(tmp_path), db, export=False, upload=False).result
    assert again.resumed and again.attempts == {"seq": 0, "partner": 0}
    assert rows(db, "SELECT count(*) FROM attempts")[0][0] == n_attempts
    assert again.to_json() == first.to_json()


def test_another_declaration_over_the_same_runs_is_refused(tmp_path, db):
    models.register_mock("mock/actor", feedback_world(0.3, 0.3))
    toy_arms(tmp_path)
    api.run_study(toy_study_file(tmp_path), db, export=False, upload=False)
    with pytest.raises(RunConflict, match="already have study .* seed 7"):
        api.run_study(toy_study_file(tmp_path, "other.yaml", seed=8), db, export=False, upload=False)


def test_an_error_is_retried_once_and_a_slot_that_recovers_enters_exactly(tmp_path, db):
    failed: set[str] = set()
    world = feedback_world(0.3, 0.3)

    def flaky_once(prompt: str, seed: int | None = None) -> str:
        """The first call about every fifth task fails (in whichever arm asks first)."""
        word = word_of(prompt)
        if int(word[1:]) % 5 == 0 and word not in failed:
            failed.add(word)
            raise TransientProviderError("503 overloaded", status_code=503)
        return world(prompt, seed)

    models.register_mock("mock/actor", flaky_once)
    toy_arms(tmp_path, retry={"max_retries": 0})
    result = api.run_study(toy_study_file(tmp_path), db, export=False, upload=False).result
    assert failed and result.last.n_ranged == 0 and result.last.n_tasks >= 16
    errors = rows(db, "SELECT count(*) FROM attempts WHERE status = 'error'")[0][0]
    assert errors == len([w for w in failed if int(w[1:]) in result.spec.order[:result.last.n_used]]) > 0
    # An errored slot that censored a value was run again; one left is a pass@k sample of a task
    # another sample solved, whose pass@3 is 1 whatever it would have said.
    left = rows(db, "SELECT run_id, task_index FROM current_attempts WHERE status = 'error'")
    solved = set(rows(db, "SELECT run_id, task_index FROM attempts WHERE success"))
    assert all(run == result.spec.partner.run_id and (run, task) in solved for run, task in left)


@pytest.mark.slow  # a study to its error stop (~2 s of CPU)
def test_errors_that_persist_enter_as_ranges_and_past_5_percent_stop_the_study(tmp_path, db):
    def partner(prompt: str, seed: int | None = None) -> str:
        if int(word_of(prompt)[1:]) % 8 == 0:  # 1 task in 8, every sample
            raise PermanentProviderError("400 this prompt is refused")
        return word_of(prompt) if seed is not None and seed % 3 == 0 else "wrong"

    models.register_mock("mock/actor", feedback_world(0.3, 0.0))
    models.register_mock("mock/partner", partner)
    toy_arms(tmp_path, partner_model="mock/partner")
    result = api.run_study(toy_study_file(tmp_path), db, export=False, upload=False).result
    last = result.last
    assert last.stop_reason == "error_share" and last.decision == "undecided"
    assert last.n_tasks >= 20 and last.n_ranged > 0.05 * last.n_tasks
    ranged = rows(db, "SELECT task_index, partner_low, partner_high FROM study_tasks WHERE partner_high > partner_low")
    assert {t % 8 for t, _, _ in ranged} == {0} and {(lo, hi) for _, lo, hi in ranged} == {(0.0, 1.0)}
    assert len(ranged) == last.n_ranged


@pytest.mark.slow  # two studies to their cap (~5 s of CPU)
def test_the_budget_cap_over_both_arms_holds(tmp_path, db):
    models.register_mock("mock/actor", feedback_world(0.3, 0.0))
    toy_arms(tmp_path, max_tokens=8, actor={"price": {"input": 300.0, "output": 300.0}})
    result = api.run_study(toy_study_file(tmp_path, budget_usd=1.5), db, export=False, upload=False).result
    last = result.last
    assert last.stop_reason == "budget" and last.decision == "undecided"
    assert 0 < last.spent_usd <= 1.5
    assert rows(db, "SELECT sum(cost_usd) FROM calls")[0][0] == pytest.approx(last.spent_usd)
    # Raising the cap lets the same study go on from where it stopped.
    more = api.run_study(toy_study_file(tmp_path, budget_usd=3.0), db, export=False, upload=False).result
    assert more.resumed and more.last.n_tasks > last.n_tasks and more.last.spent_usd <= 3.0


@pytest.mark.slow  # a pilot, then a study at equal budget with its frontiers at every look (~9 s of CPU)
def test_equal_budget_chooses_cells_on_a_pilot_that_never_enters(tmp_path, db):
    models.register_mock("mock/actor", feedback_world(0.3, 0.3))
    toy_arms(tmp_path, chains=2)
    # chains is seq@k's: the partner is a pass@k run with more samples
    write_variant(tmp_path, "pass.yaml", benchmark="toy", metric="pass@k", k=6, seed=1, concurrency=8,
                  model="mock/actor", options={"n": 200}, actor={"price": {"input": 1.0, "output": 2.0}})
    result = api.run_study(toy_study_file(tmp_path, question="equal_budget", budget_usd_per_task=0.0002),
                           db, export=False, upload=False).result
    pilot = result.updates[0]
    assert pilot.n_tasks == 0 and pilot.cells["pilot_tasks"] == 16 == pilot.n_used
    seq_cell, partner_cell = pilot.cells["seq"], pilot.cells["partner"]
    # the partner's cell may resample until success (w x d, w d <= k: issue 27), not only pass@w
    assert 1 <= seq_cell[0] <= 2 and 1 <= seq_cell[1] <= 3 and partner_cell[0] * partner_cell[1] <= 6
    assert all(u.cells == pilot.cells for u in result.updates)
    first = rows(db, "SELECT min(position) FROM study_tasks")[0][0]
    assert first == 17  # the pilot's 16 tasks never enter the sequence
    assert "cells chosen on the 16 pilot tasks" in result.pilot_note
