"""The folders ``marias serve`` was given, and the only way a request reaches a file in them.

A request names a file by the index of one of the served folders (its *root*) and a path
relative to it.  :meth:`Roots.resolve` is the one gate: a path with a ``..`` part (however it
was encoded in the URL: the router hands us the decoded path), an absolute path, a path
that leaves the folder through a symlink, a missing file and a file larger than the limit
are all refused with an :class:`Refused` that carries the HTTP status to answer.

What the folders hold is not trusted (a bot with a kept ``workdir`` writes inside them, a
folder may come from anyone): every file is read through :mod:`referee.logs.files` (regular
files only, never blocking, confined to the folder, JSON of any depth refused as bad JSON),
and an entry that cannot be read is listed with a note rather than failing the page.  A log
that a match is still writing (:func:`referee.logs.log.being_written`) is not listed at all.
The index walks at most :data:`MAX_WALK_ENTRIES` entries per request, at most
:data:`MAX_WALK_DEPTH` folders deep.

Nothing here writes; the play page's logs go to their own folder (``referee.web.play``).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..logs import files
from ..logs.log import being_written
from ..tournaments.event import EventFolder

#: A file larger than this is not read for a page (a log of 100 partie is about 2 MB).
MAX_FILE_BYTES = 64 * 2**20

TOURNAMENT_FILES = ("manifest.json", "tournament.json")
#: The file that makes a folder a ladder (``marias ladder init``): shown on its own pages.
LADDER_FILE = "ladder.json"
#: Of a ladder folder only its logs are served (as files): never its seed, its tokens' hashes, its
#: database, the bots' stderr (their authors' only) nor the uploads (which their builds wrote).
LADDER_SERVED = "logs"
#: The index stops walking the served folders after this many entries (files and folders), saying so.
MAX_WALK_ENTRIES = 50_000
#: ... and goes no deeper than this many folders below a served folder.
MAX_WALK_DEPTH = 24


class Refused(Exception):
    """A request for a path that is not served: ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class BadFolder(ValueError):
    """A folder given to ``marias serve`` that cannot be served."""


@dataclass(frozen=True)
class Item:
    """Something a page can show: a tournament or duel folder, or a log file."""

    kind: str  # tournament | duel | ladder | log
    root: int
    rel: str  # relative to the root, '/'-separated; '.' for the root itself
    title: str
    size: int = 0
    mtime: float = 0.0
    note: str = ""  # why it cannot be shown (not a regular file, unreadable)


