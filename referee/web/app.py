"""``marias serve``: the web application (Starlette), a thin shell over the library.

Pages: the index of the served folders (tournaments, duels, ladders, logs) with the play form; a
tournament or duel (:mod:`referee.web.tournament_data`, live over server-sent events); a ladder's
leaderboard and versions, and its authors' uploads (:mod:`referee.web.ladder`); a log
and each deal's replayer (:mod:`referee.web.log_data`) with the log's analysis, computed in a
pool of processes of its own (:mod:`referee.web.analyses`); the play page
(:mod:`referee.web.play`).  Every file is reached through :class:`referee.web.folders.Roots`;
nothing is loaded from the network.  The charts are uPlot (MIT; ``uPlot.iife.min.js`` and its
CSS from the npm package ``uplot`` 1.6.32, vendored in ``referee/web/static`` with its licence):
chosen over Chart.js for its size (50 KB against about 200 KB, which matters for the 500 KB a
page may weigh and for the self-contained report) and because it draws tens of thousands of
points on a canvas quickly (a season's cumulative curves).  Requests must name this server as their Host (DNS rebinding) and
POSTs must come from its own pages (an Origin of the same scheme, host and port), so another web site cannot drive it.

No request can hold the server: the folders are read through :mod:`referee.logs.files` (never
blocking on a FIFO or a device, never outside the folder), a log's data are streamed and a
replay reads three lines of its log (:mod:`referee.web.log_data`), and all file work runs in
threads, never on the event loop: reading logs in a pool of its own (:data:`LOG_THREADS`
threads), the rest in anyio's default pool (40 threads), so requests for large logs queue among
themselves while every other page answers.  A log that a match is still writing is neither
listed nor served (409), by whatever marias process writes it, the play page's own games
included: the play page knows no more than its seat.  Answers name files by their path
relative to the served folder, never by the server's absolute paths (:class:`Scrub`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import threading
from urllib.parse import quote, urlsplit
from pathlib import Path

import anyio

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from ..analysis.deals import Settings
from ..logs.log import BeingWritten, being_written
from .analyses import Analyses, Busy
from .folders import Refused, Roots, Scrub, ladder_of
from .ladder import ladder_routes, plain_log
from .lists import index_lists
from .log_data import LogError, open_log_data, replay_data
from .play import IDLE_MINUTES, MOVE_TIMES_S, Tables
from .play_routes import PlayPages
from .tournament_data import TableCache, for_page, live_progress

HERE = Path(__file__).parent
STATIC = HERE / "static"
TEMPLATES = Jinja2Templates(directory=str(HERE / "templates"))
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
LIVE_TICK_S = 1.0
#: Threads that read logs (the log page's data, replays): more requests for logs wait their turn,
#: while the other pages answer from anyio's default pool.
LOG_THREADS = 4


def same_origin(scope, headers: dict) -> bool:
    """The request's Origin is this server: the same scheme, host and port as the request was sent to."""
    origin, host = headers.get("origin"), headers.get("host")
    if not origin or not host:
        return False
    try:
        o, h = urlsplit(origin), urlsplit("//" + host)
        scheme = scope.get("scheme") or "http"
        default = {"http": 80, "https": 443}.get(scheme)
        return (o.scheme == scheme and o.hostname is not None and o.hostname == h.hostname
                and (o.port or default) == (h.port or default) and o.path in ("", "/") and not o.query)
    except ValueError:  # a port that is not a number
        return False


