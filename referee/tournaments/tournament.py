"""Tournaments: a field of bots, many partie, in parallel, resumable (protocol/TOURNAMENT.md).

A tournament is a list of *units*.  A unit is one partie (12 deals) at one table
in one seat arrangement: ``(table, partie index, arrangement)``.  Its cards are
fixed before anything is played (a seed, or a line of a deal book) and every
arrangement of a table's three bots plays the same starting deck — the
duplicate idea: over the arrangements each bot holds each seat's cards once, so
the luck of the cards cancels.

Each unit is one call of :func:`referee.matches.match.run_match` writing its own log,
``<output>/logs/<unit id>.jsonl``.  A unit counts as played only when that log is
complete and validates (:func:`referee.logs.validate.validate_file`); anything else is
removed and played again.  So a tournament stopped at any moment — Ctrl-C, a
crash, ``kill -9`` — is finished by running the same command again, and no
partie is lost or counted twice.  The configuration is stored in the output
folder (``tournament.json``); a different configuration is refused, key by key.
The configuration itself (YAML file or flags, checked key by key) is
:mod:`referee.tournaments.tournament_config`.

Standings and every other table are computed from the logs alone
(:mod:`referee.tournaments.standings`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from . import results
from .event import EventFolder
from .failures import cause as failure_cause
from .folder import (  # the output folder's files; callers may reach these as referee.tournaments.tournament.X too
    FolderLock, INVALID_DIR, JOURNAL_FILE, LOCK_FILE, LOGS_DIR, MANIFEST_FILE, MANIFEST_FORMAT, STATE_FILE,
    STATE_FORMAT, journal, journal_add, read_manifest, write_json,
)
from ..logs import files
from ..rules.cards import Card
from ..seats.identity import file_sha256
from ..matches.match import FaultPolicy, MatchConfig, run_match
from ..seats.pool import Outcome, Pool, Task
from ..seats.sandbox import mark_output
from ..matches.secrecy import PUBLIC, SECRET
from .units import (  # a unit and its log; callers may reach these as referee.tournaments.tournament.X too
    Unit, check_chain, check_unit_log, log_ends, log_totals, quick_check_unit_log, remove_unit_files, unit_log,
)
from .tournament_config import (  # the configuration; callers may reach these as referee.tournaments.tournament.X too
    HEAD_TO_HEAD, ARRANGEMENTS, CLUSTER_RE, ConfigError, TournamentError,
    TournamentConfig, load_config, config_from_options, check_commands, canonical,
    diff_config, tables, deck_slots, default_id_width, stopping_rule_changes,
)

MAX_DECISIONS_PER_DEAL = 100
#: CPU seconds the workers reported with their units, by part (referee, logging, validation, bots, bots_start,
#: worker: a worker's whole CPU, summed over the last unit of each worker); read by the benchmark.
WORKER_CPU: dict[str, float] = {}
UNIT_MARGIN_S = 60.0  # added to a unit's wall-clock limit (worker start, validation, a loaded machine)


def plan_units(cfg: TournamentConfig) -> list[Unit]:
    """Every unit, ordered partie index first (so standings fill evenly), then table, then arrangement.

    The seed must be set (``prepare_output`` draws one when the configuration has none)."""
    if cfg.seed is None:
        raise ValueError("the tournament has no seed yet: prepare_output draws one, or give seed")
    tbs = tables(cfg)
    arrs = ARRANGEMENTS[cfg.arrangements]
    tw = max(2, len(str(len(tbs))))
    pw = cfg.id_width or default_id_width(cfg)  # kept when the partie count grows: played units keep their ids
    units = []
    for k in range(1, cfg.partie + 1):
        for t, tb in enumerate(tbs, 1):
            if cfg.deck_scope == "tournament":
                match_seed, slot = f"{cfg.seed}:{k}", k - 1
            else:
                match_seed, slot = f"{cfg.seed}:t{t}:{k}", (t - 1) * cfg.partie + (k - 1)
            for arr in arrs:
                uid = f"t{t:0{tw}d}-p{k:0{pw}d}-s{''.join(map(str, arr))}"
                units.append(Unit(uid, t, tb, arr, k, match_seed, slot))
    return units


# ------------------------------------------------------------------ playing one unit (in a worker process)

def unit_seed(cfg: TournamentConfig, unit: Unit, bot: str) -> str:
    """The seed of a built-in random bot without its own: derived from the tournament seed by a
    hash, so that a bot's command line (visible to other processes without a sandbox) never shows it."""
    return hashlib.sha256(f"{cfg.seed}:{unit.id}:{bot}".encode()).hexdigest()[:16]


def workdir_lanes(cfg: TournamentConfig, unit: Unit) -> tuple[int, int, int]:
    """For each seat, the lane (0-based) of its bot's persistent ``workdir``: the sub-folder
    ``lane-N`` it plays in.  No two of a bot's instances that start from the same deck share a
    lane — not the arrangements of one table's partie, nor (``decks.scope: tournament``) the
    tables that deal the same deck — so what one saw of a deck no other reads; each lane keeps
    what the bot learnt from every other deck it played there.

    With scope ``table`` a bot sits once in every arrangement of its table: the lane is the
    arrangement's index.  With scope ``tournament`` it is (the table's rank among the bot's
    tables) x arrangements + the arrangement's index."""
    arrs = ARRANGEMENTS[cfg.arrangements]
    i = arrs.index(tuple(unit.arrangement))
    if cfg.deck_scope != "tournament":
        return (i, i, i)
    tbs = tables(cfg)
    out = []
    for name in unit.seats:
        mine = [t for t, tb in enumerate(tbs, 1) if name in tb]
        out.append(mine.index(unit.table) * len(arrs) + i)
    return tuple(out)  # type: ignore[return-value]


