"""``marias ladder run``: the ladder plays, table after table, until it is stopped (protocol/TOURNAMENT.md,
"Ladder").

The runner reads the active versions before it draws each table (:mod:`referee.ladder.pairing`), so
a version added or retired meanwhile is seen at the next table.  A table is ``groups_per_table``
duplicate groups of three versions: each group one secret deck in the six seatings, each seating one
partie with its own log.  The partie are played by the tournament's unit primitives
(:func:`referee.tournaments.tournament.play_chain`: warm, one worker per seating keeps the same bot
processes over the table's decks, never two seatings of one deck in one process; ``--cold``: fresh
bots each partie), in the tournament's sandbox, sealed (and signed with ``--sign``), each log
validated by its worker and checked by the coordinator as a tournament's.  On a Dask cluster the
same chains go to :func:`referee.tournaments.cluster.play_group`.

Each accepted partie is one transaction in the database; with a group's sixth, its rating
(:mod:`referee.ladder.store`).  A run killed at any moment (``kill -9``) is continued by running it
again: the groups still ``playing`` are finished — a log written but not recorded is validated in
full and recorded, anything else played again — and nothing is counted twice.

A group's deck comes from ``HMAC-SHA256(secret seed, "group:N")``: the match seed a finished log's
footer reveals is that value, from which no other group's deck follows.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import signal
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from . import store
from .archive import compress_old
from .folder import INVALID_DIR, LOGS_DIR, SEATINGS, LadderError, LadderFolder, Planned, refuse_exposed, unit_id
from .pairing import pair

IDLE_S = 2.0  # with fewer than three active versions, how often the runner looks again
COMPRESS_EVERY_S = 60.0


def group_seed(seed: str, n: int) -> str:
    """Group ``n``'s match seed: a keyed hash of the secret seed (a log reveals it; it reveals no other)."""
    return hmac.new(seed.encode(), f"group:{n}".encode(), hashlib.sha256).hexdigest()[:32]


def parse_until(text: str, now: float | None = None) -> float:
    """``--until``: a duration from now (``90s``, ``30m``, ``12h``, ``7d``) or a time (ISO 8601, UTC
    unless it says otherwise): the epoch second to stop at."""
    now = time.time() if now is None else now
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text or "")
    if m:
        return now + float(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    try:
        t = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"--until {text!r}: a duration (90s, 30m, 12h, 7d) or a time (2026-12-24T18:00)") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.timestamp()


@dataclass
class LadderRun:
    played: int = 0  # partie accepted by this run
    rated: int = 0  # groups rated by this run
    failed: list[tuple[str, str]] = field(default_factory=list)  # (unit id, why)
    interrupted: bool = False
    seconds: float = 0.0
    resumed: int = 0  # partie found finished and recorded at the start (a run killed before it recorded them)
    worker_cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds the workers reported, by part


