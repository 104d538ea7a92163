"""The sandbox every bot process runs in (protocol/PROTOCOL.md, "What a bot may rely on").

One place decides how a bot command is started: :func:`launch` turns the bot's
argv, folder and environment into what :class:`subprocess.Popen` is given.

* **Isolation** (mode ``bwrap``): the bot runs under bubblewrap with its own
  pid, ipc, uts, cgroup and network namespace (no network, ``/proc`` shows its
  own processes only), no capabilities, a read-only view of the system, a
  private empty ``/tmp`` and write access only to its working folder.  The
  referee's outputs (``SandboxConfig.hide``: log, transcripts, stderr files,
  other bots' folders) and home folders, ``/run`` and ``/var/tmp`` are covered
  by empty tmpfs mounts, then what the command needs is mounted back read-only:
  the folder it starts in, its program's installation, the files and folders
  its arguments name (``-cp a.jar:b`` too).  Where such a folder itself holds a
  referee output, its entries are mounted one by one except the outputs, so a
  log created there later is never visible.  ``--die-with-parent`` and the pid
  namespace end every process the bot started (``setsid`` or not) when the bot
  or the referee ends.
* **Limits** (every mode): a cgroup per bot with ``pids`` and ``memory`` limits
  where the cgroup file system is writable (v1 controllers or a delegated v2
  subtree), and the rlimits ``RLIMIT_CPU``, ``RLIMIT_FSIZE`` and ``RLIMIT_CORE``
  always; where there is no memory cgroup ``RLIMIT_AS`` stands in for it, and
  where there is no pids cgroup and the referee is not root, ``RLIMIT_NPROC``.
  :func:`limits_report` says which applies here.

Mode ``auto`` is ``bwrap`` where bubblewrap really works (probed once per
process), otherwise ``none`` with a loud warning; ``bwrap`` (``required``)
refuses to start without it (:class:`SandboxUnavailable` names what is missing
and how to install it).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import itertools
import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable

__all__ = [
    "MODES",
    "SandboxLimits",
    "SandboxConfig",
    "SandboxUnavailable",
    "Launch",
    "resolve_mode",
    "bwrap_status",
    "launch",
    "limits_report",
]

#: Run inside the sandbox: the bot's stdin and stdout, passed as fds 3 and 4, become 0 and 1.
_TRAMPOLINE = 'exec 0<&3 1>&4 3<&- 4>&-; exec "$@"'

#: ``required`` is the YAML spelling of ``bwrap`` (refuse to run without it).
MODES = ("auto", "bwrap", "required", "none")

INSTALL_HINT = ("install bubblewrap: `apt-get install -y bubblewrap` (Debian/Ubuntu), "
                "`dnf install bubblewrap` (Fedora), `pacman -S bubblewrap` (Arch)")

#: Folders no bot sees (an empty tmpfs each), except what its command needs.
PRIVATE_FOLDERS = ("/tmp", "/var/tmp", "/run", "/home", "/root")


class SandboxUnavailable(RuntimeError):
    """``--sandbox bwrap`` / ``sandbox: required`` where bubblewrap cannot run."""


@dataclass(frozen=True)
class SandboxLimits:
    """Limits per bot process (``None``: no limit of that kind)."""

    memory_mb: int | None = 1024  # resident memory of the bot and its children
    processes: int | None = 128  # processes and threads at once
    cpu_s: int | None = 1800  # CPU seconds of each process
    file_mb: int | None = 64  # largest file it may write

    def __post_init__(self):
        for name in ("memory_mb", "processes", "cpu_s", "file_mb"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise ValueError(f"sandbox limit {name} must be a whole number >= 1, got {v!r}")

    def merged(self, **overrides) -> "SandboxLimits":
        """These limits with the given values replaced (``None`` values keep the current one)."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def to_dict(self) -> dict:
        return {"memory_mb": self.memory_mb, "processes": self.processes, "cpu_s": self.cpu_s, "file_mb": self.file_mb}


@dataclass(frozen=True)
class SandboxConfig:
    """How one bot process is sandboxed.

    ``mode``: one of :data:`MODES` (``auto`` is resolved at launch).
    ``workdir``: the bot's writable folder (``None``: a fresh empty one per
    process, removed when it ends).  ``hide``: files and folders of the
    referee's output the bot must not see (they need not exist yet).  ``show``:
    extra paths the bot may read (the built-in bots' package folders).
    """

    mode: str = "auto"
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    workdir: str | None = None
    hide: tuple[str, ...] = ()
    show: tuple[str, ...] = ()

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, got {self.mode!r}")


