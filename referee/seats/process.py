"""Bot process layer: start a bot program and exchange JSON lines with it.

This module knows nothing about the card game.  A :class:`BotProcess` starts a
program from an argv list (never through a shell) in its own session and
process group, writes JSON lines to its stdin, reads one bounded JSON line at a
time from its stdout, copies its stderr to a capped file and, on
:meth:`BotProcess.close`, ends every process of its group.

Plain synchronous code: every wait is one ``epoll`` wait (``poll()`` where there is
no epoll) through a :class:`Poller` that several bots may share.  While the referee
waits for the bot on move, the same wait drains every bot's stderr and notices any
bot's exit (a pidfd per bot, readable once its main process has exited), with the
time limit as its timeout.  The main process is not reaped before :meth:`BotProcess.close`, so its
pid -- which is also the process group id -- cannot be reused meanwhile and
signalling the group stays safe after the leader has exited.

A bot runs only while the referee awaits something of it (a request's answer, a line it
reads with :meth:`BotProcess.receive`, room in its full stdin pipe); otherwise it is frozen
(:mod:`referee.seats.freezer`), and :meth:`BotProcess.release` lets it run to its end.

Beside it: :mod:`referee.seats.streams` (stdout cut into bounded lines, stderr copied to a
capped file), :mod:`referee.seats.groups` (process groups, ended together), :mod:`referee.seats.faults`
(what a bot did wrong), :mod:`referee.seats.sandbox` (what a bot may see and use).
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Callable

from protocol.messages import MessageError, decode_line, encode_line

from .faults import BotFault, FaultKind, describe_returncode, evidence, tail_evidence
from .freezer import settle
from .groups import LIVE_GROUPS, group_has_live_members, kill_process_group_now
from .sandbox import SandboxConfig, SandboxUnavailable, launch
from .streams import LineBuffer, LineTooLong, StderrCopy

__all__ = ["FaultKind", "BotFault", "BotCommand", "BotProcess", "Poller", "encode_line"]

_CHUNK = 65536
_IN, _OUT = select.POLLIN, select.POLLOUT

#: Set to False (e.g. by tests) to notice exits by polling ``waitid`` every few ms instead of a pidfd.
_USE_PIDFD = hasattr(os, "pidfd_open")
_EXIT_TICK = 0.02  # seconds between exit checks without a pidfd


@dataclass
class BotCommand:
    """How to start a bot. ``env``: the variables the bot declares; with a ``sandbox`` they are its whole
    environment with :func:`referee.seats.sandbox.bot_environment`, without one they are added to ``os.environ``."""

    argv: list[str]
    cwd: str | None = None
    env: dict[str, str] | None = None
    sandbox: "SandboxConfig | None" = None  # None: started as it is (no isolation, no limits)


class Poller:
    """One wait over the descriptors of several bots: ``epoll`` (its set is kept in the
    kernel, so a wait costs the same however many bots and streams are watched), else
    ``poll()``.  Each watched descriptor has a handler, called with the events when it is ready."""

    def __init__(self) -> None:
        self._epoll = select.epoll() if hasattr(select, "epoll") else None
        self._poll = select.poll() if self._epoll is None else None
        self._handlers: dict[int, Callable[[int], None]] = {}

    def watch(self, fd: int, handler: Callable[[int], None], events: int = _IN) -> None:
        if self._epoll is None:
            self._poll.register(fd, events)  # registering again modifies
        else:
            try:
                self._epoll.register(fd, events)
            except FileExistsError:
                self._epoll.modify(fd, events)
        self._handlers[fd] = handler

    def unwatch(self, fd: int) -> None:
        if self._handlers.pop(fd, None) is not None:
            with contextlib.suppress(OSError):  # epoll forgets a closed descriptor by itself
                (self._epoll if self._epoll is not None else self._poll).unregister(fd)

    def wait(self, timeout: float | None) -> None:
        """Wait up to ``timeout`` seconds (None: no limit) and run the handler of every ready descriptor."""
        if self._epoll is not None:  # seconds, rounded up to whole milliseconds
            ready = self._epoll.poll(-1 if timeout is None else max(0.0, timeout))
        else:
            ready = self._poll.poll(None if timeout is None else max(0, math.ceil(timeout * 1000)))
        for fd, events in ready:
            handler = self._handlers.get(fd)
            if handler is not None:
                handler(events)

    def close(self) -> None:
        if self._epoll is not None:
            self._epoll.close()


#: CPU seconds of the bot processes this process started and ended (their whole trees, read from
#: /proc just before each is ended: a sandboxed bot's CPU in its pid namespace never reaches our
#: rusage), and of them, what was spent before the bot answered hello.  For ``marias bench``.
BOT_CPU = {"total": 0.0, "start": 0.0, "processes": 0}
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _tree_sum(pid: int, read: Callable[[int], int]) -> int:
    """``read(p)`` summed over ``pid`` and every live descendant (found through /proc's ``children``
    lists); a process that cannot be read (it ended) counts nothing, nor do its descendants."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            total += read(p)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", "rb") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, IndexError, ValueError):
            continue
    return total


