"""A DuckLake as the store: one results database for a team, written by many processes at once.

The URL names the catalog (PostgreSQL, where DuckLake keeps its metadata and commits) and,
after `;data=`, where the Parquet files go (S3 or a local/shared folder):

    ducklake:postgres:dbname=seqk host=db.lab port=5432 user=seqk;data=s3://bucket/seqk/
    ducklake:postgres:dbname=seqk host=127.0.0.1 port=5433 user=me;data=/shared/seqk-lake/

`data=` is needed once, when the lake is created; DuckLake remembers it. Credentials never go in
the URL and are never stored: PostgreSQL's come from libpq's environment (PGPASSWORD, or
~/.pgpass); S3's from the AWS credential chain, as `seqk upload` finds them (seqk/store/s3.py).

What differs from a DuckDB file, and why:
- The lake's tables have no PRIMARY KEY (DuckLake has none); the views dedupe.
- Views and macros (sql/views.sql) live in each session's temporary catalog, never in the lake:
  a table macro stored in a lake broke every later session (seqk/store/schema.py).
- One connection per process, shared by its threads under a lock: two threads writing through
  one lake connection at once crashed DuckDB. A commit that loses a race with another process's
  is retried, bounded and jittered, inside DuckLake and then by seqk (seqk/store/lake_retry.py),
  never counted as a failure.
- The run lease is a set of PostgreSQL advisory locks, one per (run, task): two machines may
  run disjoint tasks of one run; the same task twice is refused (seqk/store/catalog.py).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from seqk.errors import BadInput, MissingExtra, NotFound
from seqk.store import catalog, lake_queries, queries, s3, schema
from seqk.store.database import Compaction, Database, T, limit_threads
from seqk.store.execute import Connection
from seqk.store.lake_retry import CommitRetry

PREFIX = "ducklake:"
CATALOG = "lake"
"""The name the lake is attached under in every session (sql/lake/ names it)."""
USE_CATALOG = "USE " + CATALOG
"""Statements hold no values from outside: the catalog name is this constant."""
EXTENSIONS = (("ducklake", "ducklake"), ("postgres_scanner", "postgres_scanner"), ("httpfs", "httpfs"),
              ("aws", "aws"))
"""(PyPI package suffix, extension name): the duckdb-extension-* wheels the `lake` extra installs."""


def names_lake(db: object) -> bool:
    """Whether a --db / $SEQK_DB / `db:` value names a lake rather than a DuckDB file."""
    return isinstance(db, str) and db.startswith(PREFIX)


@dataclass(frozen=True)
class Lake(Database):
    """A DuckLake: its PostgreSQL catalog and where its data files go."""

    catalog_dsn: str
    """The libpq connection string of the PostgreSQL catalog (no password)."""
    data_path: str | None
    """Where the Parquet files go (s3://bucket/prefix/ or a folder); None: as the lake recorded."""
    commit_interval_s: float = field(default=1.0, compare=False)
    """About once a second: each commit is a catalog transaction other writers may retry against."""
    shared_writes: bool = field(default=True, compare=False)
    retry: CommitRetry = field(default_factory=CommitRetry, compare=False)
    """How a commit that lost a race with another writer's is retried."""
    inline_rows: int = field(default=10, compare=False)
    """An insert of fewer rows goes into the catalog (PostgreSQL) instead of a Parquet file on S3
    (DuckLake's data inlining)."""

    @property
    def display(self) -> str:
        return PREFIX + "postgres:" + self.catalog_dsn + (f";data={self.data_path}" if self.data_path else "")

    @property
    def home(self) -> Path:
        return Path("runs")

    def exists(self) -> bool:
        """Whether the lake has been made, with seqk's tables (a read-only session opens, or is
        told it is missing)."""
        try:
            with self.connect(read_only=True):
                return True
        except NotFound:
            return False

    def writable_problem(self) -> str | None:
        return None  # the first connection says, in one line, what keeps it from the catalog

    @contextlib.contextmanager
    def connect(self, *, read_only: bool = False, wait_s: float = 30.0,
                checkpoint: bool = True) -> Iterator[Connection]:
        """The process's connection to the lake (made once, kept), held by this thread for the block."""
        key = (self.display, read_only)
        with _lock:
            con = _sessions.get(key)
            if con is None:
                # A fresh lake is initialised by the first ATTACH, and its tables created by the
                # first session: writers starting at once take turns, or PostgreSQL refuses the
                # second, and a reader waits for a set-up under way, to find the lake whole or not
                # at all.
                with catalog.setup_lock(self.catalog_dsn, shared=read_only):
                    con = self._attach(read_only)
                    try:
                        schema.ensure(con, schema.LAKE, where=f"the lake {self.display}", read_only=read_only)
                    except BaseException:
                        con.close()
                        raise
                _sessions[key] = con
            yield con

    def _attach(self, read_only: bool) -> Connection:
        con = duckdb.connect(":memory:")
        try:
            limit_threads(con)
            _load_extensions(con)
            for statement, value in self.retry.settings():
                con.execute(statement, [value])
            con.execute("SET ducklake_default_data_inlining_row_limit = ?", [int(self.inline_rows)])
            options = ["READ_ONLY"] if read_only else []
            if self.data_path and not read_only:
                options.append("DATA_PATH '" + self.data_path.replace("'", "''") + "'")
            target = "ducklake:postgres:" + self.catalog_dsn
            con.execute("ATTACH '" + target.replace("'", "''") + f"' AS {CATALOG}"
                        + (f" ({', '.join(options)})" if options else ""))
            con.execute(USE_CATALOG)
            data_path = self.data_path or lake_queries.get_data_path(con)
            if data_path and str(data_path).startswith("s3://"):
                s3.create_secret(con)
        except (MissingExtra, BadInput):
            con.close()
            raise
        except duckdb.Error as exc:
            con.close()
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if read_only and "does not exist" in first:
                raise NotFound(f"no lake at {self.display} yet (run `seqk run` against it first)") from None
            raise BadInput(f"cannot open the lake {self.display}: {first}") from None
        return con

    def retrying(self, write: Callable[[], T]) -> T:
        """`write()`, run again (bounded, jittered) while its commit loses races with other writers'."""
        return self.retry.run(write)

    def lease(self, run_id: str, task_indices: Sequence[int] = ()) -> contextlib.AbstractContextManager[None]:
        """PostgreSQL advisory locks on each of `task_indices`: other processes may run the run's
        other tasks."""
        return catalog.lease(self.catalog_dsn, run_id, task_indices)

    def finish(self, con: Connection, run_id: str | None) -> None:
        """The run stamped. (CHECKPOINT would compact the whole lake: `seqk lake compact` does
        that when asked.)"""
        if run_id is not None:
            queries.touch_run(con, run_id=run_id)

    def stamp(self) -> str:
        """The lake's current snapshot: every commit makes a new one."""
        with self.connect(read_only=True) as con:
            return str(lake_queries.current_snapshot(con))

    def compact(self, keep_hours: float) -> Compaction:
        """Flush inlined rows, merge adjacent files, expire snapshots older than `keep_hours`, and
        delete the files nothing reads any more."""
        with self.connect() as con:
            start = time.perf_counter()
            files, snaps = lake_queries.count_data_files(con), lake_queries.count_snapshots(con)
            lake_queries.flush_inlined(con)
            lake_queries.merge_files(con)
            lake_queries.expire_snapshots(con, older_than=datetime.now(UTC) - timedelta(hours=keep_hours))
            lake_queries.cleanup_files(con)
            return Compaction(int(files), int(lake_queries.count_data_files(con)), int(snaps),
                              int(lake_queries.count_snapshots(con)), time.perf_counter() - start)


def parse(url: str) -> Lake:
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
    return Lake(dsn, path)


# ---------------------------------------------------------------------------
# Sessions: one connection per process (and per read-only or not), kept until close_all.


_lock = threading.RLock()
_sessions: dict[tuple[str, bool], Connection] = {}


def _load_extensions(con: Connection) -> None:
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


def close_all() -> None:
    """Close this process's lake connections (tests, and a forked worker before it writes)."""
    with _lock:
        for con in _sessions.values():
            with contextlib.suppress(Exception):
                con.close()
        _sessions.clear()
