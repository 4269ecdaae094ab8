"""The run list's studies: each sequential study's confidence sequence against the tasks in it,
as inline SVG drawn server-side (no script, no CDN), beside its decision, tasks and spend."""

from __future__ import annotations

from html import escape
from typing import Any

WORDS = {"seq_better": "seq better", "partner_better": "partner better",
         "no_practical_difference": "no practical difference", "undecided": "undecided"}


def study_chart(study: Any, *, width: int = 520, height: int = 240) -> str:
    """An SVG chart of the sequence's band [low, high] against the tasks in it (a step at each
    look), its estimate as a line, 0 as a solid rule and ±margin dashed; each look's tooltip
    gives its tasks, estimate and ends."""
    looks = [look for look in study.looks if look.n_tasks]
    left, right, top, bottom = 44, 20, 26, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    top_n = max(study.n_available, max((look.n_tasks for look in looks), default=1))

    def x(n: float) -> float:
        return left + plot_w * n / top_n

    def y(v: float) -> float:
        return top + plot_h * (1 - v) / 2  # the difference runs from -1 (bottom) to 1 (top)

    title = f"study {study.study_id}: seq − partner, {100 * (1 - study.alpha):g}% confidence sequence"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="study-chart" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}">',
             f'<text x="{left}" y="16" class="chart-title">{escape(title)}</text>']
    for v in (-1.0, -0.5, 0.0, 0.5, 1.0):
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     f'class="{"zero" if v == 0 else "grid"}"/><text x="{left - 6}" y="{y(v) + 4:.1f}" '
                     f'text-anchor="end" class="tick">{"0" if v == 0 else f"{v:+g}"}</text>')
    for share in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{x(top_n * share):.1f}" y="{top + plot_h + 16}" text-anchor="middle" '
                     f'class="tick">{round(top_n * share)}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle" class="tick">'
                 f'tasks in the sequence (of {study.n_available})</text>')
    if study.margin:
        for v in (-study.margin, study.margin):
            parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="margin"/>')
    if looks:
        steps = [(0, -1.0, 1.0)] + [(look.n_tasks, look.low, look.high) for look in looks]
        upper, lower = [], []
        for (n, low, high), (n_next, _, _) in zip(steps, steps[1:] + [(looks[-1].n_tasks, 0, 0)], strict=True):
            upper += [f"{x(n):.1f},{y(high):.1f}", f"{x(n_next):.1f},{y(high):.1f}"]
            lower += [f"{x(n):.1f},{y(low):.1f}", f"{x(n_next):.1f},{y(low):.1f}"]
        parts.append(f'<polygon points="{" ".join(upper + lower[::-1])}" class="band"/>')
        line = " ".join(f"{x(look.n_tasks):.1f},{y(look.estimate or 0):.1f}" for look in looks)
        parts.append(f'<polyline points="{line}" class="estimate"/>')
        for look in looks:
            tip = (f"{look.n_tasks} tasks: {look.estimate or 0:+.3f}, sequence [{look.low:+.3f}, {look.high:+.3f}]"
                   f" ({WORDS.get(look.decision, look.decision)})")
            parts.append(f'<circle cx="{x(look.n_tasks):.1f}" cy="{y(look.estimate or 0):.1f}" r="3" '
                         f'class="look"><title>{escape(tip)}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)
