"""Runs in and out of the store and the store's upkeep (seqk.api re-exports these): import
seq_k folders, upload an exported run, serve or bundle the web viewer, compact a lake."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from seqk.io.importing import ImportResult
    from seqk.io.s3 import UploadResult
    from seqk.store.database import Compaction, Database, DbLike
    from seqk.view.publish import BundleResult


def import_runs(folder: str | os.PathLike[str], db: DbLike = None) -> list[ImportResult]:
    """Import seq_k-style run folders (one, or a folder holding many) into the database (`seqk import`)."""
    from seqk.io.importing import import_tree

    return import_tree(folder, db)


def upload_run(run: str, db: DbLike = None, *, bucket: str | None = None,
           root: str | os.PathLike[str] | None = None) -> UploadResult:
    """Upload an exported run folder to s3://<bucket>/<run id>/ and verify it (`seqk upload`)."""
    from seqk.io.publish import upload

    return upload(run, bucket=bucket, root=root, db=db)


def view(db: DbLike = None, *, host: str = "127.0.0.1", port: int = 8000,
         on_ready: Callable[[str, Database], None] | None = None) -> None:
    """Serve the web viewer until interrupted (`seqk view`); `on_ready(url, database)` once it listens."""
    from seqk.view import check_db, serve

    database = check_db(db)
    serve(database, host=host, port=port, on_ready=(lambda url: on_ready(url, database)) if on_ready else None)


def bundle(to: str | os.PathLike[str], db: DbLike = None, *, runs: Sequence[str] = (),
           max_tasks: int = 200) -> BundleResult:
    """The viewer's pages as a static site under `to` (`seqk view --bundle`): the run list, each
    run's pages and the story of its first `max_tasks` tasks."""
    from seqk.view import bundle

    return bundle(Path(to), db, list(runs), max_tasks)


def compact(db: DbLike = None, *, keep_hours: float = 24.0) -> Compaction:
    """Merge a lake's small files and expire snapshots older than `keep_hours` (`seqk lake compact`)."""
    from seqk import store

    return store.open(db).compact(keep_hours)
