"""The compare pages' data and routes without a browser: which spend the two frontiers share (US$,
tokens of the same models, or a refusal when unpriced models differ), the flip filters, the routes'
answers to what cannot be compared."""

from __future__ import annotations

import pytest
from helpers import make_run
from scripts import odd_tasks_right, solves_on
from starlette.testclient import TestClient

from seqk import models, store
from seqk.analysis.compare import view_path
from seqk.errors import NotFound
from seqk.view import compare
from seqk.view.app import create_app


@pytest.fixture
def toy(tmp_path, db):
    """Three free (unpriced: cost 0) toy runs on 4 tasks: two seq@k runs of one model with other
    feedback modes, and a pass@k run of another model."""
    models.register_mock("mock/alpha", solves_on({1: 1, 2: 2}))
    models.register_mock("mock/beta", odd_tasks_right)
    ids = {
        "binary": make_run(tmp_path, db, model="mock/alpha", feedback_mode="binary", options={"n": 4}).run_id,
        "hint": make_run(tmp_path, db, model="mock/alpha", feedback_mode="hint", options={"n": 4}).run_id,
        "beta": make_run(tmp_path, db, metric="pass@k", model="mock/beta", options={"n": 4}).run_id,
    }
    return db, ids


def test_free_runs_of_one_model_share_a_token_axis_and_of_two_models_are_refused(toy):
    db, ids = toy
    same = compare.compare_page(ids["binary"], ids["hint"], db)
    assert (same.unit, same.refusal) == ("tokens", None)
    assert [line.label for f in same.frontiers for line in f.lines] == ["depth 1..3", "depth 1..3"]
    other = compare.compare_page(ids["binary"], ids["beta"], db)
    assert other.unit is None and other.frontiers == []
    assert "their models differ, so their tokens are not the same money" in (other.refusal or "")


def test_flip_filters_and_search(toy):
    db, ids = toy
    page = compare.compare_page(ids["binary"], ids["beta"], db)
    # alpha solves 1 and 2 (2 at attempt 2); beta the odd tasks: 2 is alpha's, 3 is beta's
    assert [(f.task_index, f.solved_by, f.attempt_index) for f in page.flips] == [(2, "a", 2), (3, "b", 1)]
    assert [f.task_index for f in compare.filtered(page, "b_only").flips] == [3]
    assert [f.task_index for f in compare.filtered(page, "flips", "t2").flips] == [2]
    with pytest.raises(NotFound, match="no flip filter named 'both'"):
        compare.filtered(page, "both")
    task = compare.compare_task_page(ids["binary"], ids["beta"], 2, db)
    assert [(r.chain_index, r.attempt_index, len(r.a), len(r.b)) for r in task.rows] == [
        (1, 1, 1, 1), (1, 2, 1, 1), (1, 3, 0, 1)]
    assert task.first_success == (2, None) and task.same_task


def test_routes_answer_what_cannot_be_compared_with_a_page_that_says_so(toy, tmp_path):
    db, ids = toy
    other = make_run(tmp_path, db, model="mock/alpha", options={"n": 4, "flavour": "spicy"}).run_id
    client = TestClient(create_app(store.open(db)))
    ok = client.get(view_path(ids["binary"], ids["hint"]), params={"filter": "a_only"})
    assert ok.status_code == 200 and 'data-filter="a_only" class="on"' not in ok.text
    assert 'class="on" data-filter="a_only"' in ok.text
    sliced = client.get(view_path(ids["binary"], other))
    assert sliced.status_code == 400 and "runs of different slices are not compared" in sliced.text
    picked = client.get("/compare", params={"a": ids["binary"], "b": ids["hint"]}, follow_redirects=False)
    assert picked.status_code == 303 and picked.headers["location"] == view_path(ids["binary"], ids["hint"])
    for path, status in ((view_path(ids["binary"], ids["hint"]) + "/tasks/x", 404),
                         (view_path(ids["binary"], ids["hint"]) + "?filter=both", 404),
                         ("/compare/only-one", 404), ("/compare?a=" + ids["binary"], 400)):
        assert client.get(path).status_code == status, path
