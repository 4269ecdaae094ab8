"""The records of a data file (JSONL or CSV), numbered as the file numbers them, and what
happens to one that does not parse or fit its benchmark's schema.

JSONL records are split at "\\n" only (a trailing "\\r" dropped), never with
`str.splitlines()`, which also breaks at U+2028, U+2029, U+0085, \\x0b, \\x0c and \\x1c–\\x1e:
characters a JSON string may hold raw. A record's position (1-based, among the file's
records; blank lines are not records) is its canonical task_index whatever happens to the
other records, so that task i is the file's record i in this harness and in any other.

A record that does not fit stops the load with one DataFileError naming file, line and
field. Skipping is the user's choice (`skip_invalid_records`); even then the other records
keep their positions and the skipped lines are listed.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from seqk.errors import DataFileError

_BLANK = " \t\r"
"""JSON's whitespace besides "\\n": a line of only these is no record."""
# strict=False: some writers leave \x0b, \x0c or \x1c-\x1e raw inside strings; split at "\n"
# only, such a record is still unambiguous. One decoder for every line (json.loads with an
# argument builds one per call).
_DECODER = json.JSONDecoder(strict=False)
_DECODE = _DECODER.decode
_SCAN = _DECODER.scan_once
"""The decoder's C scanner: a line that is one JSON value from its first character to its last
is read by it alone (what `decode` would return, without its two regex matches); any other line
goes through `decode`, which returns the same value or raises the error a message quotes."""


class Record(NamedTuple):
    """One record of a data file (a tuple: files of 100,000 records are read at a run's start)."""

    position: int
    """1-based among the file's records: the canonical task_index."""
    line: int
    """1-based line of the file where the record starts (as an editor shows it)."""
    value: Any
    """The parsed JSON value, or the CSV row as a dict of column to cell."""


@dataclass
class Records:
    """The parsed records of one file, in file order, and the lines skipped as invalid."""

    source: str
    """The file, as messages name it."""
    text: str
    is_csv: bool = False
    skip_invalid: bool = False
    """Skip (and list) a record that does not fit, instead of stopping the load."""
    skippable: bool = True
    """False for files the user cannot choose (a benchmark's own): no option to suggest."""
    skipped: list[int] = field(default_factory=list)
    """1-based lines of the records skipped as invalid, in file order."""

    def __iter__(self) -> Iterator[Record]:
        """Every record that parses; one that does not is rejected (raise or skip)."""
        yield from (self._csv() if self.is_csv else self._jsonl())

    def objects(self) -> Iterator[tuple[Record, dict[str, Any]]]:
        """Every record that is a JSON object, with its value; any other is rejected."""
        for record in self._csv() if self.is_csv else self._jsonl():
            if isinstance(record.value, dict):
                yield record, record.value
            else:
                self.reject(record, "record", "a JSON object")

    def reject(self, record: Record | int, field_name: str, expected: str, column: int | None = None) -> None:
        """Record (or the line) `record` does not fit: raise DataFileError naming the file, the
        line (and the column, when known) and `field_name`, or, when skipping is allowed, note
        the line and go on."""
        line = record.line if isinstance(record, Record) else record
        if self.skip_invalid:
            self.skipped.append(line)
            return
        hint = ("; fix the record, or set options.skip_invalid_records: true to skip it (the other "
                "records keep their task_index)") if self.skippable else ""
        where = f"{line}:{column}" if column is not None else f"{line}"
        raise DataFileError(f"{self.source}:{where}: {field_name}: expected {expected}{hint}")

    def _jsonl(self) -> Iterator[Record]:
        position = 0
        for line_no, line in enumerate(self.text.split("\n"), start=1):
            if not line.strip(_BLANK):
                continue
            position += 1
            line = line.removesuffix("\r")
            try:
                value, end = _SCAN(line, 0)
            except (StopIteration, json.JSONDecodeError):
                end = -1
            if end != len(line):
                try:
                    value = _DECODE(line)
                except json.JSONDecodeError as exc:
                    self.reject(line_no, "record", f"one JSON value per line ({exc.msg})", exc.colno)
                    continue
            yield Record(position, line_no, value)

    def _csv(self) -> Iterator[Record]:
        # newline="": the csv module then keeps line breaks inside quoted cells, and the text
        # stream breaks lines at \n, \r and \r\n only, never at U+2028 and the like. A row's
        # line is where it starts: after the previous row's last line and any blank lines.
        reader = csv.reader(io.StringIO(self.text, newline=""))
        header: list[str] | None = None
        last_line, position = 0, 0
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:  # a NUL byte, an unterminated quote at the end: the file stops
                raise DataFileError(f"{self.source}:{last_line + 1}: record: expected CSV ({exc})") from None
            start, last_line = last_line + 1, reader.line_num
            if not cells:
                continue
            if header is None:
                header = cells
                continue
            position += 1
            # As csv.DictReader: surplus cells under None, missing ones None.
            row: dict[Any, Any] = dict(zip(header, cells, strict=False))
            if len(cells) > len(header):
                row[None] = cells[len(header):]
            for name in header[len(cells):]:
                row[name] = None
            yield Record(position, start, row)
