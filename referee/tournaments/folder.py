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
import stat
import time
from pathlib import Path

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


def read_regular(path: Path, max_bytes: int | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file, opened without blocking: a FIFO, a device or a
    socket planted where marias keeps a file is refused (OSError), never waited on; a file larger
    than ``max_bytes`` too."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path}: not a regular file")
        if max_bytes is not None and st.st_size > max_bytes:
            raise OSError(f"{path}: {st.st_size} bytes, more than the {max_bytes} read")
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read() if max_bytes is None else f.read(max_bytes + 1)
    finally:
        os.close(fd)


def read_json(path: Path) -> object:
    """A JSON file marias wrote (:func:`read_regular`); ValueError naming the file when it is not one
    (unreadable, malformed, or nested too deep to parse)."""
    try:
        return json.loads(read_regular(path))
    except (OSError, ValueError, RecursionError) as e:
        raise ValueError(str(e) or type(e).__name__) from None


def read_manifest(folder: Path) -> dict | None:
    """The manifest of a tournament folder (None when there is none); ValueError when it is unreadable."""
    path = Path(folder) / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        body = read_json(path)
    except ValueError as e:
        raise ValueError(f"{path}: not a tournament manifest ({e})") from None
    if not isinstance(body, dict) or body.get("format") != MANIFEST_FORMAT or not isinstance(body.get("units"), list):
        raise ValueError(f"{path}: not a tournament manifest")
    return body


def journal(out: Path) -> dict[str, dict]:
    """The last journal entry of each unit (``status`` done or failed)."""
    entries: dict[str, dict] = {}
    path = out / JOURNAL_FILE
    if not path.exists():
        return entries
    try:
        text = read_regular(path).decode("utf-8", errors="replace")
    except OSError:
        return entries
    for line in text.splitlines():
        try:
            e = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line cut short by a crash
        if isinstance(e, dict) and isinstance(e.get("id"), str):
            entries[e["id"]] = e
    return entries


def journal_add(out: Path, entry: dict) -> None:
    """Append one unit's entry, stamped with the time, to the journal."""
    entry = {**entry, "t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with open(out / JOURNAL_FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