class Runner:
    """One ``marias ladder run`` (see the module docstring)."""

    def __init__(self, ladder: LadderFolder, *, workers: int | None = None, cluster: str | None = None,
                 warm: bool = True, sign_key=None, stream: TextIO | None = None, interval: float = 10.0,
                 groups: int | None = None, until: float | None = None):
        self.ladder = ladder
        self.out = ladder.path
        self.logs = ladder.logs_dir
        self.settings = ladder.config()
        self.seed = ladder.seed()
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.cluster = cluster
        self.warm = warm
        self.sign_key = sign_key
        self.sign_paths: tuple[str, ...] = ()
        self.stream = stream
        self.interval = interval
        self.groups_cap = groups
        self.until = until
        self.run = LadderRun()
        self.groups: dict[int, Planned] = {}  # the groups this run plays (planned, not yet finished)
        self.units: dict[str, tuple[Planned, str]] = {}  # unit id -> (group, seating)
        self.configs: dict[int, object] = {}  # table -> its TournamentConfig
        self.planned_here = 0
        self.last_line = 0.0
        self.con = None
        self.queue: list[list] = []  # the chains of the table being played, not yet sent
        self.idle_said = False
        self.last_compress = 0.0

    # ------------------------------------------------------------------ messages
    def say(self, text: str) -> None:
        if self.stream is not None:
            self.stream.write(text + "\n")
            self.stream.flush()

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.stream is None or (not force and now - self.last_line < self.interval):
            return
        self.last_line = now
        board = [r for r in self.ladder.leaderboard() if r["status"] == "active"]
        lead = f"{board[0]['id']} {board[0]['rating']:.1f} ± {board[0]['rating'] - board[0]['low']:.1f}" if board else "-"
        self.say(f"ladder: {self.run.rated} groups rated and {self.run.played} partie by this run; "
                 f"{len(board)} active; leader {lead}")

    # ------------------------------------------------------------------ tables
    def table_config(self, table: int, versions: tuple[str, str, str]):
        """The tournament configuration a table's partie are played under (its three versions as bots)."""
        from ..matches.match import Limits
        from ..matches.secrecy import SECRET
        from ..seats.resources import SandboxLimits
        from ..tournaments.tournament_config import BotEntry, TournamentConfig

        rows = {v["id"]: v for v in self.ladder.versions()}
        t = self.settings["time"]
        cfg = TournamentConfig(
            bots=[BotEntry(name=v, command=rows[v]["command"], cwd=rows[v]["cwd"]) for v in versions],
            name=f"ladder {self.out.name} table {table}",
            seed=hmac.new(self.seed.encode(), b"bots", hashlib.sha256).hexdigest()[:32],
            limits=Limits(startup_ms=int(t["startup_ms"]), move_ms=int(t["move_ms"]),
                          bank_ms=None if t.get("bank_ms") is None else int(t["bank_ms"]),
                          increment_ms=int(t.get("increment_ms") or 0),
                          stderr_cap=int(self.settings["stderr_kb"]) * 1024),
            max_faults=int(self.settings["max_faults"]), output=self.out, base_dir=Path("."),
            source=str(self.out / "ladder.json"), sandbox=str(self.settings["sandbox"]), bot_limits=SandboxLimits(),
            seed_kind=SECRET, seed_file=self.ladder.seed_path(), private_paths=self.sign_paths,
            cluster=self.cluster, warm=self.warm)
        return cfg

    def changed_versions(self, versions) -> list[str]:
        """The versions whose files changed since they were added (or cannot be read now): suspended, named."""
        from ..seats.identity import IdentityError
        from .folder import bot_entry, fingerprint_of

        rows = {v["id"]: v for v in self.ladder.versions()}
        stored = {v.id: v.fingerprint for v in self.ladder.playing()}
        bad = []
        for v in versions:
            try:
                now, _ = fingerprint_of(bot_entry(v, rows[v]["command"], rows[v]["cwd"]))
            except IdentityError as e:
                bad.append((v, f"its files cannot be read ({e})"))
                continue
            if now != stored.get(v):
                bad.append((v, f"its files changed since it was added (fingerprint {str(stored.get(v))[:12]} then, "
                               f"{now[:12]} now); add it again as a new version"))
        for v, why in bad:
            self.ladder.set_status(v, "suspended", f"suspended: {why}")
            self.say(f"{v}: suspended: {why}")
        return [v for v, _ in bad]

    def plan_table(self) -> list[list]:
        """Draw a table, plan its groups (in the database) and return its chains of units; [] when
        fewer than three versions are active (or the run's group budget is spent)."""
        con = self.con
        for _ in range(5):  # a version whose files changed is suspended and the table drawn again
            if self.groups_cap is not None and self.planned_here >= self.groups_cap:
                return []
            if self.until is not None and time.time() >= self.until:
                return []
            cands, meetings = store.pairing_input(con)
            table = store.next_table(con)
            versions = pair(cands, meetings, table, int(self.settings.get("cover_every") or 0))
            if versions is None:
                return []
            if self.changed_versions(versions):
                continue
            cfg = self.table_config(table, versions)
            k = int(self.settings["groups_per_table"])
            if self.groups_cap is not None:
                k = min(k, self.groups_cap - self.planned_here)
            planned = []
            for _ in range(max(1, k)):
                g = store.plan_group(con, table, versions)
                self.planned_here += 1
                planned.append(g)
            self.configs[table] = cfg
            return self.chains_of(planned, cfg)
        return []

    def chains_of(self, planned: list[Planned], cfg) -> list[list]:
        """The units of ``planned`` (groups of one table) not yet done, as chains: one per seating over
        the groups' decks (warm), or one unit each (cold)."""
        from ..tournaments.units import Unit

        chains: dict[str, list] = {}
        for g in planned:
            self.groups[g.n] = g
            for s in SEATINGS:
                uid = unit_id(g.n, s)
                if uid in g.done:
                    continue
                self.units[uid] = (g, s)
                u = Unit(uid, g.table, g.versions, tuple(int(c) for c in s), g.n, group_seed(self.seed, g.n), 0)
                chains.setdefault(s if self.warm else uid, []).append(u)
        return list(chains.values())

    # ------------------------------------------------------------------ resuming
    def resume(self) -> list[list]:
        """The groups a previous run left ``playing``: logs finished but not recorded are validated in
        full and recorded; the rest are cleared, to be played again (as chains)."""
        from ..tournaments.units import check_unit_log

        out = []
        by_table: dict[int, list[Planned]] = {}
        for g in store.playing_groups(self.con):
            by_table.setdefault(g.table, []).append(g)
        for table, groups in by_table.items():
            versions = groups[0].versions
            cfg = self.table_config(table, versions)
            self.configs[table] = cfg
            for g in groups:
                for s in SEATINGS:
                    uid = unit_id(g.n, s)
                    if uid in g.done:
                        continue
                    path = self.logs / f"{uid}.jsonl"
                    seats = [g.versions[int(c)] for c in s]
                    if path.exists() and check_unit_log(path, seats=seats) is None:
                        self.accept_file(g, s, path)
                        self.run.resumed += 1
                    else:
                        self.remove(uid)
            status = {v["id"]: v["status"] for v in self.ladder.versions()}
            still = [g for g in groups if g.n not in self.rated_now()]
            if still and any(status.get(v) not in ("active", "retired") for v in versions):
                for g in still:  # a retired version's groups are finished, as in a run that goes on; not a suspended one's
                    store.void_group(self.con, g, "a version of it was suspended before it was finished")
                continue
            out += self.chains_of(still, cfg)
        return out

    def rated_now(self) -> set[int]:
        return {n for (n,) in self.con.execute("SELECT n FROM groups WHERE status!='playing'")}

    # ------------------------------------------------------------------ accepting
    def remove(self, uid: str) -> None:
        for p in self.logs.glob(f"{uid}.*"):
            p.unlink(missing_ok=True)

    def accept_file(self, g: Planned, seating: str, path: Path, result: dict | None = None) -> None:
        """Record a partie whose log was checked (``result``: its worker's report, else read from the log)."""
        from ..seats.identity import file_sha256
        from ..tournaments.units import log_totals

        if result is not None:
            sha, totals, faults = result["sha256"], list(result["totals"]), list(result.get("seat_faults") or [0, 0, 0])
        else:
            sha = file_sha256(path)
            totals = list(log_totals(path)[1])  # type: ignore[index]
            faults = log_faults(path)
        for p in self.logs.glob(f"{path.name[:-len('.jsonl')]}.seat*.stderr.log"):
            if p.stat().st_size == 0:  # only what a bot said is kept
                p.unlink(missing_ok=True)
        change = store.accept_unit(self.con, g, seating, f"{LOGS_DIR}/{path.name}", sha, totals, faults)
        self.units.pop(unit_id(g.n, seating), None)  # recorded: no longer this run's to abandon
        self.run.played += 1
        if change is not None:
            self.run.rated += 1
            self.groups.pop(g.n, None)
        for v in set(g.versions):
            why = store.suspend_if_faulty(self.con, v, self.settings["suspend"])
            if why:
                self.say(f"{v}: {why}")

    def accept(self, uid: str, result: dict) -> None:
        from ..tournaments.units import Unit, quick_check_unit_log

        g, s = self.units[uid]
        path = self.logs / f"{uid}.jsonl"
        u = Unit(uid, g.table, g.versions, tuple(int(c) for c in s), g.n, "", 0)
        why = result.get("valid") or quick_check_unit_log(path, u, result)
        if why is not None:
            kept = self.out / INVALID_DIR / f"{path.name}.invalid"
            if path.exists():
                kept.parent.mkdir(exist_ok=True)
                os.replace(path, kept)
            self.fail(uid, g, f"its log does not check ({why}); kept as {kept}", None)
            return
        for k, v in (result.get("cpu") or {}).items():  # what the workers spent (marias bench ladder)
            self.run.worker_cpu[k] = self.run.worker_cpu.get(k, 0.0) + v
        self.accept_file(g, s, path, result)

    def fail(self, uid: str, g: Planned, why: str, culprit: str | None) -> None:
        self.units.pop(uid, None)
        self.remove(uid)
        self.run.failed.append((uid, why))
        who = None
        if culprit:
            name = culprit.split(" (")[0]
            who = name if name in g.versions else None
        store.void_group(self.con, g, f"{uid}: {why}", who)
        self.say(f"{uid}: failed: {why.splitlines()[0] if why.strip() else why}; group {g.n} is void")
        if who:
            why2 = store.suspend_if_faulty(self.con, who, self.settings["suspend"])
            if why2:
                self.say(f"{who}: {why2}")

    # ------------------------------------------------------------------ jobs
    def jobs_of(self, chain: list) -> tuple[list[dict], list[float], list[tuple], list[tuple]]:
        from ..tournaments import tournament as T

        cfg = self.configs[chain[0].table]
        jobs = [T.unit_job(cfg, u, self.logs, self.sign_key, lanes=(0, 0, 0)) for u in chain]
        if self.warm:
            jobs[0]["warm_partie"] = cfg.warm_partie
        walls = [T.unit_wall_seconds(cfg, u) for u in chain]
        return jobs, walls, [u.seats for u in chain], [tuple(tuple(s.argv) for s in j["specs"]) for j in jobs]

    def on_results(self, chain: list, outcome_ok: bool, results: list, why: str = "", culprit: str | None = None) -> None:
        by_id = {u.id: u for u in chain}
        if not outcome_ok:
            for u in chain:
                if u.id in self.units:
                    self.fail(u.id, self.units[u.id][0], why, culprit)
            return
        for r in results:
            if r.get("id") not in by_id or r["id"] not in self.units:
                continue
            by_id.pop(r["id"])
            if "error" in r:
                self.fail(r["id"], self.units[r["id"]][0], f"error: {r['error']}", None)
            else:
                self.accept(r["id"], r)
        for u in by_id.values():  # none, unless a chain returned fewer results than units
            if u.id in self.units:
                self.fail(u.id, self.units[u.id][0], "no result came back for it", None)

    # ------------------------------------------------------------------ the loop
    def stopping(self) -> bool:
        if self.until is not None and time.time() >= self.until:
            return True
        return self.groups_cap is not None and self.planned_here >= self.groups_cap

    def start(self) -> None:
        """Before play: the groups a stopped run left in play are taken up again."""
        self.queue = self.resume()
        if self.run.resumed:
            self.say(f"resumed: {self.run.resumed} finished partie recorded now")
        if self.queue:
            self.say(f"resuming {len(self.groups)} unfinished group(s)")

    def next_chain(self) -> list | None:
        """The next chain of units to play: the current table's, else a new table's; None when no
        table can be drawn (fewer than three active versions, or the run's budget is spent)."""
        while True:
            if not self.queue:
                self.queue = self.plan_table()
            if not self.queue:
                return None
            chain = self.queue.pop(0)
            g = self.units[chain[0].id][0]
            suspended = [v for v, in self.con.execute(
                "SELECT id FROM versions WHERE status='suspended' AND id IN (?,?,?)", g.versions)]
            if not suspended:
                return chain
            for u in chain:  # a suspended version's groups not yet played are void, not played on
                group = self.units.pop(u.id)[0]
                store.void_group(self.con, group, f"{', '.join(suspended)} was suspended before it was finished")

    def idle(self) -> bool:
        """Nothing in play and nothing to draw: False when the run is over, else wait a little."""
        if self.stopping():
            return False
        if not self.idle_said:
            self.say("waiting: fewer than three active versions (marias ladder add ... adds one)")
            self.idle_said = True
        time.sleep(IDLE_S)
        return True

    def maintain(self) -> None:
        """Between outcomes: old groups' logs gzipped (once a minute at most), what this run holds of
        finished tables let go (it runs for weeks), progress."""
        if time.monotonic() - self.last_compress > COMPRESS_EVERY_S:
            self.last_compress = time.monotonic()
            compress_old(self.con, self.out, float(self.settings["compress_after_hours"]))
            live = {g.n: g for g, _ in self.units.values()}
            self.groups = {n: g for n, g in self.groups.items() if n in live}
            tables = {g.table for g in live.values()}
            self.configs = {t: c for t, c in self.configs.items() if t in tables}
        self.tick()

    def abandon(self) -> None:
        """Stopped (its workers ended first, so that nothing writes any more): every partie of this
        run not recorded leaves nothing behind — the next run plays it again.  A partie the database
        holds is never touched, whatever this run believed of it."""
        self.run.interrupted = True
        self.say("stopping: the partie in progress are abandoned (`marias ladder run` again goes on with them)")
        recorded = {uid for (uid,) in self.con.execute("SELECT id FROM units WHERE grp IN (%s)" % ",".join(
            str(int(g.n)) for g in {g.n: g for g, _ in self.units.values()}.values()))} if self.units else set()
        for uid in list(self.units):
            if uid not in recorded:
                self.remove(uid)
        self.units.clear()

    def play(self, close_fds=()) -> None:
        """The local pool: at most ``workers`` chains in flight."""
        from ..seats.pool import Pool, Task
        from ..tournaments import tournament as T

        self.start()
        T.import_for_workers()
        running: dict[str, list] = {}
        pool = Pool(T.play_chain if self.warm else T.play_unit, self.workers, retries=1, close_fds=close_fds,
                    on_retry=lambda o: [self.remove(u.id) for u in running.get(o.key, ())])
        try:
            while True:
                while len(running) < self.workers and (chain := self.next_chain()) is not None:
                    jobs, walls, seats, argvs = self.jobs_of(chain)
                    key = f"chain:{chain[0].id}"
                    pool.submit(Task(key, jobs if self.warm else jobs[0], sum(walls), seats[0], argvs[0]))
                    running[key] = chain
                if not running:
                    if self.idle():
                        continue
                    break
                self.idle_said = False
                for o in pool.wait(0.5):
                    chain = running.pop(o.key)
                    results = (o.result if self.warm else [o.result]) if o.ok else []
                    self.on_results(chain, o.ok, results, o.describe(), o.culprit)
                self.maintain()
        except KeyboardInterrupt:
            pool.close()  # every worker and its bots ended before anything is removed
            self.abandon()
        finally:
            pool.close()