def _cpu_ticks(p: int) -> int:
    with open(f"/proc/{p}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return sum(int(x) for x in fields[11:15])  # utime, stime, and of its reaped children cutime, cstime


def _rss_pages(p: int) -> int:
    with open(f"/proc/{p}/statm", "rb") as f:
        return int(f.read().split()[1])


def tree_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) of ``pid`` and every live descendant, with what their children that
    ended (and were waited for) used, from /proc (0 if unreadable)."""
    return _tree_sum(pid, _cpu_ticks) / _TICK if pid else 0.0


def tree_rss_mb(pid: int | None) -> float:
    """Resident memory (MB) of ``pid`` and every live descendant, from /proc (0 if unreadable)."""
    if not pid or pid < 0:
        return 0.0
    pages = _tree_sum(pid, _rss_pages)
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class BotProcess:
    """One bot program, spoken to with one JSON object per line.

    ``poller``: shared with the other bots of a match, so that a wait for this bot
    also drains their stderr and notices their exit.
    """

    #: After stdout reached EOF, how long to wait for the exit before calling it CLOSED.
    eof_exit_wait = 0.1
    #: Wait after SIGTERM before SIGKILL in :meth:`close`.
    term_wait = 0.2
    #: Wait after SIGKILL in :meth:`close`.
    kill_wait = 2.0
    #: How long :meth:`close` waits for killed group members to disappear.
    group_wait = 1.0

    def __init__(self, command: BotCommand, *, name: str = "bot", stderr_path: str | os.PathLike | None = None,
                 stderr_cap: int = 1_000_000, max_line: int = 1_000_000,
                 transcript: Callable[[str, str], None] | None = None, write_timeout: float | None = 10.0,
                 poller: Poller | None = None) -> None:
        self.command = command
        self.name = name
        self.stderr_path = stderr_path
        self.stderr_cap = stderr_cap
        self.max_line = max(1, int(max_line))
        self.transcript = transcript
        self.write_timeout = write_timeout
        self._own_poller = poller is None  # closed with this bot, else by whoever shares it
        self.poller = poller or Poller()
        self._popen: subprocess.Popen | None = None
        self._sandbox_cleanup: Callable[[], None] | None = None  # what launch() left to undo
        self._turn: Callable[[bool], None] | None = None  # asked / waiting: thawed / frozen (referee/seats/freezer.py)
        self._release: Callable[[], None] | None = None  # to end: thawed for good
        self._thawed = True  # it runs (from its start until it has answered its first request)
        self._asked = False  # a request is in progress (it stays thawed until its answer)
        self._pid = self._stdin = self._stdout = self._stderr = self._pidfd = -1
        self._closed = False
        self._fd_ready = False  # set by the poller when the descriptor being waited for is ready
        self._awaiting = False  # waiting for this bot's answer (else its output is out of turn)
        self._stdout_watched = False
        # stdout
        self._lines = LineBuffer(self.max_line)
        self._eof = False
        # exit of the main process (noticed, not reaped until close)
        self._exited = False
        self._returncode: int | None = None
        self._stderr_copy = StderrCopy(None, 0)

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
        if self._popen is not None and not self._exited:
            self._check_exit()
        return self._returncode

    @property
    def alive(self) -> bool:
        return self._popen is not None and not self._closed and not self._exited and not self._check_exit()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def stderr_tail(self) -> str:
        """The last few KiB the bot wrote to stderr (decoded leniently)."""
        return bytes(self._stderr_copy.tail).decode("utf-8", "replace")

    def __repr__(self) -> str:
        state = "new" if self._popen is None else "closed" if self._closed else "running"
        return f"<BotProcess {self.name!r} pid={self.pid} {state}>"

    def __enter__(self) -> "BotProcess":
        if self._popen is None:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----------------------------------------------------------------- start

    def start(self) -> None:
        """Start the program; a :class:`BotFault` of kind START if it cannot be started."""
        if self._popen is not None:
            raise RuntimeError("BotProcess.start() called twice")
        argv = [os.fspath(a) for a in self.command.argv]
        if not argv:
            raise BotFault(FaultKind.START, f"{self.name}: empty command line")
        env = dict(self.command.env) if self.command.env else None  # what the bot declares (YAML env:)
        self._stderr_copy = StderrCopy(self.stderr_path, self.stderr_cap)
        try:
            popen = self._spawn(argv, self.command.cwd, env)
        except (OSError, ValueError, SandboxUnavailable) as exc:
            self._stderr_copy.close()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            where = f" (cwd {self.command.cwd!r})" if self.command.cwd else ""
            raise BotFault(FaultKind.START, f"{self.name}: cannot start {argv[0]!r}{where}: {reason}") from exc
        self._popen, self._pid = popen, popen.pid
        LIVE_GROUPS.add(self._pid)
        self._stdin, self._stdout, self._stderr = popen.stdin.fileno(), popen.stdout.fileno(), popen.stderr.fileno()
        for fd in (self._stdin, self._stdout, self._stderr):
            os.set_blocking(fd, False)
        self.poller.watch(self._stderr, self._on_stderr)
        self._watch_stdout(True)
        if _USE_PIDFD:
            with contextlib.suppress(OSError):
                self._pidfd = os.pidfd_open(self._pid)
                self.poller.watch(self._pidfd, self._on_exit)

    def _spawn(self, argv: list[str], cwd: str | None, env: dict[str, str] | None) -> subprocess.Popen:
        """The one place a bot program is started: in a session (and process group) of its own,
        inside its sandbox when the command has one (:func:`referee.seats.sandbox.launch` decides what runs)."""
        if self.command.sandbox is None:  # no sandbox layer at all (tests of this module): the referee's environment
            return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    cwd=cwd, env={**os.environ, **env} if env else None, start_new_session=True,
                                    close_fds=True, bufsize=0)
        spawn = launch(argv, cwd, env, self.command.sandbox)
        try:
            popen = subprocess.Popen(spawn.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=spawn.cwd, env=spawn.env, preexec_fn=spawn.preexec_fn, pass_fds=spawn.pass_fds,
                                     start_new_session=True, close_fds=True, bufsize=0)
        except BaseException:
            spawn.cleanup()
            raise
        self._sandbox_cleanup = spawn.cleanup
        self._turn, self._release = spawn.turn, spawn.release
        if spawn.started is not None:
            spawn.started(popen.pid)
        return popen

    # ------------------------------------------------------------ waiting

    def _set_ready(self, _events: int) -> None:
        self._fd_ready = True

    def _on_stdout(self, _events: int) -> None:
        """stdout is readable: take what it holds.  Out of turn (not while this bot's answer
        is awaited) one chunk is held, the evidence for its next request, and stdout is not
        watched again until then, so a bot writing out of turn cannot keep the poll busy.
        Watching every bot's stdout in the shared poll is what notices output nobody asked for."""
        chunk = self._read_chunk()
        if chunk:
            self._lines.feed(chunk)
        elif chunk == b"":
            self._eof = True
        self._fd_ready = True
        if not self._awaiting or self._eof:
            self._watch_stdout(False)

    def _watch_stdout(self, on: bool) -> None:
        if on and (self._stdout < 0 or self._eof):
            return
        if on != self._stdout_watched:
            if on:
                self.poller.watch(self._stdout, self._on_stdout)
            else:
                self.poller.unwatch(self._stdout)
            self._stdout_watched = on

    def _wait_for(self, fd: int | None, events: int, deadline: float | None) -> bool:
        """Poll until ``fd`` is ready (True), or the main process has exited or ``deadline``
        has passed (False); meanwhile the poller serves every bot's stderr and exit.
        ``fd`` None: until this bot's stdout gave something (:meth:`_on_stdout` reads it)."""
        self._fd_ready = False
        if fd is None:
            self._awaiting = True
            if not self._stdout_watched:
                self._watch_stdout(True)
        else:
            self.poller.watch(fd, self._set_ready, events)
        try:
            while not self._exited:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                if self._pidfd < 0:
                    if self._check_exit():
                        break
                    left = _EXIT_TICK if left is None else min(left, _EXIT_TICK)
                self.poller.wait(left)
                if self._fd_ready:
                    return True
            return False
        finally:
            if fd is None:
                self._awaiting = False
            else:
                self.poller.unwatch(fd)

    def _wait_exit(self, timeout: float) -> bool:
        """Whether the main process exits within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not (self._exited or self._check_exit()):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.poller.wait(left if self._pidfd >= 0 else min(left, 0.005))
        return True

    def _on_exit(self, _events: int) -> None:
        """The pidfd is readable: the main process has exited."""
        self._drop_pidfd()
        if not self._check_exit():
            self._mark_exited(None)  # gone, though waitid could not say how

    def _check_exit(self) -> bool:
        """Whether the main process has exited (noticed without reaping it)."""
        if self._exited:
            return True
        if self._pid <= 0:
            return False
        try:
            res = os.waitid(os.P_PID, self._pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped already: the status is Popen's, if anyone's
            self._mark_exited(self._popen.returncode if self._popen else None)
            return True
        except OSError:
            return False
        if res is None:
            return False
        if res.si_code == os.CLD_EXITED:
            self._mark_exited(res.si_status)
        elif res.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
            self._mark_exited(-res.si_status)
        else:
            return False
        return True

    def _mark_exited(self, rc: int | None) -> None:
        if not self._exited:
            self._exited, self._returncode = True, rc
            self._drop_pidfd()

    def _drop_pidfd(self) -> None:
        if self._pidfd >= 0:
            self.poller.unwatch(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = -1

    # ----------------------------------------------------------------- stderr

    def _on_stderr(self, _events: int) -> None:
        self._pump_stderr(1)

    def _pump_stderr(self, max_chunks: int = 64) -> None:
        """Copy whatever stderr output is there now (at most ``max_chunks`` reads)."""
        for _ in range(max_chunks):
            if self._stderr < 0:
                return
            try:
                chunk = os.read(self._stderr, _CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._stop_stderr()
                return
            self._stderr_copy.write(chunk)

    def _stop_stderr(self) -> None:
        if self._stderr >= 0:
            self.poller.unwatch(self._stderr)
            self._stderr = -1
            with contextlib.suppress(OSError):
                self._popen.stderr.close()
        self._stderr_copy.close()

    # ------------------------------------------------------------------ faults

    def _usable(self) -> None:
        if self._popen is None:
            raise RuntimeError("BotProcess used before start()")
        if self._closed:
            raise BotFault(FaultKind.EXIT, f"{self.name}: bot process was closed ({describe_returncode(self._returncode)})")

    def _exit_fault(self, elapsed: float) -> BotFault:
        self._pump_stderr()
        held = self._lines.data
        shown = evidence(held) if held else tail_evidence(self._stderr_copy.tail)
        return BotFault(FaultKind.EXIT, f"{self.name}: {describe_returncode(self._returncode)}", shown, elapsed)

    def _eof_fault(self, start: float) -> BotFault:
        if self._wait_exit(self.eof_exit_wait):
            return self._exit_fault(time.monotonic() - start)
        return BotFault(FaultKind.CLOSED, f"{self.name}: bot closed its standard output but is still running",
                        evidence(self._lines.data), time.monotonic() - start)

    def _broken_pipe_fault(self) -> BotFault:
        if self._wait_exit(self.eof_exit_wait):
            return self._exit_fault(0.0)
        return BotFault(FaultKind.EXIT, f"{self.name}: bot closed its standard input (broken pipe)",
                        tail_evidence(self._stderr_copy.tail))

    # ------------------------------------------------------------------- send

    def send(self, message: dict, timeout: float | None = None) -> None:
        """Write ``message`` as one JSON line.  ``timeout`` bounds the wait for room in the
        pipe (a bot that does not read); None means ``write_timeout`` (None: no limit)."""
        self.send_lines([encode_line(message)], timeout)

    def send_lines(self, lines: list[str], timeout: float | None = None) -> None:
        """Write lines encoded already (:func:`encode_line`, no newline) with one ``os.write``
        (more only when the pipe is full)."""
        self._usable()
        self._write_lines(lines, timeout)

    def _write_lines(self, lines: list[str], timeout: float | None = None) -> None:
        if self.transcript is not None:
            for line in lines:
                self.transcript("send", line)
        if self._exited:
            raise self._exit_fault(0.0)
        data = ("\n".join(lines) + "\n").encode("utf-8")
        try:
            n = os.write(self._stdin, data)
        except BlockingIOError:
            n = 0
        except OSError:
            raise self._broken_pipe_fault() from None
        if n < len(data):
            self._write_rest(memoryview(data)[n:], self.write_timeout if timeout is None else timeout)

    def _write_rest(self, data: memoryview, timeout: float | None) -> None:
        """The pipe is full (the bot is not reading): write the rest as room appears, within ``timeout``.
        A bot that waits for its turn runs meanwhile (it cannot read frozen); no other bot runs then."""
        was = self._thawed
        self._thaw()
        try:
            self._write_waiting(data, timeout)
        finally:
            if not was and not self._asked:
                self._freeze()

    def _write_waiting(self, data: memoryview, timeout: float | None) -> None:
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        while data:
            if not self._wait_for(self._stdin, _OUT, deadline):
                if self._exited:
                    raise self._exit_fault(time.monotonic() - start)
                raise BotFault(FaultKind.TIMEOUT, f"{self.name}: bot did not read its input within {timeout:g} s",
                               "", time.monotonic() - start)
            try:
                data = data[os.write(self._stdin, data):]
            except BlockingIOError:
                pass
            except OSError:
                raise self._broken_pipe_fault() from None

    # ---------------------------------------------------------------- receive

    def receive(self, timeout: float | None) -> dict:
        """Read one line and return it parsed as a JSON object (the bot runs meanwhile)."""
        self._usable()
        was = self._thawed
        self._thaw()
        try:
            return self._read_message(time.monotonic(), timeout)
        finally:
            if not was:
                self._freeze()

    def _thaw(self) -> None:
        """Let the bot run, once every bot being frozen is (referee/seats/freezer.py); one that runs
        already (it has just started) goes on only once they are too."""
        if self._turn is None:
            return
        if self._thawed:
            settle()
        else:
            self._thawed = True
            self._turn(True)

    def _freeze(self) -> None:
        """Freeze the bot (it waits for its turn); asynchronous, waited for before another bot runs."""
        if self._thawed and self._turn is not None:
            self._thawed = False
            self._turn(False)

    def release(self) -> None:
        """The bot is to end (it has been told bye, or is being ended): it runs from now on, to
        read what it was sent and exit.  Idempotent; :meth:`close` and :meth:`kill` call it."""
        release, self._release, self._turn = self._release, None, None
        self._thawed = True
        if release is not None:
            with contextlib.suppress(Exception):
                release()

    def request(self, message: dict, timeout: float | None, preceding=()) -> tuple[dict, float]:
        """Send the informational ``preceding`` messages and ``message`` in one write and read the answer."""
        return self.request_lines([*map(encode_line, preceding), encode_line(message)], timeout)

    def request_lines(self, lines: list[str], timeout: float | None) -> tuple[dict, float]:
        """Write ``lines`` (encoded; the last is the request) and read the answer.  Returns
        ``(answer, elapsed)``, ``elapsed`` from just after the write to the complete answer line.
        Output seen from the bot before this request is a fault (UNEXPECTED), whatever it says:
        every bot's stdout is watched while the others are asked (:meth:`_on_stdout`)."""
        if self._closed or self._popen is None:
            self._usable()
        held = self._lines.data
        if held and held.strip():
            raise BotFault(FaultKind.UNEXPECTED, f"{self.name}: wrote a line before it was asked anything",
                           evidence(held))
        self._asked = True
        try:
            self._write_lines(lines)  # a frozen bot finds them in its pipe when it is thawed: one wake-up
            self._thaw()  # once the bot before is frozen
            start = time.monotonic()  # its time starts here: not while it waited, frozen, for its turn
            answer = self._read_message(start, timeout)
            return answer, time.monotonic() - start
        finally:
            self._asked = False
            self._freeze()

    def _read_chunk(self) -> bytes | None:
        """What stdout holds now: bytes, ``b""`` at EOF, None if nothing yet."""
        try:
            return os.read(self._stdout, _CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def _read_message(self, start: float, timeout: float | None) -> dict:
        """The next JSON line: what is buffered, else what arrives before the deadline
        (read by :meth:`_on_stdout` when the poll says stdout is readable)."""
        deadline = None if timeout is None else start + timeout
        lines = self._lines
        while True:
            if lines.data:
                try:
                    line = lines.next_line()
                except LineTooLong as exc:
                    raise BotFault(FaultKind.LINE_TOO_LONG, f"{self.name}: line longer than {self.max_line} bytes",
                                   evidence(exc.head), time.monotonic() - start) from None
                if line is not None:
                    msg = self._parse(line, start)
                    if msg is not None:
                        return msg
                    continue
            if self._eof:
                raise self._eof_fault(start)
            if self._exited:  # what it wrote before it ended, else its exit
                chunk = self._read_chunk()
                if chunk:
                    lines.feed(chunk)
                elif chunk == b"":
                    self._eof = True
                else:
                    raise self._exit_fault(time.monotonic() - start)
            elif not self._wait_for(None, _IN, deadline) and not self._exited:
                raise BotFault(FaultKind.TIMEOUT, f"{self.name}: no complete line within {timeout:g} s",
                               evidence(lines.data), time.monotonic() - start)

    def _parse(self, line: bytes, start: float) -> dict | None:
        """The JSON object on ``line`` (None for a blank line); a MALFORMED fault otherwise."""
        if line.endswith(b"\r"):
            line = line[:-1]
        if self.transcript is not None:
            self.transcript("recv", line.decode("utf-8", "replace"))
        try:
            return decode_line(line)
        except MessageError as exc:
            raise BotFault(FaultKind.MALFORMED, f"{self.name}: {exc}", evidence(line),
                           time.monotonic() - start) from None

    # ------------------------------------------------------------------ close

    def close(self, grace: float = 0.5) -> None:
        """Stop the bot and everything in its process group (idempotent, never raises).

        Closes stdin, waits up to ``grace`` seconds for the bot to exit, then SIGTERMs
        and at last SIGKILLs the group; members that outlive the leader are killed too,
        and the leader is reaped.
        """
        if self._popen is None or self._closed:
            return
        self._count_cpu()
        self.release()  # it runs to read its last lines (bye) and exit
        try:
            self._close_stdin()
            if not self._wait_exit(grace):
                kill_process_group_now(self._pid, signal.SIGTERM)
                if not self._wait_exit(self.term_wait):
                    kill_process_group_now(self._pid, signal.SIGKILL)
                    self._wait_exit(self.kill_wait)
        except Exception:  # noqa: BLE001 - the group is killed below whatever happened
            pass
        finally:
            self._finish()
        # signals are delivered asynchronously: wait (bounded) until the survivors are gone
        deadline = time.monotonic() + self.group_wait
        while group_has_live_members(self._pid) and time.monotonic() < deadline:
            kill_process_group_now(self._pid, signal.SIGKILL)
            time.sleep(0.005)

    def kill(self) -> None:
        """Stop at once: SIGKILL the group, reap the leader, release the descriptors."""
        if self._popen is not None and not self._closed:
            self._finish()

    def _close_stdin(self) -> None:
        if self._stdin >= 0:
            self._stdin = -1
            with contextlib.suppress(OSError):
                self._popen.stdin.close()

    def count_cpu(self) -> None:
        """Count the bot's CPU now (before it is told bye: once it has ended, what it used may be gone)."""
        if self._popen is not None and not self._closed:
            self._count_cpu()

    def _count_cpu(self) -> None:
        if not getattr(self, "_cpu_counted", False):
            self._cpu_counted = True
            BOT_CPU["total"] += tree_cpu(self._pid)
            BOT_CPU["processes"] += 1

    def count_start_cpu(self) -> None:
        """The bot answered hello: what it used so far is its start's."""
        BOT_CPU["start"] += tree_cpu(self._pid)

    def _finish(self) -> None:
        self._count_cpu()
        self._closed = True
        # the leader is not reaped yet, so its pid (== pgid) is still ours to signal
        kill_process_group_now(self._pid, signal.SIGKILL)
        self.release()  # killed first, then thawed: a frozen cgroup v1 process dies only once thawed
        with contextlib.suppress(Exception):
            self._popen.wait(timeout=0.5)
            if self._returncode is None:
                self._returncode = self._popen.returncode
            self._exited = True
        LIVE_GROUPS.discard(self._pid)
        self._close_stdin()
        self._watch_stdout(False)
        if self._stdout >= 0:
            self._stdout = -1
            with contextlib.suppress(OSError):
                self._popen.stdout.close()
        with contextlib.suppress(Exception):
            self._pump_stderr()
        self._stop_stderr()
        self._drop_pidfd()
        if self._own_poller:
            self.poller.close()
        self._lines = LineBuffer(self.max_line)
        if self._sandbox_cleanup is not None:  # the sandbox's leftovers (cgroup, working folder)
            cleanup, self._sandbox_cleanup = self._sandbox_cleanup, None
            with contextlib.suppress(Exception):
                cleanup()
