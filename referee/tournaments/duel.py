"""Running a head-to-head test (``format: head-to-head``, ``marias duel A B``): is A better than B, and when to stop.

The test itself (its groups of six seatings, the samples, the SPRT's decision, the result read
back from the logs) is :mod:`referee.tournaments.head_to_head`; its names are reachable here too.
The runner plans groups lazily, plays their partie through the tournament's unit
primitives (one log per partie, ``OUTPUT/logs/gGGGG-sABB.jsonl``) in a process pool,
warm by default (issue 24: a worker plays a *chain*, one seating over a batch of groups'
decks, with the same bot processes; never two seatings of one deck in one process;
``--cold``: fresh bots every partie; a group's result is the same either way), and stops as soon as the LLR over groups 1..N crosses a bound (or at
``max_groups``).  A group counts only when its six logs are complete and validate,
and only in order: the decision is the first crossing over complete groups 1, 2, 3, …
So the logs are the whole state: a run stopped at any moment (Ctrl-C, ``kill -9``)
is continued by the same command, and :func:`report` recomputes the same decision,
LLR and number of groups from the folder alone (``marias table OUTPUT``).  The ``sprt`` keys
(bounds, max_groups) only say when to stop: a resume may change them (``prepare_output`` keeps the
unit ids' width, ``id_width``), so a test stopped at max_groups goes on with a larger one.
"""

from __future__ import annotations

import math
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from . import tournament as T
from .event import EventFolder
from .head_to_head import (  # the test read from its logs; callers may reach these as referee.tournaments.duel.X too
    DUEL_LOG_RE, SEAT_LANES, SEATINGS, UNIT_FILE_RE, Plan, Scan, decision_text, decks_of, design_changes, plan_from_state,
    plan_of, render, result_dict, scan, unit_sample,
)
from ..seats.pool import Pool, Task
from ..seats.sandbox import mark_output
from .sprt import H0, H1, SPRTState


def report(folder) -> dict:
    """The head-to-head result of a duel's folder, from its logs and its tournament.json alone."""
    return EventFolder(folder).head_to_head()[0]


def report_and_logs(folder) -> tuple[dict, list[Path]]:
    """:func:`report`, and the logs of the groups the test counts (:meth:`EventFolder.head_to_head`)."""
    return EventFolder(folder).head_to_head()


# ------------------------------------------------------------------ the runner

@dataclass
class DuelRun:
    config: T.TournamentConfig
    plan: Plan
    state: str  # new | resume
    test: SPRTState
    groups_before: int  # groups already counted when this run started
    played: int  # units completed by this run
    failed: list[tuple[str, str]]
    interrupted: bool
    seconds: float
    ignored: list[int] = field(default_factory=list)

    @property
    def result(self) -> dict:
        try:
            body = EventFolder(self.config.output).state() or {}
        except ValueError:
            body = {}
        return result_dict(self.plan, self.test, self.ignored, decks_of(self.config.output), design_changes(body))


def _progress_line(plan: Plan, st: SPRTState) -> str:
    t = plan.test
    e = st.estimate
    if e is None:
        est = "-"
    elif e.half is None:
        est = f"{e.mean:+.1f} groše/partie (one group: no interval yet)"
    else:
        est = f"{e.mean:+.1f} groše/partie, 95% interval [{e.low:+.1f}, {e.high:+.1f}]"
    return (f"group {st.n}: LLR {st.llr:+.2f} (bounds {t.lower:+.2f}, {t.upper:+.2f})  "
            f"{plan.a} - {plan.b} {est}")


