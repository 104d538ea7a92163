"""A ladder's folder and its database: the versions, the groups played, their ratings.

A ladder folder holds:

=====================  ===================================================================
``ladder.json``        the configuration: time limits, faults, sandbox, how many groups a
                       table plays, when a version is suspended, when logs are compressed
``seed.secret``        the secret seed (mode 0600), unless ``init`` was given a seed file
``ladder.sqlite``      the database (WAL): versions, groups, units (partie), ratings, their
                       history and the pairs' running sums; the one state of the ladder
``logs/UNIT.jsonl``    a partie's log (``.jsonl.gz`` once old), beside its bots' stderr
``invalid/``           a finished log that did not validate, kept for study
``.lock``              held (``flock``) by the one ``marias ladder run`` on the folder
``.marias-output``     the marker that hides the folder from every bot
=====================  ===================================================================

Every change is one SQLite transaction: a version added or retired, a group planned, a partie
accepted — and with the sixth partie of a group, its rating (the three versions' new ratings,
their history, the pair sums, the counts), so that a ``kill -9`` at any moment leaves either all
of it or none.  ``add`` and ``retire`` write while ``ladder run`` plays: the runner reads the
versions before it pairs each table, so they take effect without a restart.

The data API (:class:`LadderFolder`) serves ``marias ladder``, the web pages and the benchmark.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .rating import MU0, SIGMA0, Z95, PairDifference, Rating, pair_difference

CONFIG_FILE = "ladder.json"
CONFIG_FORMAT = "marias-ladder"
SEED_FILE = "seed.secret"
DB_FILE = "ladder.sqlite"
LOGS_DIR = "logs"
INVALID_DIR = "invalid"
LOCK_FILE = ".lock"
SCHEMA_VERSION = 1
STATUSES = ("active", "retired", "suspended")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$")
SEATINGS = ("012", "021", "102", "120", "201", "210")  # seat i holds the table's version int(s[i])

#: The configuration ``init`` writes (every key may be edited in ladder.json; ``ladder run`` reads it).
DEFAULTS = {
    "time": {"move_ms": 2000, "startup_ms": 10_000, "bank_ms": None, "increment_ms": 0},  # as a tournament's
    "stderr_kb": 64,  # a bot process's stderr kept, at most (the rest is cut): disk grows predictably
    "max_faults": 3,  # faults in a partie after which the bot forfeits the rest of it (R12.3)
    "sandbox": "auto",  # referee/seats/sandbox.py: auto | bwrap | required | none
    "groups_per_table": 4,  # a table plays this many groups (decks): each bot process plays that many partie warm
    "suspend": {"fault_rate": 1.0, "window": 24, "min_partie": 12},  # faults per partie over the last `window`
    "compress_after_hours": 24,  # a rated group's logs and stderr are gzipped once this old
    "cover_every": 4,  # every Nth table seats the pair that met least (protocol/TOURNAMENT.md, Ladder)
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
    id TEXT PRIMARY KEY,            -- name@N
    name TEXT NOT NULL, version INTEGER NOT NULL, author TEXT, command TEXT NOT NULL, cwd TEXT,
    fingerprint TEXT NOT NULL, listing TEXT NOT NULL,
    status TEXT NOT NULL, reason TEXT, added TEXT NOT NULL, changed TEXT,
    mu REAL NOT NULL, sigma REAL NOT NULL,
    groups INTEGER NOT NULL DEFAULT 0, games INTEGER NOT NULL DEFAULT 0, faults INTEGER NOT NULL DEFAULT 0,
    groše INTEGER NOT NULL DEFAULT 0, last_played TEXT,
    UNIQUE (name, version)
);
CREATE TABLE IF NOT EXISTS groups (
    n INTEGER PRIMARY KEY,          -- the group's number: its deck is derived from the secret seed and n
    tbl INTEGER NOT NULL,           -- the table it belongs to (a table plays groups_per_table groups)
    v0 TEXT NOT NULL, v1 TEXT NOT NULL, v2 TEXT NOT NULL,
    status TEXT NOT NULL,           -- playing | rated | void
    planned TEXT NOT NULL, finished TEXT, why TEXT, compressed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS groups_status ON groups (status);
CREATE TABLE IF NOT EXISTS units (
    id TEXT PRIMARY KEY,            -- gNNNNNN-sABC
    grp INTEGER NOT NULL, seating TEXT NOT NULL, log TEXT NOT NULL, sha256 TEXT NOT NULL, t TEXT NOT NULL,
    seat0 TEXT NOT NULL, seat1 TEXT NOT NULL, seat2 TEXT NOT NULL,
    groše0 INTEGER NOT NULL, groše1 INTEGER NOT NULL, groše2 INTEGER NOT NULL,
    faults0 INTEGER NOT NULL, faults1 INTEGER NOT NULL, faults2 INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS units_grp ON units (grp);
CREATE INDEX IF NOT EXISTS units_seat0 ON units (seat0);
CREATE INDEX IF NOT EXISTS units_seat1 ON units (seat1);
CREATE INDEX IF NOT EXISTS units_seat2 ON units (seat2);
CREATE TABLE IF NOT EXISTS history (
    version TEXT NOT NULL, grp INTEGER NOT NULL, t TEXT NOT NULL, games INTEGER NOT NULL,
    mu REAL NOT NULL, sigma REAL NOT NULL, PRIMARY KEY (version, grp)
);
CREATE TABLE IF NOT EXISTS pairs (
    a TEXT NOT NULL, b TEXT NOT NULL,  -- a < b
    groups INTEGER NOT NULL, total REAL NOT NULL, squares REAL NOT NULL, last INTEGER NOT NULL,
    PRIMARY KEY (a, b)
);
"""


