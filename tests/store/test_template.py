"""A new database is a copy of the template of the current schema when there is one, and is
then the same database that the SQL files build."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from seqk import store
from seqk.store import template


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "seqk"


def catalog(db: Path) -> dict[str, list[tuple]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {
            "tables": con.execute("SELECT table_name, sql FROM duckdb_tables() ORDER BY 1").fetchall(),
            "views": con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal "
                                 "ORDER BY 1").fetchall(),
            "macros": con.execute("SELECT function_name, macro_definition FROM duckdb_functions() "
                                  "WHERE NOT internal AND function_type LIKE '%macro' ORDER BY 1, 2").fetchall(),
            "indexes": con.execute("SELECT index_name, sql FROM duckdb_indexes() ORDER BY 1").fetchall(),
            "schema_info": con.execute("SELECT * FROM schema_info ORDER BY 1").fetchall(),
        }


def test_the_second_new_database_is_a_copy_and_equals_one_built_from_sql(
        cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = tmp_path / "built.duckdb"
    with store.connect(built):
        pass
    kept = template.path()
    assert kept is not None and kept.parent == cache and kept.is_file()

    copies: list[Path] = []
    real_copy = template.copy_to
    monkeypatch.setattr(template, "copy_to", lambda fresh: copies.append(fresh) or real_copy(fresh))
    copied = tmp_path / "copied.duckdb"
    with store.connect(copied) as con:
        store.insert_tasks(con, "r1", [{"task_index": 1, "task_id": "t", "prompt": "p", "content_hash": "h"}])
    assert len(copies) == 1
    assert catalog(copied) == catalog(built)
    assert catalog(copied)["views"] and catalog(copied)["macros"]
    # The copy is a database of its own: the template is still empty.
    with duckdb.connect(str(kept), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM tasks").fetchone() == (0,)


def test_a_template_that_is_no_database_is_dropped_and_the_database_built(cache: Path, tmp_path: Path) -> None:
    kept = template.path()
    assert kept is not None
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"not a database" * 1000)
    db = tmp_path / "seqk.duckdb"
    with store.connect(db) as con:
        assert dict(con.execute("SELECT key, value FROM schema_info").fetchall())["schema_version"] \
            == str(store.schema_version())
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".seqk.duckdb")] == []
    # The next database rebuilt the template from SQL.
    with duckdb.connect(str(kept), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_a_cache_folder_that_cannot_be_written_only_costs_time(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # its "seqk" folder cannot be made
    for name in ("one.duckdb", "two.duckdb"):
        with store.connect(tmp_path / name) as con:
            assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    assert blocker.read_text() == ""


def test_a_new_template_replaces_those_of_earlier_schemas(cache: Path, tmp_path: Path) -> None:
    cache.mkdir(parents=True)
    earlier = cache / "empty-0123456789abcdef0123.duckdb"
    earlier.write_bytes(b"a template of another schema")
    with store.connect(tmp_path / "new.duckdb"):
        pass
    kept = template.path()
    assert kept is not None and sorted(cache.glob("empty-*.duckdb")) == [kept]
