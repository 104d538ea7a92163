"""A bot's identity: its name plus a fingerprint of what it runs (issues 10 and 22).

The tables credit a bot by its identity, and a resumed tournament refuses a bot
whose fingerprint changed, so the fingerprint must follow the bot's *code*, not
the folder it lies in:

    fingerprint = SHA-256 of a listing, one line per thing the command runs:
      ``exe <sha256 of the program file>``
      ``interp <sha256>``                   the interpreter of a program that starts with ``#!``
      ``arg <i> file <sha256>``             an argument that names a file
      ``arg <i> dir <relpath> <sha256>``    every file of a folder an argument (or a class
                                            path element) names, sorted by relative path
      ``folder <relpath> <sha256>``         every file of the folder of the bot's script (what it
                                            imports from beside it: ``fp2/fph.py`` of ``python3
                                            fp2/bot.py``), unless the bot names its files itself:
      ``path <i> file <sha256>``,           each path of the bot's ``fingerprint:`` list (YAML), a
      ``path <i> dir <relpath> <sha256>``   file or every file of a folder
      ``builtin <name>`` and ``pkg <package> <relpath> <sha256>`` for a built-in bot (the
                                            installed ``bots`` and ``protocol`` packages)

The bot's *script* is the first existing file its arguments name (``bot.py`` of ``python3
bot.py``), else the program itself when it is given as a path (``./bot``); a program
found on PATH (``python3``) has no folder of its own.  The script's folder is capped
(:data:`FOLDER_MAX_FILES`, :data:`FOLDER_MAX_BYTES`): a larger one is an
:class:`IdentityError` telling the user to name what the bot loads in ``fingerprint:``.

Only contents and relative paths inside a folder enter the hash, so the same bot
copied elsewhere keeps its fingerprint; files are listed in sorted order.  Folders
skip ``__pycache__``, names starting with ``.`` (``.git``, caches), marias's own output
(a tournament folder, match logs, transcripts, bots' stderr files) and the bot's own
writable folder: they change without the bot changing.  Arguments that follow
``-c``/``-e``/``-m`` (code or a module name) and options (``-x``, ``--x=...``) are not files.

:func:`named_paths` is also the pre-flight check's list of what must exist.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

#: A bot name: in tournament files, ``--bot NAME=COMMAND`` and the tables.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}\Z")
#: Arguments with these endings name a file that must exist (a script, an archive, a module).
FILE_ENDINGS = (".py", ".pyz", ".js", ".mjs", ".cjs", ".ts", ".jar", ".class", ".rb", ".pl", ".php", ".lua",
                ".sh", ".exe", ".wasm", ".R", ".jl", ".dll")
#: The argument after one of these is code or a module name, never a file.
CODE_FLAGS = ("-c", "-e", "-m", "--eval", "-p", "--print", "-r", "--require")
#: The argument after one of these is a class path (elements separated by os.pathsep).
CLASSPATH_FLAGS = ("-cp", "-classpath", "--class-path")
#: What a fingerprint may read, at most (a bot whose command names a huge folder is refused).
MAX_FILES = 20_000
MAX_BYTES = 2 << 30
#: The folder of the bot's script is hashed by default, up to this much (more: name the files in ``fingerprint:``).
FOLDER_MAX_FILES = 2_000
FOLDER_MAX_BYTES = 64 << 20
SHORT = 12  # hex digits shown in tables
#: A folder holding one of these is marias's output (a tournament, a duel), never part of a bot.
OUTPUT_MARKERS = ("tournament.json", "manifest.json", "units.journal", "results.sqlite")
#: Files marias writes next to logs (transcripts, bots' stderr), never part of a bot.
OUTPUT_SUFFIXES = (".transcript.jsonl", ".stderr.log")
LOG_START = b'{"type":"header","format":"marias-log"'


class IdentityError(ValueError):
    """The fingerprint cannot be computed (a named folder is too large, a file unreadable)."""


@dataclass(frozen=True)
class Named:
    """A path the command names: ``role`` is ``exe``, ``arg <i>`` or ``classpath <i>``."""

    role: str
    given: str  # as written in the command
    path: Path  # resolved against the bot's working folder

    @property
    def exists(self) -> bool:
        return self.path.exists()


def _looks_like_path(arg: str) -> bool:
    if arg.startswith("-") or "://" in arg:
        return False
    return arg.startswith(("./", "../", "/", "~/")) or arg.endswith(FILE_ENDINGS) or (os.sep in arg and "=" not in arg)


def resolve_program(prog: str, cwd: str | None) -> Path | None:
    """The program file ``prog`` runs from ``cwd``: a path (relative to cwd) or a name on PATH."""
    if os.sep in prog or (os.altsep and os.altsep in prog):
        p = Path(os.path.expanduser(prog))
        return p if p.is_absolute() else Path(cwd or ".") / p
    found = shutil.which(prog)
    return Path(found) if found else None


def named_paths(argv: list[str], cwd: str | None = None) -> list[Named]:
    """Everything the command line names as a file or folder: the program, arguments that look like
    paths (``./x``, ``a/b``, ``bot.py``: whether they exist or not), other arguments that name an
    existing file or folder, class path elements."""
    if not argv:
        return []
    base = Path(cwd or ".")
    out: list[Named] = []
    prog = resolve_program(argv[0], cwd)
    out.append(Named("exe", argv[0], prog if prog is not None else base / argv[0]))
    skip_next = False
    classpath_next = False
    for i, arg in enumerate(argv[1:], 1):
        if skip_next:
            skip_next = False
            continue
        if classpath_next:
            classpath_next = False
            for j, part in enumerate(p for p in arg.split(os.pathsep) if p):
                part = part[:-2] if part.endswith(os.sep + "*") else part  # java's "lib/*"
                out.append(Named(f"classpath {i}.{j}", part, base / os.path.expanduser(part)))
            continue
        if arg in CODE_FLAGS:
            skip_next = True
            continue
        if arg in CLASSPATH_FLAGS:
            classpath_next = True
            continue
        if _looks_like_path(arg) or (not arg.startswith("-") and arg and (base / arg).exists()):
            out.append(Named(f"arg {i}", arg, base / os.path.expanduser(arg)))
    return out


def missing_paths(argv: list[str], cwd: str | None = None) -> list[str]:
    """Problems: the program, or a file the command names, that does not exist (with a hint when
    it is part of a path with spaces left unquoted).  A named file is required when it looks like
    code (``bot.py``, ``x.jar``: :data:`FILE_ENDINGS`) or its folder is missing too; other missing
    paths in an existing folder may be files the bot writes (``--log out/bot.log``)."""
    base = Path(cwd or ".")
    problems = []
    for n in named_paths(argv, cwd):
        if n.exists:
            continue
        if n.role != "exe" and not n.given.endswith(FILE_ENDINGS) and n.path.parent.is_dir():
            continue
        what = "program" if n.role == "exe" else "file"
        where = "" if os.path.isabs(n.given) else (f" (from {cwd})" if cwd else " (from the current folder)")
        if n.role == "exe" and os.sep not in n.given:
            where = " on PATH"
        spaces = _spaces_hint(argv, n.given, base)
        if spaces:  # the cause of every word of that path that is not found: said once
            return [f"{what} {n.given!r} not found{where}{spaces}"]
        problems.append(f"{what} {n.given!r} not found{where}")
    return problems


def _spaces_hint(argv: list[str], given: str, base: Path) -> str:
    """'; a path with spaces must be quoted: ...' when ``given`` and its neighbours, joined by
    spaces, name a file that exists."""
    if given not in argv:
        return ""
    i = argv.index(given)
    for j in range(max(0, i - 3), i + 1):
        for k in range(i + 1, min(len(argv), i + 4) + 1):
            if k - j >= 2:
                joined = " ".join(argv[j:k])
                if (base / os.path.expanduser(joined)).exists():
                    return (f"; a path with spaces must be quoted: {joined!r} (quote it inside the command: "
                            f"\"{shlex.quote(joined)}\", or --bot \"NAME={shlex.quote(joined)}\")")
    return ""


# ------------------------------------------------------------------ hashing

_CACHE: dict[tuple, str] = {}


def file_sha256(path) -> str:
    """The SHA-256 (hex) of a file's content."""
    d = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            d.update(chunk)
    return d.hexdigest()