@dataclass
class Launch:
    """What to hand to :class:`subprocess.Popen` (``pass_fds`` as well), and what to call after the bot ended.

    The bot's stdin and stdout must be pipes given to Popen as ``stdin``/``stdout``
    (``preexec_fn`` moves them to the bot itself under bwrap)."""

    argv: list[str]
    cwd: str | None
    env: dict[str, str] | None
    preexec_fn: Callable[[], None] | None
    pass_fds: tuple[int, ...]
    cleanup: Callable[[], None]
    mode: str  # "bwrap" or "none"
    workdir: str


# ---------------------------------------------------------------- detection
@functools.lru_cache(maxsize=None)
def bwrap_status() -> tuple[str | None, str]:
    """``(path of bwrap, "")`` where bubblewrap works here, else ``(None, why not)``; probed once."""
    path = shutil.which("bwrap")
    if path is None:
        return None, "bubblewrap (bwrap) is not on PATH"
    probe = [path, "--ro-bind", "/", "/", "--unshare-all", "--cap-drop", "ALL", "--die-with-parent",
             "--new-session", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "true"]
    try:
        r = subprocess.run(probe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{path} cannot run: {e}"
    if r.returncode != 0:
        why = r.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, (f"{path} is installed but cannot create namespaces here ({why[-1] if why else f'exit {r.returncode}'}); "
                      "unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1 "
                      "or user.max_user_namespaces)")
    return path, ""


_warned: set[str] = set()


def resolve_mode(mode: str, warn: Callable[[str], None] | None = None) -> str:
    """``"bwrap"`` or ``"none"`` for a configured mode.

    ``auto`` falls back to ``none`` where bubblewrap does not work and says so
    through ``warn`` (default: once per process on stderr); ``bwrap`` and
    ``required`` raise :class:`SandboxUnavailable` there.
    """
    if mode not in MODES:
        raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "none":
        return "none"
    path, why = bwrap_status()
    if path is not None:
        return "bwrap"
    if mode in ("bwrap", "required"):
        raise SandboxUnavailable(f"the bot sandbox is required but {why}; {INSTALL_HINT}, or run with --sandbox none")
    text = (f"WARNING: bots run WITHOUT a sandbox (sandbox: none): {why}. A bot can read the referee's log and "
            f"other bots' files. To isolate bots, {INSTALL_HINT}.")
    if warn is not None:
        warn(text)
    elif text not in _warned:
        _warned.add(text)
        print(f"marias: {text}", file=sys.stderr, flush=True)
    return "none"


# ---------------------------------------------------------------- cgroups
@dataclass(frozen=True)
class _Hierarchy:
    base: str  # the folder new cgroups are made in
    version: int  # 1 or 2
    controller: str  # "pids" or "memory"


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


@functools.lru_cache(maxsize=None)
def _hierarchies() -> dict[str, _Hierarchy]:
    """Where a pids and a memory cgroup can be made for a bot (writable ones only)."""
    own = _own_cgroups()
    found: dict[str, _Hierarchy] = {}
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return found
    v2 = None
    for line in mounts:
        parts = line.split()
        if len(parts) < 4:
            continue
        fstype, mount, options = parts[2], parts[1], parts[3].split(",")
        if fstype == "cgroup":
            for c in ("pids", "memory"):
                if c in options and c not in found:
                    base = _base_for(mount, own.get(c, "/"))
                    if os.access(base, os.W_OK):
                        found[c] = _Hierarchy(base, 1, c)
        elif fstype == "cgroup2" and v2 is None:
            v2 = _base_for(mount, own.get("", "/"))
    if v2 is not None and os.access(v2, os.W_OK):
        with contextlib.suppress(OSError):
            enabled = Path(v2, "cgroup.subtree_control").read_text().split()
            for c in ("pids", "memory"):
                if c in enabled and c not in found:
                    found[c] = _Hierarchy(v2, 2, c)
    for h in found.values():
        _sweep(h.base)
    return found


def _group_prefix() -> str:
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
    prefix = _group_prefix()
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            if not name.startswith(prefix):
                continue
            pid = name[len(prefix):].split("-")[0]
            if not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
                continue
            d = os.path.join(base, name)
            with contextlib.suppress(OSError, ValueError):
                for p in Path(d, "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(p), 9)
            with contextlib.suppress(OSError):
                os.rmdir(d)


_counter = itertools.count(1)


class _Cgroup:
    """The bot's cgroups (one per hierarchy; a v2 one holds both controllers)."""

    def __init__(self, limits: SandboxLimits):
        self.dirs: list[str] = []
        self.kinds: set[str] = set()
        name = f"{_group_prefix()}{os.getpid()}-{next(_counter)}"
        made: dict[str, str] = {}
        for c, h in _hierarchies().items():
            want = limits.processes if c == "pids" else limits.memory_mb
            if want is None:
                continue
            d = os.path.join(h.base, name)
            try:
                if d not in made.values():
                    os.mkdir(d)
                    self.dirs.append(d)
                made[c] = d
                if c == "pids":
                    _write(d, "pids.max", str(want))
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
        self._fds = [os.open(os.path.join(d, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC) for d in self.dirs]

    def join(self) -> None:
        """In the child before exec: move into the cgroups."""
        pid = str(os.getpid()).encode()
        for fd in self._fds:
            os.write(fd, pid)

    def close_fds(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = []

    def pids(self) -> set[int]:
        out: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError, ValueError):
                out |= {int(x) for x in Path(d, "cgroup.procs").read_text().split()}
        return out

    def remove(self, wait: float = 1.0) -> None:
        """Kill whatever is left in the cgroups and remove them."""
        deadline = time.monotonic() + wait
        while True:
            left = self.pids()
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, 9)
            for d in list(self.dirs):
                with contextlib.suppress(OSError):
                    os.rmdir(d)
                    self.dirs.remove(d)
            if not self.dirs or time.monotonic() > deadline:
                return
            time.sleep(0.005)


def _write(folder: str, name: str, value: str) -> None:
    with open(os.path.join(folder, name), "w") as f:
        f.write(value)


def limits_report(limits: SandboxLimits | None = None) -> dict[str, str]:
    """How each limit is enforced on this machine (for the log header and ``--help`` texts)."""
    limits = limits or SandboxLimits()
    h = _hierarchies()
    root = os.geteuid() == 0
    out = {}
    out["memory_mb"] = "off" if limits.memory_mb is None else (f"cgroup v{h['memory'].version}" if "memory" in h else "RLIMIT_AS")
    out["processes"] = "off" if limits.processes is None else (
        f"cgroup v{h['pids'].version}" if "pids" in h else ("not enforced (root, no pids cgroup)" if root else "RLIMIT_NPROC"))
    out["cpu_s"] = "off" if limits.cpu_s is None else "RLIMIT_CPU"
    out["file_mb"] = "off" if limits.file_mb is None else "RLIMIT_FSIZE"
    return out


def _user_process_count() -> int:
    uid, n = os.getuid(), 0
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if name.isdigit():
                with contextlib.suppress(OSError):
                    if os.stat(f"/proc/{name}").st_uid == uid:
                        n += 1
    return n


def _make_preexec(limits: SandboxLimits, cgroup: _Cgroup) -> Callable[[], None]:
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


# ---------------------------------------------------------------- folders
def _bots_root() -> str:
    """The folder the fresh working folders are made in: one per user, 0700, hidden
    from every bot (each one's own folder inside is removed when it ends)."""
    root = os.path.join(tempfile.gettempdir(), f"marias-bots-{os.getuid()}")
    try:
        os.mkdir(root, 0o700)
    except FileExistsError:
        st = os.lstat(root)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise OSError(errno.EEXIST, f"{root} exists and is not this user's folder") from None
    _sweep_folders(root)
    return root


@functools.lru_cache(maxsize=None)
def _sweep_folders(root: str) -> None:
    """Once per process: remove the working folders of referees that were killed outright
    (a tournament worker ends without clean-up when it is killed)."""
    prefix = _group_prefix().replace("marias-bot-", "bot-")
    with contextlib.suppress(OSError):
        for name in os.listdir(root):
            pid = name[len(prefix):].split("-")[0] if name.startswith(prefix) else ""
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _under(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _abs(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _program(argv0: str, cwd: str, env: dict[str, str]) -> str | None:
    if "/" in argv0:
        return _abs(argv0, cwd)
    return shutil.which(argv0, path=env.get("PATH", os.defpath))


def needed_paths(argv: list[str], cwd: str, env: dict[str, str]) -> set[str]:
    """What the command needs to see (absolute, existing): the folder it starts in,
    its program's installation (``X`` for ``X/bin/prog``, else the program's
    folder, for the path as given and as resolved), and every existing path its
    arguments name (also ``--opt=PATH`` and ``a:b`` class paths), a file with
    its folder (a script's own modules)."""
    out = {cwd}
    prog = _program(argv[0], cwd, env) if argv else None
    if prog:
        for p in {prog, os.path.realpath(prog)}:
            folder = os.path.dirname(p)
            out.add(os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder)
    for arg in argv[1:]:
        pieces = [arg]
        if "=" in arg:
            pieces.append(arg.split("=", 1)[1])
        for piece in list(pieces):
            if os.pathsep in piece:
                pieces += piece.split(os.pathsep)
        for piece in pieces:
            if not piece or len(piece) > 4096 or "\0" in piece:
                continue
            p = _abs(piece, cwd)
            try:
                st = os.stat(p)
            except (OSError, ValueError):
                continue
            out.add(p)
            if stat.S_ISREG(st.st_mode):
                out.add(os.path.dirname(p))
            real = os.path.realpath(p)
            if real != p:
                out.add(real if stat.S_ISDIR(st.st_mode) else os.path.dirname(real))
    return {p for p in out if os.path.exists(p)}


def mount_plan(show: Iterable[str], hide_files: Iterable[str], hide_dirs: Iterable[str],
               private: Iterable[str] = PRIVATE_FOLDERS) -> list[tuple[str, str]]:
    """The bubblewrap mounts over ``--ro-bind / /``, in order: ``(op, path)`` with op
    ``tmpfs`` (an empty folder), ``ro`` (the host's path, read-only) or ``symlink``.

    Every folder in ``private`` and ``hide_dirs`` and the folder of every file in
    ``hide_files`` is covered with a tmpfs.  Each ``show`` path inside a covered
    folder is mounted back; where a covered folder is itself shown, or is the
    folder of a hidden file, holds a shown path and is not private, its entries
    are mounted back one by one instead, except the hidden ones (so nothing the
    command may need beside an output goes missing).  Shallower mounts come
    first, so a hidden path inside a shown folder is covered again.
    """
    show = {os.path.normpath(p) for p in show}
    hide_files = {os.path.normpath(p) for p in hide_files}
    hide_dirs = {os.path.normpath(p) for p in hide_dirs}
    private = set(private)
    hidden = hide_files | hide_dirs
    covers: dict[str, bool] = {}  # folder -> mount its entries back one by one
    for d in private | hide_dirs:
        if os.path.isdir(d) and d != "/":
            covers[d] = covers.get(d, False) or d in show
    for f in hide_files:
        d = os.path.dirname(f)
        while d != "/" and not os.path.isdir(d):  # not made yet: whatever is made in its place later stays unseen
            d = os.path.dirname(d)
        if d != "/":
            # a private folder stays empty but for the shown paths; another one keeps all but the outputs
            covers[d] = covers.get(d, False) or (d not in private and any(_under(s, d) for s in show))
    ops: dict[str, str] = {}
    for d, entries in covers.items():
        ops[d] = "tmpfs"
        if entries:
            with contextlib.suppress(OSError):
                for name in os.listdir(d):
                    p = os.path.join(d, name)
                    if p in hidden or p in covers:
                        continue
                    if os.path.islink(p):
                        ops.setdefault(p, "symlink")
                    elif os.path.isdir(p) or os.path.isfile(p):
                        ops.setdefault(p, "ro")
    for s in sorted(show, key=lambda p: p.count("/")):
        if s in ops or s in hidden:
            continue
        inner = max((d for d in covers if _under(s, d) and s != d), key=len, default=None)
        if inner is None:
            continue  # not covered: visible through the read-only root
        # already visible through a shown folder between it and the nearest cover
        if any(op != "tmpfs" and _under(s, p) and _under(p, inner) and p != inner for p, op in ops.items()):
            continue
        ops[s] = "ro"
    plan: list[tuple[str, str]] = []
    for p, op in sorted(ops.items(), key=lambda kv: (kv[0].count("/"), kv[1] != "tmpfs", kv[0])):
        if op == "tmpfs":
            # inside an empty tmpfs (and not mounted back) it is not there at all: no mount needed
            outer = max((q for o, q in plan if _under(p, q) and q != p), key=len, default=None)
            if outer is not None and ops[outer] == "tmpfs" and not covers.get(p):
                continue
        plan.append((op, p))
    return plan


# ---------------------------------------------------------------- launch
def launch(argv: list[str], cwd: str | None, env: dict[str, str] | None, config: SandboxConfig | None) -> Launch:
    """What to start for the bot command ``argv`` (run in ``cwd`` with environment
    ``env``, ``None``: the referee's) under ``config``; raises
    :class:`SandboxUnavailable` for mode ``bwrap`` where bubblewrap cannot run.
    Call ``cleanup()`` once the bot's process has ended (it ends what is left,
    removes the cgroups and the fresh working folder) and close ``pass_fds``
    in the parent after the spawn (``cleanup`` does it as well)."""
    config = config or SandboxConfig(mode="none")
    mode = resolve_mode(config.mode)
    full_env = dict(os.environ if env is None else env)
    start = os.path.abspath(cwd) if cwd else os.getcwd()
    if not os.path.isdir(start):  # what Popen would say without the sandbox
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), start)
    fresh = config.workdir is None
    if fresh:
        workdir = tempfile.mkdtemp(prefix=_group_prefix().replace("marias-bot-", "bot-") + f"{os.getpid()}-", dir=_bots_root())
    else:
        workdir = _abs(config.workdir, start)
        os.makedirs(workdir, exist_ok=True)
    full_env["MARIAS_WORKDIR"] = workdir
    cgroup: _Cgroup | None = None
    fds: list[int] = []

    def cleanup() -> None:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        fds.clear()
        if cgroup is not None:
            cgroup.close_fds()
            cgroup.remove()
        if fresh:
            shutil.rmtree(workdir, ignore_errors=True)

    try:
        cgroup = _Cgroup(config.limits)
        preexec = _make_preexec(config.limits, cgroup)
        if mode == "none":
            return Launch(list(argv), cwd, full_env, preexec, (), cleanup, "none", workdir)
        prog = _program(argv[0], start, full_env) if argv else None
        if not prog or not os.path.isfile(prog) or not os.access(prog, os.X_OK):
            # what Popen would say without the sandbox (bwrap would only exit 1 later)
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT) if not prog or not os.path.exists(prog)
                                    else "not an executable file", argv[0] if argv else "")
        bwrap, _ = bwrap_status()
        full_env["TMPDIR"] = "/tmp"
        show = needed_paths(argv, start, full_env) | {_abs(p, start) for p in config.show if os.path.exists(_abs(p, start))}
        hide_dirs, hide_files = {_bots_root()}, set()
        for h in config.hide:
            p = _abs(h, start)
            if _under(p, workdir):
                continue  # what lies in its own folder is its own (its folder is mounted after, inside a hidden one too)
            (hide_dirs if os.path.isdir(p) else hide_files).add(p)
        args = ["--ro-bind", "/", "/", "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
                "--dev", "/dev", "--proc", "/proc"]
        plan = mount_plan(show, hide_files, hide_dirs - {workdir})
        for op, p in plan:
            if op == "tmpfs":
                args += ["--tmpfs", p]
            elif op == "ro":
                args += ["--ro-bind-try", p, p]  # an entry may vanish before bwrap mounts it
            else:
                args += ["--symlink", os.readlink(p), p]
        args += ["--bind", workdir, workdir]
        for op, p in plan:  # the covers stay empty: only /tmp is the bot's to write in (and its folder)
            if op == "tmpfs" and p != "/tmp":
                args += ["--remount-ro", p]
        args += ["--chdir", start]
        data = b"".join(os.fsencode(a) + b"\0" for a in args)
        memfd = os.memfd_create("marias-bwrap-args")  # the mounts stay off the command line (and out of /proc)
        fds.append(memfd)
        os.write(memfd, data)
        os.lseek(memfd, 0, os.SEEK_SET)
        devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        fds.append(devnull)
        limit = preexec

        def preexec_bwrap() -> None:
            # bwrap and its pid-1 keep their own stdin/stdout open for as long as they
            # run, so a bot that closes its stdout would not be seen to: the pipes go
            # to the bot alone, as fds 3 and 4, and bwrap gets /dev/null instead.
            limit()
            dn = fcntl.fcntl(devnull, fcntl.F_DUPFD, 10)
            mf = fcntl.fcntl(memfd, fcntl.F_DUPFD, 10)
            os.dup2(0, 3)
            os.dup2(1, 4)
            os.dup2(mf, 5)
            os.dup2(dn, 0)
            os.dup2(dn, 1)

        wrapped = [bwrap, "--args", "5", "--", "/bin/sh", "-c", _TRAMPOLINE, "sh", *argv]
        return Launch(wrapped, start, full_env, preexec_bwrap, (3, 4, 5), cleanup, "bwrap", workdir)
    except BaseException:
        cleanup()
        raise
