"""Bots that authors upload to a ladder (issue 37.5): their tokens, the build of an upload inside
the sandbox, and its way in through :meth:`referee.ladder.folder.LadderFolder.add`.

**Tokens.**  ``marias ladder token DIR AUTHOR`` makes a secret (:func:`make_token`) that is shown
once; the ladder folder keeps only its SHA-256 (``tokens.json``), with the author and when it was
made.  A token is 256 random bits, so a plain hash is as good as a slow one: nobody can guess
a token from its hash.  :func:`author_of` compares a presented token's hash with every stored
one in constant time (``hmac.compare_digest``, all of them, whatever matched), so neither the
answer's time nor its content says how close a guess came.  :func:`revoke` ends a token (by its
id, the first characters of its hash, or all of an author's), and it is refused from then on.

**An upload** (:func:`submit`) goes through these steps; each refuses with
:class:`UploadRefused` naming the step, an HTTP status for the server, and what the author
needs to mend it:

1. ``token``: the token names an author (401 otherwise); ``sandbox``: the ladder's folder lies
   in a folder the sandbox hides (not under ``/opt``, ``/var`` or another system folder that
   every sandboxed program reads), 503 otherwise;
2. ``name``: the bot's name is well formed and not another author's (a name belongs to the
   author of its first version; 403 otherwise);
3. ``archive``: unpacked safely into a new folder of its own (:mod:`referee.ladder.unpack`:
   every rule named; 400, or 413 for the size caps);
4. ``build``: the upload's own build command (``make``, ``sh build.sh``, ``cargo build
   --offline`` ...), if it has one, run in that folder inside the bots' sandbox
   (:func:`referee.seats.sandbox.launch`, the same launcher the bots start through): no network,
   a read-only system, nothing of the host's private folders but what the command needs,
   writable only its own folder (and a private ``/tmp``), its memory, processes, CPU seconds,
   file size and wall time capped (:class:`BuildLimits`), and the folder measured afterwards;
   its output (the last :attr:`BuildLimits.output_bytes`) is the author's to read (422);
5. ``check`` and ``entry``: :meth:`LadderFolder.add` with the author, which runs ``marias
   check`` first and refuses with its report (422).

Every upload has a folder ``uploads/<id>/`` in the ladder folder: ``bot/`` (the unpacked and built
bot, the version's working folder), ``build.log`` (the build's output, beside the bot so that the
bot cannot rewrite it) and ``upload.json`` (who, what, when, and the step that refused it, if
any).  A refused upload's ``bot/`` is removed; its record stays.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import gzip
import hashlib
import hmac
import json
import os
import re
import secrets
import select
import shlex
import shutil
import signal
import subprocess
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ..logs import files
from ..seats.groups import kill_process_group_now
from ..seats.resources import SandboxLimits, folder_bytes
from ..seats.sandbox import SandboxConfig, SandboxUnavailable, launch
from .folder import NAME_RE as BOT_NAME_RE
from .folder import LadderError, LadderFolder, Refused, exposed_folder
from .unpack import ArchiveRefused, UnpackLimits, unpack

__all__ = [
    "TOKENS_FILE",
    "UPLOADS",
    "BuildLimits",
    "BuildResult",
    "UploadRefused",
    "author_of",
    "author_stderr",
    "build",
    "check_author",
    "check_bot_name",
    "make_token",
    "revoke",
    "submit",
    "tokens",
]

#: The file in the ladder folder that holds the tokens' hashes (never a token itself).
TOKENS_FILE = "tokens.json"
TOKENS_FORMAT = "marias-ladder-tokens/1"
#: The folder in the ladder folder where uploads are unpacked and built.
UPLOADS = "uploads"
#: How a token starts (so that one pasted in the wrong place is recognised).
TOKEN_PREFIX = "mlt_"
#: Authors: letters, digits and ``._-@+``, not starting with a dot, at most 64.
AUTHOR_RE = re.compile(r"^(?!\.)[\w.@+-]{1,64}$")


class UploadRefused(Exception):
    """An upload that did not enter the ladder: ``step`` (token, name, archive, build, check, entry,
    sandbox), the HTTP ``status`` to answer, the ``message`` for the author, the archive ``rule``
    broken (for the archive step) and the build's ``output`` or the check's ``report``."""

    def __init__(self, step: str, status: int, message: str, *, rule: str | None = None, output: str = "",
                 upload: str | None = None):
        super().__init__(f"{step}: {message}")
        self.step, self.status, self.message, self.rule, self.output, self.upload = step, status, message, rule, output, upload

    def to_dict(self) -> dict:
        out = {"ok": False, "step": self.step, "error": self.message}
        if self.rule:
            out["rule"] = self.rule
        if self.output:
            out["output"] = self.output
        if self.upload:
            out["upload"] = self.upload
        return out


def _folder(ladder) -> Path:
    """A ladder's folder, given as a path or as a :class:`LadderFolder`."""
    return Path(ladder.path if isinstance(ladder, LadderFolder) else ladder)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def check_author(author: str) -> str:
    """``author`` when it is a well-formed author name; ``ValueError`` saying what is allowed."""
    if not isinstance(author, str) or not AUTHOR_RE.match(author):
        raise ValueError(f"author {author!r}: use 1 to 64 letters, digits and . _ - @ + (not starting with a dot)")
    return author


