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


def test_an_absent_pandas_is_not_searched_for_again_at_every_parameter(monkeypatch) -> None:
    """DuckDB's binding tries `import pandas` twice a parameter; where pandas is not installed the
    finder of seqk.store.execute answers those at once, so no finder after it hears of pandas."""
    import importlib.util
    import sys

    from seqk.store.execute import AbsentModules

    heard: list[str] = []

    class Spy:
        def find_spec(self, fullname, path=None, target=None):
            heard.append(fullname)
            return None

    installed = importlib.util.find_spec("pandas") is not None
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Spy()])
    con = duckdb.connect()
    assert con.execute("SELECT ? + 1, ?, ?", [1, "a", 2.5]).fetchone() == (2, "a", 2.5)
    con.executemany("SELECT ?, ?", [[1, "a"], [2, "b"]])
    if not installed:  # as in CI and the README's venv
        assert any(isinstance(f, AbsentModules) for f in sys.meta_path)
        assert "pandas" not in heard
    else:  # installed: imported once and kept, nothing to answer
        assert not any(isinstance(f, AbsentModules) for f in sys.meta_path)
        assert "pandas" in sys.modules


def test_the_absent_finder_answers_imports_and_leaves_find_spec_its_none(monkeypatch) -> None:
    import importlib
    import importlib.util
    import sys

    import pyarrow as pa
    import pytest

    from seqk.store.execute import AbsentModules

    monkeypatch.setattr(sys, "meta_path", [AbsentModules(["seqk_no_such_module"]), *sys.meta_path])
    for load in (lambda: __import__("seqk_no_such_module"),
                 lambda: importlib.import_module("seqk_no_such_module")):
        with pytest.raises(ModuleNotFoundError, match="No module named 'seqk_no_such_module'") as raised:
            load()
        assert raised.value.name == "seqk_no_such_module"
    assert importlib.util.find_spec("seqk_no_such_module") is None  # asked, not imported: no error
    assert "seqk_no_such_module" not in sys.modules
    assert pa.table({"a": [1, 2]}).num_rows == 2  # pyarrow's own pandas probe is an import: answered


def test_the_absent_finder_is_installed_once_and_never_for_an_installed_module(monkeypatch) -> None:
    import sys

    from seqk.store.execute import AbsentModules

    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, AbsentModules)])
    monkeypatch.setattr(AbsentModules, "PROBED", ("json", "seqk_no_such_module"))
    AbsentModules.install()
    AbsentModules.install()
    finders = [f for f in sys.meta_path if isinstance(f, AbsentModules)]
    assert len(finders) == 1 and finders[0].names == {"seqk_no_such_module"}
    monkeypatch.setattr(AbsentModules, "PROBED", ("json",))
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, AbsentModules)])
    AbsentModules.install()
    assert not any(isinstance(f, AbsentModules) for f in sys.meta_path)
