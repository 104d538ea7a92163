"""Partie records read from logs: which logs of a folder count, and what each partie says.

A tournament folder's logs count only as the journal recorded them (their SHA-256 in
``units.journal``); a copy of one match under two names counts once.  Each finished
partie becomes a :class:`PartieRecord` (who sat where, its deals, its result), the input of
every table (:mod:`referee.tournaments.standings`) and of the results database
(:mod:`referee.tournaments.results`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

@dataclass
class PartieRecord:
    """One finished partie of a log: who sat where, its deals and its result."""

    source: str  # the log file
    partie: int
    bots: tuple[str, str, str]  # bot identity at seats 0, 1, 2
    totals: list[int]
    places: list[float]
    deals: list[dict]
    deck: tuple[str, ...]  # the starting deck (R2.2)
    forfeits: list[dict] = field(default_factory=list)  # R12.3 forfeit records (LOGS.md)
    fingerprints: tuple = (None, None, None)  # the bots' fingerprints at seats 0, 1, 2 (None: not logged)

    @property
    def group(self) -> tuple:
        """Duplicate group: the same three bots on the same starting deck (any seat arrangement)."""
        return (tuple(sorted(self.bots)), self.deck)


def bot_keys(header: dict) -> list[str]:
    """The identity of each bot of a log header (label, else name, else command).  Seats with the same
    label and the same fingerprint are one bot playing two seats (a duel's A A B): the same key, one
    row in the tables.  The same label with different fingerprints gets ``#seat``, and so does every
    seat when one bot holds them all (selfplay: there is nobody else to compare it with)."""
    keys = []
    bots = header.get("bots") or []
    for i, b in enumerate(bots):
        k = b.get("label") or b.get("name")
        if not k:
            cmd = b.get("command")
            k = " ".join(cmd) if isinstance(cmd, list) else str(cmd or f"seat {i}")
        keys.append(str(k))
    fps = [b.get("fingerprint") for b in bots]
    one_bot = len(set(zip(keys, fps))) == 1  # a bot against itself (selfplay): its seats are told apart
    return [f"{k}#{i}" if one_bot and len(keys) > 1 or len({fps[j] for j in range(len(keys)) if keys[j] == k}) > 1
            else k for i, k in enumerate(keys)]


def bot_fingerprints(header: dict) -> list[str | None]:
    return [b.get("fingerprint") if isinstance(b.get("fingerprint"), str) else None
            for b in header.get("bots") or []]


def records_from_log(path, records: list[dict]) -> list[PartieRecord]:
    """The finished partie of one log's records (those with a partie_end)."""
    if not records or records[0].get("type") != "header":
        raise ValueError(f"{path}: not a marias log (no header)")
    keys = bot_keys(records[0])
    fps = bot_fingerprints(records[0])
    out = []
    current = None
    for r in records[1:]:
        t = r.get("type")
        if t == "partie_start":
            seating = r.get("seating") or [0, 1, 2]
            current = {"partie": r.get("partie"), "bots": tuple(keys[i] for i in seating),
                       "fps": tuple(fps[i] if i < len(fps) else None for i in seating),
                       "deck": tuple(r.get("deck") or ()), "deals": [], "forfeits": []}
        elif t == "deal" and current is not None:
            if not current["deck"] and not current["deals"]:  # decks are logged with their deal (no deck up front)
                current["deck"] = tuple(r.get("deck") or ())
            current["deals"].append(r)
        elif t == "forfeit" and current is not None:
            current["forfeits"].append(r)
        elif t == "partie_end" and current is not None:
            out.append(PartieRecord(str(path), int(r.get("partie") or current["partie"] or 0), current["bots"],
                                    list(r["totals"]), list(r.get("places") or []), current["deals"],
                                    current["deck"], current["forfeits"], current["fps"]))
            current = None
    return out


def name_identities(parties: list[PartieRecord]) -> None:
    """Give each (label, fingerprint) one name: the label, or ``label@fingerprint`` (short) where one
    label stands for bots with different fingerprints.  Changes ``parties`` in place."""
    from ..seats.identity import short

    fps_of: dict[str, set] = {}
    for p in parties:
        for name, fp in zip(p.bots, p.fingerprints):
            fps_of.setdefault(name, set()).add(fp)
    for p in parties:
        if any(len(fps_of[n]) > 1 for n in p.bots):
            p.bots = tuple(f"{n}@{short(fp)}" if len(fps_of[n]) > 1 else n
                           for n, fp in zip(p.bots, p.fingerprints))  # type: ignore[assignment]


def log_paths(paths: Iterable, recorded: dict | None = None) -> tuple[list[Path], list[str]]:
    """The log files under ``paths``, and notes on what was left out.  A folder with a tournament
    manifest (or the ``logs/`` folder beside one) yields only the logs of the units it names:
    any other ``.jsonl`` there is left out, and said so.  ``recorded`` (when given) gets, for each
    log of a tournament folder, the SHA-256 its ``units.journal`` recorded when the unit was
    accepted, or None when the journal does not record it as done (:func:`journal_hashes`)."""
    from .folder import MANIFEST_FILE, read_manifest
    from ..logs.validate import log_files

    files: list[Path] = []
    notes: list[str] = []
    for p in paths:
        p = Path(p)
        folder = None
        if p.is_dir() and (p / MANIFEST_FILE).is_file():
            folder = p
        elif p.is_dir() and (p.parent / MANIFEST_FILE).is_file() and p.resolve() == (p.parent / "logs").resolve():
            folder = p.parent
        if folder is None:
            files.extend(log_files([p]))
            continue
        try:
            m = read_manifest(folder)
        except ValueError as e:
            notes.append(f"{e}; {p} left out")
            continue
        if is_duel(folder):  # its groups are planned as they are played: its unit logs are the files of logs/
            files.extend(duel_logs(folder))
            continue
        named = [folder / u["log"] for u in m["units"] if isinstance(u, dict) and isinstance(u.get("log"), str)]
        wanted = {q.resolve() for q in named}
        for q in log_files([p]):
            if q.resolve() not in wanted:
                notes.append(f"{q}: not a unit in {folder / MANIFEST_FILE}; left out")
        present = [q for q in named if q.exists()]
        if len(present) < len(named):
            notes.append(f"{folder}: {len(named) - len(present)} of the {len(named)} units in its manifest "
                         f"have no log (not played yet)")
        if recorded is not None:
            hashes = journal_hashes(folder, m)
            for q in present:
                recorded[q] = hashes.get(q)
        files.extend(present)
    return files, notes


def is_duel(folder: Path) -> bool:
    """A head-to-head folder (its tournament.json says ``format: head-to-head``)."""
    from ..logs import files
    from .folder import STATE_FILE
    from .tournament_config import HEAD_TO_HEAD

    try:
        body = files.read_json(Path(folder) / STATE_FILE)  # a regular file only, never deep JSON
        return body["config"].get("format") == HEAD_TO_HEAD
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


#: a head-to-head unit's log (referee/tournaments/duel.py: gGGGG-sAAB.jsonl)
DUEL_LOG_RE = re.compile(r"g\d+-s[ab]{3}\.jsonl$")


def duel_logs(folder: Path) -> list[Path]:
    """The unit logs of a head-to-head folder, in order (each still has to be complete and valid)."""
    from .folder import LOGS_DIR

    logs = Path(folder) / LOGS_DIR
    return sorted(p for p in logs.iterdir() if DUEL_LOG_RE.match(p.name)) if logs.is_dir() else []


def journal_hashes(folder: Path, manifest: dict) -> dict[Path, str]:
    """Each unit log of a tournament folder (``folder / its manifest path``) that ``units.journal``
    records as done, with the SHA-256 recorded when the tournament accepted it (the last entry of
    the unit counts: a unit failed since is not on record)."""
    from .folder import journal

    entries = journal(Path(folder))
    out: dict[Path, str] = {}
    for u in manifest.get("units") or []:
        if not (isinstance(u, dict) and isinstance(u.get("id"), str) and isinstance(u.get("log"), str)):
            continue
        e = entries.get(u["id"])
        if e and e.get("status") == "done" and isinstance(e.get("sha256"), str):
            out[Path(folder) / u["log"]] = e["sha256"]
    return out


def not_recorded_note(path, recorded: str | None, actual: str) -> tuple[str, bool]:
    """Why a tournament's log is left out of the tables, and whether it is an error (the log on disk
    is not the one the tournament accepted) rather than a note (not accepted yet)."""
    from .folder import JOURNAL_FILE

    if recorded is None:
        return (f"{path}: not recorded as done in {JOURNAL_FILE} (the tournament has not accepted it; running "
                f"the tournament again checks it and records it); left out", False)
    return (f"{path}: its SHA-256 is {actual}, but {JOURNAL_FILE} recorded {recorded} when the tournament "
            f"accepted this unit: the log was changed or replaced since; left out of the tables (put the "
            f"original back, or delete it and run the tournament again to play the unit anew)", True)


def match_key(records: list[dict]) -> tuple | None:
    """What makes two log files one match: the header's seed commitment and the final hash (the
    footer's chain value, which covers every byte of the log).  None for a log without them."""
    if not records:
        return None
    commit, final = records[0].get("seed_sha256"), records[-1].get("chain")
    if records[-1].get("type") != "footer" or not isinstance(final, str):
        return None
    return (commit, final)


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


def pair_flows(payments: list[int]) -> dict[tuple[int, int], int]:
    """How a deal's payments (summing to zero) flow between pairs of seats: ``{(payer, payee): groše}``.

    The seat with the largest absolute payment (the actor in every settled deal,
    the faulting player in a fault before the contract) exchanges with each of the
    other two exactly that seat's payment; the other two never pay each other, as
    in every settlement of R9.5 and R12.2.
    """
    if sum(payments) != 0:
        raise ValueError(f"payments {payments} do not sum to zero")
    hub = max(range(3), key=lambda s: (abs(payments[s]), -s))
    flows = {}
    for s in range(3):
        if s == hub or payments[s] == 0:
            continue
        if payments[s] > 0:
            flows[(hub, s)] = payments[s]
        else:
            flows[(s, hub)] = -payments[s]
    return flows
