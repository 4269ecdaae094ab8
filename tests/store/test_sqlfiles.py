"""The named-query loader fails loudly on bad files, and every named query runs."""

from __future__ import annotations

import pytest
from scripts import solves_on

from seqk import models, store
from seqk.config import runspec
from seqk.errors import SqlFileError
from seqk.run import engine
from seqk.store import queries, sqlfiles


def test_parse_names_docs_bodies_parameters_and_shapes():
    text = ("-- name: get_thing(thing_id) -> one\n-- the thing\nSELECT $thing_id;\n\n"
            "-- name: put_thing() -> none\n-- nothing\nSELECT 2;\n\n"
            "-- name: list_things(a, b)\n-- rows\nSELECT $a, $b, '$not_a_param' -- $nor_this\n;\n")
    found = sqlfiles.parse(text, "x.sql")
    assert list(found) == ["get_thing", "put_thing", "list_things"]
    assert found["get_thing"].doc == "the thing" and found["get_thing"].sql == "SELECT $thing_id;"
    assert found["get_thing"].params == ("thing_id",) and found["get_thing"].shape == "one"
    assert found["put_thing"].where == "x.sql:5" and found["put_thing"].shape == "none"
    assert found["list_things"].params == ("a", "b") and found["list_things"].shape == "rows"


@pytest.mark.parametrize("text, message", [
    ("-- name: a_b()\n-- doc\n", "x.sql:1: query 'a_b' is empty"),
    ("-- name: a_b()\nSELECT 1;\n", "x.sql:1: query 'a_b' has no comment"),
    ("-- name: a_b()\n-- d\nSELECT 1;\n-- name: a_b()\n-- d\nSELECT 2;\n",
     "x.sql:4: query 'a_b' already defined at x.sql:1"),
    ("-- name: Bad-Name()\n-- d\nSELECT 1;\n", "x.sql:1: bad name line"),
    ("-- name: a_b\n-- d\nSELECT 1;\n", "x.sql:1: bad name line"),
    ("-- name: a_b(x)\n-- d\nSELECT $x, $y;\n", "x.sql:1: query 'a_b' uses undeclared \\$y"),
    ("-- name: a_b(x, y)\n-- d\nSELECT $x;\n", "x.sql:1: query 'a_b' declares unused y"),
    ("-- name: a_b() -> many\n-- d\nSELECT 1;\n", "x.sql:1: query 'a_b' returns 'many'"),
    ("SELECT 1;\n", "x.sql:1: SQL before the first '-- name:' line"),
])
def test_malformed_files_name_file_and_line(text, message):
    with pytest.raises(SqlFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sqlfiles.parse(text, "x.sql")


def test_every_shipped_query_loads_with_a_doc():
    queries = sqlfiles.queries()
    assert {"pending_attempts", "seq_history", "run_status", "task_attempts"} <= set(queries)
    assert all(query.doc for query in queries.values())


def test_core_queries_run_against_a_seeded_database(tmp_path, db):
    from helpers import write_variant

    models.register_mock("mock/actor", solves_on({2: 2}))
    spec = runspec.load(write_variant(tmp_path, metric="seq@k", k=2, model="mock/actor",
                                      options={"n": 3}))
    engine.run(spec, db)
    run_id = spec.run_id
    with store.connect(db, read_only=True) as con:
        assert store.get_run(con, run_id)["k"] == 2
        assert queries.list_runs(con)[0]["run_id"] == run_id
        assert len(queries.get_task_identities(con, run_id=run_id)) == 3
        pending = queries.pending_attempts(con, run_id=run_id, generation=1, k=3, is_seq=True, chains=1,
                                           task_indices=[1, 2, 3])
        assert pending == [(1, 1, 3), (3, 1, 3)]  # task 2 solved on attempt 2
        pending = queries.pending_attempts(con, run_id=run_id, generation=1, k=3, is_seq=False, chains=1,
                                           task_indices=[1, 2])
        assert pending == [(1, 1, 3), (2, 1, 3)]
        pending = queries.pending_attempts(con, run_id=run_id, generation=1, k=3, is_seq=True, chains=2,
                                           task_indices=[2])
        assert pending == [(2, 2, 1)]  # chain 1 solved; a new chain 2 starts at attempt 1
        history = queries.seq_history(con, run_id=run_id, generation=1, task_indices=[1])
        assert [(h["task_index"], h["attempt_index"], h["output"], h["feedback"], h["success"], h["score"])
                for h in history] == [(1, 1, "not-w1", "Incorrect.", False, 0.0),
                                      (1, 2, "not-w1", "Incorrect.", False, 0.0)]
        uid = history[0]["attempt_uid"]
        assert queries.last_call_index(con, attempt_uid=uid) == 1
        slots = queries.import_valid_slots(con, run_id=run_id)
        assert len(slots) == 6 and (1, 2, 2) in slots
        status = queries.run_status(con, run_ids=[])
        assert (status[0]["n_tasks"], status[0]["n_finished"], status[0]["n_passed"]) == (3, 3, 1)
        assert status[0]["n_valid_attempts"] == 6
        task = queries.find_task(con, run_id=run_id, task_index=None, task_id="t2")
        assert task[0]["task_index"] == 2
        attempts = queries.task_attempts(con, run_id=run_id, task_index=2)
        assert [a["attempt_index"] for a in attempts] == [1, 2]
        calls = queries.task_calls(con, run_id=run_id, task_index=2)
        assert [c["role"] for c in calls] == ["actor", "actor"]