class LadderError(RuntimeError):
    """The ladder cannot do what was asked (no such folder or version, a busy folder, ...)."""


class Refused(LadderError):
    """A version refused by ``add``: its check failed.  ``report`` is the check's report (text)."""

    def __init__(self, message: str, report: str):
        super().__init__(message)
        self.report = report


def exposed_folder(path) -> str | None:
    """The system folder (``/opt``, ``/var`` ...) that ``path`` lies under, which every sandboxed
    process sees read-only (protocol/PROTOCOL.md section 16), or None when it lies in a private one
    (``/home``, ``/srv``, ``/tmp`` ...), which the sandbox covers but for each bot's own folder."""
    from ..seats.sandbox import private_folders

    real = os.path.realpath(path)
    if any(real == d or real.startswith(d.rstrip("/") + "/") for d in private_folders()):
        return None
    return "/" + real.strip("/").split("/")[0]


def refuse_exposed(path, what: str = "a ladder's folder") -> None:
    """Raise :class:`LadderError` when ``path`` lies under a system folder: every bot would read
    the ladder's secret seed (and so every deck) there, since no sandbox hides a system folder."""
    system = exposed_folder(path)
    if system is not None:
        raise LadderError(f"{path}: {what} cannot lie under {system}, which every sandboxed bot sees whole "
                          f"(its secret seed would deal every deck to them); choose a folder under /home, /srv, "
                          f"/tmp or another that is not the system's")



def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def unit_id(group: int, seating: str) -> str:
    return f"g{group:06d}-s{seating}"


@dataclass(frozen=True)
class Version:
    """One version as the runner needs it."""

    id: str
    command: str
    cwd: str | None
    fingerprint: str
    status: str
    rating: Rating
    groups: int
    games: int
    last_played: str | None = None


@dataclass
class Planned:
    """A group planned (in the database, status ``playing``): its number, table and three versions."""

    n: int
    table: int
    versions: tuple[str, str, str]
    done: dict[str, str] = field(default_factory=dict)  # unit id -> log (the units already accepted)


