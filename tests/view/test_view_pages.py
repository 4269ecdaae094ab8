"""The data each page of `seqk view` is built from, read from a database made by real mock runs;
the links, the chart and the static bundle made from them."""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest
import view_db

from seqk import models, store, view
from seqk.errors import NotFound
from seqk.store import queries
from seqk.view import pages, publish, render, story, svg
from seqk.view.compare import bundle_key


def test_run_list_groups_each_seqk_run_with_its_passk_partner(runs):
    db, ids = runs
    page = view.runs_page(db)
    assert page.n_runs == 3 and len(page.groups) == 1
    group = page.groups[0]
    assert group.pass_run.run_id == ids["pass"]
    assert [r.run_id for r in group.seq_runs] == sorted([ids["seq"], ids["seq_binary"]])
    hint = next(r for r in group.seq_runs if r.run_id == ids["seq"])
    assert (hint.n_tasks, hint.n_passed, hint.n_error_attempts, hint.n_failed_calls) == (6, 2, 1, 1)
    assert hint.shows_grading_info is True and hint.pass_run_id == ids["pass"]
    # Task 5 stopped on its error: 5 of 6 tasks are finished and the run is still in progress.
    assert (hint.n_finished, hint.in_progress) == (5, True)
    assert group.pass_run.n_finished == 6 and not group.pass_run.in_progress
    assert hint.input_tokens > 0 and hint.cost_usd == 0.0  # mock models are free, and priced so


def test_run_list_curves_are_run_curves_figures(runs):
    db, ids = runs
    page = view.runs_page(db)
    with store.connect(db, read_only=True) as con:
        expected = queries.run_curves(con, errors_as_failures=False, run_ids=list(ids.values()))
    listed = {r.run_id: r.curve for g in page.groups for r in [g.pass_run, *g.seq_runs]}
    got = [(run_id, p.t, p.n_tasks, p.n_left_out, p.value, p.low, p.high) for run_id, curve in listed.items()
           for p in curve]
    want = [(r["run_id"], r["t"], r["n_tasks"], r["n_left_out"], r["value"], r["low"], r["high"]) for r in expected]
    got, want = sorted(got), sorted(want)
    assert [g[:4] for g in got] == [w[:4] for w in want]
    assert [x for g in got for x in g[4:]] == pytest.approx([x for w in want for x in w[4:]])
    hint = listed[ids["seq"]]
    # task 5's attempt 1 errored: its chain is censored at 0, every task counted, no Wilson interval
    assert [p.n_tasks for p in hint] == [6, 6, 6] and all(p.low is None for p in hint)


@pytest.mark.parametrize(("name", "tasks"), [
    ("all", [1, 2, 3, 4, 5, 6]), ("feedback_only", [2]), ("resample_only", [4]), ("never", [1, 5, 6]),
    ("errored", [5])])
def test_run_page_filters_say_who_solved_what(runs, name, tasks):
    db, ids = runs
    page = view.run_page(ids["seq"], db, filter=name)
    assert [t.task_index for t in page.tasks] == tasks and page.n_matching == len(tasks)
    assert (page.seq_run_id, page.pass_run_id, page.partner_id) == (ids["seq"], ids["pass"], ids["pass"])


def test_run_page_rows_curves_search_and_pages(runs, monkeypatch):
    db, ids = runs
    page = view.run_page(ids["seq"], db)
    two = page.tasks[1]
    assert [(c.i, c.status, c.success) for c in two.cells] == [(1, "ok", False), (2, "ok", True)]
    assert (two.first_success, two.seq_at_k, two.pass_at_k, two.n_error) == (2, 1.0, 0.0, 0)
    assert page.tasks[4].cells[0].status == "error" and page.tasks[4].n_failed_calls == 1
    assert set(page.summaries) == {ids["seq"], ids["pass"]} and len(page.summaries[ids["pass"]].curve) == view_db.K
    assert page.summary.n_error_attempts == 1 and page.summary.curve[0].n_left_out == 0  # censored, counted
    assert page.summary.curve[0].low is None
    assert [t.task_index for t in view.run_page(ids["seq"], db, search="FOUR").tasks] == [4]  # an output
    assert [t.task_index for t in view.run_page(ids["seq"], db, search="word w3").tasks] == [3]  # a prompt
    monkeypatch.setattr(pages, "PAGE_SIZE", 4)
    second = view.run_page(ids["seq"], db, page=2)
    assert ([t.task_index for t in second.tasks], second.n_pages, second.n_matching) == ([5, 6], 2, 6)
    # A pass@k run is compared with the seq@k run of its feedback mode; the other is listed too.
    passing = view.run_page(ids["pass"], db, filter="resample_only")
    assert (passing.seq_run_id, passing.other_partners) == (ids["seq_binary"], [ids["seq"]])
    assert [t.task_index for t in passing.tasks] == [4]


