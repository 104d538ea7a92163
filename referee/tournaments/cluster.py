"""Tournaments on a Dask ``distributed`` cluster (``marias tournament FILE --cluster tcp://HOST:8786``).

The unit of work sent to the cluster is, warm (the default), one *chain*: the units of one
table and seat arrangement over several starting decks (:func:`referee.tournaments.tournament.plan_chains`,
the local pool's chains), played on the worker in one forked process with the same bot
processes from one partie to the next — a Dask worker keeps its warm bots per task chain, and
no process ever plays two arrangements of one deck (a chain holds one arrangement, each unit
another deck) nor units of two tournaments (the bots end with the chain).  Cold (``--cold``),
it is one *duplicate group*: the units of one table and partie index, each in its own forked
process with fresh bots.  On a worker, :func:`play_group` first checks that every bot of the
task has there the fingerprint the coordinator computed (the bots must exist at the same path,
with the same files, on every worker), then plays the task in a :class:`referee.seats.pool.Pool`
(under the same watchdog as locally), each unit validated in its process, and returns each
unit's log (text and SHA-256) and any other files of the unit (its bots' stderr).

The coordinator writes each returned log into the tournament folder, checks it exactly as a
local unit's (:func:`referee.tournaments.tournament.quick_check_unit_log`: the hash the worker reported,
the seats, the totals, the chain) and accepts it through the same callback as the local pool:
journal, results database, progress.  A unit is accepted once: a group that Dask runs again
(its worker was lost) is taken from the first result that arrives and no other.  Resume is
unchanged: the accepted logs in the folder are the state.

Trust: anyone who can reach the scheduler can run any code on the workers.  A cluster for
``marias`` must be private (a closed network, or TLS with client certificates).
"""

from __future__ import annotations

import logging
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Callable

POLL_S = 0.2  # how often the coordinator looks at its futures
MAX_SIDE_FILE = 1 << 20  # a unit's stderr files brought back from the worker, at most this many bytes each


def _first_line(e: BaseException) -> str:
    """An exception's text without the traceback some Dask errors carry."""
    text = str(e).strip()
    return text.splitlines()[0] if text else "(no message)"


class ClusterError(RuntimeError):
    """The cluster cannot be used (unreachable, a bot differs on a worker, ...)."""


_SEEN: dict[tuple, str] = {}  # this worker process's fingerprints of the bots it checked: once per worker


def _fingerprint_problems(specs) -> list[str]:
    """The bots whose fingerprint on this machine is not the one the coordinator computed
    (computed once per worker process and bot: hashing a bot's files may be costly)."""
    from ..seats.identity import IdentityError, listing_hash, spec_listing

    out = []
    for spec in specs:
        key = (tuple(spec.argv), spec.cwd, spec.builtin, tuple(getattr(spec, "fingerprint_paths", None) or ()))
        here = _SEEN.get(key)
        if here is None:
            try:
                here = listing_hash(spec_listing(spec))
            except IdentityError as e:
                out.append(f"bot {spec.label!r}: {e}")
                continue
            _SEEN[key] = here
        if here != spec.fingerprint:
            out.append(f"bot {spec.label!r} ({' '.join(spec.argv)}"
                       f"{f', cwd {spec.cwd}' if spec.cwd else ''}): fingerprint {here[:12]} here, "
                       f"{str(spec.fingerprint)[:12]} on the coordinator")
    return out


def play_group(jobs: list[dict], walls: list[float], seats: list[tuple], argvs: list[tuple],
               play_unit: Callable[[dict], dict], play_chain: Callable[[list], list] | None = None) -> dict:
    """On a worker: check the bots' fingerprints, then play and validate each unit of one task —
    with ``play_chain`` (warm: the units are one chain, played in one process with the same bots),
    else with ``play_unit`` each in its own process (cold: one duplicate group); both the
    tournament's, sent by reference.  Returns ``{"host", "refused"}`` or ``{"host", "units": [...]}``."""
    from ..seats.pool import Pool, Task

    host = f"{socket.gethostname()} (pid {os.getpid()})"
    seen: dict[str, object] = {}
    for job in jobs:
        for s in job["specs"]:
            seen.setdefault(s.label, s)
    problems = _fingerprint_problems(list(seen.values()))
    if problems:
        return {"host": host, "refused": problems}
    out = []
    with tempfile.TemporaryDirectory(prefix="marias-unit-") as tmp:
        local_jobs = [dict(job, log=str(Path(tmp) / Path(job["log"]).name)) for job in jobs]

        def clear(ids) -> None:  # before a task is tried again: a log is never overwritten
            for uid in ids:
                for p in Path(tmp).glob(f"{uid}.*"):
                    p.unlink(missing_ok=True)

        # (key, status, result, why, culprit, attempts, seconds) per unit
        rows: list[tuple] = []
        if play_chain is not None:
            ids = [job["id"] for job in jobs]
            outcomes = []
            Pool(play_chain, 1, retries=1, on_retry=lambda o: clear(ids)).run(
                [Task(f"chain:{ids[0]}", local_jobs, sum(walls), seats[0], argvs[0])], outcomes.append)
            o = outcomes[0]
            results = {r["id"]: r for r in o.result} if o.ok else {}
            for uid in ids:
                r = results.get(uid)
                if r is None:
                    rows.append((uid, o.status if not o.ok else "error", None,
                                 o.why if not o.ok else "the chain returned no result for it", o.culprit,
                                 o.attempts, o.seconds))
                elif "error" in r:
                    rows.append((uid, "error", None, r["error"], None, o.attempts, o.seconds))
                else:
                    rows.append((uid, "ok", r, "", None, o.attempts, o.seconds / len(ids)))
        else:
            tasks = [Task(job["id"], local, wall, st, av)
                     for job, local, wall, st, av in zip(jobs, local_jobs, walls, seats, argvs)]
            outcomes = []
            Pool(play_unit, 1, retries=1, on_retry=lambda o: clear([o.key])).run(tasks, outcomes.append)
            rows = [(o.key, o.status, o.result, o.why, o.culprit, o.attempts, o.seconds) for o in outcomes]
        for key, status, result, why, culprit, attempts, seconds in rows:
            files = {}
            for p in sorted(Path(tmp).glob(f"{key}.*")):
                if p.name == f"{key}.jsonl":
                    continue
                with open(p, "rb") as f:
                    files[p.name] = f.read(MAX_SIDE_FILE)
            log = Path(tmp) / f"{key}.jsonl"
            text = log.read_bytes() if status == "ok" and log.exists() else None
            out.append({"id": key, "status": status, "result": result, "why": why, "culprit": culprit,
                        "attempts": attempts, "seconds": seconds, "log": text, "files": files})
    return {"host": host, "units": out}


