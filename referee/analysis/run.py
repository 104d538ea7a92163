"""Analysing logs: which logs a path names, each log's deals analysed (in processes), the result.

:func:`event_logs` is the one place that turns the paths given into log files: a duel folder
gives the logs of the groups its test counts (as ``marias table`` counts them), a tournament
folder the logs its manifest names, a match's log folder or a file itself.
:func:`analyze_logs` runs :func:`referee.analysis.deals.analyze_deal` over every deal,
one task per deal, in ``jobs`` processes; :func:`log_analysis` is one log's whole analysis
as JSON-ready data (what the web's replayer reads, through :mod:`referee.web.analyses`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ..logs.log import read_log
from ..tournaments import records
from ..tournaments.event import EventFolder, log_paths
from .deals import Settings, analyze_deal
from .summary import bot_rows

#: bumped whenever the analysis changes what it computes (a cached analysis of another version is not used)
ANALYSIS_VERSION = 1


class AnalysisError(ValueError):
    """A path that cannot be analysed (not a log, unreadable, a broken event folder); the message names it."""


def event_logs(paths: Iterable) -> tuple[list[Path], list[str]]:
    """The log files under ``paths``, and notes on what was left out (see the module docstring)."""
    files: list[Path] = []
    notes: list[str] = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise AnalysisError(f"{p}: no such file or folder")
        ev = EventFolder.at(p)
        if ev is not None and ev.is_duel:
            try:
                counted = ev.head_to_head()[1]
            except (OSError, ValueError, KeyError) as e:
                raise AnalysisError(f"{ev.path}: cannot read the duel folder: {e}") from None
            files.extend(q for q in counted if q.exists())
            continue
        found, why = log_paths([p])
        files.extend(found)
        notes.extend(why)
    seen: set[Path] = set()
    out = []
    for f in files:
        r = f.resolve()
        if r not in seen:
            seen.add(r)
            out.append(f)
    return out, notes


@dataclass
class LogDeals:
    """A log read for the analysis: its bots (identity per header entry), each deal record with
    the bots at its seats."""

    path: Path
    bots: list[str]
    deals: list[tuple[dict, list[str]]]
    problems: list[str] = field(default_factory=list)


def read(path: Path) -> LogDeals:
    """A log's deal records and who sat where; :class:`AnalysisError` if it is not a marias log."""
    try:
        recs, problems = read_log(path)
    except OSError as e:
        raise AnalysisError(f"{path}: cannot read: {e.strerror or e}") from None
    if not recs or recs[0].get("type") != "header":
        raise AnalysisError(f"{path}: not a marias log (its first line is not a header)")
    keys = records.bot_keys(recs[0])
    seating = {}
    deals = []
    for r in recs[1:]:
        t = r.get("type")
        if t == "partie_start":
            seating[r.get("partie")] = r.get("seating") or [0, 1, 2]
        elif t == "deal":
            s = seating.get(r.get("partie"), [0, 1, 2])
            deals.append((r, [keys[i] if isinstance(i, int) and i < len(keys) else f"seat {n}" for n, i in enumerate(s)]))
    return LogDeals(path, keys, deals, [f"{path}: {p}" for p in problems])


def _task(args):
    rec, players, settings = args
    return analyze_deal(rec, players, settings)


def _worker_init() -> None:
    """A pool process leaves Ctrl-C to the parent, which stops the pool."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


@dataclass
class Run:
    """What :func:`analyze_logs` did: each log's analysis (deals in order), and whether it was
    stopped (Ctrl-C) before every deal was analysed."""

    logs: list[dict]
    deals_done: int
    deals_total: int
    interrupted: bool = False


def analyze_logs(paths: list[Path], settings: Settings = Settings(), jobs: int = 1,
                 progress: Callable[[int, int], None] | None = None) -> Run:
    """Every deal of every log in ``paths``, one task per deal in ``jobs`` processes (a deal's
    numbers do not depend on ``jobs``).  Ctrl-C stops: the deals analysed so far are kept."""
    return analyze_read([read(p) for p in paths], settings, jobs, progress)  # every file read before any work


def analyze_read(logs: list[LogDeals], settings: Settings = Settings(), jobs: int = 1,
                 progress: Callable[[int, int], None] | None = None) -> Run:
    """:func:`analyze_logs` of logs already read (:func:`read`)."""
    tasks = [(i, j, (rec, players, settings)) for i, lg in enumerate(logs) for j, (rec, players) in enumerate(lg.deals)]
    done: dict[tuple[int, int], dict] = {}
    interrupted = False
    try:
        if jobs <= 1 or len(tasks) <= 1:
            for i, j, t in tasks:
                done[(i, j)] = _task(t)
                if progress:
                    progress(len(done), len(tasks))
        else:
            import concurrent.futures as cf
            import multiprocessing

            pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                          initializer=_worker_init)
            try:
                futures = {pool.submit(_task, t): (i, j) for i, j, t in tasks}
                for fut in cf.as_completed(futures):
                    done[futures[fut]] = fut.result()
                    if progress:
                        progress(len(done), len(tasks))
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt:
        interrupted = True
    out = []
    for i, lg in enumerate(logs):
        deals = [done[(i, j)] for j in range(len(lg.deals)) if (i, j) in done]
        out.append(log_result(lg, deals, settings))
    return Run(out, len(done), len(tasks), interrupted)


def log_result(lg: LogDeals, deals: list[dict], settings: Settings) -> dict:
    """A log's analysis from its deals' (:func:`referee.analysis.deals.analyze_deal`, in the log's order)."""
    return {"log": str(lg.path), "analysis_version": ANALYSIS_VERSION, "settings": settings.to_dict(),
            "bots": lg.bots, "deals": deals, "summary": bot_rows(deals), "problems": lg.problems}


def log_analysis(path: Path, settings: Settings = Settings()) -> dict:
    """The whole analysis of one log as JSON-ready data (protocol/LOGS.md, "Analysis"), in this
    process."""
    return analyze_logs([Path(path)], settings).logs[0]
