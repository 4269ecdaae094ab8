"""Bringing a store's tables and views up to date: one procedure for a DuckDB file and a lake.

sql/schema.sql is the whole current schema and sql/migrations/ the steps from each older one;
`schema_info.schema_version` says which a store has. A new store gets schema.sql, an older one
the migrations it lacks and then schema.sql (which makes again a derived table a migration
dropped: all its statements are IF NOT EXISTS), in one transaction; then sql/views.sql. What differs on a lake is only
the text run (a `Flavour`): its tables have no primary key (DuckLake has none; the views dedupe),
and its views and macros live in each session's temporary catalog, never in the lake (a table
macro stored in a lake broke every later session), so they are made at every session's start
instead of being kept with a hash that says when to redo them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import duckdb

from seqk.errors import BadInput, NotFound
from seqk.store import queries
from seqk.store.execute import Connection, transaction
from seqk.store.sqlfiles import migrations, schema, views


@dataclass(frozen=True)
class Flavour:
    """How a kind of store runs the shared schema and views."""

    keys: bool
    """Whether its tables keep sql/schema.sql's primary keys (a DuckDB file) or drop them (a lake)."""
    views_kept: bool
    """Whether views and macros are stored (and redone when views.sql changes), or made in each
    session's temporary catalog (a lake)."""

    def tables(self, text: str) -> str:
        """A schema or migration script as this store runs it."""
        if self.keys:
            return text
        text = re.sub(r",\s*\n\s*PRIMARY KEY \([^)]*\)", "", text)
        return re.sub(r"\s+PRIMARY KEY\b", "", text)

    def views(self) -> str:
        """sql/views.sql as this store runs it: on a lake, in the session's temporary catalog and
        with its `--lake-only:` lines (dedupes that a file's primary key makes needless) turned on."""
        text = views()
        if self.views_kept:
            return text
        text = re.sub(r"(?m)^--lake-only: ", "", text)
        return re.sub(r"CREATE OR REPLACE (VIEW|MACRO)\b", r"CREATE OR REPLACE TEMP \1", text)


KEPT_SINCE = 11
"""The last schema that changed chain_kept's columns (10 added the table, 11 its calls' columns): a
store upgraded from an older one keeps its chains afresh from its attempts and calls
(chain_kept_rows needs views.sql, so after the migrations)."""

FILE = Flavour(keys=True, views_kept=True)
LAKE = Flavour(keys=False, views_kept=False)


def schema_version() -> int:
    """The version of sql/schema.sql: the number of the last file in sql/migrations/."""
    return len(migrations())


def views_sha() -> str:
    """The hash of sql/views.sql that a store records beside the views it keeps."""
    return hashlib.sha256(views().encode()).hexdigest()


def _stored(con: Connection) -> tuple[int, str | None]:
    """(schema version, views hash) the store records; (0, None) before schema_info existed."""
    try:
        have = queries.get_schema_info(con)
    except duckdb.CatalogException:
        return 0, None
    # A lake appends a row per upgrade (no key to replace on): the highest version is current.
    versions = [int(value) for key, value in have if key == "schema_version"]
    shas = [value for key, value in have if key == "views_sha256"]
    return max(versions, default=0), (shas[-1] if shas else None)


def current(con: Connection, flavour: Flavour) -> bool:
    """Whether the store's tables, and the views it keeps, are this seqk's."""
    number, sha = _stored(con)
    return number == schema_version() and (not flavour.views_kept or sha == views_sha())


def ensure(con: Connection, flavour: Flavour, *, where: str, read_only: bool = False) -> None:
    """Bring the tables to sql/schema.sql and make the views (a store's views when they are not
    current; a session's every time). BadInput for a store from a newer seqk; on a read-only
    session, NotFound for a store without seqk's tables (a read-only file is upgraded by its
    opener with a brief read-write open instead)."""
    number, sha = _stored(con)
    newest = schema_version()
    if number > newest:
        raise BadInput(f"{where} has schema {number}, made by a newer seqk than this one "
                       f"(schema {newest}): upgrade seqk to read it")
    if number < newest and read_only:
        raise NotFound(f"no seqk tables in {where} (run `seqk run` against it first)")
    if number == newest and flavour.views_kept and sha == views_sha():
        return
    backfill = False
    with transaction(con):
        if number < newest:
            if number == 0 and queries.count_tables(con, table_name="runs"):
                number = 1  # tables from before schema_info existed: schema 1
            if number == 0:
                con.execute(flavour.tables(schema()))
            else:
                for _step, _name, sql in migrations()[number:]:
                    con.execute(flavour.tables(sql))
                # A derived table a migration drops (chain_kept in 11) is made again as schema.sql
                # has it: its statements are all CREATE ... IF NOT EXISTS.
                con.execute(flavour.tables(schema()))
                backfill = number < KEPT_SINCE
            record = queries.set_schema_info if flavour.keys else queries.add_schema_info
            record(con, key="schema_version", value=str(newest))
        if flavour.views_kept:
            con.execute(flavour.views())
            queries.set_schema_info(con, key="views_sha256", value=views_sha())
            if backfill:  # afresh: a store may hold rows of chain_kept from before its migrations
                queries.forget_all_kept_chains(con)
                queries.keep_all_chains(con)
    if not flavour.views_kept:
        con.execute(flavour.views())
        if backfill:  # the lake's tables committed above; its chains kept in a second commit
            with transaction(con):
                queries.forget_all_kept_chains(con)
                queries.keep_all_chains(con)
