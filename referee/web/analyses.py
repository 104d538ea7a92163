"""The analysis of a log for its pages (``marias analyze``'s, :mod:`referee.analysis`), computed in
the background by ``marias serve``.

A page asks; the server answers at once with what it has: the analysis from the cache, or the
deals done so far of the computation under way, which the page asks for again.  The work runs in
a pool of :data:`PROCESSES` processes of its own (one task per deal, the deal a page is showing
first): the event loop and the other pages never wait for it, and a second request for the same
log joins the computation under way instead of starting another.  At most :data:`MAX_LOGS` logs
are computed at once; a page asking for more is told to come back (503).

A finished analysis is kept in the log's folder by :mod:`referee.analysis.cache` (the folder
``.marias-analysis/``, marked as marias output: no sandboxed bot is shown it, as no bot is shown
a log), where ``marias analyze --cache`` with the same settings finds it too.  Where that folder
cannot be written (a read-only served folder) or is not a plain folder (a symbolic link planted
in a bot's working folder), the analysis is kept in memory only (the last :data:`KEPT` logs).
The pages' server refuses a log that a match is still writing (:func:`referee.logs.log.being_written`)
before it asks for its analysis.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import stat
import threading
from collections import OrderedDict
from pathlib import Path

from ..analysis import cache
from ..analysis.deals import Settings, analyze_deal
from ..analysis.run import AnalysisError, log_result, read

#: processes that analyse deals (one deal at a time each)
PROCESSES = 2
#: logs analysed at once; a page asking for one more is answered 503 (busy)
MAX_LOGS = 4
#: finished analyses kept in memory (those the cache could not hold, and the last asked for)
KEPT = 8


class Busy(Exception):
    """Too many logs are being analysed; the message says so."""


def _deal_task(rec: dict, players: list[str], settings: Settings) -> dict:
    return analyze_deal(rec, players, settings)


def _worker_init() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops the pool


class Job:
    """One log's analysis under way: its deals as they are done, then the whole analysis."""

    def __init__(self, lg, settings: Settings):
        self.lg, self.settings = lg, settings
        self.total = len(lg.deals)
        self.deals: dict[int, dict] = {}  # index of the deal in the log -> its analysis
        self.result: dict | None = None
        self.error: str | None = None
        self.lock = threading.Lock()

    def status(self, rel: str, only: tuple[int, int] | None) -> dict:
        with self.lock:
            if self.result is not None:
                return self.result_status(self.result, rel, only)
            deals = [self.deals[j] for j in sorted(self.deals)]
            return {"state": "failed" if self.error else "computing", "error": self.error, "done": len(deals),
                    "total": self.total, "settings": self.settings.to_dict(), "deals": _only(deals, only),
                    "summary": None, "log": rel}

    @staticmethod
    def result_status(a: dict, rel: str, only: tuple[int, int] | None) -> dict:
        return {"state": "done", "error": None, "done": len(a["deals"]), "total": len(a["deals"]),
                "settings": a["settings"], "deals": _only(a["deals"], only), "summary": a["summary"],
                "problems": a.get("problems", []), "log": rel}


def _only(deals: list[dict], only: tuple[int, int] | None) -> list[dict]:
    return deals if only is None else [d for d in deals if (d.get("partie"), d.get("deal")) == only]


def cache_folder_usable(log: Path) -> bool:
    """Whether the analysis may be written beside ``log``: its cache folder is absent or a plain folder
    (never a symbolic link that would carry the analysis elsewhere) and the log's folder is writable."""
    folder = log.parent / cache.CACHE_DIR
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return os.access(log.parent, os.W_OK)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and os.access(folder, os.W_OK)


