"""run_curve_of's soft score (seq_k's mean best score within the first t) equals its definition
recomputed in Python from the attempts, on random runs with holes, errors, chains, older
generations and scores that are not 0/1 (negative ones too, so a chain's running best can fall
from the 0.0 it holds before any valid score): the SQL reads each chain's kept running bests and
turns them into +best / -best events, which this test never does."""

from __future__ import annotations

import math
from collections import defaultdict

import pytest
from random_runs import random_db

from seqk import store
from seqk.store import queries


def _scores(con) -> None:
    """Every valid row a score of its own: a success 1.0, a failure a value in [-0.3, 0.9)."""
    con.execute("""
        UPDATE attempts SET score = CASE WHEN success THEN 1.0
            ELSE ((hash(attempt_uid) % 1200)::DOUBLE / 1000.0) - 0.3 END
        WHERE status = 'ok'""")
    store.rebuild_kept_chains(con)


def _expected(con, errors_as_failures: bool) -> dict[tuple[str, int], float | None]:
    best_rows = defaultdict(list)
    for run_id, task, chain, index, score in con.execute("""
            SELECT run_id, task_index, chain_index, attempt_index, coalesce(score, success::DOUBLE)
            FROM current_attempts WHERE status = 'ok'""").fetchall():
        best_rows[run_id, task, chain].append((index, score))
    sums: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0, 0])
    for run_id, task, chain, k, first_success, known_to in con.execute(
            "SELECT run_id, task_index, chain_index, k, first_success, known_to "
            "FROM task_outcomes_of(?)", [errors_as_failures]).fetchall():
        for t in range(1, k + 1):
            if not ((first_success is not None and first_success <= t) or known_to >= t):
                continue  # the first-t outcome is not known: the chain is not counted at t
            seen = [score for index, score in best_rows[run_id, task, chain] if index <= t]
            sums[run_id, t][0] += max(seen) if seen else 0.0
            sums[run_id, t][1] += 1
    return {key: (x / n if n else None) for key, (x, n) in sums.items()}


@pytest.mark.parametrize("seed", range(1, 7))
def test_the_soft_score_is_the_mean_best_score_within_t_over_the_chains_known_there(tmp_path, seed):
    db = tmp_path / "seqk.duckdb"
    random_db(db, seed)
    with store.connect(db) as con:
        _scores(con)
        assert con.execute("SELECT count(*) FROM attempts WHERE status = 'ok' AND score < 0 "
                           "AND NOT success").fetchone()[0] > 0
        run_ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        for errors_as_failures in (False, True):
            want = _expected(con, errors_as_failures)
            got = {(row["run_id"], row["t"]): row["soft_score"]
                   for row in queries.run_curves(con, errors_as_failures=errors_as_failures,
                                                 run_ids=run_ids)}
            assert got.keys() == want.keys() and len(want) == 15  # (run, t) for t = 1..k of 4 runs
            for key, value in want.items():
                if value is None:
                    assert got[key] is None, key
                else:
                    assert math.isclose(got[key], value, rel_tol=1e-12, abs_tol=1e-12), (key, got[key], value)