def run_duel(cfg: T.TournamentConfig, *, resume: bool = False, stream: TextIO | None = None,
             sign_key=None) -> DuelRun:
    """Play the head-to-head test of ``cfg`` until it decides (or max_groups); continue a stopped one.
    ``sign_key`` (an Ed25519 key: PEM path, raw bytes or key object) signs every partie's log."""
    if sign_key is not None:
        from ..logs.seal import signing_key_bytes
        from ..matches.secrecy import hide_paths

        if isinstance(sign_key, (str, os.PathLike)):  # its file, wherever it lies, no bot may see
            cfg.private_paths = tuple(dict.fromkeys((*cfg.private_paths, *hide_paths(sign_key))))
        sign_key = signing_key_bytes(sign_key)  # read once, before any bot starts; plain bytes travel to the workers
    problems = T.check_commands(cfg)
    if problems:
        raise T.ConfigError(problems)
    out = cfg.output
    out.mkdir(parents=True, exist_ok=True)
    mark_output(out)  # logs, results.sqlite, tournament.json: shown to no bot (referee/seats/sandbox.py)
    t0 = time.perf_counter()

    def say(text: str) -> None:
        if stream is not None:
            stream.write(text + "\n")
            stream.flush()

    ev = EventFolder(out)
    with ev.lock() as lock:
        state = T.prepare_output(cfg, resume=resume)  # the seed: given, stored, or drawn now
        plan = plan_of(cfg)  # only now: every group's decks follow from the seed
        T.announce_seed(cfg, state, say if stream is not None else None)
        (out / T.LOGS_DIR).mkdir(exist_ok=True)
        sc = ev.scan(plan)
        for uid, why in sorted(sc.bad.items()):  # incomplete or invalid: played again from the start
            say(f"{uid}: {why}; playing it again")
            for p in (out / T.LOGS_DIR).glob(f"{uid}.*"):
                p.unlink(missing_ok=True)
        st = sc.state()
        before = st.n
        if state == "resume":
            say(f"resuming {out}: {before} group(s) counted" + (f", {_progress_line(plan, st)}" if st.n else ""))
        if cfg.extended:
            say(f"continuing the duel with {'; '.join(cfg.extended)} (the groups played are kept: same decks and seeds)")
            if any(not c.startswith("sprt.max_groups") for c in cfg.extended) and before:
                say("warning: the test's hypotheses or error rates changed after groups were played: its error rates "
                    "hold only for a design fixed before the first group (the change is kept in tournament.json)")
            if st.decision in (H0, H1):
                say(f"the test already decided at group {st.n} ({st.decision}); a larger max_groups plays nothing more")
        played, failed, interrupted = 0, [], False
        if not st.done:
            st, played, failed, interrupted = _play(cfg, plan, sc, st, say, close_fds=(lock.f.fileno(),),
                                                    sign_key=sign_key)
    ignored = sc.ignored_groups(st.n)
    return DuelRun(cfg, plan, state, st, before, played, failed, interrupted, time.perf_counter() - t0, ignored)


#: the longest warm chain of a duel (units of one seating over this many groups), as a tournament's (plan_chains)
WARM_CHAIN_MAX = 12


def batch_groups(k: int, warm: bool = True) -> int:
    """How many groups, from group ``k`` on, a warm duel plans as one batch: six chains (one per seating)
    over those groups' decks.  Short at first and longer as the test goes on: √(3k), 2 to
    :data:`WARM_CHAIN_MAX` (batches 1-2, 3-5, 6-9, 10-14, 15-20, ...).  A batch's groups enter the test
    when its chains end, so up to a batch may be played past the decision; with N groups to play,
    bots that cost S to start and D per partie otherwise, the CPU (6N + 3L)(D + S/L) is least near
    L = √(2.5N) for the built-in bots (S ≈ 300 ms, D ≈ 250 ms under bwrap): √(3k) follows it with
    the groups played so far standing for N.  Cold: 1."""
    return max(2, min(WARM_CHAIN_MAX, math.isqrt(3 * k))) if warm else 1


def plan_tasks(plan: Plan, first: int, cap: int, done, warm: bool = True):
    """The duel's work from group ``first`` on, lazily, as lists of units each played by one worker:
    warm, per batch of groups (:func:`batch_groups`) one chain per seating, each unit another group's
    deck, so that a bot process never plays two seatings of one deck (nor two duels: a chain is one
    worker's, within one run); cold, one unit each.  In group order; units in ``done`` are left out."""
    k = first
    while k <= cap:
        n = min(batch_groups(k, warm), cap - k + 1)
        groups = [plan.group(j) for j in range(k, k + n)]
        for i in range(len(SEATINGS)):
            chain = [g[i] for g in groups if g[i].id not in done]
            if warm and chain:
                yield chain
            else:
                for u in chain:
                    yield [u]
        k += n