def lane_folder(root: str, lane: int) -> str:
    return str(Path(root) / f"lane-{lane + 1}")


def unit_job(cfg: TournamentConfig, unit: Unit, logs: Path, sign_key: bytes | None = None,
             lanes: tuple[int, int, int] | None = None) -> dict:
    """Everything a worker needs to play ``unit`` (plain data).  ``lanes``: each seat's
    workdir lane (:func:`workdir_lanes` unless given; a head-to-head test gives its own)."""
    fps = cfg.fingerprints()
    specs = [cfg.bot(n).spec(cfg.base_dir, seed=unit_seed(cfg, unit, n), fingerprint=fps[n]) for n in unit.seats]
    for spec in specs:  # a built-in random bot seeded per unit: the seed goes in partie_start too (a warm bot plays many)
        if spec.builtin == "random" and cfg.bot(spec.label).command == "random":
            spec.partie_seed = spec.argv[-1]
    if any(s.workdir for s in specs):
        lanes = lanes if lanes is not None else workdir_lanes(cfg, unit)
        for spec, lane in zip(specs, lanes):
            if spec.workdir:
                spec.workdir = lane_folder(spec.workdir, lane)
    deck = cfg.decks[unit.deck_slot] if cfg.decks is not None else None
    return {"id": unit.id, "specs": specs, "seed": unit.match_seed, "seed_kind": cfg.seed_kind, "partie": unit.partie,
            "deck": [int(c) for c in deck] if deck is not None else None, "limits": cfg.limits,
            "max_faults": cfg.max_faults, "log": str(logs / f"{unit.id}.jsonl"), "seats": list(unit.seats),
            "sign_key": sign_key,
            "sandbox": cfg.sandbox, "sandbox_limits": cfg.bot_limits, "sandbox_hide": sandbox_hide(cfg)}


def sandbox_hide(cfg: TournamentConfig) -> tuple[str, ...]:
    """What no bot of the tournament may see: its output folder, its deal book (every hand is in it),
    its seed file, its configuration file, the signing key, and every bot's persistent workdir
    (each bot's own lane is mounted back for it alone)."""
    from ..matches.secrecy import hide_paths

    workdirs = [str((cfg.base_dir / b.workdir).resolve()) for b in cfg.bots if b.workdir]
    return hide_paths(cfg.output, cfg.deck_book, cfg.seed_file, cfg.config_file, *cfg.private_paths, *workdirs)


def unit_wall_seconds(cfg: TournamentConfig, unit: Unit) -> float:
    """The wall-clock limit of one unit: every start-up a partie can need (each seat started once
    and restarted after each of its faults), every decision at its time limit, and a margin."""
    bots = [cfg.bot(n) for n in unit.seats]
    move = max(b.move_ms or cfg.limits.move_ms for b in bots)
    startup = max(b.startup_ms or cfg.limits.startup_ms for b in bots)
    starts = 3 * (1 + cfg.max_faults)
    return (starts * startup + 12 * MAX_DECISIONS_PER_DEAL * move) / 1000 + UNIT_MARGIN_S


def play_unit(job: dict, warm=None) -> dict:
    """Play one unit (one partie) with :func:`run_match`, then validate its log (here, in the worker,
    so that the parent stays light).  ``valid`` is None for a valid log, else the first problem.
    ``warm``: a :class:`referee.matches.match.WarmSeats` whose bots go on from the chain's previous unit."""
    deck = [Card(c) for c in job["deck"]] if job["deck"] is not None else None
    log = Path(job["log"])
    config = MatchConfig(bots=job["specs"], partie=1, seed=job["seed"], decks=[deck] if deck else None,
                         limits=job["limits"], policy=FaultPolicy(max_faults=job["max_faults"]), log_path=log,
                         sign_key=job.get("sign_key"), sandbox=job["sandbox"], sandbox_limits=job["sandbox_limits"],
                         sandbox_hide=job["sandbox_hide"], seed_kind=job.get("seed_kind"), warm=warm)
    from ..logs.log import LOG_CPU
    from ..seats.process import BOT_CPU

    t0, c0, b0, s0, l0 = time.perf_counter(), time.process_time(), BOT_CPU["total"], BOT_CPU["start"], LOG_CPU["total"]
    result = run_match(config)
    seconds = time.perf_counter() - t0
    c1 = time.process_time()
    logging = LOG_CPU["total"] - l0  # writing the log (each line sealed, flushed and fsynced): apart from the referee
    why = check_unit_log(log, seats=job.get("seats"))
    cpu = {"referee": c1 - c0 - logging, "logging": logging, "validation": time.process_time() - c1,
           "bots": BOT_CPU["total"] - b0, "bots_start": BOT_CPU["start"] - s0,
           "worker": time.process_time()}  # worker: all its CPU so far
    return {"cpu": cpu,"id": job["id"], "names": [s.label for s in job["specs"]], "totals": result.totals,
            "faults": len(result.faults), "seat_faults": [sum(1 for f in result.faults if f.get("seat") == s) for s in range(3)],
            "fault_texts": [f"{job['id']}: {f['text']}" for f in result.faults[:3]],
            "seconds": seconds, "valid": why,
            "sha256": file_sha256(log) if log.exists() else None}


