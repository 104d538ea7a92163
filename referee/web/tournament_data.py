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
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from ..logs import files
from ..tournaments import head_to_head as D
from ..tournaments import standings as S
from ..tournaments.event import EventFolder, gather
from ..tournaments.sprt import SPRTState

#: At most this many points per bot in the cumulative groše plot (the curve is sampled evenly).
CURVE_POINTS = 400
SERIES = 10
MAX_LOGS_LISTED = 5000


def signature(folder: Path) -> tuple:
    """Changes whenever a running event accepts a unit (or is stopped, resumed or extended)."""
    return EventFolder(folder).signature()


def progress(folder: Path, done: int) -> dict:
    """Units planned and done, the run's state and an ETA from the journal's recent pace."""
    with files.confined(folder):
        return EventFolder(folder).status(done)


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


def _log_names(folder: Path, sources: set) -> list[str]:
    """The logs behind the tables, relative to the folder (string work: a season has 100,000 of them)."""
    prefix = str(folder) + os.sep
    names = sorted(x[len(prefix):] if x.startswith(prefix) else os.path.relpath(x, folder) for x in sources)
    return [n.replace(os.sep, "/") for n in names[:MAX_LOGS_LISTED]]


def duel_data(ev: EventFolder) -> tuple[dict, list[Path]]:
    """The head-to-head result with its LLR group by group (the SPRT replayed over the same samples), and
    the logs of the groups the test counts."""
    r, counted = ev.head_to_head()
    plan = D.plan_from_state(ev.config)
    st = SPRTState(plan.test)
    llr = []
    for x in r["samples"]:
        st = st.add(x)
        v = st.llr
        llr.append(v if v == v and abs(v) != float("inf") else None)
    r["llr_by_group"] = llr
    return r, counted


def tournament_data(folder: Path) -> dict:
    """Everything the page shows of one tournament or duel folder (every file read inside it)."""
    folder = Path(folder)
    with files.confined(folder):
        return _tournament_data(folder)


def _tournament_data(folder: Path) -> dict:
    ev = EventFolder(folder)
    out: dict = {"name": folder.name, "computed": time.time()}
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
        if out["progress"]["state"] == "decided":  # the page's word for a test that ended, whichever way
            out["progress"]["state"] = "finished"
    else:
        out["progress"] = ev.status(src.partie)
    out["logs"] = _log_names(folder, {p.source for p in t.parties})
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

    def get(self, folder: Path) -> dict:
        folder = Path(folder)
        sig = signature(folder)
        with self._lock:
            hit = self._entries.get(folder)
            took, ended = self._cost.get(folder, (0.0, 0.0))
            stale = hit is not None and hit[0] != sig
            if stale and folder not in self._computing and time.monotonic() - ended >= self.PACE * took:
                self._computing.add(folder)
                threading.Thread(target=self._background, args=(folder,), name="tables", daemon=True).start()
        if hit is not None:
            return hit[1]
        return self._compute(folder)

    def peek(self, folder: Path) -> dict | None:
        with self._lock:
            hit = self._entries.get(Path(folder))
        return hit[1] if hit else None
