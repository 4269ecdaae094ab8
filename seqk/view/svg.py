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


Y_TITLE = "success (share of tasks)"
"""The y axis's title on every chart: each plots success on 0–1."""


@dataclass(frozen=True)
class _Frame:
    """What both charts share: the plot area, a 0–1 y axis with its grid, the x axis's ticks
    and label, and a legend on the right, one entry per line."""

    width: int
    height: int
    left: int = 44
    right: int = 150
    top: int = 26
    bottom: int = 34

    @property
    def plot_w(self) -> int:
        return self.width - self.left - self.right

    @property
    def plot_h(self) -> int:
        return self.height - self.top - self.bottom

    def y(self, v: float) -> float:
        return self.top + self.plot_h * (1 - v)

    def open(self, css_class: str, title: str, x_ticks: list[tuple[float, str]], x_label: str) -> list[str]:
        """The <svg> element's opening, its title, the grid and both axes; `x_ticks` holds
        (x position, text) pairs."""
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" '
                 f'viewBox="0 0 {self.width} {self.height}" width="{self.width}" height="{self.height}" '
                 f'role="img" aria-label="{escape(title)}">',
                 f'<text x="{self.left}" y="16" class="chart-title">{escape(title)}</text>']
        for v in (0.0, 0.25, 0.5, 0.75, 1.0):
            parts.append(f'<line x1="{self.left}" x2="{self.left + self.plot_w}" y1="{self.y(v):.1f}" '
                         f'y2="{self.y(v):.1f}" class="grid"/><text x="{self.left - 6}" y="{self.y(v) + 4:.1f}" '
                         f'text-anchor="end" class="tick">{v:g}</text>')
        for at, text in x_ticks:
            parts.append(f'<text x="{at:.1f}" y="{self.top + self.plot_h + 16}" text-anchor="middle" '
                         f'class="tick">{escape(text)}</text>')
        parts.append(f'<text x="{self.left + self.plot_w / 2:.1f}" y="{self.height - 4}" text-anchor="middle" '
                     f'class="tick axis-title">{escape(x_label)}</text>')
        middle = self.top + self.plot_h / 2
        parts.append(f'<text x="10" y="{middle:.1f}" transform="rotate(-90 10 {middle:.1f})" text-anchor="middle" '
                     f'class="tick axis-title">{escape(Y_TITLE)}</text>')
        return parts

    def legend(self, n: int, color: str, dash: str, label: str) -> str:
        """The legend's n-th entry (from 0): a stroke of the line's style and its label."""
        ly, lx = self.top + 12 + 18 * n, self.left + self.plot_w
        return (f'<line x1="{lx + 10}" x2="{lx + 28}" y1="{ly - 4}" y2="{ly - 4}" stroke="{color}" '
                f'stroke-width="2"{dash}/><text x="{lx + 32}" y="{ly}" class="legend">{escape(label)}</text>')


def curve_chart(series: list[Series], *, title: str, width: int = 520, height: int = 260) -> str:
    """An SVG line chart of metric@t for t = 1..K, each line with its interval band; every
    point's tooltip gives the value, the interval and the number of tasks."""
    k = max((p.t for s in series for p in s.points), default=1)
    frame = _Frame(width, height)
    y = frame.y

    def x(t: float) -> float:
        return frame.left + (frame.plot_w * (t - 1) / (k - 1) if k > 1 else frame.plot_w / 2)

    parts = frame.open("chart", title, [(x(t), str(t)) for t in range(1, k + 1, max(1, round(k / 10)))],
                       "attempts or samples t")
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
        parts.append(frame.legend(n, s.color, dash, s.label))
    parts.append("</svg>")
    return "".join(parts)


def _spend(value: float, unit: str, digits: int = 4) -> str:
    return f"${value:.{digits}g}" if unit == "US$" else f"{value:,.0f} tokens"


def budget_chart(chart: BudgetChart, *, width: int = 520, height: int = 260) -> str:
    """An SVG chart of success against expected spend per task: the partner resampling until
    success (its Pareto cells), and each depth of the seq@k frontier; every point's tooltip gives
    its cell, value, spend and tasks."""
    top_x = max((p.spend for line in chart.lines for p in line.points), default=1.0) or 1.0
    frame = _Frame(width, height)
    y = frame.y
    # the run id's last slot is its feedback mode: what tells a group's charts apart
    title = f"at equal spend: seq@k ({chart.seq_run_id.rsplit('/', 1)[-1]}) against pass@{chart.pass_k}"

    def x(v: float) -> float:
        return frame.left + frame.plot_w * v / top_x

    parts = frame.open("budget-chart", title,
                       [(x(top_x * share), _spend(top_x * share, chart.unit, 3)) for share in (0.0, 0.5, 1.0)],
                       f"expected spend per task ({chart.unit})")
    n_seq = 0
    for n, line in enumerate(chart.lines):
        color = PASS_COLOR if line.is_pass else COLORS[n_seq % len(COLORS)]
        n_seq += 0 if line.is_pass else 1
        dash = ' stroke-dasharray="5 4"' if line.is_pass else ""
        path = " ".join(f"{x(p.spend):.1f},{y(p.value):.1f}" for p in line.points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for p in line.points:
            chains = f"{p.width} chain{'s' if p.width > 1 else ''}"
            cell = (f"pass@{p.width}" if line.is_pass and p.depth == 1 else
                    f"{chains} of at most {p.depth} samples, each stopping at its first success"
                    if line.is_pass else f"{chains} of depth {p.depth}")
            tip = f"{cell} = {_fmt(p.value)} over {p.n_tasks} tasks, {_spend(p.spend, chart.unit)} per task"
            parts.append(f'<circle cx="{x(p.spend):.1f}" cy="{y(p.value):.1f}" r="3" fill="{color}">'
                         f'<title>{escape(tip)}</title></circle>')
        parts.append(frame.legend(n, color, dash, line.label))
    parts.append("</svg>")
    return "".join(parts)
