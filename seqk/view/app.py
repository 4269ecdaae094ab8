"""The web app of `seqk view`: Starlette routes over the page functions, served by uvicorn.

Each request opens the store read-only for one short read (a file's open retries a lock
conflict), so a run in progress keeps writing between batches. Pages poll /api/stamp, the
store's `stamp` (a file's size and modification time, a lake's newest snapshot) with the number of
verdicts computed since start; a page is cached until the stamp changes, so a poll that finds
nothing new renders nothing. The verdicts (what `seqk report --compare` says of each seq@k run)
are kept by the app (seqk.view.verdict_cache), computed again only when what they read changes,
and on worker threads: a page shows those not ready as computing and fills them in when done.
"""

from __future__ import annotations

import os
import re
import socket
from collections import OrderedDict
from collections.abc import Callable
from importlib import resources
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from seqk.errors import BadInput, NotFound, SeqkError, StoreBusy
from seqk.store import Database
from seqk.view import compare_render, pages, render, story
from seqk.view.compare import compare_page, compare_task_page
from seqk.view.verdict_cache import VerdictCache

_TASK = re.compile(r"(?P<run>.+)/tasks/(?P<index>\d+)")
_CACHED_PAGES = 64


def create_app(db: Database, *, cache: bool = True, verdicts: VerdictCache | None = None) -> Starlette:
    """The app over one store. `cache=False` renders every request afresh and reads the store for
    each (the verdicts are kept all the same: `verdicts`, a new VerdictCache of `db` by default)."""
    urls = render.Urls()
    rendered: OrderedDict[str, tuple[str, str]] = OrderedDict()
    kept = verdicts if verdicts is not None else VerdictCache(db)
    reads = pages.ReadsKept(db) if cache else None  # a page made again while nothing is written reads nothing

    def stamp() -> str:
        return f"{db.stamp()}/{kept.version}"

    def page(request: Request, make: Callable[[], str]) -> Response:
        if not db.exists():
            raise NotFound(f"no database at {db} (it was moved or deleted)")
        # the stamp before the page is made: a verdict done meanwhile makes the next poll refresh
        key, now = str(request.url.path) + "?" + str(request.url.query), stamp()
        hit = rendered.get(key)
        if cache and hit is not None and hit[0] == now:
            rendered.move_to_end(key)
            return HTMLResponse(hit[1])
        html = make()
        if cache:
            rendered[key] = (now, html)
            while len(rendered) > _CACHED_PAGES:
                rendered.popitem(last=False)
        return HTMLResponse(html)

    def index(request: Request) -> Response:
        return page(request, lambda: render.render_runs(pages.runs_page(db, kept=kept, reads=reads), urls))

    def runs(request: Request) -> Response:
        # The raw path, not Starlette's decoded one: a run id's slot may hold an encoded "/".
        raw = request.scope.get("raw_path") or request.url.path.encode()
        rest = raw.decode("latin-1").split("?", 1)[0].removeprefix("/runs/").rstrip("/")
        match = _TASK.fullmatch(rest)
        if match:
            run_id, index_ = render.run_id_of(match["run"]), int(match["index"])
            return page(request, lambda: render.render_task(story.task_page(run_id, index_, db), urls))
        run_id = render.run_id_of(rest)
        q = request.query_params
        try:
            number = int(q.get("page", "1"))
        except ValueError:
            raise NotFound(f"page {q.get('page')!r} is not a page number") from None
        return page(request, lambda: render.render_run(pages.run_page(
            run_id, db, filter=q.get("filter", "all"), search=q.get("q", ""), page=number, kept=kept,
            reads=reads), urls))

    def compare_form(request: Request) -> Response:
        # the run list's picker: two runs chosen, to their compare page
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        if not a or not b or a == b:
            return error_page(400, "pick two different runs to compare")
        return RedirectResponse(urls.compare(a, b), status_code=303)

    def compare(request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.url.path.encode()
        parts = [unquote(p) for p in raw.decode("latin-1").split("?", 1)[0].removeprefix("/compare/").rstrip("/")
                 .split("/")]
        q = request.query_params
        try:
            if len(parts) == 2:
                return page(request, lambda: compare_render.render_compare(compare_page(
                    parts[0], parts[1], db, filter=q.get("filter", "flips"), search=q.get("q", "")), urls))
            if len(parts) == 4 and parts[2] == "tasks" and parts[3].isdigit():
                return page(request, lambda: compare_render.render_compare_task(compare_task_page(
                    parts[0], parts[1], int(parts[3]), db), urls))
        except BadInput as exc:  # two runs that cannot be compared: the reader's request, not a failure
            return error_page(400, str(exc))
        raise NotFound("a compare page is /compare/<run a>/<run b>[/tasks/<n>], each run id one encoded segment")

    def api_stamp(request: Request) -> Response:
        return JSONResponse({"stamp": stamp()}, headers={"Cache-Control": "no-store"})

    def error_page(status: int, message: str) -> Response:
        return HTMLResponse(render.render_error(status, message, urls), status_code=status)

    async def not_found(request: Request, exc: Exception) -> Response:
        return error_page(404, str(getattr(exc, "detail", None) or exc) or "no such page")

    async def busy(request: Request, exc: Exception) -> Response:
        return error_page(503, f"{exc}; reload in a moment")

    async def refused(request: Request, exc: Exception) -> Response:
        return error_page(500, str(exc))

    async def crashed(request: Request, exc: Exception) -> Response:
        # Never a traceback on a page: the server's log has it.
        return error_page(500, f"seqk view failed on this page ({type(exc).__name__}); the server's log says more")

    static = StaticFiles(directory=str(resources.files("seqk.view") / "static"))
    return Starlette(
        routes=[Route("/", index), Route("/api/stamp", api_stamp), Mount("/static", static, name="static"),
                Route("/runs/{rest:path}", runs), Route("/compare", compare_form),
                Route("/compare/{rest:path}", compare)],
        exception_handlers={404: not_found, NotFound: not_found, StoreBusy: busy, BadInput: refused,
                            SeqkError: refused, Exception: crashed})


def listen(host: str, port: int) -> socket.socket:
    """A listening socket, so a taken port is the user's one-line error and not uvicorn's exit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise BadInput(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    os.set_inheritable(sock.fileno(), True)
    return sock


def run_server(db: Database, sock: socket.socket) -> None:
    """Serve until interrupted (Ctrl-C, SIGTERM)."""
    import uvicorn

    config = uvicorn.Config(create_app(db), log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
