"""The play page's addresses (mounted by :func:`referee.web.app.create_app`); the tables are
:mod:`referee.web.play`.

``POST /play`` opens a table (a form: for each seat ``you``, ``person`` or a bot; a name; a move
time) and sends the opener to his seat with its token in a cookie.  ``/play/T/S/join/TOKEN`` is
an invite link: it puts seat S's token in a cookie and goes to ``/play/T/S``, the seat's page.
The cookie (``marias-seat-S``, path ``/play/T``: sent to this table only, HttpOnly, SameSite=Lax)
admits its browser to the seat's page, its event stream, its answers and its quit, and to
``/play/T``, which leads back to the seat(s) this browser holds; a token of another seat is
refused (403).  The event stream sends each protocol line as ``event: line`` with its number as
the id (a reconnecting browser resumes from ``Last-Event-ID``), the table's state as ``event:
table`` whenever it changes (who sits, the deal, the line awaiting an answer, the log when
the table has ended), and ``event: end`` when nothing more will come.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import parse_qs, quote

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from .play import LIVE, PERSON, YOU, Place, Seating, Table, Tables

#: how often an open seat's stream looks for new lines (a line reaches its page within this)
POLL_S = 0.05
#: how long a seat's cookie lasts (a table lives as long as the server; this bounds a forgotten cookie)
COOKIE_S = 2 * 86_400


def cookie_name(seat: int) -> str:
    return f"marias-seat-{seat}"


def log_link(roots, path: Path) -> str | None:
    """The address of a play log's page, when its folder is served (relative to the served folder)."""
    real = path.resolve() if path.exists() else path
    for i, f in enumerate(roots.folders):
        if f == real or f in real.parents:
            return f"/log/{i}/{quote(roots.rel(i, real))}"
    return None


def seating_from(form: dict[str, str]) -> Seating:
    """The form of the index (``seat0``..``seat2``: you, person or a bot; ``name``; ``move_s``), or the
    short one (``seat``: yours, ``bot1``, ``bot2``: the others in order)."""
    try:
        move_s = int(form.get("move_s") or 0)
    except ValueError:
        raise ValueError("the move time is a number of seconds") from None
    if "seat0" in form or "seat1" in form or "seat2" in form:
        seats = tuple(str(form.get(f"seat{s}", "")) for s in range(3))
    else:
        try:
            mine = int(form.get("seat", "0"))
        except ValueError:
            raise ValueError("the seat is 0, 1 or 2") from None
        if mine not in (0, 1, 2):
            raise ValueError("the seat is 0, 1 or 2")
        bots = iter([str(form.get("bot1", "")), str(form.get("bot2", ""))])
        seats = tuple(YOU if s == mine else next(bots) for s in range(3))
    return Seating(seats, str(form.get("name", ""))[:200], move_s)