def test_unknown_run_task_or_filter_is_not_found(runs):
    db, ids = runs
    with pytest.raises(NotFound, match="no run 'nope/x'"):
        view.run_page("nope/x", db)
    with pytest.raises(NotFound, match="no task filter named 'solved'"):
        view.run_page(ids["seq"], db, filter="solved")
    with pytest.raises(NotFound, match="has no task 9 .it has 6 tasks"):
        view.task_page(ids["seq"], 9, db)
    with pytest.raises(NotFound, match="no database at"):
        view.runs_page(db.parent / "missing.duckdb")


def test_task_story_shows_each_attempt_what_it_saw_its_verdict_and_feedback(runs):
    db, ids = runs
    page = view.task_page(ids["seq"], 2, db)
    assert [(a.row["attempt_index"], a.verdict, a.row["output"]) for a in page.attempts] == [
        (1, "FAIL", "w-two?"), (2, "PASS", "w2")]
    first, second = page.attempts
    assert first.row["feedback"] == "Incorrect; the word was w2." and page.run["shows_grading_info"] is True
    assert "This is attempt 1 of 3." in first.prompt_delta[-1] and "Say the word w2." not in first.prompt_delta
    assert "<Feedback 1>" in second.prompt_delta and "Incorrect; the word was w2." in second.prompt_delta
    assert "Say the word w2." not in second.prompt_delta  # seen before: not new
    assert first.row["calls"][0]["role"] == "actor" and first.input_tokens == first.row["calls"][0]["input_tokens"] > 0
    assert (page.first_success, page.previous_index, page.next_index) == (2, 1, 3)
    partner = page.partner
    assert partner.run_id == ids["pass"] and partner.same_task and partner.metric == "pass@k"
    samples = [(a.row["attempt_index"], a.verdict, a.row["output"]) for a in partner.attempts]
    assert samples == [(i, "FAIL", "w-two?") for i in (1, 2, 3)]
    errored = view.task_page(ids["seq"], 5, db).attempts[0]
    error = errored.row["error"]
    assert (errored.verdict, error["stage"], error["status_code"]) == ("ERROR", "actor", 400)
    assert errored.row["calls"][0]["error"].startswith("400 bad request")
    assert view.task_page(ids["seq"], 6, db).attempts[0].output_grid == [[[1, 2], [3, 0]]]


def test_prompt_delta_and_grids():
    assert story.prompt_delta("a\nb", "a\nb\nc\nd") == ["c", "d"]
    assert story.prompt_delta("a\nb\nc", "a\nB\nc") == ["B"]
    assert story.output_grids("Here:\n```json\n[[[1]], [[2, 3]]]\n```\nDone.") == [[[1]], [[2, 3]]]
    assert story.output_grids("[[1, 10]]") is None and story.output_grids("no grid") is None


def test_urls_are_stable_and_reversible():
    for run_id in ("toy-plain/seqk/mock__a/deterministic/binary@t 1", "x/a%2Fb/c?d#e"):
        path = render.run_path(run_id)
        assert "?" not in path and "#" not in path and " " not in path
        assert render.run_id_of(path) == run_id and path.count("/") == run_id.count("/")
    assert render.Urls().task("a/b", 3) == "/runs/a/b/tasks/3"
    assert render.Urls().run("a/b", "never", 2) == "/runs/a/b?filter=never&page=2"
    assert render.Urls(here="runs/a/b/tasks/3.html").index() == "../../../../index.html"


