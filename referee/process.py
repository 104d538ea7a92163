"""Bot process layer: spawn a bot program and exchange JSON lines with it.

This module knows nothing about the card game.  It starts a program from an
argv list (never through a shell), in its own session / process group, sends
one JSON object per line on its stdin, reads one JSON object per line from its
stdout, enforces time and size limits, copies its stderr to a capped file and
makes sure that no process of the bot's group survives :meth:`BotProcess.close`.

Design notes
------------
* The pipes are plain non-blocking file descriptors driven by the event loop's
  ``add_reader``/``add_writer``; no ``StreamReader`` and no per-line tasks.
  Reading uses our own ``bytearray`` buffer, so a line longer than ``max_line``
  is detected while holding at most ``max_line`` + one chunk in memory.
* The exit of the bot's main process is watched without reaping it (a pidfd on
  Linux, otherwise a helper thread blocked in ``waitid(WNOWAIT)``).  Because the
  leader stays a zombie until :meth:`close` reaps it, its pid -- which is also
  the process group id -- cannot be reused, so signalling the group is safe
  even after the leader has exited.
* A waiting :meth:`receive` also wakes up when the main process exits, so a
  bot that dies while a child still holds its stdout open is reported as
  ``EXIT`` immediately instead of running into the timeout.
* Cost per answer: the stdout reader stays registered between waits (no
  ``epoll_ctl`` pair and no event-loop bookkeeping per answer) and reads the
  chunk itself when it fires for a waiting :meth:`receive`; if it fires while
  nobody waits (output nobody asked for yet) it unregisters itself and leaves
  the bytes in the pipe, so memory stays bounded as before.  Callers that have
  their lines encoded already (the referee encodes a line once for every seat
  that gets it) use :meth:`send_lines` / :meth:`request_lines`.
"""

from __future__ import annotations

import asyncio
import contextlib
import atexit
import enum
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable

from .sandbox import SandboxConfig, SandboxUnavailable, launch

__all__ = [
    "FaultKind",
    "BotFault",
    "BotCommand",
    "BotProcess",
    "kill_process_group",
    "kill_process_group_now",
    "encode_line",
]

_CHUNK = 65536
_EVIDENCE_CHARS = 300
_STDERR_TAIL = 4096

# Outcomes delivered to a waiting future.
_READY = 1
_TIMEOUT = 2
_EXITED = 3

# Set to False (e.g. by tests) to force the thread based exit watcher.
_USE_PIDFD = hasattr(os, "pidfd_open")


class FaultKind(str, enum.Enum):
    """Why a bot failed to give a usable answer."""

    ILLEGAL = "illegal"  # used by the layer above
    MALFORMED = "malformed"  # line is not a JSON object / not UTF-8
    WRONG_ID = "wrong-id"  # used by the layer above
    UNEXPECTED = "unexpected"  # used by the layer above
    TIMEOUT = "timeout"  # no complete line within the limit
    EXIT = "exit"  # the process ended
    CLOSED = "closed"  # stdout reached EOF while the process still runs
    LINE_TOO_LONG = "line-too-long"
    START = "start"  # the program could not be started

    def __str__(self) -> str:  # "timeout" rather than "FaultKind.TIMEOUT"
        return self.value


def _evidence(raw: bytes | bytearray | str | None) -> str:
    """The first 300 characters of ``raw``, with "…(N bytes)" if cut."""
    if not raw:
        return ""
    if isinstance(raw, str):
        if len(raw) <= _EVIDENCE_CHARS:
            return raw
        size = len(raw.encode("utf-8", "replace"))
        return raw[:_EVIDENCE_CHARS] + f"…({size} bytes)"
    size = len(raw)
    head = bytes(raw[: _EVIDENCE_CHARS * 4]).decode("utf-8", "replace")
    if size <= _EVIDENCE_CHARS * 4 and len(head) <= _EVIDENCE_CHARS:
        return head
    return head[:_EVIDENCE_CHARS] + f"…({size} bytes)"


def _tail_evidence(raw: bytes | bytearray) -> str:
    """The last 300 characters of ``raw`` (used for stderr output)."""
    if not raw:
        return ""
    text = bytes(raw).decode("utf-8", "replace")
    if len(text) <= _EVIDENCE_CHARS:
        return text
    return f"…(last {_EVIDENCE_CHARS} chars) " + text[-_EVIDENCE_CHARS:]


