"""The report's study chart (altair): each study's confidence sequence against the tasks in it,
with 0 and the margin's ends marked, so a reader sees where it excluded 0 (or fell inside the
margin). Imported by seqk.render.charts only, for --html / --png."""

from __future__ import annotations

from typing import Any

import altair as alt


def study_rows(studies: list[Any]) -> list[dict[str, Any]]:
    """One row per look with tasks: study, tasks in the sequence, its ends, estimate and margin."""
    return [{"study": f"{s.study_id} · {s.question}", "n_tasks": look.n_tasks, "low": look.low,
             "high": look.high, "estimate": look.estimate, "decision": look.decision,
             "margin": s.margin, "minus_margin": -s.margin}
            for s in studies for look in s.looks if look.n_tasks]


def study_charts(studies: list[Any]) -> list[alt.FacetChart]:
    """The sequences against tasks done, one panel per study (none when there is no study)."""
    rows = study_rows(studies)
    if not rows:
        return []
    base = alt.Chart().encode(x=alt.X("n_tasks:Q", title="tasks in the sequence"))
    band = base.mark_area(opacity=0.3, interpolate="step-after").encode(
        y=alt.Y("low:Q", title="seq − partner", scale=alt.Scale(domain=[-1, 1])), y2="high:Q",
        tooltip=["study:N", "n_tasks:Q", alt.Tooltip("low:Q", format="+.3f"),
                 alt.Tooltip("high:Q", format="+.3f"), "decision:N"])
    point = base.mark_line(point=True, interpolate="step-after").encode(y="estimate:Q")
    zero = base.mark_rule(color="black").encode(y=alt.datum(0))
    layers = [band, point, zero]
    if any(s.margin for s in studies):
        layers += [base.mark_rule(strokeDash=[4, 4], color="gray").encode(y=f"{field}:Q")
                   for field in ("margin", "minus_margin")]
    return [alt.layer(*layers, data=alt.Data(values=rows)).properties(width=500, height=220).facet(
        column=alt.Column("study:N", title="study")).properties(
        title="Sequential studies: the anytime-valid confidence sequence against tasks done")]
