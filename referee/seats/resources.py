"""Resource limits of a bot process (referee/seats/sandbox.py uses them in every mode).

A cgroup per bot holds ``pids``, ``memory`` and, with ``cpus``, ``cpu`` where the cgroup
file system is writable (v1 controllers, or a v2 subtree with them enabled): with ``cpus``
a bot uses at most that many CPUs at any time (a CFS quota).  A bot that waits for its
turn does not run at all (:meth:`Cgroup.turn`, :mod:`referee.seats.freezer`: a freezer
cgroup, else SIGSTOP), so however many threads it spins, the bot whose turn it is has the
CPU to itself (``marias bench hog``).  The rlimits
``RLIMIT_CPU``, ``RLIMIT_FSIZE`` and ``RLIMIT_CORE`` are always set; without a
memory cgroup ``RLIMIT_AS`` stands in for it, and without a pids cgroup (and not
as root, whom the kernel exempts) ``RLIMIT_NPROC``.  :func:`limits_report`
says which applies on this machine.  Cgroups left by a referee that was killed
outright are swept by the next one.

**Disk** (``disk_mb``, issue 21.5): under bubblewrap the bot's ``/tmp`` is a tmpfs
of that size and a fresh working folder is made inside it (:func:`cap_disk`), so
the two together hold at most ``disk_mb``; a write beyond fails with ``ENOSPC``.
tmpfs pages are memory: they count against the bot's memory cgroup too (a bot
with ``memory_mb`` 1024 and 256 MB in ``/tmp`` has 768 MB left to run in).  A
kept folder (YAML ``workdir:``) lies on disk: it is measured before each start
and a bot whose folder is over the cap is not started (:func:`check_kept_folder`,
a ``start`` fault); during one process only ``file_mb`` per file holds there.
Without bubblewrap only ``file_mb`` and the kept-folder check hold.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import os
import resource
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from . import freezer

__all__ = ["SandboxLimits", "Cgroup", "limits_report", "make_preexec", "group_prefix", "cap_disk",
           "check_kept_folder", "LIMIT_KEYS", "sweep"]

#: Every limit of :class:`SandboxLimits`, in the order of the flags (``--bot-memory-mb`` ...) and YAML keys.
LIMIT_KEYS = ("memory_mb", "processes", "cpu_s", "file_mb", "disk_mb", "cpus")


@dataclass(frozen=True)
class SandboxLimits:
    """Limits per bot process (``None``: no limit of that kind)."""

    memory_mb: int | None = 1024  # resident memory of the bot and its children
    processes: int | None = 128  # processes and threads at once
    cpu_s: int | None = 1800  # CPU seconds of each process
    file_mb: int | None = 64  # largest file it may write
    disk_mb: int | None = 256  # all it writes in its /tmp and fresh working folder together (a tmpfs)
    cpus: int | None = None  # CPUs it may use at once (a cgroup quota; None: no quota)

    def __post_init__(self):
        for name in LIMIT_KEYS:
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise ValueError(f"sandbox limit {name} must be a whole number >= 1, got {v!r}")

    def merged(self, **overrides) -> "SandboxLimits":
        """These limits with the given values replaced (``None`` values keep the current one)."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in LIMIT_KEYS}


# ---------------------------------------------------------------- cgroups
@dataclass(frozen=True)
class _Hierarchy:
    base: str  # the folder new cgroups are made in
    version: int  # 1 or 2
    controller: str  # "pids", "memory" or "cpu"


def _own_cgroups() -> dict[str, str]:
    """controller (``""`` for v2) -> this process's cgroup path."""
    out = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                out[c] = path
    return out


def _base_for(mount: str, own: str) -> str:
    candidate = os.path.join(mount, own.lstrip("/"))
    return candidate if os.path.isdir(candidate) else mount


_CONTROLLERS = ("pids", "memory", "cpu")  # and "freezer": where a bot waiting for its turn is frozen
CPU_PERIOD_US = 100_000  # the CFS period of a cpus quota


def _v2_freezes(base: str, mount: str) -> bool:
    """Whether cgroups made in ``base`` (a cgroup2 folder) have ``cgroup.freeze`` (Linux 5.2+; the
    root cgroup itself has none)."""
    if os.path.exists(os.path.join(base, "cgroup.freeze")):
        return True
    if os.path.normpath(base) != os.path.normpath(mount):
        return False
    with contextlib.suppress(ValueError):
        return tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2]) >= (5, 2)
    return False


