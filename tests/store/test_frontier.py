"""The `frontier` view against a brute-force enumeration of chain subsets on small random
databases where no chain is censored (errors superseded by a valid row only: there the censoring
estimators are the plain ones), and against Chen et al.'s estimator for the cells of a pass@k
run, resample until success at every depth. Under censoring the estimates are checked by their
identities (tests/store/test_frontier_estimates.py) and the null-world simulation
(tests/analysis/test_null_world.py)."""

from __future__ import annotations

import itertools
import json
import random
from datetime import datetime, timedelta
from math import comb
from pathlib import Path

import pytest

from seqk import store
from seqk.store import queries

T0 = datetime(2026, 1, 1)


def _insert_run(con, run_id: str, metric: str, k: int, chains: int) -> None:
    con.execute(
        "INSERT INTO run_rows (run_id, benchmark, slice, metric, k, chains, generation, feedback_mode, "
        "actor_model, verifier, fingerprint, fingerprint_fields, created_at, updated_at, seqk_version) "
        "VALUES (?, 'toy', 'toy-plain', ?, ?, ?, 1, 'binary', 'mock/a', 'deterministic', 'fp', '{}', "
        "?, ?, 'test')", [run_id, metric, k, chains, T0, T0])


def _insert_attempt(con, run_id: str, task: int, chain: int, slot: int, status: str,
                    success: bool | None, cost: float | None, tokens: int, clock: list[int]) -> None:
    clock[0] += 1
    uid = f"{run_id}#{task}#{chain}#{slot}#{clock[0]}"
    at = T0 + timedelta(seconds=clock[0])
    con.execute(
        "INSERT INTO attempts (attempt_uid, run_id, generation, task_index, chain_index, attempt_index, "
        "k, status, success, score, error, started_at, finished_at) VALUES (?, ?, 1, ?, ?, ?, 3, ?, ?, "
        "?, ?, ?, ?)",
        [uid, run_id, task, chain, slot, status, success, None if success is None else float(success),
         json.dumps({"stage": "actor"}) if status == "error" else None, at, at])
    con.execute(
        "INSERT INTO calls (attempt_uid, run_id, generation, task_index, chain_index, attempt_index, "
        "call_index, role, model, input_tokens, output_tokens, cost_usd, retries, started_at) "
        "VALUES (?, ?, 1, ?, ?, ?, 1, 'actor', 'mock/a', ?, 1, ?, 0, ?)",
        [uid, run_id, task, chain, slot, tokens - 1, cost, at])


def random_db(path: Path, seed: int) -> dict:
    """A seq@k run with chains and a pass@k run; returns the raw attempts as Python saw them. A
    seq@k error is always redone (no chain censored); a pass@k sample may be lost to one."""
    rng = random.Random(seed)
    k, chains, n_tasks, n_samples = 3, 4, 9, 6
    raw: dict = {"seq": {}, "pass": {}, "k": k, "chains": chains}
    clock = [0]
    with store.connect(path) as con:
        con.execute("BEGIN TRANSACTION")  # one commit, not one a row
        _insert_run(con, "seq", "seq@k", k, chains)
        _insert_run(con, "pass", "pass@k", n_samples, 1)
        for task in range(1, n_tasks + 1):
            p = rng.random()
            # a task may have fewer chains started (a run extended from 2 chains, say)
            for chain in range(1, rng.choice([chains, chains, chains - 1, 1]) + 1):
                rows = []
                for slot in range(1, k + 1):
                    if rng.random() < 0.15:  # a superseded error row, paid for, then the valid one
                        cost = round(rng.random(), 3)
                        _insert_attempt(con, "seq", task, chain, slot, "error", None, cost, 7, clock)
                        rows.append((slot, "error", None, cost, 7))
                    success = rng.random() < p
                    cost, tokens = round(rng.random(), 3), rng.randint(2, 50)
                    _insert_attempt(con, "seq", task, chain, slot, "ok", success, cost, tokens, clock)
                    rows.append((slot, "ok", success, cost, tokens))
                    if success:
                        break
                raw["seq"][(task, chain)] = rows
            for sample in range(1, n_samples + 1):
                status = "error" if rng.random() < 0.1 else "ok"
                success = None if status == "error" else rng.random() < p
                cost, tokens = round(rng.random(), 3), rng.randint(2, 50)
                _insert_attempt(con, "pass", task, 1, sample, status, success, cost, tokens, clock)
                raw["pass"].setdefault(task, []).append((sample, status, success, cost, tokens))
        con.execute("COMMIT")
        store.rebuild_kept_chains(con)  # rows written by SQL, not through store.append_attempts
    return raw


