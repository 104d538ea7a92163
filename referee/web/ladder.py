"""A ladder in ``marias serve`` (issue 37.5 and 37.6): its leaderboard, live; a version's page with its
rating history and its games (each linked to the log page and the replayer); uploads of new bots
by their authors; an author's own stderr.

A served folder that holds ``ladder.json``, or holds such a folder anywhere below it, is shown as
a ladder (:mod:`referee.web.folders`).  Its data come from :class:`referee.ladder.folder.LadderFolder`
(the same data API ``marias ladder table`` reads) after the files it opens are checked inside the
ladder folder (:func:`referee.logs.files.check`: a regular file, no FIFO or device, no symbolic link
out), so a hostile folder gets a note, never a hang.  Of a ladder folder only its logs are served as
files (:func:`referee.web.folders.Roots.resolve`); its seed, tokens' hashes, uploads and the bots'
stderr never are.

Routes (``ROOT/PATH`` is the ladder folder as the other pages name folders):

=======================================  ==================================================
``GET /ladder/ROOT/PATH``                the leaderboard page (``?version=ID``: a version's)
``GET /api/ladder/ROOT/PATH``            its data (``?version=ID``: a version's history, games)
``GET /events/ladder/ROOT/PATH``         server-sent events: ``data`` whenever the ladder changed
``POST /upload/ladder/ROOT/PATH``        an upload: the archive as the body, ``?name=&command=``
                                         ``[&build=]``, ``Authorization: Bearer TOKEN``
``GET /api/ladder-stderr/ROOT/PATH``     ``?version=ID`` with the author's token: its stderr
=======================================  ==================================================

An upload must come with the server's own Origin like every POST here (:class:`referee.web.app.Headers`),
so a page of another site cannot send one with a token it stole into a form; its body is read as it
arrives into a private temporary file and refused (413) as soon as it passes the archive cap, before
it is unpacked.  Uploads are built and checked one at a time (:data:`UPLOADS_AT_ONCE`), in threads, never on
the event loop.  The answer is JSON: ``{"ok": true, "version": ...}`` or ``{"ok": false, "step",
"error", ...}`` (:class:`referee.ladder.submissions.UploadRefused`) with its HTTP status.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
import zlib
from pathlib import Path
from urllib.parse import quote

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..ladder.folder import CONFIG_FILE, DB_FILE, LadderError, LadderFolder
from ..ladder.submissions import UploadRefused, author_of, author_stderr, submit
from ..ladder.unpack import UnpackLimits
from ..logs import files
from .folders import LADDER_FILE, Refused

#: Uploads built and checked at once (the others wait their turn).
UPLOADS_AT_ONCE = 1
#: The most games listed on a version's page (newest first).
GAMES_LISTED = 500
#: Rating history points sent for the plot (sampled evenly, the last one always kept).
HISTORY_POINTS = 1000
#: Decompressed copies of a ladder's old logs (``.jsonl.gz``) kept for the log pages and replays.
PLAIN_LOGS_KEPT = 64


# ------------------------------------------------------------------ reading a ladder folder


def _checked(folder: Path) -> LadderFolder:
    """The ladder in ``folder`` once the files it opens are regular files inside it (``OSError``
    naming the file otherwise, ``LadderError`` when it is no ladder)."""
    with files.confined(folder):
        files.check(folder / CONFIG_FILE)
        files.refuse_special(*(folder / (DB_FILE + s) for s in ("", "-wal", "-shm")))
    return LadderFolder.open(folder)


def signature(folder: Path) -> tuple:
    """Changes whenever the ladder's database does (every committed partie, group, version)."""
    out = []
    for s in ("", "-wal"):
        try:
            st = os.stat(folder / (DB_FILE + s))
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


def _sampled(rows: list, n: int) -> list:
    if len(rows) <= n:
        return rows
    idx = sorted({round(k * (len(rows) - 1) / (n - 1)) for k in range(n)})
    return [rows[i] for i in idx]


def leaderboard_data(folder: Path) -> dict:
    """The leaderboard page's data: one row per version (best first), the counts, the settings shown."""
    folder = Path(folder)
    lad = _checked(folder)
    rows = []
    for rank, r in enumerate(lad.leaderboard(), 1):
        rows.append({"rank": rank, "id": r["id"], "name": r["name"], "author": r["author"], "rating": r["rating"],
                     "pm": (r["high"] - r["low"]) / 2, "low": r["low"], "high": r["high"], "groups": r["groups"],
                     "games": r["games"], "faults": r["faults"], "groše": r["groše"], "last_played": r["last_played"],
                     "status": r["status"], "reason": r["reason"]})
    cfg = lad.config()
    return {"name": folder.name, "signature": list(signature(folder)), "computed": time.time(), "leaderboard": rows,
            "counts": lad.counts(), "rating": cfg.get("rating"), "groups_per_table": cfg.get("groups_per_table")}


