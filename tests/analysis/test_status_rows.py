"""The typed rows `seqk.status` and `seqk.inspect` return are what their queries return: the same
keys, and each value's Python type the one DuckDB gives the column (tested against DESCRIBE of
the query itself, so a column added to the SQL without its field fails here)."""

from __future__ import annotations

import types
import typing
from datetime import datetime

import pytest

from seqk import store
from seqk.analysis import status
from seqk.store.sqlfiles import queries

PYTHON = {"VARCHAR": str, "JSON": str, "INTEGER": int, "BIGINT": int, "DOUBLE": float, "BOOLEAN": bool,
          "TIMESTAMP": datetime}
ROWS = [(status.RunStatus, "run_status", {"batches"}), (status.BatchRow, "list_batches", set()),
        (status.RunRow, "get_run", set()), (status.TaskRow, "find_task", set()),
        (status.CallRow, "task_calls", set()), (status.AttemptRow, "task_attempts", {"calls"})]


def described(db, name: str) -> dict[str, str]:
    query = queries()[name]
    with store.connect(db) as con:
        return {col: kind for col, kind, *_ in con.execute("DESCRIBE " + query.sql,
                                                             {p: None for p in query.params}).fetchall()}


@pytest.mark.parametrize(("row", "name", "added"), ROWS, ids=[name for _, name, _ in ROWS])
def test_each_row_type_has_the_columns_and_types_of_its_query(db, row, name, added):
    columns = described(db, name)
    hints = typing.get_type_hints(row)
    assert list(hints) == [*columns, *sorted(added)]
    for col, kind in columns.items():
        hint = hints[col]
        parts = set(typing.get_args(hint)) if isinstance(hint, types.UnionType) else {hint}
        if kind == "JSON" and col in ("judge_details", "error"):  # parsed by inspect
            assert hint == status.JSONValue or str in parts, col
            continue
        assert PYTHON[kind] in parts, (col, kind, hint)
