"""Only the bot on move runs (issue 32): every other sandboxed bot process is frozen.

Two bots of one author at one table can signal each other through what the machine
shares: one spins while the other measures the CPU counters of ``/proc/stat`` or its
own speed.  Such a channel needs both to run at once.  Here a bot runs only while the
referee waits for it (its request, its hello, what it must read before it ends): as
soon as it has answered it is frozen, and the referee lets the next bot run only once
the kernel says the one before is frozen.  So no two bots of a table ever run at the
same time, and a bot never runs while another thinks (at a real table a player may
think on the others' time; a bot here may not).  Bots run without the sandbox
(``--sandbox none``: trusted, sharing every file anyway) are not frozen.

How a bot is held, the first that works here (the log header's ``sandbox_limits_by.waiting``):

* **cgroup v2 freezer** (``cgroup.freeze``, done when ``cgroup.events`` says ``frozen 1``):
  any writable cgroup2 hierarchy, with or without controllers;
* **cgroup v1 freezer** (``freezer.state``: ``FROZEN``, done when it reads ``FROZEN`` rather
  than ``FREEZING``): a frozen v1 task dies only once thawed, so every kill path here
  thaws after killing (:meth:`Freezer.release`, :func:`thaw_folder` for cgroups a killed
  referee left behind);
* **SIGSTOP** where no freezer cgroup is writable: every process of the bot (those of its
  other cgroups where it has any, else its process tree from its main process) gets
  SIGSTOP, and it counts as frozen once every one of them is stopped and no new one has
  appeared (re-checked until the set is stable); SIGCONT thaws.  Processes are signalled
  through pidfds, so a pid reused by another program is never hit.

The freezer cgroup holds the bot's own processes only: its first process joins it from
inside the sandbox (referee/seats/sandbox.py), so bubblewrap's two stay out and a freeze
or a thaw wakes the bot's processes alone.  Freezing is asynchronous in the kernel:
:meth:`Freezer.freeze` starts it right after an answer and returns; :func:`settle`,
called before any bot runs to be asked, waits until every bot being frozen is
(:data:`SETTLE_S` at most, then it goes on and looks again at the next turn).  A frozen
bot's time is not its own: the time limit of a request starts once the bot was thawed.

**Why v2 before v1, and the cost.**  A v2 task that is frozen still dies of SIGKILL, so
a referee killed outright (kill -9) leaves no frozen bot behind (a v1 one stays frozen,
holding its memory, until the next referee sweeps its cgroup).  Per decision the
referee writes twice (freeze, thaw) and reads once; each write wakes the bot's task,
which on a virtual machine is an inter-processor interrupt: ``marias bench referee``
(trivial bots, a 2-CPU virtual machine, 8 runs each alternated with the referee before
issue 32) measured the referee's own CPU per decision at 67.3 us (median 76.2) against
46.0 us (median 50.8) before, and its wall time per decision at 127 us against 71 us;
with v1 67.0 us (3 runs).  A bot that thinks for milliseconds does not notice either.

``MARIAS_FREEZER`` (for tests only) forces a way: ``v2``, ``v1``, ``sigstop``, or ``off``
(bots are never frozen, as before issue 32).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading
import time
from typing import Callable

from .groups import children, process_state

__all__ = ["Freezer", "settle", "forced", "FREEZER_VARIABLE", "SETTLE_S", "thaw_folder", "describe"]

#: The environment variable that forces a way of freezing (tests only): v2, v1, sigstop or off.
FREEZER_VARIABLE = "MARIAS_FREEZER"
FORCED = ("v2", "v1", "sigstop", "off")
#: The longest the referee waits for the bots being frozen before it asks the next one (s).
SETTLE_S = 0.5

_LOCK = threading.Lock()
_PENDING: set["Freezer"] = set()  # freezing started, not yet seen complete
_LIVE: set["Freezer"] = set()  # not released: thawed and killed if the referee exits with them


def forced() -> str | None:
    """The way ``MARIAS_FREEZER`` forces, or None (a wrong value is an error, not ignored)."""
    value = os.environ.get(FREEZER_VARIABLE, "").strip().lower()
    if not value:
        return None
    if value not in FORCED:
        raise ValueError(f"{FREEZER_VARIABLE} must be one of {', '.join(FORCED)}, got {value!r}")
    return value


def describe(how: str) -> str:
    """What the log header says for a way of freezing."""
    return {"cgroup v2": "frozen (cgroup v2 freezer)", "cgroup v1": "frozen (cgroup v1 freezer)",
            "SIGSTOP": "stopped (SIGSTOP to each of its processes; no writable freezer cgroup)",
            "off": f"not frozen ({FREEZER_VARIABLE}=off)",
            "none": "not frozen (no sandbox)"}[how]


class Freezer:
    """Holds one bot process while it waits: :meth:`freeze` after it answered, :meth:`thaw`
    before it is asked, :meth:`release` when it is to end (thawed for good)."""

    def __init__(self, how: str, folder: str | None = None, members: Callable[[], set[int]] | None = None):
        self.how = how
        self.frozen = False  # freezing was started (and not undone)
        self.released = False
        self._root: int | None = None  # the bot's main process (SIGSTOP without a cgroup: its tree)
        self._members = members
        self._fds: list[int] = []
        self._pidfds: dict[int, int] = {}
        if how in ("cgroup v1", "cgroup v2"):
            if how == "cgroup v1":
                state = os.open(os.path.join(folder, "freezer.state"), os.O_RDWR | os.O_CLOEXEC)
                self._fds = [state, state]
                self._on, self._off, self._done = b"FROZEN", b"THAWED", b"FROZEN"
            else:
                self._fds = [os.open(os.path.join(folder, "cgroup.freeze"), os.O_WRONLY | os.O_CLOEXEC),
                             os.open(os.path.join(folder, "cgroup.events"), os.O_RDONLY | os.O_CLOEXEC)]
                self._on, self._off, self._done = b"1", b"0", b"frozen 1"
        with _LOCK:
            _LIVE.add(self)

    def started(self, pid: int) -> None:
        """The bot's main process (for SIGSTOP without a cgroup: the root of the tree it holds)."""
        self._root = pid

    # ------------------------------------------------------------ the turns
    def freeze(self) -> None:
        """Start freezing the bot (asynchronous: :func:`settle` waits for it to be done)."""
        if self.released or self.frozen or self.how in ("off", "none"):
            return
        self.frozen = True
        if self._fds:
            with contextlib.suppress(OSError):
                os.pwrite(self._fds[0], self._on, 0)
        else:
            self._signal_all(signal.SIGSTOP)
        with _LOCK:
            _PENDING.add(self)

    def thaw(self) -> None:
        """The bot is to be asked: once every other bot being frozen is (:func:`settle`), it runs."""
        if self.released or self.how in ("off", "none"):
            return
        with _LOCK:
            _PENDING.discard(self)  # asked again at once: nothing to wait for
        settle()
        if self.frozen:
            self._unfreeze()

    def release(self) -> None:
        """The bot is to end (bye, or killed): thawed now and never frozen again.  On cgroup v1 a
        frozen process dies only once thawed, so a kill path calls this after SIGKILL."""
        if self.released:
            return
        self.released = True
        with _LOCK:
            _PENDING.discard(self)
            _LIVE.discard(self)
        if self.frozen:
            self._unfreeze()
        for fd in set(self._fds) | set(self._pidfds.values()):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds, self._pidfds = [], {}

    def _unfreeze(self) -> None:
        self.frozen = False
        if self._fds:
            with contextlib.suppress(OSError):
                os.pwrite(self._fds[0], self._off, 0)
        else:
            self._signal_all(signal.SIGCONT)

    def done(self) -> bool:
        """Whether the kernel says the bot is frozen now (SIGSTOP: each of its processes
        stopped; one not stopped yet, or new, is sent SIGSTOP (again) and it is not done)."""
        if not self.frozen or self.released:
            return True
        if self._fds:
            try:
                return os.pread(self._fds[1], 64, 0).find(self._done) >= 0
            except OSError:
                return True  # the cgroup is gone: nothing left in it runs
        done = True
        for pid in self.pids():
            if process_state(pid) not in ("T", "t", "Z", "X", None) and self._send(pid, signal.SIGSTOP):
                done = False
        return done

    # ------------------------------------------------------------ SIGSTOP
    def pids(self) -> set[int]:
        """The bot's processes: those of its cgroups, else its tree."""
        if self._members is not None:
            found = self._members()
            if found or self._root is None:
                return found
        if self._root is None:
            return set()
        out, todo = set(), [self._root]
        while todo:
            p = todo.pop()
            if p not in out:
                out.add(p)
                todo += children(p)
        return out

    def _signal_all(self, sig: int) -> None:
        for pid in self.pids():
            self._send(pid, sig)

    def _send(self, pid: int, sig: int) -> bool:
        """Signal ``pid`` through a pidfd (opened the first time it is seen); False if it is gone
        or not ours to signal (a setuid bwrap's own process)."""
        fd = self._pidfds.get(pid)
        try:
            if fd is None and hasattr(os, "pidfd_open"):
                fd = self._pidfds[pid] = os.pidfd_open(pid)
            if fd is None:
                os.kill(pid, sig)
            else:
                signal.pidfd_send_signal(fd, sig)
            return True
        except OSError:
            if fd is not None:
                self._pidfds.pop(pid, None)
                with contextlib.suppress(OSError):
                    os.close(fd)
            return False