def version_data(folder: Path, version_id: str) -> dict:
    """A version's page: what it is, its row of the leaderboard, its rating after each group, its
    difference with each version it met (groše per partie, from its side, with the interval and LOS of
    :meth:`LadderFolder.pairs`), its newest games (each with the log's path relative to the ladder folder)."""
    folder = Path(folder)
    lad = _checked(folder)
    try:
        v = lad.version(version_id)
    except LadderError:
        raise Refused(404, f"no version {version_id!r} in this ladder") from None
    row = next((r for r in lad.leaderboard() if r["id"] == version_id), None)
    history = lad.history(version_id)
    games = []
    for g in lad.games(version_id, limit=GAMES_LISTED):
        log = str(g["log"]).replace(os.sep, "/")
        games.append({"id": g["id"], "group": g["group"], "time": g["time"], "seat": g["seat"],
                      "others": g["others"], "groše": g["groše"], "faults": g["faults"], "log": log,
                      "replayable": log.endswith((".jsonl", ".jsonl.gz")) and (folder / log).is_file()})
    pairs = []
    for p in lad.pairs():
        if version_id not in (p.a, p.b):
            continue
        e, mine = p.estimate, p.a == version_id
        los = e.los
        pairs.append({"against": p.b if mine else p.a, "groups": e.n, "diff": e.mean if mine else -e.mean,
                      "pm": e.half, "los": None if los is None else (los if mine else 1 - los)})
    pairs.sort(key=lambda r: (-r["groups"], r["against"]))
    return {"name": folder.name, "signature": list(signature(folder)), "computed": time.time(), "pairs": pairs,
            "version": {k: v.get(k) for k in ("id", "name", "version", "author", "command", "status", "reason", "added")},
            "row": row, "history": _sampled(history, HISTORY_POINTS), "history_count": len(history), "games": games,
            "games_listed": GAMES_LISTED}


# ------------------------------------------------------------------ a ladder's compressed logs


def _plain_logs_folder() -> Path:
    """A private folder (per user, 0700) for the decompressed copies of old logs."""
    d = Path(tempfile.gettempdir()) / f"marias-serve-logs-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(d, 0o700)
    st = os.lstat(d)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise OSError(f"{d} is not a private folder of this user: not used")
    return d