class Roots:
    """The served folders (resolved once), and the gate between a URL path and a file."""

    def __init__(self, folders, max_bytes: int = MAX_FILE_BYTES):
        self.folders: list[Path] = []
        self.max_bytes = max_bytes
        for f in folders:
            p = Path(f)
            if not p.exists():
                raise BadFolder(f"{f}: no such folder")
            if not p.is_dir():
                raise BadFolder(f"{f}: not a folder (give the folder that holds the logs or the tournament)")
            try:
                os.listdir(p)
            except OSError as e:
                raise BadFolder(f"{f}: cannot be read ({e.strerror})") from None
            self.folders.append(p.resolve())
        if not self.folders:
            raise BadFolder("no folder to serve")

    def label(self, root: int) -> str:
        return str(self.folders[root])

    def resolve(self, root: int, rel: str, *, want: str = "any") -> Path:
        """The real path of ``rel`` inside served folder ``root``; :class:`Refused` otherwise.

        ``want``: ``file`` (a regular file within the size limit), ``dir`` or ``any``."""
        if not isinstance(root, int) or not 0 <= root < len(self.folders):
            raise Refused(404, f"no served folder {root}")
        rel = rel or "."
        if "\x00" in rel or rel.startswith(("/", "\\")) or os.path.isabs(rel):
            raise Refused(400, "an absolute path is not served")
        parts = rel.replace("\\", "/").split("/")
        if any(p == ".." for p in parts):
            raise Refused(403, "a path with '..' is not served")
        base = self.folders[root]
        path = Path(os.path.realpath(base / rel))
        if path != base and base not in path.parents:
            raise Refused(403, "that path leads out of the served folder (a symlink?)")
        if not path.exists():
            raise Refused(404, f"{rel}: no such file")
        _ladder_rule(base, path, rel)
        if want == "file":
            if not path.is_file():
                raise Refused(404, f"{rel}: not a file")
            size = path.stat().st_size
            if size > self.max_bytes:
                raise Refused(413, f"{rel}: {size / 2**20:.1f} MB is larger than the {self.max_bytes / 2**20:g} MB "
                                   f"served (marias serve --max-file-mb)")
        elif want == "dir" and not path.is_dir():
            raise Refused(404, f"{rel}: not a folder")
        return path

    def rel(self, root: int, path: Path) -> str:
        r = os.path.relpath(path, self.folders[root])
        return "." if r == "." else r.replace(os.sep, "/")

    # ------------------------------------------------------------------ what there is to show

    def items(self, limit: int = 2000) -> tuple[list[Item], list[str]]:
        """Tournaments and duels (folders with a manifest or tournament.json), then the logs outside
        them, newest first (at most ``limit``; none that a match is still writing); and notes on what
        the walk left out."""
        out: list[Item] = []
        logs: list[Item] = []
        notes: list[str] = []
        seen = 0
        for i, base in enumerate(self.folders):
            for dirpath, dirnames, filenames in os.walk(base):  # symlinks not followed
                seen += len(dirnames) + len(filenames)
                if seen > MAX_WALK_ENTRIES:
                    notes.append(f"more than {MAX_WALK_ENTRIES} files and folders: the rest is not listed")
                    break
                d = Path(dirpath)
                dirnames[:] = sorted(n for n in dirnames if not n.startswith("."))
                if dirnames and len(d.relative_to(base).parts) >= MAX_WALK_DEPTH:
                    dirnames[:] = []
                    deep = f"folders more than {MAX_WALK_DEPTH} deep are not listed"
                    if deep not in notes:
                        notes.append(deep)
                if LADDER_FILE in filenames:
                    out.append(Item("ladder", i, self.rel(i, d), d.name or str(d)))
                    dirnames[:] = []  # its versions and logs are shown on its pages
                    continue
                if any(n in filenames for n in TOURNAMENT_FILES):
                    kind, note = _folder_kind(d)
                    out.append(Item(kind, i, self.rel(i, d), d.name or str(d), note=note))
                    dirnames[:] = []  # its logs are shown on its page
                    continue
                for n in filenames:
                    if n.endswith(".jsonl") and not n.endswith(".transcript.jsonl"):
                        p = d / n
                        try:
                            st = p.lstat()
                        except OSError:
                            continue
                        if stat.S_ISLNK(st.st_mode):
                            continue
                        if not stat.S_ISREG(st.st_mode):
                            logs.append(Item("log", i, self.rel(i, p), n, 0, 0.0,
                                             note=files.NotAFile(p, st.st_mode).strerror))
                            continue
                        if st.st_size == 0 or being_written(p):  # a match starting (its name reserved) or in progress
                            continue
                        logs.append(Item("log", i, self.rel(i, p), n, st.st_size, st.st_mtime))
            else:
                continue
            break
        logs.sort(key=lambda x: -x.mtime)
        return out + logs[:limit], notes


def ladder_of(base: Path, path: Path) -> Path | None:
    """The ladder folder (one holding :data:`LADDER_FILE`) that ``path`` is or lies in, below ``base``."""
    for p in (path, *path.parents):
        if (p / LADDER_FILE).is_file():
            return p
        if p == base:
            return None
    return None


def _ladder_rule(base: Path, path: Path, rel: str) -> None:
    """Inside a ladder folder only the folder itself and what lies in its logs folder are served."""
    ladder = ladder_of(base, path)
    if ladder is None or path == ladder:
        return
    inner = path.relative_to(ladder).parts
    if inner[0] != LADDER_SERVED or path.name.endswith((".stderr.log", ".stderr.log.gz")):
        raise Refused(403, f"{rel}: of a ladder only its pages and its logs are served")


def _folder_kind(folder: Path) -> tuple[str, str]:
    """``duel`` or ``tournament``, and a note when its files cannot be read."""
    with files.confined(folder):
        for name in TOURNAMENT_FILES:
            try:
                files.check(folder / name)
            except FileNotFoundError:
                continue
            except OSError as e:
                return "tournament", f"{name}: {e.strerror}"
        return EventFolder(folder).kind, ""


class Scrub:
    """Takes the server's own paths out of what it answers: a served folder's absolute path (and
    the play folder's) followed by a path becomes that path relative to the folder; the folder
    alone, its name."""

    def __init__(self, folders):
        pairs: dict[str, str] = {}
        for f in folders:
            for form in {str(f), os.path.realpath(f)}:
                form = form.rstrip(os.sep)
                if form:
                    pairs[form + os.sep] = ""
                    pairs[form] = Path(form).name or "."
        self.pairs = sorted(pairs.items(), key=lambda kv: -len(kv[0]))  # the longest first: a folder inside another
        self.json_pairs = [(json.dumps(a, ensure_ascii=False)[1:-1].encode(), json.dumps(b, ensure_ascii=False)[1:-1].encode())
                           for a, b in self.pairs]

    def text(self, s: str) -> str:
        for a, b in self.pairs:
            if a in s:
                s = s.replace(a, b)
        return s

    def json(self, data: bytes) -> bytes:
        """The same on JSON text (the paths as JSON strings spell them)."""
        for a, b in self.json_pairs:
            if a in data:
                data = data.replace(a, b)
        return data
