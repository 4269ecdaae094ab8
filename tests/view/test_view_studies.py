"""The run list shows each sequential study: its decision, its arms (linked), tasks and spend, and
its confidence sequence against the tasks in it as inline SVG, served and in the static bundle;
the bundle's page, opened in Debian's chromium, draws one point per look."""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import toy_study
from playwright.sync_api import sync_playwright

from seqk import view
from seqk.view import publish, render


@pytest.fixture(scope="module")
def studied(tmp_path_factory):
    folder = tmp_path_factory.mktemp("study")
    db = folder / "seqk.duckdb"
    from toybench import ToyBench

    from seqk import benchmark as benchmarks

    benchmarks.registry()["toy"] = ToyBench()
    outcome = toy_study(folder, db, margin=0.05)
    return db, outcome


def test_the_run_list_shows_the_study_and_its_sequence(studied):
    db, outcome = studied
    page = view.runs_page(db)
    (study,) = page.studies
    assert study.study_id == outcome.spec.study_id and study.margin == 0.05
    assert [(look.n_tasks, look.low, look.high) for look in study.looks] == [
        (u.n_tasks, u.low, u.high) for u in outcome.result.updates]
    html = render.render_runs(page, render.Urls())
    section = html[html.index('id="studies"'):]
    assert 'class="study-chart"' in section and section.count('class="look"') == len(study.looks)
    assert "seq better" in section and f"{study.last.n_used} of 200 tasks used" in section
    assert f'href="/runs/{render.run_path(study.seq_run_id)}"' in section
    assert section.count('class="margin"') == 2
    last = study.last
    assert f"{last.n_tasks} tasks: {last.estimate:+.3f}, sequence [{last.low:+.3f}, {last.high:+.3f}]" in section


def test_the_bundle_holds_the_study_and_chromium_draws_it(studied, tmp_path):
    db, outcome = studied
    publish.bundle(tmp_path / "site", db, max_tasks=1)
    index = (tmp_path / "site" / "index.html").read_text()
    assert len(re.findall(r'class="look"', index)) == len(outcome.result.updates)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page()
        page.goto((tmp_path / "site" / "index.html").as_uri())
        chart = page.locator("#studies svg.study-chart")
        assert chart.count() == 1 and chart.locator("circle.look").count() == len(outcome.result.updates)
        box = chart.locator("polygon.band").bounding_box()
        # the band spans the tasks used, out of the 200 the 456-pixel axis holds
        assert box is not None and box["height"] > 20
        assert box["width"] == pytest.approx(456 * outcome.result.last.n_tasks / 200, abs=2)
        browser.close()
