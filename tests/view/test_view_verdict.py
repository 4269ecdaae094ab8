"""The viewer says what `seqk report --compare` says, where the report says it: on the run list and
on a run's page, each seq@k run's lift with its interval, p, n and flips, its framing effect, and
its equal-budget block, with the report's own figures; a run without a partner says it has no lift;
groups that compare come first; every chart's axes are titled."""

from __future__ import annotations

import html
import re

import view_db
from helpers import write_variant

from seqk import models, view
from seqk.analysis.report import fmt_estimate, fmt_p, report
from seqk.config import runspec
from seqk.run import engine
from seqk.view import pages, render


def block_of(page_html: str, seq_run_id: str) -> str:
    """The HTML of the answer block of one seq@k run."""
    start = page_html.index(f'<div class="answer" data-seq-run="{html.escape(seq_run_id)}">')
    return page_html[start:page_html.index("</div>", start)]


def text_of(page_html: str, seq_run_id: str) -> str:
    """The words of the answer block of one seq@k run, tags dropped and spaces folded."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", block_of(page_html, seq_run_id))).split())


def spent(value: float, unit: str) -> str:
    """A spend per task in the equal-budget block's unit, as the report prints it."""
    return f"${value:.4f}" if unit == "US$" else f"{value:,.0f} tokens"


def said(c) -> str:
    """A paired comparison as the answer block words it."""
    p = f" · p = {fmt_p(c.p_value)}" if c.p_value is not None else ""
    return f"= {fmt_estimate(c.difference)}{p} · n = {c.difference.n} tasks"


def test_the_run_list_shows_each_lift_framing_and_equal_budget_as_the_report_computes_them(runs):
    db, ids = runs
    rep = report((), db, compare=True)
    figures = {r.run_id: r for r in rep.runs}
    budgets: dict = {}
    for block in rep.equal_budget:
        budgets.setdefault(block.seq_run_id, block)
    page = render.render_runs(view.runs_page(db), render.Urls())
    for name in ("seq", "seq_binary"):
        run, words = figures[ids[name]], text_of(page, ids[name])
        assert run.lift is not None and run.framing is not None
        assert f"lift seq@3 − pass@3 {said(run.lift)} · flips +{run.lift.n_a_only}/−{run.lift.n_b_only}" in words
        assert f"vs {ids['pass']}" in words
        assert f"framing seq@1 − pass@1 {said(run.framing)} (seq@1 vs {run.framing_vs})" in words
        budget = budgets[ids[name]]  # the first block: a partner that stops too, never pass@m
        assert budget.partner != "pass_at_m"
        n = len(budget.points)
        verdict = (f"seq@k better at {len(budget.seq_better)} of {n} budgets, from "
                   f"{spent(budget.seq_better[0], budget.unit)} a task" if budget.seq_better
                   else f"no budget where seq@k is better; the partner better at {len(budget.partner_better)} "
                        f"of {n} budgets" if budget.partner_better
                   else f"no finding: the simultaneous 95% band covers 0 at each of {n} budgets" if n
                   else "no budget both sides reach")
        assert f"at equal budget {verdict} · n = {budget.n_shared} tasks" in words
        unit = "US$" if budget.unit == "US$" else "tokens (input + output)"
        assert f"vs {budget.title}: {budget.pass_run_id} (k={budget.pass_k}); spend in {unit}" in words
    # The world view_db built: task 5's error censors its chain, and Kaplan-Meier values it
    # between 0 and 1 (issue 27), so all 6 tasks count; task 2 only seq@3 solved (hint and binary
    # feedback alike), task 4 only pass@3: no lift.
    hint = figures[ids["seq"]].lift
    assert (hint.difference.n, hint.n_a_only, hint.n_b_only) == (6, 1, 1)
    assert hint.p_value is None or hint.p_value > 0.05  # None: too few tasks for an interval
    assert hint.difference.low is None or hint.difference.low < 0 < hint.difference.high


