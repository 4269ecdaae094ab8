"""A study in `seqk report`: the text section (its decision and its sequence at the looks), the JSON
(every look), and the HTML page's chart of the sequence against tasks done."""

from __future__ import annotations

import json

import pytest
from helpers import toy_study

from seqk.analysis import report as reports
from seqk.render import charts
from seqk.render.study import shown_looks
from seqk.render.text import to_text


@pytest.mark.slow  # a whole study run (~4 s of CPU)
def test_the_report_shows_each_study_with_its_sequence(tmp_path, db):
    outcome = toy_study(tmp_path, db)
    spec, last = outcome.spec, outcome.result.last
    rep = reports.report([], db)
    (study,) = rep.studies
    text = to_text(rep)
    assert f"study {spec.study_id}: {spec.seq.run_id} vs {spec.partner.run_id} (lift, α = 0.05)" in text
    assert f"seq better (decided); {last.n_tasks} tasks in the sequence, {last.n_used} used of 200" in text
    assert f"{last.n_tasks:5d}  {last.estimate:+.3f}, 95% sequence [{last.low:+.3f}, {last.high:+.3f}]" in text
    looks = json.loads(reports.to_json(rep))["studies"][0]["looks"]
    assert [(x["n_tasks"], x["low"], x["high"]) for x in looks] == [(u.n_tasks, u.low, u.high)
                                                                    for u in outcome.result.updates]
    charts.save_html(rep, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert "Sequential studies: the anytime-valid confidence sequence against tasks done" in page
    assert f'"n_tasks": {last.n_tasks}' in page.replace('"n_tasks":', '"n_tasks": ').replace("  ", " ")


def test_a_long_study_shows_ten_looks_the_first_and_the_last_among_them():
    looks = list(range(37))
    shown = shown_looks(looks)
    assert len(shown) == 10 and shown[0] == 0 and shown[-1] == 36 and shown == sorted(set(shown))
    assert shown_looks(looks[:4]) == looks[:4]