class PlayPages:
    """The routes of the tables, over the app's page maker, answer scrubbing and stopping flag."""

    def __init__(self, tables: Tables, roots, *, page, plain, answer_class, open_stream, tick_s: float):
        self.tables, self.roots = tables, roots
        self.page, self.plain, self.Answer, self.open_stream, self.tick_s = page, plain, answer_class, open_stream, tick_s

    def routes(self) -> list[Route]:
        return [
            Route("/play", self.open_table, methods=["POST"]),
            Route("/play/{table}", self.back_to_seat),
            Route("/play/{table}/{seat:int}", self.seat_page),
            Route("/play/{table}/{seat:int}/join/{token}", self.join),
            Route("/play/{table}/{seat:int}/events", self.events),
            Route("/play/{table}/{seat:int}/status", self.status),
            Route("/play/{table}/{seat:int}/sit", self.sit, methods=["POST"]),
            Route("/play/{table}/{seat:int}/answer", self.answer, methods=["POST"]),
            Route("/play/{table}/{seat:int}/quit", self.quit, methods=["POST"]),
        ]

    # ---------------------------------------------------------------- who may
    def _table(self, request: Request) -> Table:
        t = self.tables.get(request.path_params["table"])
        if t is None:
            raise Refused(404, "no such table (the server was restarted, or it ended long ago)")
        return t

    def _place(self, request: Request) -> tuple[Table, Place]:
        """The table and the seat of the request, when the request carries that seat's token; else
        404 (no such table or person's seat) or 403 (no token, or another's)."""
        t = self._table(request)
        seat = request.path_params["seat"]
        p = t.place(seat)
        if p is None:
            raise Refused(404, f"seat {seat} of this table is no person's" if seat in (0, 1, 2) else "no such seat")
        token = request.path_params.get("token") or request.cookies.get(cookie_name(seat))
        if not p.admits(token):
            raise Refused(403, f"seat {seat} of this table is open only to its person: follow the invite link "
                               f"for this seat (the token of another seat does not admit this one)")
        return t, p

    def _cookie(self, response: Response, t: Table, p: Place) -> Response:
        response.set_cookie(cookie_name(p.seat), p.token, max_age=COOKIE_S, path=f"/play/{t.id}",
                            httponly=True, samesite="lax")
        return response

    def _links(self, t: Table, p: Place) -> dict:
        """The log and the replay of its first deal in this seat's view, once the table has ended."""
        if t.state in LIVE or not t.log_path.exists() or t.log_path.stat().st_size == 0:
            return {}
        log = log_link(self.roots, t.log_path)
        if log is None:
            return {"log_file": t.log_path.name}
        if t.state != "finished" and t.deal < 2:
            return {"log": log}  # no deal of it was played to its end: nothing to review
        return {"log": log, "review": "/replay/" + log[len("/log/"):] + f"?partie=1&deal=1&seat={p.seat}"}

    def _status(self, t: Table, p: Place, sent: int | None = None) -> dict:
        """The seat's status; with ``sent`` (the lines a stream has sent), a line awaiting an answer
        that the stream has not sent yet is not named (the stream names it once it is sent)."""
        d = {**t.status(p), **self._links(t, p)}
        if sent is not None and d["awaiting"] is not None and d["awaiting"] > sent:
            d["awaiting"] = None
        return d

    # ---------------------------------------------------------------- pages
    async def open_table(self, request: Request):
        body = (await request.body()).decode("utf-8", "replace")
        form = {k: v[0] for k, v in parse_qs(body).items()}  # a urlencoded form (no multipart parser needed)
        try:
            t = await run_in_threadpool(self.tables.open, seating_from(form))
        except ValueError as e:
            return self.plain(str(e), 400)
        p = t.place(t.opener)
        return self._cookie(RedirectResponse(f"/play/{t.id}/{p.seat}", status_code=303), t, p)

    async def join(self, request: Request):
        try:
            t, p = self._place(request)
        except Refused as e:
            return e.response()
        return self._cookie(RedirectResponse(f"/play/{t.id}/{p.seat}", status_code=303), t, p)

    async def back_to_seat(self, request: Request):
        try:
            t = self._table(request)
        except Refused as e:
            return e.response()
        held = [s for s, p in t.places.items() if p.admits(request.cookies.get(cookie_name(s)))]
        if not held:
            return PlainTextResponse("you hold no seat at this table: an invite link gives one", 403)
        return RedirectResponse(f"/play/{t.id}/{held[0]}", status_code=303)

    async def seat_page(self, request: Request):
        try:
            t, p = self._place(request)
        except Refused as e:
            return e.response()
        base = f"/play/{t.id}/{p.seat}"
        again = {f"seat{s}": (YOU if s == p.seat else PERSON if s in t.places else c)
                 for s, c in enumerate(t.seating.seats)}
        return self.page(request, "play.html", f"table · seat {p.seat}", {
            "kind": "play", "table": t.id, "seat": p.seat, "events": base + "/events", "status": base + "/status",
            "answer": base + "/answer", "quit": base + "/quit", "sit": base + "/sit",
            "again": {**again, "move_s": str(t.seating.move_s)}})

    # ---------------------------------------------------------------- the seat's API
    async def status(self, request: Request):
        try:
            t, p = self._place(request)
        except Refused as e:
            return e.response()
        return self.Answer(self._status(t, p))

    async def events(self, request: Request):
        try:
            t, p = self._place(request)
        except Refused as e:
            return e.response()
        try:
            start = max(0, int(request.headers.get("last-event-id") or request.query_params.get("from") or 0))
        except ValueError:
            start = 0
        Answer = self.Answer

        async def stream():
            n, told = start, None
            while await self.open_stream(request):
                lines = await self._lines(t, p, n)
                for line in lines:
                    n += 1
                    yield f"id: {n}\nevent: line\ndata: {line}\n\n"
                status = Answer(self._status(t, p, n)).body.decode()  # scrubbed of the server's paths
                if status != told:
                    told = status
                    yield f"event: table\ndata: {status}\n\n"
                elif t.state not in LIVE and n >= len(p.lines):
                    yield "event: end\ndata: {}\n\n"
                    return
                elif not lines:
                    yield ": tick\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"cache-control": "no-store"})

    async def _lines(self, t: Table, p: Place, n: int) -> list[str]:
        """The seat's lines from ``n`` on, waiting up to a tick for one by looking every
        :data:`POLL_S`: a seat's page may stay open for hours and holds no worker thread meanwhile
        (those serve every other page; 16 tables of three people would take 48 of them)."""
        end = time.monotonic() + self.tick_s
        while True:
            lines = p.lines_from(n)
            if lines or t.state not in LIVE or time.monotonic() >= end:
                return lines
            await anyio.sleep(POLL_S)

    async def sit(self, request: Request):
        try:
            t, p = self._place(request)
        except Refused as e:
            return e.response()
        try:
            name = json.loads((await request.body()).decode("utf-8", "replace") or "{}").get("name", "")
        except (ValueError, AttributeError):
            return PlainTextResponse('send {"name": "..."}', 400)
        t.sit(p, str(name))
        return JSONResponse({"ok": True, "name": p.name})

    async def answer(self, request: Request):
        try:
            _, p = self._place(request)
        except Refused as e:
            return e.response()
        raw = (await request.body()).decode("utf-8", "replace").strip()
        why = p.answer(raw)
        if why is not None:
            return PlainTextResponse(why, 409)
        return JSONResponse({"ok": True})

    async def quit(self, request: Request):
        try:
            t, p = self._place(request)
        except Refused as e:
            return e.response()
        t.stop(f"{p.name or f'seat {p.seat}'} (seat {p.seat}) left the table")
        return JSONResponse({"ok": True})


class Refused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message

    def response(self) -> Response:
        return PlainTextResponse(self.message, self.status)
