"""The results database: one row per accepted partie, beside a tournament's logs (``results.sqlite``).

A partie's *summary* (:class:`PartieSummary`) is everything the tables
(:mod:`referee.tournaments.standings`) need from it, computed once from its deals: per seat
the bot's identity, groše, deals as actor and won, contracts by kind won/lost,
fleks given and won, faults by kind, R12.3 forfeits, decision counts and times,
and the groše each seat won from each other seat; with the duplicate group
(a key of its starting deck).  The tables aggregate summaries, whether they come
from logs (computed on the way) or from this database (stored when the
tournament accepted the unit's log).

The logs stay the truth: a row names its log and the log's SHA-256; ``marias
table --rebuild`` recreates the database from the logs (validating each one);
a resumed tournament keeps a log's rows only while the log exists with that hash.
One writer (the tournament's coordinator); WAL mode so that a ``marias table``
can read while it writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..logs import files
from ..seats.identity import file_sha256

DB_FILE = "results.sqlite"
SCHEMA_VERSION = 1
CONTRACT_KINDS = ("hra", "sedma", "sto", "betl", "durch", "proti")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS logs (
    log TEXT PRIMARY KEY,          -- path relative to the tournament folder
    sha256 TEXT NOT NULL,          -- the log file's SHA-256 when its rows were stored
    size INTEGER NOT NULL,
    sandbox TEXT NOT NULL,
    parties INTEGER NOT NULL,
    deals INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS partie (
    log TEXT NOT NULL REFERENCES logs(log) ON DELETE CASCADE,
    partie INTEGER NOT NULL,
    grp TEXT NOT NULL,             -- the duplicate group's deck key (SHA-256 of the starting deck, short)
    deals INTEGER NOT NULL,
    bot0 TEXT NOT NULL, bot1 TEXT NOT NULL, bot2 TEXT NOT NULL,
    fp0 TEXT, fp1 TEXT, fp2 TEXT,
    groše0 INTEGER NOT NULL, groše1 INTEGER NOT NULL, groše2 INTEGER NOT NULL,
    seats TEXT NOT NULL,           -- JSON: per seat actor, won, contracts, fleks, faults, decisions, ms, forfeits
    cross TEXT NOT NULL,           -- JSON [n01, n02, n12]: groše seat i won from seat j (i < j)
    PRIMARY KEY (log, partie)
);
"""


# ------------------------------------------------------------------ the summary of one partie

def deck_key(deck) -> str:
    """A short key of a starting deck: partie on the same deck (and bots) form a duplicate group."""
    return hashlib.sha256(",".join(str(c) for c in deck).encode()).hexdigest()[:16]


@dataclass(slots=True)
class SeatSummary:
    actor: int = 0
    actor_won: int = 0
    contracts: dict = field(default_factory=dict)  # kind -> [won, lost] (kinds with any)
    fleks_given: int = 0
    fleks_won: int = 0
    faults: dict = field(default_factory=dict)  # kind -> count
    decisions: int = 0
    ms_sum: float = 0.0
    ms_max: float = 0.0
    forfeits: list = field(default_factory=list)  # [from_deal, deals] per R12.3 forfeit

    def to_json(self) -> list:
        return [self.actor, self.actor_won, self.contracts, self.fleks_given, self.fleks_won, self.faults,
                self.decisions, self.ms_sum, self.ms_max, self.forfeits]

    @classmethod
    def from_json(cls, v: list) -> "SeatSummary":
        return cls(*v)


@dataclass(slots=True)
class PartieSummary:
    """What the tables need of one finished partie (computed once from its deals, stored in the database)."""

    source: str
    partie: int
    bots: tuple  # bot identity (label) at seats 0, 1, 2
    fingerprints: tuple
    totals: list
    deck: str  # deck_key of the starting deck
    deals: int
    seats: list  # three SeatSummary
    cross: list  # [n01, n02, n12]: groše seat i won from seat j

    @property
    def group(self) -> tuple:
        return (tuple(sorted(self.bots)), self.deck)

    def won_from(self, i: int, j: int) -> int:
        """Groše seat ``i`` won from seat ``j`` in this partie."""
        if i < j:
            return self.cross[i + j - 1]
        return -self.cross[i + j - 1]


