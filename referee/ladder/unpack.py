"""Unpacking a bot an author uploaded (issue 37.5): a ``.tar.gz`` or a ``.zip`` into a new folder,
refusing anything that would reach outside it or exhaust the machine.

An archive comes from anyone who holds a token; it is read as hostile.  Each rule below has a
name (:attr:`ArchiveRefused.rule`) and the refusal says which entry broke it:

* ``format``: neither gzip-compressed tar nor zip (by the file's first bytes, not its name);
* ``archive-size``: the archive itself is larger than :attr:`UnpackLimits.archive_bytes`;
* ``file-count``: more entries than :attr:`UnpackLimits.files`;
* ``unpacked-size``: the files together are larger than :attr:`UnpackLimits.unpacked_bytes`
  (counted on what is really written, not on what the archive declares, and for a tar.gz on the
  decompressed stream as it is read, so a header that claims little and a gzip bomb both stop at
  the cap);
* ``absolute-path``: a name starting with ``/`` (or a drive ``C:``, or ``\\``);
* ``parent-path``: a name with a ``..`` part;
* ``bad-name``: an empty name, a NUL byte or a backslash, a part longer than 255 bytes, a name
  deeper than :attr:`UnpackLimits.depth`;
* ``duplicate``: the same path twice (a later entry would replace what an earlier one made);
* ``through-link``: an entry inside a folder that the archive made a symbolic link;
* ``link-out``: a symbolic link whose target is absolute or that, once everything is unpacked,
  leads out of the folder; a hard link to anything but a regular file unpacked before it;
* ``special-file``: a device, a FIFO or anything else that is not a file, a folder or a link.

What is written: regular files (their permission bits without set-uid, set-gid and sticky, at most
``0o755``), folders (``0o755``), symbolic links that stay inside, hard links as copies.  Owners,
times and extended attributes in the archive are ignored.  Nothing is ever written through a
symbolic link: every file is opened with ``O_NOFOLLOW`` in a folder the unpacking made itself.  On a
refusal the folder is removed again.

Why not ``tarfile``'s own ``data`` filter and ``shutil.unpack_archive``: the filter knows nothing of
sizes and counts, zip has none, and an author is better served by a refusal that names the rule
than by a generic error.  ``tarfile`` and ``zipfile`` still parse the formats.
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

__all__ = ["RULES", "ArchiveRefused", "UnpackLimits", "Unpacked", "archive_kind", "unpack"]

#: Every rule an archive can break, as :attr:`ArchiveRefused.rule` names it.
RULES = ("format", "archive-size", "file-count", "unpacked-size", "absolute-path", "parent-path", "bad-name",
         "duplicate", "through-link", "link-out", "special-file")

_CHUNK = 1 << 16


@dataclass(frozen=True)
class UnpackLimits:
    """The caps on one upload: the archive's bytes, the unpacked files' bytes together, the number of
    entries (files, folders, links) and how many folders deep a name goes."""

    archive_bytes: int = 32 * 2**20
    unpacked_bytes: int = 256 * 2**20
    files: int = 10_000
    depth: int = 32


class ArchiveRefused(ValueError):
    """An archive that is not unpacked: ``rule`` is one of :data:`RULES`, the message names the entry."""

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule
        self.message = message


@dataclass(frozen=True)
class Unpacked:
    """What an archive gave: the folder, its files (regular files and links), folders and bytes written."""

    folder: Path
    files: int
    folders: int
    bytes: int


def archive_kind(head: bytes) -> str | None:
    """``"tar.gz"`` or ``"zip"`` from an archive's first bytes, or None."""
    if head[:2] == b"\x1f\x8b":
        return "tar.gz"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):  # a zip, or an empty one (only its end record)
        return "zip"
    return None


# ------------------------------------------------------------------ names


def safe_name(name: str, limits: UnpackLimits) -> PurePosixPath | None:
    """The relative path an entry's ``name`` stands for, or None for the folder itself (``./``);
    :class:`ArchiveRefused` where the name breaks a rule."""
    shown = repr(name)
    if "\x00" in name:
        raise ArchiveRefused("bad-name", f"{shown}: a NUL byte in a name")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":" and name[0].isalpha()):
        raise ArchiveRefused("absolute-path", f"{shown}: an absolute path (names are relative to the bot's folder)")
    if "\\" in name:
        raise ArchiveRefused("bad-name", f"{shown}: a backslash in a name (use '/' between folders)")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveRefused("parent-path", f"{shown}: a '..' part leads out of the bot's folder")
    if not parts:
        if name.strip("/.") == "" and name != "":
            return None
        raise ArchiveRefused("bad-name", f"{shown}: an empty name")
    if any(len(os.fsencode(p)) > 255 for p in parts):
        raise ArchiveRefused("bad-name", f"{shown}: a part of the name is longer than 255 bytes")
    if len(parts) > limits.depth:
        raise ArchiveRefused("bad-name", f"{shown}: {len(parts)} folders deep, more than the {limits.depth} allowed")
    return PurePosixPath(*parts)


