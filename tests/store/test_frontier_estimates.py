"""The survival estimates of sql/views.sql hold the identities that make them what they claim, on
random runs with errors (superseded or final), holes, chains, older generations and unpriced
calls: the mean of the tasks' Efron values is the Kaplan-Meier estimate (self-consistency, Efron
1967), and so is one minus the known-unsolved share weighted by the inverse censoring survival
(Satten & Datta 2001); the mean of the redistributed spends is the expected spend of a chain;
width 1 of the frontier is the curve. The estimators' statistical properties are checked by the
null-world simulation (tests/analysis/test_null_world.py)."""

from __future__ import annotations

import math

import pytest
from random_runs import random_db

from seqk import store


def _assert_same(got: list[tuple], want: list[tuple]) -> None:
    assert len(got) == len(want) and [r[:2] for r in got] == [r[:2] for r in want]
    for g, x in zip(got, want, strict=True):
        for a, b in zip(g, x, strict=True):
            if isinstance(a, float) and isinstance(b, float):
                assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (g, x)
            else:
                assert a == b, (g, x)


POLICY = {"value": "censored", "value_if_failures": "failures", "value_if_successes": "successes"}


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_mean_of_the_task_values_is_the_kaplan_meier_estimate(tmp_path, seed):
    db = tmp_path / "f.duckdb"
    random_db(db, seed)
    with store.connect(db, read_only=True) as con:
        for column, policy in POLICY.items():
            means = con.execute(f"SELECT run_id, t, avg({column}) FROM task_curve WHERE run_id IN "
                                "('seq1', 'seq_unpriced') GROUP BY ALL ORDER BY ALL").fetchall()
            km = con.execute("SELECT run_id, j, 1 - survival FROM run_survival_of() WHERE policy = ? "
                             "AND run_id IN ('seq1', 'seq_unpriced') ORDER BY ALL", [policy]).fetchall()
            curve = con.execute(f"SELECT run_id, t, {column} FROM run_curve WHERE run_id IN "
                                "('seq1', 'seq_unpriced') ORDER BY ALL").fetchall()
            _assert_same(means, km)
            if column != "value":  # the range is there only where the run has errors
                curve = [r if r[2] is not None else (r[0], r[1], x[2]) for r, x in zip(curve, km, strict=True)]
            _assert_same(curve, km)
        # and with errors_as_failures the value is the failures policy's
        failures = con.execute("SELECT run_id, t, value FROM run_curve_of(true) WHERE run_id = 'seq1' "
                               "ORDER BY t").fetchall()
        assert failures == con.execute("SELECT run_id, t, value_if_failures FROM run_curve "
                                       "WHERE run_id = 'seq1' ORDER BY t").fetchall()


@pytest.mark.parametrize("seed", [5, 6])
def test_inverse_probability_of_censoring_weighting_gives_kaplan_meier(tmp_path, seed):
    """1 - (chains known unsolved through d) / (N G(d)) = 1 - S(d): G is the censoring survival
    the frontier's Horvitz-Thompson cells divide by."""
    db = tmp_path / "f.duckdb"
    random_db(db, seed)
    with store.connect(db, read_only=True) as con:
        rows = con.execute("""
            SELECT s.run_id, s.j, 1 - s.survival,
                   1 - (SELECT count(*) FROM chain_policies_of() p
                        WHERE p.run_id = s.run_id AND p.policy = s.policy
                          AND coalesce(p.event > s.j, true) AND coalesce(p.censored, p.k) >= s.j)
                       / (SELECT count(*) FROM chain_policies_of() p
                          WHERE p.run_id = s.run_id AND p.policy = s.policy) / s.censoring_survival
            FROM run_survival_of() s WHERE s.run_id IN ('seq1', 'seq4') ORDER BY ALL""").fetchall()
    assert rows and all(math.isclose(r[2], r[3], abs_tol=1e-12) for r in rows), rows


