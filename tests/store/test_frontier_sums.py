"""frontier_under sums the frontier over the tasks' states (a one-chain seq@k run's from its
curves, a pass@k run's tasks by state); it must be the mean of frontier_tasks_under's per-task
rows, the definition, on random runs with errors (superseded or final), censoring, holes, chains,
older generations and unpriced calls, under each way of reading errors."""

from __future__ import annotations

import math

import pytest
from random_runs import random_db

from seqk import store

PER_TASK = """
SELECT run_id, width, depth, avg(value) AS value,
       count(value) AS n_tasks, (count(*) - count(value))::BIGINT AS n_left_out,
       CASE WHEN bool_or(priced) THEN avg(cost_usd) FILTER (WHERE value IS NOT NULL) END
           AS cost_usd_per_task,
       coalesce(avg(tokens) FILTER (WHERE value IS NOT NULL), 0.0) AS tokens_per_task
FROM frontier_tasks_under(?) GROUP BY ALL ORDER BY run_id, width, depth
"""


def _assert_same(got: list[tuple], want: list[tuple]) -> None:
    assert [r[:3] for r in got] == [r[:3] for r in want]
    for g, x in zip(got, want, strict=True):
        for a, b in zip(g, x, strict=True):
            if isinstance(b, float):
                assert isinstance(a, float) and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), (g, x)
            else:  # the counts, and NULL where the mean is
                assert a == b, (g, x)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_frontier_under_is_the_mean_of_the_per_task_rows(tmp_path, seed):
    db = tmp_path / "f.duckdb"
    random_db(db, seed)
    with store.connect(db, read_only=True) as con:
        for policy in ("censored", "failures", "successes"):
            want = con.execute(PER_TASK, [policy]).fetchall()
            got = con.execute("SELECT * FROM frontier_under(?)", [policy]).fetchall()
            assert {r[0] for r in got} == {"seq1", "seq_unpriced", "pass", "seq4"}
            assert any(r[6] is None for r in got if r[0] == "seq_unpriced")  # unpriced: no US$
            _assert_same(got, want)
            # one run asked for: the same cells as in the whole
            only = con.execute("SELECT * FROM frontier_under(?, run_ids := ['seq1', 'pass'])",
                               [policy]).fetchall()
            _assert_same(only, [r for r in want if r[0] in ("seq1", "pass")])