class LadderFolder:
    """A ladder's folder (see the module docstring).  Each call opens the database anew, so that
    one object sees what a running ``marias ladder run`` writes meanwhile."""

    def __init__(self, path):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"LadderFolder({str(self.path)!r})"

    # ------------------------------------------------------------------ creation and configuration

    @classmethod
    def init(cls, path, seed_file=None, **settings) -> "LadderFolder":
        """Create a ladder in ``path`` (a new or empty folder): ``ladder.json``, the database and the
        secret seed — drawn (128 bits, ``seed.secret``, mode 0600) unless ``seed_file`` names a file
        holding it (kept where it is, hidden from every bot).  ``settings`` override :data:`DEFAULTS`
        keys (``groups_per_table=2``, ``time={"move_ms": 500}``, ...)."""
        from ..seats.sandbox import mark_output

        path = Path(path)
        refuse_exposed(path)
        if (path / CONFIG_FILE).exists():
            raise LadderError(f"{path}: already a ladder")
        if path.exists() and not path.is_dir():
            raise LadderError(f"{path}: not a folder")
        if path.is_dir() and any(p.name != ".marias-output" for p in path.iterdir()):
            raise LadderError(f"{path}: not empty; a ladder needs a new or empty folder")
        config = json.loads(json.dumps(DEFAULTS))
        for key, value in settings.items():
            if key not in DEFAULTS:
                raise LadderError(f"unknown ladder setting {key!r} (known: {', '.join(DEFAULTS)})")
            if isinstance(DEFAULTS[key], dict):
                unknown = set(value) - set(DEFAULTS[key])
                if unknown:
                    raise LadderError(f"unknown {key} setting(s) {sorted(unknown)}")
                config[key].update(value)
            else:
                config[key] = value
        if seed_file is not None:
            seed_file = Path(seed_file).resolve()
            refuse_exposed(seed_file, "a ladder's seed file")
            text = seed_file.read_text(encoding="utf-8").strip()
            if len(text) < 16:
                raise LadderError(f"{seed_file}: a seed of at least 16 characters is needed (a short one can be "
                                  f"found by trying values)")
        path.mkdir(parents=True, exist_ok=True)
        mark_output(path)
        (path / LOGS_DIR).mkdir(exist_ok=True)
        if seed_file is None:
            fd = os.open(path / SEED_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, (secrets.token_hex(16) + "\n").encode())
            os.close(fd)
        body = {"format": CONFIG_FORMAT, "version": 1, "created": now(),
                "seed_file": str(seed_file) if seed_file is not None else None,
                "rating": "openskill Plackett-Luce over duplicate groups", **config}
        tmp = path / (CONFIG_FILE + ".tmp")
        tmp.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path / CONFIG_FILE)
        con = connect(path / DB_FILE, create=True)
        con.close()
        return cls(path)

    @classmethod
    def open(cls, path) -> "LadderFolder":
        """The ladder in ``path``; LadderError when it is none."""
        ladder = cls(path)
        ladder.config()
        return ladder

    def config(self) -> dict:
        """``ladder.json`` (with the defaults of keys it lacks)."""
        p = self.path / CONFIG_FILE
        try:
            body = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise LadderError(f"{self.path}: not a ladder (no {CONFIG_FILE}; make one with `marias ladder init`)") from None
        except (OSError, ValueError) as e:
            raise LadderError(f"{p}: unreadable ({e})") from None
        if not isinstance(body, dict) or body.get("format") != CONFIG_FORMAT:
            raise LadderError(f"{p}: not a ladder configuration")
        out = json.loads(json.dumps(DEFAULTS))
        for k, v in body.items():
            if isinstance(out.get(k), dict) and isinstance(v, dict):
                out[k].update(v)
            else:
                out[k] = v
        return out

    def seed(self) -> str:
        """The secret seed (never shown to a bot, nor written in a log: each group's deck comes from a
        keyed hash of it, :func:`referee.ladder.run.group_seed`)."""
        cfg = self.config()
        p = Path(cfg["seed_file"]) if cfg.get("seed_file") else self.path / SEED_FILE
        text = p.read_text(encoding="utf-8").strip()
        if not text:
            raise LadderError(f"{p}: empty seed")
        return text

    def seed_path(self) -> Path:
        cfg = self.config()
        return Path(cfg["seed_file"]) if cfg.get("seed_file") else self.path / SEED_FILE

    @property
    def logs_dir(self) -> Path:
        return self.path / LOGS_DIR

    @property
    def db_file(self) -> Path:
        return self.path / DB_FILE

    @contextmanager
    def db(self):
        """A connection to the ladder's database, closed at the end of the ``with``."""
        self.config()
        con = connect(self.db_file)
        try:
            yield con
        finally:
            con.close()

    # ------------------------------------------------------------------ versions

    def add(self, name: str, command: str, cwd=None, author: str | None = None, *, check: bool = True) -> str:
        """Enter a new version of bot ``name`` (``name@1``, then ``name@2``, ...), started by ``command``
        in ``cwd``: its ``marias check`` runs first (in the ladder's sandbox and time limits) and a bot
        that fails it is refused (:class:`Refused` with the report); then its files are fingerprinted
        (:mod:`referee.seats.identity`) and it enters active, at the initial rating.  Its id is returned."""
        from ..seats.identity import IdentityError

        refuse_exposed(self.path)
        cfg = self.config()
        if not NAME_RE.match(name or ""):
            raise LadderError(f"bot name {name!r}: letters, digits and _ . + - only, at most 40, starting with a "
                              f"letter or digit")
        if not command or not command.strip():
            raise LadderError("no command")
        if cwd is not None:
            cwd = str(Path(cwd).resolve())
            if not Path(cwd).is_dir():
                raise LadderError(f"the folder {cwd!r} does not exist")
        entry = bot_entry(name, command, cwd)
        if cwd is None and entry.builtin is None:  # a command line starts where it was added, wherever the run is
            cwd = os.getcwd()
            entry = bot_entry(name, command, cwd)
        if check:
            from ..seats.resources import SandboxLimits
            from ..tools.check import run_check

            limits = cfg["time"]
            report = run_check(command, cwd=cwd, move_ms=int(limits["move_ms"]), startup_ms=int(limits["startup_ms"]),
                               sandbox=cfg["sandbox"], sandbox_limits=SandboxLimits())
            if not report.ok:
                raise Refused(f"{name}: refused, the bot does not pass `marias check`", "\n".join(report.lines()))
        try:
            fingerprint, listing = fingerprint_of(entry)
        except IdentityError as e:
            raise LadderError(f"{name}: {e}") from None
        with self.db() as con:
            con.execute("BEGIN IMMEDIATE")  # two adds of one name at once: the second waits, then takes the next number
            with con:
                row = con.execute("SELECT COALESCE(MAX(version), 0) FROM versions WHERE name=?", (name,)).fetchone()
                version = int(row[0]) + 1
                vid = f"{name}@{version}"
                con.execute("INSERT INTO versions (id, name, version, author, command, cwd, fingerprint, listing, "
                            "status, added, mu, sigma) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                            (vid, name, version, author, command, cwd, fingerprint, json.dumps(listing), "active",
                             now(), MU0, SIGMA0))
        return vid

    def retire(self, version_id: str, reason: str = "retired") -> None:
        """Take ``version_id`` out of play (its games and rating stay on the leaderboard, marked retired)."""
        self.set_status(version_id, "retired", reason)

    def set_status(self, version_id: str, status: str, reason: str | None = None) -> None:
        """``active``, ``retired`` or ``suspended`` (with the reason shown beside it)."""
        if status not in STATUSES:
            raise ValueError(f"status {status!r}: one of {', '.join(STATUSES)}")
        with self.db() as con:
            with con:
                n = con.execute("UPDATE versions SET status=?, reason=?, changed=? WHERE id=?",
                                (status, reason, now(), version_id)).rowcount
        if n == 0:
            raise LadderError(f"no version {version_id!r} in {self.path} (see `marias ladder table {self.path}`)")

    def versions(self) -> list[dict]:
        """Every version, in the order they were added: id, name, version, author, command, cwd,
        status (active / retired / suspended), reason, added."""
        with self.db() as con:
            rows = con.execute("SELECT id, name, version, author, command, cwd, status, reason, added FROM versions "
                               "ORDER BY added, rowid").fetchall()
        keys = ("id", "name", "version", "author", "command", "cwd", "status", "reason", "added")
        return [dict(zip(keys, r)) for r in rows]

    def version(self, version_id: str) -> dict:
        for v in self.versions():
            if v["id"] == version_id:
                return v
        raise LadderError(f"no version {version_id!r} in {self.path}")

    def playing(self) -> list[Version]:
        """The active versions, with what the pairing needs."""
        with self.db() as con:
            return active_versions(con)

    # ------------------------------------------------------------------ reading

    def leaderboard(self) -> list[dict]:
        """Every version that has played or may play, best first: id, name, author, rating (mu), low,
        high (its 95% interval), groups, games (partie), faults, groše (per partie), last_played,
        status, reason.  Ordered by ``low`` (the rating it has with 97.5% confidence), so that a new
        version climbs as it proves itself and no lucky start tops the board."""
        with self.db() as con:
            rows = con.execute("SELECT id, name, author, mu, sigma, groups, games, faults, groše, last_played, status, "
                               "reason FROM versions").fetchall()
        out = []
        for vid, name, author, mu, sigma, groups, games, faults, groše, last, status, reason in rows:
            out.append({"id": vid, "name": name, "author": author, "rating": mu, "low": mu - Z95 * sigma,
                        "high": mu + Z95 * sigma, "sigma": sigma, "groups": groups, "games": games, "faults": faults,
                        "groše": groše / games if games else None, "last_played": last, "status": status,
                        "reason": reason})
        out.sort(key=lambda r: (-r["low"], -r["rating"], r["id"]))
        return out

    def history(self, version_id: str) -> list[dict]:
        """The version's rating after each group it played, oldest first: group, game (its partie in
        the groups rated so far: 6, 12, ...), time, rating, low, high."""
        with self.db() as con:
            rows = con.execute("SELECT grp, games, t, mu, sigma FROM history WHERE version=? ORDER BY grp",
                               (version_id,)).fetchall()
        return [{"group": g, "game": n, "time": t, "rating": mu, "low": mu - Z95 * s, "high": mu + Z95 * s}
                for g, n, t, mu, s in rows]

    def games(self, version_id: str, limit: int | None = None) -> list[dict]:
        """The version's partie, newest first: id, group, time, log (relative to the folder; ``.jsonl.gz``
        once compressed), seat, others (the two other versions), seats (all three), groše (this version's),
        faults, group_status (``rated``: the partie is in the ratings; ``playing``: its group is not
        complete yet; ``void``: its group was never rated)."""
        sql = ("SELECT u.id, u.grp, u.t, u.log, u.seat0, u.seat1, u.seat2, u.groše0, u.groše1, u.groše2, u.faults0, "
               "u.faults1, u.faults2, g.status FROM units u JOIN groups g ON g.n = u.grp "
               "WHERE u.seat0=?1 OR u.seat1=?1 OR u.seat2=?1 ORDER BY u.grp DESC, u.id DESC")
        args: tuple = (version_id,)
        if limit is not None:
            sql += " LIMIT ?2"
            args = (version_id, int(limit))
        with self.db() as con:
            rows = con.execute(sql, args).fetchall()
        out = []
        for uid, grp, t, log, *rest in rows:
            seats, groše, faults, status = rest[0:3], rest[3:6], rest[6:9], rest[9]
            s = seats.index(version_id)
            out.append({"id": uid, "group": grp, "time": t, "log": log, "seat": s,
                        "others": [v for i, v in enumerate(seats) if i != s], "seats": list(seats),
                        "groše": groše[s], "faults": faults[s], "group_status": status})
        return out

    def stderr_files(self, version_id: str) -> list[Path]:
        """The kept stderr files of the version's bots (``logs/UNIT.seatN.stderr.log``, gzipped once old),
        newest first.  Empty ones are not kept."""
        out = []
        for g in self.games(version_id):
            for name in (f"{g['id']}.seat{g['seat']}.stderr.log", f"{g['id']}.seat{g['seat']}.stderr.log.gz"):
                p = self.logs_dir / name
                if p.is_file():
                    out.append(p)
        return out

    def readable_log(self, rel: str) -> Path:
        """A plain ``.jsonl`` file of the log ``rel`` (as :meth:`games` names it; a gzipped one is
        decompressed into a private cache): what validate, replay and the web pages read."""
        from .archive import readable_log

        return readable_log(self.path, rel)

    def pairs(self, active_only: bool = False) -> list[PairDifference]:
        """Each pair of versions that shared groups: a's groše per partie over b's, with its interval."""
        with self.db() as con:
            rows = con.execute("SELECT a, b, groups, total, squares FROM pairs ORDER BY a, b").fetchall()
            status = dict(con.execute("SELECT id, status FROM versions"))
        out = [pair_difference(*r) for r in rows]
        if active_only:
            out = [p for p in out if status.get(p.a) == "active" and status.get(p.b) == "active"]
        return out

    def counts(self) -> dict:
        """Groups rated / void / playing, partie accepted."""
        with self.db() as con:
            by = dict(con.execute("SELECT status, COUNT(*) FROM groups GROUP BY status"))
            units = con.execute("SELECT COUNT(*) FROM units").fetchone()[0]
        return {"rated": by.get("rated", 0), "void": by.get("void", 0), "playing": by.get("playing", 0),
                "partie": units}


