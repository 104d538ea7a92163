"""Killing a Dask worker while it plays (the tournament's and the ladder's cluster tests)."""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager
from typing import Callable


@contextmanager
def a_busy_worker_killed(client, ready: Callable[[], bool]):
    """While the body runs (the runner in the main thread: it handles signals), a thread watches and,
    once ``ready()`` and a worker is processing a task, kills that worker's process (SIGKILL).  Yields
    the list of the pids killed (one, or none when the body ended first)."""
    killed: list[int] = []
    stop = threading.Event()

    def killer():
        while not stop.is_set():
            busy = [w for w, keys in client.processing().items() if keys]
            if busy and ready():
                pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.05)

    th = threading.Thread(target=killer, daemon=True)
    th.start()
    try:
        yield killed
    finally:
        stop.set()
        th.join(30)
