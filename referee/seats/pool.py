"""Worker processes that no bot can break (issue 9.4): one forked worker per job, under a watchdog.

A tournament's jobs are units (one partie each); a bot in a unit may kill its
worker, stop it with SIGSTOP, or hang it.  A pool of long-lived workers
(``ProcessPoolExecutor``) breaks for good when one worker dies, failing every
job after it.  Here every job gets a fresh worker forked for it, and the parent
watches each one:

- it **died** without a result (killed, crashed): the job failed;
- it was **stopped** (SIGSTOP, seen through ``waitpid(WUNTRACED)``): killed, failed;
- it ran past its **wall-clock limit** (``Task.wall_s``): ended (SIGTERM, then SIGKILL), failed;
- it **raised**: failed, with the exception.

A failed job is run once more (``retries``); the pool goes on with the others
either way.  After a worker is ended the bot processes it had started are ended
too (their process groups, recorded in memory shared with the parent, checked
against the process start time so that a reused pid is never hit), and their cgroups are
swept (:func:`referee.seats.resources.sweep`: a bot frozen while it waited for its turn
dies, on cgroup v1, only once thawed).

*Who is responsible.*  A worker records in that shared memory which seat it is
waiting for: every line it writes to a bot passes an ``os.write`` hook that
notes a ``hello`` (bots starting) or a ``request`` and its seat (read from the
request's ``view``), and at each ``hello`` the worker's child processes (the bots).  A worker that dies or stops while a seat is on move names
that seat's bot as the one most likely responsible.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import selectors
import signal
import struct
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from . import resources
from .groups import children, process_state as _state

PHASE_IDLE, PHASE_HELLO, PHASE_REQUEST = 0, 1, 2
_MAX_PIDS = 32
_HEAD = struct.Struct("<iii")  # phase, seat (at a hello: a bit mask of the seats it may be), number of pids
_PID = struct.Struct("<qq")  # pid, start time (clock ticks since boot)
_SIZE = _HEAD.size + _MAX_PIDS * _PID.size


@dataclass
class Task:
    key: str
    job: Any  # passed to the target in the worker (forked: need not be picklable)
    wall_s: float  # the worker is ended after this many seconds
    seats: tuple[str, ...] = ()  # the bots by seat, to name the one responsible
    argvs: tuple = ()  # their command lines by seat: which bot a hello went to (the newest child's)


@dataclass
class Outcome:
    key: str
    status: str  # ok | error | died | stopped | timeout
    result: Any = None
    why: str = ""
    culprit: str | None = None  # the bot most likely responsible (its name), if known
    attempts: int = 1
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def describe(self) -> str:
        who = f"; most likely responsible: {self.culprit}" if self.culprit else ""
        tries = f" (attempt {self.attempts})" if self.attempts > 1 else ""
        return f"{self.status}: {self.why}{who}{tries}"


# ------------------------------------------------------------------ shared state (worker -> parent)

class Shared:
    """A small anonymous shared mapping: what the worker is waiting for, and the bots it started."""

    def __init__(self):
        self.mem = mmap.mmap(-1, _SIZE)

    def set_phase(self, phase: int, seat: int = -1) -> None:
        _, _, n = _HEAD.unpack_from(self.mem, 0)
        _HEAD.pack_into(self.mem, 0, phase, seat, n)

    def add_pid(self, pid: int) -> None:
        phase, seat, n = _HEAD.unpack_from(self.mem, 0)
        known = {_PID.unpack_from(self.mem, _HEAD.size + i * _PID.size)[0] for i in range(n)}
        if pid in known:
            return
        start = _start_time(pid)
        if start is None:
            return
        slot = n if n < _MAX_PIDS else (pid % _MAX_PIDS)  # full: overwrite (old bots are long gone)
        _PID.pack_into(self.mem, _HEAD.size + slot * _PID.size, pid, start)
        _HEAD.pack_into(self.mem, 0, phase, seat, min(n + 1, _MAX_PIDS))

    def state(self) -> tuple[int, int]:
        phase, seat, _ = _HEAD.unpack_from(self.mem, 0)
        return phase, seat

    def pids(self) -> list[tuple[int, int]]:
        _, _, n = _HEAD.unpack_from(self.mem, 0)
        return [_PID.unpack_from(self.mem, _HEAD.size + i * _PID.size) for i in range(n)]

    def close(self) -> None:
        self.mem.close()


def _start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (None where there is no /proc or no such process)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return int(data[data.rindex(b")") + 2:].split()[19])


def kill_groups(pids: list[tuple[int, int]]) -> None:
    """SIGKILL the process group of each (pid, start time) still the same process (bots lead their groups)."""
    for pid, start in pids:
        if pid <= 1 or _start_time(pid) != start:
            continue
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------ the worker side

_SHARED: Shared | None = None
_ARGVS: tuple = ()
_REAL_WRITE = os.write
_REAL_WRITEV = os.writev
_REQUEST = b'{"type":"request"'
_VIEW_SEAT = b'"view":{"seat":'


def _note(fd: int, data) -> None:
    """What a line written to a bot says about the worker's next wait (see the module docstring)."""
    sh = _SHARED
    if sh is None or type(data) is not bytes:
        return
    i = data.rfind(_REQUEST)
    if i >= 0:
        j = data.find(_VIEW_SEAT, i)
        seat = data[j + len(_VIEW_SEAT)] - 48 if j >= 0 else -1
        sh.set_phase(PHASE_REQUEST, seat if 0 <= seat <= 9 else -1)
    elif b'{"type":"hello"' in data:
        kids = children(os.getpid())
        for pid in kids:
            sh.add_pid(pid)
        sh.set_phase(PHASE_HELLO, _starting_seats(fd, kids))