def _cached_sha256(path: Path) -> str:
    """:func:`file_sha256`, cached by path, size and modification time (a bot's files, hashed at every start)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    h = _CACHE.get(key)
    if h is None:
        h = _CACHE[key] = file_sha256(path)
    return h


def _is_marias_output(p: Path) -> bool:
    """A file marias wrote: a log (by its first bytes), a transcript, a bot's stderr file."""
    name = p.name
    if name.endswith(OUTPUT_SUFFIXES):
        return True
    if name.endswith(".jsonl"):
        try:
            with open(p, "rb") as f:
                return f.read(len(LOG_START)) == LOG_START
        except OSError:
            return False
    return False


def _folder_files(root: Path, max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES, too_large: str = "",
                  skip: tuple = ()) -> list[Path]:
    """The files of a folder that make up a bot, sorted by relative path (see the module docstring
    for what is skipped); :class:`IdentityError` past ``max_files`` or ``max_bytes``."""
    files = []
    size = 0
    skip_real = {os.path.realpath(x) for x in skip}
    for dirpath, dirnames, filenames in os.walk(root):
        keep = []
        for d in sorted(dirnames):
            if d.startswith(".") or d == "__pycache__":
                continue
            full = os.path.join(dirpath, d)
            if os.path.realpath(full) in skip_real or any(os.path.exists(os.path.join(full, m)) for m in OUTPUT_MARKERS):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.startswith(".") or name.endswith(".pyc"):
                continue
            p = Path(dirpath) / name
            if not p.is_file() or _is_marias_output(p):
                continue
            files.append(p)
            size += p.stat().st_size
            if len(files) > max_files or size > max_bytes:
                raise IdentityError(too_large or (
                    f"{root}: too large to fingerprint (more than {max_files} files or {max_bytes >> 20} MB); "
                    f"name the bot's own files instead of this folder"))
    files.sort(key=lambda q: q.relative_to(root).as_posix())
    return files


