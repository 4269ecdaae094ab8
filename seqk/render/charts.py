"""The report's charts (altair), written as one self-contained HTML page or a PNG.

Three charts, stacked:
1. seq@t and pass@t against t with their 95% intervals (Wilson; a task bootstrap where chains are
   censored), one panel per actor model;
2. the feedback lift seq@K - pass@K per benchmark, model and feedback mode (one labelled
   row each, coloured by benchmark), with its 95% interval (for 0/1 outcomes the interval of
   `stats.paired_difference`, its p in the tooltip), sized so labels and legend fit the page;
3. success against mean spend per task (USD, or tokens when no call was priced), so
   pass@k and seq@k compare at equal spend; each panel has its own spend axis, so a cheap
   benchmark is not squashed against an expensive one.
with `--compare` and a seq@k run with a budget partner (seqk.analysis.frontier), two more:
4. value against expected spend per task for pass@1..n and each depth of the seq@k frontier
   (widths along each line);
5. a heat map over (width, depth) of the frontier's value divided by pass@k's at the same
   spend (Olausson et al., ICLR 2024).
and for each sequential study with an arm among the runs, its confidence sequence against the
tasks in it (seqk.render.study_chart).

altair is imported here only, so `seqk report` without --html/--png never pays for it.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import altair as alt

from seqk.analysis.report import Report, cells, fmt_p
from seqk.render.study_chart import study_charts

_PAGE_WIDTH = 1200
"""Plot width a chart fills (the page's 1400 px less its margins and axis labels)."""
PAGE_MAX_WIDTH = 1400
"""The HTML page's max width (px); every chart, labels and legend included, fits inside it."""
_LABEL_PX = 6.5
"""Width of one character of an axis or legend label (Vega's 10 px sans-serif, rounded up)."""
_MIN_PANEL_WIDTH = 260
_PANEL_GAP = 90
"""Room a facet panel needs beside its plot: axis labels and the space between panels."""
_PAD = 0.05
"""Share of the lift axis left free at each end, so that no mark or the zero line sits on
the border."""


def _panel_width(rows: list[dict[str, Any]]) -> int:
    """Width of one facet panel: the models' panels share the page's width."""
    n_models = len({r["model"] for r in rows}) or 1
    return max(_MIN_PANEL_WIDTH, _PAGE_WIDTH // n_models - _PANEL_GAP)


def _series(run: Any) -> str:
    return "pass@k" if run.metric == "pass@k" else f"seq@k · {run.feedback_label}"


def curve_rows(rep: Report) -> list[dict[str, Any]]:
    """One record per (run, t): what charts 1 and 3 plot."""
    return [{"run_id": r.run_id, "benchmark": r.slice, "model": r.actor_model,
             "series": _series(r), "metric": r.metric, "t": p.t, "value": p.value,
             "low": p.low, "high": p.high, "n_tasks": p.n_tasks, "soft_score": p.soft_score,
             "cost_usd": p.cost_usd_per_task, "tokens": p.tokens_per_task}
            for r in rep.runs for p in r.curve if p.value is not None]


def lift_rows(rep: Report) -> list[dict[str, Any]]:
    """One record per seq@k run with a pass@k partner: what chart 2 plots."""
    return [{"run_id": r.run_id, "benchmark": r.slice, "model": r.actor_model,
             "feedback": r.feedback_label, "label": f"{r.slice} · {r.actor_model} · {r.feedback_label}",
             "lift": r.lift.difference.value,
             "low": r.lift.difference.low, "high": r.lift.difference.high,
             "n_shared": r.lift.difference.n, "p_value": r.lift.p_value,
             # Formatted here, as the report prints it: never rounded across 0.05.
             "p": fmt_p(r.lift.p_value) if r.lift.p_value is not None else "—",
             "pass_run_id": r.lift.b_run_id}
            for r in rep.runs if r.lift is not None and r.lift.difference.value is not None]


def _empty(message: str) -> alt.Chart:
    return alt.Chart(alt.Data(values=[{"text": message}])).mark_text(
        align="left", fontSize=13).encode(text="text:N").properties(width=_PAGE_WIDTH, height=40)


def curves_chart(rep: Report) -> alt.Chart | alt.FacetChart:
    """seq@t and pass@t with Wilson bands, one panel per model (rows: benchmark slices)."""
    rows = curve_rows(rep)
    if not rows:
        return _empty("no metric@t to plot")
    t_max = max(r["t"] for r in rows)
    base = alt.Chart(alt.Data(values=rows)).encode(
        # t counts attempts: horizontal ticks at the integers only (vl-convert ignores
        # tickMinStep and labels 1.5 as "2"), hence the explicit values.
        x=alt.X("t:Q", title="t (attempts or samples)",
                axis=alt.Axis(labelAngle=0, tickMinStep=1, format="d",
                              values=list(range(1, t_max + 1))),
                scale=alt.Scale(domain=[1, max(t_max, 2)], nice=False)))
    # The legend belongs to the lines: the bands' pale fill would misname their colours. The
    # bands take the same colours through a fill scale of their own (same domain, same scheme),
    # which has no legend; a shared colour scale would merge the two legends into the pale one.
    band = base.mark_area(opacity=0.15).encode(
        y=alt.Y("low:Q", title="success rate", scale=alt.Scale(domain=[0, 1])), y2="high:Q",
        fill=alt.Fill("series:N", legend=None))
    line = base.mark_line(point=True).encode(
        y="value:Q", color=alt.Color("series:N", title="metric · feedback"),
        tooltip=["run_id:N", "t:O", alt.Tooltip("value:Q", format=".3f"),
                 alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f"),
                 "n_tasks:Q", alt.Tooltip("soft_score:Q", format=".3f")])
    return alt.layer(band, line).properties(
        width=_panel_width(rows), height=220).facet(
        column=alt.Column("model:N", title="actor model"),
        row=alt.Row("benchmark:N", title=None),
    ).properties(title="seq@t and pass@t on success, 95% intervals (Wilson; bootstrap where censored)")


def lift_width(rows: list[dict[str, Any]]) -> int:
    """The lift plot's width: the page's plot width less the room its row labels and its
    legend take, so that the whole chart stays inside the page."""
    labels = max(len(r["label"]) for r in rows) * _LABEL_PX + 40
    legend = max(len("benchmark"), *(len(r["benchmark"]) for r in rows)) * _LABEL_PX + 50
    return max(_MIN_PANEL_WIDTH, int(_PAGE_WIDTH - labels - legend))


def lift_chart(rep: Report) -> alt.Chart | alt.LayerChart | alt.FacetChart:
    """seq@K - pass@K per benchmark, model and feedback mode, with its 95% interval."""
    rows = lift_rows(rep)
    if not rows:
        return _empty("no seq@k run has a pass@k run to compare with: no lift")
    low = min(0.0, *(r["low"] if r["low"] is not None else r["lift"] for r in rows))
    high = max(0.0, *(r["high"] if r["high"] is not None else r["lift"] for r in rows))
    pad = max(_PAD * (high - low), 0.02)
    base = alt.Chart(alt.Data(values=rows)).encode(
        # One row per lift, named in full: a lift means nothing without its benchmark.
        y=alt.Y("label:N", title="benchmark · actor model · feedback mode",
                axis=alt.Axis(labelLimit=0)),
        color=alt.Color("benchmark:N", title="benchmark"))
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title="lift = seq@K − pass@K (shared tasks)",
                scale=alt.Scale(domain=[low - pad, high + pad], nice=False)), x2="high:Q")
    points = base.mark_point(filled=True, size=60).encode(
        x="lift:Q",
        tooltip=["benchmark:N", "run_id:N", "pass_run_id:N", alt.Tooltip("lift:Q", format="+.3f"),
                 alt.Tooltip("low:Q", format="+.3f"), alt.Tooltip("high:Q", format="+.3f"),
                 "n_shared:Q", alt.Tooltip("p:N", title="p")])
    zero = alt.Chart(alt.Data(values=[{"x": 0}])).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    return alt.layer(bars, points, zero).properties(
        width=lift_width(rows), height=alt.Step(16),
        title="Feedback lift per benchmark, model and feedback mode, 95% interval "
              "(Tango score, corrected, for 0/1 outcomes)")


