"""The viewer's compare page as a reader meets it, in Debian's chromium through Playwright: `seqk view`
over docs/compare.md's database (tests/compare_db.py), two runs picked on the run list, the three
questions read off the page with intervals checked against an independent recomputation from the
attempts (tests/recompute.py), the flips filtered, a task's two stories side by side; then the same
pages in the static bundle, from file://."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import compare_db
import pytest
from chromium import in_thread, seqk_view
from playwright.sync_api import Page, expect
from recompute import bootstrap, equal_budget, flip_counts, frontier, paired, tango

from seqk.analysis.compare import view_path


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple:
    folder = tmp_path_factory.mktemp("view-compare")
    db = folder / "seqk.duckdb"
    return db, in_thread(compare_db.build, folder, db), folder


@pytest.fixture(scope="module")
def served(demo) -> Iterator[tuple[str, dict[str, str], object]]:
    db, ids, _ = demo
    with seqk_view(db) as url:
        yield url, ids, db


def _read_at_t(page: Page, db, a: str, b: str, metrics: tuple[str, str], k: int) -> None:
    """Each row of the page's a − b table against the recomputation (Tango's interval to the digit;
    a bootstrap's within its Monte Carlo error)."""
    rows = page.locator("#at-t tbody tr")
    expect(rows).to_have_count(k)
    for t in range(1, k + 1):
        cells = rows.nth(t - 1).locator("td")
        x, y = paired(db, a, metrics[0], b, metrics[1], t)
        expect(cells.nth(0)).to_have_text(str(t))
        expect(cells.nth(3)).to_contain_text(f"{x.mean() - y.mean():+.3f}")
        expect(cells.nth(5)).to_have_text(str(len(x)))
        shown = re.search(r"\[([-+]\d\.\d+), ([-+]\d\.\d+)\]", cells.nth(3).inner_text())
        assert shown, cells.nth(3).inner_text()
        low, high = float(shown.group(1)), float(shown.group(2))
        if set(x) | set(y) <= {0.0, 1.0}:
            n, a_only, b_only = flip_counts(x, y)
            want_low, want_high, p = tango(a_only, b_only, n)
            assert (low, high) == pytest.approx((want_low, want_high), abs=0.0005)
            expect(cells.nth(4)).to_have_text(re.compile(r"^(1|0\.\d+|\d\.\de-\d+)$"))
            assert float(cells.nth(4).inner_text()) == pytest.approx(p, rel=0.05)
        else:
            want_low, want_high = bootstrap(x, y)
            assert (low, high) == pytest.approx((want_low, want_high), abs=0.015)
            # p read from the same resamples: it and the interval agree
            assert (float(cells.nth(4).inner_text()) < 0.05) == (low > 0 or high < 0)


def _read_equal_budget(page: Page, db, a: tuple[str, str, int], b: tuple[str, str, int]) -> list[dict]:
    """Each row of the page's equal-spend table (run id, metric, K of each side) against the
    recomputation: the cells and the difference to the digit, the interval and the band within
    their bootstrap's Monte Carlo error."""
    mine = equal_budget(frontier(db, *a), frontier(db, *b))["rows"]
    rows = page.locator("#equal-budget tbody tr")
    expect(rows).to_have_count(len(mine))
    for i, x in enumerate(mine):
        cells = rows.nth(i).locator("td")
        for column, (cell, mixed, _, _) in ((1, x["a"]), (3, x["b"])):
            # each side's frontier at the budget: a cell, or two mixed across tasks
            expect(cells.nth(column)).to_have_text("{}×{}".format(*cell) + ("+{}×{}".format(*mixed) if mixed else ""))
        expect(cells.nth(5)).to_contain_text(f"{x['difference']:+.3f}")
        for column, want, tolerance in ((5, (x["low"], x["high"]), 0.03), (6, x["band"], 0.03)):
            shown = re.search(r"\[([-+]\d\.\d+), ([-+]\d\.\d+)\]", cells.nth(column).inner_text())
            assert shown, cells.nth(column).inner_text()
            assert (float(shown.group(1)), float(shown.group(2))) == pytest.approx(want, abs=tolerance)
    return mine


