"""A DuckLake as the store: one results database for a team, written by many processes at once.

The URL names the catalog (PostgreSQL, where DuckLake keeps its metadata and commits) and,
after `;data=`, where the Parquet files go (S3 or a local/shared folder):

    ducklake:postgres:dbname=seqk host=db.lab port=5432 user=seqk;data=s3://bucket/seqk/
    ducklake:postgres:dbname=seqk host=127.0.0.1 port=5433 user=me;data=/shared/seqk-lake/

`data=` is needed once, when the lake is created; DuckLake remembers it. Credentials never go in
the URL and are never stored: PostgreSQL's come from libpq's environment (PGPASSWORD, or
~/.pgpass), S3's from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, with
AWS_REGION and AWS_ENDPOINT_URL (for an S3-compatible endpoint such as MinIO) when set.

What differs from a DuckDB file, and why:
- The lake's tables have no PRIMARY KEY (DuckLake has none); the views dedupe.
- Views and macros (sql/views.sql) live in each session's temporary catalog, never in the lake:
  a table macro stored in a lake broke every later session.
- One connection per process, shared by its threads under a lock: two threads writing through
  one lake connection at once crashed DuckDB. Commit conflicts between processes are retried
  inside DuckLake (ducklake_max_retry_count raised), not counted as failures.
- The run lease is a set of PostgreSQL advisory locks, one per (run, task): two machines may
  run disjoint tasks of one run; the same task twice is refused. PostgreSQL drops the locks
  when the process or its connection dies.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import duckdb

from seqk.errors import BadInput, MissingExtra, NotFound, RunConflict, StoreBusy

PREFIX = "ducklake:"
CATALOG = "lake"
"""The name the lake is attached under in every session (maintenance calls name it)."""
USE_CATALOG = "USE " + CATALOG
"""Statements hold no values from outside: the catalog name is this constant."""
SET_MAX_RETRY_COUNT = "SET ducklake_max_retry_count = 100"
"""DuckLake's retries of a conflicting commit (its default, 10, ran out about once in 600
commits with 4 writers)."""
EXTENSIONS = (("ducklake", "ducklake"), ("postgres_scanner", "postgres_scanner"), ("httpfs", "httpfs"))
"""(PyPI package suffix, extension name): the duckdb-extension-* wheels the `lake` extra installs."""


def is_lake(db: object) -> bool:
    """Whether a --db / $SEQK_DB / `db:` value names a lake rather than a DuckDB file."""
    return isinstance(db, str) and db.startswith(PREFIX)


@dataclass(frozen=True)
class LakeUrl:
    """A parsed lake URL."""

    catalog_dsn: str
    """The libpq connection string of the PostgreSQL catalog (no password)."""
    data_path: str | None
    """Where the Parquet files go (s3://bucket/prefix/ or a folder); None: as the lake recorded."""

    def display(self) -> str:
        return PREFIX + "postgres:" + self.catalog_dsn + (f";data={self.data_path}" if self.data_path else "")


def parse(url: str) -> LakeUrl:
    """Split and check a lake URL; BadInput saying the expected form when it is wrong."""
    form = ("want ducklake:postgres:<libpq dsn>[;data=s3://bucket/prefix/ or a folder], e.g. "
            "ducklake:postgres:dbname=seqk host=127.0.0.1 port=5432 user=seqk;data=s3://bucket/seqk/")
    rest = url[len(PREFIX):]
    if not rest.startswith("postgres:"):
        raise BadInput(f"--db {url!r}: only a PostgreSQL catalog is supported; {form}")
    dsn, _, data = rest[len("postgres:"):].partition(";data=")
    dsn = dsn.strip()
    if not dsn or "=" not in dsn:
        raise BadInput(f"--db {url!r}: the catalog's connection string is missing; {form}")
    if re.search(r"(^|\s)password\s*=", dsn):
        raise BadInput(f"--db {url!r}: a password does not go in the URL (it would be shown and "
                       f"logged); set PGPASSWORD or use ~/.pgpass")
    path = data.strip() or None
    if path is not None and not path.startswith("s3://"):
        path = os.path.abspath(path)
    if path is not None and not path.endswith("/"):
        path += "/"
    return LakeUrl(dsn, path)


# ---------------------------------------------------------------------------
# Sessions


_lock = threading.RLock()
_sessions: dict[tuple[str, bool], duckdb.DuckDBPyConnection] = {}


def _load_extensions(con: duckdb.DuckDBPyConnection) -> None:
    import site

    for package, name in EXTENSIONS:
        try:
            con.load_extension(name)
            continue
        except duckdb.Error:
            pass
        roots = [*site.getsitepackages(), site.getusersitepackages()]
        found = [f for root in roots for f in glob.glob(
            os.path.join(root, f"duckdb_extension_{package}", "extensions", "*", f"{name}.duckdb_extension"))]
        if not found:
            raise MissingExtra(f"a lake needs the DuckDB extension {name}: pip install 'seqk[lake]' "
                               f"(duckdb-extension-{package.replace('_', '-')}=={duckdb.__version__})")
        con.install_extension(found[0])
        con.load_extension(name)


def _s3_secret(con: duckdb.DuckDBPyConnection) -> None:
    """An in-memory S3 secret from the environment (never persisted, never in the lake)."""
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        return
    fields: dict[str, str] = {"KEY_ID": key, "SECRET": secret,
                              "REGION": os.environ.get("AWS_REGION") or os.environ.get(
                                  "AWS_DEFAULT_REGION") or "us-east-1"}
    if os.environ.get("AWS_SESSION_TOKEN"):
        fields["SESSION_TOKEN"] = os.environ["AWS_SESSION_TOKEN"]
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    # DuckDB's CREATE SECRET takes literals only, not parameters; values are quoted here.
    options = [f"{name} '{value.replace(chr(39), chr(39) * 2)}'" for name, value in fields.items()]
    if endpoint:
        scheme, _, host = endpoint.partition("://")
        options += [f"ENDPOINT '{host.rstrip('/')}'", "URL_STYLE 'path'",
                    f"USE_SSL {'true' if scheme == 'https' else 'false'}"]
    con.execute("CREATE OR REPLACE SECRET seqk_s3 (TYPE s3, " + ", ".join(options) + ")")


def _attach(url: LakeUrl, read_only: bool) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    try:
        _load_extensions(con)
        _s3_secret(con)
        con.execute(SET_MAX_RETRY_COUNT)
        options = ["READ_ONLY"] if read_only else []
        if url.data_path and not read_only:
            options.append("DATA_PATH '" + url.data_path.replace("'", "''") + "'")
        target = "ducklake:postgres:" + url.catalog_dsn
        con.execute("ATTACH '" + target.replace("'", "''") + f"' AS {CATALOG}"
                    + (f" ({', '.join(options)})" if options else ""))
        con.execute(USE_CATALOG)
    except MissingExtra:
        con.close()
        raise
    except duckdb.Error as exc:
        con.close()
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if read_only and "does not exist" in first:
            raise NotFound(f"no lake at {url.display()} yet (run `seqk run` against it first)") from None
        raise BadInput(f"cannot open the lake {url.display()}: {first}") from None
    return con


def _prepare(con: duckdb.DuckDBPyConnection, url: LakeUrl, read_only: bool) -> None:
    """A new session: the lake's tables brought up to date (under setup_lock, taken by session()
    for a writer), this session's views created."""
    from seqk.store import queries
    from seqk.store.sqlfiles import migrations, schema, views

    current = len(migrations())
    try:
        version = int(dict(queries.get_schema_info(con)).get("schema_version", 0))
    except duckdb.CatalogException:
        version = 0
    if version > current:
        raise BadInput(f"this lake has schema {version}, made by a newer seqk than this one "
                       f"(schema {current}): upgrade seqk to read it")
    if version < current:
        if read_only:
            raise NotFound(f"no seqk tables in the lake {url.display()} (run `seqk run` against it first)")
        con.execute("BEGIN")
        try:
            if version == 0:
                con.execute(lake_schema(schema()))
            else:
                for _number, _name, sql in migrations()[version:]:
                    con.execute(lake_schema(sql))
            queries.add_schema_info(con, key="schema_version", value=str(current))
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    con.execute(temp_views(views()))


@contextlib.contextmanager
def session(url_text: str, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """The process's connection to the lake (made once, kept), held by this thread for the block."""
    url = parse(url_text)
    key = (url.display(), read_only)
    with _lock:
        con = _sessions.get(key)
        if con is None:
            # A fresh lake is initialised by the first ATTACH, and its tables created by the first
            # session: writers starting at once must take turns, or PostgreSQL refuses the second,
            # and a reader waits for a set-up under way, to find the lake whole or not at all.
            with setup_lock(url, shared=read_only):
                con = _attach(url, read_only)
                try:
                    _prepare(con, url, read_only)
                except BaseException:
                    con.close()
                    raise
            _sessions[key] = con
        yield con


def close_all() -> None:
    """Close this process's lake connections (tests, and a forked worker before it writes)."""
    with _lock:
        for con in _sessions.values():
            with contextlib.suppress(Exception):
                con.close()
        _sessions.clear()


def temp_views(text: str) -> str:
    """sql/views.sql made to create its views and macros in the session's temporary catalog,
    with its `--lake-only:` lines (dedupes that a file's primary key makes needless) turned on."""
    text = re.sub(r"(?m)^--lake-only: ", "", text)
    return re.sub(r"CREATE OR REPLACE (VIEW|MACRO)\b", r"CREATE OR REPLACE TEMP \1", text)


def lake_schema(text: str) -> str:
    """sql/schema.sql without its primary keys (DuckLake has none; the views dedupe)."""
    text = re.sub(r",\s*\n\s*PRIMARY KEY \([^)]*\)", "", text)
    return re.sub(r"\s+PRIMARY KEY\b", "", text)


# ---------------------------------------------------------------------------
# PostgreSQL: set-up lock and run lease


@cache
def _pg_queries() -> dict[str, str]:
    from seqk.store.sqlfiles import parse as parse_sql

    text = resources.files("seqk.sql").joinpath("postgres", "lease.sql").read_text()
    # psycopg's placeholders, from the house's $name form.
    return {name: re.sub(r"\$([a-z_][a-z0-9_]*)", r"%(\1)s", query.sql)
            for name, query in parse_sql(text, "postgres/lease.sql").items()}


def _pg(dsn: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise MissingExtra("a lake needs psycopg: pip install 'seqk[lake]'") from None
    try:
        return psycopg.connect(dsn, autocommit=True, connect_timeout=20)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0]
        if "does not exist" in first:  # the server answered: the database (or role) is missing
            raise NotFound(f"the lake's catalog ({dsn}) {first.rsplit('FATAL:', 1)[-1].strip()}: "
                           "create it on the PostgreSQL server first (createdb), or fix the "
                           "dbname / user in the lake URL") from None
        raise StoreBusy(f"cannot reach the lake's catalog ({dsn}): {first}") from None


def _key(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextlib.contextmanager
def setup_lock(url: LakeUrl, shared: bool = False) -> Iterator[None]:
    """Held while one process creates or upgrades the lake's tables, so several processes
    starting on a fresh lake at once create them once; `shared` (a reader opening the lake)
    waits for a set-up under way, and holds off a new one until the block ends."""
    pg = _pg(url.catalog_dsn)
    try:
        pg.execute(_pg_queries()["lock_setup_shared" if shared else "lock_setup"],
                   {"key": _key("seqk-lake-setup")})
        yield
    finally:
        _release_and_close(pg)


@contextlib.contextmanager
def lease(url_text: str, run_id: str, task_indices: Sequence[int]) -> Iterator[None]:
    """Hold the right to run these tasks of `run_id` against the lake, until the block ends or
    the process dies. RunConflict when another process holds any of them."""
    url = parse(url_text)
    pg = _pg(url.catalog_dsn)
    try:
        keys = [_key(run_id, t) for t in sorted(set(task_indices))] or [_key(run_id, "whole")]
        row = pg.execute(_pg_queries()["try_lease_tasks"], {"keys": keys}).fetchone()
        refused = int(row[0]) if row else len(keys)
        if refused:
            raise RunConflict(
                f"{refused} of the {len(keys)} task(s) of run {run_id} are being run right now by "
                f"another process on the lake; wait for it, or run other tasks (task_indices)")
        yield
    finally:
        _release_and_close(pg)


def _release_and_close(pg: Any) -> None:
    """Release every lock of the session (each block has a connection of its own), then close.
    Closing alone is not enough: the server frees a session's locks only when its backend has
    exited, which can come after the next process (or this one's next run) already asks for
    them. If the connection is broken, the server ends the session and frees them itself."""
    import psycopg

    try:
        pg.execute(_pg_queries()["release_all"])
    except psycopg.Error:
        pass
    finally:
        pg.close()


# ---------------------------------------------------------------------------
# Maintenance


@cache
def _maintenance() -> dict[str, str]:
    from seqk.store.sqlfiles import parse as parse_sql

    text = resources.files("seqk.sql").joinpath("lake", "maintenance.sql").read_text()
    return {name: query.sql for name, query in parse_sql(text, "lake/maintenance.sql").items()}


@dataclass(frozen=True)
class Compaction:
    """What `seqk lake compact` did."""

    files_before: int
    """Parquet data files the current snapshot read before."""
    files_after: int
    snapshots_before: int
    snapshots_after: int
    seconds: float


def compact(con: duckdb.DuckDBPyConnection, keep_hours: float) -> Compaction:
    """Flush inlined rows, merge adjacent files, expire snapshots older than `keep_hours`, and
    delete the files nothing reads any more."""
    import time
    from datetime import UTC, datetime, timedelta

    sql = _maintenance()
    start = time.perf_counter()
    def scalar(name: str) -> int:
        row = con.execute(sql[name]).fetchone()
        return int(row[0]) if row else 0

    files, snaps = scalar("count_data_files"), scalar("count_snapshots")
    for name in ("flush_inlined", "merge_files"):
        con.execute(sql[name])
    con.execute(sql["expire_snapshots"], {"older_than": datetime.now(UTC) - timedelta(hours=keep_hours)})
    con.execute(sql["cleanup_files"])
    return Compaction(files, scalar("count_data_files"), snaps, scalar("count_snapshots"),
                      time.perf_counter() - start)


def compact_url(db: object, keep_hours: float) -> Compaction:
    """Compact the lake `db` names (BadInput for a DuckDB file, which needs none of it)."""
    if not isinstance(db, str) or not is_lake(db):
        raise BadInput(f"--db {db} is a DuckDB file; `seqk lake compact` works on a lake (ducklake:...)")
    with session(db, False) as con:
        return compact(con, keep_hours)
