"""The survival estimates of sql/views.sql hold the identities that make them what they claim, on
random runs with errors (superseded or final), holes, chains, older generations and unpriced
calls: the mean of the tasks' Efron values is the Kaplan-Meier estimate (self-consistency, Efron
1967), and so is one minus the known-unsolved share weighted by the inverse censoring survival
(Satten & Datta 2001); the mean of the redistributed spends is the expected spend of a chain;
width 1 of the frontier is the curve. The estimators' statistical properties are checked by the
null-world simulation (tests/analysis/test_null_world.py)."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from seqk import store

T0 = datetime(2026, 1, 1)


def _run(con, run_id: str, metric: str, k: int, chains: int, generation: int) -> None:
    con.execute(
        "INSERT INTO run_rows (run_id, benchmark, slice, metric, k, chains, generation, feedback_mode, "
        "actor_model, verifier, fingerprint, fingerprint_fields, created_at, updated_at, seqk_version) "
        "VALUES (?, 'toy', 'toy-plain', ?, ?, ?, ?, 'binary', 'mock/a', 'deterministic', 'fp', '{}', "
        "?, ?, 'test')", [run_id, metric, k, chains, generation, T0, T0])


class _Writer:
    def __init__(self, con, rng: random.Random) -> None:
        self.con, self.rng, self.clock = con, rng, 0

    def calls(self, uid: str, run_id: str, generation: int, task: int, chain: int, slot: int,
              priced: bool) -> None:
        """One to three calls (actor, judge, critic), some unpriced, some without token counts."""
        for call in range(1, self.rng.randint(1, 3) + 1):
            cost = round(self.rng.random(), 3) if priced and self.rng.random() < 0.9 else None
            tokens = None if self.rng.random() < 0.1 else self.rng.randint(1, 60)
            self.con.execute(
                "INSERT INTO calls (attempt_uid, run_id, generation, task_index, chain_index, "
                "attempt_index, call_index, role, model, input_tokens, output_tokens, cost_usd, "
                "retries, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'actor', 'mock/a', ?, 3, ?, 0, ?)",
                [uid, run_id, generation, task, chain, slot, call, tokens, cost, T0])

    def attempt(self, run_id: str, generation: int, task: int, chain: int, slot: int, status: str,
                success: bool | None, priced: bool = True) -> None:
        self.clock += 1
        uid = f"{run_id}#{generation}#{task}#{chain}#{slot}#{self.clock}"
        at = T0 + timedelta(seconds=self.clock)
        self.con.execute(
            "INSERT INTO attempts (attempt_uid, run_id, generation, task_index, chain_index, "
            "attempt_index, k, status, success, score, error, started_at, finished_at) "
            "VALUES (?, ?, ?, ?, ?, ?, 4, ?, ?, ?, ?, ?, ?)",
            [uid, run_id, generation, task, chain, slot, status, success,
             None if success is None else float(success),
             '{"stage": "actor"}' if status == "error" else None, at, at])
        self.calls(uid, run_id, generation, task, chain, slot, priced)


def _seq_run(w: _Writer, run_id: str, k: int, n_tasks: int, chains: int, priced: bool) -> None:
    rng = w.rng
    for task in range(1, n_tasks + 1):
        p = rng.random()
        for chain in range(1, chains + 1):
            for slot in range(1, k + 1):
                if rng.random() < 0.05:  # a hole: this slot never ran (a run in progress)
                    continue
                if rng.random() < 0.2:  # an error, superseded by a valid row or where it stopped
                    w.attempt(run_id, 2, task, chain, slot, "error", None, priced)
                    if rng.random() < 0.4:
                        break
                if rng.random() < 0.05:  # paid for, killed before its attempt was written
                    w.calls(f"lost#{run_id}#{task}#{chain}#{slot}", run_id, 2, task, chain, slot, priced)
                    break
                success = rng.random() < p
                w.attempt(run_id, 2, task, chain, slot, "ok", success, priced)
                if success:
                    break
        if rng.random() < 0.3:  # an older generation, which must not count
            w.attempt(run_id, 1, task, 1, 1, "ok", True, priced)


def random_db(path: Path, seed: int) -> None:
    """Two one-chain seq@k runs (one never priced), a pass@k run and a four-chain seq@k run."""
    rng = random.Random(seed)
    with store.connect(path) as con:
        w = _Writer(con, rng)
        for run_id, metric, k, chains in (("seq1", "seq@k", 4, 1), ("seq_unpriced", "seq@k", 3, 1),
                                          ("pass", "pass@k", 5, 1), ("seq4", "seq@k", 3, 4)):
            _run(con, run_id, metric, k, chains, generation=2)
        _seq_run(w, "seq1", 4, 14, 1, priced=True)
        _seq_run(w, "seq_unpriced", 3, 8, 1, priced=False)
        _seq_run(w, "seq4", 3, 6, 4, priced=True)
        for task in range(1, 13):
            p = rng.random()
            for sample in range(1, 6):
                if rng.random() < 0.08:
                    continue  # a sample not finished yet
                status = "error" if rng.random() < 0.1 else "ok"
                w.attempt("pass", 2, task, 1, sample, status,
                          None if status == "error" else rng.random() < p)


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
