"""A running viewer keeps each seq@k run's verdict (and equal-budget chart) and computes it again
only when what it reads changes: a reload computes nothing; a new attempt, an extension or a
restart of a run computes again the verdicts that read that run and no other; a re-judging run
adds its own verdict and leaves the others kept. What it keeps always equals what is computed
afresh. While a verdict or chart computes, the pages say "computing" and the poll's stamp changes
when it is done."""

from __future__ import annotations

import threading
import time

import pytest
import view_db
from helpers import write_variant
from starlette.testclient import TestClient

from seqk import models, store, view
from seqk.config import runspec
from seqk.models.role import RoleSpec
from seqk.run import engine
from seqk.run.rejudge import rejudge, rejudge_spec
from seqk.view import pages, render
from seqk.view.app import create_app
from seqk.view.verdict import verdicts
from seqk.view.verdict_cache import VerdictCache


def fresh(db) -> dict:
    """Every verdict computed afresh, with nothing kept."""
    return verdicts(db)


def variant(folder, name: str, metric: str, mode: str, **more):
    """One of view_db's variants (the same run), with `more` keys changed."""
    keys = {"benchmark": "toy", "metric": metric, "k": view_db.K, "feedback_mode": mode, "model": "mock/actor",
            "options": {"n": 7}, "max_tasks": 6}
    return runspec.load(write_variant(folder, f"{name}.yaml", **(keys | more)))


def kept_now(kept: VerdictCache) -> dict:
    """The verdicts kept (waiting for any computing); the run list's charts checked on the way:
    those kept equal those computed afresh."""
    found = kept.get(wait_s=60)
    assert not found.pending
    db = kept.database
    listing = pages.runs_page(db, kept=kept)
    for _ in range(120):  # a loaded machine: the charts' worker may take more than the page's wait
        if not listing.charts_computing:
            break
        time.sleep(0.5)
        listing = pages.runs_page(db, kept=kept)
    assert listing.budgets == pages.runs_page(db).budgets and not listing.computing
    return found.verdicts


@pytest.mark.slow  # five writes, each recomputing what reads it (~9 s of CPU)
def test_a_reload_computes_nothing_and_a_write_computes_only_what_reads_it(tmp_path, runs):
    db, ids = runs
    kept = VerdictCache(store.open(db))
    assert kept_now(kept) == fresh(db) and kept.n_computed == 2  # the two seq@k runs
    assert kept_now(kept) == fresh(db)
    assert (kept.n_computed, kept.n_fingerprinted) == (2, 1)  # nothing written: not even a fingerprint read
    assert kept.n_charted == 2  # each seq@k run's equal-budget chart, once

    # new attempts: task 7 run by the hint run alone; the binary run's verdict reads no such row
    models.register_mock("mock/actor", view_db.actor)
    engine.run(variant(tmp_path, "seq", "seq@k", "hint", max_tasks=7), db)
    after = kept_now(kept)
    assert after == fresh(db)  # the lift and blocks are on shared tasks: task 7 is in no partner
    assert (kept.n_computed, kept.n_fingerprinted, kept.n_charted) == (3, 2, 3)

    # an extension (k 3 -> 4, continue: true) of the binary run: its verdict alone again, at K = 4
    binary = variant(tmp_path, "seq_binary", "seq@k", "binary", k=4, **{"continue": True})
    assert engine.run(binary, db).prepared.action == "extend"
    after = kept_now(kept)
    assert after == fresh(db) and after[ids["seq_binary"]].k == 4 and (kept.n_computed, kept.n_charted) == (4, 4)

    # a restart of the pass@k run (a new generation): both verdicts read it
    restart = variant(tmp_path, "pass", "pass@k", "binary", k=4, **{"continue": False})
    assert engine.run(restart, db).prepared.action == "restart"
    assert kept_now(kept) == fresh(db) and (kept.n_computed, kept.n_charted) == (6, 6)

    # re-judging: of the pass@k run, a run no verdict reads (never a partner); of the hint run's first
    # attempts, a seq@k run of its own whose verdict is computed, the others kept
    verifier = RoleSpec(role="judge", model=None)
    rejudge(rejudge_spec(ids["pass"], verifier, db=db), db)
    assert kept_now(kept) == fresh(db) and kept.n_computed == 6
    first = rejudge_spec(ids["seq"], verifier, first_attempt_only=True, db=db)
    rejudge(first, db)
    after = kept_now(kept)
    assert first.run_id in after and after == fresh(db) and kept.n_computed == 7
    kept.close()


