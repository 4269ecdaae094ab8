"""How named queries take their parameters."""

from __future__ import annotations

import duckdb

from seqk import store
from seqk.store import queries


def test_int_list_text_is_read_as_the_same_list_by_a_cast_parameter() -> None:
    con = duckdb.connect()
    for values in ([], [7], [3, 1, 2], list(range(1, 1001))):
        text = store.int_list(values)
        assert isinstance(text, str)
        assert con.execute("SELECT $x::INTEGER[]", {"x": text}).fetchone()[0] == values
        assert con.execute("SELECT $x::INTEGER[]", {"x": values}).fetchone()[0] == values


def test_a_selection_of_tasks_passed_as_text_gives_the_pending_attempts_of_those_tasks(tmp_path) -> None:
    db = tmp_path / "seqk.duckdb"
    with store.connect(db) as con:
        pending = queries.pending_attempts(con, run_id="r", generation=1, k=2, is_seq=False, chains=1,
                                           task_indices=store.int_list(range(5, 0, -1)))
    assert pending == [(t, 1, a) for t in range(1, 6) for a in (1, 2)]
