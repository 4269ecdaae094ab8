"""The schema is sql/schema.sql; a database from an older seqk is brought to it by sql/migrations/,
never by ALTERs at connect time. Replaying every migration, then schema.sql (whose CREATE ... IF
NOT EXISTS make again the derived table a migration drops, as seqk.store.schema does), gives
exactly the current schema."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from seqk import store
from seqk.errors import BadInput
from seqk.store import queries, schema, sqlfiles


def catalog(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    columns = con.execute(
        "SELECT table_name, column_index, column_name, data_type, is_nullable, column_default "
        "FROM duckdb_columns() WHERE NOT internal ORDER BY table_name, column_index").fetchall()
    constraints = con.execute(
        "SELECT table_name, constraint_type, constraint_column_names FROM duckdb_constraints() "
        "ORDER BY ALL").fetchall()
    return columns + constraints


def test_migrations_replayed_from_the_first_give_schema_sql(tmp_path: Path):
    fresh = duckdb.connect(str(tmp_path / "fresh.duckdb"))
    fresh.execute(sqlfiles.schema())
    replayed = duckdb.connect(str(tmp_path / "replayed.duckdb"))
    for _version, _name, sql in sqlfiles.migrations():
        replayed.execute(sql)
    # Only derived data is left for schema.sql to make again (seqk.store.schema.ensure runs it after
    # the migrations): chain_kept, which migration 11 drops; every other table is the migrations'.
    def without_kept(rows: list[tuple]) -> list[tuple]:
        return [r for r in rows if r[0] != "chain_kept"]
    assert without_kept(catalog(replayed)) == without_kept(catalog(fresh))
    assert not any(r[0] == "chain_kept" for r in catalog(replayed))
    replayed.execute(sqlfiles.schema())
    assert catalog(replayed) == catalog(fresh)
    assert store.schema_version() == len(sqlfiles.migrations()) >= 3


def test_schema_sql_holds_no_alter():
    assert "ALTER" not in sqlfiles.schema().upper()


def test_an_old_database_is_migrated_and_keeps_its_rows(tmp_path: Path):
    path = tmp_path / "old.duckdb"
    old = duckdb.connect(str(path))
    for _version, _name, sql in sqlfiles.migrations()[:2]:  # what seqk wrote at schema 2
        old.execute(sql)
    old.execute("INSERT INTO schema_info VALUES ('schema_version', '2'), ('views_sha256', 'old')")
    old.execute("INSERT INTO runs (run_id, benchmark, slice, metric, k, generation, feedback_mode, "
                "actor_model, verifier, fingerprint, fingerprint_fields, created_at, updated_at, "
                "seqk_version) VALUES ('r', 'toy', 'toy', 'pass@k', 2, 1, 'binary', 'mock/x', "
                "'deterministic', 'f', '{}', now(), now(), '0.0.1')")
    old.close()
    with store.connect(path, read_only=True) as con:  # a read-only open upgrades too
        info = dict(queries.get_schema_info(con))
        run = queries.get_run(con, run_id="r")
    assert info["schema_version"] == str(store.schema_version())
    assert run is not None and run["shows_grading_info"] is None and run["k"] == 2


def test_a_database_from_a_newer_seqk_is_refused(tmp_path: Path):
    path = tmp_path / "new.duckdb"
    with store.connect(path):
        pass
    con = duckdb.connect(str(path))
    con.execute("UPDATE schema_info SET value = '999' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(BadInput, match="schema 999, made by a newer seqk"), store.connect(path):
        pass


def test_generated_query_functions_match_sql():
    out = subprocess.run([sys.executable, "-m", "seqk.store.codegen", "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    names = {n for n in dir(queries) if not n.startswith("_")} - {"Connection", "run", "annotations",
                                                                     "TYPE_CHECKING", "Any", "pa"}
    assert names == set(sqlfiles.queries())


def test_a_query_called_without_a_declared_parameter_fails_before_the_database(tmp_path: Path):
    with store.connect(tmp_path / "x.duckdb") as con, pytest.raises(TypeError, match="run_id"):
        queries.get_run(con)  # type: ignore[call-arg]


def test_a_store_without_keys_is_migrated_once_and_then_reads_its_newest_version():
    """A lake has no primary key on schema_info: each upgrade appends a row, and the highest one
    is its version (reading another would replay a migration, which an ALTER refuses)."""
    con = duckdb.connect(":memory:")
    older = len(sqlfiles.migrations()) - 1
    for _version, _name, sql in sqlfiles.migrations()[:older]:
        con.execute(schema.LAKE.tables(sql))
    queries.add_schema_info(con, key="schema_version", value=str(older))
    schema.ensure(con, schema.LAKE, where="the lake")
    # A lake returns rows in no set order: here the older row comes last.
    con.execute("DELETE FROM schema_info")
    for value in (store.schema_version(), older):
        queries.add_schema_info(con, key="schema_version", value=str(value))
    schema.ensure(con, schema.LAKE, where="the lake")
    versions = [value for key, value in queries.get_schema_info(con) if key == "schema_version"]
    assert sorted(versions, key=int) == [str(older), str(store.schema_version())]
    assert con.execute("SELECT count(*) FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'"
                       ).fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE temporary AND view_name = 'run_curve'"
                       ).fetchone() == (1,)
