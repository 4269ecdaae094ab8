"""A report groups its runs' chain outcomes once (seqk.store.kept_chain_outcomes, sql/kept.sql) and
every query of the report reads them: the rows are those computed from the attempts, for all the
kept runs or any subset of them, and a query outside what was kept fails instead of answering
with missing rows."""

from __future__ import annotations

import duckdb
import pytest
from random_runs import random_db
from test_frontier_estimates import _assert_same

from seqk import store
from seqk.store import queries

pytestmark = pytest.mark.slow

RUNS = ["pass", "seq1", "seq4", "seq_unpriced"]
SUBSETS = [RUNS, ["seq1", "pass"], ["seq4"], ["seq_unpriced", "seq4"]]


def _database(path, seed: int) -> None:
    """test_frontier_estimates' random runs (errors, holes, four chains, older generations), with
    their tasks: the same content under each index but task 3, which differs in the pass@k run."""
    random_db(path, seed)
    with store.connect(path) as con:
        con.execute("INSERT INTO tasks SELECT r.run_id, i, 't' || i, 'p', "
                    "CASE WHEN i = 3 AND r.run_id = 'pass' THEN 'other' ELSE 'h' || i END, NULL "
                    "FROM run_rows r, range(1, 15) AS g(i)")


def _report_queries(con, errors_as_failures: bool, run_ids: list[str]) -> dict[str, list]:
    """The report's queries that start from chain_outcomes_of, as tuples in their own order."""
    flags = {"errors_as_failures": errors_as_failures}
    found = {
        "run_curves": queries.run_curves(con, **flags, run_ids=run_ids),
        "chain_rows": queries.chain_rows(con, run_ids=run_ids).to_pylist(),
        "frontier_rows": queries.frontier_rows(con, **flags, run_ids=run_ids),
    }
    return {name: [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in rows]
            for name, rows in found.items()}


@pytest.mark.parametrize("errors_as_failures", [False, True])
def test_the_kept_outcomes_give_the_rows_the_attempts_give(tmp_path, errors_as_failures):
    db = tmp_path / "k.duckdb"
    _database(db, 5)
    with store.connect(db, read_only=True) as con:
        want = {tuple(ids): _report_queries(con, errors_as_failures, ids) for ids in SUBSETS}
        assert all(rows for found in want.values() for rows in found.values())
        assert queries.session_chain_outcomes(con) == 0
        with store.kept_chain_outcomes(con, run_ids=RUNS):
            assert queries.session_chain_outcomes(con) == 1
            for ids in SUBSETS:  # a subset numbers its runs anew: run_curve_of joins on run_no
                got = _report_queries(con, errors_as_failures, ids)
                assert got.keys() == want[tuple(ids)].keys()
                for name, rows in got.items():
                    _assert_same(rows, want[tuple(ids)][name])
            # what is read is the kept table: without seq1's rows, seq1 has no curve
            con.execute("DELETE FROM temp.main.kept_chain_outcomes WHERE run_id = 'seq1'")
            assert queries.run_curves(con, errors_as_failures=errors_as_failures, run_ids=["seq1"]) == []
        assert queries.session_chain_outcomes(con) == 0
        _assert_same(_report_queries(con, errors_as_failures, RUNS)["run_curves"],
                     want[tuple(RUNS)]["run_curves"])


def test_a_query_outside_what_was_kept_fails(tmp_path):
    db = tmp_path / "k.duckdb"
    _database(db, 6)
    with store.connect(db, read_only=True) as con:
        with store.kept_chain_outcomes(con, run_ids=["seq1", "pass"]):
            assert queries.run_curves(con, errors_as_failures=False, run_ids=["seq1"])
            assert queries.run_curves(con, errors_as_failures=True, run_ids=["seq1"])  # any policy
            for ids in (["seq4"], None):
                with pytest.raises(duckdb.Error, match="did not keep"):
                    queries.run_curves(con, errors_as_failures=False, run_ids=ids)
        # the database's own macro answers again
        assert queries.run_curves(con, errors_as_failures=True, run_ids=["seq4"])
