"""Head-to-head tests (``format: head-to-head``, ``marias duel A B``): is A better than B, and when to stop.

Two bots A and B share a three-seat table.  A *group* is one starting deck played in
the six seatings with two seats of one bot and one of the other (A A B, A B A,
B A A, B B A, B A B, A B B): every seat holds A and B equally often and every seat's
cards go to each bot three times, so the luck of the deal cancels.  One group is one
sample: A's mean groše per partie over its six partie (A's seats together; B's is its
negative, every deal being zero-sum).

The samples feed the sequential test of :mod:`referee.tournaments.sprt` in group order.  The
runner plans groups lazily, plays their partie through the tournament's unit
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

import json
import math
import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from . import tournament as T
from ..logs import files
from .folder import FolderLock
from ..seats.pool import Pool, Task
from ..seats.sandbox import mark_output
from .sprt import H0, H1, SPRT, TRUNCATED, SPRTState

#: the six seatings of a group, as indices into (A, B) for seats 0, 1, 2
SEATINGS: tuple[tuple[int, int, int], ...] = ((0, 0, 1), (0, 1, 0), (1, 0, 0), (1, 1, 0), (1, 0, 1), (0, 1, 1))
#: for each seating and seat, the workdir lane of the bot there: the k-th seat its bot takes in a group,
#: so that no two of a bot's instances on one deck (nor its two seats at one table) share a folder
SEAT_LANES: tuple[tuple[int, int, int], ...] = tuple(
    tuple(sum(1 for j, t in enumerate(SEATINGS) for q in range(3) if t[q] == s[seat] and (j, q) < (i, seat))
          for seat in range(3)) for i, s in enumerate(SEATINGS))  # type: ignore[misc]
UNIT_FILE_RE = re.compile(r"g(\d+)-s([ab]{3})\.")  # a unit's log or one of its bots' files


# ------------------------------------------------------------------ plan

@dataclass(frozen=True)
class Plan:
    """What defines a head-to-head test's games and its decision (from a config or a folder's state file)."""

    a: str
    b: str
    seed: str
    test: SPRT
    id_width: int | None = None  # digits of K in unit ids (kept when max_groups grows); None: of max_groups

    @property
    def width(self) -> int:
        return self.id_width or max(4, len(str(self.test.max_groups or 0)))

    def group(self, k: int) -> list[T.Unit]:
        """Group ``k`` (1-based): six units on one deck (seed ``SEED:gK``, or deal-book line K)."""
        seed = f"{self.seed}:g{k}"
        return [T.Unit(f"g{k:0{self.width}d}-s{''.join('ab'[i] for i in arr)}", 1, (self.a, self.b),  # type: ignore[arg-type]
                       arr, k, seed, k - 1) for arr in SEATINGS]


def plan_of(cfg: T.TournamentConfig) -> Plan:
    if cfg.format != T.HEAD_TO_HEAD or cfg.sprt is None or len(cfg.bots) != 2:
        raise ValueError("a head-to-head test needs format: head-to-head and exactly two bots")
    return Plan(cfg.bots[0].name, cfg.bots[1].name, cfg.seed, SPRT(**cfg.sprt), cfg.id_width)


def plan_from_state(canon: dict, id_width: int | None = None) -> Plan:
    """The plan stored in a folder's tournament.json (its canonical configuration, and the width of
    its unit ids when stored)."""
    sp = canon["sprt"]
    return Plan(canon["bots"][0]["name"], canon["bots"][1]["name"], str(canon["seed"]),
                SPRT(h0=sp["h0"], h1=sp["h1"], alpha=sp["alpha"], beta=sp["beta"], max_groups=sp["max_groups"]),
                id_width)


def unit_sample(path: Path, a: str) -> float:
    """A's groše in one unit's (complete) log: the totals of the seats labelled ``a``."""
    got = T.log_totals(path)
    if got is None:
        raise ValueError(f"{path}: no footer")
    labels, totals = got
    return float(sum(t for n, t in zip(labels, totals) if n == a))


# ------------------------------------------------------------------ reading the state from the logs

@dataclass
class Scan:
    """What a folder's logs hold: complete units (A's groše), bad unit files, and the test over groups 1..N."""

    plan: Plan
    units: dict[str, float] = field(default_factory=dict)  # unit id -> A's groše, complete and valid
    bad: dict[str, str] = field(default_factory=dict)  # unit id -> why its files do not count
    groups_seen: int = 0  # the highest group with any file

    def group_done(self, k: int) -> bool:
        return all(u.id in self.units for u in self.plan.group(k))

    def group_mean(self, k: int) -> float:
        return sum(self.units[u.id] for u in self.plan.group(k)) / len(SEATINGS)

    def state(self) -> SPRTState:
        """The test over complete groups 1, 2, … in order, stopped at its first decision or first gap."""
        st = SPRTState(self.plan.test)
        k = 1
        while not st.done and self.group_done(k):
            st = st.add(self.group_mean(k))
            k += 1
        return st

    def ignored_groups(self, counted: int) -> list[int]:
        """Complete groups after the counted ones (played while the test was deciding): not counted."""
        return [k for k in range(counted + 1, self.groups_seen + 1) if self.group_done(k)]


def scan(out: Path, plan: Plan, *, check: bool = True) -> Scan:
    """Read ``out/logs``: every unit file of the plan, checked as the tournament checks a unit log."""
    logs = out / T.LOGS_DIR
    sc = Scan(plan)
    ids: dict[str, T.Unit] = {}
    if logs.is_dir():
        for p in logs.iterdir():
            m = UNIT_FILE_RE.match(p.name)
            if m:
                sc.groups_seen = max(sc.groups_seen, int(m.group(1)))
    for k in range(1, sc.groups_seen + 1):
        for u in plan.group(k):
            ids[u.id] = u
    for uid, u in ids.items():
        path = T.unit_log(out, u)
        if not path.exists():
            if any(logs.glob(f"{uid}.*")):
                sc.bad[uid] = "no log (only its bots' files)"
            continue
        why = T.check_unit_log(path, u) if check else None
        if why is None:
            try:
                sc.units[uid] = unit_sample(path, plan.a)
            except (OSError, ValueError) as e:
                sc.bad[uid] = str(e)
        else:
            sc.bad[uid] = why
    return sc


# ------------------------------------------------------------------ the report (shared by the runner and `marias table`)

def decision_text(plan: Plan, st: SPRTState) -> str:
    d = st.decision
    t = plan.test
    if d == H1:
        return f"H1 accepted: {plan.a} is better than {plan.b} (by {t.h1:g} groše per partie rather than {t.h0:g})"
    if d == H0:
        text = f"H0 accepted: {plan.a} is not better than {plan.b} by {t.h1:g} groše per partie ({t.h0:g} rather than {t.h1:g})"
        e = st.estimate
        if e is not None and e.half is not None and e.high < 0:  # the whole interval below zero
            text += (f"; {plan.b} is better than {plan.a}: by {-e.mean:.1f} groše per partie, "
                     f"95% interval [{-e.high:.1f}, {-e.low:.1f}]")
        return text
    if d == TRUNCATED:
        return f"no decision after max_groups = {t.max_groups} groups"
    return "no decision yet (the test continues)"


def decks_of(folder: Path) -> str | None:
    """What the folder's logs say of their decks (referee/matches/secrecy.py): public or secret seed."""
    from ..matches.secrecy import decks_summary, table_logs

    return decks_summary(table_logs([Path(folder) / T.LOGS_DIR]))


