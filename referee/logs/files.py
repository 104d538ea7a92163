"""Reading the files a folder holds without being hurt by them: the one way marias opens what a
tournament folder, a log folder or a served folder contains.

A folder may hold anything its writers put there: a bot with a kept ``workdir`` can make a FIFO
where a ``tournament.json`` is expected, a manifest can name ``/dev/zero`` or ``../../etc``, a
JSON file can nest arrays 200,000 deep.  So:

- :func:`open_regular` opens only a regular file, never blocking: a FIFO, a device or a socket
  is refused (:class:`NotAFile`) before anything is read from it (it is opened with
  ``O_NONBLOCK`` and checked with ``fstat``, so a file swapped in between is caught too);
- inside :func:`confined` (``marias serve`` reading a served folder) a file that lies outside the
  given folder, by its own path or through a symbolic link, is refused as well
  (:class:`Outside`): every path a manifest, a journal or a log names stays in the folder;
- :func:`read_bytes` refuses more than a bound, and :func:`loads` turns JSON nested too deep
  (the standard library's ``RecursionError``) into a ``ValueError`` like any other malformed JSON.

All refusals are ``OSError`` (the file cannot be read) or ``ValueError`` (its content is bad),
the two a reader already handles: the caller writes a note on that entry and goes on.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import hashlib
import json
import os
import stat
from typing import BinaryIO, Iterator

#: The most a JSON file of a folder (manifest, tournament.json, journal) is read to.
MAX_READ_BYTES = 256 * 2**20

_ROOT: contextvars.ContextVar[str | None] = contextvars.ContextVar("marias_confined_root", default=None)

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


class NotAFile(OSError):
    """Not a regular file (a FIFO, a device, a socket, a folder): never opened for reading.
    ``strerror`` says what it is, ``filename`` names it."""

    def __init__(self, path, mode: int):
        super().__init__(errno.EINVAL, f"{kind_of(mode)}, not a regular file: not read", str(path))


class Outside(OSError):
    """A file outside the folder being read (its path or a symbolic link leads out of it)."""

    def __init__(self, path):
        super().__init__(errno.EACCES, "outside the folder being read: not read", str(path))


class TooLarge(OSError):
    """A file larger than the reader's bound."""

    def __init__(self, path, max_bytes: int):
        super().__init__(errno.EFBIG, f"larger than the {max_bytes / 2**20:g} MB read", str(path))


def kind_of(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


@contextlib.contextmanager
def confined(folder) -> Iterator[None]:
    """Within this block (this thread or task), :func:`open_regular` refuses files outside ``folder``."""
    token = _ROOT.set(os.path.realpath(folder))
    try:
        yield
    finally:
        _ROOT.reset(token)


def confinement() -> str | None:
    """The folder reads are confined to here (see :func:`confined`), or None."""
    return _ROOT.get()


def is_inside(path, folder) -> bool:
    """``path`` is ``folder`` or lies inside it, both resolved (symbolic links followed)."""
    p, f = os.path.realpath(path), os.path.realpath(folder)
    return p == f or p.startswith(f.rstrip(os.sep) + os.sep)


def _where(fd: int, path) -> str:
    """The real path of an open file (Linux: its /proc link; elsewhere the path resolved)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def check(path) -> os.stat_result:
    """The ``stat`` of ``path`` when it may be read: a regular file (inside the confinement, if any);
    :class:`NotAFile` or :class:`Outside` otherwise (``FileNotFoundError`` when it does not exist)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotAFile(path, st.st_mode)
    root = _ROOT.get()
    if root is not None and not is_inside(path, root):
        raise Outside(path)
    return st


def open_regular(path, *, max_bytes: int | None = None) -> BinaryIO:
    """``path`` opened for reading in binary, when it is a regular file (inside the confinement, if
    any, and within ``max_bytes``); :class:`NotAFile`, :class:`Outside`, :class:`TooLarge` or another
    ``OSError`` otherwise.  Never blocks on a FIFO and never reads from a device."""
    check(path)  # nothing special is opened at all (opening some devices does something)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)  # what was opened, should the path have changed since
        if not stat.S_ISREG(st.st_mode):
            raise NotAFile(path, st.st_mode)
        root = _ROOT.get()
        if root is not None and not is_inside(_where(fd, path), root):
            raise Outside(path)
        if max_bytes is not None and st.st_size > max_bytes:
            raise TooLarge(path, max_bytes)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path, max_bytes: int = MAX_READ_BYTES) -> bytes:
    """The whole content of a regular file of at most ``max_bytes`` (see :func:`open_regular`)."""
    with open_regular(path, max_bytes=max_bytes) as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew after it was opened
        raise TooLarge(path, max_bytes)
    return data


def read_text(path, max_bytes: int = MAX_READ_BYTES, errors: str = "strict") -> str:
    return read_bytes(path, max_bytes).decode("utf-8", errors)


def loads(text):
    """``json.loads``, with JSON nested too deep for the parser a ``ValueError`` like any malformed JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None


def read_json(path, max_bytes: int = MAX_READ_BYTES):
    """A JSON file's value (see :func:`read_bytes`); ``ValueError`` when its content is not JSON."""
    data = read_bytes(path, max_bytes)
    try:
        return loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None


def sha256(path) -> str:
    """The SHA-256 (hex) of a regular file's content (see :func:`open_regular`)."""
    d = hashlib.sha256()
    with open_regular(path) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            d.update(chunk)
    return d.hexdigest()


def refuse_special(*paths) -> None:
    """Each of ``paths`` that exists is a regular file inside the confinement, or :class:`NotAFile` /
    :class:`Outside` is raised (for files another library opens: a SQLite database and its WAL)."""
    for p in paths:
        try:
            check(p)
        except FileNotFoundError:
            continue