def _outcome(components: list[dict], name: str) -> dict | None:
    for c in components:
        if c["name"] == name:
            return c
    if name == "hra":
        for c in components:
            if c["name"] == "tiche-sto":
                return c
    return None


def _side_won(c: dict, side: str) -> bool:
    return c["won"] if c["owner"] == side else not c["won"]


def summarize(p) -> PartieSummary:
    """The summary of a :class:`referee.tournaments.records.PartieRecord` (its deals read once)."""
    from ..rules.actions import ActionError, parse_action
    from .records import pair_flows

    seats = [SeatSummary(), SeatSummary(), SeatSummary()]
    net = [[0] * 3 for _ in range(3)]

    def flow(payments):
        for (payer, payee), g in pair_flows(list(payments)).items():
            net[payee][payer] += g
            net[payer][payee] -= g

    for f in p.forfeits:
        seats[f["seat"]].forfeits.append([int(f["from_deal"]), int(f.get("deals") or 0)])
        flow(f["payments"])
    for d in p.deals:
        res = d["result"]
        pay = res["payments"]
        flow(pay)
        comps = res.get("components") or []
        actor = res.get("actor")
        if actor is not None and comps:
            a = seats[actor]
            a.actor += 1
            if pay[actor] > 0:
                a.actor_won += 1
            hra_seen = any(c["name"] == "hra" for c in comps)
            for c in comps:
                name = c["name"]
                who, kind, won = None, None, None
                if name in ("hra", "sedma", "sto", "betl", "durch") and c["owner"] == "actor":
                    who, kind, won = actor, name, c["won"]
                elif name == "tiche-sto" and not hra_seen and (d.get("contract") or "hra") in ("hra", "sedma"):
                    who, kind, won = actor, "hra", _side_won(c, "actor")
                elif name in ("sedma-proti", "sto-proti"):
                    w = (d.get("proti") or {}).get(name.split("-")[0])
                    if w is not None:
                        who, kind, won = int(w), "proti", c["won"]
                if who is not None:
                    wl = seats[who].contracts.setdefault(kind, [0, 0])
                    wl[0 if won else 1] += 1
        for dec in d.get("decisions") or []:
            s = seats[dec["seat"]]
            ms = dec.get("ms")
            if ms is not None:
                s.decisions += 1
                s.ms_sum += ms
                s.ms_max = max(s.ms_max, ms)
            if dec.get("decision") == "flek" and str(dec.get("action", "")).startswith("flek"):
                try:
                    action = parse_action(dec["action"])
                except ActionError:
                    continue
                side = "actor" if dec["seat"] == actor else "defence"
                for w in action.words:
                    s.fleks_given += 1
                    c = _outcome(comps, w)
                    if c is not None and _side_won(c, side):
                        s.fleks_won += 1
        for f in d.get("faults") or []:
            k = str(f.get("kind"))
            fs = seats[f["seat"]].faults
            fs[k] = fs.get(k, 0) + 1
    return PartieSummary(p.source, p.partie, tuple(p.bots), tuple(p.fingerprints), list(p.totals),
                         deck_key(p.deck), len(p.deals), seats, [net[0][1], net[0][2], net[1][2]])


def summaries_of_log(path, records: list[dict], source: str | None = None) -> list[PartieSummary]:
    """The summaries of one log's finished partie (its records as read)."""
    from .records import records_from_log

    out = []
    for p in records_from_log(source or path, records):
        out.append(summarize(p))
    return out


# ------------------------------------------------------------------ the database


def db_path(folder) -> Path:
    return Path(folder) / DB_FILE