def result_dict(plan: Plan, st: SPRTState, ignored: list[int] | None = None, decks: str | None = None,
                changes: list[str] | None = None) -> dict:
    t = plan.test
    e = st.estimate
    return {
        "a": plan.a, "b": plan.b, "h0": t.h0, "h1": t.h1, "alpha": t.alpha, "beta": t.beta,
        "max_groups": t.max_groups, "decision": st.decision, "text": decision_text(plan, st),
        "groups": st.n, "partie": st.n * len(SEATINGS),
        "llr": None if st.n == 0 else (round(st.llr, 4) if math.isfinite(st.llr) else str(st.llr)), "lower": round(t.lower, 4), "upper": round(t.upper, 4),
        "mean": None if e is None else round(e.mean, 3),
        "ci95_low": None if e is None or e.low is None else round(e.low, 3),
        "ci95_high": None if e is None or e.high is None else round(e.high, 3),
        "los": None if e is None or e.los is None else round(e.los, 6),
        "samples": [round(x, 4) for x in st.samples],
        "ignored_groups": list(ignored or []),
        "decks": decks,
        "design_changes": list(changes or []),
    }


def render(r: dict, fmt: str = "text") -> str:
    """The head-to-head section: decision, LLR and bounds, groups, the estimate with its interval and LOS."""
    if fmt == "json":
        return json.dumps({"head-to-head": r}, indent=2, ensure_ascii=False)
    llr = ("-" if r["llr"] is None else f"{r['llr']:+.3f}" if not isinstance(r["llr"], str)
           else f"{r['llr']} (every group the same: no spread)")
    if r["mean"] is None:
        est = "-"
    elif r["ci95_low"] is None:
        est = f"{r['mean']:+.2f} (one group: no interval)"
    else:
        est = f"{r['mean']:+.2f}, 95% interval [{r['ci95_low']:+.2f}, {r['ci95_high']:+.2f}]"
    los = "-" if r["los"] is None else f"{100 * r['los']:.1f}%"
    rows = [("decision", r["text"]), ("groups", f"{r['groups']} ({r['partie']} partie)"),
            ("LLR", f"{llr}  (bounds {r['lower']:+.3f}, {r['upper']:+.3f})"),
            (f"{r['a']} - {r['b']}", f"{est} groše per partie"), ("LOS", f"{los} (likelihood that {r['a']} is better)"),
            ("design", f"h0 {r['h0']:g}, h1 {r['h1']:g} groše per partie, alpha {r['alpha']:g}, beta {r['beta']:g}, "
                       f"max groups {r['max_groups']}")]
    if r.get("decks"):
        rows.append(("decks", r["decks"]))
    if r.get("design_changes"):
        rows.append(("design changed", "after play began: " + "; ".join(r["design_changes"])
                     + " (the error rates hold only for a design fixed in advance)"))
    if r["ignored_groups"]:
        rows.append(("not counted", f"{len(r['ignored_groups'])} group(s) finished after the decision "
                                    "(in no table)"))
    if fmt == "csv":
        return "# head-to-head\nkey,value\n" + "".join(f"{k},\"{v}\"\n" for k, v in rows)
    title = f"Head-to-head: {r['a']} against {r['b']} (SPRT over groups of six seatings)"
    width = max(len(k) for k, _ in rows)
    body = "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)
    if fmt == "md":
        return f"## {title}\n\n| | |\n|---|---|\n" + "".join(f"| {k} | {v} |\n" for k, v in rows)
    return f"{title}\n\n{body}\n"