def _axes_titled(page: Page, unit: str) -> None:
    curves, frontiers = page.locator(".compare-curves svg"), page.locator(".compare-frontiers svg")
    expect(curves).to_contain_text("attempts or samples t")
    expect(curves).to_contain_text("success (share of tasks)")
    expect(frontiers).to_contain_text(f"expected spend per task ({unit})")
    expect(frontiers).to_contain_text("success (share of tasks)")


def test_critic_x_against_critic_y_picked_from_the_run_list(served, page):
    url, ids, db = served
    a, b = ids["critic_sharp"], ids["critic_vague"]
    page.goto(url)
    page.select_option("#compare-a", a)
    page.select_option("#compare-b", b)
    page.locator("#compare-go").click()
    expect(page.locator("h1")).to_contain_text("Compare two runs")
    assert page.url == url.rstrip("/") + view_path(a, b)
    expect(page.locator('#differs tr[data-key="critic.model"]')).to_contain_text("critic_sharp")
    expect(page.locator('#differs tr[data-key="critic.model"]')).to_contain_text("critic_vague")
    expect(page.locator("#differs tbody tr")).to_have_count(2)  # critic.model, critic.price
    _read_at_t(page, db, a, b, ("seq@k", "seq@k"), 3)
    _axes_titled(page, "US$")
    _read_equal_budget(page, db, (a, "seq@k", 3), (b, "seq@k", 3))
    # the vague critic ahead at the lowest budget (its second attempts cost less), the sharp one later
    expect(page.locator("#equal-budget-summary")).to_contain_text("by the band: a ahead at $")
    expect(page.locator("#equal-budget-summary")).to_contain_text("b ahead at $0.000127")
    # the flips, filtered: every one is a's (the sharp critic's questions), none is b's
    x, y = paired(db, a, "seq@k", b, "seq@k", 3)
    _, a_only, b_only = flip_counts(x, y)
    expect(page.locator("#flip-count")).to_contain_text(f"{a_only} solved by a only, {b_only} by b only")
    page.locator("a[data-filter=b_only]").click()
    expect(page.locator("a.flip-link")).to_have_count(0)
    page.locator("a[data-filter=a_only]").click()
    expect(page.locator("a.flip-link")).to_have_count(a_only)
    first = page.locator("a.flip-link").first.inner_text()
    page.locator("input[name=q]").fill(f"demo-ledger-{int(first):02d}")
    page.locator("form.search button").click()
    expect(page.locator("a.flip-link")).to_have_text([first])
    # one click: the two stories side by side, feedback beside feedback
    page.locator("a.flip-link").click()
    expect(page.locator("h1")).to_contain_text(f"Task {first}")
    second = page.locator('tr.slot-row[data-attempt="1"]')
    expect(second.locator(".side-a .feedback")).to_contain_text("did your answer copy it exactly?")
    expect(second.locator(".side-b .feedback")).to_contain_text("Re-read the task and check every part")
    expect(page.locator(".side-a .verdict").last).to_have_text("PASS")
    expect(page.locator(".side-b .verdict")).to_have_text(["FAIL", "FAIL", "FAIL"])
    page.locator("#compare-crumb").click()
    expect(page.locator("#at-t")).to_be_visible()


def test_socratic_against_binary_at_its_spend(served, page):
    url, ids, db = served
    a, b = ids["critic_sharp"], ids["cheap"]
    page.goto(url.rstrip("/") + view_path(a, b))
    expect(page.locator('#differs tr[data-key="feedback_mode"]')).to_contain_text("socratic")
    expect(page.locator('#differs tr[data-key="chains"]')).to_contain_text("4")
    _read_at_t(page, db, a, b, ("seq@k", "seq@k"), 3)  # b's 4 chains: fractional values, a bootstrap
    _axes_titled(page, "US$")
    legend = page.locator(".compare-frontiers svg .legend")
    expect(legend).to_have_text(["a: depth 1..3", "b: depth 1", "b: depth 2", "b: depth 3"])
    _read_equal_budget(page, db, (a, "seq@k", 3), (b, "seq@k", 3))
    expect(page.locator("#equal-budget-summary")).to_contain_text(
        "by the band: a ahead at $0.00021; b ahead at $0.000127")