def test_chart_draws_each_series_with_its_interval_and_task_count():
    point = pages.CurvePoint
    seq = svg.Series("seq@t <hint>", [point(1, 5, 0.2, 0.04, 0.6), point(2, 5, 0.4, 0.1, 0.8)], "#d00")
    resampled = svg.Series("pass@t", [point(1, 6, 0.1, 0.0, 0.4), point(2, 6, 0.3, 0.1, 0.7)], "#555", dashed=True)
    chart = svg.curve_chart([seq, resampled], title="t")
    assert chart.count("<polyline") == 2 and chart.count("<polygon") == 2 and "stroke-dasharray" in chart
    assert "seq@t &lt;hint&gt; @2 = 0.400 (95% CI 0.100–0.800, 5 tasks)" in chart


def test_verdict_details_render_readably():
    data = render.environment().get_template("macros.html").module.data
    html = str(data({"n_given": 1, "grids": [{"index": 1, "correct": False, "cells_matching": 3}],
                     "expected": [[1, 2], [3, 4]], "verdicts": [{"criterion": "cites", "met": True}]}))
    assert re.search(r"<th>cells_matching</th>.*<td>3</td>", html, re.S)  # a list of records: a table
    assert 'class="grid"' in html and 'class="c4"' in html  # a grid: coloured cells
    assert "✓ yes" in html and "✗ no" in html


def _links(html: str) -> list[str]:
    return [h for h in re.findall(r'(?:href|src)="([^"]+)"', html) if not h.startswith(("http", "#"))]


@pytest.mark.slow  # every page of three runs written out (~3 s of CPU); test_view_cli's bundle stays
def test_bundle_holds_every_page_it_links_to_and_says_what_it_bounds(runs, tmp_path):
    db, ids = runs
    out = tmp_path / "site"
    result = view.bundle(out, db, runs=[ids["seq"], ids["pass"]], max_tasks=4)
    assert (result.n_runs, result.n_runs_in_db) == (2, 3)
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert "index.html" in files and "static/view.css" in files and not any(f.endswith(".js") for f in files)
    bundled = {f"runs/{run_id}/tasks/{i}.html" for run_id in (ids["seq"], ids["pass"]) for i in (1, 2, 3, 4)}
    assert {f for f in files if f.startswith("runs/") and "/tasks/" in f} == bundled
    # the one pair's compare pages, and the side-by-side story of each of its flips among tasks 1-4
    pair = f"compare/{bundle_key(ids['pass'], ids['seq'])}"  # a pair is in run id order
    assert {f for f in files if f.startswith("compare/")} == {
        f"{pair}/{name}.html" for name in ("index", "a_only", "b_only")} | {f"{pair}/tasks/{i}.html" for i in (2, 4)}
    assert result.n_pages == len(files) - 1
    for name in files - {"static/view.css"}:
        html = (out / name).read_text()
        assert "/api/stamp" not in html and "<script" not in html
        for link in _links(html):
            target = (out / name).parent / unquote(link.split("?")[0])
            assert target.resolve().is_file(), f"{name} links to {link}, which the bundle lacks"
    index = (out / "index.html").read_text()
    assert "2 of 3 runs, and the first 4 tasks of each" in index and ids["seq_binary"] not in index
    run = (out / "runs" / ids["seq"] / "index.html").read_text()
    assert "among tasks 1–4 (this bundle holds no more of the run)" in run


def test_bundle_refuses_a_run_id_that_would_leave_its_folder(tmp_path):
    with pytest.raises(Exception, match="cannot be a folder of the bundle"):
        publish._file(tmp_path, "a/../../etc", "index.html")
    assert publish._file(tmp_path, "a/b@c", "x.html") == tmp_path / "runs" / "a" / "b@c" / "x.html"


