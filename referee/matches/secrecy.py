"""Whether a match's decks are secret, and the files no bot may read (issue 22).

Every deck and cut follows from the match seed (protocol/LOGS.md, Seeds).  A seed the
referee draws (128 bits from the operating system) or reads from a seed file nobody else
sees is *secret*: seeing cards reveals nothing of it.  A seed typed on the command line or
in a configuration file makes the decks reproducible, and so *public*: whoever knows it
deals every hand.  A short seed is public even when nobody tells it: a bot can try values
against its own cards until one deals them (7 cards pin a deck to one in about 2^22).

The log header says which (``"decks": "public seed"`` or ``"secret seed"``); so does every
table.  :func:`seed_warnings` is what is printed when a seed is given.
"""

from __future__ import annotations

import math
import os
import re
import stat
from pathlib import Path
from typing import Iterable

from ..logs import files

PUBLIC = "public seed"  # typed on the command line or in a configuration: anyone who knows it deals every hand
SECRET = "secret seed"  # drawn by the referee, or read from a seed file the bots cannot see
KINDS = (PUBLIC, SECRET)
#: Below this many bits a bot can search for the seed; a drawn seed has 128.
MIN_SECRET_BITS = 128
MAX_SEED_FILE_BYTES = 4096


def seed_bits(seed: str) -> float:
    """A generous estimate of the entropy of a seed's text, in bits: its length times the bits per
    character of the smallest usual alphabet holding it (decimal digits 3.32, hex digits 4, letters
    and digits 5.95, any printable text 6.55).  Words and dates have far less; this only catches
    what is certainly short."""
    s = str(seed)
    if not s:
        return 0.0
    if s.isdigit():
        per = math.log2(10)
    elif re.fullmatch(r"[0-9a-f]+", s) or re.fullmatch(r"[0-9A-F]+", s):
        per = 4.0
    elif re.fullmatch(r"[0-9A-Za-z]+", s):
        per = math.log2(62)
    else:
        per = math.log2(95)
    return len(s) * per


def is_short(seed: str) -> bool:
    return seed_bits(seed) < MIN_SECRET_BITS


def seed_warnings(seed: str, kind: str, where: str = "the seed") -> list[str]:
    """What to tell the user about a seed they gave (``where`` names it: ``--seed``, ``t.yaml: seed``)."""
    out = []
    if kind == PUBLIC:
        out.append(f"{where} makes the decks reproducible, so public: anyone who knows it deals every hand "
                   f"(logs and tables say 'decks: public seed'); leave it out for a fresh secret seed, or keep "
                   f"it in a seed file (--seed-file / seed_file:) that no bot can read")
    if is_short(seed):
        out.append(f"{where} is short (at most {seed_bits(seed):.0f} bits, under {MIN_SECRET_BITS}): a bot can find "
                   f"it by trying values against its own cards; use 32 or more random hex digits "
                   f"(python3 -c 'import secrets; print(secrets.token_hex(16))')")
    return out


class SeedFileError(ValueError):
    """A seed file that cannot be used; the message names the file."""


def read_seed_file(path: str | os.PathLike) -> str:
    """The seed kept in a file: its text without surrounding white space (one line, at most 200
    characters, as ``--seed``).  :class:`SeedFileError` names the file and what is wrong."""
    from .bounds import MAX_SEED_CHARS

    p = Path(path)
    try:
        with open(p, "rb") as f:
            data = f.read(MAX_SEED_FILE_BYTES + 1)
    except OSError as e:
        raise SeedFileError(f"cannot read the seed file {str(p)!r}: {e.strerror or e}") from None
    if len(data) > MAX_SEED_FILE_BYTES:
        raise SeedFileError(f"the seed file {str(p)!r} is larger than {MAX_SEED_FILE_BYTES} bytes: is it the right file?")
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise SeedFileError(f"the seed file {str(p)!r} is not UTF-8 text") from None
    if not text:
        raise SeedFileError(f"the seed file {str(p)!r} is empty")
    if "\n" in text:
        raise SeedFileError(f"the seed file {str(p)!r} holds more than one line; a seed is one line of text")
    if len(text) > MAX_SEED_CHARS:
        raise SeedFileError(f"the seed in {str(p)!r} is {len(text)} characters; at most {MAX_SEED_CHARS}")
    return text


def hide_paths(*paths) -> tuple[str, ...]:
    """Absolute paths for a sandbox's hide list: each as given (made absolute) and, where a
    symbolic link leads elsewhere, where it leads."""
    out: list[str] = []
    for p in paths:
        if p is None:
            continue
        a = os.path.abspath(os.fspath(p))
        for q in (a, os.path.realpath(a)):
            if q not in out:
                out.append(q)
    return tuple(out)


def readable_by_others(path: str | os.PathLike) -> bool:
    """The file's mode lets its group or everyone read it."""
    try:
        return bool(os.stat(path).st_mode & (stat.S_IRGRP | stat.S_IROTH))
    except OSError:
        return False


def inside(path: str | os.PathLike, folder: str | os.PathLike) -> bool:
    """``path`` is ``folder`` or lies inside it (both resolved)."""
    p, f = os.path.realpath(path), os.path.realpath(folder)
    return p == f or p.startswith(f.rstrip("/") + "/")


# ------------------------------------------------------------------ tables

def log_decks(path: str | os.PathLike) -> str | None:
    """The header's ``decks`` of one log (None: an older log that does not say)."""
    try:
        with files.open_regular(path) as f:  # never a FIFO or a device
            first = f.readline(1 << 20)
        h = files.loads(first)
    except (OSError, ValueError):
        return None
    v = h.get("decks") if isinstance(h, dict) and h.get("type") == "header" else None
    return v if v in KINDS else None


def decks_summary(logs: Iterable[str | os.PathLike]) -> str | None:
    """What a table says of its logs' decks: ``public seed``, ``secret seed``, ``public seed (N of M
    logs)`` when mixed, with older logs that do not say counted apart; None without logs."""
    kinds = [log_decks(p) for p in logs]
    if not kinds:
        return None
    n = len(kinds)
    pub, sec = kinds.count(PUBLIC), kinds.count(SECRET)
    unknown = n - pub - sec
    if pub == n:
        return PUBLIC
    if sec == n:
        return SECRET
    if unknown == n:
        return "not recorded (logs older than the 'decks' field)"
    parts = [f"{PUBLIC} ({pub} of {n} logs)" if pub else None, f"{SECRET} ({sec} of {n} logs)" if sec else None,
             f"not recorded ({unknown} of {n} logs)" if unknown else None]
    return ", ".join(p for p in parts if p)


def table_logs(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """The logs a table is made from: each file, and each folder's ``*.jsonl`` (transcripts excluded)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.jsonl") if not q.name.endswith(".transcript.jsonl"))
        elif p.is_file():
            out.append(p)
    return out


def decks_line(paths: Iterable[str | os.PathLike], fmt: str = "text") -> str | None:
    """The line every table ends with: ``decks: public seed`` (a comment in csv; None for json or no log)."""
    s = decks_summary(table_logs(paths))
    if s is None or fmt == "json":
        return None
    return f"# decks: {s}" if fmt == "csv" else f"decks: {s}"
