"""$SEQK_DUCKDB_THREADS: the DuckDB threads of a store's connections (seqk.store.database)."""

from __future__ import annotations

import duckdb
import pytest
from typer.testing import CliRunner

from seqk import store
from seqk.cli import app
from seqk.errors import BadInput


def threads_of(db) -> int:
    with store.connect(db) as con:
        return int(con.execute("SELECT current_setting('threads')").fetchone()[0])


def test_the_variable_sets_a_files_threads_and_unset_leaves_duckdbs_default(db, monkeypatch) -> None:
    default = int(duckdb.connect().execute("SELECT current_setting('threads')").fetchone()[0])
    for value, expected in (("3", 3), (" 1 ", 1), ("", default)):
        monkeypatch.setenv("SEQK_DUCKDB_THREADS", value)
        assert threads_of(db) == expected
    monkeypatch.delenv("SEQK_DUCKDB_THREADS")
    assert threads_of(db) == default


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_a_bad_value_is_one_line_naming_the_variable_and_exit_2(db, monkeypatch, value) -> None:
    threads_of(db)  # the database exists
    monkeypatch.setenv("SEQK_DUCKDB_THREADS", value)
    said = f"SEQK_DUCKDB_THREADS should be a whole number of threads, 1 or more, got '{value}'"
    with pytest.raises(BadInput, match=said):
        threads_of(db)
    result = CliRunner().invoke(app, ["status", "--db", str(db)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"error: {said}"]