def plain_log(path: Path, max_bytes: int) -> Path:
    """A plain copy of the gzipped log ``path`` (a ladder's log once old) for the log page and the
    replayer, which read logs by offset: decompressed once into a private folder (the last
    :data:`PLAIN_LOGS_KEPT` kept), and refused (413) past ``max_bytes`` decompressed."""
    st = os.stat(path)
    key = hashlib.sha256(f"{os.path.realpath(path)}\0{st.st_mtime_ns}\0{st.st_size}".encode()).hexdigest()[:24]
    cache = _plain_logs_folder()
    home = cache / key  # the copy keeps the log's own name (the pages show it)
    out = home / path.name[:-3]
    if out.exists():
        with contextlib.suppress(OSError):
            os.utime(home)
        return out
    home.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=home, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f, files.open_regular(path) as raw, gzip.GzipFile(fileobj=raw) as z:
            n = 0
            while chunk := z.read(1 << 20):
                n += len(chunk)
                if n > max_bytes:
                    raise Refused(413, f"{path.name}: more than the {max_bytes / 2**20:g} MB served once decompressed")
                f.write(chunk)
        os.replace(tmp, out)
    except (OSError, EOFError, zlib.error) as e:
        raise Refused(422, f"{path.name}: cannot be decompressed ({getattr(e, 'strerror', None) or e})") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)

    def age(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:  # removed meanwhile by another request
            return 0.0

    kept = sorted(cache.iterdir(), key=age, reverse=True)
    for old in kept[PLAIN_LOGS_KEPT:]:
        shutil.rmtree(old, ignore_errors=True)
    return out


# ------------------------------------------------------------------ the routes


def bearer(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header, or None."""
    h = request.headers.get("authorization", "")
    scheme, _, value = h.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def ladder_routes(roots, scrub, page, *, upload_limits: UnpackLimits = UnpackLimits(), build_sandbox: str = "bwrap",
                  live_tick_s: float = 1.0, stopping=None) -> list[Route]:
    """The ladder's routes for :func:`referee.web.app.create_app`: ``roots`` (the served folders),
    ``scrub`` (the server's paths out of answers), ``page`` (renders a template)."""
    limiter: dict[str, anyio.CapacityLimiter] = {}

    class Answer(JSONResponse):
        def render(self, content) -> bytes:
            return scrub.json(super().render(content))

    def refused(e: Refused) -> Response:
        return Answer({"ok": False, "error": scrub.text(e.message)}, e.status)

    def ladder_folder(request: Request) -> tuple[Path, int, str]:
        root, rel = int(request.path_params["root"]), request.path_params.get("path") or "."
        folder = roots.resolve(root, rel, want="dir")
        if not (folder / LADDER_FILE).is_file():
            raise Refused(404, f"{rel}: not a ladder folder (no {LADDER_FILE})")
        return folder, root, rel

    async def data(fn, *args):
        try:
            return Answer(await run_in_threadpool(fn, *args))
        except Refused as e:
            return refused(e)
        except (OSError, ValueError, LadderError) as e:  # whatever the folder holds: a note, never a 500
            return Answer({"ok": False, "error": scrub.text(f"cannot read the ladder: {getattr(e, 'strerror', None) or e}"
                                                            f"{' (' + e.filename + ')' if getattr(e, 'filename', None) else ''}")}, 422)

    async def ladder_page(request: Request):
        try:
            folder, root, rel = ladder_folder(request)
        except Refused as e:
            return refused(e)
        q = f"{root}/{'' if rel == '.' else rel}"
        version = request.query_params.get("version")
        common = {"root": root, "rel": rel, "events": f"/events/ladder/{q}", "board": f"/ladder/{q}",
                  "log_base": f"{root}/{'' if rel == '.' else rel + '/'}"}
        if version:
            return page(request, "ladder_version.html", f"{folder.name} · {version}", {
                "kind": "ladder-version", **common, "version": version,
                "api": f"/api/ladder/{q}?version={quote(version)}", "stderr": f"/api/ladder-stderr/{q}?version={quote(version)}"})
        return page(request, "ladder.html", folder.name, {"kind": "ladder", **common, "api": f"/api/ladder/{q}",
                                                          "upload": f"/upload/ladder/{q}"})

    async def ladder_api(request: Request):
        try:
            folder, _, _ = ladder_folder(request)
        except Refused as e:
            return refused(e)
        version = request.query_params.get("version")
        return await (data(version_data, folder, version) if version else data(leaderboard_data, folder))

    async def ladder_events(request: Request):
        try:
            folder, _, _ = ladder_folder(request)
        except Refused as e:
            return refused(e)

        async def stream():
            last = None
            while not (stopping is not None and stopping.is_set()) and not await request.is_disconnected():
                sig = await run_in_threadpool(signature, folder)
                if sig != last:
                    last = sig
                    yield f"event: data\ndata: {json.dumps({'signature': list(sig)})}\n\n"
                else:
                    yield ": tick\n\n"
                await asyncio.sleep(live_tick_s)

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"cache-control": "no-store"})

    async def receive_archive(request: Request, cap: int) -> str:
        """The body, written as it arrives into a private temporary file (its path); :class:`UploadRefused`
        (413) as soon as it passes ``cap`` bytes."""
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            raise UploadRefused("archive", 413, f"the archive is {declared} bytes, more than the {cap / 2**20:g} MB "
                                                f"allowed", rule="archive-size")
        fd, path = tempfile.mkstemp(prefix="marias-upload-", suffix=".archive")
        got = 0
        try:
            with os.fdopen(fd, "wb") as f:
                async for chunk in request.stream():
                    got += len(chunk)
                    if got > cap:
                        raise UploadRefused("archive", 413, f"the archive passes the {cap / 2**20:g} MB allowed",
                                            rule="archive-size")
                    await run_in_threadpool(f.write, chunk)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        return path

    async def upload(request: Request):
        try:
            folder, _, _ = ladder_folder(request)
        except Refused as e:
            return refused(e)
        token = bearer(request)
        q = request.query_params
        path = None
        try:
            if await run_in_threadpool(author_of, folder, token) is None:  # before a byte of the body is read
                raise UploadRefused("token", 401, "no valid token (send Authorization: Bearer TOKEN; a token is made "
                                                  "by marias ladder token DIR AUTHOR, and may have been revoked)")
            sandbox = (await run_in_threadpool(_checked, folder)).config().get("sandbox")
            if sandbox == "none":
                raise UploadRefused("sandbox", 503, "this ladder runs its bots without a sandbox (ladder.json "
                                                    "sandbox: none): it takes no uploads")
            path = await receive_archive(request, upload_limits.archive_bytes)
            if "uploads" not in limiter:
                limiter["uploads"] = anyio.CapacityLimiter(UPLOADS_AT_ONCE)
            async with limiter["uploads"]:
                result = await run_in_threadpool(
                    lambda: submit(folder, token, path, q.get("name", ""), q.get("command", ""), q.get("build"),
                                   unpack_limits=upload_limits, sandbox=build_sandbox))
        except UploadRefused as e:
            return Answer(e.to_dict(), e.status)
        except (OSError, ValueError, LadderError) as e:
            return Answer({"ok": False, "step": "entry", "error": f"the upload failed on the server: {e}"}, 500)
        finally:
            if path is not None:
                with contextlib.suppress(OSError):
                    os.unlink(path)
        return Answer(result, 201)

    async def stderr(request: Request):
        try:
            folder, _, _ = ladder_folder(request)
        except Refused as e:
            return refused(e)
        try:
            out = await run_in_threadpool(author_stderr, folder, bearer(request), request.query_params.get("version", ""))
        except UploadRefused as e:
            return Answer({"ok": False, "error": e.message}, e.status)
        return Answer({"ok": True, "version": request.query_params.get("version"), "files": out})

    return [
        Route("/ladder/{root:int}/{path:path}", ladder_page),
        Route("/api/ladder/{root:int}/{path:path}", ladder_api),
        Route("/events/ladder/{root:int}/{path:path}", ladder_events),
        Route("/upload/ladder/{root:int}/{path:path}", upload, methods=["POST"]),
        Route("/api/ladder-stderr/{root:int}/{path:path}", stderr),
    ]
