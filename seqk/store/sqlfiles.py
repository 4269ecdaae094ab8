"""Named SQL queries, read once from the .sql files in sql/ (shipped as seqk.sql).

Each query sits under a line that states its contract, then a `--` comment that says what it
returns, then its body:

    -- name: get_run(run_id) -> one
    -- The run's row (all columns of runs), or nothing.
    SELECT * FROM runs WHERE run_id = $run_id;

The parentheses declare every `$parameter` the body uses (and nothing else); `-> shape` says
what a call returns: `rows` (a list of dicts, the default), `tuples`, `one` (a dict or None),
`scalar` (the first column of the first row, or None), `none` (a write), `arrow` (a pyarrow
Table) or `batches` (a pyarrow RecordBatchReader of BATCH_ROWS rows at a time, read before the
connection runs anything else: an export streams a million rows through it). Loading fails,
naming `file:line`, on an empty, duplicated or malformed query, or on a parameter declared but
unused or used but undeclared, so a broken file is caught at start-up and in the tests, never in
the middle of a user's run. seqk.store.queries is generated from
these declarations (`python -m seqk.store.codegen`), one typed function per query; a test
fails when it is stale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

from seqk.errors import SqlFileError

SCRIPTS = ("schema.sql", "views.sql")
"""Files executed whole, not named queries."""
MIGRATIONS = "migrations"
"""The folder of numbered schema migrations (NNN_name.sql), applied in order to older databases."""
SHAPES = ("rows", "tuples", "one", "scalar", "none", "arrow", "batches")
_NAME = re.compile(r"^--\s*name:\s*(?P<rest>.*)$")
_CONTRACT = re.compile(r"^(?P<name>[a-z][a-z0-9_]*)\s*\((?P<params>[^)]*)\)\s*(?:->\s*(?P<shape>\w+))?\s*$")
_PARAM = re.compile(r"\$([a-z_][a-z0-9_]*)")


@dataclass(frozen=True)
class Query:
    """One named query: its text, declared parameters, result shape, and where it was defined."""

    name: str
    sql: str
    doc: str
    where: str
    params: tuple[str, ...] = ()
    shape: str = "rows"


# A `--` comment to the end of its line, or a string literal ('' inside it is a quote; one
# left open runs to the end). Possessive: a literal is never cut short to close at a ''.
_LITERAL_OR_COMMENT = re.compile(r"--[^\n]*|'(?:''|[^'])*+(?:'|\Z)")


def code_of(sql: str) -> str:
    """The query's text with its string literals and `--` comments blanked out (an apostrophe in
    a comment, "the run's", opens no string)."""
    # One regex pass: the character loop it replaces cost ~15 ms of every run's start.
    return _LITERAL_OR_COMMENT.sub(lambda m: "" if m.group().startswith("--") else "''", sql)


def body_params(sql: str) -> set[str]:
    """The `$name` parameters a query body uses (string literals and comments ignored)."""
    return set(_PARAM.findall(code_of(sql)))


def parse(text: str, filename: str) -> dict[str, Query]:
    """Split one file's text into its named queries."""
    queries: dict[str, Query] = {}
    current: tuple[str, int, tuple[str, ...], str] | None = None
    doc: list[str] = []
    body: list[str] = []

    def close() -> None:
        if current is None:
            return
        name, line, params, shape = current
        where = f"{filename}:{line}"
        sql = "\n".join(body).strip()
        if not sql:
            raise SqlFileError(f"{where}: query {name!r} is empty")
        if not doc:
            raise SqlFileError(f"{where}: query {name!r} has no comment saying what it returns")
        used = body_params(sql)
        if used != set(params):
            undeclared, unused = sorted(used - set(params)), sorted(set(params) - used)
            said = "; ".join(part for part in (
                f"uses undeclared {', '.join('$' + p for p in undeclared)}" if undeclared else "",
                f"declares unused {', '.join(unused)}" if unused else "") if part)
            raise SqlFileError(f"{where}: query {name!r} {said}")
        queries[name] = Query(name, sql, " ".join(doc), where, params, shape)

    # Split at "\n" only: str.splitlines() also breaks at characters a string literal may hold.
    for number, line in enumerate(text.split("\n"), start=1):
        match = _NAME.match(line)
        if match:
            close()
            contract = _CONTRACT.match(match.group("rest").strip())
            if contract is None:
                raise SqlFileError(f"{filename}:{number}: bad name line {line.strip()!r} "
                                   f"(want `-- name: verb_noun(param, ...) -> shape`)")
            name = contract.group("name")
            params = tuple(p.strip() for p in contract.group("params").split(",") if p.strip())
            bad = [p for p in params if not re.fullmatch(r"[a-z_][a-z0-9_]*", p)]
            if bad:
                raise SqlFileError(f"{filename}:{number}: bad parameter name(s) {bad} in {name!r}")
            shape = contract.group("shape") or "rows"
            if shape not in SHAPES:
                raise SqlFileError(f"{filename}:{number}: query {name!r} returns {shape!r}; "
                                   f"want one of {', '.join(SHAPES)}")
            if name in queries:
                raise SqlFileError(
                    f"{filename}:{number}: query {name!r} already defined at {queries[name].where}"
                )
            current, doc, body = (name, number, params, shape), [], []
        elif current is None:
            if line.strip() and not line.lstrip().startswith("--"):
                raise SqlFileError(f"{filename}:{number}: SQL before the first '-- name:' line")
        elif line.lstrip().startswith("--") and not body:
            doc.append(line.lstrip()[2:].strip())
        else:
            body.append(line)
    close()
    return queries


