"""An event's folder, read: a tournament's or a head-to-head test's (duel's) output folder, and
where a table's partie come from.

:class:`EventFolder` is the one reader of such a folder: the web pages, ``marias table``, a
resumed tournament and a duel all go through it (and the ladder will).  What a folder holds, and
who writes each file (names in :mod:`referee.tournaments.folder`):

=====================  ===================================================================
``tournament.json``    the configuration as played (canonical), the seed (or, kept secret,
                       only until the footers reveal it), the width of unit ids, the bots'
                       fingerprint listings, any extension on a resume.  Written by the
                       coordinator when the event starts, rewritten on a resume that extends it
                       (``referee.tournaments.tournament.prepare_output``)
``manifest.json``      the planned units and their logs; a duel plans its groups as it goes,
                       so its manifest names none.  Written by the coordinator with the state
``units.journal``      one JSON line per unit finished (with its log's SHA-256 and totals) or
                       failed, appended by the coordinator as it happens (a tournament; a duel
                       keeps none: its logs are its state)
``logs/UNIT.jsonl``    a unit's log, written by the worker that plays it, beside its bots'
                       stderr (``UNIT.seatN.stderr.log``) and transcripts
``invalid/``           a finished log that did not validate, moved there by the coordinator
``results.sqlite``     one row per accepted partie (a tournament), written by the coordinator
                       as it accepts each log; ``marias table --rebuild`` recreates it
``.lock``              held (``flock``) by the one marias running on the folder
``.marias-output``     the marker that hides the folder from every bot
=====================  ===================================================================

Its *state*: ``running`` (a marias holds the lock), else ``finished`` (a tournament with every
planned unit on record; a duel that stopped at ``max_groups``), ``decided`` (a duel whose test
accepted H0 or H1) or ``stopped`` (the rest: run the same command to go on).

The logs stay the truth.  A tournament's log counts in its tables only while its SHA-256 is the
one the journal recorded when the unit was accepted; a duel's counts only in the groups its test
counts.  :func:`gather` turns any mix of event folders, log folders and log files into the
partie summaries the tables are computed from: from a tournament's database where it has one,
else from its logs, each validated.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Iterable

from ..logs import files
from . import head_to_head as H2H
from . import results as R
from .folder import (INVALID_DIR, JOURNAL_FILE, LOCK_FILE, LOGS_DIR, MANIFEST_FILE, STATE_FILE, FolderLock, journal,
                     read_manifest)
from .records import PartieRecord, match_key, name_identities, not_recorded_note, records_from_log
from .sprt import H0, H1, TRUNCATED
from .tournament_config import HEAD_TO_HEAD

#: The states of an event (:meth:`EventFolder.status`).
STATES = ("running", "stopped", "finished", "decided")


class EventFolder:
    """A tournament's or duel's output folder (see the module's docstring for its files).

    Reads are made when asked, nothing is kept between two calls but the ``tournament.json``
    read once per object: make a new object to see a running event move on."""

    def __init__(self, path):
        self.path = Path(path)
        self._state: dict | None | Exception = _UNREAD

    def __repr__(self) -> str:
        return f"EventFolder({str(self.path)!r})"

    @classmethod
    def at(cls, p) -> "EventFolder | None":
        """The event folder ``p`` is (it holds a ``manifest.json`` or ``tournament.json``), or whose
        ``logs/`` folder it is; None for anything else."""
        p = Path(p)
        if not p.is_dir():
            return None
        if _is_event(p):
            return cls(p)
        if p.name == LOGS_DIR and _is_event(p.parent) and p.resolve() == (p.parent / LOGS_DIR).resolve():
            return cls(p.parent)
        return None

    # ------------------------------------------------------------------ files
    @property
    def logs_dir(self) -> Path:
        return self.path / LOGS_DIR

    @property
    def db_file(self) -> Path:
        return R.db_path(self.path)

    @property
    def invalid_dir(self) -> Path:
        return self.path / INVALID_DIR

    def state(self) -> dict | None:
        """The body of ``tournament.json``: None when there is none; ValueError when it is unreadable."""
        if self._state is _UNREAD:
            path = self.path / STATE_FILE
            try:
                body = files.read_json(path) if os.path.lexists(path) else None  # a regular file only
                if body is not None and not (isinstance(body, dict) and isinstance(body.get("config"), dict)):
                    raise ValueError("no configuration in it")
                self._state = body
            except (OSError, ValueError) as e:
                self._state = ValueError(f"{path}: not a tournament state file ({getattr(e, 'strerror', None) or e})")
        if isinstance(self._state, Exception):
            raise self._state
        return self._state

    @property
    def config(self) -> dict:
        """The configuration as played (``tournament.json``'s ``config``); ValueError without one."""
        body = self.state()
        if body is None:
            raise ValueError(f"{self.path / STATE_FILE}: missing")
        return body["config"]

    @property
    def is_duel(self) -> bool:
        """A head-to-head test (its ``tournament.json`` says ``format: head-to-head``)."""
        try:
            body = self.state()
        except ValueError:
            return False
        return body is not None and body["config"].get("format") == HEAD_TO_HEAD

    @property
    def kind(self) -> str:
        return "duel" if self.is_duel else "tournament"

    def manifest(self) -> dict | None:
        """The planned units (``manifest.json``): None when there is none; ValueError when unreadable."""
        return read_manifest(self.path)

    def journal(self) -> dict[str, dict]:
        """The last journal entry of each unit (``status`` done or failed)."""
        return journal(self.path)

    def lock(self) -> FolderLock:
        """The folder held by one marias at a time: ``with ev.lock(): ...``."""
        return FolderLock(self.path)

    def running(self) -> bool:
        """Whether a marias holds the folder's lock now (a shared, non-blocking probe, released at once)."""
        try:
            fd = os.open(self.path / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    def signature(self) -> tuple:
        """Changes whenever the event accepts a unit (or is stopped, resumed or extended): a cache key."""
        sig = []
        for name in (R.DB_FILE, R.DB_FILE + "-wal", JOURNAL_FILE, MANIFEST_FILE, STATE_FILE, LOGS_DIR):
            try:
                st = os.stat(self.path / name)
                sig.append((name, st.st_mtime_ns, st.st_size))
            except OSError:
                sig.append((name, None))
        running = self.running()
        sig.append(("running", running))
        if running and self.is_duel:  # a duel keeps no journal: a group counts when its logs are complete
            sig.append(("newest logs", self._newest_logs()))
        return tuple(sig)

    #: The newest unit logs of a running duel that :meth:`signature` looks at: a log that a worker
    #: finishes is among them (the workers play at most two batches of groups at once, each at most
    #: twelve groups of six logs).
    NEWEST_LOGS = 3 * 12 * 6

    def _newest_logs(self) -> tuple:
        """(name, mtime, size) of a duel's newest unit logs: a log's footer changes it (its name, in
        ``logs/``, was there since the log was started)."""
        try:
            names = sorted(n for n in os.listdir(self.logs_dir) if H2H.DUEL_LOG_RE.match(n))[-self.NEWEST_LOGS:]
        except OSError:
            return ()
        out = []
        for n in names:
            try:
                st = os.stat(self.logs_dir / n)
                out.append((n, st.st_mtime_ns, st.st_size))
            except OSError:
                out.append((n, None))
        return tuple(out)

    # ------------------------------------------------------------------ units and their logs
    def planned_logs(self, manifest: dict | None = None) -> list[Path]:
        """The logs of the units the manifest plans (present or not).  A path the manifest names is
        taken as it is: where the reader is confined to the folder (``marias serve``:
        :func:`referee.logs.files.confined`), one that leads out of it is refused when read, with a note."""
        m = self.manifest() if manifest is None else manifest
        if m is None:
            return []
        return [self.path / u["log"] for u in m["units"] if isinstance(u, dict) and isinstance(u.get("log"), str)]

    def duel_logs(self) -> list[Path]:
        """The unit logs of a duel's folder, in order (each still has to be complete and valid)."""
        logs = self.logs_dir
        return sorted(p for p in logs.iterdir() if H2H.DUEL_LOG_RE.match(p.name)) if logs.is_dir() else []

    def recorded_hashes(self, manifest: dict | None = None) -> dict[Path, str]:
        """Each unit log that ``units.journal`` records as done, with the SHA-256 recorded when the
        event accepted it (the unit's last entry counts: a unit failed since is not on record)."""
        m = self.manifest() if manifest is None else manifest
        entries = self.journal()
        out: dict[Path, str] = {}
        for u in (m or {}).get("units") or []:
            if not (isinstance(u, dict) and isinstance(u.get("id"), str) and isinstance(u.get("log"), str)):
                continue
            e = entries.get(u["id"])
            if e and e.get("status") == "done" and isinstance(e.get("sha256"), str):
                out[self.path / u["log"]] = e["sha256"]
        return out

    def table_logs(self, named, recorded: dict | None = None) -> tuple[list[Path], list[str]]:
        """The logs a table of this folder reads from its files (``named``: the folder or its
        ``logs/``), and notes on what was left out: a duel's unit logs; a tournament's planned logs
        that are present, any other ``.jsonl`` named and left out.  ``recorded`` (when given) gets
        each present log's SHA-256 on record (None when the journal does not record it as done)."""
        from ..logs.validate import log_files

        try:
            m = self.manifest()
        except ValueError as e:
            return [], [f"{e}; {named} left out"]
        if self.is_duel:  # its groups are planned as they are played: its unit logs are the files of logs/
            return self.duel_logs(), []
        notes = []
        planned = self.planned_logs(m)
        wanted = {q.resolve() for q in planned}
        for q in log_files([named]):
            if q.resolve() not in wanted:
                notes.append(f"{q}: not a unit in {self.path / MANIFEST_FILE}; left out")
        present = [q for q in planned if q.exists()]
        if len(present) < len(planned):
            notes.append(f"{self.path}: {len(planned) - len(present)} of the {len(planned)} units in its manifest "
                         f"have no log (not played yet)")
        if recorded is not None:
            hashes = self.recorded_hashes(m)
            for q in present:
                recorded[q] = hashes.get(q)
        return present, notes

    def head_to_head(self) -> tuple[dict, list[Path]]:
        """A duel's result from its logs (decision, LLR, groups, the estimate; :mod:`referee.tournaments.head_to_head`)
        and the logs of the groups its test counts (what its other tables count)."""
        return H2H.result_of(self.path, self.state() or {})

    def scan(self, plan: "H2H.Plan") -> "H2H.Scan":
        """A duel's unit logs, each checked as the tournament checks a unit log."""
        return H2H.scan(self.path, plan)

    # ------------------------------------------------------------------ state
    def status(self, done: int | None = None, decision: str | None = None) -> dict:
        """Its state (one of :data:`STATES`), units planned (None for a duel: it plans as it goes) and
        done, and an ETA in seconds from the recent pace while it runs (None otherwise).  ``done``: the
        units counted by the caller (a table's partie); by default the journal's (a tournament) or the
        unit logs' (a duel).  ``decision``: a duel's, when the caller has its result already (else it
        is read from the logs)."""
        is_running = self.running()
        if self.is_duel:
            if done is None:
                done = len(self.duel_logs())
            state = "running" if is_running else "stopped"
            if not is_running:
                if decision is None:
                    try:
                        decision = self.head_to_head()[0]["decision"]
                    except (OSError, ValueError, KeyError, TypeError):
                        decision = None
                state = {H0: "decided", H1: "decided", TRUNCATED: "finished"}.get(decision, "stopped")
            return {"state": state, "total": None, "done": done, "eta_s": None}
        total = None
        try:
            m = self.manifest()
            if m is not None:
                total = len(m["units"])
        except ValueError:
            pass
        try:
            entries = self.journal()
        except OSError:  # not a regular file (a FIFO planted there): nothing on record can be read
            entries = {}
        times = [e["t"] for e in entries.values() if e.get("status") == "done" and isinstance(e.get("t"), str)]
        if done is None:
            done = len(times)
        eta = None
        if is_running and total and len(times) >= 2 and done < total:
            recent = sorted(time.mktime(time.strptime(t, "%Y-%m-%dT%H:%M:%SZ")) for t in times)[-30:]
            span = recent[-1] - recent[0]
            if span > 0:
                eta = round((total - done) * span / (len(recent) - 1))
        state = "running" if is_running else ("finished" if total and done >= total else "stopped")
        return {"state": state, "total": total, "done": done, "eta_s": eta}

    # ------------------------------------------------------------------ its results
    def source(self) -> "R.Source":
        """The partie summaries its tables are computed from (:func:`gather` of this folder)."""
        return gather([self.path])

    def stored(self) -> "R.Stored":
        """Its results database opened for its tables, checked against the manifest's logs and the
        journal's record of them (the caller closes it)."""
        try:
            m = self.manifest()
        except ValueError as e:
            return R.open_stored(self.path, None, None, str(e))
        return R.open_stored(self.path, self.planned_logs(m), self.recorded_hashes(m))

    def rebuild_db(self, rejected: list[str] | None = None) -> tuple[int, int, list[str]]:
        """Recreate the results database from the logs (each one validated, and only the ones whose
        SHA-256 ``units.journal`` recorded when the unit was accepted): (logs, partie, notes on logs
        left out); a log that is not the one on record is named in ``rejected`` (the notes when None).
        Refused (TournamentError) while a marias runs on the folder."""
        with self.lock():
            notes: list[str] = []
            n_logs, n_partie = R.rebuild_from(self.path, read_logs([self.path], True, notes, rejected))
            return n_logs, n_partie, notes


_UNREAD = object()


def _is_event(p: Path) -> bool:
    return (p / MANIFEST_FILE).is_file() or (p / STATE_FILE).is_file()


def tournament_folder(p) -> Path | None:
    """The tournament folder ``p`` is (it holds a manifest) or whose ``logs/`` it is; else None."""
    ev = EventFolder.at(p)
    return ev.path if ev is not None and (ev.path / MANIFEST_FILE).is_file() else None


# ------------------------------------------------------------------ the logs under any paths

def log_paths(paths: Iterable, recorded: dict | None = None) -> tuple[list[Path], list[str]]:
    """The log files under ``paths``, and notes on what was left out.  An event folder (or its
    ``logs/``) yields only its units' logs (:meth:`EventFolder.table_logs`); any other folder is
    searched for ``*.jsonl``.  ``recorded`` (when given) gets, for each log of a tournament folder,
    the SHA-256 its ``units.journal`` recorded when the unit was accepted, or None."""
    from ..logs.validate import log_files

    files: list[Path] = []
    notes: list[str] = []
    for p in paths:
        p = Path(p)
        ev = EventFolder.at(p) if (p / MANIFEST_FILE).is_file() or (p.parent / MANIFEST_FILE).is_file() else None
        if ev is None:
            files.extend(log_files([p]))
            continue
        got, more = ev.table_logs(p, recorded)
        files.extend(got)
        notes.extend(more)
    return files, notes


def read_logs(paths: Iterable, validate: bool, skipped: list[str], rejected: list[str] | None = None):
    """(path, records) of every complete, valid log under ``paths``, once each; notes go to ``skipped``.

    A tournament's log counts only when its SHA-256 is the one ``units.journal`` recorded when
    the unit was accepted; a log that differs is named in ``rejected`` (``skipped`` when None).
    Copies of one match (the same seed commitment and final hash) count once, the others named."""
    from ..logs.files import sha256 as file_sha256  # a regular file only (referee.logs.files)
    from ..logs.log import read_log
    from ..logs.validate import validate_file

    recorded: dict[Path, str | None] = {}
    files, notes = log_paths(paths, recorded)
    skipped.extend(notes)
    seen: set[Path] = set()
    matches: dict[tuple, Path] = {}
    for path in files:
        real = path.resolve()
        if real in seen:  # named twice (a file and its folder): counted once
            continue
        seen.add(real)
        if not path.exists():
            skipped.append(f"{path}: no such file")
            continue
        try:
            if path in recorded:
                actual = file_sha256(path)
                if actual != recorded[path]:
                    note, error = not_recorded_note(path, recorded[path], actual)
                    (rejected if error and rejected is not None else skipped).append(note)
                    continue
            records, problems = read_log(path)
        except OSError as e:  # a FIFO, a device, a file outside the folder served, unreadable
            skipped.append(f"{path}: cannot be read ({e.strerror or e}); left out")
            continue
        if not records or records[0].get("type") != "header" or records[0].get("format") != "marias-log":
            skipped.append(f"{path}: not a marias log; left out")
            continue
        if validate:
            report = validate_file(path)
            if not report.complete:
                skipped.append(f"{path}: incomplete (no footer); left out")
                continue
            if not report.ok:
                skipped.append(f"{path}: does not validate ({report.lines()[0]}); left out")
                continue
        elif problems or records[-1].get("type") != "footer":
            skipped.append(f"{path}: incomplete; left out")
            continue
        key = match_key(records)
        if key is not None:
            first = matches.setdefault(key, path)
            if first is not path:
                skipped.append(f"{path}: a copy of {first} (the same match: seed commitment {str(key[0])[:16]}…, "
                               f"final hash {key[1][:16]}…); counted once")
                continue
        yield path, records


def load(paths: Iterable, *, validate: bool = True) -> tuple[list[PartieRecord], list[str]]:
    """The partie of every complete, valid log under ``paths`` (files or folders, searched for
    ``*.jsonl``), and a note for each file left out (incomplete, invalid or not a log)."""
    parties: list[PartieRecord] = []
    skipped: list[str] = []
    for path, records in read_logs(paths, validate, skipped):
        parties.extend(records_from_log(path, records))
    parties.sort(key=lambda p: (p.source, p.partie))
    name_identities(parties)
    return parties, skipped


# ------------------------------------------------------------------ where a table's summaries come from

def gather(paths: Iterable, *, use_db: bool = True) -> R.Source:
    """The summaries of ``paths``: from a tournament folder's results database where it has one
    (a cheap check against the manifest's logs and the journal adds notes and leaves out a log that
    is not the one on record), else from its logs (each validated, summarized as it is read and then
    dropped)."""
    notes: list[str] = []
    rejected: list[str] = []
    dbs: list[EventFolder] = []
    plain: list[Path] = []
    for p in paths:
        ev = EventFolder.at(p)
        if (use_db and ev is not None and (ev.path / MANIFEST_FILE).is_file() and ev.db_file.is_file()
                and R.db_readable(ev.path, notes)):
            if ev.path.resolve() not in {d.path.resolve() for d in dbs}:
                dbs.append(ev)
        else:
            plain.append(Path(p))
    sums: list = []
    sandboxes: set[str] = set()
    n_logs = 0
    for path, records in read_logs(plain, True, notes, rejected):
        got = R.summaries_of_log(path, records, source=str(path))
        sums.extend(got)
        n_logs += 1
        sandboxes.add(str(records[0].get("sandbox") or "none"))
    fps_of: dict[str, set] = {}
    for s in sums:
        for n, fp in zip(s.bots, s.fingerprints):
            fps_of.setdefault(n, set()).add(fp)
    stored = [ev.stored() for ev in dbs]
    n_partie, n_deals = len(sums), sum(s.deals for s in sums)
    for db in stored:
        notes.extend(db.notes)
        rejected.extend(db.rejected)
        for n, fps in db.fps_of.items():
            fps_of.setdefault(n, set()).update(fps)
        n_partie, n_deals, n_logs = n_partie + db.partie, n_deals + db.deals, n_logs + db.logs
        sandboxes.update(db.sandboxes)

    def close():
        for db in stored:
            db.close()

    if not stored:
        sums.sort(key=lambda s: (s.source, s.partie))
        stream: Iterable = sums
    elif not sums and len(stored) == 1:
        stream = stored[0].summaries()
    else:
        for db in stored:
            sums.extend(db.summaries())
        sums.sort(key=lambda s: (s.source, s.partie))
        stream = sums
    return R.Source(stream, fps_of, n_partie, n_logs, n_deals, sorted(sandboxes), notes, close, rejected)
