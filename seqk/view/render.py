"""Pages as HTML: the Jinja templates beside this module, the chart, and the links between
pages, which differ between the server (absolute paths) and the bundle (relative file names
that open from file://).

URLs: a run id's `/`-separated slots stay path segments, each percent-encoded, so
`/runs/<run_id>` and `/runs/<run_id>/tasks/<n>` are stable and reversible (`run_id_of`).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import quote, unquote, urlencode

import jinja2
from jinja2.bccache import Bucket

from seqk import cache as seqk_cache
from seqk.analysis.compare import view_path
from seqk.analysis.report import fmt_estimate, fmt_p
from seqk.view.compare import bundle_key
from seqk.view.pages import FILTERS, RunGroup, RunPage, RunsPage
from seqk.view.story import TaskPage
from seqk.view.studies import WORDS, study_chart
from seqk.view.svg import COLORS, PASS_COLOR, Series, budget_chart, curve_chart


def run_path(run_id: str) -> str:
    """The run id as URL path segments, each percent-encoded."""
    return "/".join(quote(segment, safe="") for segment in run_id.split("/"))


def run_id_of(path: str) -> str:
    """The inverse of run_path."""
    return "/".join(unquote(segment) for segment in path.split("/"))


@dataclass(frozen=True)
class Urls:
    """Links from one page. `here` is the page's file in the bundle (None: the server)."""

    here: str | None = None

    def _to(self, file: str) -> str:
        assert self.here is not None
        return "../" * self.here.count("/") + file

    def index(self) -> str:
        return "/" if self.here is None else self._to("index.html")

    def run(self, run_id: str, filter: str = "all", page: int = 1, search: str = "") -> str:
        if self.here is None:
            query = {k: v for k, v in (("filter", filter), ("page", page), ("q", search))
                     if v and v != "all" and v != 1}
            return f"/runs/{run_path(run_id)}" + (f"?{urlencode(query)}" if query else "")
        name = "index.html" if (filter, page) == ("all", 1) else f"{filter}-{page}.html"
        return self._to(f"runs/{run_path(run_id)}/{name}")

    def task(self, run_id: str, task_index: int) -> str:
        if self.here is None:
            return f"/runs/{run_path(run_id)}/tasks/{task_index}"
        return self._to(f"runs/{run_path(run_id)}/tasks/{task_index}.html")

    def static(self, name: str) -> str:
        return f"/static/{name}" if self.here is None else self._to(f"static/{name}")

    def has_run(self, run_id: str | None) -> bool:
        """Whether the run's page exists (a bundle holds only some runs)."""
        return run_id is not None

    def has_task(self, run_id: str | None, task_index: int) -> bool:
        """Whether the task's page exists (a bundle holds only some tasks)."""
        return run_id is not None

    def compare(self, run_a: str, run_b: str, filter: str = "flips", search: str = "") -> str:
        """Two runs' compare page (its flip list filtered and searched)."""
        if self.here is None:
            query = {k: v for k, v in (("filter", filter), ("q", search)) if v and v != "flips"}
            return view_path(run_a, run_b) + (f"?{urlencode(query)}" if query else "")
        return self._to(f"compare/{bundle_key(run_a, run_b)}/{'index' if filter == 'flips' else filter}.html")

    def compare_task(self, run_a: str, run_b: str, task_index: int) -> str:
        """One task's two stories side by side."""
        if self.here is None:
            return view_path(run_a, run_b, task_index)
        return self._to(f"compare/{bundle_key(run_a, run_b)}/tasks/{task_index}.html")

    def has_compare(self, run_a: str, run_b: str) -> bool:
        """Whether the two runs' compare page exists (a bundle holds only some pairs)."""
        return True

    def has_compare_task(self, run_a: str, run_b: str, task_index: int) -> bool:
        """Whether that side-by-side page exists (a bundle holds those of the flips it lists)."""
        return True

    @property
    def live(self) -> str | None:
        """The JSON endpoint a served page polls to refresh; a bundle is a snapshot."""
        return "/api/stamp" if self.here is None else None


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _usd(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:.4f}" if value < 100 else f"${value:,.2f}"


