"""A ladder's old logs, compressed: disk that grows predictably over weeks.

Once a group has been rated (or made void) for ``compress_after_hours`` (``ladder.json``; 24 by
default), the runner gzips its six logs and its bots' kept stderr (``UNIT.jsonl`` ->
``UNIT.jsonl.gz``), a few groups each minute.  The database then names the ``.gz`` log: the
gzipped file is written and synced first, the database changed, and only then the plain file
removed — a run killed in between leaves both, and the next pass removes the plain one.  A log is
gzipped byte for byte, so its seal and signature still verify once it is read back
(:func:`readable_log`).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path


def _gzip(src: Path) -> Path:
    dst = src.with_name(src.name + ".gz")
    part = dst.with_name(dst.name + ".part")
    with open(src, "rb") as f, open(part, "wb") as raw:
        with gzip.GzipFile(filename=src.name, mode="wb", fileobj=raw, mtime=0, compresslevel=6) as z:
            shutil.copyfileobj(f, z, 1 << 20)
        raw.flush()
        os.fsync(raw.fileno())
    os.replace(part, dst)
    return dst


def compress_old(con: sqlite3.Connection, folder: Path, hours: float, limit: int = 20,
                 now: float | None = None) -> int:
    """Gzip the logs and stderr of up to ``limit`` groups finished more than ``hours`` ago: the
    number of groups compressed."""
    now = time.time() if now is None else now
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - hours * 3600))
    rows = con.execute("SELECT n FROM groups WHERE status!='playing' AND compressed=0 AND finished<=? "
                       "ORDER BY n LIMIT ?", (cutoff, int(limit))).fetchall()
    logs = Path(folder) / "logs"
    for (n,) in rows:
        units = con.execute("SELECT id, log FROM units WHERE grp=?", (n,)).fetchall()
        renamed = []
        for uid, log in units:
            if not log.endswith(".gz"):
                src = Path(folder) / log
                if src.exists():
                    _gzip(src)
                    renamed.append((uid, log + ".gz"))
            for p in logs.glob(f"{uid}.seat*.stderr.log"):
                _gzip(p)
        with con:
            con.executemany("UPDATE units SET log=? WHERE id=?", [(log, uid) for uid, log in renamed])
            con.execute("UPDATE groups SET compressed=1 WHERE n=?", (n,))
        for uid, _log in units:  # the plain files, now that the database names the gzipped ones
            for p in logs.glob(f"{uid}.*"):
                if not p.name.endswith(".gz") and p.with_name(p.name + ".gz").exists():
                    p.unlink(missing_ok=True)
    return len(rows)


def open_log(folder: Path, rel: str) -> bytes:
    """A log's bytes (decompressed when it is a ``.jsonl.gz``), given its path relative to the folder."""
    p = Path(folder) / rel
    if not p.exists() and rel.endswith(".jsonl") and p.with_name(p.name + ".gz").exists():
        p = p.with_name(p.name + ".gz")  # compressed since it was listed
    if p.name.endswith(".gz"):
        with gzip.open(p, "rb") as f:
            return f.read()
    return p.read_bytes()


def readable_log(folder: Path, rel: str) -> Path:
    """A plain ``.jsonl`` file holding the log ``rel``: the log itself, or for a gzipped one a copy in a
    private cache folder (per user, under the system's temporary folder), so that anything reading
    logs by path (validate, replay, the web pages) reads it unchanged."""
    p = Path(folder) / rel
    if p.name.endswith(".jsonl") and p.exists():
        return p
    data = open_log(folder, rel)
    key = hashlib.sha256(data).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / f"marias-ladder-logs-{os.getuid()}"
    cache.mkdir(mode=0o700, exist_ok=True)
    name = Path(rel).name
    if name.endswith(".gz"):
        name = name[:-3]
    out = cache / f"{key}-{name}"
    if not out.exists():
        tmp = out.with_name(out.name + f".{os.getpid()}.part")
        tmp.write_bytes(data)
        os.replace(tmp, out)
    return out