def brute_force_seq(raw: dict) -> dict[tuple[int, int], tuple[float | None, int, float, float]]:
    """(width, depth) -> (value, n_tasks, cost per task, tokens per task), by enumerating every
    subset of w chains among those known at depth d, from the raw attempts."""
    k, chains = raw["k"], raw["chains"]
    tasks = sorted({t for t, _ in raw["seq"]})
    out = {}
    for w, d in itertools.product(range(1, chains + 1), range(1, k + 1)):
        values, costs, tokens = [], [], []
        for task in tasks:
            known: list[tuple[bool, float, float]] = []
            for (t, _chain), rows in raw["seq"].items():
                if t != task:
                    continue
                valid = {slot: success for slot, status, success, _c, _t in rows if status == "ok"}
                first = min((s for s, ok in valid.items() if ok), default=None)
                prefix = next((s - 1 for s in range(1, k + 2) if s not in valid), k)
                solved = first is not None and first <= d
                if solved or prefix >= d:
                    spent = [(c or 0.0, tk) for s, _st, _ok, c, tk in rows if s <= d]
                    known.append((solved, sum(c for c, _ in spent), sum(tk for _, tk in spent)))
            if len(known) < w:
                continue
            subsets = list(itertools.combinations(range(len(known)), w))
            values.append(sum(any(known[i][0] for i in s) for s in subsets) / len(subsets))
            costs.append(w * sum(c for _, c, _ in known) / len(known))
            tokens.append(w * sum(tk for _, _, tk in known) / len(known))
        out[(w, d)] = (sum(values) / len(values) if values else None, len(values),
                       sum(costs) / len(costs) if costs else None, sum(tokens) / len(tokens) if tokens else 0.0)
    return out


# two worlds in a plain pytest, all four with --run-slow (CI, the README's command)
@pytest.mark.parametrize("seed", [1, 2, *(pytest.param(seed, marks=pytest.mark.slow) for seed in (3, 4))])
def test_frontier_equals_a_brute_force_enumeration_of_chain_subsets(tmp_path: Path, seed: int):
    raw = random_db(tmp_path / "f.duckdb", seed)
    expected = brute_force_seq(raw)
    with store.connect(tmp_path / "f.duckdb", read_only=True) as con:
        got = {(r["width"], r["depth"]): r
               for r in queries.frontier_rows(con, errors_as_failures=False, run_ids=["seq"])}
    assert set(got) == set(expected)
    n_started = len({t for t, _ in raw["seq"]})
    for cell, (value, n_tasks, cost, tokens) in expected.items():
        row = got[cell]
        assert row["n_tasks"] == n_tasks and row["n_left_out"] == n_started - n_tasks, cell
        if value is None:
            assert row["value"] is None, cell
            continue
        assert row["value"] == pytest.approx(value, abs=1e-12), cell
        assert row["cost_usd_per_task"] == pytest.approx(cost, abs=1e-9), cell
        assert row["tokens_per_task"] == pytest.approx(tokens, abs=1e-9), cell


@pytest.mark.parametrize("seed", [5, 6])
def test_a_pass_runs_cells_resample_until_success_by_chens_estimator(tmp_path: Path, seed: int):
    raw = random_db(tmp_path / "f.duckdb", seed)
    with store.connect(tmp_path / "f.duckdb", read_only=True) as con:
        got = {(r["width"], r["depth"]): r
               for r in queries.frontier_rows(con, errors_as_failures=False, run_ids=["pass"])}
    assert set(got) == {(w, d) for w in range(1, 7) for d in range(1, 7) if w * d <= 6}
    for (w, d), row in got.items():
        values, costs = [], []
        for rows in raw["pass"].values():
            valid = [r for r in rows if r[1] == "ok"]
            n, c = len(valid), sum(1 for r in valid if r[2])
            if n < w * d:
                continue
            values.append(1 - comb(n - c, w * d) / comb(n, w * d))  # w chains of d samples: w d samples
            per_sample = sum(r[3] for r in valid) / n
            costs.append(w * per_sample * sum(comb(n - c, j) / comb(n, j) for j in range(d)))
        assert row["n_tasks"] == len(values), (w, d)
        assert row["value"] == pytest.approx(sum(values) / len(values), abs=1e-12), (w, d)
        assert row["cost_usd_per_task"] == pytest.approx(sum(costs) / len(costs), abs=1e-9), (w, d)
        if d == 1:  # pass@w, which pays for every sample
            assert row["cost_usd_per_task"] == pytest.approx(
                w * sum(sum(r[3] for r in rows if r[1] == "ok") / sum(r[1] == "ok" for r in rows)
                        for rows in raw["pass"].values() if sum(r[1] == "ok" for r in rows) >= w)
                / row["n_tasks"], abs=1e-9)


def test_width_one_is_run_curves_seq_at_t(tmp_path: Path):
    random_db(tmp_path / "f.duckdb", 7)
    with store.connect(tmp_path / "f.duckdb", read_only=True) as con:
        frontier = {r["depth"]: r
                    for r in queries.frontier_rows(con, errors_as_failures=False, run_ids=["seq"])
                    if r["width"] == 1}
        curve = {r["t"]: r for r in queries.run_curves(con, errors_as_failures=False,
                                                 run_ids=["seq"])}
    for t, row in curve.items():
        assert row["value"] == pytest.approx(frontier[t]["value"], abs=1e-12)
        assert row["n_tasks"] == frontier[t]["n_tasks"]
