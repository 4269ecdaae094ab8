"""The viewer says what `seqk report --compare` says, where the report says it: on the run list and
on a run's page, each seq@k run's lift with its interval, p, n and flips, its framing effect, and
its equal-budget block, with the report's own figures; a run without a partner says it has no lift;
groups that compare come first; every chart's axes are titled."""

from __future__ import annotations

import dataclasses
import html
import itertools
import re

import view_db
from helpers import write_variant
from scripts import attempt_of, word_of

from seqk import models, view
from seqk.analysis.report import fmt_estimate, fmt_p, report
from seqk.config import runspec
from seqk.errors import PermanentProviderError
from seqk.run import engine
from seqk.view import pages, render
from seqk.view.verdict import verdicts


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


def _noisy_world(folder, db) -> dict[str, str]:
    """40 toy tasks: a pass@k run and three seq@k runs of one actor, one without feedback (the
    partner that stops too), each with errors that censor chains: figures with real intervals."""
    calls = itertools.count()

    def actor(prompt: str) -> str:
        task, attempt = int(word_of(prompt)[1:]), attempt_of(prompt) or 0
        draw = (task * 7919 + attempt * 104729 + next(calls) * 31) % 100
        if draw < 4:
            raise PermanentProviderError("400 bad request", status_code=400)
        return f"w{task}" if draw < 20 + 8 * attempt + task else "no idea"

    models.register_mock("mock/noisy", actor)
    ids = {}
    for name, metric, mode in (("pass", "pass@k", "binary"), ("hint", "seq@k", "hint"),
                               ("binary", "seq@k", "binary"), ("none", "seq@k", "none")):
        spec = runspec.load(write_variant(folder, f"noisy_{name}.yaml", benchmark="toy", metric=metric, k=4,
                                          feedback_mode=mode, model="mock/noisy", options={"n": 40},
                                          max_tasks=40))
        engine.run(spec, db)
        ids[name] = spec.run_id
    return ids


def _without_q(v):
    return dataclasses.replace(v, **{name: dataclasses.replace(getattr(v, name), q_value=None)
                                     for name in ("lift", "framing", "framing_chen") if getattr(v, name)})


def test_the_verdicts_compute_only_what_they_show_and_equal_the_whole_reports_figures(tmp_path, db):
    ids = _noisy_world(tmp_path, db)
    rep = report((), db, compare=True)
    seq_ids = [r.run_id for r in rep.runs if r.metric == "seq@k"]
    first: dict = {}
    for block in rep.equal_budget:
        first.setdefault(block.seq_run_id, block)
    found = verdicts(db)
    assert sorted(found) == sorted(seq_ids) == sorted(ids[n] for n in ("hint", "binary", "none"))
    figures = {r.run_id: r for r in rep.runs}
    for run_id in seq_ids:
        v, r = found[run_id], figures[run_id]
        # every figure the report prints, q-values included (over every seq@k run, as the report's)
        assert (v.k, v.pass_run_id, v.lift, v.framing, v.framing_vs, v.framing_chen, v.shows_grading_info) == (
            r.k, r.pass_run_id, r.lift, r.framing, r.framing_vs, r.framing_chen, r.shows_grading_info)
        assert v.equal_budget == first[run_id]
    # the world is no trivial one: intervals drawn, errors censoring, a partner that stops too first
    hint = found[ids["hint"]]
    assert hint.lift.difference.low is not None and hint.lift.difference.n > 30 and hint.lift.q_value is not None
    assert figures[ids["hint"]].n_error_attempts > 0
    assert hint.equal_budget.partner == "none_feedback"
    assert any(p.difference is not None for v in found.values() for p in v.equal_budget.points)
    assert found[ids["none"]].equal_budget.partner == "resample_until_success"
    # one run's verdict alone (a run page's) has the same figures; its q-values are those of the
    # report over that run, the family it was computed in
    for run_id in seq_ids:
        (alone,) = verdicts(db, [run_id]).values()
        assert _without_q(alone) == _without_q(found[run_id])
        (same,) = [r for r in report([run_id], db, compare=True).runs if r.run_id == run_id]
        assert (alone.lift.q_value, alone.framing.q_value) == (same.lift.q_value, same.framing.q_value)