def is_duel_folder(path) -> bool:
    state = Path(path) / T.STATE_FILE
    if not state.is_file():
        return False
    try:
        return files.read_json(state)["config"].get("format") == T.HEAD_TO_HEAD
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def report(folder) -> dict:
    """The head-to-head result of a folder, from its logs and its tournament.json alone."""
    return report_and_logs(folder)[0]


def report_and_logs(folder) -> tuple[dict, list[Path]]:
    """:func:`report`, and the logs of the groups the test counts (groups 1..N): what a duel folder's
    other tables (standings, pairs, play, ...) are computed from, so that a group finished after the
    decision (or after a gap) counts in none of them."""
    folder = Path(folder)
    body = files.read_json(folder / T.STATE_FILE)  # a regular file only, never deep JSON
    plan = plan_from_state(body["config"], body.get("id_width"))
    sc = scan(folder, plan)
    st = sc.state()
    logs = [T.unit_log(folder, u) for k in range(1, st.n + 1) for u in plan.group(k)]
    return result_dict(plan, st, sc.ignored_groups(st.n), decks_of(folder), design_changes(body)), logs


def design_changes(state_body: dict) -> list[str]:
    """Changes of the test's hypotheses or error rates made on a resume (tournament.json ``extensions``;
    a larger or smaller max_groups is not one: it only says how long the same test may run)."""
    return [c for e in state_body.get("extensions") or [] for c in e.get("changed") or []
            if not c.startswith("sprt.max_groups")]


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
            body = json.loads((self.config.output / T.STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
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

    with FolderLock(out) as lock:
        state = T.prepare_output(cfg, resume=resume)  # the seed: given, stored, or drawn now
        plan = plan_of(cfg)  # only now: every group's decks follow from the seed
        T.announce_seed(cfg, state, say if stream is not None else None)
        (out / T.LOGS_DIR).mkdir(exist_ok=True)
        sc = scan(out, plan)
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