def _entry_lines(role: str, path: Path, skip: tuple = ()) -> list[str]:
    if path.is_dir():
        return [f"{role} dir {p.relative_to(path).as_posix()} {_cached_sha256(p)}"
                for p in _folder_files(path, skip=skip)]
    return [f"{role} file {_cached_sha256(path)}"]


def _package_lines(package: str) -> list[str]:
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return [f"pkg {package} missing"]
    root = Path(list(spec.submodule_search_locations)[0])
    return [f"pkg {package} {p.relative_to(root).as_posix()} {_cached_sha256(p)}"
            for p in _folder_files(root) if p.suffix == ".py"]


def interpreter(path: Path) -> Path | None:
    """The interpreter a program starting with ``#!`` names (``#!/usr/bin/env python3``: python3 on
    PATH), resolved; None for a program without one (a binary) or an interpreter not found.  The
    ``#!`` line is read as the sandbox reads it (:func:`referee.seats.sandbox.program_chain`)."""
    from .sandbox import program_chain

    chain = program_chain(str(path), os.path.dirname(str(path)) or ".", dict(os.environ))
    rest = [p for p in chain[1:] if os.path.basename(p) != "env"]
    if not rest:
        return None
    real = os.path.realpath(rest[0])
    return Path(real) if os.path.exists(real) else None


def script_of(argv: list[str], cwd: str | None = None) -> Path | None:
    """The bot's script: the first existing file its arguments name, else the program when it is
    given as a path (not found on PATH).  None for a command of a program on PATH and no file."""
    names = named_paths(argv, cwd)
    for n in names:
        if n.role.startswith("arg") and n.path.is_file():
            return n.path
    if names and names[0].role == "exe" and (os.sep in argv[0]) and names[0].path.is_file():
        return names[0].path
    return None


def listing(argv: list[str], cwd: str | None = None, builtin: str | None = None,
            paths: list[str] | None = None, skip: tuple = ()) -> list[str]:
    """The lines the fingerprint hashes (see the module docstring); useful to see why two differ.

    ``paths``: the bot's ``fingerprint:`` list (relative to ``cwd``), what it loads beyond its
    command line; given, it replaces the folder of the script.  ``skip``: folders that are no
    part of the bot (its writable folder)."""
    try:
        if builtin is not None:
            lines = [f"builtin {builtin}", f"exe {_cached_sha256(Path(sys.executable))}"]
            for pkg in ("bots", "protocol"):
                lines += _package_lines(pkg)
            return lines
        lines = []
        for n in named_paths(argv, cwd):
            if not n.exists:
                lines.append(f"{n.role} missing")
            elif n.role == "exe":
                lines.append(f"exe {_cached_sha256(n.path)}")
                interp = interpreter(n.path) if n.path.is_file() else None
                if interp is not None and interp.is_file():
                    lines.append(f"interp {_cached_sha256(interp)}")
            else:
                role = n.role.split(".")[0] if n.role.startswith("classpath") else n.role
                lines += _entry_lines(role, n.path, skip)
        base = Path(cwd or ".")
        if paths:
            for i, given in enumerate(paths):
                p = base / os.path.expanduser(given)
                lines += _entry_lines(f"path {i}", p, skip) if p.exists() else [f"path {i} missing"]
            return lines
        script = script_of(argv, cwd)
        if script is not None:
            folder = script.parent
            too_large = (f"the folder of the bot's script {script} ({folder}) holds more than {FOLDER_MAX_FILES} "
                         f"files or {FOLDER_MAX_BYTES >> 20} MB, too much to fingerprint; name the files and folders "
                         f"the bot loads in its 'fingerprint:' list (tournament YAML, per bot; relative to its cwd), "
                         f"which then replaces this folder, or move the bot into a folder of its own")
            lines += [f"folder {p.relative_to(folder).as_posix()} {_cached_sha256(p)}"
                      for p in _folder_files(folder, FOLDER_MAX_FILES, FOLDER_MAX_BYTES, too_large, skip)]
        return lines
    except OSError as e:
        raise IdentityError(f"cannot read {e.filename or 'a file'} to fingerprint the bot: {e.strerror or e}") from None