class Analyses:
    """The server's analyses: :meth:`status` is called from a thread (it hashes the log), never on
    the event loop."""

    def __init__(self, settings: Settings = Settings(), processes: int = PROCESSES, max_logs: int = MAX_LOGS):
        self.settings, self.processes, self.max_logs = settings, processes, max_logs
        self.jobs: dict[Path, Job] = {}  # by cache path: the log's bytes and the settings
        self.kept: OrderedDict[Path, dict] = OrderedDict()
        self.failed: OrderedDict[Path, str] = OrderedDict()
        self.keys: OrderedDict[tuple, Path] = OrderedDict()  # a log's version -> its cache path
        self.lock = threading.RLock()  # a log without deals is finished while it is started
        self.pool: cf.ProcessPoolExecutor | None = None

    def _pool(self) -> cf.ProcessPoolExecutor:
        if self.pool is None:  # spawned, not forked: the server has threads
            self.pool = cf.ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"),
                                               initializer=_worker_init)
        return self.pool

    def status(self, log: Path, rel: str, only: tuple[int, int] | None = None) -> dict:
        """The analysis of ``log`` (its name for the page ``rel``) as far as it goes, started if it is
        neither cached nor under way; ``only``: (partie, deal), that deal's analysis alone."""
        key = self._key(log)
        with self.lock:
            job = self.jobs.get(key)
            if job is None and key in self.failed:
                return self._failed(self.failed[key], rel)
            if job is None and key in self.kept:
                self.kept.move_to_end(key)
                return {**Job.result_status(self.kept[key], rel, only), "cached": False}
        if job is not None:
            return {**job.status(rel, only), "cached": False}
        hit = cache.load(log, self.settings)
        if hit is not None:
            return {**Job.result_status(hit, rel, only), "cached": True}
        with self.lock:
            if key not in self.jobs and len(self.jobs) >= self.max_logs:
                raise Busy(f"{self.max_logs} logs are being analysed; ask again in a while")
        try:
            lg = read(log)  # outside the lock: the other pages' requests go on meanwhile
        except AnalysisError as e:
            return self._failed(str(e), rel)
        with self.lock:
            job = self.jobs.get(key)
            if job is None:  # nobody started it meanwhile
                if len(self.jobs) >= self.max_logs:
                    raise Busy(f"{self.max_logs} logs are being analysed; ask again in a while")
                job = self.jobs[key] = Job(lg, self.settings)
                try:
                    self._start(key, log, job, only)
                except RuntimeError as e:  # the pool broke (a process was killed): a new one next time
                    self.jobs.pop(key, None)
                    self.pool = None
                    return self._failed(f"the analysis could not start: {e}", rel)
        return {**job.status(rel, only), "cached": False}

    def _key(self, log: Path) -> Path:
        """The cache path of ``log`` (a hash of its bytes), hashed once per version of the file: a page
        asks again every second or two while the analysis runs."""
        st = os.stat(log)
        version = (str(log), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        with self.lock:
            hit = self.keys.get(version)
        if hit is None:
            hit = cache.cache_path(log, self.settings)
            with self.lock:
                self.keys[version] = hit
                while len(self.keys) > 16 * KEPT:
                    self.keys.popitem(last=False)
        return hit

    def _failed(self, error: str, rel: str) -> dict:
        return {"state": "failed", "error": error, "done": 0, "total": 0, "deals": [], "summary": None,
                "settings": self.settings.to_dict(), "log": rel, "cached": False}

    def _start(self, key: Path, log: Path, job: Job, first: tuple[int, int] | None) -> None:
        order = sorted(range(job.total), key=lambda j: (job.lg.deals[j][0].get("partie"), job.lg.deals[j][0].get("deal"))
                       != first)  # the deal the page shows first, then the log's order
        if not order:
            self._finish(key, log, job)
            return
        pool = self._pool()
        for j in order:
            rec, players = job.lg.deals[j]
            fut = pool.submit(_deal_task, rec, players, job.settings)
            fut.add_done_callback(lambda f, j=j: self._deal_done(key, log, job, j, f))

    def _deal_done(self, key: Path, log: Path, job: Job, j: int, fut: cf.Future) -> None:
        if fut.cancelled():
            return
        err = fut.exception()
        if err is not None:
            with job.lock:
                job.error = job.error or f"the analysis of deal {j + 1} failed: {type(err).__name__}: {err}"
            with self.lock:
                if self.jobs.get(key) is job:
                    del self.jobs[key]
                    self.failed[key] = job.error  # said to every page that asks (a restarted server tries again)
                    while len(self.failed) > KEPT:
                        self.failed.popitem(last=False)
                if isinstance(err, cf.process.BrokenProcessPool):
                    self.pool = None  # a process died: a new pool next time
            return
        with job.lock:
            job.deals[j] = fut.result()
            complete = len(job.deals) == job.total
        if complete:
            self._finish(key, log, job)

    def _finish(self, key: Path, log: Path, job: Job) -> None:
        analysis = log_result(job.lg, [job.deals[j] for j in range(job.total)], job.settings)
        stored = False
        if cache_folder_usable(log):
            try:
                stored = cache.store(log, analysis, job.settings) == key
            except OSError:
                stored = False
        with job.lock:
            job.result = analysis
        with self.lock:
            self.jobs.pop(key, None)
            if not stored:  # kept here instead
                self.kept[key] = analysis
                while len(self.kept) > KEPT:
                    self.kept.popitem(last=False)

    def close(self) -> None:
        """Stop the pool at once: the deals under way are stopped, those not started dropped (their
        logs are analysed again when asked), so that the server's exit never waits for a deal."""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        stop = getattr(pool, "terminate_workers", None)  # Python 3.14
        if stop is not None:
            stop()
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())  # before 3.14: the executor's own table
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            p.terminate()