def test_server_routes_pages_errors_and_stamp(runs):
    from starlette.testclient import TestClient

    from seqk.view.app import create_app

    db, ids = runs
    client = TestClient(create_app(store.open(db)))
    assert "seq@3 = 0.400" in client.get("/").text
    run = "/runs/" + render.run_path(ids["seq"])
    assert client.get(run, params={"filter": "errored"}).text.count('class="task-link"') == 1
    story_page = client.get(run + "/tasks/2")
    assert story_page.status_code == 200 and "Incorrect; the word was w2." in story_page.text
    for path, message in (("/runs/nope/x", "no run &#39;nope/x&#39;"), (run + "/tasks/99", "has no task 99"),
                          ("/elsewhere", "Not Found")):
        answer = client.get(path)
        assert answer.status_code == 404 and message in answer.text and "Traceback" not in answer.text
    assert client.get(run, params={"page": "x"}).status_code == 404
    stamp = client.get("/api/stamp").json()["stamp"]
    assert stamp == client.get("/api/stamp").json()["stamp"]
    db.unlink()
    gone = client.get("/")
    assert gone.status_code == 404 and "no database at" in gone.text


PROGRESS = ("n_tasks", "n_started", "n_finished", "n_passed", "n_valid_attempts", "n_error_attempts")


def test_status_and_the_viewer_count_a_run_s_progress_alike(runs, tmp_path):
    """One query (run_progress_of) serves both: tasks, not chains, even with `chains: 3`, where a
    task is finished only when its every chain is."""
    from helpers import write_variant
    from scripts import solves_on

    from seqk.analysis.status import status
    from seqk.config import runspec
    from seqk.run import engine

    db, ids = runs
    models.register_mock("mock/chained", solves_on({1: 1, 2: 3}))
    spec = runspec.load(write_variant(tmp_path, "chains.yaml", benchmark="toy", metric="seq@k", k=2, chains=3,
                                      model="mock/chained", options={"n": 3}))
    engine.run(spec, db)
    in_status = {r["run_id"]: tuple(r[key] for key in PROGRESS) for r in status([], db)}
    in_viewer = {r.run_id: tuple(getattr(r, key) for key in PROGRESS)
                 for g in view.runs_page(db).groups for r in [*([g.pass_run] if g.pass_run else []), *g.seq_runs]}
    assert in_status == in_viewer and len(in_status) == 4
    # Task 1 solved at once in every chain, task 2 never within k=2, task 3 never: 3 tasks
    # started and finished (each chain done), 1 passed; the other three runs as before.
    assert in_status[spec.run_id] == (3, 3, 3, 1, 1 * 3 + 2 * 3 + 2 * 3, 0)
    assert in_status[ids["seq"]][:4] == (6, 6, 5, 2)


def test_templates_are_compiled_once_into_the_cache_folder_and_an_unwritable_one_keeps_nothing(tmp_path, monkeypatch):
    """A viewer's templates compile once per source into seqk's cache folder; a later viewer loads
    them from there without compiling (which cost its first pages up to 0.36 s); a cache folder
    that cannot be read or written renders the same pages, keeping nothing."""
    import jinja2

    compiled: list[str] = []
    real = jinja2.Environment.compile

    def counting(self, source, name=None, filename=None, raw=False, defer_init=False):
        compiled.append(name)
        return real(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    names = render.environment().list_templates()

    def load_templates():
        for name in names:
            render.environment().get_template(name)

    try:
        render.environment.cache_clear()
        load_templates()  # every template compiled and kept
        assert sorted(compiled) == sorted(names) and "runs.html" in names
        kept = sorted((tmp_path / "cache" / "seqk" / "templates").iterdir())
        assert len(kept) == len(names)
        render.environment.cache_clear()
        compiled.clear()
        load_templates()  # the next viewer: loaded, none compiled
        html = render.render_error(404, "no run <x>", render.Urls())
        assert compiled == [] and "no run &lt;x&gt;" in html

        (tmp_path / "ro").write_text("a file where the folder would go")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "ro"))
        render.environment.cache_clear()
        assert render.render_error(404, "no run <x>", render.Urls()) == html
        assert sorted(compiled) == ["base.html", "error.html"]
        # the folder gone once the viewer started: each template compiled, the page the same
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "gone"))
        render.environment.cache_clear()
        render.environment()
        import shutil
        shutil.rmtree(tmp_path / "gone" / "seqk" / "templates")
        (tmp_path / "gone" / "seqk" / "templates").write_text("not a folder")
        compiled.clear()
        assert render.render_error(404, "no run <x>", render.Urls()) == html
        assert sorted(compiled) == ["base.html", "error.html"]
    finally:
        render.environment.cache_clear()