@pytest.mark.parametrize("seed", [7, 8])
def test_the_mean_redistributed_spend_is_the_expected_spend_of_a_chain(tmp_path, seed):
    db = tmp_path / "f.duckdb"
    random_db(db, seed)
    with store.connect(db, read_only=True) as con:
        for unit in ("cost_usd", "tokens"):
            means = con.execute(f"SELECT run_id, depth, avg({unit}) FROM frontier_tasks_of(false) "
                                "WHERE run_id IN ('seq1', 'seq_unpriced') GROUP BY ALL ORDER BY ALL").fetchall()
            through = con.execute(f"SELECT run_id, j, {unit}_through FROM run_survival_of() "
                                  "WHERE policy = 'censored' AND run_id IN ('seq1', 'seq_unpriced') "
                                  "ORDER BY ALL").fetchall()
            _assert_same(means, through)


@pytest.mark.parametrize("errors_as_failures", [False, True])
def test_width_one_of_the_frontier_is_the_curve(tmp_path, errors_as_failures):
    db = tmp_path / "f.duckdb"
    random_db(db, 9)
    with store.connect(db, read_only=True) as con:
        frontier = con.execute("SELECT run_id, depth, value, n_tasks, cost_usd_per_task, tokens_per_task "
                               "FROM frontier_of(?) WHERE width = 1 AND run_id LIKE 'seq%' ORDER BY ALL",
                               [errors_as_failures]).fetchall()
        curve = con.execute("SELECT run_id, t, value, n_tasks, cost_usd_per_task, tokens_per_task "
                            "FROM run_curve_of(?) WHERE run_id LIKE 'seq%' ORDER BY ALL",
                            [errors_as_failures]).fetchall()
        assert {r[0] for r in curve} == {"seq1", "seq_unpriced", "seq4"}
        assert any(r[4] is None for r in curve if r[0] == "seq_unpriced")  # unpriced: no US$
        _assert_same(frontier, curve)


def test_the_frontier_view_carries_the_range_errors_leave(tmp_path):
    """Each cell of a run with errored attempts carries its value with errors counted as failures
    and as successes (issue 27's interface); width 1 of a seq@k run, and depth 1 of a pass@k run,
    are the curve's range; a run without errors has none."""
    db = tmp_path / "f.duckdb"
    random_db(db, 9)
    with store.connect(db) as con:  # one run's errored attempts gone: a run without errors
        con.execute("DELETE FROM calls WHERE run_id = 'seq_unpriced' AND attempt_uid IN "
                    "(SELECT attempt_uid FROM attempts WHERE run_id = 'seq_unpriced' AND status = 'error')")
        con.execute("DELETE FROM attempts WHERE run_id = 'seq_unpriced' AND status = 'error'")
        store.rebuild_kept_chains(con)
    with store.connect(db, read_only=True) as con:
        view = {r[:3]: r[3:] for r in con.execute(
            "SELECT run_id, width, depth, value, value_if_failures, value_if_successes FROM frontier").fetchall()}
        default = {r[:3]: r[3] for r in con.execute(
            "SELECT run_id, width, depth, value FROM frontier_of(false)").fetchall()}
        failures = {r[:3]: r[3] for r in con.execute(
            "SELECT run_id, width, depth, value FROM frontier_of(true)").fetchall()}
        curve = {(r[0], r[1]): r[2:] for r in con.execute(
            "SELECT run_id, t, value_if_failures, value_if_successes FROM run_curve").fetchall()}
    assert view.keys() == default.keys() and {k[0] for k in view} == {"seq1", "seq_unpriced", "pass", "seq4"}
    for key, (value, if_failures, if_successes) in view.items():
        assert (value is None) == (default[key] is None), key
        assert value is None or math.isclose(value, default[key], abs_tol=1e-12), key  # sums in another order
        if key[0] == "seq_unpriced":
            assert if_failures is None and if_successes is None, key
            continue
        assert if_failures is not None and if_successes is not None, key
        assert math.isclose(if_failures, failures[key], abs_tol=1e-12), key
        run_id, width, depth = key
        if (width == 1 and run_id != "pass") or (depth == 1 and run_id == "pass"):
            t = depth if run_id != "pass" else width
            for got, want in zip((if_failures, if_successes), curve[(run_id, t)], strict=True):
                assert math.isclose(got, want, abs_tol=1e-12), (key, got, want)
    # an error counted as a success never lowers a seq@k cell below its value as a failure
    assert all(v[2] >= v[1] - 1e-12 for k, v in view.items() if v[1] is not None and k[0] != "pass")
