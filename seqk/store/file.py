"""A DuckDB file as the store (the default, runs/seqk.duckdb).

A run holds the file only for short, batched transactions: open, write a batch of whole
attempts, close. DuckDB lets one process hold a file at a time, so between those writes
`seqk status`, `seqk inspect` or a notebook can open it; whoever finds it held retries with
backoff instead of failing. Locks of seqk's own (a new file's creation, a run's lease) are OS
file locks under .seqk-locks/ beside the file, released by the kernel if a process dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import random
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from seqk.errors import BadInput, NotFound, RunConflict, StoreBusy
from seqk.store import queries, schema, template
from seqk.store.database import Compaction, Database, limit_threads
from seqk.store.execute import Connection

_LOCK_MESSAGE = re.compile(r"lock", re.IGNORECASE)
_OTHER_CONFIG = re.compile(r"same database file with a different configuration", re.IGNORECASE)


@dataclass(frozen=True)
class DuckDBFile(Database):
    """A DuckDB file."""

    path: Path
    commit_interval_s: float = 0.2
    shared_writes: bool = False

    @property
    def display(self) -> str:
        return str(self.path)

    @property
    def home(self) -> Path:
        return self.path.parent

    def exists(self) -> bool:
        return self.path.exists()

    def writable_problem(self) -> str | None:
        return unwritable_folder(self.path.absolute().parent)

    @contextmanager
    def connect(self, *, read_only: bool = False, wait_s: float = 30.0,
                checkpoint: bool = True) -> Iterator[Connection]:
        db = self.path
        if read_only and not db.exists():
            raise NotFound(f"no database at {db} (set --db or SEQK_DB, or run `seqk run` first)")
        if db.is_dir():
            raise BadInput(f"{db} is a folder; --db (or SEQK_DB) names a DuckDB file, e.g. {db / 'seqk.duckdb'}")
        if not read_only:
            try:
                db.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise BadInput(f"cannot create the folder of the database {db}: {exc.strerror}") from None
            if not _is_database(db):
                self._create()
        con = _open(db, read_only, wait_s)
        if read_only and not schema.current(con, schema.FILE):
            # An older seqk made it: bring it up to date with a brief read-write open, as any
            # `seqk run` would, since the queries call views and macros by their current names.
            con.close()
            upgrade = _open(db, False, wait_s)
            try:
                schema.ensure(upgrade, schema.FILE, where=f"the database {db}")
            finally:
                upgrade.close()
            con = _open(db, True, wait_s)
        try:
            if not read_only:
                if not checkpoint:
                    con.execute("PRAGMA disable_checkpoint_on_shutdown")
                schema.ensure(con, schema.FILE, where=f"the database {db}")
            yield con
        finally:
            con.close()

    def _create(self) -> None:
        """Build a new database under a private name, then rename it into place, whole.

        DuckDB creates the file empty and writes its header after: a process opening it in
        between is told it is "not a valid DuckDB database file". Creators take turns under a
        lock (released by the kernel if one dies); the first renames its file into place.
        """
        db = self.path
        with open(self._lock_folder() / (db.name + ".create.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if _is_database(db):
                return
            fresh = db.with_name(f".{db.name}.{os.getpid()}.creating")
            try:
                if not _from_template(fresh):
                    with duckdb.connect(str(fresh)) as con:
                        schema.ensure(con, schema.FILE, where=f"the database {db}")
                        con.execute("CHECKPOINT")  # all of it in the file: no .wal to carry along
                    template.keep(fresh)
                os.replace(fresh, db)
            except duckdb.Error as exc:  # e.g. a full disk: no database, and so no run, no call
                raise BadInput(f"cannot create the database {db}: {str(exc).splitlines()[0]}") from None
            finally:
                fresh.unlink(missing_ok=True)
                fresh.with_name(fresh.name + ".wal").unlink(missing_ok=True)

    def _lock_folder(self) -> Path:
        folder = self.path.parent / ".seqk-locks"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"cannot create {folder} beside the database {self.path}: {exc.strerror}") from None
        return folder

    @contextmanager
    def lease(self, run_id: str, task_indices: Sequence[int] = ()) -> Iterator[None]:
        """The whole run, for this process only: an OS file lock (task_indices are not split)."""
        db = self.path
        name = db.name + "." + hashlib.sha256(run_id.encode()).hexdigest()[:20] + ".lock"
        with open(self._lock_folder() / name, "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise RunConflict(f"run {run_id} is being run right now by {holder} on {db}; "
                                  f"wait for it, or stop it and run again") from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def finish(self, con: Connection, run_id: str | None) -> None:
        """The run stamped, and the write-ahead log folded into the file, since someone may copy
        the .duckdb without its .wal."""
        if run_id is not None:
            queries.touch_run(con, run_id=run_id)
        con.execute("CHECKPOINT")

    def stamp(self) -> str:
        """The file's and its write-ahead log's modification times and sizes."""
        parts = []
        for path in (self.path, Path(f"{self.path}.wal")):
            try:
                st = path.stat()
                parts.append(f"{st.st_mtime_ns}:{st.st_size}")
            except FileNotFoundError:
                parts.append("-")
        return "/".join(parts)

    def compact(self, keep_hours: float) -> Compaction:
        raise BadInput(f"--db {self.path} is a DuckDB file; `seqk lake compact` works on a lake (ducklake:...)")


def unwritable_folder(path: Path) -> str | None:
    """Why files cannot be written under the folder `path` (created if missing), or None: checked
    before a run or an export spends anything, so it never fails halfway."""
    if path.exists() and not path.is_dir():
        return f"{path} is a file, not a folder"
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, so the folder {path} cannot be made"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is not writable"
    if os.statvfs(existing).f_flag & os.ST_RDONLY:
        return f"{existing} is on a read-only file system"
    return None


def _is_database(db: Path) -> bool:
    # DuckDB refuses an empty file ("not a valid DuckDB database file"); an empty file holds
    # nothing, so it counts as no database yet.
    try:
        return db.stat().st_size > 0
    except FileNotFoundError:
        return False


def _from_template(fresh: Path) -> bool:
    """Make `fresh` a copy of the template database (seqk.store.template), opened once to check
    it; False (and nothing at `fresh`) when there is no usable template."""
    if not template.copy_to(fresh):
        return False
    try:
        with duckdb.connect(str(fresh)) as con:
            schema.ensure(con, schema.FILE, where=f"the template {fresh}")  # a no-op on a current one
        return True
    except duckdb.Error:
        template.discard()
        fresh.unlink(missing_ok=True)
        fresh.with_name(fresh.name + ".wal").unlink(missing_ok=True)
        return False


def _open(db: Path, read_only: bool, wait_s: float) -> Connection:
    deadline = time.monotonic() + wait_s
    delay = 0.005
    while True:
        try:
            con = duckdb.connect(str(db), read_only=read_only)
        except duckdb.Error as exc:
            if read_only and _OTHER_CONFIG.search(str(exc)):
                # This process holds the file read-write (a run's writer across batches,
                # seqk.run.writer): DuckDB opens no second, read-only instance of it, so the
                # reader reads through that one.
                read_only = False
                continue
            lock_conflict = isinstance(exc, duckdb.IOException) and bool(_LOCK_MESSAGE.search(str(exc)))
            # The other way round (a read-only block of this process open), a writer waits for it.
            lock_conflict = lock_conflict or bool(_OTHER_CONFIG.search(str(exc)))
            if not lock_conflict:
                raise BadInput(f"cannot open {db} as a DuckDB database: {exc}") from None
            if time.monotonic() > deadline:
                raise StoreBusy(f"{db} stayed locked by another process for {wait_s:.0f}s: {exc}") from None
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.2)
            continue
        # DuckDB draws its own progress bar on stdout, even into a pipe, for a statement that
        # takes over 2 s (registering 100,000 tasks on a loaded machine): seqk draws its own.
        # In Jupyter without ipywidgets DuckDB refuses to change the setting (its bar there is a
        # widget it cannot draw anyway), so the refusal is left as is.
        with contextlib.suppress(duckdb.InvalidInputException):
            con.execute("SET enable_progress_bar = false")
        try:
            limit_threads(con)
        except BaseException:
            con.close()
            raise
        return con
