"""A tournament's output folder: the files marias keeps in it and how they are read and written.

``tournament.json`` (the configuration and seed, :data:`STATE_FILE`), ``manifest.json`` (the
planned units and their logs), ``units.journal`` (one line per unit finished or failed, with
its log's SHA-256), ``logs/`` and ``invalid/``, and ``.lock`` (one marias at a time).  Shared by
the tournament runner, duels, the results database and the tables, so that none of them
imports another for a file name.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..logs import files
from .tournament_config import TournamentError

STATE_FILE = "tournament.json"
STATE_FORMAT = "marias-tournament"
MANIFEST_FILE = "manifest.json"  # the planned units and their logs: all that `marias table` counts here
MANIFEST_FORMAT = "marias-tournament-manifest"
JOURNAL_FILE = "units.journal"  # JSON lines, one per unit finished or failed, appended as it happens (not *.jsonl: no log)
LOGS_DIR = "logs"
INVALID_DIR = "invalid"  # logs that finished but did not validate (a referee bug): kept for study
LOCK_FILE = ".lock"


class FolderLock:
    """The output folder held by one marias at a time (an ``flock`` on its ``.lock``): a second
    tournament, duel or ``table --rebuild`` on the same folder gets :class:`TournamentError`."""


    def __init__(self, out: Path):
        self.path = out / LOCK_FILE
        self.f = None

    def __enter__(self):
        import fcntl
        self.f = open(self.path, "a+")
        try:
            fcntl.flock(self.f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.f.close()
            raise TournamentError(f"{self.path.parent}: another marias tournament is running on this folder") from None
        return self

    def __exit__(self, *exc):
        import fcntl
        fcntl.flock(self.f.fileno(), fcntl.LOCK_UN)
        self.f.close()


def write_json(path: Path, body: dict) -> None:
    """Write ``body`` to ``path`` atomically (a temporary file, then a rename)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_manifest(folder: Path) -> dict | None:
    """The manifest of a tournament folder (None when there is none); ValueError when it is unreadable."""
    path = Path(folder) / MANIFEST_FILE
    if not os.path.lexists(path):
        return None
    try:
        body = files.read_json(path)  # a regular file only: never a FIFO, a device, deep JSON
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a tournament manifest ({getattr(e, 'strerror', None) or e})") from None
    if not isinstance(body, dict) or body.get("format") != MANIFEST_FORMAT or not isinstance(body.get("units"), list):
        raise ValueError(f"{path}: not a tournament manifest")
    return body


def journal(out: Path) -> dict[str, dict]:
    """The last journal entry of each unit (``status`` done or failed)."""
    entries: dict[str, dict] = {}
    path = out / JOURNAL_FILE
    if not os.path.lexists(path):
        return entries
    text = files.read_text(path, errors="replace")  # a regular file only: OSError for a FIFO, never a hang
    for line in text.splitlines():
        try:
            e = files.loads(line)
        except ValueError:
            continue  # a line cut short by a crash
        if isinstance(e, dict) and isinstance(e.get("id"), str):
            entries[e["id"]] = e
    return entries


def journal_add(out: Path, entry: dict) -> None:
    """Append one unit's entry, stamped with the time, to the journal."""
    entry = {**entry, "t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with open(out / JOURNAL_FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
