"""A seccomp filter that closes the file-lock, keyring and page-cache channels between sandboxed
bots (issues 21.3 and 32).

Two bots in separate bubblewrap sandboxes still see the same files read-only (their
programs, the system's libraries), and a lock lives on the file itself, not on a mount:
one bot holding ``flock`` on ``/usr/lib/.../os.py`` and another testing it pass a bit
per test.  An ``inotify`` or ``fanotify`` watch on such a file is the same channel the
other way round (the watcher sees the other bot open or read it).  This filter takes
both away:

* **taking a lock does nothing and succeeds**: ``flock`` and the ``fcntl`` commands
  ``F_SETLK``/``F_SETLKW`` (and the ``*64`` forms of 32-bit programs), the
  open-file-description ones ``F_OFD_SETLK``/``F_OFD_SETLKW`` return 0 without being
  run, so no lock exists for another bot to test and a test always finds the file
  free;
* **asking about locks fails** with ``EPERM``: ``F_GETLK`` (``F_GETLK64``),
  ``F_OFD_GETLK`` (success would have to fill in an answer), leases
  ``F_SETLEASE``/``F_GETLEASE``, and ``inotify_init``, ``inotify_init1``,
  ``inotify_add_watch``, ``fanotify_init``;
* **the kernel's keyring and page-cache residency do not exist** (``ENOSYS``, as on a kernel
  built without them): ``add_key``, ``request_key`` and ``keyctl`` (key ids are global and a
  key's description is listed in ``/proc/keys`` to every process of the same user: one bot
  adds a key naming its hand, another lists it), ``mincore`` and ``cachestat`` (they say which
  pages of a file are in the page cache: one bot reads chosen pages of a large system file,
  another asks which are cached);
* every other system call and ``fcntl`` (``F_GETFL``, ``F_SETFD``, ``F_DUPFD`` ...) runs.

Why ``ENOSYS`` for those: it is what a kernel without keys (``CONFIG_KEYS=n``) answers, so
programs that use a keyring when there is one (Kerberos, systemd's tools) take the path they
have for its absence; no runtime a bot is usually written in calls either at start (Python,
Node.js, Java and Perl start under the filter: ``tests/test_limits.py``).  ``mincore`` and
``cachestat`` are only ever used to look at memory and caches, never needed to run.

Why taking a lock succeeds rather than fails: programs take locks on their own files
as a matter of course and treat a failure as an error.  The JVM locks its
``/tmp/hsperfdata_USER/PID`` file at start and, refused, prints a warning *on stdout*
(which breaks the protocol); SQLite takes a shared lock to read a database (an opening
book) and, refused, does not read it.  A lock that succeeds and excludes nothing
costs a bot only exclusion between its own processes (use a pipe, or ``mkdir`` as a
lock, for that).

Every other system call is allowed: this is a deny list for one channel, the namespaces
of :mod:`referee.seats.sandbox` do the rest.

**Built here with ``struct``, not with libseccomp.**  The filter is 30-odd classic BPF
instructions; writing them needs no system library (a libseccomp binding needs
libseccomp installed on the machine, which bubblewrap itself does not), and the program is short enough
to read and test whole: :func:`program` returns it, the tests run real ``flock`` and
``fcntl`` calls under it.  bubblewrap loads it (``--seccomp FD``: the fd holds an array
of ``struct sock_filter``, 8 bytes each) after setting ``no_new_privs``.

**Architectures.**  A filter sees the system-call number of the ABI the call came in
through, so the first instruction checks ``seccomp_data.arch``:

* x86_64 (``AUDIT_ARCH_X86_64``) with its 32-bit ABI (``AUDIT_ARCH_I386``, ``int 0x80``);
  the x32 ABI shares ``AUDIT_ARCH_X86_64`` and sets bit 30 of the number
  (``__X32_SYSCALL_BIT``), which is masked off before the comparison, so x32's
  ``flock`` and ``fcntl`` are caught too;
* aarch64 (``AUDIT_ARCH_AARCH64``) with its 32-bit ARM ABI (``AUDIT_ARCH_ARM``).

A call through any other ABI fails with ``ENOSYS``: a program cannot step around the
filter by switching ABIs.  On a machine of another architecture :func:`program` raises
:class:`SeccompUnsupported` and the referee runs bots without the filter, saying so in
the log header (``sandbox_limits_by.locks``, ``.keyring``, ``.mincore``).
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import struct
import sys
from dataclasses import dataclass

__all__ = ["SeccompUnsupported", "program", "filter_bytes", "filter_fd", "status", "FAKED_FCNTL", "BLOCKED_FCNTL"]


class SeccompUnsupported(RuntimeError):
    """No filter is known for this machine's architecture."""