def _play(cfg: T.TournamentConfig, plan: Plan, sc: Scan, st: SPRTState, say, close_fds=(), sign_key=None):
    """The pool: work in group order, at most ``workers`` tasks in flight (warm: chains of one seating over
    several groups' decks, :func:`plan_tasks`; cold: single units); the test advances as groups complete,
    in order, so that its sequence of samples is the same warm and cold."""
    out = cfg.output
    logs = out / T.LOGS_DIR
    cap = plan.test.max_groups or 10 ** 9
    workers = max(1, cfg.concurrency or os.cpu_count() or 1)
    warm = bool(getattr(cfg, "warm", True))
    queue = plan_tasks(plan, st.n + 1, cap, sc.units, warm)
    running: dict[str, list[T.Unit]] = {}  # task key -> its units, submitted and not finished
    played = 0
    failed: list[tuple[str, str]] = []
    interrupted = False
    exhausted = False
    old_term = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    def remove(units) -> None:
        for u in units:
            for p in logs.glob(f"{u.id}.*"):
                p.unlink(missing_ok=True)

    def on_retry(o) -> None:  # a worker that failed is tried once more: nothing of its first try stays
        remove(running.get(o.key, ()))
        say(f"{o.key}: {o.describe()}; trying it once more")

    def task_of(chain: list[T.Unit]) -> Task:
        jobs = [T.unit_job(cfg, u, logs, sign_key, lanes=SEAT_LANES[SEATINGS.index(u.arrangement)]) for u in chain]
        wall = sum(T.unit_wall_seconds(cfg, u) for u in chain)
        argvs = tuple(tuple(spec.argv) for spec in jobs[0]["specs"])
        if not warm:
            return Task(chain[0].id, jobs[0], wall, chain[0].seats, argvs)
        jobs[0]["warm_partie"] = cfg.warm_partie
        return Task(f"chain:{chain[0].id}", jobs, wall, chain[0].seats, argvs)

    def accept(u: T.Unit, result: dict) -> None:
        nonlocal played
        path = T.unit_log(out, u)
        why = result.get("valid") or T.quick_check_unit_log(path, u, result)  # validated by its worker
        if why is not None:
            kept = out / T.INVALID_DIR / f"{path.name}.invalid"
            if path.exists():
                kept.parent.mkdir(exist_ok=True)
                os.replace(path, kept)
            failed.append((u.id, why))
            say(f"{u.id}: its log does not validate ({why}); kept as {kept}")
            return
        sc.units[u.id] = unit_sample(path, plan.a)
        sc.groups_seen = max(sc.groups_seen, u.partie)
        played += 1
        for k, v in (result.get("cpu") or {}).items():  # what the workers spent (marias bench tournament --duel)
            T.WORKER_CPU[k] = T.WORKER_CPU.get(k, 0.0) + v

    signal.signal(signal.SIGTERM, on_term)
    pool = Pool(T.play_chain if warm else T.play_unit, workers, retries=1, close_fds=close_fds, on_retry=on_retry)
    try:
        while True:
            while not exhausted and not failed and len(running) < workers:
                chain = next(queue, None)
                if chain is None:
                    exhausted = True
                    break
                task = task_of(chain)
                pool.submit(task)
                running[task.key] = chain
            if not running:
                break
            for o in pool.wait(0.5):
                chain = running.pop(o.key)
                if not o.ok:  # the worker failed twice (it is retried once): its units stay unplayed
                    for u in chain:
                        failed.append((u.id, o.describe()))
                    say(f"{o.key}: failed: {o.describe()}")
                    remove(chain)
                    continue
                by_id = {u.id: u for u in chain}
                for r in (o.result if warm else [o.result]):
                    u = by_id.pop(r["id"])
                    if "error" in r:
                        failed.append((u.id, f"error: {r['error']}"))
                        say(f"{u.id}: failed: error: {r['error']}")
                        remove([u])
                    else:
                        accept(u, r)
                remove(by_id.values())  # none, unless a chain returned fewer results than units
            # the test advances over the groups now complete, in order
            while not st.done and sc.group_done(st.n + 1):
                st = st.add(sc.group_mean(st.n + 1))
                say(_progress_line(plan, st))
            if st.done:
                break
    except KeyboardInterrupt:
        interrupted = True
        say("stopping: the partie in progress are abandoned (run the same command again to continue the test)")
    finally:
        pool.close()  # decided or stopped: the partie still in progress are ended
        signal.signal(signal.SIGTERM, old_term)
    for chain in running.values():  # cut short: nothing of them stays (a warm chain's finished units too)
        remove(u for u in chain if u.id not in sc.units)
    return st, played, failed, interrupted


