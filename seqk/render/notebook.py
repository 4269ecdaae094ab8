"""A report as a notebook shows it: `seqk.report(...)` returns a NotebookReport, the analysis's
Report with the forms a reader asks for. In Jupyter the report displays itself as an HTML table
(`_repr_html_`); `to_text()` is what `seqk report` prints; `to_polars()` is one row per run (or
per compare row) of numbers, for a reader's own plots and tests.

    rep = seqk.report(db="runs/seqk.duckdb", compare=True)
    rep                          # the table, the equal-budget blocks, the notes
    rep.to_polars().select("seq_run_id", "seq_lift", "seq_lift_low", "seq_lift_high", "seq_lift_p")
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any

from seqk.analysis.report import Report, cells, comparison_line, equal_budget_lines, flat_rows


@dataclasses.dataclass(repr=False)
class NotebookReport(Report):
    """A Report that shows itself in a notebook, and turns into text or a polars frame."""

    @classmethod
    def of(cls, report: Report) -> NotebookReport:
        """The same report, with these methods."""
        return cls(**{f.name: getattr(report, f.name) for f in dataclasses.fields(report)})

    def to_text(self) -> str:
        """What `seqk report` prints: one block per run or compare row, then the notes."""
        from seqk.render.text import to_text

        return to_text(self)

    def to_polars(self) -> Any:
        """One row per compare row (fields seq_ / pass_ / budget_) or per run, numbers not text:
        the columns of `seqk report --format csv`."""
        import polars as pl

        return pl.from_dicts(flat_rows(self), infer_schema_length=None)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        columns, body = cells(self)
        head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        rows = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>" for row in body)
        parts = [f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"]
        if self.comparison is not None:
            parts.append(f"<p>{html.escape(comparison_line(self.comparison))}</p>")
        parts += [f"<pre>{html.escape(chr(10).join(equal_budget_lines(b)))}</pre>" for b in self.equal_budget]
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        parts.append(f"<details><summary>{len(self.notes)} notes: what each figure is</summary><ul>{notes}</ul>"
                     "</details>")
        return "<div class='seqk-report'>" + "".join(parts) + "</div>"


def _cell(text: str) -> str:
    """A table cell: escaped, its stacked figures (seq over pass) on lines of their own."""
    return "<br>".join(html.escape(line) for line in text.split("\n"))