def connect(path, *, create: bool = False) -> sqlite3.Connection:
    """Open the database (WAL mode); ``create`` makes it (and its tables) if missing."""
    path = Path(path)
    if not create and not path.is_file():
        raise FileNotFoundError(f"{path}: no results database")
    con = sqlite3.connect(str(path), timeout=30.0)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA foreign_keys=ON")
    con.execute("PRAGMA synchronous=NORMAL")
    if create:
        con.executescript(_SCHEMA)
        con.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        con.commit()
    v = con.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    if v is None or v[0] != str(SCHEMA_VERSION):
        con.close()
        raise ValueError(f"{path}: results database of schema {v[0] if v else '?'}, this referee reads "
                         f"{SCHEMA_VERSION}; run `marias table --rebuild` on its folder")
    return con


def _row(log: str, s: PartieSummary) -> tuple:
    return (log, s.partie, s.deck, s.deals, *s.bots, *s.fingerprints, *s.totals,
            json.dumps([x.to_json() for x in s.seats], separators=(",", ":")),
            json.dumps(s.cross, separators=(",", ":")))


def store_log(con: sqlite3.Connection, log: str, sha256: str, size: int, sandbox: str,
              summaries: list[PartieSummary], *, commit: bool = True) -> None:
    """Store (or replace) one log's partie rows, in one transaction."""
    con.execute("DELETE FROM logs WHERE log=?", (log,))
    con.execute("INSERT INTO logs VALUES (?,?,?,?,?,?)",
                (log, sha256, size, sandbox, len(summaries), sum(s.deals for s in summaries)))
    con.executemany("INSERT INTO partie VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", [_row(log, s) for s in summaries])
    if commit:
        con.commit()


def forget_log(con: sqlite3.Connection, log: str) -> None:
    con.execute("DELETE FROM logs WHERE log=?", (log,))
    con.commit()


def stored_logs(con: sqlite3.Connection) -> dict[str, tuple[str, int]]:
    """log -> (sha256, size) of every log with rows."""
    return {log: (sha, size) for log, sha, size in con.execute("SELECT log, sha256, size FROM logs")}


def sandbox_of(path) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return str(json.loads(f.readline()).get("sandbox") or "none")
    except (OSError, ValueError, AttributeError):
        return "none"


def record_log(con: sqlite3.Connection, folder: Path, path: Path, sha256: str | None = None) -> int:
    """Summarize an accepted log (complete; checked by the caller) and store its rows: the number of partie."""
    from ..logs.log import read_log

    records, _problems = read_log(path)
    rel = os.path.relpath(path, folder)
    sums = summaries_of_log(path, records, source=str(path))
    store_log(con, rel, sha256 or file_sha256(path), path.stat().st_size, sandbox_of(path), sums)
    return len(sums)