def config(a: str, b: str, **options) -> T.TournamentConfig:
    """A head-to-head configuration from the command line: bots as built-in names or ``NAME=COMMAND``."""
    names = []
    for v in (a, b):
        name = v.partition("=")[0] if "=" in v else v.replace(":", "-")
        names.append(name)
    if names[0] == names[1]:
        # the same bot twice (e.g. robot against robot): tell them apart, the command unchanged
        a = f"{names[0]}.a={a.partition('=')[2] if '=' in a else a}"
        b = f"{names[1]}.b={b.partition('=')[2] if '=' in b else b}"
    options = {k: v for k, v in options.items() if v is not None}
    options["format"] = T.HEAD_TO_HEAD
    options.setdefault("output", f"duel-{names[0]}-{names[1]}")
    options.setdefault("name", f"duel-{names[0]}-{names[1]}")
    return T.config_from_options([a, b], **options)


def bench(a: str = "robot", b: str = "random", groups: int = 8, concurrency: int = 1, seed: str = "bench",
          h0: float = 290.0, h1: float = 310.0) -> dict:
    """``marias bench tournament --duel``: the same duel (``groups`` at most; h0/h1 around robot's
    advantage over random, so that the test runs long) played cold and warm in one run: partie played
    per second, partie *counted* per second (groups the test counts x 6: what a warm duel's overshoot
    past the decision costs shows here), and the CPU per partie played split as the tournament's bench."""
    import resource
    import tempfile

    def rself() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    out: dict = {"benchmark": "duel warm/cold", "bots": f"{a} against {b}", "max_groups": groups,
                 "concurrency": concurrency}
    rate: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="marias-bench-") as tmp:
        for mode in ("cold", "warm"):
            cfg = config(a, b, h0=h0, h1=h1, max_groups=groups, seed=seed, concurrency=concurrency,
                         output=str(Path(tmp) / mode))
            cfg.warm = mode == "warm"
            T.WORKER_CPU.clear()
            p0, w0 = rself(), time.perf_counter()
            run = run_duel(cfg)
            seconds = time.perf_counter() - w0
            if run.failed or run.interrupted:
                raise RuntimeError(f"the benchmark duel did not finish: {run.failed}")
            wc = dict(T.WORKER_CPU)
            parts = {"parent": rself() - p0, "referee": wc.get("referee", 0.0), "logging": wc.get("logging", 0.0),
                     "validation": wc.get("validation", 0.0),
                     "workers_other": wc.get("worker", 0.0) - wc.get("referee", 0.0) - wc.get("logging", 0.0)
                     - wc.get("validation", 0.0),
                     "bots_deciding": wc.get("bots", 0.0) - wc.get("bots_start", 0.0),
                     "bots_starting": wc.get("bots_start", 0.0)}
            n = max(1, run.played)
            out[f"{mode}_decision"] = f"{run.test.decision} after {run.test.n} groups"
            out[f"{mode}_partie_played"] = run.played
            out[f"{mode}_partie_per_second"] = round(run.played / seconds, 2)
            out[f"{mode}_counted_partie_per_second"] = round(6 * run.test.n / seconds, 2)
            out[f"{mode}_cpu_ms_per_partie"] = round(1000 * sum(parts.values()) / n, 1)
            for k, v in parts.items():
                out[f"{mode}_{k}_ms_per_partie"] = round(1000 * v / n, 1)
            rate[mode] = 6 * run.test.n / seconds
    out["counted_partie_per_second_warm_vs_cold"] = round(rate["warm"] / rate["cold"], 2)
    out["load_average_1min_at_end"] = T.load_average()
    return out