# <linux/filter.h>: instruction classes, sizes, modes, operations and sources
_LD, _ALU, _JMP, _RET = 0x00, 0x04, 0x05, 0x06
_W, _ABS = 0x00, 0x20
_AND = 0x50
_JEQ, _JSET = 0x10, 0x40
_K = 0x00

# <linux/seccomp.h>
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

# <linux/audit.h>
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
AUDIT_ARCH_ARM = 0x40000028
X32_SYSCALL_BIT = 0x40000000

# struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
_OFF_NR, _OFF_ARCH = 0, 4
# the low 32 bits of args[1] (fcntl's cmd is an unsigned int: the kernel ignores the rest)
_OFF_ARG1_LOW = 16 + 8 + (0 if sys.byteorder == "little" else 4)

#: fcntl commands that take a lock: they return 0 and do nothing (<asm-generic/fcntl.h>, <linux/fcntl.h>)
FAKED_FCNTL = {"F_SETLK": 6, "F_SETLKW": 7, "F_SETLK64": 13, "F_SETLKW64": 14,  # the *64: 32-bit ABIs
               "F_OFD_SETLK": 37, "F_OFD_SETLKW": 38}
#: fcntl commands that test a lock or take or test a lease: EPERM
BLOCKED_FCNTL = {"F_GETLK": 5, "F_GETLK64": 12, "F_OFD_GETLK": 36, "F_SETLEASE": 1024, "F_GETLEASE": 1025}

@dataclass(frozen=True)
class _Abi:
    """The system-call numbers one ABI uses for what the filter handles."""

    flock: int  # taking a lock: does nothing, returns 0
    denied: tuple[int, ...]  # EPERM
    absent: tuple[int, ...]  # ENOSYS
    fcntl: tuple[int, ...]  # calls whose args[1] is an fcntl command


# System-call numbers per ABI, from the kernel's tables (arch/x86/entry/syscalls/syscall_64.tbl
# and syscall_32.tbl, arch/arm/tools/syscall.tbl, include/uapi/asm-generic/unistd.h for aarch64).
# cachestat (Linux 6.5) is 451 in every table, as every call added since Linux 5.1 has one number.
_CACHESTAT = 451
_I386_ARM_FCNTL = (55, 221)  # fcntl, fcntl64: the same numbers on i386 and 32-bit ARM
_ABIS = {
    # x86_64 (and x32, the same numbers | bit 30 for these calls, all "common" in syscall_64.tbl):
    # flock 73; inotify_init 253, inotify_add_watch 254, inotify_init1 294, fanotify_init 300;
    # add_key 248, request_key 249, keyctl 250, mincore 27; fcntl 72
    AUDIT_ARCH_X86_64: _Abi(73, (253, 254, 294, 300), (248, 249, 250, 27, _CACHESTAT), (72,)),
    # i386: flock 143; inotify_init 291, inotify_add_watch 292, inotify_init1 332, fanotify_init 338;
    # add_key 286, request_key 287, keyctl 288, mincore 218
    AUDIT_ARCH_I386: _Abi(143, (291, 292, 332, 338), (286, 287, 288, 218, _CACHESTAT), _I386_ARM_FCNTL),
    # aarch64 (the generic table): flock 32; inotify_init1 26, inotify_add_watch 27, fanotify_init 262;
    # add_key 217, request_key 218, keyctl 219, mincore 232; fcntl 25
    AUDIT_ARCH_AARCH64: _Abi(32, (26, 27, 262), (217, 218, 219, 232, _CACHESTAT), (25,)),
    # 32-bit ARM (EABI): flock 143; inotify_init 316, inotify_add_watch 317, inotify_init1 360, fanotify_init 367;
    # add_key 309, request_key 310, keyctl 311, mincore 219
    AUDIT_ARCH_ARM: _Abi(143, (316, 317, 360, 367), (309, 310, 311, 219, _CACHESTAT), _I386_ARM_FCNTL),
}
_MACHINES = {
    "x86_64": (AUDIT_ARCH_X86_64, AUDIT_ARCH_I386), "amd64": (AUDIT_ARCH_X86_64, AUDIT_ARCH_I386),
    "aarch64": (AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM), "arm64": (AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM),
}


