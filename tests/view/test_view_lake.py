"""`seqk view` on a lake (PostgreSQL catalog, data on moto's S3): the same runs, moved from a DuckDB
file into a lake, give the same pages and the same bundle, and the server notices a new commit."""

from __future__ import annotations

from pathlib import Path

import view_db
from helpers import write_variant
from markupsafe import escape
from scripts import solves_on
from starlette.testclient import TestClient
from typer.testing import CliRunner

from seqk import models, store, view
from seqk.cli import app
from seqk.config import runspec
from seqk.run import engine
from seqk.store import queries
from seqk.view import pages, render
from seqk.view.app import create_app

runner = CliRunner()


def moved_into(tmp_path, db, lake_url) -> dict[str, str]:
    """The viewer's runs in a file, exported, and imported into the lake: the same rows in both."""
    ids = view_db.build(tmp_path, db)
    tree = tmp_path / "tree"
    assert runner.invoke(app, ["export", "--db", str(db), "--to", str(tree)]).exit_code == 0
    done = runner.invoke(app, ["import", str(tree), "--db", lake_url])
    assert done.exit_code == 0, done.output
    return ids


def test_the_pages_of_a_lake_are_those_of_the_file_it_came_from(tmp_path, db, lake_url):
    ids = moved_into(tmp_path, db, lake_url)
    in_file, in_lake = view.runs_page(db), view.runs_page(lake_url)
    assert in_lake.db == store.open(lake_url).display and in_file.db == str(db)
    assert in_lake.groups == in_file.groups and in_lake.budgets == in_file.budgets and in_lake.n_runs == 3
    for run_id in ids.values():
        for name in view.FILTERS:
            assert view.run_page(run_id, lake_url, filter=name) == view.run_page(run_id, db, filter=name)
        for index in (1, 2, 5):
            assert view.task_page(run_id, index, lake_url) == view.task_page(run_id, index, db)
    assert view.run_page(ids["seq"], lake_url, search="w2").n_matching == 1


def test_the_bundle_of_a_lake_is_that_of_the_file(tmp_path, db, lake_url):
    moved_into(tmp_path, db, lake_url)
    sites = {}
    for name, where in (("file", str(db)), ("lake", lake_url)):
        out = runner.invoke(app, ["view", "--db", where, "--bundle", str(tmp_path / name)])
        assert out.exit_code == 0, out.output
        sites[name] = {p.relative_to(tmp_path / name): p.read_text() for p in (tmp_path / name).rglob("*.html")}
    assert sites["lake"].keys() == sites["file"].keys() and len(sites["lake"]) > 20
    names = {"file": str(escape(str(db))), "lake": str(escape(store.open(lake_url).display))}
    assert names["lake"] in sites["lake"][Path("index.html")]  # the run list names its store
    for page, html in sites["lake"].items():
        assert html.replace(names["lake"], "DB") == sites["file"][page].replace(names["file"], "DB"), page


def test_the_server_reads_a_lake_and_its_stamp_moves_with_each_commit(tmp_path, db, lake_url, cache):
    """With the figure cache on (the run list's rows kept per run under their fingerprints,
    seqk.view.pages.view_rows): a new run's commit shows, beside the rows read back."""
    ids = moved_into(tmp_path, db, lake_url)
    client = TestClient(create_app(view.check_db(lake_url)))
    assert "seq@3 = 0.400" in client.get("/").text
    assert any(cache.glob(f"{pages.VIEW_ROWS}-*.pickle"))
    page = client.get("/runs/" + render.run_path(ids["seq"]) + "/tasks/2")
    assert page.status_code == 200 and "Incorrect; the word was w2." in page.text
    stamp = client.get("/api/stamp").json()["stamp"]
    assert stamp == client.get("/api/stamp").json()["stamp"]
    models.register_mock("mock/other", solves_on({1: 1}))
    spec = runspec.load(write_variant(tmp_path, "other.yaml", benchmark="toy", metric="pass@k", k=1,
                                      model="mock/other", options={"n": 2}))
    engine.run(spec, lake_url)
    assert client.get("/api/stamp").json()["stamp"] != stamp
    listing = client.get("/").text
    assert spec.run_id in listing and "seq@3 = 0.400" in listing
    with store.connect(lake_url, read_only=True) as con:
        assert pages.view_rows(con, None) == queries.view_runs(con, run_ids=None)
