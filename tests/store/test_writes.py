"""What the writes put in a real DuckDB file comes back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from seqk import store

AWKWARD = ['plain', 'quotes " and \' and \\ backslash', "lines\nand\ttabs\r\n", "ünïcödé ✓ 漢字 🙂",
           '{"looks": ["like", "json"]}', "", "x" * 100_000, "control \x01\x1f chars"]


def test_tasks_come_back_exactly_as_given(tmp_path: Path) -> None:
    rows = [{"task_index": i, "task_id": f"id-{text[:10]}-{i}", "prompt": text,
             "content_hash": f"h{i}", "meta": {"n_test": i, "note": text[:20], "nested": {"a": [1, 2.5, None]}}}
            for i, text in enumerate(AWKWARD * 3, start=1)]
    db = tmp_path / "seqk.duckdb"
    with store.connect(db) as con, store.transaction(con):
        store.insert_tasks(con, "r1", rows)
        store.insert_tasks(con, "r1", [])
    with store.connect(db, read_only=True) as con:
        got = con.execute("SELECT task_index, task_id, prompt, content_hash, meta FROM tasks "
                          "WHERE run_id = 'r1' ORDER BY task_index").fetchall()
    assert [(r["task_index"], r["task_id"], r["prompt"], r["content_hash"]) for r in rows] \
        == [g[:4] for g in got]
    # meta is stored as the text json.dumps writes, as the Arrow path stored it before.
    assert [json.dumps(r["meta"], ensure_ascii=False) for r in rows] == [g[4] for g in got]


def test_a_thousand_tasks_are_one_statement(tmp_path: Path) -> None:
    rows = [{"task_index": i, "task_id": f"t{i}", "prompt": "p" * 3000, "content_hash": "h", "meta": None}
            for i in range(1, 1001)]
    db = tmp_path / "seqk.duckdb"
    with store.connect(db) as con:
        store.insert_tasks(con, "r1", rows)
        assert store.task_identities(con, "r1")[1000] == ("t1000", "h")
        assert con.execute("SELECT count(*), any_value(meta) FROM tasks").fetchone() == (1000, "{}")


def test_a_connection_draws_no_progress_bar_of_duckdbs(tmp_path: Path) -> None:
    # DuckDB prints its own bar on stdout for a statement past 2 s (100,000 tasks registered
    # under load did), into seqk's progress display or a pipe.
    for read_only in (False, True):
        with store.connect(tmp_path / "seqk.duckdb", read_only=read_only) as con:
            assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone() == (False,)


def test_tasks_past_one_statement_are_all_registered_once_in_order(tmp_path: Path, monkeypatch) -> None:
    from seqk.store import writes

    monkeypatch.setattr(writes, "TASKS_PER_STATEMENT", 3)
    rows = [{"task_index": i, "task_id": f"t{i}", "prompt": f"p{i}", "content_hash": f"h{i}", "meta": {"i": i}}
            for i in range(1, 11)]
    with store.connect(tmp_path / "seqk.duckdb") as con, store.transaction(con):
        store.insert_tasks(con, "r1", rows)
    with store.connect(tmp_path / "seqk.duckdb", read_only=True) as con:
        got = con.execute("SELECT task_index, task_id, meta FROM tasks ORDER BY task_index").fetchall()
    assert got == [(i, f"t{i}", json.dumps({"i": i})) for i in range(1, 11)]
