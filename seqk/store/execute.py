"""How a named query runs: its SQL from sql/, its parameters by name, its result in the declared shape."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb

from seqk.store.sqlfiles import queries

Connection = duckdb.DuckDBPyConnection

BATCH_ROWS = 20_000
"""Rows per Arrow batch of a query whose shape is `batches` (an export's attempts and calls): a
batch of attempts with their prompts and outputs stays a few MB to tens of MB."""


class AbsentModules:
    """A finder, first on sys.meta_path, that makes `import pandas` fail at once where pandas is
    not installed, instead of after a search of every finder and folder of sys.path.

    DuckDB 1.5's binding tries `import pandas` twice for every parameter it binds and every
    element of a list parameter (to ask whether the value is a pandas type), and pandas cannot be
    found a second time any faster than the first: ~60 us a try, so a query with five parameters
    cost 1.1 ms instead of 0.37 ms and the 19 of insert_run ~4 ms. Only an `import` statement is
    answered (ModuleNotFoundError, "No module named 'pandas'", as without this finder);
    `importlib.util.find_spec` and any caller this finder does not recognise get None, as from
    every other finder, so a library asking whether pandas is installed hears no."""

    PROBED = ("pandas",)
    """Modules DuckDB's binding imports again on every use when they are not installed."""

    def __init__(self, names: Sequence[str]):
        self.names = frozenset(names)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname in self.names and sys._getframe(2).f_code.co_name == "_find_and_load_unlocked":
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None

    @classmethod
    def install(cls) -> None:
        """Put one first on sys.meta_path for the PROBED modules that are not installed (once)."""
        if any(isinstance(finder, cls) for finder in sys.meta_path):
            return
        absent = [name for name in cls.PROBED if name not in sys.modules and importlib.util.find_spec(name) is None]
        if absent:
            sys.meta_path.insert(0, cls(absent))


AbsentModules.install()


def run(con: Any, name: str, params: dict[str, Any], shape: str, folder: str = "") -> Any:
    """Run the named query of sql/`folder` with `params` and return its result as `shape` (see
    seqk.store.sqlfiles). `con` is a DuckDB connection, or a psycopg one for sql/postgres/: both
    execute a text with named parameters and hand back a cursor."""
    cur = con.execute(queries(folder)[name].sql, params)
    if shape == "none":
        return None
    if shape == "arrow":
        return cur.to_arrow_table()
    if shape == "batches":
        return cur.to_arrow_reader(BATCH_ROWS)
    if shape == "scalar":
        row = cur.fetchone()
        return None if row is None else row[0]
    if shape == "tuples":
        return cur.fetchall()
    names = [d[0] for d in cur.description]
    if shape == "one":
        row = cur.fetchone()
        return None if row is None else dict(zip(names, row, strict=True))
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def int_list(values: Iterable[int]) -> str:
    """Integers as the text of a DuckDB list ('[1, 2, 3]', JSON too), for a parameter the query
    casts (`$task_indices::INTEGER[]`) or parses (`from_json`). DuckDB inspects every element of
    a Python list parameter for pandas types, trying `import pandas` for each when pandas is
    absent: a list of 1,000 task indices cost 0.2-0.35 s per query, 18 ms with AbsentModules
    answering those tries, its text 0.7 ms."""
    return "[" + ", ".join(map(str, map(int, values))) + "]"


@contextmanager
def transaction(con: Connection) -> Iterator[None]:
    """Everything in the block is committed together, or rolled back on any exception."""
    con.execute("BEGIN")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