def check_bot_name(name: str) -> str:
    """``name`` when the ladder takes it as a bot's name (:data:`referee.ladder.folder.NAME_RE`)."""
    if not isinstance(name, str) or not BOT_NAME_RE.match(name):
        raise ValueError(f"bot name {name!r}: letters, digits and _ . + - only, at most 40, starting with a letter "
                         f"or digit")
    return name


# ------------------------------------------------------------------ tokens


@contextlib.contextmanager
def _tokens_locked(folder: Path):
    """The tokens' records, read under an exclusive lock and written back (atomically) when changed."""
    path = Path(folder) / TOKENS_FILE
    lock = os.open(Path(folder) / (TOKENS_FILE + ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = _read_tokens(path)
        before = json.dumps(data, sort_keys=True)
        yield data
        if json.dumps(data, sort_keys=True) != before:
            tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
    finally:
        os.close(lock)


def _read_tokens(path: Path) -> dict:
    try:
        data = files.read_json(path, 16 * 2**20)
    except FileNotFoundError:
        return {"format": TOKENS_FORMAT, "tokens": []}
    if not isinstance(data, dict) or data.get("format") != TOKENS_FORMAT or not isinstance(data.get("tokens"), list):
        raise ValueError(f"{path}: not a tokens file of format {TOKENS_FORMAT}")
    return data


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def make_token(folder_path, author: str) -> str:
    """A new secret token for ``author`` (shown once: only its hash is kept in the ladder folder)."""
    check_author(author)
    LadderFolder.open(_folder(folder_path))  # a ladder (LadderError otherwise)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    digest = _hash(token)
    with _tokens_locked(_folder(folder_path)) as data:
        data["tokens"].append({"id": digest[:12], "author": author, "sha256": digest, "made": _now(), "revoked": None})
    return token


def author_of(folder_path, token: str | None) -> str | None:
    """The author whose token this is (not revoked), or None.  Every stored hash is compared, in
    constant time each, whatever matched."""
    if not token or not isinstance(token, str) or len(token) > 256:
        return None
    try:
        data = _read_tokens(_folder(folder_path) / TOKENS_FILE)
    except (OSError, ValueError):
        return None
    digest = _hash(token).encode()
    found = None
    for t in data["tokens"]:
        same = hmac.compare_digest(digest, str(t.get("sha256", "")).encode())
        if same and not t.get("revoked"):
            found = t.get("author")
    return found if isinstance(found, str) else None


def tokens(folder_path) -> list[dict]:
    """Every token made (its id, author, when it was made and revoked), never a hash or a secret."""
    data = _read_tokens(_folder(folder_path) / TOKENS_FILE)
    return [{k: t.get(k) for k in ("id", "author", "made", "revoked")} for t in data["tokens"]]


def revoke(folder_path, *, token_id: str | None = None, author: str | None = None) -> int:
    """Revoke the token whose id (or hash) starts with ``token_id`` (at least 6 characters), or every
    token of ``author``; how many were revoked (0: none matched, or they were revoked already)."""
    if (token_id is None) == (author is None):
        raise ValueError("revoke one token (its id) or an author's tokens, not both and not neither")
    if token_id is not None and len(token_id) < 6:
        raise ValueError("a token id has at least 6 characters (marias ladder tokens lists them)")
    n = 0
    with _tokens_locked(_folder(folder_path)) as data:
        for t in data["tokens"]:
            hit = t["sha256"].startswith(token_id) if token_id is not None else t["author"] == author
            if hit and not t.get("revoked"):
                t["revoked"] = _now()
                n += 1
    return n


# ------------------------------------------------------------------ the build, inside the sandbox


@dataclass(frozen=True)
class BuildLimits:
    """What a build may use: wall ``seconds``; per process ``cpu_s``; ``memory_mb`` and ``processes``
    together; ``file_mb`` per file written; ``tmp_mb`` in its private /tmp; the whole bot folder at
    most ``folder_mb`` and ``folder_files`` entries (measured every :data:`WATCH_S` while it runs, the
    build stopped once over, and again after it); the last ``output_bytes`` of its output are kept."""

    seconds: float = 300.0
    cpu_s: int = 600
    memory_mb: int = 2048
    processes: int = 256
    file_mb: int = 256
    tmp_mb: int = 512
    folder_mb: int = 512
    folder_files: int = 100_000
    output_bytes: int = 32 * 1024

    def sandbox_limits(self) -> SandboxLimits:
        # disk_mb caps /tmp and is checked on the folder before the start (the archive's caps keep it under)
        return SandboxLimits(memory_mb=self.memory_mb, processes=self.processes, cpu_s=self.cpu_s,
                             file_mb=self.file_mb, disk_mb=max(self.tmp_mb, self.folder_mb))


@dataclass(frozen=True)
class BuildResult:
    """A build that ran: its exit status, seconds, output (the tail) and the folder's size after."""

    returncode: int | None
    seconds: float
    output: str
    timed_out: bool = False
    folder_bytes: int = 0
    over: str | None = None  # why it was stopped while it ran (its folder over a cap)


class _Tail:
    """The last ``cap`` bytes of a stream, and how many came before them."""

    def __init__(self, cap: int):
        self.cap, self.data, self.dropped = cap, bytearray(), 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        extra = len(self.data) - self.cap
        if extra > 0:
            del self.data[:extra]
            self.dropped += extra

    def text(self) -> str:
        head = f"[... {self.dropped} bytes of output before this]\n" if self.dropped else ""
        return head + self.data.decode("utf-8", "replace")


#: How often a running build's folder is measured (s).
WATCH_S = 1.0


def folder_over(folder: str, limits: BuildLimits) -> str | None:
    """Why ``folder`` is over the build's caps (its bytes on disk, its entries), or None; stops
    walking as soon as it is (links not followed)."""
    total, entries, cap = 0, 0, limits.folder_mb << 20
    stack = [folder]
    while stack:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as it:
            for e in it:
                entries += 1
                if entries > limits.folder_files:
                    return f"the build made more than {limits.folder_files} files and folders in the bot's folder"
                with contextlib.suppress(OSError):
                    total += e.stat(follow_symlinks=False).st_blocks * 512
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                if total > cap:
                    return f"the build wrote more than {limits.folder_mb} MB into the bot's folder"
    return None


def build(folder, command: str, limits: BuildLimits = BuildLimits(), *, sandbox: str = "bwrap",
          hide: tuple[str, ...] = ()) -> BuildResult:
    """Run the build ``command`` (split as a shell would, run without one) in ``folder`` inside the
    bots' sandbox with ``folder`` its only writable one; its stdout and stderr together, the tail kept.
    ``hide``: folders it must not see even where the system's are shown (the ladder's folder around
    the upload: its seed, tokens, logs and the other uploads), ``folder`` itself shown inside them.
    Raises :class:`SandboxUnavailable` (mode ``bwrap``/``required`` where bubblewrap cannot run) and
    ``FileNotFoundError`` (its program is not there); returns however the build ended."""
    folder = os.path.realpath(folder)
    argv = shlex.split(command)
    if not argv:
        raise ValueError("an empty build command")
    config = SandboxConfig(mode=sandbox, limits=limits.sandbox_limits(), workdir=folder, hide=tuple(hide))
    spawn = launch(argv, folder, None, config)
    tail = _Tail(limits.output_bytes)
    r, w = os.pipe()
    t0 = time.monotonic()
    timed_out = False
    over = None
    try:
        try:
            popen = subprocess.Popen(spawn.argv, stdin=subprocess.DEVNULL, stdout=w, stderr=w, cwd=spawn.cwd,
                                     env=spawn.env, preexec_fn=spawn.preexec_fn, pass_fds=spawn.pass_fds,
                                     start_new_session=True, close_fds=True)
        finally:
            os.close(w)
        if spawn.started is not None:
            spawn.started(popen.pid)
        if spawn.release is not None:
            spawn.release()  # a build is never frozen: it runs until it ends
        deadline = t0 + limits.seconds
        watched = t0
        open_ = True
        while open_:
            now = time.monotonic()
            if now - watched >= WATCH_S:
                watched = now
                over = folder_over(folder, limits)
                if over:
                    over += ": it was stopped"
                    break
            left = deadline - now
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([r], [], [], min(left, WATCH_S))
            if ready:
                chunk = os.read(r, 65536)
                if chunk:
                    tail.add(chunk)
                else:
                    open_ = False
        if timed_out or over:
            kill_process_group_now(popen.pid, signal.SIGKILL)
        try:
            rc = popen.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_process_group_now(popen.pid, signal.SIGKILL)
            rc = popen.wait()
    finally:
        os.close(r)
        spawn.cleanup()
    seconds = time.monotonic() - t0
    over = over or folder_over(folder, limits)
    return BuildResult(None if timed_out else rc, seconds, tail.text(), timed_out, folder_bytes(folder), over)


def _ended(rc: int | None, result: BuildResult, limits: BuildLimits) -> str | None:
    """Why a build failed (None: it did not)."""
    if result.over:
        return result.over
    if result.timed_out:
        return f"the build ran longer than {limits.seconds:g} s and was stopped"
    if rc == 0:
        return None
    sig = -rc if rc is not None and rc < 0 else rc - 128 if rc is not None and rc > 128 else None
    if sig:
        with contextlib.suppress(ValueError):
            name = signal.Signals(sig).name
            hint = {"SIGKILL": f" (memory over {limits.memory_mb} MB?)",
                    "SIGXCPU": f" (more than {limits.cpu_s} CPU seconds)",
                    "SIGXFSZ": f" (a file over {limits.file_mb} MB)"}.get(name, "")
            return f"the build was killed by {name}{hint}"
    return f"the build command exited with status {rc}"


# ------------------------------------------------------------------ an upload, step by step


@dataclass
class Upload:
    """One upload's record (``uploads/<id>/upload.json``)."""

    id: str
    author: str
    name: str
    command: str
    build: str | None
    received: str = field(default_factory=_now)
    archive_bytes: int = 0
    files: int = 0  # unpacked: files and links, and their bytes
    bytes: int = 0
    state: str = "received"  # received | unpacked | built | entered | refused
    version: str | None = None
    refused: dict | None = None

    def save(self, folder: Path) -> None:
        tmp = folder / "upload.json.tmp"
        tmp.write_text(json.dumps(self.__dict__, indent=1) + "\n")
        os.replace(tmp, folder / "upload.json")


def _new_upload_folder(ladder: Path) -> tuple[str, Path]:
    root = ladder / UPLOADS
    root.mkdir(exist_ok=True)
    for _ in range(16):
        uid = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)
        with contextlib.suppress(FileExistsError):
            (root / uid).mkdir(0o755)
            return uid, root / uid
    raise OSError("cannot make a new upload folder")  # pragma: no cover - 16 random names taken


def _owner_of_name(ladder_folder, name: str) -> str | None:
    """The author of the first version named ``name`` in the ladder (None: no version has it, or the
    host added it without an author)."""
    for v in ladder_folder.versions():
        if v.get("name") == name:
            return v.get("author") or ""
    return None


def submit(folder_path, token: str | None, archive, name: str, command: str, build_command: str | None = None, *,
           unpack_limits: UnpackLimits = UnpackLimits(), build_limits: BuildLimits = BuildLimits(),
           sandbox: str = "bwrap") -> dict:
    """Enter an uploaded bot (``archive``: the path of the file received) into the ladder at
    ``folder_path`` for the author holding ``token``, as ``name`` run by ``command`` in its folder
    after ``build_command``.  Returns ``{"ok": True, "version", "upload", "author", "build_output"}``;
    raises :class:`UploadRefused` at the first step that refuses."""
    ladder = _folder(folder_path)
    author = author_of(ladder, token)
    if author is None:
        raise UploadRefused("token", 401, "no valid token (send Authorization: Bearer TOKEN; a token is made by "
                                          "marias ladder token DIR AUTHOR, and may have been revoked)")
    try:
        check_bot_name(name)
        if not command or not command.strip():
            raise ValueError("no command: say how the bot is started in its folder (e.g. python3 bot.py)")
        shlex.split(command)
        if build_command is not None and build_command.strip():
            shlex.split(build_command)
        else:
            build_command = None
    except ValueError as e:
        raise UploadRefused("name", 400, str(e)) from None
    exposed = exposed_folder(ladder)
    if exposed is not None and sandbox != "none":
        # there the bots' sandbox shows the ladder's files (its seed among them) to the upload's build and
        # check, and the check's report goes back to the author
        raise UploadRefused("sandbox", 503, f"this ladder's folder lies under {exposed}, which every sandboxed "
                                            f"program can read: it takes no uploads (keep a ladder that takes "
                                            f"uploads under /srv, /home or another folder of its own)")
    lf = LadderFolder(ladder)
    owner = _owner_of_name(lf, name)
    if owner is not None and owner != author:
        raise UploadRefused("name", 403, f"the bot name {name!r} belongs to another author: choose another name")
    uid, up = _new_upload_folder(ladder)
    record = Upload(uid, author, name, command, build_command, archive_bytes=os.stat(archive).st_size)
    record.save(up)
    bot = up / "bot"
    output = ""
    try:
        try:
            got = unpack(archive, bot, unpack_limits)
        except ArchiveRefused as e:
            status = 413 if e.rule in ("archive-size", "unpacked-size") else 400
            raise UploadRefused("archive", status, f"the archive is refused: {e.message}", rule=e.rule) from None
        record.state, record.files, record.bytes = "unpacked", got.files, got.bytes
        record.save(up)
        if build_command:
            try:
                res = build(bot, build_command, build_limits, sandbox=sandbox, hide=(str(ladder.resolve()),))
            except SandboxUnavailable as e:
                raise UploadRefused("sandbox", 503, f"uploads cannot be built on this server: {e}") from None
            except (FileNotFoundError, ValueError) as e:
                why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
                raise UploadRefused("build", 422, f"the build command cannot start: {why} "
                                                  f"({shlex.split(build_command)[0]!r})") from None
            output = res.output
            (up / "build.log").write_text(output)
            why = _ended(res.returncode, res, build_limits)
            if why:
                raise UploadRefused("build", 422, why, output=output)
            record.state = "built"
            record.save(up)
        try:
            version = lf.add(name, command, cwd=str(bot), author=author)
        except Refused as e:
            raise UploadRefused("check", 422, f"{e} (the report says what to mend)", output=e.report) from None
        except (LadderError, OSError, ValueError) as e:
            raise UploadRefused("entry", 422, f"the ladder did not take the bot: {e}") from None
    except UploadRefused as e:
        e.upload = uid
        record.state, record.refused = "refused", e.to_dict()
        record.save(up)
        shutil.rmtree(bot, ignore_errors=True)
        raise
    except BaseException:
        record.state, record.refused = "refused", {"step": "entry", "error": "the server failed while entering it"}
        record.save(up)
        shutil.rmtree(bot, ignore_errors=True)
        raise
    record.state, record.version = "entered", version
    record.save(up)
    return {"ok": True, "version": version, "upload": uid, "author": author, "name": name, "build_output": output}


# ------------------------------------------------------------------ an author's own stderr

#: The most of one stderr file sent (its end).
STDERR_TAIL_BYTES = 64 * 1024


#: The most of a gzipped stderr file decompressed (a bot's stderr is capped at 1 MB when written).
STDERR_GZ_BYTES = 8 * 2**20


def _tail(path: Path) -> tuple[str, int]:
    """The last :data:`STDERR_TAIL_BYTES` of a stderr file (gzipped once old: decompressed, bounded),
    and its size."""
    with files.open_regular(path) as f:
        if path.name.endswith(".gz"):
            with gzip.GzipFile(fileobj=f) as z:
                data = z.read(STDERR_GZ_BYTES)
            return data[-STDERR_TAIL_BYTES:].decode("utf-8", "replace"), len(data)
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - STDERR_TAIL_BYTES))
        return f.read(STDERR_TAIL_BYTES).decode("utf-8", "replace"), size


