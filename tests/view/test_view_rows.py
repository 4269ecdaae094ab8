"""The run list's rows remembered per run (seqk.view.pages.view_rows): each run's view_runs row is read
back from the figure cache while its run_fingerprints fingerprint stands, and equals the row the
store gives, always: after a run gains a task, after tasks are registered without attempts (n_tasks
moves, the fingerprint does not), after a new pass@k run becomes a seq@k run's partner (pass_run_id
moves, the fingerprint does not). A run that changed is the only one queried."""

from __future__ import annotations

import json

import view_db
from helpers import write_variant

from seqk import models, store
from seqk.config import runspec
from seqk.run import engine
from seqk.store import queries
from seqk.view import pages
from seqk.view.verdict_cache import VerdictCache


def variant(folder, name: str, metric: str, mode: str, **more):
    keys = {"benchmark": "toy", "metric": metric, "k": view_db.K, "feedback_mode": mode, "model": "mock/actor",
            "options": {"n": 7}, "max_tasks": 6}
    return runspec.load(write_variant(folder, f"{name}.yaml", **(keys | more)))


def fresh(db) -> list[dict]:
    with store.connect(db, read_only=True) as con:
        return queries.view_runs(con, run_ids=None)


def same(a: list[dict], b: list[dict]) -> None:
    """The same rows, the same columns, every value equal (floats bit for bit: repr)."""
    assert [sorted(r) for r in a] == [sorted(r) for r in b]
    assert [repr(sorted(r.items())) for r in a] == [repr(sorted(r.items())) for r in b]


def test_the_run_lists_rows_kept_are_the_stores_and_only_a_changed_run_is_queried(tmp_path, runs, cache,
                                                                                   monkeypatch):
    db, ids = runs
    asked: list[object] = []
    real = queries.view_runs
    monkeypatch.setattr(queries, "view_runs", lambda con, **kw: asked.append(kw["run_ids"]) or real(con, **kw))

    def listed(run_ids=None) -> list[dict]:
        with store.connect(db, read_only=True) as con:
            return pages.view_rows(con, run_ids)

    same(listed(), fresh(db))
    assert asked == [None, None] and any(cache.glob(f"{pages.VIEW_ROWS}-*.pickle"))
    asked.clear()
    same(listed(), fresh(db))
    assert asked == [None]  # the store's, by `fresh`: the list itself read every row back
    asked.clear()
    same(listed([ids["seq"], ids["pass"]]), [r for r in fresh(db) if r["run_id"] in (ids["seq"], ids["pass"])])
    asked.clear()

    # a task more for the hint run: that run's row is read again, no other's
    models.register_mock("mock/actor", view_db.actor)
    engine.run(variant(tmp_path, "seq", "seq@k", "hint", max_tasks=7), db)
    asked.clear()
    same(listed(), fresh(db))
    assert asked[0] == [ids["seq"]]
    asked.clear()

    # tasks registered without attempts (a run stopped after registering them): n_tasks moves, the
    # run's fingerprint does not, and the row says so
    with store.connect(db, read_only=True) as con:
        before = queries.run_fingerprints(con, run_ids=[ids["seq_binary"]])
        n_tasks = con.execute("SELECT count(*), max(task_index) FROM tasks WHERE run_id = ?",
                              [ids["seq_binary"]]).fetchone()
    with store.connect(db) as con:
        queries.insert_tasks(con, run_id=ids["seq_binary"], columns=json.dumps({
            "task_index": [n_tasks[1] + 1], "task_id": ["w-new"], "prompt": ["Say w-new."], "content_hash": ["h-new"],
            "meta": ["{}"]}))
    with store.connect(db, read_only=True) as con:
        assert queries.run_fingerprints(con, run_ids=[ids["seq_binary"]]) == before
    rows = listed()
    same(rows, fresh(db))
    assert asked == [None]  # `fresh`'s: every row read back
    assert {r["run_id"]: r["n_tasks"] for r in rows}[ids["seq_binary"]] == n_tasks[0] + 1

    # a new pass@k run with the hint run's feedback mode is its partner now (run_pairs' choice 1): the
    # hint run's row names it, though the hint run did not change
    spec = variant(tmp_path, "pass_hint", "pass@k", "hint")
    engine.run(spec, db)
    partner = spec.run_id
    asked.clear()
    rows = listed()
    same(rows, fresh(db))
    assert {r["run_id"]: r["pass_run_id"] for r in rows}[ids["seq"]] == partner
    assert asked[0] == [partner]


def test_a_viewers_run_list_keys_its_rows_by_the_fingerprints_it_read(runs, cache, monkeypatch):
    """The run list and a run page with a VerdictCache read the fingerprints once (the cache's), and
    show what the store holds."""
    db, ids = runs
    kept = VerdictCache(store.open(db))
    try:
        first = pages.runs_page(db, kept=kept)
        prints: list[object] = []
        real = queries.run_fingerprints
        monkeypatch.setattr(queries, "run_fingerprints", lambda con, **kw: prints.append(kw) or real(con, **kw))
        again = pages.runs_page(db, kept=kept)
        assert not prints  # the stamp stands: the cache's fingerprints key the rows
        assert [g.seq_runs for g in again.groups] == [g.seq_runs for g in first.groups]
        assert again.groups == pages.runs_page(db).groups  # without a cache: from the store
        assert pages.run_page(ids["seq"], db, kept=kept).summaries == pages.run_page(ids["seq"], db).summaries
    finally:
        kept.close()