FOLDERS = ("", "lake", "postgres")
"""Where named queries live: sql/ (every store runs them), sql/lake/ (DuckDB statements only a
lake understands) and sql/postgres/ (run on a lake's PostgreSQL catalog through psycopg)."""


@cache
def queries(folder: str = "") -> dict[str, Query]:
    """Every named query of one folder of sql/ (FOLDERS), across its files; names are unique
    across files too. The postgres folder's `$name` parameters are turned into psycopg's."""
    found: dict[str, Query] = {}
    root = resources.files("seqk.sql")
    entries = root.joinpath(folder).iterdir() if folder else root.iterdir()
    for entry in sorted(entries, key=lambda e: e.name):
        if not entry.name.endswith(".sql") or entry.name in SCRIPTS:
            continue
        where = f"{folder}/{entry.name}" if folder else entry.name
        for name, query in parse(entry.read_text(), where).items():
            if name in found:
                raise SqlFileError(f"{query.where}: query {name!r} already defined at {found[name].where}")
            found[name] = query if folder != "postgres" else replace(query, sql=_psycopg(query.sql))
    return found


def _psycopg(sql: str) -> str:
    """A query's text with psycopg's placeholders (%(name)s) for the house's $name."""
    return _PARAM.sub(r"%(\1)s", sql.replace("%", "%%"))


@cache
def schema() -> str:
    """The whole current schema, sql/schema.sql."""
    return resources.files("seqk.sql").joinpath("schema.sql").read_text()


@cache
def migrations() -> list[tuple[int, str, str]]:
    """(version, file name, SQL) of every migration in sql/migrations/, in version order: what
    brings a database made by an older seqk to the current schema."""
    folder = resources.files("seqk.sql").joinpath(MIGRATIONS)
    found: list[tuple[int, str, str]] = []
    for entry in folder.iterdir():
        match = re.fullmatch(r"(\d{3})_[a-z0-9_]+\.sql", entry.name)
        if match is None:
            if entry.name.endswith(".sql"):
                raise SqlFileError(f"{MIGRATIONS}/{entry.name}: want NNN_what_it_does.sql")
            continue
        found.append((int(match.group(1)), entry.name, entry.read_text()))
    found.sort()
    versions = [v for v, _, _ in found]
    if versions != list(range(1, len(found) + 1)):
        raise SqlFileError(f"{MIGRATIONS}/: versions {versions} are not 1, 2, 3, ... without gaps")
    return found


@cache
def views() -> str:
    """Every view, sql/views.sql (CREATE OR REPLACE, so re-running it upgrades them)."""
    return resources.files("seqk.sql").joinpath("views.sql").read_text()