@functools.lru_cache(maxsize=None)
def hierarchies() -> dict[str, _Hierarchy]:
    """Where a pids, a memory, a cpu and a freezer cgroup can be made for a bot (writable ones
    only).  The freezer is a cgroup2 folder where one is writable (any, with or without
    controllers: ``cgroup.freeze`` is in every non-root cgroup), else the v1 freezer controller
    (:mod:`referee.seats.freezer` says why v2 first); ``MARIAS_FREEZER`` (tests) picks one or none."""
    own = _own_cgroups()
    found: dict[str, _Hierarchy] = {}
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return found
    force = freezer.forced()
    v2 = v2_mount = None
    v1_freezer = None
    for line in mounts:
        parts = line.split()
        if len(parts) < 4:
            continue
        fstype, mount, options = parts[2], parts[1], parts[3].split(",")
        if fstype == "cgroup":
            for c in (*_CONTROLLERS, "freezer"):
                if c in options and c not in found and (c != "freezer" or v1_freezer is None):
                    base = _base_for(mount, own.get(c, "/"))
                    if os.access(base, os.W_OK):
                        if c == "freezer":
                            v1_freezer = _Hierarchy(base, 1, c)
                        else:
                            found[c] = _Hierarchy(base, 1, c)
        elif fstype == "cgroup2" and v2 is None:
            v2, v2_mount = _base_for(mount, own.get("", "/")), mount
    if v2 is not None and os.access(v2, os.W_OK):
        with contextlib.suppress(OSError):
            enabled = Path(v2, "cgroup.subtree_control").read_text().split()
            for c in _CONTROLLERS:
                if c in enabled and c not in found:
                    found[c] = _Hierarchy(v2, 2, c)
        if force in (None, "v2") and _v2_freezes(v2, v2_mount):
            found["freezer"] = _Hierarchy(v2, 2, "freezer")
    if "freezer" not in found and v1_freezer is not None and force in (None, "v1"):
        found["freezer"] = v1_freezer
    for h in {h.base: h for h in [*found.values(), *([v1_freezer] if v1_freezer else [])]}.values():
        _sweep(h.base)
    return found


def sweep() -> None:
    """Remove the cgroups of bots whose referee is gone now (a tournament's worker that was killed):
    what runs in them is killed and thawed (a frozen v1 process dies only once thawed)."""
    for h in hierarchies().values():
        _sweep(h.base)


def group_prefix() -> str:
    """``marias-bot-<pid namespace>-``: the cgroups of referees that see the same pids."""
    try:
        ns = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        ns = 0
    return f"marias-bot-{ns}-"


def _sweep(base: str) -> None:
    """Remove the cgroups a referee that was killed outright (kill -9) left behind,
    ending what still runs in them; only those of referees of this pid namespace
    that are gone."""
    prefix = group_prefix()
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            if not name.startswith(prefix):
                continue
            pid = name[len(prefix):].split("-")[0]
            if not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
                continue
            d = os.path.join(base, name)
            for _ in range(50):  # killed and thawed; a moment for them to go before the folder can be removed
                with contextlib.suppress(OSError, ValueError):
                    for p in Path(d, "cgroup.procs").read_text().split():
                        with contextlib.suppress(OSError):
                            os.kill(int(p), 9)
                freezer.thaw_folder(d)
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


_counter = itertools.count(1)


