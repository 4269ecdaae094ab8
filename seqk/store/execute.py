"""How a named query runs: its SQL from sql/, its parameters by name, its result in the declared shape."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import duckdb

from seqk.store.sqlfiles import queries

Connection = duckdb.DuckDBPyConnection


def run(con: Any, name: str, params: dict[str, Any], shape: str, folder: str = "") -> Any:
    """Run the named query of sql/`folder` with `params` and return its result as `shape` (see
    seqk.store.sqlfiles). `con` is a DuckDB connection, or a psycopg one for sql/postgres/: both
    execute a text with named parameters and hand back a cursor."""
    cur = con.execute(queries(folder)[name].sql, params)
    if shape == "none":
        return None
    if shape == "arrow":
        return cur.to_arrow_table()
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
    absent: a list of 1,000 task indices cost 0.2-0.35 s per query, its text under 2 ms."""
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