def test_the_workers_key_the_chains_by_the_fingerprints_read_for_the_page(runs, cache, monkeypatch):
    """A viewer's verdicts read each run's fingerprint once (the page's read, at its stamp): the
    worker that computes them keys the runs' chains by those rows and reads none again; and they
    are the keys a report uses, so a report after the viewer reads every chain back from the cache
    folder."""
    from seqk.analysis import inputs
    from seqk.store import queries
    from seqk.view.verdict import plan_verdicts

    db, _ = runs
    asked: list = []
    real = queries.run_fingerprints
    monkeypatch.setattr(queries, "run_fingerprints", lambda con, **kw: asked.append(kw["run_ids"]) or real(con, **kw))
    kept = VerdictCache(store.open(db))
    found = kept.get(wait_s=60)
    assert not found.pending and len(found.verdicts) == 2
    assert asked == [None]  # every run's, once, for the page; none by the worker
    kept.close()
    assert found.verdicts == fresh(db)

    read: list = []
    real_read = inputs.read_chains
    monkeypatch.setattr(inputs, "read_chains", lambda con, missed: read.append(missed) or real_read(con, missed))
    with store.connect(db, read_only=True) as con:
        ids = sorted({i for plan in plan_verdicts(con).values() for i in plan.run_ids})
        chains = inputs.chains_of(con, ids, inputs.run_keys(con, ids)[0])
    assert read == [] and sorted(chains) == ids


class Gated(VerdictCache):
    """A VerdictCache whose computations wait for `gate`: a slow store, in a test."""

    def __init__(self, database, gate: threading.Event) -> None:
        super().__init__(database)
        self.gate = gate

    def _compute(self, plans, keys, prints) -> None:
        assert self.gate.wait(60)
        super()._compute(plans, keys, prints)

    def _chart(self, runs, partners, keys) -> None:
        assert self.gate.wait(60)
        super()._chart(runs, partners, keys)


def test_the_pages_say_computing_until_the_verdicts_are_done_and_the_stamp_says_when(runs):
    db, ids = runs
    gate = threading.Event()
    kept = Gated(store.open(db), gate)
    client = TestClient(create_app(store.open(db), verdicts=kept))
    before = client.get("/api/stamp").json()["stamp"]
    listing = client.get("/").text
    for name in ("seq", "seq_binary"):
        assert f'<div class="answer computing" data-seq-run="{ids[name]}">' in listing
        assert f'<div class="answer" data-seq-run="{ids[name]}">' not in listing
        assert f'<figure class="budget-computing" data-seq-run="{ids[name]}">' in listing  # its chart too
        assert f'<figure class="budget" data-seq-run="{ids[name]}">' not in listing
    assert "computing what <code>seqk report --compare</code> says of this run" in listing
    run = client.get(render.Urls().run(ids["pass"])).text  # a pass@k run's page: each partner computing
    assert run.count('class="answer computing"') == 2
    assert client.get("/api/stamp").json()["stamp"] == before  # nothing done yet
    gate.set()
    assert kept_now(kept) == fresh(db)
    assert client.get("/api/stamp").json()["stamp"] != before  # the page's poll fetches it again
    listing = client.get("/").text
    assert "computing" not in listing.split('id="runs"')[1]
    for name in ("seq", "seq_binary"):
        assert f'<div class="answer" data-seq-run="{ids[name]}">' in listing
        assert f'<figure class="budget" data-seq-run="{ids[name]}">' in listing
    assert render.render_runs(view.runs_page(db), render.Urls()).split('id="runs"')[1] == listing.split('id="runs"')[1]
    assert pages.run_page(ids["seq"], db, kept=kept).verdicts == list(verdicts(db, [ids["seq"]]).values())
    kept.close()


def test_a_failed_computation_raises_its_error_and_the_next_call_computes_again(runs, monkeypatch):
    from seqk.view import verdict_cache

    db, _ = runs
    real = verdict_cache.compute_verdicts
    calls = []

    def fails_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the estimators broke")
        return real(*args, **kwargs)

    monkeypatch.setattr(verdict_cache, "compute_verdicts", fails_once)
    kept = VerdictCache(store.open(db))
    try:
        with pytest.raises(RuntimeError, match="the estimators broke"):
            kept.get(wait_s=60)
        found = kept.get(wait_s=60)  # forgotten, not kept as failed: computed again
        assert not found.pending and found.verdicts == fresh(db) and len(calls) == 2
    finally:
        kept.close()


def test_a_page_made_again_while_nothing_is_written_reads_nothing_and_a_write_reads_again(tmp_path, runs,
                                                                                         monkeypatch):
    """With its page cache on, the app keeps what each page read (pages.ReadsKept) while the store's
    stamp stands: a page made again because a verdict was done reads no run's chains; a page after a
    write shows what was written."""
    from seqk.store import queries

    db, ids = runs
    kept = VerdictCache(store.open(db))
    client = TestClient(create_app(store.open(db), verdicts=kept))
    run = render.Urls().run(ids["seq"])
    kept_now(kept)
    first = client.get("/").text, client.get(run).text
    assert first[1].count('class="task-link"') == 6
    read: list[dict] = []
    real = queries.view_runs
    monkeypatch.setattr(queries, "view_runs", lambda con, **kw: read.append(kw) or real(con, **kw))
    kept.version += 1  # as a verdict done: the pages are made again
    assert (client.get("/").text, client.get(run).text) == first and not read
    models.register_mock("mock/actor", view_db.actor)
    engine.run(variant(tmp_path, "seq", "seq@k", "hint", max_tasks=7), db)  # task 7, by the hint run
    assert client.get(run).text.count('class="task-link"') == 7 and read
    assert client.get("/").text != first[0] and len(read) == 2
    kept.close()
