"""What the tournament (or duel) page shows, computed by the library that ``marias table`` uses.

The folder is read through :class:`referee.tournaments.event.EventFolder` (its state, progress,
the head-to-head result of a duel, the partie its tables count).  Every number comes from
:mod:`referee.tournaments.standings` (``compute`` and ``build``: standings with intervals, pairs
with their interval and LOS, the cross table, the R10 series, ratings, contracts won and lost)
over what the folder gives (the results database where it has one, else its validated logs),
and for a duel the SPRT of :mod:`referee.tournaments.sprt` run over its groups again, group by
group, for the LLR plot.  Nothing is computed twice: this module only arranges those results
for a page (curves, progress).

:class:`TableCache` keeps the last result per folder, keyed by the folder's cheap signature
(:meth:`EventFolder.signature`: the files a running event changes, and whether it runs), so that
a page over a large database answers at once after the first computation, and a live page
recomputes only when a unit has been accepted or the run stopped.

A folder is read as :func:`referee.logs.files.confined` to itself: every file the readers open
(the manifest and the logs it names, the journal, the database, a duel's logs) must be a regular
file inside it; anything else is a note on that entry, never a page that hangs or fails.

The page also shows the event's set-up (:func:`setup`: the bots with their fingerprints, the
time control, the arrangements, the seed's commitment but never a secret seed) and its logs,
each with its bots and their groše (:func:`_log_entries`: from the partie the tables counted, so
no log is read for it); a page may ask for the logs of one bot (:func:`for_page`).  The index
shows each event's state and leader from the cache only (:func:`index_entry`): it never waits
for tables.
"""

from __future__ import annotations

import math
import os
import threading
import time
from pathlib import Path

from ..logs import files
from ..rules.partie import seed_sha256
from ..tournaments import head_to_head as D
from ..tournaments import standings as S
from ..tournaments.event import EventFolder, gather
from ..tournaments.sprt import SPRTState

#: At most this many points per bot in the cumulative groše plot (the curve is sampled evenly).
CURVE_POINTS = 400
SERIES = 10
#: A page lists at most this many logs (of one bot, when it asks for one; each with its bots and groše).
MAX_LOGS_LISTED = 2000


def signature(folder: Path) -> tuple:
    """Changes whenever a running event accepts a unit (or is stopped, resumed or extended)."""
    return EventFolder(folder).signature()


def progress(folder: Path, done: int) -> dict:
    """Units planned and done, the run's state and an ETA from the journal's recent pace."""
    with files.confined(folder):
        return EventFolder(folder).status(done)


def live_progress(folder: Path, data: dict) -> dict | None:
    """The progress a live page is told between two computations of its tables (``data``, the last):
    the event's state now and, while it runs, the units done and the ETA.  None for a duel that no
    longer runs: its state (decided, finished, stopped) comes with the tables that say why, which
    the cache is computing (a duel's state is read from its logs: not every second)."""
    with files.confined(folder):
        ev = EventFolder(folder)
        if ev.is_duel:
            st = ev.status(decision="not read") if ev.running() else None
            return st if st is not None and st["state"] == "running" else None
        return ev.status((data.get("progress") or {}).get("done", 0))


def _curves(t: S.Tournament) -> dict:
    """Each bot's cumulative groše over the partie it played (in the tables' order), sampled evenly."""
    runs: dict[str, list[int]] = {}
    for p in t.parties:
        for name, g in zip(p.bots, p.totals):
            c = runs.setdefault(name, [])
            c.append((c[-1] if c else 0) + g)
    out = {}
    for name, c in sorted(runs.items()):
        n = len(c)
        if n > CURVE_POINTS:
            idx = [round(k * (n - 1) / (CURVE_POINTS - 1)) for k in range(CURVE_POINTS)]
        else:
            idx = list(range(n))
        out[name] = {"x": [i + 1 for i in idx], "y": [c[i] for i in idx]}
    return out


def _contracts(play_rows: list[dict]) -> list[dict]:
    """Per contract kind, won and lost over the whole field (from the play table's per-bot counts)."""
    out = []
    for k in S.CONTRACT_KINDS:
        w = l = 0
        for r in play_rows:
            a, b = str(r.get(k, "0:0")).split(":")
            w, l = w + int(a), l + int(b)
        out.append({"contract": k, "won": w, "lost": l})
    return out


def _rel(folder: Path, source: str) -> str:
    prefix = str(folder) + os.sep
    return (source[len(prefix):] if source.startswith(prefix) else os.path.relpath(source, folder)).replace(os.sep, "/")


