"""Process groups of bot programs: each bot runs in a session and group of its own,
whose id is the bot's pid; ending a bot ends its whole group.  The groups not yet
closed are remembered, so that a referee about to exit can kill every one of them.
And what /proc says of one process: its children, its state.
"""

from __future__ import annotations

import atexit
import os
import signal


LIVE_GROUPS: set[int] = set()


def kill_process_group_now(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Send ``sig`` to process group ``pgid``; False if the group is gone."""
    if pgid <= 1:
        return False
    try:
        os.killpg(pgid, sig)
    except OSError:
        return False
    return True


def kill_all_bots() -> None:
    """SIGKILL the group of every bot this process started and has not closed
    (a last resort for a process that is about to exit)."""
    for pgid in list(LIVE_GROUPS):
        kill_process_group_now(pgid)
    LIVE_GROUPS.clear()


atexit.register(kill_all_bots)


def group_has_live_members(pgid: int) -> bool:
    """Whether group ``pgid`` still has a member that is not a zombie (``killpg(pgid, 0)``
    alone counts zombies, which linger where no init process reaps orphans)."""
    if not kill_process_group_now(pgid, 0):
        return False
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    data = f.read()
            except OSError:
                continue
            fields = data[data.rfind(b")") + 2:].split()
            if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                return True
    return False


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux /proc; empty elsewhere)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(x) for x in f.read().split()]
        except OSError:
            continue
    return found


def process_state(pid: int) -> str | None:
    """The state letter of /proc/PID/stat (R running, S sleeping, T stopped, t traced, ...), None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rindex(b")") + 2:data.rindex(b")") + 3].decode()
