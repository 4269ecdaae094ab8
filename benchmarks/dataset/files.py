"""A data file's rows, numbered as the file numbers them, with where each starts, and the hash
of its bytes (the slice's data fingerprint).

    .jsonl    one JSON object a line, split at "\\n" only (never at U+2028 and the other
              characters str.splitlines() breaks at, which JSON strings hold raw); a "\\r"
              before it and a byte-order mark are dropped; blank lines are not rows
    .json     an array of objects; each row's line is where its object starts
    .csv      a header, then one row a record; quoted cells may hold line breaks; every cell
              is text, as the file writes it (no type guessing: "007" stays "007")
    .parquet  read with polars, typed by the file; rows are named by number (no lines)

Row i (1-based, in file order) is task i whatever the other rows hold: a row that cannot be
read is an error naming file, line (and column where there is one) and what was expected,
never a silent drop, and with `skip_invalid_records` it is skipped and listed while the others
keep their numbers. JSONL and CSV go through benchmarks/_common/records.py, the reader the
rubric benchmarks share; polars reads Parquet. (polars' JSON and CSV readers unify types across
rows, 3 becoming 3.0, and name no line: not faithful enough for a row's target.)
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks._common.records import Records
from seqk.errors import DataFileError

FORMATS = (".jsonl", ".json", ".csv", ".parquet")


class Row(NamedTuple):
    """One row of a data file (a tuple: files of 100,000 rows are read at a run's start)."""

    position: int
    """1-based among the rows of every file read, in order: the task_index."""
    source: str
    """The file, as messages name it."""
    line: int | None
    """1-based line where the row starts; None for Parquet."""
    value: dict[str, Any]

    @property
    def where(self) -> str:
        """'data.csv:7', or 'data.parquet: row 7'."""
        return f"{self.source}:{self.line}" if self.line is not None else f"{self.source}: row {self.position}"


@dataclass
class Table:
    """The rows of one or more files read in order, and what is known of their columns."""

    rows: list[Row] = field(default_factory=list)
    columns: list[str] | None = None
    """The header (CSV) or schema (Parquet) of the first file; None for JSON, whose rows may differ."""
    sha256: str = ""
    """sha256 of the file's bytes; of the files' names and hashes for several."""
    skipped: list[str] = field(default_factory=list)
    """Where the rows skipped as invalid were (skip_invalid_records)."""


def read(paths: list[Path], names: list[str], *, skip_invalid: bool) -> Table:
    """The rows of `paths` (named `names` in messages), in order, numbered across files."""
    parts = [_read_one(str(p.resolve()), name, p.stat().st_mtime_ns, p.stat().st_size, skip_invalid)
             for p, name in zip(paths, names, strict=True)]
    if len(parts) == 1:
        return parts[0]
    table = Table(columns=parts[0].columns if parts else None)
    offset = 0
    for part in parts:
        table.rows += [Row(r.position + offset, r.source, r.line, r.value) for r in part.rows]
        table.skipped += part.skipped
        offset += len(part.rows) + len(part.skipped)  # a skipped row keeps its number
    listing = "".join(f"{name}\0{part.sha256}\n" for name, part in zip(names, parts, strict=True))
    table.sha256 = hashlib.sha256(listing.encode()).hexdigest()
    return table


@lru_cache(maxsize=8)
def _read_one(path: str, name: str, mtime_ns: int, size: int, skip_invalid: bool) -> Table:
    # Keyed on mtime and size too: a file rewritten in place is read and hashed again.
    raw = Path(path).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return _parquet(path, name, digest)
    text = _decoded(raw, name)
    if suffix == ".json":
        return _json_array(text, name, digest)
    records = Records(name, text, is_csv=suffix == ".csv", skip_invalid=skip_invalid)
    table = Table(sha256=digest)
    if suffix == ".csv":
        table.columns = _csv_header(text, name)
        table.rows = [Row(position, name, line, value) for position, line, value in _csv_rows(records, table.columns)]
    else:
        table.rows = [Row(r.position, name, r.line, value) for r, value in records.objects()]
    table.skipped = [f"{name}:{line}" for line in records.skipped]
    return table


def _decoded(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DataFileError(f"{name}:{line}:{column}: expected UTF-8 text (byte 0x{raw[exc.start]:02x} "
                            f"is not)") from None


def _csv_header(text: str, name: str) -> list[str]:
    header = next(csv.reader(io.StringIO(text, newline="")), None)
    if not header:
        raise DataFileError(f"{name}:1: expected a header row naming the columns")
    seen: set[str] = set()
    for column, title in enumerate(header, start=1):
        if not title.strip() or title in seen:
            what = "an empty column name" if not title.strip() else f"column name {title!r} twice"
            raise DataFileError(f"{name}:1: header: expected unique column names, not {what} (column {column})")
        seen.add(title)
    return header


def _csv_rows(records: Records, header: list[str]) -> Iterator[tuple[int, int, dict[str, Any]]]:
    for record in records:
        row = record.value
        if None in row or None in row.values():
            # csv.DictReader files surplus cells under None and fills missing ones with None.
            count = len(header) + len(row.get(None) or []) - sum(v is None for v in row.values())
            records.reject(record, "row", f"{len(header)} cells, as the header has (this row has {count})")
            continue
        yield record.position, record.line, row


def _json_array(text: str, name: str, digest: str) -> Table:
    """A JSON array of objects, each row's line where its object starts."""
    decoder = json.JSONDecoder()
    index = _skip_space(text, 0)
    if text[index:index + 1] != "[":
        raise DataFileError(f"{name}:{_line_of(text, index)}: expected a JSON array of objects (for one "
                            "object a line, name the file .jsonl)")
    rows, index = [], _skip_space(text, index + 1)
    while index < len(text) and text[index] != "]":
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError as exc:
            raise DataFileError(f"{name}:{exc.lineno}:{exc.colno}: record: expected a JSON value "
                                f"({exc.msg})") from None
        line = _line_of(text, index)
        if not isinstance(value, dict):
            raise DataFileError(f"{name}:{line}: record: expected a JSON object (row {len(rows) + 1})")
        rows.append(Row(len(rows) + 1, name, line, value))
        index = _skip_space(text, end)
        if text[index:index + 1] == ",":
            index = _skip_space(text, index + 1)
        elif text[index:index + 1] != "]":
            at = _line_of(text, index)
            raise DataFileError(f"{name}:{at}: expected ',' or ']' after row {len(rows)}")
    if index >= len(text):
        raise DataFileError(f"{name}:{_line_of(text, index)}: expected ']' closing the array")
    if text[_skip_space(text, index + 1):].strip():
        raise DataFileError(f"{name}:{_line_of(text, index + 1)}: expected nothing after the array")
    return Table(rows=rows, sha256=digest)


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _parquet(path: str, name: str, digest: str) -> Table:
    import polars as pl

    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - polars raises several kinds for a damaged file
        raise DataFileError(f"{name}: expected a Parquet file ({type(exc).__name__}: {str(exc)[:200]})") from None
    rows = [Row(i, name, None, value) for i, value in enumerate(frame.to_dicts(), start=1)]
    return Table(rows=rows, columns=list(frame.columns), sha256=digest)
