"""The report's charts, read from their Vega-Lite spec: integer t ticks, a legend in the
lines' colours, the page's width used, and a lift axis padded around zero."""

from __future__ import annotations

from typing import Any

import pytest

from seqk.analysis import report as reports
from seqk.render import charts


@pytest.fixture
def rep(mock_db) -> reports.Report:
    return reports.report(compare=True, db=mock_db)


def layers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return spec["spec"]["layer"] if "spec" in spec else spec["layer"]


def mark(layer: dict[str, Any]) -> str:
    return layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]


def test_t_axis_has_horizontal_integer_ticks(rep):
    for chart in (charts.curves_chart(rep),):
        for layer in layers(chart.to_dict()):
            x = layer["encoding"]["x"]
            assert x["type"] == "quantitative"
            assert x["axis"] == {"labelAngle": 0, "tickMinStep": 1, "format": "d",
                                 "values": [1, 2, 3]}


def test_legend_shows_the_line_colours_not_the_bands(rep):
    spec = charts.curves_chart(rep).to_dict()["spec"]
    by_mark = {mark(layer): layer["encoding"] for layer in spec["layer"]}
    band, line = by_mark["area"], by_mark["line"]
    assert "color" not in band and band["fill"]["legend"] is None  # the pale bands: no legend
    assert "legend" not in line["color"] and line["color"]["title"] == "metric · feedback"
    # Same field, default scheme, same domain: each band has its line's colour.
    assert band["fill"]["field"] == line["color"]["field"] == "series"
    assert "scale" not in band["fill"] and "scale" not in line["color"]


def test_charts_use_the_page_width(rep):
    models = {r.actor_model for r in rep.runs}
    assert len(models) == 2
    for chart in (charts.curves_chart(rep), charts.cost_chart(rep)):
        panel = chart.to_dict()["spec"]["width"]
        assert 1000 <= panel * len(models) + charts._PANEL_GAP * len(models) <= 1300
    # The lift plot takes what its row labels and legend leave of the page.
    assert charts.lift_chart(rep).to_dict()["width"] == charts.lift_width(charts.lift_rows(rep)) >= 800


def test_lift_axis_is_padded_around_zero(rep):
    rows = charts.lift_rows(rep)
    spec = charts.lift_chart(rep).to_dict()
    rule = next(layer for layer in spec["layer"] if layer["encoding"]["x"].get("field") == "low")
    low, high = rule["encoding"]["x"]["scale"]["domain"]
    assert rule["encoding"]["x"]["scale"]["nice"] is False
    smallest = min(0.0, *(r["low"] for r in rows))
    largest = max(0.0, *(r["high"] for r in rows))
    assert low < smallest and high > largest  # neither zero nor an interval end on the border
    assert low < 0 < high


def test_zero_lift_alone_still_leaves_room(rep):
    flat = reports.Report(runs=[r for r in rep.runs if r.actor_model == "mock/beta"],
                          errors_as_failures=False, seed=1, n_boot=10)
    rule = next(layer for layer in charts.lift_chart(flat).to_dict()["layer"]
                if layer["encoding"]["x"].get("field") == "low")
    low, high = rule["encoding"]["x"]["scale"]["domain"]
    assert low < -0.3 and high > 0.3  # beta's lift is 0 with an interval of about ±0.36


def two_benchmarks(rep: reports.Report, long_names: bool = False) -> reports.Report:
    """The mock report with beta's runs moved to a second benchmark (and, with long_names,
    the model and critic names a real lab uses)."""
    for run in rep.runs:
        if run.actor_model == "mock/beta":
            run.slice = "humaneval-plus-full"
        if long_names:
            run.actor_model = run.actor_model.replace("mock", "anthropic/claude-sonnet-4-6")
            run.critic_model = "anthropic/claude-opus-4-1"
    return rep


def test_lift_rows_are_labelled_and_coloured_by_benchmark(rep):
    spec = charts.lift_chart(two_benchmarks(rep)).to_dict()
    for layer in spec["layer"][:2]:
        assert layer["encoding"]["y"]["field"] == "label"
        assert layer["encoding"]["y"]["title"] == "benchmark · actor model · feedback mode"
        assert layer["encoding"]["color"] == {"field": "benchmark", "title": "benchmark", "type": "nominal"}
    labels = {row["label"] for row in charts.lift_rows(rep)}
    assert labels == {"toy-plain · mock/alpha · binary", "humaneval-plus-full · mock/beta · binary"}


def svg_width(chart: Any) -> float:
    import re

    import vl_convert

    return float(re.search(r'width="([\d.]+)"', vl_convert.vegalite_to_svg(chart.to_dict())).group(1))


@pytest.mark.slow  # vl-convert renders both charts to SVG (~3 s of CPU each)
@pytest.mark.parametrize("long_names", [False, True])
def test_the_charts_fit_the_html_page_labels_and_legend_included(rep, tmp_path, long_names):
    rep = two_benchmarks(rep, long_names)
    room = charts.PAGE_MAX_WIDTH - 2 * 24  # the body's 1.5em margins
    assert svg_width(charts.lift_chart(rep)) <= room
    assert svg_width(charts.report_chart(rep)) <= room
    charts.save_html(rep, tmp_path / "r.html")
    assert f"max-width:{charts.PAGE_MAX_WIDTH}px" in (tmp_path / "r.html").read_text()


def test_spend_chart_has_an_x_axis_per_benchmark_panel(rep):
    spec = charts.cost_chart(two_benchmarks(rep)).to_dict()
    assert spec["facet"]["row"]["field"] == "benchmark"
    assert spec["resolve"] == {"scale": {"x": "independent"}}