def rebuild_from(folder, logs) -> tuple[int, int]:
    """Recreate ``folder``'s database from ``logs``, (path, records) of each log to hold (the caller
    chooses and checks them: :meth:`referee.tournaments.event.EventFolder.rebuild_db`), written aside
    and put in place at the end: (logs, partie) stored."""
    folder = Path(folder)
    target = db_path(folder)
    tmp = target.with_name(target.name + ".new")
    for p in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        p.unlink(missing_ok=True)
    con = connect(tmp, create=True)
    n_logs = n_partie = 0
    try:
        for path, records in logs:
            sums = summaries_of_log(path, records, source=str(path))
            store_log(con, os.path.relpath(path, folder), file_sha256(path), path.stat().st_size,
                      sandbox_of(path), sums, commit=False)
            n_logs += 1
            n_partie += len(sums)
        con.commit()
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    for suffix in ("-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    os.replace(tmp, target)
    for suffix in ("-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    return n_logs, n_partie


def resync(con: sqlite3.Connection, folder: Path, accepted: dict[str, str]) -> tuple[int, int]:
    """Make the database hold exactly the ``accepted`` logs (relative path -> SHA-256 of the file):
    rows of a log that is gone or whose hash changed are dropped, and an accepted log without rows
    (or with a different hash) is summarized and stored.  Returns (logs kept, logs stored now)."""
    have = stored_logs(con)
    for log, (sha, _size) in have.items():
        if accepted.get(log) != sha:
            con.execute("DELETE FROM logs WHERE log=?", (log,))
    con.commit()
    kept = stored = 0
    for log, sha in accepted.items():
        if have.get(log, (None,))[0] == sha:
            kept += 1
            continue
        record_log(con, folder, folder / log, sha)
        stored += 1
    return kept, stored


def iter_summaries(con: sqlite3.Connection, folder, skip: frozenset = frozenset()) -> Iterator[PartieSummary]:
    """Every stored partie, ordered as the tables read logs (by log path, then partie); the rows
    of the logs in ``skip`` (paths relative to the folder) left out."""
    folder = str(folder)
    bots_cache: dict = {}
    src_cache: dict = {}
    cur = con.execute("SELECT log, partie, grp, deals, bot0, bot1, bot2, fp0, fp1, fp2, groše0, groše1, groše2, "
                      "seats, cross FROM partie ORDER BY log, partie")
    for (log, n, grp, deals, b0, b1, b2, f0, f1, f2, g0, g1, g2, seats, cross) in cur:
        if skip and log in skip:
            continue
        src = src_cache.get(log)
        if src is None:
            src = src_cache[log] = str(Path(folder) / log)
        key = (b0, b1, b2, f0, f1, f2)
        bf = bots_cache.get(key)
        if bf is None:
            bf = bots_cache[key] = ((b0, b1, b2), (f0, f1, f2))
        yield PartieSummary(src, n, bf[0], bf[1], [g0, g1, g2], grp, deals,
                            [SeatSummary.from_json(v) for v in json.loads(seats)], json.loads(cross))


def identities(con: sqlite3.Connection, skip: frozenset = frozenset()) -> dict[str, set]:
    """label -> the fingerprints it was seen with (for ``label@fingerprint`` names), the logs in ``skip`` left out."""
    out: dict[str, set] = {}
    for s in range(3):
        if skip:
            rows = ((label, fp) for log, label, fp in con.execute(f"SELECT DISTINCT log, bot{s}, fp{s} FROM partie")
                    if log not in skip)
        else:
            rows = con.execute(f"SELECT DISTINCT bot{s}, fp{s} FROM partie")
        for label, fp in rows:
            out.setdefault(label, set()).add(fp)
    return out


def db_stats(con: sqlite3.Connection, skip: frozenset = frozenset()) -> tuple[int, int, list[str], int]:
    """(partie, deals, sandbox modes, logs) of the stored logs, those in ``skip`` left out."""
    if skip:
        rows = [(p, d, m) for log, p, d, m in con.execute("SELECT log, parties, deals, sandbox FROM logs")
                if log not in skip]
        return sum(r[0] for r in rows), sum(r[1] for r in rows), sorted({r[2] for r in rows}), len(rows)
    n, deals, logs = con.execute("SELECT COALESCE(SUM(parties),0), COALESCE(SUM(deals),0), COUNT(*) FROM logs").fetchone()
    modes = sorted({m for (m,) in con.execute("SELECT DISTINCT sandbox FROM logs")})
    return int(n), int(deals), modes, int(logs)


def check_against_logs(con: sqlite3.Connection, folder: Path, named: Iterable[Path],
                       recorded: dict | None = None) -> tuple[list[str], list[str], frozenset]:
    """``marias table``'s check of a results database against the tournament's logs and its journal:
    (notes, errors, the logs whose rows are left out).

    Each manifest log present is hashed: it counts only when its SHA-256 is the one ``units.journal``
    recorded when the unit was accepted (``recorded``: :meth:`referee.tournaments.event.EventFolder.recorded_hashes`) and
    its rows in the database are of that version; a log that differs from the record is an error (it
    was changed or replaced), a log not on record a note.  Rows of a log that is gone are counted (the
    database holds what was accepted) with a note; manifest logs without rows are noted."""
    from .records import not_recorded_note

    have = stored_logs(con)
    notes: list[str] = []
    errors: list[str] = []
    skip: set[str] = set()
    missing = gone = absent = 0
    named = list(named)
    for p in named:
        rel = os.path.relpath(p, folder)
        if not p.exists():
            absent += 1
            if rel in have:
                gone += 1
            continue
        if recorded is not None:
            want = recorded.get(p)
            try:
                actual = files.sha256(p)  # a regular file only: never a FIFO or /dev/zero
            except OSError as e:
                notes.append(f"{p}: cannot be read ({e.strerror or e}); left out")
                skip.add(rel)
                continue
            if actual != want:
                note, error = not_recorded_note(p, want, actual)
                (errors if error else notes).append(note)
                skip.add(rel)
                continue
            if rel in have and have[rel][0] != want:
                notes.append(f"{p}: its rows in {DB_FILE} are of another version of the log than the one on "
                             f"record; left out (`marias table --rebuild {folder}` recreates the database)")
                skip.add(rel)
                continue
        elif rel in have and p.stat().st_size != have[rel][1]:
            skip.add(rel)
            notes.append(f"{p}: not the log whose rows {DB_FILE} holds (another size); left out")
            continue
        if rel not in have:
            missing += 1
    if absent:  # as referee.tournaments.event.log_paths says it of a folder read from its logs
        notes.append(f"{folder}: {absent} of the {len(named)} units in its manifest have no log (not played yet)")
    if missing:
        notes.append(f"{folder}: {missing} log(s) not in {DB_FILE} (not accepted yet, or the database is old); "
                     f"`marias table --rebuild {folder}` recreates it from the logs")
    if gone:
        notes.append(f"{folder}: {gone} log(s) in {DB_FILE} are gone since they were accepted (their rows are "
                     f"counted); `marias table --rebuild {folder}` recreates it from the logs that are there")
    return notes, errors, frozenset(skip)


# ------------------------------------------------------------------ what a table's summaries come from

@dataclass
class Source:
    """The partie summaries behind a table, streamed where they come from one results database."""

    summaries: Iterable  # PartieSummary, in (log, partie) order
    fps_of: dict[str, set]
    partie: int
    logs: int
    deals: int
    sandboxes: list[str]
    notes: list[str]
    close: Any = None
    rejected: list[str] = field(default_factory=list)  # logs left out because they are not the ones on record


def db_readable(folder: Path, notes: list[str]) -> bool:
    """The database and its WAL files are regular files (SQLite is never handed a FIFO or a
    device), inside the folder being read; else a note, and the logs are read instead."""
    db = db_path(folder)
    try:
        files.refuse_special(db, Path(f"{db}-wal"), Path(f"{db}-shm"))
    except OSError as e:
        notes.append(f"{e.filename}: {e.strerror}; the tables are read from the logs instead")
        return False
    return True


@dataclass
class Stored:
    """A tournament's results database opened for its tables, checked against its logs and journal
    (:func:`check_against_logs`): what it counts, with the rows of logs not on record left out."""

    folder: Path
    con: sqlite3.Connection
    skip: frozenset
    notes: list[str]
    rejected: list[str]
    fps_of: dict[str, set]
    partie: int
    deals: int
    sandboxes: list[str]
    logs: int

    def summaries(self) -> Iterator[PartieSummary]:
        return iter_summaries(self.con, self.folder, self.skip)

    def close(self) -> None:
        self.con.close()


def open_stored(folder: Path, named: list[Path] | None, recorded: dict | None, problem: str | None = None) -> Stored:
    """``folder``'s database for its tables: ``named`` the logs its manifest plans and ``recorded`` their
    SHA-256 on record (None with ``problem`` when the manifest cannot be read: the rows are counted
    unchecked, and ``problem`` is noted)."""
    con = connect(db_path(folder))
    notes: list[str] = []
    errors: list[str] = []
    skip: frozenset = frozenset()
    if named is None:
        notes.append(problem or f"{folder}: no manifest")
    else:
        notes, errors, skip = check_against_logs(con, folder, named, recorded)
    partie, deals, modes, logs = db_stats(con, skip)
    return Stored(Path(folder), con, skip, notes, errors, identities(con, skip), partie, deals, modes, logs)
