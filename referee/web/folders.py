"""The folders ``marias serve`` was given, and the only way a request reaches a file in them.

A request names a file by the index of one of the served folders (its *root*) and a path
relative to it.  :meth:`Roots.resolve` is the one gate: a path with a ``..`` part (however it
was encoded in the URL: the router hands us the decoded path), an absolute path, a path
that leaves the folder through a symlink, a missing file and a file larger than the limit
are all refused with an :class:`Refused` that carries the HTTP status to answer.

Nothing here writes; the play page's logs go to their own folder (``referee.web.play``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..tournaments.event import EventFolder

#: A file larger than this is not read for a page (a log of 100 partie is about 2 MB).
MAX_FILE_BYTES = 64 * 2**20

TOURNAMENT_FILES = ("manifest.json", "tournament.json")


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

    kind: str  # tournament | duel | log
    root: int
    rel: str  # relative to the root, '/'-separated; '.' for the root itself
    title: str
    size: int = 0
    mtime: float = 0.0


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

    def items(self, limit: int = 2000) -> list[Item]:
        """Tournaments and duels (folders with a manifest or tournament.json), then the logs outside
        them, newest first; at most ``limit`` logs."""
        out: list[Item] = []
        logs: list[Item] = []
        for i, base in enumerate(self.folders):
            for dirpath, dirnames, filenames in os.walk(base):  # symlinks not followed
                d = Path(dirpath)
                dirnames[:] = sorted(n for n in dirnames if not n.startswith("."))
                if any(n in filenames for n in TOURNAMENT_FILES):
                    kind = EventFolder(d).kind
                    out.append(Item(kind, i, self.rel(i, d), d.name or str(d)))
                    dirnames[:] = []  # its logs are shown on its page
                    continue
                for n in filenames:
                    if n.endswith(".jsonl") and not n.endswith(".transcript.jsonl"):
                        p = d / n
                        try:
                            st = p.lstat()
                        except OSError:
                            continue
                        if p.is_symlink():
                            continue
                        logs.append(Item("log", i, self.rel(i, p), n, st.st_size, st.st_mtime))
        logs.sort(key=lambda x: -x.mtime)
        return out + logs[:limit]