class BotFault(Exception):
    """A bot did not produce a usable answer (or could not even run)."""

    def __init__(
        self,
        kind: FaultKind,
        message: str,
        evidence: str = "",
        elapsed: float = 0.0,
    ) -> None:
        super().__init__(f"{kind.value}: {message}")
        self.kind = FaultKind(kind)
        self.message = message
        self.evidence = evidence
        self.elapsed = elapsed

    def to_dict(self) -> dict:
        return {
            "kind": self.kind.value,
            "message": self.message,
            "evidence": self.evidence,
            "elapsed": round(self.elapsed, 6),
        }

    def __repr__(self) -> str:
        return (
            f"BotFault(kind={self.kind.value!r}, message={self.message!r}, "
            f"evidence={self.evidence!r}, elapsed={self.elapsed:.6f})"
        )


@dataclass
class BotCommand:
    """How to start a bot. ``env`` entries are added to ``os.environ``."""

    argv: list[str]
    cwd: str | None = None
    env: dict[str, str] | None = None
    sandbox: "SandboxConfig | None" = None  # None: started as it is (no isolation, no limits)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _make_line_encoder() -> Callable[[object], str]:
    """``_ENCODER.encode``, without its set-up cost per call.

    ``JSONEncoder.encode`` builds a new C encoder object for every message,
    which costs about as much as encoding a short message; the referee encodes
    several per decision, so one C encoder with the same settings is made once
    and reused.  Where the C accelerator is missing or takes other arguments
    (it is an implementation detail of :mod:`json`), or does not give exactly
    the same text for a probe, ``_ENCODER.encode`` itself is used.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _ENCODER.encode
    try:
        # markers=None: no check for circular references (messages are trees)
        c_encode = make(None, _ENCODER.default, json.encoder.encode_basestring, None,
                        _ENCODER.key_separator, _ENCODER.item_separator, False, False, False)
    except TypeError:
        return _ENCODER.encode

    def encode(message) -> str:
        return "".join(c_encode(message, 0))

    probe = {"a": [0, -7, 1.5, "é č \"\\\n\u2028", None, True, False, {}, []], "b": {"c": {"d": "x"}}, "": 2**70}
    try:
        same = encode(probe) == _ENCODER.encode(probe)
    except Exception:
        same = False
    return encode if same else _ENCODER.encode


#: One message as the JSON text of its line (without the newline), exactly as
#: :meth:`BotProcess.send` writes it; for callers of :meth:`BotProcess.send_lines`.
encode_line = _make_line_encoder()


def _describe_returncode(rc: int | None) -> str:
    if rc is None:
        return "bot process exited (status unknown)"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = "unknown"
        return f"bot process was killed by signal {-rc} ({name})"
    return f"bot process exited with return code {rc}"


# --------------------------------------------------------------------------
# process group helpers

_LIVE_GROUPS: set[int] = set()


def kill_all_bots() -> None:
    """SIGKILL the process group of every bot this process started and has not closed
    (a last resort for a process that is about to exit)."""
    for pgid in list(_LIVE_GROUPS):
        kill_process_group_now(pgid)
    _LIVE_GROUPS.clear()


atexit.register(kill_all_bots)


def kill_process_group_now(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Send ``sig`` to process group ``pgid``; False if the group is gone."""
    if pgid <= 1:
        return False
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    except OSError:
        return False
    return True


async def kill_process_group(pgid: int, grace: float = 0.2) -> None:
    """SIGTERM the group, give it ``grace`` seconds, then SIGKILL it.

    Members that already are zombies still count as present for ``killpg``,
    so this waits the whole grace period in that case; it never raises.
    """
    if not kill_process_group_now(pgid, signal.SIGTERM):
        return
    deadline = time.monotonic() + max(grace, 0.0)
    while time.monotonic() < deadline:
        await asyncio.sleep(0.01)
        if not kill_process_group_now(pgid, 0):
            return
    kill_process_group_now(pgid, signal.SIGKILL)


