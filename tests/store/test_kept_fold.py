"""The writer's fold of a commit's chains (seqk.store.kept.keep_chains_of) against chain_kept_rows,
the SQL definition, on the cases a run rarely meets: superseded errors (their calls count to the
valid slot), pass@k samples out of order (holes), NULL scores and successes, unpriced, errored and
unreported calls, late feedback's calls, commits that each touch a chain again; and the columns the
viewer's spend reads (failed calls, the spend at each attempt index with a call)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from seqk import store
from seqk.records import AttemptRecord, CallRecord, FeedbackFill
from seqk.store import kept

T0 = datetime(2026, 1, 1, 12, 0, 0)


def _call(cost: float | None, tokens: int | None = 10, error: str | None = None) -> CallRecord:
    return CallRecord(role="actor", model="m", prompt="p", output="o", latency_s=0.1, retries=0,
                      error=error, started_at=T0, input_tokens=tokens, output_tokens=tokens,
                      cost_usd=cost)


def _attempt(uid: str, chain: tuple[int, int], index: int, status: str, success: bool | None,
             score: float | None, calls: list[CallRecord], minute: int) -> AttemptRecord:
    task, chain_index = chain
    return AttemptRecord(
        attempt_uid=uid, run_id="r", generation=1, task_index=task, attempt_index=index, k=4,
        status=status, success=success, score=score, prompt="p", output="o", raw_eval_output=None,
        judge_details=None, feedback=None, error=None if status == "ok" else {"type": "x"},
        started_at=T0, finished_at=T0 + timedelta(minutes=minute), calls=calls, chain_index=chain_index)


def test_the_fold_equals_the_recomputation_after_every_commit(tmp_path):
    seq, holes, odd = (1, 1), (2, 1), (3, 2)
    commits = [
        [_attempt("a1", seq, 1, "error", None, None, [_call(0.1)], 1),
         _attempt("b1", holes, 1, "ok", False, None, [_call(0.2)], 1),
         _attempt("b3", holes, 3, "ok", True, 0.75, [_call(None), _call(0.3)], 2),
         _attempt("b4", holes, 4, "error", None, None, [_call(None, None, "timeout")], 3),
         _attempt("c1", odd, 1, "ok", None, None, [_call(None, None)], 1)],
        [_attempt("a1b", seq, 1, "ok", False, 0.25, [_call(0.2), _call(None)], 4),  # supersedes a1
         _attempt("a2", seq, 2, "ok", True, None, [], 5),
         _attempt("c2", odd, 2, "error", None, None, [], 2)],
        [_attempt("b2", holes, 2, "ok", False, 0.5, [_call(0.05)], 6),  # fills the hole
         FeedbackFill(attempt_uid="a2", run_id="r", generation=1, task_index=1, attempt_index=2,
                      feedback="late", error=None, calls=[_call(0.4)], chain_index=1)],
    ]
    db = tmp_path / "seqk.duckdb"
    with store.connect(db) as con:
        for items in commits:
            store.append_attempts(con, items)
            assert kept.kept_chains_differ(con) == 0
        rows = con.execute("SELECT task_index, n_attempts, n_valid, n_error, valid_prefix, settled_prefix, "
                           "first_success, cost_usd, spent_usd, n_failed_calls, spend_by_slot FROM chain_kept "
                           "ORDER BY task_index").fetchall()
    assert [r[:7] for r in rows] == [(1, 2, 2, 0, 2, 2, 2), (2, 4, 3, 1, 3, 4, 3), (3, 2, 1, 1, 1, 2, None)]
    assert rows[0][7] == [0.1 + 0.2, 0.4]  # the superseded error's call counts to its slot
    # a failed call counts, with no tokens; an errored slot's calls and late feedback's are in their slot
    assert [r[9] for r in rows] == [0, 1, 0]
    assert [[(x["i"], x["tokens"]) for x in r[10]] for r in rows] == [
        [(1, 60), (2, 20)], [(1, 20), (2, 20), (3, 40), (4, 0)], [(1, 0)]]
    assert [[x["cost_usd"] for x in r[10]] for r in rows] == [
        [pytest.approx(0.3), 0.4], [0.2, 0.05, 0.3, None], [None]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_batch_fold_equals_the_recomputation_on_random_chains(tmp_path, seed):
    """Hundreds of chains a commit, as a lake's writer folds them at once: slots written out of
    order and more than once (superseded errors), holes, NULL scores, successes, costs and tokens,
    failed calls, a chain with no call and late feedback, over commits that touch chains again."""
    import random

    rng = random.Random(seed)
    chains = [(task, chain) for task in range(1, 121) for chain in (1, 2)]
    pending: list[AttemptRecord | FeedbackFill] = []
    uid = 0
    for chain in chains:
        for index in rng.sample(range(1, 7), rng.randint(1, 5)):
            for _ in range(rng.choice([1, 1, 1, 2, 3])):
                uid += 1
                status = rng.choice(["ok", "ok", "ok", "error"])
                success = None if status == "error" else rng.choice([True, False, False, None])
                score = rng.choice([None, None, round(rng.random(), 3), -0.5])
                calls = [_call(rng.choice([None, 0.001, 0.02, 0.3]), rng.choice([None, 5, 10]),
                               rng.choice([None, None, None, "timeout"])) for _ in range(rng.randint(0, 3))]
                pending.append(_attempt(f"u{uid}", chain, index, status, success, score, calls,
                                        rng.randint(0, 50)))
                if rng.random() < 0.1:
                    pending.append(FeedbackFill(
                        attempt_uid=f"u{uid}", run_id="r", generation=1, task_index=chain[0],
                        attempt_index=index, feedback="late", error=None, calls=[_call(0.01)],
                        chain_index=chain[1]))
    rng.shuffle(pending)
    # late feedback after its attempt: a fill names an attempt that is written
    attempts = [r for r in pending if isinstance(r, AttemptRecord)]
    fills = [r for r in pending if isinstance(r, FeedbackFill)]
    cut = sorted(rng.sample(range(1, len(attempts)), 3))
    commits = [attempts[a:b] for a, b in zip([0, *cut], [*cut, len(attempts)], strict=True)]
    commits.append(fills)
    db = tmp_path / "seqk.duckdb"
    with store.connect(db) as con:
        for items in commits:
            store.append_attempts(con, items)
            assert kept.kept_chains_differ(con) == 0
        n_kept, n_multi = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE len(slot_best) > 1) FROM chain_kept").fetchone()
    assert n_kept == len(chains) and n_multi > 100
