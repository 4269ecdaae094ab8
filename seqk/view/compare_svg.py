"""The compare page's two charts as inline SVG: both runs' metric@t curves on one chart, and both
runs' frontiers (success against expected spend per task) on another, every axis titled (svg._Frame)."""

from __future__ import annotations

from html import escape

from seqk.analysis import metrics
from seqk.view.compare import ComparePage
from seqk.view.pages import CurvePoint
from seqk.view.svg import COLORS, Series, _Frame, curve_chart

RUN_COLORS = (COLORS[1], COLORS[0])
"""Run a in blue, run b in red, on both charts."""
_DASHES = ("", ' stroke-dasharray="6 3"', ' stroke-dasharray="2 3"', ' stroke-dasharray="8 3 2 3"')
Y_TITLE = "success (share of tasks)"


def _y_title(svg: str, frame: _Frame, text: str = Y_TITLE) -> str:
    """The chart with its y axis titled (rotated, left of the ticks)."""
    middle = frame.top + frame.plot_h / 2
    title = (f'<text x="10" y="{middle:.1f}" transform="rotate(-90 10 {middle:.1f})" text-anchor="middle" '
             f'class="tick axis-title">{escape(text)}</text>')
    return svg.replace("</svg>", title + "</svg>")


def _points(curve: list[metrics.CurvePoint]) -> list[CurvePoint]:
    return [CurvePoint(p.t, p.n_tasks, p.value, p.low, p.high, p.n_left_out) for p in curve]


def curves_chart(page: ComparePage, *, width: int = 560, height: int = 280) -> str:
    """metric@t of both runs with their 95% Wilson bands (each over its own tasks counted at t)."""
    c = page.comparison
    series = [Series(f"{name}: {side.run.metric[:-2]}@t", _points(side.run.curve), color,
                     dashed=side.run.metric == "pass@k")
              for name, side, color in (("a", c.a, RUN_COLORS[0]), ("b", c.b, RUN_COLORS[1]))]
    return curve_chart(series, title="metric@t of both runs, 95% intervals", width=width, height=height)


def _spend(value: float, unit: str) -> str:
    return f"${value:.3g}" if unit == "US$" else f"{value:,.0f}"


def frontiers_chart(page: ComparePage, *, width: int = 560, height: int = 280) -> str | None:
    """Success against expected spend per task for every frontier cell of both runs (a pass@k run:
    pass@m; a seq@k run: one line per depth across its widths); None when they share no spend axis."""
    if page.unit is None or not any(f.lines for f in page.frontiers):
        return None
    unit = page.unit
    top_x = max((p.spend for f in page.frontiers for line in f.lines for p in line.points), default=1.0) or 1.0
    frame = _Frame(width, height, right=170)
    y = frame.y

    def x(v: float) -> float:
        return frame.left + frame.plot_w * v / top_x

    parts = frame.open("budget-chart compare-frontiers", "frontiers of both runs at their spend",
                       [(x(top_x * share), _spend(top_x * share, unit)) for share in (0.0, 0.5, 1.0)],
                       f"expected spend per task ({unit})")
    n = 0
    for name, frontier, color in zip(("a", "b"), page.frontiers, RUN_COLORS, strict=True):
        for i, line in enumerate(frontier.lines):
            dash = _DASHES[i % len(_DASHES)]
            path = " ".join(f"{x(p.spend):.1f},{y(p.value):.1f}" for p in line.points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
            for p in line.points:
                cell = f"pass@{p.width}" if line.is_pass else f"{p.width} chain(s) × depth {p.depth}"
                tip = f"{name}: {cell} = {p.value:.3f} over {p.n_tasks} tasks, {_spend(p.spend, unit)} per task"
                parts.append(f'<circle cx="{x(p.spend):.1f}" cy="{y(p.value):.1f}" r="3" fill="{color}">'
                             f"<title>{escape(tip)}</title></circle>")
            parts.append(frame.legend(n, color, dash, f"{name}: {line.label}"))
            n += 1
    parts.append("</svg>")
    return "".join(parts)
