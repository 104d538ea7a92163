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
* **Limits** (every mode): :mod:`referee.resources` (a cgroup per bot where the
  machine allows it, rlimits always).

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
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Iterable

from . import resources, seccomp
from .resources import Cgroup, SandboxLimits, group_prefix, limits_report, make_preexec

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
    turn: Callable[[bool], None] | None = None  # issue 21 hook: the bot is asked / waits (its CPU weight)


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
    prefix = group_prefix().replace("marias-bot-", "bot-")
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
        workdir = tempfile.mkdtemp(prefix=group_prefix().replace("marias-bot-", "bot-") + f"{os.getpid()}-", dir=_bots_root())
    else:
        workdir = _abs(config.workdir, start)
        os.makedirs(workdir, exist_ok=True)
        resources.check_kept_folder(config.limits, workdir)  # issue 21.5: a kept folder over the disk cap is not started
    full_env["MARIAS_WORKDIR"] = workdir
    cgroup: Cgroup | None = None
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
        cgroup = Cgroup(config.limits)
        preexec = make_preexec(config.limits, cgroup)
        if mode == "none":
            return Launch(list(argv), cwd, full_env, preexec, (), cleanup, "none", workdir, cgroup.turn)
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
        # ---- issue 21 hook (referee/seccomp.py, referee/resources.py): the lock filter as fd 6, and the disk
        # cap: /tmp a tmpfs of disk_mb with the fresh working folder inside it instead of bound from the host
        lock_fd = seccomp.filter_fd() if seccomp.status() == "seccomp" else None
        if lock_fd is not None:
            fds.append(lock_fd)
            args += ["--seccomp", "6"]
        args, inner = resources.cap_disk(args, config.limits, workdir, fresh)
        full_env["MARIAS_WORKDIR"] = inner
        # ---- end of the issue 21 hook
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
            lf = fcntl.fcntl(lock_fd, fcntl.F_DUPFD, 10) if lock_fd is not None else None  # issue 21 hook
            os.dup2(0, 3)
            os.dup2(1, 4)
            os.dup2(mf, 5)
            if lf is not None:  # issue 21 hook: the seccomp filter bwrap reads
                os.dup2(lf, 6)
            os.dup2(dn, 0)
            os.dup2(dn, 1)

        wrapped = [bwrap, "--args", "5", "--", "/bin/sh", "-c", _TRAMPOLINE, "sh", *argv]
        passed = (3, 4, 5) + ((6,) if lock_fd is not None else ())  # issue 21 hook: fd 6 the seccomp filter
        return Launch(wrapped, start, full_env, preexec_bwrap, passed, cleanup, "bwrap", full_env["MARIAS_WORKDIR"],
                      cgroup.turn)
    except BaseException:
        cleanup()
        raise