def _machine() -> str:
    return platform.machine().lower()


def program(machine: str | None = None, deny_errno: int = errno.EPERM) -> list[tuple[int, int, int, int]]:
    """The filter as ``(code, jt, jf, k)`` instructions for ``machine`` (default: this one's)."""
    machine = (machine or _machine()).lower()
    if machine not in _MACHINES or sys.byteorder != "little":
        raise SeccompUnsupported(f"no seccomp filter for the {machine} architecture")
    # Assembled with labels: ("jeq", k, true_label, false_label) etc.; jumps only go forward.
    code: list[tuple] = [("ld", _OFF_ARCH)]
    for arch in _MACHINES[machine]:
        code.append(("jeq", arch, f"abi{arch}", None))
    code.append(("ret", _RET_ERRNO | errno.ENOSYS))  # another ABI: nothing goes through it
    for arch in _MACHINES[machine]:
        abi = _ABIS[arch]
        code.append(("label", f"abi{arch}"))
        code.append(("ld", _OFF_NR))
        if arch == AUDIT_ARCH_X86_64:
            code.append(("and", 0xFFFFFFFF & ~X32_SYSCALL_BIT))  # x32 calls are the x86_64 numbers | bit 30
        code.append(("jeq", abi.flock, "fake", None))
        for nr in abi.denied:
            code.append(("jeq", nr, "deny", None))
        for nr in abi.absent:
            code.append(("jeq", nr, "absent", None))
        for nr in abi.fcntl:
            code.append(("jeq", nr, "fcntl", None))
        code.append(("ret", _RET_ALLOW))
    code.append(("label", "fcntl"))
    code.append(("ld", _OFF_ARG1_LOW))
    for cmd in sorted(FAKED_FCNTL.values()):
        code.append(("jeq", cmd, "fake", None))
    for cmd in sorted(BLOCKED_FCNTL.values()):
        code.append(("jeq", cmd, "deny", None))
    code.append(("ret", _RET_ALLOW))
    code.append(("label", "fake"))
    code.append(("ret", _RET_ERRNO | 0))  # errno 0: the call returns 0 without being run
    code.append(("label", "deny"))
    code.append(("ret", _RET_ERRNO | deny_errno))
    code.append(("label", "absent"))
    code.append(("ret", _RET_ERRNO | errno.ENOSYS))
    return _assemble(code)


def _assemble(code: list[tuple]) -> list[tuple[int, int, int, int]]:
    labels: dict[str, int] = {}
    n = 0
    for ins in code:
        if ins[0] == "label":
            labels[ins[1]] = n
        else:
            n += 1
    out: list[tuple[int, int, int, int]] = []
    for ins in code:
        op = ins[0]
        if op == "label":
            continue
        here = len(out)
        if op == "ld":
            out.append((_LD | _W | _ABS, 0, 0, ins[1]))
        elif op == "and":
            out.append((_ALU | _AND | _K, 0, 0, ins[1]))
        elif op == "ret":
            out.append((_RET | _K, 0, 0, ins[1]))
        elif op == "jeq":
            jt = 0 if ins[2] is None else labels[ins[2]] - here - 1
            jf = 0 if ins[3] is None else labels[ins[3]] - here - 1
            if not (0 <= jt <= 255 and 0 <= jf <= 255):
                raise ValueError("seccomp filter: a jump out of reach")
            out.append((_JMP | _JEQ | _K, jt, jf, ins[1]))
        else:
            raise ValueError(f"seccomp filter: unknown instruction {op}")
    return out


@functools.lru_cache(maxsize=None)
def filter_bytes(machine: str | None = None) -> bytes:
    """The filter as bubblewrap reads it: ``struct sock_filter`` (u16 code, u8 jt, u8 jf, u32 k), native order."""
    return b"".join(struct.pack("=HBBI", *ins) for ins in program(machine))


def filter_fd() -> int:
    """A memfd holding the filter, at offset 0 (bubblewrap reads it to its end); the caller closes it."""
    fd = os.memfd_create("marias-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, filter_bytes())
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def status() -> str:
    """How file locks, the keyring and ``mincore`` are held on this machine (for the log header):
    the filter, or why not."""
    try:
        filter_bytes()
    except SeccompUnsupported as e:
        return f"not blocked ({e})"
    return "seccomp"
