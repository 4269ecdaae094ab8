"""The web viewer, `seqk view`: read runs as stories in a browser, or publish them as a
static site (`bundle`). Read-only over the store.

    from seqk import view
    view.runs_page("runs/seqk.duckdb").groups      # the data each page is built from
    view.bundle(Path("site"), "runs/seqk.duckdb")  # a static site that opens from file://

The store may be a DuckDB file or a lake (`ducklake:...`): the pages read it through the same
queries, and poll its `stamp` (a file's modification time, a lake's newest snapshot).

The web framework (Starlette, uvicorn) and Jinja are imported only by `serve` and `bundle`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from seqk import store
from seqk.view.pages import FILTERS, RunPage, RunsPage, run_page, runs_page
from seqk.view.story import TaskPage, task_page

if TYPE_CHECKING:
    from seqk.view.publish import BundleResult

__all__ = ["FILTERS", "RunPage", "RunsPage", "TaskPage", "bundle", "check_db", "run_page", "runs_page",
           "serve", "task_page"]


def check_db(db: store.DbLike) -> store.Database:
    """The store the viewer reads (a DuckDB file or a lake), opened once to check it: NotFound or
    BadInput from the store, in one line, before a server starts."""
    database = store.open(db)
    with database.connect(read_only=True):
        pass
    return database


def serve(db: store.DbLike = None, *, host: str = "127.0.0.1", port: int = 8000,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Serve the viewer until interrupted; `on_ready` receives its URL once it listens."""
    from seqk.view import app

    database = check_db(db)
    sock = app.listen(host, port)
    bound = sock.getsockname()[1]
    if on_ready is not None:
        shown = f"[{host}]" if ":" in host else host
        on_ready(f"http://{shown}:{bound}/")
    app.run_server(database, sock)


def bundle(folder: Path, db: store.DbLike = None, runs: tuple[str, ...] | list[str] = (),
           max_tasks: int = 200) -> BundleResult:
    """Write the viewer's pages as a static site under `folder` (see seqk.view.publish)."""
    from seqk.view import publish

    return publish.bundle(folder, check_db(db), runs, max_tasks)
