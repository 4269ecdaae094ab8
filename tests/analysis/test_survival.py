"""The estimators of seqk.analysis.survival and seqk.analysis.cells (what the bootstraps resample)
give the point estimates of the SQL views on random runs with errors, holes, chains and older
generations: the curves under every policy, task by task, and every frontier cell's value and
spend. The identities the estimates rest on hold in Python too: Efron's values average to the
Kaplan-Meier estimate, and with nothing censored everything is the plain proportion."""

from __future__ import annotations

import math

import numpy as np
import pytest
from random_runs import random_db

from seqk import store
from seqk.analysis import cells, survival
from seqk.analysis.survival import POLICIES

RUNS = ["pass", "seq1", "seq4", "seq_unpriced"]


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)):
        return (a is None or math.isnan(a)) and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    db = tmp_path_factory.mktemp("survival") / "s.duckdb"
    random_db(db, 21)
    with store.connect(db) as con:  # tasks, so that runs pair by content
        con.execute("INSERT INTO tasks SELECT r.run_id, i, 't' || i, 'p', 'h' || i, NULL "
                    "FROM run_rows r, range(1, 15) AS g(i)")
    with store.connect(db, read_only=True) as con:
        yield con, survival.read_chains(con, RUNS)


@pytest.mark.parametrize("errors_as_failures", [False, True])
def test_the_curves_are_the_views_task_by_task(database, errors_as_failures):
    con, chains = database
    rows = con.execute("SELECT run_id, task_index, t, value, value_if_failures, value_if_successes "
                       "FROM task_curve_of(?)", [errors_as_failures]).fetchall()
    sql = {(r[0], r[1], r[2]): r[3:] for r in rows}
    policy = survival.value_policy(errors_as_failures)
    checked = 0
    for run_id, run in chains.items():
        found = {p: survival.curve(run, p) for p in POLICIES}
        for row, task in enumerate(run.task_index):
            for t in range(1, run.k + 1):
                mine = [found[p].values[row, t - 1] for p in (policy, "failures", "successes")]
                for a, b in zip(mine, sql[(run_id, int(task), t)], strict=True):
                    assert close(float(a), b), (run_id, task, t, mine, sql[(run_id, int(task), t)])
                checked += 1
    assert checked > 100
    curve_rows = con.execute("SELECT run_id, t, value FROM run_curve_of(?)", [errors_as_failures]).fetchall()
    for run_id, t, value in curve_rows:
        assert close(survival.curve(chains[run_id], policy).at(t).point, value), (run_id, t)


@pytest.mark.parametrize("errors_as_failures", [False, True])
@pytest.mark.parametrize("unit", ["US$", "tokens"])
def test_every_frontier_cell_is_the_views(database, errors_as_failures, unit):
    con, chains = database
    column = "cost_usd_per_task" if unit == "US$" else "tokens_per_task"
    sql = {(r[0], r[1], r[2]): r[3:] for r in con.execute(
        f"SELECT run_id, width, depth, value, n_tasks, {column} FROM frontier_of(?)",
        [errors_as_failures]).fetchall()}
    policy = survival.value_policy(errors_as_failures)
    mine = {}
    for run_id, run in chains.items():
        side = (cells.seq_frontier(run, policy, unit) if run.is_seq else
                cells.pass_frontier(run, policy, unit, stopping=True))
        for i, c in enumerate(side.cells):
            m = side.features[c.defined].mean(axis=0)[None, :]
            if side.pooled is not None:  # the run's curves over every task (budget._figures)
                m[0, side.pooled] = side.features.mean(axis=0)[side.pooled]
            values, spends = side.evaluate(m)
            mine[(run_id, c.width, c.depth)] = (float(values[0, i]), int(c.defined.sum()),
                                                float(spends[0, i]))
    assert {key for key, row in sql.items() if row[1]} == set(mine)
    for key, (value, n, spend) in mine.items():
        want = sql[key]
        assert n == want[1] and close(value, want[0]), (key, value, want)
        if want[2] is not None:
            assert close(spend, want[2]), (key, spend, want)
    assert any(key[1] > 1 for key in mine if key[0] == "seq4")


def test_efron_values_average_to_kaplan_meier_and_nothing_censored_is_a_proportion():
    rng = np.random.default_rng(3)
    k, n = 4, 500
    event = np.where(rng.random(n) < 0.6, rng.integers(1, k + 1, n), 0)
    cut = np.where((event == 0) & (rng.random(n) < 0.3), rng.integers(0, k, n), -1)
    j = np.arange(1, k + 1)[None, :]
    last = np.where(event > 0, event, np.where(cut >= 0, cut, k))
    at_risk, events = (j <= last[:, None]).sum(axis=0), (event[:, None] == j).sum(axis=0)
    s = survival.kaplan_meier(at_risk.astype(float), events.astype(float))
    assert np.allclose(survival.efron_values(event, cut, s).mean(axis=0), 1 - s)
    none = np.full(n, -1)
    at_risk = (j <= np.where(event > 0, event, k)[:, None]).sum(axis=0)
    s = survival.kaplan_meier(at_risk.astype(float), events.astype(float))
    assert np.allclose(1 - s, [np.mean((event > 0) & (event <= t)) for t in range(1, k + 1)])
    assert np.allclose(survival.efron_values(event, none, s).mean(axis=0), 1 - s)