def test_a_cheap_model_retrying_against_a_strong_model_once(served, page):
    url, ids, db = served
    a, b = ids["cheap"], ids["strong"]
    page.goto(url.rstrip("/") + view_path(a, b))
    expect(page.locator('#differs tr[data-key="actor.model"]')).to_contain_text("strong")
    _read_at_t(page, db, a, b, ("seq@k", "pass@k"), 1)
    _axes_titled(page, "US$")
    expect(page.locator(".compare-frontiers svg .legend")).to_contain_text(["b: pass@1"])
    [row] = _read_equal_budget(page, db, (a, "seq@k", 3), (b, "pass@k", 1))
    assert row["band"][0] > 0
    expect(page.locator("#equal-budget-summary")).to_contain_text("by the band: a ahead at $")
    page.locator("a[data-filter=b_only]").click()
    rows = page.locator("#flip-table tbody tr")
    expect(rows.first).to_contain_text("never solved in 4 chains of 3 attempts")
    rows.first.locator("a.flip-link").click()
    expect(page.locator("table.side-by-side th").nth(2)).to_contain_text("b: pass@k")
    expect(page.locator(".side-b .verdict")).to_have_text(["PASS"])
    expect(page.locator(".side-a .verdict")).to_have_count(12)  # 4 chains × 3 attempts, none passed
    expect(page.locator("tr.slot-row")).to_have_count(12)


def test_two_runs_of_other_slices_are_a_page_that_says_so(served, page):
    url, ids, _ = served
    answer = page.goto(url.rstrip("/") + view_path(ids["cheap"], "toy-plain/seqk/mock__x/deterministic/binary"))
    assert answer is not None and answer.status == 404
    expect(page.locator("#error-message")).to_contain_text("no run matches")
    answer = page.goto(url + "compare?a=&b=")
    assert answer is not None and answer.status == 400
    expect(page.locator("#error-message")).to_contain_text("pick two different runs")


def test_the_bundle_holds_the_compare_pages_and_their_stories(demo, page, tmp_path):
    db, ids, _ = demo
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "seqk", "view", "--db", str(db), "--bundle", str(site),
                           "--runs", ids["critic_sharp"], "--runs", ids["critic_vague"], "--max-tasks", "30"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    page.goto((site / "index.html").as_uri())
    expect(page.locator(".compare-pairs a")).to_have_count(1)  # the two bundled runs
    page.locator(".compare-pairs a").click()
    assert page.url.startswith("file://")
    expect(page.locator("#compare-form")).to_have_count(0)
    _read_at_t(page, db, ids["critic_sharp"], ids["critic_vague"], ("seq@k", "seq@k"), 3)
    page.locator("a[data-filter=a_only]").click()
    assert page.url.endswith("/a_only.html")
    # the stories of the flips among the 30 bundled tasks, no link to those beyond
    x, y = paired(db, ids["critic_sharp"], "seq@k", ids["critic_vague"], "seq@k", 3)
    flipped = [i + 1 for i in range(len(x)) if x[i] == 1 and y[i] == 0]
    expect(page.locator("a.flip-link")).to_have_text([str(i) for i in flipped if i <= 30])
    expect(page.locator("#flip-table tbody tr")).to_have_count(len(flipped))
    page.locator("a.flip-link").first.click()
    expect(page.locator("table.side-by-side")).to_be_visible()
    expect(page.locator(".side-a .feedback").first).to_contain_text("did your answer copy it exactly?")