def log_faults(path: Path) -> list[int]:
    """Each seat's faults in a finished log (read when a run recorded a partie a killed one left)."""
    from ..logs.log import read_log

    records, _ = read_log(path)
    out = [0, 0, 0]
    for r in records:
        if r.get("type") == "deal":
            for f in r.get("faults") or []:
                if isinstance(f, dict) and f.get("seat") in (0, 1, 2):
                    out[f["seat"]] += 1
    return out


def run_ladder(path, *, workers: int | None = None, cluster: str | None = None, warm: bool = True,
               sign_key=None, sign_path=None, stream: TextIO | None = None, interval: float = 10.0,
               groups: int | None = None, until: float | None = None) -> LadderRun:
    """Play the ladder in ``path`` until ``groups`` more groups are planned and played, ``until``
    (epoch seconds) passes, or Ctrl-C / SIGTERM.  ``sign_key``: an Ed25519 key (PEM path, raw
    bytes or key object) that signs every log; ``sign_path``: its file, hidden from every bot."""
    from ..seats.sandbox import mark_output

    from ..seats.sandbox import UNSANDBOXED_WARNING, SandboxUnavailable, resolve_mode

    ladder = LadderFolder.open(path)
    refuse_exposed(ladder.path)  # a ladder moved under /opt since its init: its seed would be read
    try:  # before anything is planned: a ladder made where bwrap works, run where none does
        if resolve_mode(str(ladder.config()["sandbox"])) == "none" and stream is not None:
            stream.write(f"marias: {UNSANDBOXED_WARNING}\n")
    except (SandboxUnavailable, ValueError) as e:
        raise LadderError(f"{ladder.path / 'ladder.json'}: sandbox: {e}") from None
    runner = Runner(ladder, workers=workers, cluster=cluster, warm=warm, stream=stream, interval=interval,
                    groups=groups, until=until)
    if sign_key is not None:
        from ..logs.seal import signing_key_bytes
        from ..matches.secrecy import hide_paths

        if isinstance(sign_key, (str, os.PathLike)):
            sign_path = sign_key
        if sign_path is not None:
            runner.sign_paths = tuple(hide_paths(sign_path))
        sign_key = signing_key_bytes(sign_key)
    runner.sign_key = sign_key
    mark_output(ladder.path)
    ladder.logs_dir.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    old_term = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    from ..tournaments.folder import FolderLock
    from ..tournaments.tournament_config import TournamentError

    lock = FolderLock(ladder.path)  # one run at a time, as a tournament's folder
    try:
        lock.__enter__()
    except TournamentError:
        raise LadderError(f"{ladder.path}: another `marias ladder run` is running on this ladder") from None
    try:
        runner.con = store_connection(ladder)
        signal.signal(signal.SIGTERM, on_term)
        try:
            if cluster:
                from .cluster import play_cluster

                play_cluster(runner)
            else:
                runner.play(close_fds=(lock.f.fileno(),))
        finally:
            signal.signal(signal.SIGTERM, old_term)
            runner.con.close()
    finally:
        lock.__exit__(None, None, None)
    runner.tick(force=True)
    runner.run.seconds = time.perf_counter() - t0
    return runner.run


def store_connection(ladder: LadderFolder):
    from .folder import connect

    return connect(ladder.db_file)
