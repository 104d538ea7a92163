"""The analysis of a log, cached beside the log where no bot is shown it.

An analysis holds every hand of every deal and how each bot played: what the log holds, and
more (the others' mistakes, ready to learn from).  marias hides its logs from every sandboxed
bot by marking their folders (:func:`referee.seats.sandbox.mark_output`); the cache is kept in
the same way:

* it lives in ``.marias-analysis/`` in the log's own folder, one file per log and settings,
  ``LOGNAME.KEY.json`` (mode 0600, the folder 0700), KEY the first 24 hex digits of the SHA-256
  of the log's bytes' SHA-256, the settings and :data:`~referee.analysis.run.ANALYSIS_VERSION`:
  a log that changes, other settings or another analysis never meet an old entry;
* the folder is marked as marias output (``.marias-output`` in it) unless a folder above it is
  marked already (a log folder of ``marias match --log``, a tournament or duel folder): either
  way the sandbox covers it for every bot (:func:`referee.seats.sandbox.marked_outputs`);
* it is written to a temporary name and renamed, so a reader never sees half an analysis.

``marias analyze --cache`` (:func:`cached_log_analysis`) and ``marias serve``
(:mod:`referee.web.analyses`, in the background) use the same entries.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable

from ..seats.sandbox import mark_output
from .deals import Settings
from .run import ANALYSIS_VERSION, log_analysis

CACHE_DIR = ".marias-analysis"


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cache_path(log: Path, settings: Settings = Settings()) -> Path:
    """Where the analysis of ``log`` with ``settings`` is cached."""
    log = Path(log)
    key = json.dumps({"log": _file_sha256(log), "settings": settings.to_dict(), "version": ANALYSIS_VERSION},
                     sort_keys=True)
    return log.parent / CACHE_DIR / f"{log.name}.{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def load(log: Path, settings: Settings = Settings()) -> dict | None:
    """The cached analysis, or ``None`` (none yet, or unreadable)."""
    try:
        with open(cache_path(log, settings), "rb") as f:
            body = json.loads(f.read())
    except (OSError, ValueError):
        return None
    return body if isinstance(body, dict) and body.get("analysis_version") == ANALYSIS_VERSION else None


def store(log: Path, analysis: dict, settings: Settings = Settings()) -> Path:
    """Write ``analysis`` to the cache of ``log`` (its folder made and marked first) and return its path."""
    path = cache_path(log, settings)
    folder = path.parent
    folder.mkdir(mode=0o700, exist_ok=True)
    mark_output(folder)  # before anything is written in it: hidden from every bot (module docstring)
    tmp = folder / f".{path.name}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(analysis, f, ensure_ascii=False, separators=(",", ":"))
    os.replace(tmp, path)
    return path


def cached_log_analysis(log: Path, settings: Settings = Settings(),
                        compute: Callable[[Path, Settings], dict] = log_analysis) -> dict:
    """The analysis of ``log``: from the cache when there, else computed and cached."""
    hit = load(log, settings)
    if hit is not None:
        return hit
    analysis = compute(Path(log), settings)
    store(log, analysis, settings)
    return analysis
