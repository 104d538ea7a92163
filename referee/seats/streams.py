"""A bot's output streams: its stdout cut into bounded lines, its stderr copied to a capped file.

Nothing here knows about processes or the game: :class:`LineBuffer` is fed whatever
the pipe gave and hands out whole lines, refusing one longer than the limit as soon as
that is known (so no more than the limit and one chunk is ever held); :class:`StderrCopy`
keeps a file of at most ``cap`` bytes and the last few KiB for fault reports.
"""

from __future__ import annotations

import contextlib
import os

_STDERR_TAIL = 4096


def open_private(path: str | os.PathLike, mode: str = "ab"):
    """Open ``path`` for appending (``"ab"``) or writing text (``"w"``) as a file only its
    owner can read (0600); missing folders are created 0700."""
    path = os.fspath(path)
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, mode=0o700, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if "a" in mode else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)
    if "b" in mode:
        return os.fdopen(fd, mode, buffering=0)
    return os.fdopen(fd, mode, encoding="utf-8")


class LineTooLong(Exception):
    """A line longer than the limit; ``head`` is what was held of it when that was known."""

    def __init__(self, head: bytes) -> None:
        super().__init__(f"line of {len(head)}+ bytes")
        self.head = head


class LineBuffer:
    """What a bot wrote to stdout, cut into lines of at most ``max_line`` bytes.  A longer line
    is refused (:class:`LineTooLong`) as soon as it is known to be too long, and the rest of
    it is skipped up to its newline, so no more than ``max_line`` + one chunk is ever held."""

    def __init__(self, max_line: int) -> None:
        self.max_line = max(1, int(max_line))
        self.data = bytearray()
        self._scan = 0  # bytes of data known to hold no newline
        self._skipping = False  # discarding the rest of an over-long line

    def feed(self, chunk: bytes) -> None:
        self.data += chunk

    def next_line(self) -> bytes | None:
        """Remove and return the next complete line, without its newline (None: none yet)."""
        data = self.data
        i = data.find(b"\n", self._scan)
        if 0 <= i <= self.max_line and not self._skipping:  # the common case: one whole line
            line = bytes(data[:i])
            del data[: i + 1]
            self._scan = 0
            return line
        while data:
            i = data.find(b"\n", self._scan)
            if i < 0:
                if self._skipping:
                    data.clear()
                elif len(data) > self.max_line:
                    head = bytes(data)
                    data.clear()
                    self._skipping = True
                    self._scan = 0
                    raise LineTooLong(head)
                self._scan = len(data)
                return None
            line = bytes(data[:i])
            del data[: i + 1]
            self._scan = 0
            if self._skipping:
                self._skipping = False
                continue
            if i > self.max_line:
                raise LineTooLong(line)
            return line
        self._scan = 0
        return None


class StderrCopy:
    """A bot's stderr, copied to a file up to ``cap`` bytes (then one marker line), and its
    last few KiB kept in memory for fault reports."""

    def __init__(self, path: str | os.PathLike | None, cap: int) -> None:
        self.cap = max(0, int(cap))
        self.tail = bytearray()
        self._file = open_private(path) if path is not None else None
        self._written = 0
        self._marked = False
        self._last = b"\n"

    def write(self, chunk: bytes) -> None:
        self.tail += chunk[-_STDERR_TAIL:]
        del self.tail[:-_STDERR_TAIL]
        f = self._file
        if f is None:
            return
        room = self.cap - self._written
        try:
            if room > 0:
                part = chunk[:room]
                f.write(part)
                self._written += len(part)
                self._last = part[-1:]
            if len(chunk) > room and not self._marked:
                self._marked = True
                lead = b"" if self._last == b"\n" else b"\n"
                f.write(lead + f"[marias: stderr truncated at {self.cap} bytes]\n".encode())
        except OSError:  # the file cannot be written (disk full...): keep draining, stop copying
            self.close()

    def close(self) -> None:
        f, self._file = self._file, None
        if f is not None:
            with contextlib.suppress(OSError):
                f.close()