def _tokens(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def _spend(value: float | None, unit: str) -> str:
    """A spend per task in the equal-budget block's unit, as the report prints it."""
    if value is None:
        return "–"
    return f"${value:.4f}" if unit == "US$" else f"{value:,.0f} tokens"


def _pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _is_table(value: Any) -> bool:
    """A list of flat dicts: shown as a table (rubric items, grids' grades, verdicts)."""
    return (isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
            and all(not isinstance(x, dict | list) or _is_grid(x) for v in value for x in v.values()))


def _is_grid(value: Any) -> bool:
    return (isinstance(value, list) and bool(value) and all(
        isinstance(r, list) and r and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 9
                                          for c in r) for r in value))


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(key for row in rows for key in row))


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Each template compiled once per source, in seqk's cache folder (templates/): compiling the
    ten took 0.36 s, which each viewer's first pages paid (at 10 M attempts a fifth of the run list's
    first request, docs/performance.md). Jinja checks each file against its template's source and
    its own version, and writes it whole (a temporary file renamed); a folder that cannot be
    read or written only means templates are compiled."""

    def load_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):  # unreadable: compiled instead
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _compiled_templates() -> _CompiledTemplates | None:
    root = seqk_cache.folder()
    if root is None:
        return None
    try:
        (root / "templates").mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _CompiledTemplates(str(root / "templates"))


@cache
def environment() -> jinja2.Environment:
    """The templates, autoescaped, with the helpers they use."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("seqk.view", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, bytecode_cache=_compiled_templates())
    env.filters.update(num=_num, usd=_usd, tokens=_tokens, pretty_json=_pretty_json, spend=_spend, p=fmt_p,
                       estimate=lambda e, digits=2: fmt_estimate(e, digits=digits))
    env.tests.update(table=_is_table, grid=_is_grid, mapping_=lambda v: isinstance(v, dict),
                     sequence_=lambda v: isinstance(v, list))
    env.globals.update(FILTERS=FILTERS, columns=_columns)
    return env


def _series_of_group(group: RunGroup) -> list[Series]:
    series = [Series(f"seq@t {r.feedback_mode}", r.curve, COLORS[n % len(COLORS)])
              for n, r in enumerate(group.seq_runs)]
    if group.pass_run is not None:
        series.append(Series("pass@t", group.pass_run.curve, PASS_COLOR, dashed=True))
    return series


def render_runs(page: RunsPage, urls: Urls, note: str | None = None) -> str:
    """The run list, `/`."""
    charts = [curve_chart(_series_of_group(g), title=g.title)
              if g.pass_run is not None and g.seq_runs else None for g in page.groups]
    budgets = [[(r.run_id, budget_chart(page.budgets[r.run_id])) for r in g.seq_runs if r.run_id in page.budgets]
               for g in page.groups]
    studies = [(s, study_chart(s)) for s in page.studies]
    return environment().get_template("runs.html").render(
        page=page, urls=urls, charts=charts, budgets=budgets, studies=studies, WORDS=WORDS, note=note,
        title="seqk runs")


def render_run(page: RunPage, urls: Urls, note: str | None = None) -> str:
    """A run's page."""
    series = []
    for n, (run_id, summary) in enumerate(page.summaries.items()):
        metric = "seq@t" if run_id == page.seq_run_id else "pass@t"
        label = metric + (" (this run)" if run_id == page.run["run_id"] else "")
        series.append(Series(label, summary.curve, PASS_COLOR if metric == "pass@t" else COLORS[n % len(COLORS)],
                             dashed=metric == "pass@t"))
    chart = curve_chart(series, title=f"{page.run['metric']} metric@t with 95% intervals (errors excluded)")
    return environment().get_template("run.html").render(
        page=page, urls=urls, chart=chart, note=note, title=page.run["run_id"])


def render_task(page: TaskPage, urls: Urls) -> str:
    """A task's story."""
    return environment().get_template("task.html").render(
        page=page, urls=urls, title=f"task {page.task_index} · {page.run['run_id']}")


def render_error(status: int, message: str, urls: Urls) -> str:
    """A page that says what went wrong, never a traceback."""
    return environment().get_template("error.html").render(
        status=status, message=message, urls=urls, title=f"{status}: seqk view")