def _group_has_live_members(pgid: int) -> bool:
    """Whether process group ``pgid`` still has a member that is not a zombie.

    ``killpg(pgid, 0)`` alone also counts zombies (which may linger if the
    init process of a container does not reap orphans), so on Linux the
    members are looked up in /proc when the group still exists.
    """
    if pgid <= 1:
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _wake(fut: asyncio.Future, value: int) -> None:
    if not fut.done():
        fut.set_result(value)


# --------------------------------------------------------------------------


class BotProcess:
    """One running bot program, spoken to with one JSON object per line.

    Not safe for concurrent ``receive`` calls (one reader at a time); one
    ``send`` may run concurrently with one ``receive``.
    """

    #: How long to wait for the exit status after stdout reached EOF before
    #: deciding the bot merely closed its stdout (CLOSED) rather than exited.
    eof_exit_wait = 0.1
    #: Wait after SIGTERM before SIGKILL in :meth:`close`.
    term_wait = 0.2
    #: Wait after SIGKILL in :meth:`close`.
    kill_wait = 2.0
    #: How long :meth:`close` waits for killed group members to disappear.
    group_wait = 1.0

    def __init__(
        self,
        command: BotCommand,
        *,
        name: str = "bot",
        stderr_path: str | os.PathLike | None = None,
        stderr_cap: int = 1_000_000,
        max_line: int = 1_000_000,
        transcript: Callable[[str, str], None] | None = None,
        write_timeout: float | None = 10.0,
    ) -> None:
        self.command = command
        self.name = name
        self.stderr_path = stderr_path
        self.stderr_cap = max(0, int(stderr_cap))
        self.max_line = max(1, int(max_line))
        self.transcript = transcript
        self.write_timeout = write_timeout

        self._loop: asyncio.AbstractEventLoop | None = None
        self._popen: subprocess.Popen | None = None
        self._pid = -1
        self._stdin_fd = -1
        self._stdout_fd = -1
        self._stderr_fd = -1
        self._pidfd = -1
        self._started = False
        self._closing = False
        self._closed = False
        self._close_done: asyncio.Future | None = None
        self._sandbox_cleanup: Callable[[], None] | None = None

        # stdout state
        self._buf = bytearray()
        self._scan = 0  # bytes of _buf already known to contain no newline
        self._skipping = False  # discarding the rest of an over-long line
        self._eof = False
        self._read_waiter: asyncio.Future | None = None
        self._stdout_watched = False  # the stdout reader is registered (see _on_stdout)
        self._write_waiter: asyncio.Future | None = None

        # exit state (leader exited, not necessarily reaped)
        self._exited = False
        self._returncode: int | None = None
        self._exit_future: asyncio.Future | None = None
        self._reaped = False

        # stderr state
        self._stderr_file = None
        self._stderr_written = 0
        self._stderr_marked = False
        self._stderr_last = b"\n"
        self._stderr_tail = bytearray()

    # ------------------------------------------------------------------ info

    @property
    def pid(self) -> int | None:
        return self._pid if self._pid > 0 else None

    @property
    def pgid(self) -> int | None:
        """Process group id (equal to the pid: the bot leads its own group)."""
        return self.pid

    @property
    def returncode(self) -> int | None:
        if not self._exited and self._started:
            self._check_exit()
        return self._returncode

    @property
    def alive(self) -> bool:
        if not self._started or self._exited:
            return False
        return not self._check_exit()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def stderr_tail(self) -> str:
        """The last few KiB the bot wrote to stderr (decoded leniently)."""
        return bytes(self._stderr_tail).decode("utf-8", "replace")

    def __repr__(self) -> str:
        state = "new" if not self._started else ("closed" if self._closed else "running")
        return f"<BotProcess {self.name!r} pid={self.pid} {state}>"

    async def __aenter__(self) -> "BotProcess":
        if not self._started:
            await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # ----------------------------------------------------------------- start

    async def start(self) -> None:
        if self._started:
            raise RuntimeError("BotProcess.start() called twice")
        loop = asyncio.get_running_loop()
        argv = [os.fspath(a) for a in self.command.argv]
        if not argv:
            raise BotFault(FaultKind.START, f"{self.name}: empty command line")
        env = None
        if self.command.env:
            env = dict(os.environ)
            env.update(self.command.env)

        stderr_file = None
        if self.stderr_path is not None:
            path = os.fspath(self.stderr_path)
            parent = os.path.dirname(path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            stderr_file = open(path, "ab", buffering=0)

        spawn = None
        try:
            if self.command.sandbox is not None:  # sandbox hook: referee/sandbox.py decides what is spawned
                spawn = launch(argv, self.command.cwd, env, self.command.sandbox)
            popen = subprocess.Popen(
                spawn.argv if spawn else argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=spawn.cwd if spawn else self.command.cwd,
                env=spawn.env if spawn else env,
                preexec_fn=spawn.preexec_fn if spawn else None,
                pass_fds=spawn.pass_fds if spawn else (),
                start_new_session=True,
                close_fds=True,
                bufsize=0,
            )
        except (OSError, ValueError, SandboxUnavailable) as exc:
            if spawn is not None:
                spawn.cleanup()
            if stderr_file is not None:
                stderr_file.close()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            where = f" (cwd {self.command.cwd!r})" if self.command.cwd else ""
            raise BotFault(
                FaultKind.START,
                f"{self.name}: cannot start {argv[0]!r}{where}: {reason}",
            ) from exc

        self._loop = loop
        self._popen = popen
        self._sandbox_cleanup = spawn.cleanup if spawn else None
        self._pid = popen.pid
        self._started = True
        self._stderr_file = stderr_file
        _LIVE_GROUPS.add(self._pid)
        self._stdin_fd = popen.stdin.fileno()
        self._stdout_fd = popen.stdout.fileno()
        self._stderr_fd = popen.stderr.fileno()
        self._exit_future = loop.create_future()
        try:
            for fd in (self._stdin_fd, self._stdout_fd, self._stderr_fd):
                os.set_blocking(fd, False)
            loop.add_reader(self._stderr_fd, self._on_stderr)
            self._watch_exit()
        except BaseException:
            self.kill()
            raise

    # ------------------------------------------------------------ exit watch

    def _watch_exit(self) -> None:
        loop = self._loop
        if _USE_PIDFD:
            try:
                self._pidfd = os.pidfd_open(self._pid)
            except OSError:
                self._pidfd = -1
            if self._pidfd >= 0:
                loop.add_reader(self._pidfd, self._on_exit_notice)
                return
        thread = threading.Thread(
            target=self._exit_thread, name=f"marias-exit-{self._pid}", daemon=True
        )
        thread.start()

    def _exit_thread(self) -> None:
        with contextlib.suppress(ChildProcessError, InterruptedError, OSError):
            os.waitid(os.P_PID, self._pid, os.WEXITED | os.WNOWAIT)
        with contextlib.suppress(RuntimeError):  # loop closed
            self._loop.call_soon_threadsafe(self._on_exit_notice)

    def _on_exit_notice(self) -> None:
        if self._pidfd >= 0:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = -1
        if not self._check_exit() and not self._reaped:
            # The notice means the process is gone; trust it even if waitid
            # could not tell us the status.
            self._mark_exited(None)

    def _check_exit(self) -> bool:
        """Poll (without reaping) whether the leader has exited."""
        if self._exited:
            return True
        if self._pid <= 0:
            return False
        try:
            res = os.waitid(os.P_PID, self._pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            # Reaped by someone else (or by us): status is unknown here.
            self._mark_exited(self._popen.returncode if self._popen else None)
            return True
        except OSError:
            return False
        if res is None:
            return False
        if res.si_code == os.CLD_EXITED:
            rc = res.si_status
        elif res.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
            rc = -res.si_status
        else:  # stopped/continued are not requested; be defensive
            return False
        self._mark_exited(rc)
        return True

    def _mark_exited(self, rc: int | None) -> None:
        if self._exited:
            return
        self._exited = True
        self._returncode = rc
        fut = self._exit_future
        if fut is not None and not fut.done():
            fut.set_result(rc)
        for waiter in (self._read_waiter, self._write_waiter):
            if waiter is not None and not waiter.done():
                waiter.set_result(_EXITED)

    async def _wait_exit(self, timeout: float) -> bool:
        if self._exited or self._check_exit():
            return True
        fut = self._exit_future
        if timeout > 0 and fut is not None and not fut.done():
            await asyncio.wait((fut,), timeout=timeout)
        return self._exited or self._check_exit()

    # ----------------------------------------------------------------- stderr

    def _on_stderr(self) -> None:
        self._pump_stderr(1)

    def _store_stderr(self, chunk: bytes) -> None:
        tail = self._stderr_tail
        tail += chunk[-_STDERR_TAIL:]
        if len(tail) > _STDERR_TAIL:
            del tail[:-_STDERR_TAIL]
        f = self._stderr_file
        if f is None:
            return
        room = self.stderr_cap - self._stderr_written
        try:
            if room > 0:
                part = chunk[:room] if len(chunk) > room else chunk
                f.write(part)
                self._stderr_written += len(part)
                self._stderr_last = part[-1:]
            if len(chunk) > room and not self._stderr_marked:
                self._stderr_marked = True
                lead = b"" if self._stderr_last == b"\n" else b"\n"
                f.write(lead + f"[marias: stderr truncated at {self.stderr_cap} bytes]\n".encode())
        except OSError:
            # Cannot write the log (disk full...): keep draining, stop logging.
            self._close_stderr_file()

    def _pump_stderr(self, max_chunks: int = 64) -> None:
        """Synchronously drain whatever stderr output is available now."""
        for _ in range(max_chunks):
            if self._stderr_fd < 0:
                return
            try:
                chunk = os.read(self._stderr_fd, _CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._stop_stderr()
                return
            self._store_stderr(chunk)

    def _stop_stderr(self) -> None:
        if self._stderr_fd >= 0:
            self._loop.remove_reader(self._stderr_fd)
            self._stderr_fd = -1
            with contextlib.suppress(OSError):
                self._popen.stderr.close()
        self._close_stderr_file()

    def _close_stderr_file(self) -> None:
        f = self._stderr_file
        self._stderr_file = None
        if f is not None:
            with contextlib.suppress(OSError):
                f.close()

    # ------------------------------------------------------------------ faults

    def _not_usable(self, elapsed: float = 0.0) -> BotFault | None:
        if not self._started:
            raise RuntimeError("BotProcess used before start()")
        if self._closing:
            return BotFault(
                FaultKind.EXIT,
                f"{self.name}: bot process was closed ({_describe_returncode(self._returncode)})",
                elapsed=elapsed,
            )
        return None

    def _exit_fault(self, elapsed: float) -> BotFault:
        self._pump_stderr()
        evidence = _evidence(self._buf) if self._buf else _tail_evidence(self._stderr_tail)
        return BotFault(
            FaultKind.EXIT,
            f"{self.name}: {_describe_returncode(self._returncode)}",
            evidence,
            elapsed,
        )

    async def _eof_fault(self, start: float) -> BotFault:
        if not await self._wait_exit(self.eof_exit_wait):
            return BotFault(
                FaultKind.CLOSED,
                f"{self.name}: bot closed its standard output but is still running",
                _evidence(self._buf),
                self._loop.time() - start,
            )
        return self._exit_fault(self._loop.time() - start)

    # ------------------------------------------------------------------- send

    async def send(self, message: dict, timeout: float | None = None) -> None:
        """Write ``message`` as one JSON line.

        ``timeout`` bounds how long we wait for the bot to make room in the
        pipe (only matters for a bot that does not read its input); None means
        the constructor's ``write_timeout`` (itself None = wait forever).
        """
        await self.send_many((message,), timeout)

    async def send_many(self, messages, timeout: float | None = None) -> None:
        """Write several messages, one JSON line each, with a single write."""
        await self.send_lines([encode_line(m) for m in messages], timeout)

    async def send_lines(self, lines: list[str], timeout: float | None = None) -> None:
        """Write lines encoded already (with :func:`encode_line`, no newline), with a single write."""
        if self.transcript is not None:
            for line in lines:
                self.transcript("send", line)
        if timeout is None:
            timeout = self.write_timeout
        data = "\n".join(lines) + "\n"
        await self._write(data.encode("utf-8"), timeout)

    async def _write(self, data: bytes, timeout: float | None) -> None:
        fault = self._not_usable()
        if fault is not None:
            raise fault
        if self._exited:
            raise self._exit_fault(0.0)
        fd = self._stdin_fd
        try:
            n = os.write(fd, data)
        except BlockingIOError:
            n = 0
        except OSError:
            raise await self._broken_pipe_fault()
        if n == len(data):
            return
        # Slow path: the pipe is full (the bot is not reading its input).
        loop = self._loop
        start = loop.time()
        deadline = None if timeout is None else start + timeout
        view = memoryview(data)[n:]
        while view:
            outcome = await self._wait_writable(deadline)
            if self._closing:
                raise self._not_usable(loop.time() - start)
            if outcome == _EXITED or self._exited:
                raise self._exit_fault(loop.time() - start)
            if outcome == _TIMEOUT:
                raise BotFault(
                    FaultKind.TIMEOUT,
                    f"{self.name}: bot did not read its input within {timeout:g} s",
                    "",
                    loop.time() - start,
                )
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                continue
            except OSError:
                raise await self._broken_pipe_fault()
            view = view[n:]

    async def _broken_pipe_fault(self) -> BotFault:
        if await self._wait_exit(self.eof_exit_wait):
            return self._exit_fault(0.0)
        return BotFault(
            FaultKind.EXIT,
            f"{self.name}: bot closed its standard input (broken pipe)",
            _tail_evidence(self._stderr_tail),
        )

    # ---------------------------------------------------------------- receive

    async def receive(self, timeout: float | None) -> dict:
        """Read one line and return it parsed as a JSON object."""
        start = self._loop.time() if self._loop is not None else 0.0
        deadline = None if timeout is None else start + timeout
        return await self._read_message(start, deadline, timeout, False)

    async def request(self, message: dict, timeout: float | None, preceding=()) -> tuple[dict, float]:
        """Send ``message`` (after the informational ``preceding`` messages, in
        the same write) and read the answer.

        Returns ``(answer, elapsed)`` with ``elapsed`` measured from just after
        the write to the moment the answer line was complete.
        """
        return await self.request_lines([*map(encode_line, preceding), encode_line(message)], timeout)

    async def request_lines(self, lines: list[str], timeout: float | None) -> tuple[dict, float]:
        """:meth:`request` with every line encoded already (:func:`encode_line`);
        the last line is the request."""
        await self.send_lines(lines)
        loop = self._loop
        start = loop.time()
        deadline = None if timeout is None else start + timeout
        answer = await self._read_message(start, deadline, timeout, True)
        return answer, loop.time() - start

    async def _wait_writable(self, deadline: float | None) -> int:
        loop = self._loop
        fd = self._stdin_fd
        fut = loop.create_future()
        loop.add_writer(fd, _wake, fut, _READY)
        self._write_waiter = fut
        timer = None if deadline is None else loop.call_at(deadline, _wake, fut, _TIMEOUT)
        try:
            return await fut
        finally:
            if timer is not None:
                timer.cancel()
            self._write_waiter = None
            if self._stdin_fd == fd:
                loop.remove_writer(fd)

    async def _wait_readable(self, deadline: float | None) -> int:
        """Wait until :meth:`_on_stdout` has put a chunk (or EOF) in the buffer,
        the deadline passes or the process exits."""
        loop = self._loop
        fut = loop.create_future()
        self._read_waiter = fut
        if not self._stdout_watched:
            loop.add_reader(self._stdout_fd, self._on_stdout)
            self._stdout_watched = True
        timer = None if deadline is None else loop.call_at(deadline, _wake, fut, _TIMEOUT)
        try:
            return await fut
        finally:
            if timer is not None:
                timer.cancel()
            self._read_waiter = None

    def _on_stdout(self) -> None:
        """stdout is readable.  For a waiting receive: read one chunk into the
        buffer and wake it.  With nobody waiting: stop watching until the next
        wait (the reader is level-triggered and would fire again and again),
        leaving the bytes in the pipe."""
        waiter = self._read_waiter
        if waiter is None or waiter.done():
            self._unwatch_stdout()
            return
        try:
            chunk = os.read(self._stdout_fd, _CHUNK)
        except BlockingIOError:
            return  # nothing after all; keep waiting
        except OSError:
            chunk = b""
        if chunk:
            self._buf += chunk
        else:
            self._eof = True
        waiter.set_result(_READY)

    def _unwatch_stdout(self) -> None:
        if self._stdout_watched:
            self._stdout_watched = False
            self._loop.remove_reader(self._stdout_fd)

    def _too_long(self, data, start: float) -> BotFault:
        return BotFault(
            FaultKind.LINE_TOO_LONG,
            f"{self.name}: line longer than {self.max_line} bytes",
            _evidence(data),
            self._loop.time() - start,
        )

    def _take_line(self, start: float) -> bytes | None:
        """Remove and return the next complete line from the buffer."""
        buf = self._buf
        while buf:
            i = buf.find(b"\n", self._scan)
            if i < 0:
                if self._skipping:
                    buf.clear()
                    self._scan = 0
                    return None
                if len(buf) > self.max_line:
                    fault = self._too_long(buf, start)
                    buf.clear()
                    self._scan = 0
                    self._skipping = True
                    raise fault
                self._scan = len(buf)
                return None
            line = bytes(buf[:i])
            del buf[: i + 1]
            self._scan = 0
            if self._skipping:
                self._skipping = False
                continue
            if i > self.max_line:
                raise self._too_long(line, start)
            return line
        return None

    def _parse(self, line: bytes, start: float) -> dict | None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if self.transcript is not None:
            self.transcript("recv", line.decode("utf-8", "replace"))
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise BotFault(
                FaultKind.MALFORMED,
                f"{self.name}: line is not valid UTF-8",
                _evidence(line),
                self._loop.time() - start,
            ) from None
        if not text.strip():
            return None  # blank lines are ignored
        try:
            value = _DECODER.decode(text)
        except (ValueError, RecursionError) as exc:
            raise BotFault(
                FaultKind.MALFORMED,
                f"{self.name}: line is not valid JSON ({exc})",
                _evidence(text),
                self._loop.time() - start,
            ) from None
        if type(value) is not dict:
            raise BotFault(
                FaultKind.MALFORMED,
                f"{self.name}: expected a JSON object, got {type(value).__name__}",
                _evidence(text),
                self._loop.time() - start,
            )
        return value

    async def _read_message(
        self, start: float, deadline: float | None, timeout: float | None, wait_first: bool
    ) -> dict:
        fault = self._not_usable()
        if fault is not None:
            raise fault
        loop = self._loop
        fd = self._stdout_fd
        buf = self._buf
        while True:
            if buf:
                line = self._take_line(start)
                if line is not None:
                    msg = self._parse(line, start)
                    if msg is not None:
                        return msg
                    continue
            if self._eof:
                raise await self._eof_fault(start)
            if wait_first:
                wait_first = False
                chunk = None
            else:
                try:
                    chunk = os.read(fd, _CHUNK)
                except BlockingIOError:
                    chunk = None
                except OSError:
                    chunk = b""
            if chunk is None:
                if self._exited:
                    raise self._exit_fault(loop.time() - start)
                # on _READY the chunk (or EOF) is in the buffer already
                outcome = await self._wait_readable(deadline)
                if self._closing:
                    raise self._not_usable(loop.time() - start)
                if outcome == _TIMEOUT:
                    now = loop.time()
                    if now < deadline:  # timer fired a hair early
                        continue
                    raise BotFault(
                        FaultKind.TIMEOUT,
                        f"{self.name}: no complete line within {timeout:g} s",
                        _evidence(buf),
                        now - start,
                    )
                continue
            if not chunk:
                self._eof = True
                continue
            # Fast path: exactly one complete line arrived on its own.
            if not buf and not self._skipping and chunk.find(b"\n") == len(chunk) - 1:
                if len(chunk) - 1 > self.max_line:
                    raise self._too_long(chunk, start)
                msg = self._parse(chunk[:-1], start)
                if msg is not None:
                    return msg
                continue
            buf += chunk

    # ------------------------------------------------------------------ close

    async def close(self, grace: float = 0.5) -> None:
        """Stop the bot and everything in its process group.

        Closes stdin, waits up to ``grace`` seconds for a voluntary exit, then
        SIGTERMs and finally SIGKILLs the process group; members that outlive
        the leader are killed as well, and the leader is reaped.  Idempotent;
        never raises (a cancellation of the caller is re-raised after the
        synchronous part of the cleanup has been done).
        """
        if not self._started or self._closed:
            return
        if self._closing:
            # Another close() is in progress: wait for it.
            if self._close_done is not None and not self._close_done.done():
                with contextlib.suppress(BaseException):
                    await asyncio.shield(self._close_done)
            return
        self._closing = True
        self._close_done = self._loop.create_future()
        # Wake up anyone blocked in send/receive: they report EXIT.
        for waiter in (self._read_waiter, self._write_waiter):
            if waiter is not None and not waiter.done():
                waiter.set_result(_EXITED)
        try:
            self._close_stdin()
            if not await self._wait_exit(grace):
                kill_process_group_now(self._pid, signal.SIGTERM)
                if not await self._wait_exit(self.term_wait):
                    kill_process_group_now(self._pid, signal.SIGKILL)
                    await self._wait_exit(self.kill_wait)
            self._kill_and_reap()
            # Signals are delivered asynchronously: wait (bounded) until the
            # members that outlived the leader are really gone.
            deadline = self._loop.time() + self.group_wait
            while _group_has_live_members(self._pid) and self._loop.time() < deadline:
                await asyncio.sleep(0.005)
                kill_process_group_now(self._pid, signal.SIGKILL)
        except asyncio.CancelledError:
            self._finish()
            raise
        except Exception:
            pass
        finally:
            self._finish()

    def kill(self) -> None:
        """Synchronous emergency stop: SIGKILL the group and release fds."""
        if not self._started or self._closed:
            return
        self._closing = True
        self._finish()

    def _close_stdin(self) -> None:
        if self._stdin_fd >= 0:
            fd = self._stdin_fd
            self._stdin_fd = -1
            with contextlib.suppress(Exception):
                self._loop.remove_writer(fd)
            with contextlib.suppress(OSError):
                self._popen.stdin.close()

    def _kill_and_reap(self) -> None:
        """SIGKILL the whole group, then reap the leader (synchronously)."""
        if self._reaped:
            return
        # Kill the whole group, including children that outlived the leader.
        # The leader is not reaped yet, so its pid (== pgid) cannot have been
        # reused and signalling the group is safe.
        kill_process_group_now(self._pid, signal.SIGKILL)
        if not self._exited and not self._check_exit():
            # Only reached when close() was cancelled, on kill(), or when the
            # process is stuck: SIGKILL has been sent, give it a moment.
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline and not self._check_exit():
                time.sleep(0.002)
        if self._exited:
            try:
                self._popen.wait(timeout=0.5)
                self._reaped = True
            except Exception:
                pass
            if self._returncode is None and self._popen.returncode is not None:
                self._returncode = self._popen.returncode

    def _finish(self) -> None:
        if self._closed:
            return
        self._closed = True
        pid = self._pid
        try:
            with contextlib.suppress(Exception):
                self._kill_and_reap()
        finally:
            _LIVE_GROUPS.discard(pid)
            self._release_fds()
            if self._sandbox_cleanup is not None:  # sandbox hook: end what is left, remove its folder
                cleanup, self._sandbox_cleanup = self._sandbox_cleanup, None
                with contextlib.suppress(Exception):
                    cleanup()
            fut = self._close_done
            if fut is not None and not fut.done():
                fut.set_result(None)

    def _release_fds(self) -> None:
        loop = self._loop
        self._close_stdin()
        if self._stdout_fd >= 0:
            fd = self._stdout_fd
            self._stdout_fd = -1
            self._stdout_watched = False
            with contextlib.suppress(Exception):
                loop.remove_reader(fd)
            with contextlib.suppress(OSError):
                self._popen.stdout.close()
        with contextlib.suppress(Exception):
            self._pump_stderr()
        try:
            if self._stderr_fd >= 0:
                self._stop_stderr()
        except Exception:
            pass
        self._close_stderr_file()
        if self._pidfd >= 0:
            with contextlib.suppress(Exception):
                loop.remove_reader(self._pidfd)
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = -1
        self._buf = bytearray()
        self._scan = 0
        fut = self._exit_future
        if fut is not None and not fut.done():
            fut.cancel()