def play_chain(jobs: list[dict]) -> list[dict]:
    """Play a *chain* of units (one table and seat arrangement, different decks: :func:`plan_chains`)
    one after the other, the bots kept running from one to the next (warm); a unit that raises is
    reported as ``{"id", "error"}`` and the chain goes on with fresh bots."""
    import traceback

    from ..matches.match import WarmSeats

    from ..seats.process import BOT_CPU

    warm = WarmSeats(max_partie=jobs[0].get("warm_partie", 0) if jobs else 0)
    out: list[dict] = []
    try:
        for job in jobs:
            try:
                out.append(play_unit(job, warm))
            except Exception as e:  # this unit fails; the next starts its bots afresh
                warm.close()
                warm = WarmSeats(max_partie=warm.max_partie)
                out.append({"id": job["id"], "error": f"{type(e).__name__}: {e}",
                            "traceback": traceback.format_exc(limit=6)})
    finally:
        b0 = BOT_CPU["total"]
        warm.close()
    for r in out[:-1]:
        if "cpu" in r:
            r["cpu"]["worker"] = 0.0  # counted once, with the last unit (it is the worker's CPU so far)
    if out and "cpu" in out[-1]:  # the bots ended after the last unit: their CPU is the chain's, put on its last
        out[-1]["cpu"]["bots"] += BOT_CPU["total"] - b0
        out[-1]["cpu"]["worker"] = time.process_time()
    return out