def groups_of(pending) -> list[list]:
    """The pending units by duplicate group (table, partie index), in plan order."""
    groups: dict[tuple, list] = {}
    for u in pending:
        groups.setdefault((u.table, u.partie), []).append(u)
    return list(groups.values())


CONNECT_TIMEOUT_S = 20.0


def connect(address: str, timeout: float | None = None):
    """A ``distributed.Client`` of the scheduler at ``address``; ClusterError when it cannot be reached."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - distributed is a dependency
        raise ClusterError("--cluster needs the Python package 'distributed' (pip install distributed)") from None
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S if timeout is None else timeout, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {e}") from None


def cluster_threads(client) -> int:
    """The cluster's worker threads (tasks it runs at once); 1 when the scheduler does not say."""
    try:
        return max(1, sum(int(n) for n in client.nthreads().values()))
    except Exception:  # an older or a fake client
        return 1


def run_groups(address: str, jobs_of: Callable, pending: list, accept: Callable, fail: Callable,
               play_unit: Callable[[dict], dict], on_tick: Callable[[], None] | None = None, client=None,
               plan_chains: Callable[[list, int], list[list]] | None = None,
               play_chain: Callable[[list], list] | None = None) -> None:
    """Send ``pending`` to the cluster, as chains (warm: ``plan_chains(pending, threads)`` played by
    ``play_chain``) or else as duplicate groups (cold: each unit by ``play_unit``), and hand each
    unit's outcome back: ``accept(unit, entry)`` for a unit the worker played and validated
    (``entry`` holds its log bytes, result and files), ``fail(unit, why, culprit, attempts)``
    otherwise.  The functions are passed in, so that this module needs nothing of the runner's.
    A task is taken once.  KeyboardInterrupt cancels what is still queued or running and propagates."""
    own = client is None
    client = client or connect(address)
    warm = plan_chains is not None and play_chain is not None
    # a scheduler that dies makes the client log a traceback at each reconnection attempt; what it
    # means reaches the user once per cause through ``fail`` (referee/tournaments/failures.py)
    quiet = logging.getLogger("distributed.client")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    by_id = {u.id: u for u in pending}
    futures = {}
    try:
        tasks = plan_chains(pending, cluster_threads(client)) if warm else groups_of(pending)
        for group in tasks:
            jobs, walls, seats, argvs = jobs_of(group)
            key = f"marias-{'chain' if warm else 'group'}-{group[0].id}-{os.getpid()}-{time.monotonic_ns()}"
            fut = client.submit(play_group, jobs, walls, seats, argvs, play_unit, play_chain if warm else None,
                                key=key, pure=False, retries=0)
            futures[fut] = group
        taken: set[str] = set()
        remaining = set(futures)
        while remaining:
            done = [f for f in remaining if f.done()]
            if not done:
                time.sleep(POLL_S)
            remaining.difference_update(done)
            for fut in done:
                group = futures[fut]
                try:
                    body = fut.result()
                except Exception as e:  # KilledWorker (lost too often), a worker without marias, ...
                    for u in group:
                        if u.id not in taken:
                            taken.add(u.id)
                            fail(u, f"lost on the cluster: {e.__class__.__name__}: {_first_line(e)}", None, 1)
                    continue
                if body.get("refused"):
                    raise ClusterError(
                        f"worker {body['host']} does not have the tournament's bots: "
                        + "; ".join(body["refused"])
                        + ". Bots must exist at the same path, with the same files, on every worker.")
                for entry in body["units"]:
                    u = by_id.get(entry["id"])
                    if u is None or u.id in taken:
                        continue
                    taken.add(u.id)
                    entry["host"] = body["host"]
                    if entry["status"] == "ok" and entry["log"] is not None:
                        accept(u, entry)
                    else:
                        why = f"{entry['status']}: {entry['why']} (on {body['host']})"
                        fail(u, why, entry["culprit"], entry["attempts"])
            if on_tick is not None:
                on_tick()
    except BaseException:
        client.cancel([f for f in futures if not f.done()], force=True)
        raise
    finally:
        try:
            if own:
                client.close(timeout=5)
        finally:
            quiet.setLevel(level)