def _log_entries(folder: Path, parties) -> tuple[list[str], list[list]]:
    """The logs behind the tables, in order of their names, each with its bots and their groše (from the
    partie the tables counted: string work, no file read; a season has 100,000 of them): the bots' names,
    and per log ``[path relative to the folder, [bot index…], [groše…]]``, the best first."""
    by_log: dict[str, dict[str, int]] = {}
    for p in parties:
        totals = by_log.setdefault(p.source, {})
        for name, g in zip(p.bots, p.totals):
            totals[name] = totals.get(name, 0) + g
    names: dict[str, int] = {}
    out = []
    for source, totals in by_log.items():
        ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
        out.append([_rel(folder, source), [names.setdefault(n, len(names)) for n, _ in ranked], [g for _, g in ranked]])
    out.sort(key=lambda e: e[0])
    return list(names), out


def for_page(data: dict, bot: str | None = None) -> dict:
    """``data`` as a page gets it: at most :data:`MAX_LOGS_LISTED` logs, those of ``bot`` when one is
    named (a duel's tables name a bot's two seats NAME#SEAT: either counts), with how many there are."""
    all_logs = data.get("_logs") or []
    out = {k: v for k, v in data.items() if k != "_logs"}
    if bot:
        names = data.get("log_bots") or []
        ids = {i for i, n in enumerate(names) if n == bot or n.split("#")[0] == bot}
        all_logs = [e for e in all_logs if ids.intersection(e[1])]
    out["logs"] = all_logs[:MAX_LOGS_LISTED]
    out["logs_total"] = len(all_logs)
    out["logs_bot"] = bot or None
    return out


def duel_data(ev: EventFolder) -> tuple[dict, list[Path]]:
    """The head-to-head result with its LLR group by group (the SPRT replayed over the same samples), and
    the logs of the groups the test counts."""
    r, counted = ev.head_to_head()
    plan = D.plan_from_state(ev.config)
    st = SPRTState(plan.test)
    llr, clipped = [], []
    for k, x in enumerate(r["samples"], start=1):
        st = st.add(x)
        v = st.llr
        if math.isinf(v):  # every group the same: certain on its side; drawn at the bound it is past
            clipped.append({"group": k, "llr": str(v)})
            v = plan.test.upper if v > 0 else plan.test.lower
        llr.append(v if v == v else None)
    r["llr_by_group"] = llr
    r["llr_clipped"] = clipped
    return r, counted


def setup(ev: EventFolder) -> dict:
    """The event's set-up from its ``tournament.json``: format, arrangements, partie, the bots with their
    commands and fingerprints, the time control, the decks, and the seed's commitment (its SHA-256).
    A public seed is shown; a secret one never is (a resume with more partie deals from it still)."""
    body = ev.state() or {}
    cfg = body.get("config") or {}
    fps = cfg.get("fingerprints") or {}
    decks = body.get("decks") or ("secret seed" if body.get("seed_drawn") else "public seed")
    seed = cfg.get("seed")
    bots = [{"name": b.get("name"), "command": b.get("command"),
             "fingerprint": fps.get(b.get("name")) if isinstance(fps, dict) else None,
             "move_ms": b.get("move_ms"), "startup_ms": b.get("startup_ms")}
            for b in cfg.get("bots") or [] if isinstance(b, dict)]
    out = {"format": cfg.get("format"), "gauntlet": cfg.get("gauntlet"), "arrangements": cfg.get("arrangements"),
           "partie": cfg.get("partie"), "decks": decks, "deck_scope": (cfg.get("decks") or {}).get("scope"),
           "time": cfg.get("time") or {}, "faults": cfg.get("faults") or {}, "bots": bots,
           "created": body.get("created"), "units": body.get("units"),
           "seed_sha256": seed_sha256(seed) if isinstance(seed, (str, int)) and seed != "" else None,
           "seed": seed if decks == "public seed" and isinstance(seed, (str, int)) else None}
    if ev.is_duel:
        out["sprt"] = cfg.get("sprt")
    return out


def tournament_data(folder: Path) -> dict:
    """Everything the page shows of one tournament or duel folder (every file read inside it)."""
    folder = Path(folder)
    with files.confined(folder):
        return _tournament_data(folder)


def _tournament_data(folder: Path) -> dict:
    ev = EventFolder(folder)
    out: dict = {"name": folder.name, "computed": time.time()}
    try:
        out["setup"] = setup(ev)
    except ValueError as e:  # an unreadable tournament.json: the tables from the logs all the same
        out["setup"] = {"error": str(e)}
    counted: list[Path] | None = None
    if ev.is_duel:
        try:
            out["duel"], counted = duel_data(ev)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
            out["duel_error"] = str(e)
    # a duel plans its groups as it goes: its manifest names no unit, so the logs of the groups its test
    # counts are read (as `marias table` does: none finished after the decision)
    src = gather(counted) if counted is not None else ev.source()
    try:
        t = S.compute(src.summaries, src.fps_of)
    finally:
        src.close()
    tables = S.build(t, series=SERIES)
    out["tables"] = tables
    out["titles"] = {k: S.TITLES[k] + (f": the best {SERIES} partie" if k == "series" else "") for k in tables}
    out["notes"] = list(src.notes)
    if "duel" in out:
        out["notes"].insert(0, "a duel seats one bot twice in each partie: the tables tell its two seats apart as "
                               "NAME#SEAT, as marias table does; the head-to-head result above counts them together")
    out["footer"] = (f"{src.partie} partie from {src.logs} log(s), {src.deals} deals; "
                     f"sandbox: {', '.join(src.sandboxes) or '-'}")
    out["curves"] = _curves(t)
    out["contracts"] = _contracts(tables.get("play", []))
    if "duel" in out:
        out["progress"] = ev.status(decision=out["duel"]["decision"])
    else:
        out["progress"] = ev.status(src.partie)
    out["log_bots"], out["_logs"] = _log_entries(folder, t.parties)
    return out