# ------------------------------------------------------------------ the database


def connect(path, *, create: bool = False) -> sqlite3.Connection:
    """The ladder database (WAL: readers never wait for the runner), made when ``create``."""
    path = Path(path)
    if not create and not path.is_file():
        raise LadderError(f"{path}: no ladder database")
    con = sqlite3.connect(str(path), timeout=60.0, isolation_level="DEFERRED")
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")  # a committed group survives a power cut, not only a kill -9
    if create:
        con.executescript(_SCHEMA)
        con.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        con.commit()
    v = con.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    if v is None or v[0] != str(SCHEMA_VERSION):
        con.close()
        raise LadderError(f"{path}: a ladder database of schema {v[0] if v else '?'}; this marias reads {SCHEMA_VERSION}")
    return con


def active_versions(con: sqlite3.Connection) -> list[Version]:
    rows = con.execute("SELECT id, command, cwd, fingerprint, status, mu, sigma, groups, games, last_played "
                       "FROM versions WHERE status='active' ORDER BY rowid").fetchall()
    return [Version(i, c, w, f, s, Rating(mu, sg), g, n, last) for i, c, w, f, s, mu, sg, g, n, last in rows]


def bot_entry(version_id: str, command: str, cwd: str | None):
    """The tournament's bot entry for a version (its label is the version id)."""
    from ..tournaments.tournament_config import BotEntry

    return BotEntry(name=version_id, command=command, cwd=cwd)


def fingerprint_of(entry) -> tuple[str, list[str]]:
    """A version's fingerprint and listing, computed as a tournament's (:mod:`referee.seats.identity`)."""
    from ..seats.identity import listing_hash, spec_listing

    spec = entry.spec(Path("."), seed="0")
    listing = spec_listing(spec)
    return listing_hash(listing), listing
