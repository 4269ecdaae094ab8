"""The compare pages as HTML (templates compare.html, compare_task.html; the run list's picker is
compare_picker.html), in the environment and with the links of seqk/view/render.py."""

from __future__ import annotations

from seqk.analysis.compare_budget import summary
from seqk.analysis.formats import fmt_number, fmt_p, fmt_spend
from seqk.view.compare import FLIP_FILTERS, ComparePage, CompareTaskPage
from seqk.view.compare_svg import curves_chart, frontiers_chart
from seqk.view.render import Urls, environment


def _signed(value: float | None) -> str:
    return fmt_number(value, signed=True, digits=3)


def _p(value: float | None) -> str:
    return "—" if value is None else fmt_p(value)


def render_compare(page: ComparePage, urls: Urls, note: str | None = None) -> str:
    """`/compare/<a>/<b>`."""
    return environment().get_template("compare.html").render(
        page=page, urls=urls, note=note, curves=curves_chart(page), frontiers=frontiers_chart(page),
        signed=_signed, pvalue=_p, FLIP_FILTERS=FLIP_FILTERS, spend=fmt_spend,
        budget_summary=summary(page.comparison.equal_budget), title=f"compare · {page.a} · {page.b}")


def render_compare_task(page: CompareTaskPage, urls: Urls) -> str:
    """`/compare/<a>/<b>/tasks/<n>`."""
    a, b = page.runs
    return environment().get_template("compare_task.html").render(
        page=page, a=a, b=b, urls=urls, title=f"task {page.task_index} · {a['run_id']} · {b['run_id']}")