def settle(timeout: float = SETTLE_S) -> bool:
    """Wait until every bot being frozen is frozen, at most ``timeout`` seconds: True if all are
    (those that are not are looked at again at the next call).  Usually they are at the first
    look (freezing started when each answered, and the referee has done its own work since);
    else they are looked at again after growing pauses (50 us, doubling up to 1 ms).  Not a
    ``poll`` on ``cgroup.events``: the kernel tells of its changes at most every 10 ms."""
    if not _PENDING:
        return True
    deadline, pause = None, 0.00005
    while True:
        with _LOCK:
            pending = list(_PENDING)
        left = False
        for f in pending:
            if f.done():
                with _LOCK:
                    _PENDING.discard(f)
            else:
                left = True
        if not left:
            return True
        now = time.monotonic()
        if deadline is None:
            deadline = now + timeout
        elif now > deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.001)


def thaw_folder(folder: str) -> None:
    """Thaw a freezer cgroup (v1 or v2) that a referee left behind: its killed processes then end."""
    for name, value in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
        with contextlib.suppress(OSError), open(os.path.join(folder, name), "w") as f:
            f.write(value)


@atexit.register
def _end_all() -> None:
    """A referee that exits with bots still held: kill each one's processes, then thaw them (so
    that a frozen v1 process dies at all)."""
    with _LOCK:
        live = list(_LIVE)
    for f in live:
        for pid in f.pids():
            f._send(pid, signal.SIGKILL)
        f.release()
