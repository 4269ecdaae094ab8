"""Named SQL queries, read once from the .sql files in sql/ (shipped as seqk.sql).

A file holds one or more queries, each under a `-- name: verb_noun` line followed
by a `--` comment that says what it returns. Loading fails, naming `file:line`, on
an empty, duplicated or malformed query, so a broken file is caught at start-up
and not in the middle of a run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from seqk.errors import SqlFileError

_SCRIPTS = ("schema.sql", "views.sql")  # executed whole, not named queries
_NAME = re.compile(r"^--\s*name:\s*(\S+)\s*$")
_VALID = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Query:
    """One named query: its text, what it returns, and where it was defined."""

    name: str
    sql: str
    doc: str
    where: str


def parse(text: str, filename: str) -> dict[str, Query]:
    """Split one file's text into its named queries."""
    queries: dict[str, Query] = {}
    current: tuple[str, int] | None = None
    doc: list[str] = []
    body: list[str] = []

    def close() -> None:
        if current is None:
            return
        name, line = current
        where = f"{filename}:{line}"
        sql = "\n".join(body).strip()
        if not sql:
            raise SqlFileError(f"{where}: query {name!r} is empty")
        if not doc:
            raise SqlFileError(f"{where}: query {name!r} has no comment saying what it returns")
        queries[name] = Query(name, sql, " ".join(doc), where)

    for number, line in enumerate(text.splitlines(), start=1):
        match = _NAME.match(line)
        if match:
            close()
            name = match.group(1)
            if not _VALID.match(name):
                raise SqlFileError(f"{filename}:{number}: bad query name {name!r} (want verb_noun)")
            if name in queries:
                raise SqlFileError(
                    f"{filename}:{number}: query {name!r} already defined at {queries[name].where}"
                )
            current, doc, body = (name, number), [], []
        elif current is None:
            if line.strip() and not line.lstrip().startswith("--"):
                raise SqlFileError(f"{filename}:{number}: SQL before the first '-- name:' line")
        elif line.lstrip().startswith("--") and not body:
            doc.append(line.lstrip()[2:].strip())
        else:
            body.append(line)
    close()
    return queries


@cache
def queries() -> dict[str, Query]:
    """Every named query in sql/, across files; names are unique across files too."""
    found: dict[str, Query] = {}
    folder = resources.files("seqk.sql")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql") or entry.name in _SCRIPTS:
            continue
        for name, query in parse(entry.read_text(), entry.name).items():
            if name in found:
                raise SqlFileError(f"{query.where}: query {name!r} already defined at {found[name].where}")
            found[name] = query
    return found


def q(name: str) -> str:
    """The SQL text of the named query."""
    try:
        return queries()[name].sql
    except KeyError:
        raise SqlFileError(f"no query named {name!r} in sql/") from None


@cache
def schema() -> str:
    """The whole current schema, sql/schema.sql."""
    return resources.files("seqk.sql").joinpath("schema.sql").read_text()


@cache
def views() -> str:
    """Every view, sql/views.sql (CREATE OR REPLACE, so re-running it upgrades them)."""
    return resources.files("seqk.sql").joinpath("views.sql").read_text()