def fingerprint(argv: list[str], cwd: str | None = None, builtin: str | None = None,
                paths: list[str] | None = None, skip: tuple = ()) -> str:
    """The SHA-256 (hex) of :func:`listing`."""
    return listing_hash(listing(argv, cwd, builtin, paths, skip))


def listing_hash(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode() + b"\n").hexdigest()


def spec_listing(spec) -> list[str]:
    """:func:`listing` of a :class:`referee.matches.match.BotSpec` (its ``fingerprint:`` paths, its workdir skipped)."""
    return listing(spec.argv, spec.cwd, spec.builtin, getattr(spec, "fingerprint_paths", None),
                   tuple(x for x in (getattr(spec, "workdir", None),) if x))


def listing_changes(old: list[str], new: list[str], argv: list[str] | None = None,
                    paths: list[str] | None = None) -> list[str]:
    """What differs between two listings, in words: ``folder fph.py changed``, ``argv[1] bot.py changed``,
    ``folder util.py added`` (for the message of a refused resume)."""
    def split(lines):
        out = {}
        for line in lines:
            key, _, value = line.rpartition(" ")
            if not key or line.endswith(" missing"):
                key, value = line, ""
            out[key] = value
        return out

    def name(key: str) -> str:
        words = key.split(" ")
        if words[0] == "arg" and len(words) >= 3 and argv is not None and words[1].isdigit() and int(words[1]) < len(argv):
            where = f"argv[{words[1]}] {argv[int(words[1])]}"
            return where + (f" / {' '.join(words[3:])}" if words[2] == "dir" else "")
        if words[0] == "path" and len(words) >= 3 and paths is not None and words[1].isdigit() and int(words[1]) < len(paths):
            where = f"fingerprint: {paths[int(words[1])]}"
            return where + (f" / {' '.join(words[3:])}" if words[2] == "dir" else "")
        if words[0] == "folder":
            return f"the script's folder: {' '.join(words[1:])}"
        if words[0] == "exe":
            return f"the program {argv[0]}" if argv else "the program"
        if words[0] == "interp":
            return "the program's #! interpreter"
        return key

    a, b = split(old), split(new)
    out = []
    for k in sorted(set(a) | set(b)):
        if k not in a:
            out.append(f"{name(k)} added")
        elif k not in b:
            out.append(f"{name(k)} removed")
        elif a[k] != b[k]:
            out.append(f"{name(k)} changed")
    return out


def short(fp: str | None) -> str:
    return fp[:SHORT] if fp else "-"


def split_named(value: str) -> tuple[str | None, str]:
    """``NAME=COMMAND`` as ``(NAME, COMMAND)``; anything else (a built-in, a command alone) as ``(None, value)``."""
    name, eq, command = value.partition("=")
    if eq and NAME_RE.match(name.strip()) and command.strip():
        return name.strip(), command.strip()
    return None, value


def default_label(argv: list[str], builtin: str | None = None, value: str | None = None) -> str:
    """A name for a bot given without NAME=: a built-in's name (``random:5`` -> ``random-5``), else
    the stem of the first file its command names (``node examples/js/bot.js`` -> ``bot``), else the program's."""
    if builtin is not None:
        return (value or builtin).replace(":", "-")
    names = named_paths(argv)
    pick = next((n for n in names if n.role != "exe" and n.given), None) or (names[0] if names else None)
    stem = Path(pick.given).stem if pick else "bot"
    if value and (pick is None or not pick.exists) and os.path.isfile(os.path.expanduser(value.strip())):
        stem = Path(value.strip()).stem  # an unquoted path with spaces: the file it names, not a word of it
    clean = re.sub(r"[^A-Za-z0-9_.+-]", "_", stem)[:40].lstrip("_.+-") or "bot"
    return clean
