"""A figure read twice from the same store is the same number: the sums of doubles in the SQL
(exact_sum, exact_avg in sql/views.sql) do not depend on the order DuckDB meets the rows in, which
its threads change from one run to the next (a pass^t printed as 0.107 in one report and 0.108 in
the next). Here the same rows are stored in other orders, and read with one thread and with four:
every figure must keep its bits. With DuckDB's own sum() of doubles in those macros, this fails."""

from __future__ import annotations

import math
import random
import shutil

import duckdb
import pytest
from random_runs import random_db

from seqk import store
from seqk.store import queries

# each ordered so that the rows (not only their values) can be compared
FIGURES = {
    "run_curves": lambda con, eaf: queries.run_curves(con, errors_as_failures=eaf, run_ids=None),
    "frontier": lambda con, eaf: queries.frontier_rows(con, errors_as_failures=eaf, run_ids=None),
    "task_curve": lambda con, eaf: con.execute(
        "SELECT * FROM task_curve_of(?) ORDER BY run_id, task_index, t", [eaf]).fetchall(),
    "task_spend": lambda con, eaf: con.execute(
        "SELECT * FROM task_spend ORDER BY ALL").fetchall(),
    "spend_by_role": lambda con, eaf: queries.spend_by_role(con, run_ids=None),
    "status": lambda con, eaf: queries.run_status(con, run_ids=None),
    "view_runs": lambda con, eaf: queries.view_runs(con, run_ids=None),
}


def _figures(db, threads: int) -> dict:
    with store.connect(db, read_only=True) as con:
        con.execute(f"SET threads = {threads}")
        return {(name, eaf): read(con, eaf) for name, read in FIGURES.items() for eaf in (False, True)}


def _store_in_order(src, dst, order: str) -> None:
    """dst: src's rows with chain_kept, calls and attempts rewritten in another physical order."""
    shutil.copy(src, dst)
    with store.connect(dst) as con:
        for table in ("chain_kept", "calls", "attempts"):
            con.execute(f"CREATE TEMP TABLE moved AS SELECT * FROM {table} ORDER BY {order}")
            con.execute(f"DELETE FROM {table}")
            con.execute(f"INSERT INTO {table} SELECT * FROM moved")
            con.execute("DROP TABLE moved")


def _floats(rows) -> int:
    return sum(isinstance(v, float) for row in rows for v in (row.values() if isinstance(row, dict) else row))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_figure_keeps_its_bits_whatever_order_the_rows_are_read_in(tmp_path, seed):
    db = tmp_path / "s.duckdb"
    random_db(db, seed)
    want = _figures(db, threads=1)
    assert sum(_floats(rows) for rows in want.values()) > 500  # the figures hold real numbers
    for i, order in enumerate(("rowid DESC", f"hash(rowid + {seed})")):
        other = tmp_path / f"o{i}.duckdb"
        _store_in_order(db, other, order)
        for threads in (1, 4):
            got = _figures(other, threads)
            for key, rows in want.items():
                assert got[key] == rows, (key, order, threads)  # == on floats: the same bits


def test_exact_sum_is_the_correctly_rounded_sum_and_fails_out_of_range(tmp_path):
    rng = random.Random(7)
    with store.connect(tmp_path / "e.duckdb") as con:  # the store's own macros
        _check_exact_sum(con, rng)


def _check_exact_sum(con, rng) -> None:
    for _ in range(20):
        terms = [rng.random() * 10 ** rng.randint(-6, 6) for _ in range(rng.randint(1, 3000))]
        con.execute("CREATE OR REPLACE TABLE t AS SELECT unnest(?::DOUBLE[]) AS x", [terms])
        got = con.execute("SELECT exact_sum(x) FROM t").fetchone()[0]
        # the terms' rounding to 1e-20 is the only error: 5e-21 a term at most
        assert abs(got - math.fsum(terms)) <= len(terms) * 5e-21 + 2 * math.ulp(math.fsum(terms))
        mean = con.execute("SELECT exact_avg(x) FROM t").fetchone()[0]
        assert mean == got / len(terms)
        for groups in (1, 7, len(terms)):  # exact_total of exact_partial's, grouped any way: its bits
            two_steps = con.execute(
                "SELECT exact_total(p) FROM (SELECT exact_partial(x) AS p FROM t "
                "GROUP BY hash(x) % ?)", [groups]).fetchone()[0]
            assert two_steps == got, (groups, two_steps, got)
    assert con.execute("SELECT exact_sum(x) FROM (SELECT NULL::DOUBLE AS x)").fetchone()[0] is None
    assert con.execute("SELECT exact_avg(x) FROM (SELECT NULL::DOUBLE AS x)").fetchone()[0] is None
    for beyond in ("SELECT exact_sum(2e18::DOUBLE)",  # a term, or the total, out of range
                   "SELECT exact_sum(9e17::DOUBLE) FROM range(3)"):
        with pytest.raises(duckdb.Error):  # fails the query, never a wrong sum
            con.execute(beyond).fetchone()