def _starting_seats(fd: int, kids: list[int]) -> int:
    """The seats (a bit mask) whose command line is that of the child whose stdin is ``fd``'s pipe:
    the bot being told hello."""
    if not kids or not _ARGVS:
        return 0
    try:
        pipe = f"pipe:[{os.fstat(fd).st_ino}]"
    except OSError:
        return 0
    cmd = None
    for pid in kids:
        try:
            if os.readlink(f"/proc/{pid}/fd/0") == pipe:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().split(b"\0")[:-1]
                break
        except OSError:
            continue
    if cmd is None:
        return 0
    mask = 0
    for seat, argv in enumerate(_ARGVS):
        want = [os.fsencode(a) for a in argv]
        if want and cmd[-len(want):] == want:  # a sandbox may run it behind its own argv
            mask |= 1 << seat
    return mask


def _watched_write(fd, data):
    """``os.write`` in a worker: notes the request (or hello) before it leaves."""
    _note(fd, data)
    return _REAL_WRITE(fd, data)


def _watched_writev(fd, buffers):
    """``os.writev`` in a worker: the same for the last buffer (a request is the last line written)."""
    buffers = list(buffers)
    if buffers:
        _note(fd, buffers[-1])
    return _REAL_WRITEV(fd, buffers)


_STOPPING = False
_IN_JOB = False


class Stop(SystemExit):
    """Raised in a worker by SIGTERM: the job is being ended.  A SystemExit, so that the
    referee's clean-up (closing its bots) runs while it unwinds."""


def _end_bots_now() -> None:
    if _SHARED is not None:
        for pid in children(os.getpid()):
            _SHARED.add_pid(pid)
        kill_groups(_SHARED.pids())


def _on_sigterm(signum, frame):
    global _STOPPING
    if _STOPPING or not _IN_JOB:
        _end_bots_now()
        os._exit(143)
    _STOPPING = True
    raise Stop(143)


def _watch_parent(parent_pid: int) -> None:
    """If the parent is gone (even by kill -9), stop: ask nicely, then for certain."""
    while os.getppid() == parent_pid:
        time.sleep(0.5)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
    finally:
        time.sleep(10)
        _end_bots_now()
        os._exit(143)


def _worker_main(target: Callable[[Any], Any], job: Any, wfd: int, shared: Shared, parent_pid: int,
                 close_fds: list[int], argvs: tuple = ()) -> None:
    """Run in the forked worker: never returns."""
    global _SHARED, _IN_JOB, _ARGVS
    import threading

    code = 0
    try:
        for fd in close_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)  # its own process group: a bot that signals "its" group hits no one else
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, _on_sigterm)
        with contextlib.suppress(OSError, AttributeError):
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent_pid:
            os._exit(143)
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True, name="marias-parent-watch").start()
        _SHARED = shared
        _ARGVS = tuple(argvs)
        os.write = _watched_write
        os.writev = _watched_writev
        _IN_JOB = True
        try:
            payload = ("ok", target(job))
        except Stop:
            _end_bots_now()
            os._exit(143)
        except BaseException as e:  # reported to the parent as the job's failure
            tb = traceback.format_exc(limit=6)
            payload = ("error", f"{type(e).__name__}: {e}", tb)
        finally:
            _IN_JOB = False
        data = pickle.dumps(payload)
        view = memoryview(struct.pack("<Q", len(data)) + data)
        while view:
            n = _REAL_WRITE(wfd, view)
            view = view[n:]
    except BaseException:
        code = 70
    finally:
        _end_bots_now()
        os._exit(code)


# ------------------------------------------------------------------ the parent side