class Cgroup:
    """The bot's cgroups (one per hierarchy; a v2 one holds all its controllers).

    ``frozen``: the bot is frozen while it waits for its turn (the sandbox's way): its freezer
    cgroup holds the bot's own processes only, not bubblewrap's, which the bot's first
    process joins from inside the sandbox (:attr:`join_fd`: that cgroup's ``cgroup.procs``,
    open for writing); a freeze or thaw then wakes the bot's processes alone."""

    def __init__(self, limits: SandboxLimits, frozen: bool = True):
        self.dirs: list[str] = []
        self.kinds: set[str] = set()
        self.join_fd = -1
        name = f"{group_prefix()}{os.getpid()}-{next(_counter)}"
        made: dict[str, str] = {}
        found = hierarchies()
        for c, h in found.items():
            want = {"pids": limits.processes, "memory": limits.memory_mb, "cpu": limits.cpus,
                    "freezer": 1 if frozen and freezer.forced() != "off" else None}[c]
            if want is None:
                continue
            d = os.path.join(h.base, name)
            try:
                if c == "freezer" and d in made.values():  # a v2 cgroup with controllers: the bot's own below it
                    d = os.path.join(d, "bot")
                if d not in made.values():
                    os.mkdir(d)
                    self.dirs.append(d)
                made[c] = d
                if c == "pids":
                    _write(d, "pids.max", str(want))
                elif c == "cpu":
                    quota = want * CPU_PERIOD_US
                    if h.version == 1:
                        _write(d, "cpu.cfs_period_us", str(CPU_PERIOD_US))
                        _write(d, "cpu.cfs_quota_us", str(quota))
                    else:
                        _write(d, "cpu.max", f"{quota} {CPU_PERIOD_US}")
                elif c == "freezer":
                    pass  # a new cgroup is thawed
                elif h.version == 1:
                    _write(d, "memory.limit_in_bytes", str(want << 20))
                    with contextlib.suppress(OSError):  # where swap is accounted
                        _write(d, "memory.memsw.limit_in_bytes", str(want << 20))
                else:
                    _write(d, "memory.max", str(want << 20))
                    with contextlib.suppress(OSError):
                        _write(d, "memory.swap.max", "0")
                self.kinds.add(c)
            except OSError:
                continue
        # opened now so that the child only writes (nothing to open between fork and exec)
        frozen_in = made.get("freezer") if "freezer" in self.kinds else None
        self._fds = [os.open(os.path.join(d, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
                     for d in self.dirs if d != frozen_in]
        if frozen_in is not None:
            self.join_fd = os.open(os.path.join(frozen_in, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
        # while it waits for its turn the bot is frozen (referee/seats/freezer.py): a freezer cgroup, else SIGSTOP
        how = ("none" if not frozen else "off" if freezer.forced() == "off" else
               f"cgroup v{found['freezer'].version}" if frozen_in else "SIGSTOP")
        first = next((d for d in self.dirs if d != frozen_in), None)  # SIGSTOP: each cgroup holds all its processes
        self.freezer = freezer.Freezer(how, frozen_in, (lambda: _procs(first)) if first else None)

    def turn(self, asked: bool) -> None:
        """The bot is asked (``True``: the referee awaits its answer) or waits (``False``).  Asked,
        it is thawed once every bot being frozen is (:func:`referee.seats.freezer.settle`); waiting,
        its freezing starts.  (This replaced a CPU weight by turn, issue 21: a bot that does not
        run needs none, and writing ``cpu.shares`` twice per request cost the referee more than
        freezing and thawing; ``marias bench referee``.)"""
        if asked:
            self.freezer.thaw()
        else:
            self.freezer.freeze()

    def started(self, pid: int) -> None:
        """The bot's main process was started (SIGSTOP without a cgroup holds its process tree)."""
        self.freezer.started(pid)

    def release(self) -> None:
        """The bot is to end: thawed for good (after a SIGKILL too: a frozen v1 process dies only thawed)."""
        self.freezer.release()

    def join(self) -> None:
        """In the child before exec: move into the cgroups."""
        pid = str(os.getpid()).encode()
        for fd in self._fds:
            os.write(fd, pid)

    def close_fds(self) -> None:
        self.freezer.release()
        for fd in self._fds + ([self.join_fd] if self.join_fd >= 0 else []):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds, self.join_fd = [], -1

    def pids(self) -> set[int]:
        out: set[int] = set()
        for d in self.dirs:
            out |= _procs(d)
        return out

    def remove(self, wait: float = 1.0) -> None:
        """Kill whatever is left in the cgroups (thawed, so that it dies) and remove them."""
        deadline = time.monotonic() + wait
        while True:
            left = self.pids()
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, 9)
            self.freezer.release()
            for d in reversed(self.dirs):  # a cgroup made inside another first
                with contextlib.suppress(OSError):
                    os.rmdir(d)
                    self.dirs.remove(d)
            if not self.dirs or time.monotonic() > deadline:
                return
            time.sleep(0.005)


def _procs(folder: str) -> set[int]:
    """The processes in a cgroup (none if it is gone)."""
    with contextlib.suppress(OSError, ValueError):
        with open(os.path.join(folder, "cgroup.procs"), "rb") as f:
            return {int(x) for x in f.read().split()}
    return set()


def _write(folder: str, name: str, value: str) -> None:
    with open(os.path.join(folder, name), "w") as f:
        f.write(value)


def limits_report(limits: SandboxLimits | None = None, mode: str = "bwrap") -> dict[str, str]:
    """How each limit is enforced on this machine (for the log header and ``--help`` texts), for
    bots run in sandbox ``mode`` (``bwrap`` or ``none``)."""
    from . import seccomp

    limits = limits or SandboxLimits()
    h = hierarchies()
    root = os.geteuid() == 0
    sandboxed = mode != "none"
    out = {}
    out["memory_mb"] = "off" if limits.memory_mb is None else (f"cgroup v{h['memory'].version}" if "memory" in h else "RLIMIT_AS")
    out["processes"] = "off" if limits.processes is None else (
        f"cgroup v{h['pids'].version}" if "pids" in h else ("not enforced (root, no pids cgroup)" if root else "RLIMIT_NPROC"))
    out["cpu_s"] = "off" if limits.cpu_s is None else "RLIMIT_CPU"
    out["file_mb"] = "off" if limits.file_mb is None else "RLIMIT_FSIZE"
    out["disk_mb"] = "off" if limits.disk_mb is None else (
        "tmpfs (a kept workdir: checked at start)" if sandboxed else "not enforced (no sandbox; a kept workdir: checked at start)")
    out["cpus"] = "off" if limits.cpus is None else (
        f"cgroup v{h['cpu'].version} (CFS quota)" if "cpu" in h else "not enforced (no writable cpu cgroup)")
    out["waiting"] = freezer.describe(
        "none" if not sandboxed else "off" if freezer.forced() == "off" else
        f"cgroup v{h['freezer'].version}" if "freezer" in h else "SIGSTOP")
    for key in ("locks", "keyring", "mincore"):  # the seccomp filter's three channels (referee/seats/seccomp.py)
        out[key] = seccomp.status() if sandboxed else "not blocked (no sandbox)"
    return out


# ---------------------------------------------------------------- disk
def cap_disk(args: list[str], limits: SandboxLimits, workdir: str, fresh: bool) -> tuple[list[str], str]:
    """The bubblewrap arguments ``args`` with the disk cap, and the bot's working folder as it sees it.

    The ``--tmpfs /tmp`` mount gets ``--size disk_mb``; a fresh working folder (``fresh``)
    is no longer the host's folder bound in but a folder made inside that tmpfs
    (``/tmp/<its name>``), so /tmp and the
    working folder hold ``disk_mb`` together and nothing the bot writes reaches the disk."""
    if limits.disk_mb is None:
        return args, workdir
    out = list(args)
    size = ["--size", str(limits.disk_mb << 20)]
    at = next((i for i in range(len(out) - 1) if out[i] == "--tmpfs" and out[i + 1] == "/tmp"), None)
    if at is None:  # /tmp not covered yet (cannot happen with the sandbox's plan): cover it now
        out += [*size, "--tmpfs", "/tmp"]
    else:
        out[at:at] = size
    if not fresh:
        return out, workdir
    # right under /tmp: the host path may lie inside a folder the bot is shown read-only (TMPDIR there)
    inner = "/tmp/" + os.path.basename(workdir)
    bind = next((i for i in range(len(out) - 2) if out[i] == "--bind" and out[i + 1] == workdir), None)
    if bind is not None:
        del out[bind:bind + 3]
    out += ["--perms", "0700", "--dir", inner]
    return out, inner


def folder_bytes(folder: str) -> int:
    """What the files in ``folder`` take on disk (allocated blocks, as ``du``), links not followed."""
    total = 0
    for top, dirs, files in os.walk(folder):
        for name in files + dirs:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(top, name)).st_blocks * 512
    return total


def check_kept_folder(limits: SandboxLimits, folder: str) -> None:
    """A kept working folder (on disk, YAML ``workdir:``) over ``disk_mb``: ``OSError(ENOSPC)``,
    so the bot is not started (a ``start`` fault naming the folder)."""
    if limits.disk_mb is None:
        return
    used = folder_bytes(folder)
    if used > limits.disk_mb << 20:
        raise OSError(errno.ENOSPC, f"its kept working folder {folder} holds {used / 2**20:.0f} MB, over its disk "
                                    f"cap of {limits.disk_mb} MB (--bot-disk-mb, bot_limits disk_mb): empty it or raise the cap")


def _user_process_count() -> int:
    uid, n = os.getuid(), 0
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if name.isdigit():
                with contextlib.suppress(OSError):
                    if os.stat(f"/proc/{name}").st_uid == uid:
                        n += 1
    return n


def make_preexec(limits: SandboxLimits, cgroup: Cgroup) -> Callable[[], None]:
    rl: list[tuple[int, int, int]] = [(resource.RLIMIT_CORE, 0, 0)]
    if limits.cpu_s is not None:
        rl.append((resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 5))  # SIGXCPU, then SIGKILL
    if limits.file_mb is not None:
        rl.append((resource.RLIMIT_FSIZE, limits.file_mb << 20, limits.file_mb << 20))
    if limits.memory_mb is not None and "memory" not in cgroup.kinds:
        rl.append((resource.RLIMIT_AS, limits.memory_mb << 20, limits.memory_mb << 20))
    if limits.processes is not None and "pids" not in cgroup.kinds and os.geteuid() != 0:
        n = _user_process_count() + limits.processes  # the limit counts all processes of the user
        rl.append((resource.RLIMIT_NPROC, n, n))
    caps = {}
    for which, _, _ in rl:
        caps[which] = resource.getrlimit(which)[1]

    def preexec() -> None:
        cgroup.join()
        for which, soft, hard in rl:
            cap = caps[which]
            if cap != resource.RLIM_INFINITY:
                soft, hard = min(soft, cap), min(hard, cap)
            resource.setrlimit(which, (soft, hard))

    return preexec
