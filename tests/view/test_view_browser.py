"""`seqk view` as a user meets it: the command started on a database made by real mock runs,
driven in Debian's chromium through Playwright; and the bundle opened from file://."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import view_db
from chromium import in_thread as _in_thread
from chromium import seqk_view
from playwright.sync_api import Page, expect

from seqk import models
from seqk.config import runspec
from seqk.run import engine


@pytest.fixture
def served(tmp_path, db) -> Iterator[tuple[str, dict[str, str], Path]]:
    """`seqk view` on a loopback port of its choosing, stopped after the test."""
    ids = _in_thread(view_db.build, tmp_path, db)
    with seqk_view(db) as url:
        yield url, ids, tmp_path


def _read_story(page: Page, ids: dict[str, str]) -> None:
    """What a user reads on the story of seq@k task 2: two attempts, the verdicts, the feedback
    (flagged as leaking grading data), and the three pass@k samples of the same task."""
    expect(page.locator("h1")).to_contain_text("Task 2")
    first, second = page.locator("#attempt-1"), page.locator("#attempt-2")
    expect(first.locator(".verdict")).to_have_text("FAIL")
    expect(first.locator(".output")).to_contain_text("w-two?")
    expect(first.locator(".feedback")).to_have_text(re.compile(r"Incorrect; the word was w2\."))
    expect(first).to_contain_text("leaks grading info (hint)")
    expect(second.locator(".verdict")).to_have_text("PASS")
    expect(second.locator(".output")).to_contain_text("w2")
    expect(second.locator("pre.added")).to_contain_text("<Feedback 1>")
    partner = page.locator("#partner")
    expect(partner).to_contain_text("pass@k samples of the same task")
    expect(partner).to_contain_text(ids["pass"])
    expect(partner.locator(".attempt")).to_have_count(3)
    expect(partner.locator(".verdict")).to_have_text(["FAIL", "FAIL", "FAIL"])
    expect(partner).to_contain_text("0 of 3 passed")


def _read_budget_charts(page: Page, ids: dict[str, str]) -> None:
    """Each seq@k run with a budget partner has its equal-budget chart: pass@m and seq@k's
    depths against the spend per task."""
    charts = page.locator("figure.budget")
    expect(charts).to_have_count(2)
    for name in ("seq", "seq_binary"):
        chart = page.locator(f'figure.budget[data-seq-run="{ids[name]}"]')
        expect(chart.locator("svg.budget-chart")).to_be_visible()
        expect(chart).to_contain_text("resample until success (pass@3's samples)")
        expect(chart).to_contain_text("seq@k, depth 1..3")
        expect(chart).to_contain_text(f"against its budget partner {ids['pass']}")
        # seq@k's 3 depths, and the partner's Pareto-efficient resample-until-success cells: on this
        # 6-task world only 1 (a cell that costs more and is worth no more is not drawn)
        expect(chart.locator("circle")).to_have_count(4)
        expect(chart).to_contain_text("expected spend per task (tokens)")  # mock models are free


def test_from_the_run_list_to_a_seqk_story_and_back_in_two_clicks(served, page):
    url, ids, _ = served
    page.goto(url)
    expect(page.locator("h1")).to_contain_text("3 runs")
    expect(page.locator("svg.chart")).to_have_count(1)
    _read_budget_charts(page, ids)
    page.get_by_role("link", name=ids["seq"], exact=True).click()  # click 1
    expect(page.locator("h1")).to_have_text(ids["seq"])
    expect(page.locator("#partner-link")).to_have_text(ids["pass"])
    page.locator("a.task-link", has_text=re.compile(r"^2$")).click()  # click 2
    _read_story(page, ids)
    assert page.url.endswith("/tasks/2")
    page.locator("#home").click()  # one click back to every run
    expect(page.locator("h1")).to_contain_text("3 runs")
    page.go_back()
    page.go_back()
    expect(page.locator("h1")).to_have_text(ids["seq"])


def test_filters_and_search_on_a_run_page(served, page):
    url, ids, _ = served
    page.goto(url)
    page.get_by_role("link", name=ids["seq"], exact=True).click()
    page.locator("a[data-filter=feedback_only]").click()
    expect(page.locator("a.task-link")).to_have_text(["2"])
    page.locator("a[data-filter=resample_only]").click()
    expect(page.locator("a.task-link")).to_have_text(["4"])
    page.locator("a[data-filter=errored]").click()
    expect(page.locator("a.task-link")).to_have_text(["5"])
    page.locator("a[data-filter=all]").click()
    page.locator("input[name=q]").fill("FOUR")
    page.locator("form.search button").click()
    expect(page.locator("a.task-link")).to_have_text(["4"])
    expect(page.locator(".count")).to_contain_text("matching “FOUR”")


def test_unknown_run_is_a_page_that_says_so(served, page):
    url, _, _ = served
    answer = page.goto(url + "runs/no/such/run")
    assert answer is not None and answer.status == 404
    expect(page.locator("#error-message")).to_contain_text("no run 'no/such/run'")


def test_a_seqk_run_without_a_budget_partner_has_no_budget_chart(served, page):
    url, ids, folder = served
    # Another actor: no pass@k run of the same actor, so nothing to compare at equal budget.
    models.register_mock("mock/other", view_db.actor)
    lonely = runspec.load(folder / "variants" / "toy" / "seq.yaml", {"model": "mock/other"})
    _in_thread(engine.run, lonely, folder / "seqk.duckdb")
    page.goto(url)
    expect(page.get_by_role("link", name=lonely.run_id, exact=True)).to_be_visible()
    expect(page.locator(f'figure.budget[data-seq-run="{lonely.run_id}"]')).to_have_count(0)
    expect(page.locator("figure.budget")).to_have_count(2)


def test_pages_refresh_while_a_run_writes(served, page):
    url, ids, folder = served
    page.goto(url)
    page.get_by_role("link", name=ids["seq"], exact=True).click()
    expect(page.locator("a.task-link")).to_have_count(6)
    # The same variant with one more task: the run goes on while the page stays open.
    models.register_mock("mock/actor", view_db.actor)
    spec = runspec.load(folder / "variants" / "toy" / "seq.yaml", {"max_tasks": 7})
    _in_thread(engine.run, spec, folder / "seqk.duckdb")
    expect(page.locator("a.task-link")).to_have_count(7, timeout=20_000)
    expect(page.locator("#live-state")).to_contain_text("updated")


def test_the_bundle_opens_from_file_and_tells_the_same_story(tmp_path, db, page):
    ids = _in_thread(view_db.build, tmp_path, db)
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "seqk", "view", "--db", str(db), "--bundle", str(site)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"(3 of 3 runs, at most 200 tasks each); open {site / 'index.html'}" in done.stdout
    page.goto((site / "index.html").as_uri())
    expect(page.locator("h1")).to_contain_text("3 runs")
    expect(page.locator("header .live")).to_contain_text("snapshot")
    page.get_by_role("link", name=ids["seq"], exact=True).click()
    page.locator("a.task-link", has_text=re.compile(r"^2$")).click()
    assert page.url.startswith("file://") and page.url.endswith("/tasks/2.html")
    _read_story(page, ids)
    page.locator("#home").click()
    expect(page.locator("h1")).to_contain_text("3 runs")
    _read_budget_charts(page, ids)  # offline too: inline SVG, no script


def test_the_answer_reads_on_both_pages_and_nothing_overflows_1400_pixels(served, page):
    url, ids, folder = served
    # A long model name with no hyphen to break at makes a long run id: it wraps instead of widening
    # the page.
    long_model = "mock/" + "AVeryLongSelfHostedModelName" * 6
    models.register_mock(long_model, view_db.actor)
    lonely = runspec.load(folder / "variants" / "toy" / "seq.yaml", {"model": long_model})
    _in_thread(engine.run, lonely, folder / "seqk.duckdb")
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(url)
    first = page.locator("#runs section.group").first  # the comparison comes before the lonely run
    expect(first.locator(f'.answer[data-seq-run="{ids["seq"]}"] .lift')).to_contain_text(
        # task 5's error censors its chain (issue 27): 6 tasks, and too few for a bootstrap interval
        re.compile(r"lift seq@3 − pass@3 = \+0\.07 \(too few tasks\) · n = 6 tasks · flips \+1/−1"))
    expect(first.locator(f'.answer[data-seq-run="{ids["seq"]}"] .framing')).to_contain_text("framing seq@1 − pass@1 = ")
    expect(page.locator(f'.answer[data-seq-run="{lonely.run_id}"]')).to_contain_text("no lift")
    wide = "document.documentElement.scrollWidth"
    assert page.evaluate(wide) <= 1400, page.evaluate(WIDEST)
    for run_id in (lonely.run_id, ids["pass"]):
        page.goto(url)
        page.locator("table.runs").get_by_role("link", name=run_id, exact=True).click()
        expect(page.locator("h1")).to_have_text(run_id)
        assert page.evaluate(wide) <= 1400, (run_id[:30], page.evaluate(WIDEST))
    answers = page.locator("section.the-answer")  # the pass@k run's page: each partner's answer
    expect(answers).to_have_count(2)
    # against the partner that stops too, this 6-task world has no budget both frontiers reach, and
    # the answer says so instead of drawing rows
    expect(answers.first.locator(".equal-budget")).to_contain_text("no budget both sides reach")
    expect(answers.first.locator("table.budget-rows tbody tr")).to_have_count(0)


WIDEST = """() => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 1400)
    .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + (e.textContent || '').slice(0, 60))"""
"""What sticks out past 1400 pixels, to say so when a page is too wide."""


def test_the_run_list_says_computing_then_fills_each_verdict_in(tmp_path, db, page):
    import threading

    import uvicorn
    from test_view_verdict_cache import Gated

    from seqk import store
    from seqk.view import app

    ids = _in_thread(view_db.build, tmp_path, db)
    gate = threading.Event()
    sock = app.listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app.create_app(store.open(db), verdicts=Gated(store.open(db), gate)),
                                           log_level="warning"))
    serving = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    serving.start()
    try:
        page.goto(f"http://127.0.0.1:{sock.getsockname()[1]}/")
        for name in ("seq", "seq_binary"):
            expect(page.locator(f'.answer.computing[data-seq-run="{ids[name]}"]')).to_contain_text(
                "computing what seqk report --compare says of this run")
        expect(page.locator(".answer .lift")).to_have_count(0)
        gate.set()  # the verdicts are done: the page's poll fills them in, with no reload
        expect(page.locator(f'.answer[data-seq-run="{ids["seq"]}"] .lift')).to_contain_text("lift seq@3 − pass@3")
        expect(page.locator(".computing")).to_have_count(0)
        expect(page.locator(".answer .lift")).to_have_count(2)
    finally:
        gate.set()
        server.should_exit = True
        serving.join(10)
        sock.close()