def author_stderr(folder_path, token: str | None, version_id: str) -> list[dict]:
    """The stderr files of ``version_id`` (each ``{"file", "bytes", "text"}``: its path in the
    ladder folder and its last :data:`STDERR_TAIL_BYTES`), for the author of that version only;
    :class:`UploadRefused` (401: no valid token, 403: another author's version, 404: no such version)."""
    ladder = _folder(folder_path)
    author = author_of(ladder, token)
    if author is None:
        raise UploadRefused("token", 401, "no valid token (send Authorization: Bearer TOKEN)")
    lf = LadderFolder(ladder)
    version = next((v for v in lf.versions() if str(v.get("id")) == str(version_id)), None)
    if version is None:
        raise UploadRefused("version", 404, f"no version {version_id!r} in this ladder")
    if version.get("author") != author:
        raise UploadRefused("version", 403, "that version is another author's: only its author sees its stderr")
    out = []
    real = os.path.realpath(ladder)
    with files.confined(real):
        for p in lf.stderr_files(version_id):
            try:
                text, size = _tail(p)
            except (OSError, EOFError, zlib.error) as e:
                text, size = f"[not read: {getattr(e, 'strerror', None) or e}]", 0
            out.append({"file": os.path.relpath(os.path.realpath(p), real), "bytes": size, "text": text})
    return out