class Headers:
    """Security headers on every answer; POSTs only from this server's own pages (Origin)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope["method"] not in ("GET", "HEAD"):
            h = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            if not same_origin(scope, h):
                return await PlainTextResponse("refused: a POST must come from this server's own pages (Origin)",
                                               403)(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
                            (b"referrer-policy", b"same-origin"), (b"x-frame-options", b"DENY")]
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, send_with_headers)


def _refused(e: Refused) -> Response:
    return PlainTextResponse(e.message, status_code=e.status)


def _root(request: Request) -> tuple[int, str]:
    return int(request.path_params["root"]), request.path_params.get("path") or "."


def create_app(folders, *, play_dir: Path | None = None, extra_bots: dict[str, str] | None = None,
               allowed_hosts: list[str] | None = None, max_bytes: int | None = None, bot_move_ms: int = 2000,
               sandbox: str = "auto", table_idle_minutes: float = IDLE_MINUTES,
               build_sandbox: str = "bwrap", analysis: Settings = Settings(),
               analysis_processes: int | None = None) -> Starlette:
    roots = Roots(folders, **({"max_bytes": max_bytes} if max_bytes else {}))
    cache = TableCache()
    analyses = Analyses(analysis, **({"processes": analysis_processes} if analysis_processes else {}))
    tables = Tables(Path(play_dir) if play_dir else roots.folders[0] / "plays", extra_bots, bot_move_ms, sandbox,
                    table_idle_minutes)
    stopping = threading.Event()  # set when the server stops: the live streams end within a tick
    scrub = Scrub([*roots.folders, tables.log_dir])
    limiters: dict[str, anyio.CapacityLimiter] = {}

    class Answer(JSONResponse):
        def render(self, content) -> bytes:
            return scrub.json(super().render(content))

    def plain(text: str, status: int) -> Response:
        return PlainTextResponse(scrub.text(text), status)

    async def in_log_thread(fn, *args):
        """Run ``fn`` in the log readers' own pool (made on first use: it belongs to the event loop)."""
        if "logs" not in limiters:
            limiters["logs"] = anyio.CapacityLimiter(LOG_THREADS)
        return await anyio.to_thread.run_sync(functools.partial(fn, *args), limiter=limiters["logs"])

    async def streamed(pieces):
        """The pieces of a sync iterator, each made in the log readers' pool (the event loop never reads)."""
        end = object()
        try:
            while True:
                piece = await in_log_thread(next, pieces, end)
                if piece is end:
                    return
                yield piece
        finally:
            pieces.close()  # the file is closed even when the browser left half way

    async def open_stream(request: Request) -> bool:
        return not stopping.is_set() and not await request.is_disconnected()

    def page(request: Request, template: str, title: str, data: dict) -> Response:
        return TEMPLATES.TemplateResponse(request, template, {"title": title, "page": data, "inline": None})

    async def index(request: Request):
        bot = request.query_params.get("bot") or None
        lists = await run_in_threadpool(index_lists, roots, cache, bot)
        return TEMPLATES.TemplateResponse(request, "index.html", {
            "title": "the served folders", **lists,
            "roots": [f.name or "/" for f in roots.folders], "bots": tables.choices(), "tables": tables.in_progress(),
            "move_times": MOVE_TIMES_S, "idle_minutes": f"{tables.idle_s / 60:g}", "page": {"kind": "index"},
            "inline": None})

    # ------------------------------------------------------------------ tournaments and duels
    def _folder(request: Request) -> Path:
        root, rel = _root(request)
        return roots.resolve(root, rel, want="dir")

    async def tournament_page(request: Request):
        try:
            folder = _folder(request)
        except Refused as e:
            return _refused(e)
        root, rel = _root(request)
        q = f"{root}/{'' if rel == '.' else rel}"
        bot = request.query_params.get("bot") or None
        b = f"?bot={quote(bot)}" if bot else ""
        return page(request, "tournament.html", folder.name, {
            "kind": "tournament", "root": root, "rel": rel, "api": f"/api/tournament/{q}{b}", "events": f"/events/tournament/{q}{b}",
            "page": f"/tournament/{q}", "bot": bot})

    async def tournament_api(request: Request):
        try:
            folder = _folder(request)
            data = await run_in_threadpool(cache.get, folder)
        except Refused as e:
            return _refused(e)
        except Exception as e:  # noqa: BLE001 - whatever the folder holds, the page says why, the server goes on
            return plain(f"cannot table {folder.name}: {type(e).__name__}: {e}", 422)
        return Answer(for_page(data, request.query_params.get("bot")))

    async def tournament_events(request: Request):
        try:
            folder = _folder(request)
        except Refused as e:
            return _refused(e)

        bot = request.query_params.get("bot")

        async def stream():
            last, last_prog = None, None
            while await open_stream(request):
                try:
                    data = await run_in_threadpool(cache.get, folder)
                except Exception as e:  # noqa: BLE001 - shown on the page, the stream goes on
                    data = {"error": f"{type(e).__name__}: {e}", "computed": str(e)}
                if data.get("computed") != last:  # new tables (a unit was accepted, the run stopped or resumed)
                    last, last_prog = data.get("computed"), data.get("progress")
                    yield scrub.text(f"event: data\ndata: {json.dumps(for_page(data, bot), ensure_ascii=False)}\n\n")
                else:  # between two computations: the state now, the units done and the ETA
                    prog = None if "error" in data else await run_in_threadpool(live_progress, folder, data)
                    if prog is not None and prog != last_prog:
                        last_prog = prog
                        yield f"event: progress\ndata: {json.dumps(prog)}\n\n"
                    else:
                        yield ": tick\n\n"
                await asyncio.sleep(LIVE_TICK_S)

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"cache-control": "no-store"})

    # ------------------------------------------------------------------ logs and replays
    def _log(request: Request) -> tuple[Path, str]:
        """The log a request names (for a ladder's old, gzipped log: its decompressed copy); runs in a thread."""
        root, rel = _root(request)
        path = roots.resolve(root, rel, want="file")
        if rel.endswith(".jsonl.gz") and ladder_of(roots.folders[root], path) is not None:
            return plain_log(path, roots.max_bytes), f"{root}/{rel}"
        if not rel.endswith(".jsonl") or rel.endswith(".transcript.jsonl"):
            raise Refused(404, f"{rel}: not a log (a .jsonl file)")
        return path, f"{root}/{rel}"

    def _unread(rel: str, e: OSError) -> Response:
        """A log that cannot be read now: a match is writing it (409), or it is no regular file, or unreadable."""
        return plain(f"{rel}: {e.strerror or e}", 409 if isinstance(e, BeingWritten) else 422)

    async def _page_log(request: Request) -> tuple[Path, str]:
        """The log a page shows (its data come from the API): refused while a match writes it."""
        path, key = await run_in_threadpool(_log, request)
        if await run_in_threadpool(being_written, path):
            raise BeingWritten(path)
        return path, key

    async def log_page(request: Request):
        try:
            path, key = await _page_log(request)
        except Refused as e:
            return _refused(e)
        except BeingWritten as e:
            return _unread(_root(request)[1], e)
        return page(request, "log.html", path.name, {"kind": "log", "api": f"/api/log/{key}", "analysis": f"/api/analysis/{key}",
                                                      "replay_api": f"/api/replay/{key}", "replay": f"/replay/{key}"})

    async def log_api(request: Request):
        try:
            path, key = await run_in_threadpool(_log, request)
            pieces = await in_log_thread(open_log_data, path, key, scrub.json)  # opened, its header read
        except Refused as e:
            return _refused(e)
        except LogError as e:
            return plain(str(e), 422)
        except OSError as e:
            return _unread(_root(request)[1], e)
        return StreamingResponse(streamed(pieces), media_type="application/json")

    def _deal_args(request: Request) -> tuple[int, int]:
        try:
            return int(request.query_params.get("partie", "1")), int(request.query_params.get("deal", "1"))
        except ValueError:
            raise Refused(400, "partie and deal are numbers") from None

    def _position(request: Request) -> tuple[int | None, str]:
        """The replayer's step and view from its address (?step=17&seat=1): where a link opens it."""
        step, seat = request.query_params.get("step"), request.query_params.get("seat", "all")
        if (step is not None and not step.isdigit()) or seat not in ("all", "0", "1", "2"):
            raise Refused(400, "step is a number and seat is 0, 1, 2 or all")
        return (int(step) if step is not None else None), seat

    async def replay_page(request: Request):
        try:
            path, key = await _page_log(request)
            partie, deal = _deal_args(request)
            step, seat = _position(request)
        except Refused as e:
            return _refused(e)
        except BeingWritten as e:
            return _unread(_root(request)[1], e)
        return page(request, "replay.html", f"{path.name} · partie {partie} deal {deal}", {
            "kind": "replay", "api": f"/api/replay/{key}?partie={partie}&deal={deal}", "log": f"/log/{key}",
            "log_api": f"/api/log/{key}", "replay": f"/replay/{key}", "partie": partie, "deal": deal,
            "analysis": f"/api/analysis/{key}?partie={partie}&deal={deal}",
            "step": step, "seat": seat})

    async def replay_api(request: Request):
        try:
            path, key = await run_in_threadpool(_log, request)
            partie, deal = _deal_args(request)
            return Answer(await in_log_thread(replay_data, path, key, partie, deal, _root(request)[1],
                                              roots.folders[_root(request)[0]]))
        except Refused as e:
            return _refused(e)
        except LogError as e:
            return plain(str(e), 404)
        except OSError as e:
            return _unread(_root(request)[1], e)

    async def analysis_api(request: Request):
        """The log's analysis (referee/web/analyses.py) as far as it has gone; ?partie=&deal=: that deal's."""
        try:
            path, key = await _page_log(request)  # never a log a match is still writing
            only = _deal_args(request) if "deal" in request.query_params else None
            return Answer(await in_log_thread(analyses.status, path, key.split("/", 1)[1], only))
        except Refused as e:
            return _refused(e)
        except Busy as e:
            return plain(str(e), 503)
        except OSError as e:
            return _unread(_root(request)[1], e)

    routes = [
        Route("/", index),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/tournament/{root:int}/{path:path}", tournament_page),
        Route("/api/tournament/{root:int}/{path:path}", tournament_api),
        Route("/events/tournament/{root:int}/{path:path}", tournament_events),
        Route("/log/{root:int}/{path:path}", log_page),
        Route("/api/log/{root:int}/{path:path}", log_api),
        Route("/replay/{root:int}/{path:path}", replay_page),
        Route("/api/replay/{root:int}/{path:path}", replay_api),
        Route("/api/analysis/{root:int}/{path:path}", analysis_api),
        *PlayPages(tables, roots, page=page, plain=plain, answer_class=Answer, open_stream=open_stream,
                   tick_s=LIVE_TICK_S).routes(),
        *ladder_routes(roots, scrub, page, build_sandbox=build_sandbox, live_tick_s=LIVE_TICK_S, stopping=stopping),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or ["127.0.0.1", "localhost", "[::1]"]),
                  Middleware(Headers)]
    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        await run_in_threadpool(tables.stop_all)  # the tables in play end; their logs stay incomplete
        analyses.close()

    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.roots, app.state.cache, app.state.tables, app.state.stopping = roots, cache, tables, stopping
    app.state.scrub, app.state.analyses = scrub, analyses
    return app