def plan_chains(units: list[Unit], workers: int, longest: int = 12) -> list[list[Unit]]:
    """The units cut into chains a worker plays with the same bot processes: one table and seat
    arrangement (the same bots in the same seats), each unit a different starting deck — so that no
    process ever plays two arrangements of one deck (it would remember the deal).  Chains are at
    most ``longest`` units, and short enough that ``workers`` workers all have some (about three
    chains per worker when there are few units); in plan order of their first unit."""
    groups: dict[tuple, list[Unit]] = {}
    for u in units:
        groups.setdefault((u.table, u.arrangement), []).append(u)
    per = max(1, min(longest, len(units) // max(1, 3 * workers)))
    chains: list[list[Unit]] = []
    for g in groups.values():
        chain: list[Unit] = []
        decks: set = set()
        for u in g:
            deck = (u.deck_slot, u.match_seed)
            if len(chain) >= per or deck in decks:
                chains.append(chain)
                chain, decks = [], set()
            chain.append(u)
            decks.add(deck)
        if chain:
            chains.append(chain)
    order = {u.id: i for i, u in enumerate(units)}
    chains.sort(key=lambda c: order[c[0].id])
    return chains


# ------------------------------------------------------------------ the output folder

def manifest(cfg: TournamentConfig) -> dict:
    """The planned units: id, log file (relative to the output folder), table, partie, seats."""
    return {"format": MANIFEST_FORMAT, "version": 1, "name": cfg.name,
            "units": [{"id": u.id, "log": f"{LOGS_DIR}/{u.id}.jsonl", "table": u.table, "partie": u.partie,
                       "seats": list(u.seats)} for u in plan_units(cfg)]}


def prepare_output(cfg: TournamentConfig, *, resume: bool = False) -> str:
    """Create or check ``cfg.output``: 'new' or 'resume'.  A changed configuration is refused, and so
    is a bot whose fingerprint changed (unless ``cfg.allow_changed_bots``).  Without a seed, a new
    tournament draws one (``secrets.token_hex(16)``) and a resumed one takes the stored one."""
    out = cfg.output
    state = out / STATE_FILE
    if state.exists():
        try:
            old = EventFolder(out).state()
        except ValueError as e:
            raise TournamentError(f"{e}; use another output folder") from None
        old_cfg = old["config"]
        if cfg.seed is None:
            cfg.seed = str(old_cfg.get("seed"))
            cfg.seed_kind = old.get("decks") or (SECRET if old.get("seed_drawn") else PUBLIC)
        cfg.id_width = old.get("id_width") or default_id_width(old_cfg)
        canon = canonical(cfg)
        extended, changes = stopping_rule_changes(old_cfg, canon)
        what = "a duel" if old_cfg.get("format") == HEAD_TO_HEAD else "a tournament"
        bot_changes = [c for c in changes if c.startswith("fingerprints.")]
        listings = fingerprint_listings(cfg)
        if bot_changes and cfg.allow_changed_bots:
            changes = [c for c in changes if not c.startswith("fingerprints.")]
        if changes:
            hint = ""
            if bot_changes:
                hint = ("\nWhat changed in the bots' files since the tournament started:\n  "
                        + "\n  ".join(explain_bot_changes(cfg, old.get("fingerprint_listings"), listings, bot_changes)))
            if changes == bot_changes:
                hint += ("\nA bot's files changed since the tournament started; pass --allow-changed-bots to go on "
                         "with the new version (its partie of both versions are then counted together).")
            if extended:
                hint += ("\n(" + ", ".join(c.split(":", 1)[0] for c in extended) + " may change on a resume: "
                         + ("the test's bounds and budget" if what == "a duel" else "more partie") + "; the rest may not.)")
            raise TournamentError(
                f"{out} holds {what} with another configuration ({state}); changed:\n  " + "\n  ".join(changes)
                + f"\nRestore the configuration to {'continue that duel' if what == 'a duel' else 'finish that tournament'}, "
                  "or choose another output folder." + hint)
        rewrite = False
        if extended:  # a larger budget or other bounds: the games already planned stay as they are
            old["config"] = dict(canon)
            old["id_width"] = cfg.id_width
            old["config_sha256"] = hashlib.sha256(json.dumps(canon, sort_keys=True).encode()).hexdigest()
            old.setdefault("extensions", []).append(
                {"t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "changed": extended})
            cfg.extended = list(extended)
            if canon.get("format") != HEAD_TO_HEAD:
                units = plan_units(cfg)
                old["units"], old["deals"] = len(units), 12 * len(units)
                write_json(out / MANIFEST_FILE, manifest(cfg))
            rewrite = True
        if bot_changes:  # allowed: the stored fingerprints follow, and the change is on record
            old["config"]["fingerprints"] = canon["fingerprints"]
            old.setdefault("bot_changes", []).append(
                {"t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "changed": bot_changes,
                 "files": explain_bot_changes(cfg, old.get("fingerprint_listings"), listings, bot_changes)})
        if rewrite or bot_changes or old.get("fingerprint_listings") != listings:  # listings: to explain a change
            old["fingerprint_listings"] = listings
            write_json(state, old)
        if not (out / MANIFEST_FILE).exists():
            write_json(out / MANIFEST_FILE, manifest(cfg))
        return "resume"
    if resume:
        raise TournamentError(f"nothing to resume: {out} holds no tournament ({STATE_FILE} is missing)")
    logs = out / LOGS_DIR
    if logs.is_dir() and any(logs.rglob("*.jsonl")):
        raise TournamentError(f"{out} holds logs but no {STATE_FILE}; choose an empty or new output folder")
    if cfg.seed is None:
        cfg.seed = secrets.token_hex(16)
        cfg.seed_drawn = True
    out.mkdir(parents=True, exist_ok=True)
    cfg.id_width = cfg.id_width or default_id_width(cfg)
    canon = canonical(cfg)
    units = plan_units(cfg)
    body = {"format": STATE_FORMAT, "version": 1, "config": canon, "id_width": cfg.id_width,
            "config_sha256": hashlib.sha256(json.dumps(canon, sort_keys=True).encode()).hexdigest(),
            "seed_drawn": cfg.seed_drawn, "decks": cfg.seed_kind, "fingerprint_listings": fingerprint_listings(cfg),
            "source": cfg.source, "units": len(units), "deals": 12 * len(units),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    write_json(out / MANIFEST_FILE, manifest(cfg))
    write_json(state, body)
    return "new"


def announce_seed(cfg: TournamentConfig, state: str, say: Callable[[str], None] | None) -> None:
    """Once the seed is known (drawn, stored or given) and before anything is played: with
    ``cfg.commit`` its SHA-256 on stdout (to publish; the seed itself only at the end), otherwise
    the seed on ``say`` (stderr); and whether the decks are public."""
    import sys

    from ..rules.partie import seed_sha256

    how = ("drawn at random" if cfg.seed_drawn else "stored" if state == "resume" and cfg.seed_file is None
           else "read from " + str(cfg.seed_file) if cfg.seed_file is not None else "given")
    if cfg.commit:
        sys.stdout.write(f"seed sha256: {seed_sha256(cfg.seed)}\n")
        sys.stdout.flush()
        if say is not None:
            say(f"seed committed ({how}; decks: {cfg.seed_kind}); revealed when the play is over")
    elif say is not None:
        say(f"seed {cfg.seed} ({how}; kept in {cfg.output / STATE_FILE}; decks: {cfg.seed_kind})")


def fingerprint_listings(cfg: TournamentConfig) -> dict[str, list[str]]:
    """Each bot's fingerprint listing (:func:`referee.seats.identity.listing`: a line per file hashed), stored
    in tournament.json so that a refused resume can say which of a bot's files changed."""
    from ..seats.identity import IdentityError, spec_listing

    out = {}
    for b in cfg.bots:
        try:
            out[b.name] = spec_listing(b.spec(cfg.base_dir, seed="0"))
        except IdentityError as e:
            raise ConfigError([f"{cfg.source}: bot {b.name!r}: {e}"]) from None
    return out


def explain_bot_changes(cfg: TournamentConfig, old: dict | None, new: dict[str, list[str]],
                        bot_changes: list[str]) -> list[str]:
    """One line per changed bot: its name, its command and which of its files changed."""
    from ..seats.identity import listing_changes

    lines = []
    for change in bot_changes:
        name = change[len("fingerprints."):].split(":", 1)[0]
        if name not in new:
            continue
        spec = cfg.bot(name).spec(cfg.base_dir, seed="0")
        who = f"bot {name!r} ({' '.join(spec.argv) if spec.builtin is None else 'built-in ' + spec.builtin})"
        if not old or name not in old:
            lines.append(f"{who}: its files changed (this tournament was started by a marias that did not record "
                         f"which; the fingerprint now also covers the folder of the bot's script and its #! "
                         f"interpreter, so check the bot; if it did not change, pass --allow-changed-bots)")
            continue
        what = listing_changes(old[name], new[name], spec.argv, spec.fingerprint_paths)
        lines.append(f"{who}: " + ("; ".join(what[:12]) + (f"; and {len(what) - 12} more" if len(what) > 12 else "")
                                   if what else "its files changed"))
    return lines


# ------------------------------------------------------------------ progress

class Progress:
    """partie done / total, ETA and the current leader on stderr: one updating line on a tty,
    a line every ``interval`` seconds otherwise."""

    def __init__(self, total: int, done: int, stream: TextIO | None = None, interval: float = 10.0):
        self.total = total
        self.done = done
        self.start_done = done
        self.stream = stream
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.interval = interval
        self.t0 = time.monotonic()
        self.last = 0.0
        self.groše: dict[str, int] = {}
        self.played: dict[str, int] = {}

    def add(self, names, totals) -> None:
        for n, g in zip(names, totals):
            self.groše[n] = self.groše.get(n, 0) + g
            self.played[n] = self.played.get(n, 0) + 1

    def leader(self) -> str:
        if not self.played:
            return "-"
        best = max(self.played, key=lambda n: (self.groše[n] / self.played[n], n))
        return f"{best} {self.groše[best] / self.played[best]:+.1f}/partie"

    def line(self) -> str:
        el = time.monotonic() - self.t0
        new = self.done - self.start_done
        eta = "-"
        if new > 0 and self.done < self.total:
            s = el / new * (self.total - self.done)
            eta = f"{int(s // 3600)}:{int(s % 3600 // 60):02d}:{int(s % 60):02d}"
        width = 24
        fill = int(width * self.done / self.total) if self.total else width
        bar = "#" * fill + "." * (width - fill)
        return f"[{bar}] {self.done}/{self.total} partie  ETA {eta}  leader {self.leader()}"

    def show(self, force: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if self.tty:
            if force or now - self.last >= 0.2:
                self.stream.write("\r" + self.line().ljust(100)[:120])
                self.stream.flush()
                self.last = now
        elif force or now - self.last >= self.interval:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
            self.last = now

    def message(self, text: str) -> None:
        if self.stream is None:
            return
        if self.tty:
            self.stream.write("\r" + " " * 120 + "\r")
        self.stream.write(text + "\n")
        self.stream.flush()
        self.last = 0.0

    def finish(self) -> None:
        if self.stream is not None:
            self.show(force=True)
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()


# ------------------------------------------------------------------ the tournament

@dataclass
class TournamentRun:
    config: TournamentConfig
    state: str  # new | resume
    units: int
    done_before: int  # units already complete when this run started
    played: int  # units completed by this run
    failed: list[tuple[str, str]]  # (unit id, why: what happened and the bot most likely responsible)
    interrupted: bool
    seconds: float

    @property
    def done(self) -> int:
        return self.done_before + self.played

    @property
    def complete(self) -> bool:
        return self.done == self.units

    @property
    def logs(self) -> Path:
        return self.config.output / LOGS_DIR


def preflight(cfg: TournamentConfig) -> None:
    """Every bot of the field exists, starts and answers hello (:mod:`referee.matches.preflight`), or
    :class:`ConfigError` names each one that does not (its command and stderr tail)."""
    from ..matches.preflight import check_bots_apart

    problems = check_commands(cfg)
    if problems:
        raise ConfigError(problems)
    from ..seats.sandbox import SandboxConfig

    specs = [b.spec(cfg.base_dir, seed="preflight") for b in cfg.bots]
    for spec in specs:  # a fresh folder: the check needs no persistence, and must not reach every lane at once
        spec.workdir = None
    problems = check_bots_apart(specs, cfg.limits, SandboxConfig(cfg.sandbox, cfg.bot_limits, hide=sandbox_hide(cfg)))
    if problems:
        raise ConfigError(problems)


def run_tournament(cfg: TournamentConfig, *, resume: bool = False, stream: TextIO | None = None,
                   interval: float = 10.0, check: bool = True, sign_key=None) -> TournamentRun:
    """Play every unit not yet complete; progress on ``stream``.  Stops cleanly on Ctrl-C / SIGTERM.

    ``check``: first the pre-flight check of every bot (:func:`preflight`).  ``sign_key`` (an
    Ed25519 key: PEM path, raw bytes or key object) signs every unit's log."""
    if cfg.format == HEAD_TO_HEAD:
        raise TournamentError("format head-to-head is a sequential test: run it with referee.tournaments.duel.run_duel (marias duel)")
    if sign_key is not None:
        from ..logs.seal import signing_key_bytes
        from ..matches.secrecy import hide_paths

        if isinstance(sign_key, (str, os.PathLike)):  # its file, wherever it lies, no bot may see
            cfg.private_paths = tuple(dict.fromkeys((*cfg.private_paths, *hide_paths(sign_key))))
        sign_key = signing_key_bytes(sign_key)  # read once, before any bot starts; plain bytes travel to the workers
    if check:
        preflight(cfg)
    out = cfg.output
    out.mkdir(parents=True, exist_ok=True)
    mark_output(out)  # logs, results.sqlite, tournament.json: shown to no bot (referee/seats/sandbox.py)
    t0 = time.perf_counter()
    ev = EventFolder(out)
    with ev.lock() as lock:
        state = prepare_output(cfg, resume=resume)
        logs = out / LOGS_DIR
        logs.mkdir(exist_ok=True)
        units = plan_units(cfg)
        progress = Progress(len(units), 0, stream, interval)
        announce_seed(cfg, state, progress.message if stream is not None else None)
        done_log = ev.journal()
        pending: list[Unit] = []
        accepted: dict[str, str] = {}  # log (relative to out) -> its SHA-256: what the results database may hold
        try:
            for u in units:
                path = unit_log(out, u)
                entry = done_log.get(u.id)
                if not path.exists():
                    why = "no log"
                elif entry and entry.get("status") == "done" and entry.get("sha256"):
                    why = quick_check_unit_log(path, u, entry)  # validated by its worker when played
                else:
                    why = check_unit_log(path, u)  # not on record: the full check
                if why is None:
                    on_record = entry and entry.get("status") == "done" and entry.get("sha256")
                    sha = entry["sha256"] if on_record else file_sha256(path)
                    accepted[f"{LOGS_DIR}/{path.name}"] = sha
                    progress.done += 1
                    t = log_totals(path)
                    if not on_record:  # accepted now, by the full check: on record from now on (the tables trust only that)
                        journal_add(out, {"id": u.id, "status": "done", "sha256": sha, "totals": t[1] if t else None,
                                           "names": t[0] if t else None, "attempts": 0, "accepted": "validated on resume"})
                    if t:
                        progress.add(*t)
                else:
                    if path.exists() or any(logs.glob(f"{u.id}.*")):
                        if path.exists():
                            progress.message(f"{u.id}: {why}; playing it again")
                        remove_unit_files(out, u)
                    elif entry and entry.get("status") == "failed":
                        progress.message(f"{u.id}: failed last time ({entry.get('why')}); playing it again")
                    pending.append(u)
        except KeyboardInterrupt:  # stopped while checking the logs: nothing was started
            return TournamentRun(cfg, state, len(units), progress.done, 0, [], True, time.perf_counter() - t0)
        progress.start_done = progress.done
        done_before = progress.done
        db = results.connect(results.db_path(out), create=True)
        kept, stored = results.resync(db, out, accepted)  # rows only for logs that exist with the same hash
        if stored and state == "resume" and stream is not None:
            progress.message(f"{results.DB_FILE}: {stored} accepted log(s) summarized into it now, {kept} kept")
        if state == "resume" and stream is not None:
            progress.message(f"resuming {out}: {done_before} of {len(units)} partie already played")
        completed: set[str] = set()
        try:
            played, failed, interrupted = _play_units(cfg, pending, logs, progress, completed.add,
                                                      close_fds=(lock.f.fileno(),), sign_key=sign_key, db=db)
        finally:
            db.close()
        progress.finish()
        for u in pending:  # whatever was cut short leaves nothing behind (its log, its bots' stderr)
            if u.id not in completed:
                remove_unit_files(out, u)
    return TournamentRun(cfg, state, len(units), done_before, played, failed, interrupted, time.perf_counter() - t0)


def import_for_workers() -> None:
    """What every worker needs, imported once here before the workers are forked, so that no
    worker imports it again per unit: writing and sealing the log, validating it, the bots' sandbox."""
    import importlib

    for name in ("referee.logs.log", "referee.logs.seal", "referee.logs.validate", "referee.seats.sandbox",
                 "referee.seats.resources", "referee.seats.identity", "referee.matches.secrecy"):
        importlib.import_module(name)


def _play_units(cfg: TournamentConfig, pending: list[Unit], logs: Path, progress: Progress,
                on_unit: Callable[[str], None] | None, close_fds: tuple[int, ...] = (), sign_key: bytes | None = None,
                db=None) -> tuple[int, list[tuple[str, str]], bool]:
    """Play ``pending`` in a :class:`referee.seats.pool.Pool`: each unit in its own worker under a watchdog,
    a failed unit tried once more, the others going on whatever one unit's bots do."""
    if not pending:
        return 0, [], False
    out = cfg.output
    by_id = {u.id: u for u in pending}
    played = 0
    failed: list[tuple[str, str]] = []
    causes_said: set[str] = set()
    interrupted = False
    old_term = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    def fail(unit: Unit, why: str, culprit: str | None, attempts: int) -> None:
        remove_unit_files(out, unit)
        failed.append((unit.id, why))
        journal_add(out, {"id": unit.id, "status": "failed", "why": why, "culprit": culprit, "attempts": attempts})
        c = failure_cause(why)  # said once per cause while running (a dead scheduler fails every unit alike)
        if c not in causes_said:
            causes_said.add(c)
            progress.message(f"{unit.id}: failed: {why.splitlines()[0] if why.strip() else why}"
                             " (further partie failing the same way are listed at the end)")

    def on_outcome(o: Outcome) -> None:
        nonlocal played
        unit = by_id[o.key]
        if not o.ok:
            fail(unit, o.describe(), o.culprit, o.attempts)
            return
        res = o.result
        path = unit_log(out, unit)
        if res.get("valid") is not None:  # the worker's full validation failed: a referee bug, kept for study
            kept = out / INVALID_DIR / f"{path.name}.invalid"
            if path.exists():
                kept.parent.mkdir(exist_ok=True)
                os.replace(path, kept)
            fail(unit, f"its log does not validate ({res['valid']}); kept as {kept}", None, o.attempts)
            return
        why = quick_check_unit_log(path, unit, res)
        if why is not None:
            fail(unit, f"its log does not check ({why})", None, o.attempts)
            return
        for k, v in (res.get("cpu") or {}).items():  # what the workers spent (marias bench tournament)
            WORKER_CPU[k] = WORKER_CPU.get(k, 0.0) + v
        journal_add(out, {"id": unit.id, "status": "done", "sha256": res["sha256"], "totals": res["totals"],
                           "names": res["names"], "attempts": o.attempts})
        if db is not None:  # after the journal: a crash between the two is mended by the next run's resync
            results.record_log(db, out, path, res["sha256"])
        played += 1
        progress.done += 1
        progress.add(res["names"], res["totals"])
        for text in res.get("fault_texts", ()):  # the first few, explained (referee.seats.explain)
            progress.message(text)
        if on_unit is not None:
            on_unit(unit.id)

    def on_retry(o: Outcome) -> None:
        remove_unit_files(out, by_id[o.key])
        progress.message(f"{o.key}: {o.describe()}; trying it once more")

    def task_of(u: Unit) -> Task:
        job = unit_job(cfg, u, logs, sign_key)
        return Task(u.id, job, unit_wall_seconds(cfg, u), u.seats, tuple(tuple(s.argv) for s in job["specs"]))

    def from_cluster(unit: Unit, entry: dict) -> None:
        """A unit played and validated on a worker: its log written here, then checked and accepted as a local one."""
        path = unit_log(out, unit)
        for name, data in entry["files"].items():  # its bots' stderr
            if "/" not in name and name.startswith(f"{unit.id}."):
                (logs / name).write_bytes(data)
        part = path.with_name(path.name + ".part")
        with open(part, "wb") as f:
            f.write(entry["log"])
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, path)
        on_outcome(Outcome(unit.id, "ok", entry["result"], attempts=entry["attempts"], seconds=entry["seconds"]))

    import_for_workers()
    signal.signal(signal.SIGTERM, on_term)
    try:
        progress.show(force=True)
        if cfg.cluster:
            from .cluster import run_groups

            def jobs_of(group: list[Unit]):
                ts = [task_of(u) for u in group]
                if cfg.warm and ts:
                    ts[0].job["warm_partie"] = cfg.warm_partie
                return [t.job for t in ts], [t.wall_s for t in ts], [t.seats for t in ts], [t.argvs for t in ts]

            run_groups(cfg.cluster, jobs_of, pending, from_cluster, fail, play_unit, on_tick=progress.show,
                       plan_chains=plan_chains if cfg.warm else None, play_chain=play_chain if cfg.warm else None)
        elif cfg.warm:  # chains of units, each played by one worker with the same bot processes
            workers = min(cfg.concurrency or os.cpu_count() or 1, len(pending))
            chains = {f"chain:{c[0].id}": c for c in plan_chains(pending, workers)}

            def chain_task(key: str, chain: list[Unit]) -> Task:
                ts = [task_of(u) for u in chain]
                for t in ts:
                    t.job["warm_partie"] = cfg.warm_partie
                return Task(key, [t.job for t in ts], sum(t.wall_s for t in ts), ts[0].seats, ts[0].argvs)

            def on_chain(o: Outcome) -> None:
                chain = chains[o.key]
                if not o.ok:
                    for u in chain:
                        fail(u, o.describe(), o.culprit, o.attempts)
                    return
                for r in o.result:
                    if "error" in r:
                        fail(by_id[r["id"]], f"error: {r['error']}", None, o.attempts)
                    else:
                        on_outcome(Outcome(r["id"], "ok", r, attempts=o.attempts))

            def on_chain_retry(o: Outcome) -> None:
                for u in chains[o.key]:
                    remove_unit_files(out, u)
                progress.message(f"{o.key}: {o.describe()}; trying it once more")

            pool = Pool(play_chain, workers, retries=1, close_fds=close_fds)
            pool.run([chain_task(k, c) for k, c in chains.items()], on_chain, on_chain_retry, on_tick=progress.show)
        else:
            tasks = [task_of(u) for u in pending]
            workers = min(cfg.concurrency or os.cpu_count() or 1, len(pending))
            pool = Pool(play_unit, workers, retries=1, close_fds=close_fds)
            pool.run(tasks, on_outcome, on_retry, on_tick=progress.show)
    except KeyboardInterrupt:
        interrupted = True
        progress.message("stopping: the partie in progress are abandoned (run the same command again to finish)")
    finally:
        signal.signal(signal.SIGTERM, old_term)
    return played, failed, interrupted


# ------------------------------------------------------------------ benchmark

def bench(bots: int = 4, partie: int = 1, concurrency: tuple[int, ...] = (1, 2), seed: str = "bench",
          goal: float = 1.7, repeats: int = 1, builtin: str = "random") -> dict:
    """``marias bench tournament``: deals per second of the same small tournament (a field of one
    built-in bot, ``random`` or ``robot``) at each concurrency; the speed-up is the last against the first.

    With ``repeats`` > 1 the runs alternate in ABBA order (1, 2, 2, 1, ...) so that a change in the
    machine's other load weighs on both sides alike; the median rate is reported.
    """
    import resource
    import statistics
    import tempfile

    def cpu() -> float:
        r = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        return sum(x.ru_utime + x.ru_stime for x in r)

    order: list[int] = []
    for r in range(repeats):
        order += list(concurrency) if r % 2 == 0 else list(reversed(concurrency))
    rates: dict[int, list[float]] = {c: [] for c in concurrency}
    seconds: dict[int, list[float]] = {c: [] for c in concurrency}
    cores: dict[int, list[float]] = {c: [] for c in concurrency}
    units = 0
    for c in order:
        with tempfile.TemporaryDirectory(prefix="marias-bench-") as tmp:
            cfg = config_from_options([f"b{i + 1}={builtin}" for i in range(bots)], partie=partie, seed=seed,
                                      concurrency=c, output=str(Path(tmp) / "t"), name="bench")
            c0 = cpu()
            run = run_tournament(cfg)
            cores[c].append((cpu() - c0) / run.seconds)
            if not run.complete:
                raise RuntimeError(f"the benchmark tournament did not finish: {run.failed}")
            units = run.units
            seconds[c].append(run.seconds)
            rates[c].append(12 * run.units / run.seconds)
    med = {c: statistics.median(v) for c, v in rates.items()}
    first, last = concurrency[0], concurrency[-1]
    speedup = med[last] / med[first]
    load = load_average()
    return {
        "benchmark": "tournament",
        "bots": f"{bots} x {builtin}",
        "units": units,
        "deals": 12 * units,
        "repeats": repeats,
        "cpus": os.cpu_count(),
        "load_average_1min_at_end": load,
        **{f"seconds_c{c}": round(statistics.median(seconds[c]), 2) for c in concurrency},
        **{f"deals_per_second_c{c}": round(med[c], 1) for c in concurrency},
        # CPU seconds (referee, workers and bots) per second of wall time: how many cores the run kept busy
        **{f"cores_used_c{c}": round(statistics.median(cores[c]), 2) for c in concurrency},
        f"speedup_c{last}_vs_c{first}": round(speedup, 2),
        "goal": goal,
        "goal_met": speedup >= goal,
    }


def bench_warm(field: tuple[str, ...] = ("robot", "robot", "random"), partie: int = 12, concurrency: int = 1,
               match_partie: int = 12, seed: str = "bench") -> dict:
    """``marias bench tournament``: the same tournament (one table of ``field``, its six arrangements,
    ``partie`` partie each) played cold (fresh bots every partie) and warm (bots kept through a chain),
    and one long match of ``match_partie`` partie of the same three bots in one process each — in one
    run, on the same machine load.  CPU per partie split into: the parent (planning, journal, results),
    the workers' referee (playing), their logging (writing, sealing and fsyncing the log), their validation, the rest of the workers
    (fork, exit, pre-flight, chain bookkeeping), the bots deciding, and the bots starting (to their
    hello answer).  The bots' CPU is read from /proc over each bot's whole process tree just before it
    is ended, so it is counted under the sandbox too (its pid namespace hides it from rusage)."""
    import resource
    import tempfile

    from ..logs.log import LOG_CPU
    from ..matches.match import BotSpec
    from ..seats.process import BOT_CPU

    def rself() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    names = [f"b{i + 1}={b}" for i, b in enumerate(field)]
    out: dict = {"benchmark": "tournament warm/cold", "bots": ", ".join(field), "concurrency": concurrency}
    per: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="marias-bench-") as tmp:
        # the bots start in an empty folder of their own: the sandbox shows a bot its start folder entry
        # by entry (a mount each), so started in a crowded folder they would cost more (see the README)
        start = Path(tmp) / "start"
        start.mkdir()
        for mode in ("cold", "warm", "match"):
            b0, s0, p0, w0, l0 = BOT_CPU["total"], BOT_CPU["start"], rself(), time.perf_counter(), LOG_CPU["total"]
            if mode == "match":
                specs = [BotSpec.parse_named(n, seed=seed) for n in names]
                for spec in specs:
                    spec.cwd = str(start)
                cfg0 = config_from_options(names, seed=seed, output=str(Path(tmp) / "x"), name="bench")
                config = MatchConfig(bots=specs, partie=match_partie, seed=seed, log_path=Path(tmp) / "match.jsonl",
                                     limits=cfg0.limits, sandbox=cfg0.sandbox)
                res = run_match(config)
                n = match_partie
                parent = rself() - p0
                logging = LOG_CPU["total"] - l0
                parts = {"parent": 0.0, "referee": parent - logging, "logging": logging, "validation": 0.0,
                         "workers_other": 0.0}
                sandbox = res.sandbox
            else:
                cfg = config_from_options(names, partie=partie, seed=seed, concurrency=concurrency,
                                          output=str(Path(tmp) / mode), name="bench")
                cfg.warm = mode == "warm"
                for bot in cfg.bots:
                    bot.cwd = str(start)
                WORKER_CPU.clear()
                run = run_tournament(cfg)
                if not run.complete:
                    raise RuntimeError(f"the benchmark tournament did not finish: {run.failed}")
                n = run.units
                wc = dict(WORKER_CPU)
                parts = {"parent": rself() - p0, "referee": wc.get("referee", 0.0), "logging": wc.get("logging", 0.0),
                         "validation": wc.get("validation", 0.0),
                         "workers_other": wc.get("worker", 0.0) - wc.get("referee", 0.0) - wc.get("logging", 0.0)
                         - wc.get("validation", 0.0)}
                parts["bots_deciding"] = wc.get("bots", 0.0) - wc.get("bots_start", 0.0)
                parts["bots_starting"] = wc.get("bots_start", 0.0)
            seconds = time.perf_counter() - w0
            if mode == "match":
                parts["bots_deciding"] = (BOT_CPU["total"] - b0) - (BOT_CPU["start"] - s0)
                parts["bots_starting"] = BOT_CPU["start"] - s0
            total = sum(parts.values())
            per[mode] = {"partie": n, "seconds": seconds, "cpu": total}
            out[f"{mode}_partie"] = n
            out[f"{mode}_partie_per_second"] = round(n / seconds, 2)
            out[f"{mode}_cpu_ms_per_partie"] = round(1000 * total / n, 1)
            for k, v in parts.items():
                out[f"{mode}_{k}_ms_per_partie"] = round(1000 * v / n, 1)
    cpp = {m: per[m]["cpu"] / per[m]["partie"] for m in per}
    out["sandbox"] = sandbox
    out["cpu_per_partie_warm_vs_match"] = round(cpp["warm"] / cpp["match"], 2)
    out["cpu_per_partie_cold_vs_match"] = round(cpp["cold"] / cpp["match"], 2)
    out["partie_per_second_warm_vs_cold"] = round((per["warm"]["partie"] / per["warm"]["seconds"])
                                                  / (per["cold"]["partie"] / per["cold"]["seconds"]), 2)
    out["goal"] = "warm cpu/partie <= 1.2x the long match; warm partie/s >= 3x cold"
    out["goal_met"] = out["cpu_per_partie_warm_vs_match"] <= 1.2 and out["partie_per_second_warm_vs_cold"] >= 3
    out["load_average_1min_at_end"] = load_average()
    return out


def load_average() -> float | None:
    """The machine's 1-minute load average, rounded for a benchmark's report (``None``
    where the system has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None