def test_a_run_page_shows_the_answer_and_every_equal_budget_row(runs):
    db, ids = runs
    rep = report((), db, compare=True)
    run = {r.run_id: r for r in rep.runs}[ids["seq"]]
    budget = next(b for b in rep.equal_budget if b.seq_run_id == ids["seq"])  # the stopping-matched block
    for shown in (ids["seq"], ids["pass"]):  # a pass@k run's page shows each partner's answer
        found = pages.run_page(shown, db)
        answered = [v.seq_run_id for v in found.verdicts]
        assert answered == ([ids["seq"]] if shown == ids["seq"] else sorted([ids["seq"], ids["seq_binary"]]))
        page = render.render_run(found, render.Urls())
        words = text_of(page, ids["seq"])
        assert f"lift seq@3 − pass@3 {said(run.lift)}" in words
        if not budget.points:  # this small world: no budget both frontiers reach, and the block says so
            assert "at equal budget no budget both sides reach" in words and 'class="budget-rows"' not in page
            continue
        table = block_of(page, ids["seq"]).split('class="budget-rows"')[1]
        rows = re.findall(r"<tr>(<td.*?)</tr>", table[:table.index("</table>")], re.DOTALL)
        cells = [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)] for row in rows]
        assert len(cells) == len(budget.points) > 0
        for row, point in zip(cells, budget.points, strict=True):
            if point.width is None or point.difference is None:
                assert row == [spent(point.budget, budget.unit), "no cell within this budget on both sides"]
                continue
            band = "–" if point.band is None else f"[{point.band.low:+.3f}, {point.band.high:+.3f}]"
            assert row == [spent(point.budget, budget.unit), f"{point.width}×{point.depth} {point.seq_value:.3f}",
                           f"{point.partner_width}×{point.partner_depth} {point.partner_value:.3f}",
                           fmt_estimate(point.difference, digits=3), band, str(point.n_tasks)]


def test_comparisons_come_first_and_a_run_without_a_partner_says_it_has_no_lift(tmp_path, runs):
    db, ids = runs
    # Another actor whose name sorts first: no pass@k run of its own, so nothing to compare with.
    models.register_mock("mock/aaa", view_db.actor)
    lonely = runspec.load(write_variant(tmp_path, "lonely.yaml", benchmark="toy", metric="seq@k", k=3,
                                        feedback_mode="binary", model="mock/aaa", options={"n": 7},
                                        max_tasks=6))
    engine.run(lonely, db)
    listing = view.runs_page(db)
    assert [g.pass_run is not None for g in listing.groups] == [True, False]
    assert listing.groups[1].seq_runs[0].run_id == lonely.run_id
    assert listing.verdicts[lonely.run_id].lift is None and not listing.verdicts[lonely.run_id].has_partner
    page = render.render_runs(listing, render.Urls())
    assert text_of(page, lonely.run_id) == "no pass@k run of the same slice, actor, k, verifier and judge: no lift"
    assert page.index(f'data-seq-run="{ids["seq"]}"') < page.index(f'data-seq-run="{lonely.run_id}"')
    mine = render.render_run(pages.run_page(lonely.run_id, db), render.Urls())
    assert "no lift" in text_of(mine, lonely.run_id) and 'class="budget-rows"' not in mine


def test_every_chart_axis_is_titled(runs):
    db, ids = runs
    listing = render.render_runs(view.runs_page(db), render.Urls())
    run = render.render_run(pages.run_page(ids["seq"], db), render.Urls())
    charts = re.findall(r"<svg .*?</svg>", listing + run, re.DOTALL)
    assert len(charts) == 4  # the group's curves, two equal-budget charts, the run's curve
    for svg in charts:
        titles = re.findall(r'class="tick axis-title"[^>]*>([^<]+)<', svg)
        assert len(titles) == 2 and "success (share of tasks)" in titles, titles
