"""The seq@t vs pass@t chart and the equal-budget chart as inline SVG, drawn server-side: no script, no CDN, and it
prints and opens from file:// like the rest of the page."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from seqk.view.budget import BudgetChart
from seqk.view.pages import CurvePoint

COLORS = ("#d1495b", "#2e86ab", "#edae49", "#66a182", "#8e6c8a", "#00798c", "#b56576")
PASS_COLOR = "#555555"


@dataclass(frozen=True)
class Series:
    """One line: a run's metric@t with its 95% interval as a band."""

    label: str
    points: list[CurvePoint]
    color: str
    dashed: bool = False


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def curve_chart(series: list[Series], *, title: str, width: int = 520, height: int = 260) -> str:
    """An SVG line chart of metric@t for t = 1..K, each line with its interval band; every
    point's tooltip gives the value, the interval and the number of tasks."""
    k = max((p.t for s in series for p in s.points), default=1)
    left, right, top, bottom = 44, 150, 26, 34
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(t: float) -> float:
        return left + (plot_w * (t - 1) / (k - 1) if k > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h * (1 - v)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}">',
             f'<text x="{left}" y="16" class="chart-title">{escape(title)}</text>']
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>'
                     f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end" class="tick">{v:g}</text>')
    step = max(1, round(k / 10))
    for t in range(1, k + 1, step):
        parts.append(f'<text x="{x(t):.1f}" y="{top + plot_h + 16}" text-anchor="middle" class="tick">{t}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle" class="tick">'
                 f'attempts or samples t</text>')
    for n, s in enumerate(series):
        pts = [p for p in s.points if p.value is not None]
        band = [p for p in pts if p.low is not None and p.high is not None]
        if len(band) > 1:
            outline = [f"{x(p.t):.1f},{y(p.high or 0):.1f}" for p in band]
            outline += [f"{x(p.t):.1f},{y(p.low or 0):.1f}" for p in reversed(band)]
            parts.append(f'<polygon points="{" ".join(outline)}" fill="{s.color}" fill-opacity="0.15"/>')
        line = " ".join(f"{x(p.t):.1f},{y(p.value or 0):.1f}" for p in pts)
        dash = ' stroke-dasharray="5 4"' if s.dashed else ""
        parts.append(f'<polyline points="{line}" fill="none" stroke="{s.color}" stroke-width="2"{dash}/>')
        for p in pts:
            tip = (f"{s.label} @{p.t} = {_fmt(p.value)} (95% CI {_fmt(p.low)}–{_fmt(p.high)}, "
                   f"{p.n_tasks} tasks)")
            parts.append(f'<circle cx="{x(p.t):.1f}" cy="{y(p.value or 0):.1f}" r="3" fill="{s.color}">'
                         f'<title>{escape(tip)}</title></circle>')
        ly = top + 12 + 18 * n
        parts.append(f'<line x1="{left + plot_w + 10}" x2="{left + plot_w + 28}" y1="{ly - 4}" y2="{ly - 4}" '
                     f'stroke="{s.color}" stroke-width="2"{dash}/>'
                     f'<text x="{left + plot_w + 32}" y="{ly}" class="legend">{escape(s.label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _spend(value: float, unit: str, digits: int = 4) -> str:
    return f"${value:.{digits}g}" if unit == "US$" else f"{value:,.0f} tokens"


def budget_chart(chart: BudgetChart, *, width: int = 520, height: int = 260) -> str:
    """An SVG chart of success against expected spend per task: pass@m for m = 1..n, and each
    depth of the seq@k frontier; every point's tooltip gives its cell, value, spend and tasks."""
    top_x = max((p.spend for line in chart.lines for p in line.points), default=1.0) or 1.0
    left, right, top, bottom = 44, 150, 26, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    # the run id's last slot is its feedback mode: what tells a group's charts apart
    title = f"at equal spend: seq@k ({chart.seq_run_id.rsplit('/', 1)[-1]}) against pass@{chart.pass_k}"

    def x(v: float) -> float:
        return left + plot_w * v / top_x

    def y(v: float) -> float:
        return top + plot_h * (1 - v)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="budget-chart" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}">',
             f'<text x="{left}" y="16" class="chart-title">{escape(title)}</text>']
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>'
                     f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end" class="tick">{v:g}</text>')
    for share in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{x(top_x * share):.1f}" y="{top + plot_h + 16}" text-anchor="middle" '
                     f'class="tick">{escape(_spend(top_x * share, chart.unit, 3))}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle" class="tick">'
                 f'expected spend per task ({chart.unit})</text>')
    n_seq = 0
    for n, line in enumerate(chart.lines):
        color = PASS_COLOR if line.is_pass else COLORS[n_seq % len(COLORS)]
        n_seq += 0 if line.is_pass else 1
        dash = ' stroke-dasharray="5 4"' if line.is_pass else ""
        path = " ".join(f"{x(p.spend):.1f},{y(p.value):.1f}" for p in line.points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for p in line.points:
            chains = f"{p.width} chain{'s' if p.width > 1 else ''}"
            cell = f"pass@{p.width}" if line.is_pass else f"{chains} of depth {p.depth}"
            tip = f"{cell} = {_fmt(p.value)} over {p.n_tasks} tasks, {_spend(p.spend, chart.unit)} per task"
            parts.append(f'<circle cx="{x(p.spend):.1f}" cy="{y(p.value):.1f}" r="3" fill="{color}">'
                         f'<title>{escape(tip)}</title></circle>')
        ly = top + 12 + 18 * n
        parts.append(f'<line x1="{left + plot_w + 10}" x2="{left + plot_w + 28}" y1="{ly - 4}" y2="{ly - 4}" '
                     f'stroke="{color}" stroke-width="2"{dash}/>'
                     f'<text x="{left + plot_w + 32}" y="{ly}" class="legend">{escape(line.label)}</text>')
    parts.append("</svg>")
    return "".join(parts)