def test_shared_keys_are_numpys_intersection_of_task_keys():
    """draws.shared_keys intersects assuming each key once per array (a run's task keys, or a
    subset of them): the same indices as np.intersect1d without the assumption, in the same
    order, whatever the overlap."""
    from seqk.analysis.draws import shared_keys

    rng = np.random.default_rng(3)
    for n_a, n_b, overlap in ((0, 5, 0), (7, 0, 0), (50, 40, 30), (300, 300, 300), (200, 150, 0)):
        common = [f"{i}/{rng.integers(1 << 40):x}" for i in range(overlap)]
        a = common + [f"{1000 + i}/a{i}" for i in range(n_a - min(n_a, overlap))]
        b = common[:n_b] + [f"{1000 + i}/b{i}" for i in range(n_b - min(n_b, overlap))]
        a = np.array(a[:n_a], dtype=str)[rng.permutation(len(a[:n_a]))] if n_a else np.array([], dtype=str)
        b = np.array(b[:n_b], dtype=str)[rng.permutation(len(b[:n_b]))] if n_b else np.array([], dtype=str)
        _, want_a, want_b = np.intersect1d(a, b, return_indices=True)
        got_a, got_b = shared_keys(a, b)
        assert np.array_equal(got_a, want_a) and np.array_equal(got_b, want_b)
        assert np.array_equal(a[got_a], b[got_b])


def test_two_runs_paired_at_t_from_their_shared_tasks_are_the_figures_intersected_at_t(database):
    """paired.shared_figures_at (the runs' tasks intersected once) gives, row for row and bit for
    bit, what intersecting each t's two figures gives, and the comparison on it is the same."""
    from seqk.analysis import paired

    _, chains = database
    checked = 0
    for a_id in RUNS:
        for b_id in RUNS:
            a, b = chains[a_id], chains[b_id]
            for policy in POLICIES:
                for t in range(1, min(a.k, b.k) + 1):
                    fa, fb = survival.curve(a, policy).at(t), survival.curve(b, policy).at(t)
                    _, ia, ib = np.intersect1d(fa.keys, fb.keys, return_indices=True)
                    for old, new in zip((fa.subset(ia), fb.subset(ib)), paired.shared_figures_at(a, b, t, policy),
                                        strict=True):
                        for name in ("keys", "features", "values", "censored"):
                            assert np.array_equal(getattr(old, name), getattr(new, name)), (a_id, b_id, t, name)
                        assert old.point == new.point or math.isnan(old.point) and math.isnan(new.point)
                    checked += 1
            for t in (1, min(a.k, b.k)):
                fast = paired.compare_chains(a, b, t, name="x", n_boot=200)
                slow = paired.paired_figures(paired.figure_at(a, t, "censored"), paired.figure_at(b, t, "censored"),
                                             a_id, b_id, t, name="x", n_boot=200)
                assert (fast.difference, fast.p_value, fast.detectable) == (slow.difference, slow.p_value,
                                                                            slow.detectable), (a_id, b_id, t)
    assert checked > 100


def test_arrow_columns_read_without_pyarrow_compute_are_fill_null_and_list_flatten():
    """survival._int and _lists read validity bitmaps instead of pyarrow.compute: the same arrays
    as fill_null, list_value_length and list_flatten give, on columns with NULL numbers, NULL lists,
    two chunks and slices (a run's rows are a slice of chain_rows' table)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def lists(column, k):
        column = column.combine_chunks() if hasattr(column, "combine_chunks") else column
        out = np.zeros((len(column), max(k, 1)))
        lengths = np.asarray(pc.list_value_length(column).fill_null(0).to_numpy(zero_copy_only=False))
        flat = np.asarray(pc.list_flatten(column).cast("double").fill_null(0.0).to_numpy(zero_copy_only=False))
        rows = np.repeat(np.arange(len(column)), lengths)
        cols = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        out[rows[cols < out.shape[1]], cols[cols < out.shape[1]]] = flat[cols < out.shape[1]]
        return out

    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(0, 40))
        ints = [None if rng.random() < 0.3 else int(rng.integers(-5, 50)) for _ in range(n)]
        numbers = pa.int64() if rng.random() < 0.5 else pa.float64()
        cast = int if numbers == pa.int64() else float
        # some columns without NULL lists, some whose lists all have k elements (the fast paths)
        null_lists, same_length = rng.random() < 0.5, int(rng.integers(0, 12)) if rng.random() < 0.3 else None
        values = [None if null_lists and rng.random() < 0.2 else [
            None if rng.random() < 0.2 else cast(rng.integers(0, 90) / 7)
            for _ in range(same_length if same_length is not None else int(rng.integers(0, 12)))]
            for _ in range(n)]
        cut = int(rng.integers(0, n + 1))
        table = pa.table({"i": pa.chunked_array([ints[:cut], ints[cut:]], pa.int32()),
                          "l": pa.chunked_array([values[:cut], values[cut:]], pa.list_(numbers))})
        lo = int(rng.integers(0, n + 1))
        size = int(rng.integers(0, n + 1 - lo))
        whole = {name: table.column(name).combine_chunks() for name in ("i", "l")}
        for part in (table, table.slice(lo, size), {name: a.slice(lo, size) for name, a in whole.items()}):
            i, listed = (part["i"], part["l"]) if isinstance(part, dict) else (part.column("i"), part.column("l"))
            for missing in (0, -1):
                expected = np.asarray(i.fill_null(missing).to_numpy(zero_copy_only=False), np.int64)
                assert np.array_equal(survival._int(i, missing), expected)
            k = same_length if same_length is not None and rng.random() < 0.7 else int(rng.integers(0, 12))
            if len(listed):
                assert np.array_equal(survival._lists(listed, k), lists(listed, k))