def cost_chart(rep: Report) -> alt.Chart | alt.FacetChart:
    """Success against mean spend per task up to t (USD, else tokens)."""
    rows = curve_rows(rep)
    if not rows:
        return _empty("no spend to plot")
    # a run unpriced or free ($0: a local model) would sit at 0 beside the others (issue 28.1)
    priced = all(r["cost_usd"] is not None and r["cost_usd"] > 0 for r in rows)
    field, title = ("cost_usd", "mean cost per task up to t (USD)") if priced else (
        "tokens", "mean tokens per task up to t (a run is unpriced or free)")
    return alt.Chart(alt.Data(values=rows)).mark_line(point=True).encode(
        x=alt.X(f"{field}:Q", title=title),
        y=alt.Y("value:Q", title="success rate", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("series:N", title="metric · feedback"),
        detail="run_id:N",
        tooltip=["run_id:N", "t:O", alt.Tooltip("value:Q", format=".3f"),
                 alt.Tooltip(f"{field}:Q", format=".4g")],
    ).properties(width=_panel_width(rows), height=220).facet(
        column=alt.Column("model:N", title="actor model"),
        row=alt.Row("benchmark:N", title=None),
    ).resolve_scale(x="independent").properties(
        title="Success against spend: pass@k and seq@k at equal cost (spend axis per panel)")


def frontier_charts(rep: Report) -> list[alt.Chart | alt.HConcatChart]:
    """Charts 4 and 5, side by side, for each seq@k run against its stopping-matched partner (the
    first block of each run: feedback none, else resample until success)."""
    charts: list[alt.Chart | alt.HConcatChart] = []
    shown: set[str] = set()
    for b in rep.equal_budget:
        if b.seq_run_id in shown:
            continue
        shown.add(b.seq_run_id)
        unit = "US$" if b.unit == "US$" else "tokens"
        # the partner's frontier: its cells no other beats on success at no more spend
        best = -1.0
        partner: list[dict[str, Any]] = []
        for c in sorted((c for c in b.cells if not c["series"].startswith("seq@k depth")),
                        key=lambda c: (c["spend"], -c["value"])):
            if c["value"] > best:
                partner.append(c | {"width": len(partner) + 1})  # drawn in order of spend
                best = c["value"]
        rows = [c | {"run": b.seq_run_id} for c in partner + [c for c in b.cells
                                                              if c["series"].startswith("seq@k depth")]]
        spend = alt.Chart(alt.Data(values=rows)).mark_line(point=True).encode(
            x=alt.X("spend:Q", title=f"expected spend per task ({unit})"),
            y=alt.Y("value:Q", title="success (w chains of depth d)", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("series:N", title="partner · seq@k depth"),
            order="width:Q",
            tooltip=["series:N", "width:Q", "depth:Q", alt.Tooltip("value:Q", format=".3f"),
                     alt.Tooltip("spend:Q", format=".4g")],
        ).properties(width=_PAGE_WIDTH // 2 - 2 * _PANEL_GAP, height=260,
                     title=f"{b.seq_run_id} vs {b.partner.replace('_', ' ')} at equal spend")
        cells_ = [r for r in rows if r["series"].startswith("seq@k depth") and r["relative"] is not None]
        if not cells_:  # no seq@k cell within the partner's spends: nothing to divide
            charts.append(spend)
            continue
        heat = alt.Chart(alt.Data(values=cells_)).mark_rect().encode(
            x=alt.X("width:O", title="width (chains)"),
            y=alt.Y("depth:O", title="depth (attempts per chain)", sort="descending"),
            color=alt.Color("relative:Q", title="÷ partner at equal spend",
                            scale=alt.Scale(scheme="redblue", domainMid=1.0)),
            tooltip=["width:Q", "depth:Q", alt.Tooltip("value:Q", format=".3f"),
                     alt.Tooltip("relative:Q", format=".3f"), alt.Tooltip("spend:Q", format=".4g")],
        )
        text = heat.mark_text(fontSize=12).encode(
            text=alt.Text("relative:Q", format=".2f"), color=alt.value("black"))
        charts.append(alt.hconcat(spend, (heat + text).properties(
            width=_PAGE_WIDTH // 2 - 2 * _PANEL_GAP, height=260,
            title="frontier ÷ the partner's at the same spend (blank: beyond its cells)")))
    return charts


def report_chart(rep: Report) -> alt.VConcatChart:
    """The three charts, stacked (and the frontier charts of each equal-budget comparison)."""
    # centered: left-aligned, the lift's long row labels would hang left of the panels above
    # and widen the page by their length.
    return alt.vconcat(curves_chart(rep), lift_chart(rep), cost_chart(rep), *frontier_charts(rep),
                       *study_charts(rep.studies), center=True).resolve_scale(color="independent")


def save_png(rep: Report, path: str | Path) -> None:
    """Render the charts to a PNG (vl-convert, offline)."""
    report_chart(rep).save(str(path), format="png", scale_factor=1.5)


def save_html(rep: Report, path: str | Path) -> None:
    """One self-contained page: the report table and notes, then the charts, with Vega
    inlined so it renders offline."""
    page = report_chart(rep).to_html(inline=True)
    columns, body = cells(rep)
    table = "<table><thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    table += "</tr></thead><tbody>" + "".join(
        "<tr>" + "".join(f"<td>{html.escape(c).replace(chr(10), '<br>')}</td>" for c in row)
        + "</tr>" for row in body) + "</tbody></table>"
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in rep.notes)
    header = (
        f"<style>body{{font-family:sans-serif;margin:1.5em;max-width:{PAGE_MAX_WIDTH}px}}"
        "table{border-collapse:collapse;"
        "font-size:12px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;"
        "vertical-align:top}</style>\n<h1>seqk report</h1>\n" + table + f"\n<ul>{notes}</ul>\n")
    # The inlined Vega code contains HTML snippets of its own; the chart's container is the
    # last element with id="vis".
    at = page.rfind('id="vis"')
    at = page.rfind("<div", 0, at)
    if at < 0:
        raise RuntimeError("altair's HTML template changed: no chart container found")
    Path(path).write_text(page[:at] + header + page[at:], encoding="utf-8")
