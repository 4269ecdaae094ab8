"""task_outcomes_fast_of (the viewer's per-chain outcomes, read from chain_kept since issue 30; a
one-pass bitmask reading of the attempts before) gives exactly task_outcomes_of(false)'s rows, on
databases with every irregularity the engine can leave: retried errors, slots that stayed
errored, holes (pass@k samples finishing out of order), several chains, a restarted run's old
generation, a judge that never ruled, and a k larger than the old bitmask's 62; and a row written
twice (a lake's ambiguous commit) counts once in what chain_kept keeps (chain_kept_rows)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from seqk import store

pytestmark = pytest.mark.slow

T0 = datetime(2026, 1, 1)
COLUMNS = ("run_id, task_index, chain_index, metric, k, chains, n_attempts, n_valid, n_error, "
           "n_success, first_success, valid_prefix, settled_prefix, ended_in_error, n_samples, known_to")


def _run(con, run_id: str, metric: str, k: int, chains: int, generation: int) -> None:
    con.execute(
        "INSERT INTO run_rows (run_id, benchmark, slice, metric, k, chains, generation, feedback_mode, "
        "actor_model, verifier, fingerprint, fingerprint_fields, created_at, updated_at, seqk_version) "
        "VALUES (?, 'toy', 'toy-plain', ?, ?, ?, 1, 'binary', 'mock/a', 'deterministic', 'fp', '{}', "
        "?, ?, 'test')", [run_id, metric, k, chains, T0, T0])
    if generation > 1:
        con.execute("INSERT INTO run_events (run_id, event, k, generation, event_at) "
                    "VALUES (?, 'restart', ?, ?, ?)", [run_id, k, generation, T0])


def _attempt(con, uid: str, run_id: str, generation: int, task: int, chain: int, slot: int,
             status: str, success: bool | None, at: datetime) -> None:
    con.execute(
        "INSERT INTO attempts (attempt_uid, run_id, generation, task_index, chain_index, attempt_index, "
        "k, status, success, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, 3, ?, ?, ?, ?)",
        [uid, run_id, generation, task, chain, slot, status, success, at, at])


def random_db(path: Path, seed: int) -> None:
    rng = random.Random(seed)
    runs = [("seq", "seq@k", 5, 3, 2), ("pass", "pass@k", 8, 1, 1), ("seq-one", "seq@k", 4, 1, 1),
            ("big", "pass@k", 70, 1, 1)]
    n = 0
    with store.connect(path) as con:
        for run_id, metric, k, chains, generation in runs:
            _run(con, run_id, metric, k, chains, generation)
            for gen in range(1, generation + 1):
                for task in range(1, 13):
                    p = rng.random()
                    for chain in range(1, rng.randint(1, chains) + 1):
                        for slot in range(1, k + 1):
                            if metric == "pass@k" and rng.random() < 0.15:
                                continue  # a hole: this sample has not finished yet
                            for _ in range(rng.choice([0, 0, 0, 1, 2])):  # errors, retried or not
                                n += 1
                                _attempt(con, f"u{n}", run_id, gen, task, chain, slot, "error", None,
                                         T0 + timedelta(seconds=rng.randint(0, 99)))
                            if rng.random() < 0.2:
                                if metric == "seq@k":
                                    break  # the chain stopped on an error
                                continue
                            success = None if rng.random() < 0.05 else rng.random() < p
                            n += 1
                            _attempt(con, f"u{n}", run_id, gen, task, chain, slot, "ok", success,
                                     T0 + timedelta(seconds=rng.randint(0, 99)))
                            if metric == "seq@k" and success:
                                break
        store.rebuild_kept_chains(con)  # rows written by SQL, not through store.append_attempts


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fast_outcomes_equal_task_outcomes(tmp_path: Path, seed: int):
    db = tmp_path / "o.duckdb"
    random_db(db, seed)
    with store.connect(db, read_only=True) as con:
        for run_ids in (None, ["seq", "pass"], ["big"], ["seq-one", "big"], []):
            fast = con.execute(f"SELECT {COLUMNS} FROM task_outcomes_fast_of(run_ids := $r) ORDER BY ALL",
                               {"r": run_ids}).fetchall()
            slow = con.execute(f"SELECT {COLUMNS} FROM task_outcomes_of(false, run_ids := $r) ORDER BY ALL",
                               {"r": run_ids}).fetchall()
            assert fast == slow, run_ids
            # the database does hold what the rows must get right
            if run_ids is None:
                assert {r[0] for r in fast} == {"seq", "pass", "seq-one", "big"}
                assert any(r[8] > 0 for r in fast) and any(r[11] < r[7] for r in fast)
                assert any(r[13] for r in fast) and any(r[2] > 1 for r in fast)


def test_a_row_written_twice_counts_once(tmp_path: Path):
    """A lake has no primary key: the same attempt appended twice is one slot."""
    db = tmp_path / "twice.duckdb"
    with store.connect(db) as con:
        _run(con, "seq", "seq@k", 3, 1, 1)
        _attempt(con, "a", "seq", 1, 1, 1, 1, "ok", False, T0)
        _attempt(con, "b", "seq", 1, 1, 1, 2, "ok", True, T0)
        # what the lake could hold: the same rows again under a copy of the table
        con.execute("CREATE TABLE twice AS SELECT * FROM attempts")
        con.execute("INSERT INTO twice SELECT * FROM attempts")
        con.execute("ALTER TABLE attempts RENAME TO attempts_once")
        con.execute("ALTER TABLE twice RENAME TO attempts")
        row = con.execute("SELECT n_attempts, n_valid, n_success, first_success, valid_prefix "
                          "FROM chain_kept_rows()").fetchall()
    assert row == [(2, 2, 1, 2, 2)]
