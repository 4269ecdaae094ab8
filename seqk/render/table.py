"""`seqk sql`'s result as a table a person reads: every value whole, floats at six significant
digits (DuckDB's doubles print 17: 0.35555555555555557). `--format csv` and `json` keep every digit."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

SIGNIFICANT = 6
"""Digits a float keeps in a table cell."""


def cell(value: Any) -> str:
    """A value as a table shows it: NULL, a float at SIGNIFICANT digits (never in exponent form
    from 1e-4 to 1e15), anything else as str()."""
    if value is None:
        return "NULL"
    if isinstance(value, float) and value == 0:
        return "0"
    if isinstance(value, float) and math.isfinite(value):
        magnitude = math.floor(math.log10(abs(value)))
        if -4 <= magnitude < 15:
            digits = max(SIGNIFICANT - 1 - magnitude, 0)
            text = f"{value:.{digits}f}"
            return text.rstrip("0").rstrip(".") if "." in text else text
        return f"{value:.{SIGNIFICANT}g}"
    return str(value)


def sql_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Any:
    """A rich Table of a query's rows, with its row count as caption."""
    from rich.table import Table

    table = Table(caption=f"{len(rows)} row(s)")
    for name in columns:
        table.add_column(name)
    for row in rows:
        table.add_row(*(cell(v) for v in row))
    return table