@dataclass
class _Running:
    task: Task
    attempt: int
    pid: int
    rfd: int
    shared: Shared
    started: float
    buf: bytearray = field(default_factory=bytearray)
    eof: bool = False
    status: int | None = None  # waitpid status once it exited
    ended: str | None = None  # why the parent ended it: stopped | timeout | interrupted
    term_sent: float | None = None
    exited_at: float | None = None


def _culprit(r: _Running) -> str | None:
    phase, seat = r.shared.state()
    names = r.task.seats
    if phase == PHASE_REQUEST and 0 <= seat < len(names):
        return f"{names[seat]} (seat {seat}, on move)"
    if phase == PHASE_HELLO and seat > 0:
        cands = [i for i in range(len(names)) if seat >> i & 1]
        if len(cands) == 1:
            return f"{names[cands[0]]} (seat {cands[0]}, starting)"
        if cands:
            return "one of " + ", ".join(f"{names[i]} (seat {i})" for i in cands) + " (starting)"
    return None


def _exit_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"killed by {name}"
    return f"exit status {os.WEXITSTATUS(status)}"


class Pool:
    """Run tasks in forked workers, at most ``workers`` at once (see the module docstring).

    Either all at once, ``run(tasks, on_outcome)``, or step by step (a sequential test that
    decides as results come in): ``submit(task)``, then ``wait()`` for the outcomes finished
    so far, while ``busy``; ``cancel()`` drops what is queued, ``stop_all()`` ends what runs.
    A failed task is tried again (``retries`` times) before its outcome is returned;
    ``on_retry`` (if set) hears of each such failure.
    """

    poll_s = 0.2  # how often the parent looks at its workers
    term_wait_s = 5.0  # after SIGTERM, before SIGKILL

    def __init__(self, target: Callable[[Any], Any], workers: int, *, retries: int = 1,
                 close_fds: tuple[int, ...] = (), on_retry: Callable[[Outcome], None] | None = None):
        self.target = target
        self.workers = max(1, workers)
        self.retries = retries
        self.close_fds = tuple(close_fds)
        self.on_retry = on_retry
        self.running: dict[int, _Running] = {}
        self.queue: list[tuple[Task, int]] = []  # (task, attempt), next first
        self.sel = selectors.DefaultSelector()

    @property
    def busy(self) -> bool:
        return bool(self.queue or self.running)

    def submit(self, task: Task) -> None:
        self.queue.append((task, 1))

    def cancel(self) -> list[Task]:
        """Drop the queued tasks (not the running ones); returns them."""
        dropped = [t for t, _ in self.queue]
        self.queue.clear()
        return dropped

    def wait(self, timeout: float | None = None) -> list[Outcome]:
        """Start what fits, then watch the workers for up to ``timeout`` seconds (default ``poll_s``):
        the final outcomes of the tasks finished meanwhile.  KeyboardInterrupt (or any error)
        ends every worker, and its bots, before it propagates."""
        try:
            return self._step(self.poll_s if timeout is None else timeout)
        except BaseException:
            self.stop_all()
            raise

    def run(self, tasks: list[Task], on_outcome: Callable[[Outcome], None],
            on_retry: Callable[[Outcome], None] | None = None, on_tick: Callable[[], None] | None = None) -> None:
        """Run every task; ``on_outcome`` gets each final outcome."""
        if on_retry is not None:
            self.on_retry = on_retry
        for t in tasks:
            self.submit(t)
        try:
            while self.busy:
                for outcome in self.wait():
                    on_outcome(outcome)
                if on_tick is not None:
                    on_tick()
        finally:
            self.close()

    def close(self) -> None:
        self.stop_all()
        self.sel.close()

    def _step(self, timeout: float) -> list[Outcome]:
        while self.queue and len(self.running) < self.workers:
            task, attempt = self.queue.pop(0)
            r = self._start(task, attempt)
            self.sel.register(r.rfd, selectors.EVENT_READ, r)
        if self.running:
            for key, _ in self.sel.select(timeout):
                self._read(key.data)
        done = []
        now = time.monotonic()
        for r in list(self.running.values()):
            self._watch(r, now)
            if r.status is None or not r.eof:
                continue
            del self.running[r.pid]
            outcome = self._outcome(r)
            if not outcome.ok and r.attempt <= self.retries:
                if self.on_retry is not None:
                    self.on_retry(outcome)
                self.queue.insert(0, (r.task, r.attempt + 1))
            else:
                done.append(outcome)
        return done

    # ---------------------------------------------------------------- one worker

    def _start(self, task: Task, attempt: int) -> _Running:
        shared = Shared()
        rfd, wfd = os.pipe()
        others = [r.rfd for r in self.running.values() if not r.eof]  # a closed one's number may be reused
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(rfd)
            _worker_main(self.target, task.job, wfd, shared, parent, [*self.close_fds, *others], task.argvs)
        os.close(wfd)
        os.set_blocking(rfd, False)
        r = _Running(task, attempt, pid, rfd, shared, time.monotonic())
        self.running[pid] = r
        return r

    def _read(self, r: _Running) -> None:
        while True:
            try:
                chunk = os.read(r.rfd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._close_pipe(r)
                return
            r.buf += chunk

    def _watch(self, r: _Running, now: float) -> None:
        if r.status is None:
            try:
                pid, status = os.waitpid(r.pid, os.WNOHANG | os.WUNTRACED)
            except ChildProcessError:
                pid, status = r.pid, 0
            if pid == r.pid:
                if os.WIFSTOPPED(status):
                    r.ended = r.ended or "stopped"
                    self._end(r, force=True)
                else:
                    r.status = status
                    r.exited_at = now
            elif r.ended is None and _state(r.pid) in ("T", "t"):  # stopped under a tracer: no waitpid news
                r.ended = "stopped"
                self._end(r, force=True)
        if r.status is None and r.ended is None and now - r.started > r.task.wall_s:
            r.ended = "timeout"
            self._end(r)
        if r.status is None and r.term_sent is not None and now - r.term_sent > self.term_wait_s:
            self._end(r, force=True)
        if r.status is not None and not r.eof:
            self._read(r)
            # its result is written before it exits; a pipe still open a second later is held by
            # something it left behind, not by the worker: what arrived is all there is
            if not r.eof and (r.ended is not None or now - (r.exited_at or now) > 1.0):
                self._close_pipe(r)

    def _close_pipe(self, r: _Running) -> None:
        if r.eof:
            return
        r.eof = True
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(r.rfd)
        os.close(r.rfd)

    def _end(self, r: _Running, force: bool = False) -> None:
        if r.status is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            if force or r.term_sent is not None:
                os.kill(r.pid, signal.SIGKILL)
            else:
                os.kill(r.pid, signal.SIGTERM)
                os.kill(r.pid, signal.SIGCONT)
                r.term_sent = time.monotonic()
        if force:
            kill_groups(r.shared.pids())

    def _outcome(self, r: _Running) -> Outcome:
        seconds = time.monotonic() - r.started
        culprit = _culprit(r)
        kill_groups(r.shared.pids())  # whatever it started ends with it
        resources.sweep()  # and its bots' cgroups go (a frozen cgroup v1 process dies only once thawed)
        r.shared.close()
        payload = None
        if len(r.buf) >= 8:
            (n,) = struct.unpack_from("<Q", r.buf)
            if len(r.buf) >= 8 + n:
                try:
                    payload = pickle.loads(bytes(r.buf[8:8 + n]))
                except Exception:  # a worker that wrote garbage: no result
                    payload = None
        key, attempt = r.task.key, r.attempt
        if r.ended == "stopped":
            return Outcome(key, "stopped", why="its worker was stopped (SIGSTOP) and was ended", culprit=culprit,
                           attempts=attempt, seconds=seconds)
        if r.ended == "timeout":
            return Outcome(key, "timeout", why=f"it ran past its wall-clock limit of {r.task.wall_s:.0f} s and was ended",
                           culprit=culprit, attempts=attempt, seconds=seconds)
        if payload is not None and payload[0] == "ok":
            return Outcome(key, "ok", result=payload[1], attempts=attempt, seconds=seconds)
        if payload is not None and payload[0] == "error":
            return Outcome(key, "error", why=payload[1], attempts=attempt, seconds=seconds)
        return Outcome(key, "died", why=f"its worker died ({_exit_text(r.status or 0)}) before finishing",
                       culprit=culprit, attempts=attempt, seconds=seconds)

    def stop_all(self, wait_s: float = 10.0) -> None:
        """End every running worker: SIGTERM (each closes its bots), then SIGKILL; reap them."""
        for r in self.running.values():
            if r.status is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(r.pid, signal.SIGTERM)
                    os.kill(r.pid, signal.SIGCONT)
        deadline = time.monotonic() + wait_s
        for r in list(self.running.values()):
            while r.status is None:
                try:
                    pid, status = os.waitpid(r.pid, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == r.pid:
                    r.status = status
                    break
                if time.monotonic() > deadline:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(r.pid, signal.SIGKILL)
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(r.pid, 0)
                    break
                time.sleep(0.05)
            kill_groups(r.shared.pids())
            self._close_pipe(r)
        if self.running:
            resources.sweep()
        self.running.clear()

