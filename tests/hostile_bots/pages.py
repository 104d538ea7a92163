"""Pages of the large files under /usr/lib, which every sandboxed bot sees (issue 32): the same
list in every bot, a page chosen by a key, read with readahead off (one page alone comes into
the page cache), and three ways to tell whether a page is in the cache: ``mincore()``, the time
of a read, and a major fault.  Shared by the hostile bots ``colluder.py`` and ``turns.py``
(beside them, so found on their ``sys.path``)."""

import ctypes
import errno
import hashlib
import os
import resource
import time

PAGE = 4096


def large_files(tops, least=4 << 20):
    """(path, whole pages) of every regular file of at least ``least`` bytes under ``tops``."""
    todo = list(tops)
    while todo:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    todo.append(e.path)
                elif e.is_file(follow_symlinks=False) and e.stat(follow_symlinks=False).st_size >= least:
                    yield e.path, e.stat(follow_symlinks=False).st_size // PAGE
            except OSError:
                continue


class Pages:
    def __init__(self, tops=("/usr/lib", "/usr/lib64")):
        self.files = sorted(large_files(tops))
        self.total = sum(n for _, n in self.files)
        if not self.total:
            raise OSError(errno.ENOENT, "no large files under /usr/lib")
        self.fds: dict[str, int] = {}
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
        self.libc = libc

    def page(self, key: str) -> tuple[int, int]:
        """(an open descriptor of its file, the page's number in it) for ``key``."""
        n = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little") % self.total
        for path, count in self.files:
            if n < count:
                if path not in self.fds:
                    self.fds[path] = os.open(path, os.O_RDONLY)
                    os.posix_fadvise(self.fds[path], 0, 0, os.POSIX_FADV_RANDOM)  # no readahead
                return self.fds[path], n
            n -= count
        raise AssertionError("page out of range")

    @staticmethod
    def touch(fd: int, n: int) -> None:
        """Bring the page into the page cache (a read of one byte)."""
        os.pread(fd, 1, n * PAGE)

    def _mapped(self, fd: int, n: int):
        addr = self.libc.mmap(None, PAGE, 1, 1, fd, n * PAGE)  # PROT_READ, MAP_SHARED
        if addr in (None, ctypes.c_void_p(-1).value):
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        return addr

    def cached(self, fd: int, n: int) -> bool:
        """mincore(): whether the page is in the page cache, without bringing it in."""
        addr = self._mapped(fd, n)
        try:
            vec = ctypes.create_string_buffer(1)
            if self.libc.mincore(addr, PAGE, vec) != 0:
                e = ctypes.get_errno()
                raise OSError(e, os.strerror(e))
            return bool(vec.raw[0] & 1)
        finally:
            self.libc.munmap(addr, PAGE)

    @staticmethod
    def read_fast(fd: int, n: int) -> bool:
        """Whether a read of the page took under 50 us (it was cached; a read from the disk takes longer)."""
        t0 = time.perf_counter_ns()
        os.pread(fd, 1, n * PAGE)
        return time.perf_counter_ns() - t0 < 50_000

    def no_major_fault(self, fd: int, n: int) -> bool:
        """Whether touching the page through a map was no major fault (it was cached: nothing read from the disk)."""
        addr = self._mapped(fd, n)
        try:
            self.libc.madvise(addr, PAGE, 1)  # MADV_RANDOM: no read-around
            before = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
            ctypes.string_at(addr, 1)
            return resource.getrusage(resource.RUSAGE_SELF).ru_majflt == before
        finally:
            self.libc.munmap(addr, PAGE)