# ------------------------------------------------------------------ writing


class _Writer:
    """Makes the entries inside ``root`` one by one, keeping the rules that need the whole archive
    (count, size, duplicates, links)."""

    def __init__(self, root: Path, limits: UnpackLimits):
        self.root = root
        self.limits = limits
        self.entries = 0
        self.written = 0
        self.files = 0
        self.folders = 0
        self.made: dict[PurePosixPath, str] = {}  # path -> "file" | "dir" | "link"

    def _count(self, rel: PurePosixPath) -> None:
        self.entries += 1
        if self.entries > self.limits.files:
            raise ArchiveRefused("file-count", f"more than {self.limits.files} entries (at {str(rel)!r})")

    def _parent(self, rel: PurePosixPath) -> Path:
        """The folder ``rel`` goes in, made (as real folders) where the archive does not list it."""
        here = PurePosixPath()
        for part in rel.parts[:-1]:
            here = here / part
            kind = self.made.get(here)
            if kind == "link":
                raise ArchiveRefused("through-link", f"{str(rel)!r}: inside {str(here)!r}, which is a symbolic link")
            if kind == "file":
                raise ArchiveRefused("duplicate", f"{str(rel)!r}: inside {str(here)!r}, which is a file")
            if kind is None:
                self._count(here)
                os.mkdir(self.root / here, 0o755)
                self.made[here] = "dir"
                self.folders += 1
        return self.root / rel

    def _new(self, rel: PurePosixPath, kind: str) -> Path:
        if rel in self.made:
            if kind == "dir" and self.made[rel] == "dir":
                return self.root / rel  # a folder listed after its files: nothing to do
            raise ArchiveRefused("duplicate", f"{str(rel)!r} is in the archive twice")
        self._count(rel)
        path = self._parent(rel)
        self.made[rel] = kind
        return path

    def folder(self, rel: PurePosixPath) -> None:
        if self.made.get(rel) == "dir":
            return
        path = self._new(rel, "dir")
        os.mkdir(path, 0o755)
        self.folders += 1

    def file(self, rel: PurePosixPath, mode: int, source: BinaryIO) -> None:
        path = self._new(rel, "file")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     (mode & 0o755) | 0o600)
        with os.fdopen(fd, "wb") as out:
            while True:
                chunk = source.read(_CHUNK)
                if not chunk:
                    break
                self.written += len(chunk)
                if self.written > self.limits.unpacked_bytes:
                    raise ArchiveRefused("unpacked-size", f"the files unpacked pass {_mb(self.limits.unpacked_bytes)} "
                                                          f"(at {str(rel)!r})")
                out.write(chunk)
        self.files += 1

    def link(self, rel: PurePosixPath, target: str) -> None:
        if not target or "\x00" in target:
            raise ArchiveRefused("link-out", f"{str(rel)!r}: a symbolic link without a target")
        if target.startswith("/"):
            raise ArchiveRefused("link-out", f"{str(rel)!r} -> {target!r}: a symbolic link to an absolute path")
        path = self._new(rel, "link")
        os.symlink(target, path)
        self.files += 1

    def hard_link(self, rel: PurePosixPath, target: PurePosixPath | None) -> None:
        if target is None or self.made.get(target) != "file":
            raise ArchiveRefused("link-out", f"{str(rel)!r}: a hard link to {str(target)!r}, which is not a file "
                                             f"unpacked before it")
        src = os.open(self.root / target, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(src, "rb") as f:
            self.file(rel, stat.S_IMODE(os.fstat(f.fileno()).st_mode), f)

    def check_links(self) -> None:
        """Every symbolic link, with everything unpacked, resolves inside the folder."""
        real = os.path.realpath(self.root)
        for rel, kind in self.made.items():
            if kind == "link":
                to = os.path.realpath(self.root / rel)
                if to != real and not to.startswith(real + os.sep):
                    raise ArchiveRefused("link-out", f"{str(rel)!r} -> {os.readlink(self.root / rel)!r} leads out of "
                                                     f"the bot's folder")


def _mb(n: int) -> str:
    return f"{n / 2**20:g} MB"


class _Bounded:
    """A file object that refuses to give more than ``limit`` bytes in all (a decompressed stream)."""

    def __init__(self, raw: BinaryIO, limit: int, what: str):
        self.raw, self.limit, self.what, self.count = raw, limit, what, 0

    def read(self, n: int = -1) -> bytes:
        room = self.limit - self.count
        if n is None or n < 0 or n > room:
            n = room + 1
        data = self.raw.read(n)
        self.count += len(data)
        if self.count > self.limit:
            raise ArchiveRefused("unpacked-size", self.what)
        return data


# ------------------------------------------------------------------ the two formats


def _tar_entries(archive: Path, limits: UnpackLimits, w: _Writer) -> None:
    # the decompressed stream is bounded too: tar headers (a pax header may claim gigabytes) count
    bound = limits.unpacked_bytes + 1024 * (limits.files + 8)
    with open(archive, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
        stream = _Bounded(gz, bound, f"the archive unpacks to more than {_mb(limits.unpacked_bytes)}")
        with tarfile.open(fileobj=stream, mode="r|") as tar:  # a stream: one pass, nothing held
            for m in tar:
                rel = safe_name(m.name, limits)
                if m.isdir():
                    if rel is not None:
                        w.folder(rel)
                    continue
                if rel is None:
                    raise ArchiveRefused("bad-name", f"{m.name!r}: an entry that is not a folder names the folder itself")
                if m.isreg():
                    if m.size > limits.unpacked_bytes - w.written:
                        raise ArchiveRefused("unpacked-size", f"{m.name!r} declares {m.size} bytes: the files unpacked "
                                                              f"would pass {_mb(limits.unpacked_bytes)}")
                    w.file(rel, m.mode, tar.extractfile(m))
                elif m.issym():
                    w.link(rel, m.linkname)
                elif m.islnk():
                    try:
                        target = safe_name(m.linkname, limits)
                    except ArchiveRefused:
                        target = None
                    w.hard_link(rel, target)
                else:
                    raise ArchiveRefused("special-file", f"{m.name!r}: {_tar_kind(m)}, not a file, a folder or a link")


def _tar_kind(m: tarfile.TarInfo) -> str:
    if m.ischr():
        return "a character device"
    if m.isblk():
        return "a block device"
    if m.isfifo():
        return "a FIFO (named pipe)"
    return f"an entry of type {m.type!r}"


def _zip_entries(archive: Path, limits: UnpackLimits, w: _Writer) -> None:
    with zipfile.ZipFile(archive) as z:
        infos = z.infolist()
        if len(infos) > limits.files:
            raise ArchiveRefused("file-count", f"{len(infos)} entries, more than the {limits.files} allowed")
        for info in infos:
            rel = safe_name(info.filename, limits)
            mode = info.external_attr >> 16 if info.create_system == 3 else 0  # 3: made on Unix (the mode is there)
            kind = stat.S_IFMT(mode)
            if info.is_dir() or kind == stat.S_IFDIR:
                if rel is not None:
                    w.folder(rel)
                continue
            if rel is None:
                raise ArchiveRefused("bad-name", f"{info.filename!r}: an entry that is not a folder names the folder itself")
            if kind == stat.S_IFLNK:
                if info.file_size > 4096:
                    raise ArchiveRefused("link-out", f"{info.filename!r}: a symbolic link with a target of "
                                                     f"{info.file_size} bytes")
                with z.open(info) as f:
                    w.link(rel, f.read(4097).decode("utf-8", "replace"))
            elif kind in (0, stat.S_IFREG):
                if info.file_size > limits.unpacked_bytes - w.written:
                    raise ArchiveRefused("unpacked-size", f"{info.filename!r} declares {info.file_size} bytes: the "
                                                          f"files unpacked would pass {_mb(limits.unpacked_bytes)}")
                with z.open(info) as f:
                    w.file(rel, mode if kind else 0o644, f)
            else:
                raise ArchiveRefused("special-file", f"{info.filename!r}: {_zip_kind(kind)}, not a file, a folder or a link")


def _zip_kind(kind: int) -> str:
    return {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO (named pipe)",
            stat.S_IFSOCK: "a socket"}.get(kind, f"an entry of type {kind:o}")


# ------------------------------------------------------------------ the one entry point


def unpack(archive: str | os.PathLike, folder: str | os.PathLike, limits: UnpackLimits = UnpackLimits()) -> Unpacked:
    """Unpack ``archive`` (tar.gz or zip) into ``folder``, which must not exist yet (it is made, 0755);
    :class:`ArchiveRefused` naming the rule broken, and then ``folder`` is removed again."""
    archive, folder = Path(archive), Path(folder)
    size = os.stat(archive).st_size
    if size > limits.archive_bytes:
        raise ArchiveRefused("archive-size", f"the archive is {size} bytes, more than the {_mb(limits.archive_bytes)} "
                                             f"allowed")
    with open(archive, "rb") as f:
        kind = archive_kind(f.read(8))
    if kind is None:
        raise ArchiveRefused("format", "not a .tar.gz or a .zip archive (by its first bytes)")
    os.mkdir(folder, 0o755)
    w = _Writer(folder, limits)
    try:
        try:
            (_tar_entries if kind == "tar.gz" else _zip_entries)(archive, limits, w)
        except ArchiveRefused:
            raise
        except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, gzip.BadGzipFile) as e:
            raise ArchiveRefused("format", f"a damaged {kind} archive ({type(e).__name__}: {e})") from None
        except NotImplementedError as e:  # a zip compression method zipfile cannot read
            raise ArchiveRefused("format", f"a {kind} archive that cannot be read here ({e})") from None
        w.check_links()
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Unpacked(folder, w.files, w.folders, w.written)