class TableCache:
    """The last :func:`tournament_data` of each folder, recomputed when its :func:`signature` changes.

    The first request for a folder computes its data (``marias serve`` does it for every
    tournament in the background as it starts).  After that a request never waits for the
    tables: when the folder has changed it gets the last data at once while one recomputation
    runs in a thread of its own (a live page is told when it is done); so a page over a
    database of 100,000 partie answers in milliseconds even while its tournament runs.  A folder
    whose tables take long is recomputed at most every ``PACE`` times that long (a live page
    over a large season takes a fifth of a core, not a whole one)."""

    PACE = 5.0

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: dict[Path, tuple[tuple, dict]] = {}
        self._folder_locks: dict[Path, threading.Lock] = {}
        self._computing: set[Path] = set()
        self._cost: dict[Path, tuple[float, float]] = {}  # folder -> (seconds the last computation took, when it ended)

    def _compute(self, folder: Path) -> dict:
        with self._lock:
            flock = self._folder_locks.setdefault(folder, threading.Lock())
        with flock:
            sig = signature(folder)
            with self._lock:
                hit = self._entries.get(folder)
            if hit is not None and hit[0] == sig:
                return hit[1]
            t0 = time.monotonic()
            data = tournament_data(folder)
            with self._lock:
                self._entries[folder] = (sig, data)
                self._cost[folder] = (time.monotonic() - t0, time.monotonic())
            return data

    def _background(self, folder: Path) -> None:
        try:
            self._compute(folder)
        except Exception:  # noqa: BLE001 - the next request computes it again and shows the error
            pass
        finally:
            with self._lock:
                self._computing.discard(folder)

    def _lookup(self, folder: Path, start_missing: bool) -> tuple[dict | None, bool]:
        """The last data of ``folder`` and whether they are current; a recomputation is started in
        the background when they are stale (or missing, with ``start_missing``)."""
        sig = signature(folder)
        with self._lock:
            hit = self._entries.get(folder)
            took, ended = self._cost.get(folder, (0.0, 0.0))
            stale = hit[0] != sig if hit is not None else start_missing
            if stale and folder not in self._computing and time.monotonic() - ended >= self.PACE * took:
                self._computing.add(folder)
                threading.Thread(target=self._background, args=(folder,), name="tables", daemon=True).start()
        return (hit[1], not stale) if hit is not None else (None, False)

    def get(self, folder: Path) -> dict:
        folder = Path(folder)
        data, _fresh = self._lookup(folder, start_missing=False)
        return data if data is not None else self._compute(folder)

    def lookup(self, folder: Path) -> tuple[dict | None, bool]:
        """The last data and whether they are current, never waiting: what is missing or stale is
        computed in the background (for the index, which must not wait for any table)."""
        return self._lookup(Path(folder), start_missing=True)

    def peek(self, folder: Path) -> dict | None:
        with self._lock:
            hit = self._entries.get(Path(folder))
        return hit[1] if hit else None


def index_entry(folder: Path, cache: TableCache) -> dict:
    """What the index shows of an event: its state, partie done (and planned) and its leader, from
    the cached tables when they are current; else the state read now (a tournament's from its
    journal, a duel's only whether it runs: its decision needs its logs read) and the leader of the
    last tables computed, said to be so.  Never waits for tables (they are computed behind)."""
    folder = Path(folder)
    data, fresh = cache.lookup(folder)
    out: dict = {"state": None, "done": None, "total": None, "leader": None, "as_of": None}
    if data is not None and "progress" in data and fresh:
        prog = data["progress"]
    else:
        try:
            with files.confined(folder):
                ev = EventFolder(folder)
                prog = None if ev.is_duel and not ev.running() else ev.status(decision="not read")
        except (OSError, ValueError):
            prog = None
    if prog is not None:
        out.update(state=prog.get("state"), done=prog.get("done"), total=prog.get("total"))
    if data is not None:
        if data.get("duel"):
            out["leader"] = data["duel"].get("text")
        else:
            rows = (data.get("tables") or {}).get("standings") or []
            if rows:
                out["leader"] = f"{rows[0].get('bot')} {rows[0].get('groše'):+d} groše" if isinstance(rows[0].get("groše"), int) \
                    else str(rows[0].get("bot"))
        if not fresh:
            out["as_of"] = time.strftime("%H:%M:%S", time.localtime(data.get("computed", 0)))
    return out
