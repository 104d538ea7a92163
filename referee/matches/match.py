"""The referee loop: plays partie between three bot processes (PROTOCOL.md).

The referee owns the rules engine (:mod:`referee.rules.deal`): it asks the player to
move with his seat's view and the complete list of legal actions, checks the
answer, applies it and tells every seat what it may see.  A breach (R12.1) ends
the deal and is settled by the engine (R12.2); a bot that died or misbehaved is
started afresh for the next deal, and after ``max_faults`` faults in a partie it
forfeits the rest of that partie (R12.3): nobody plays for it.

Each seat is a :class:`referee.seats.seat.Seat`: a bot program (:mod:`referee.seats.process`;
built-in bots run as ``python -m bots NAME``, exactly the path of an external bot)
or, for a :class:`BotSpec` with ``bot`` set, a Bot object in this process
(:class:`referee.seats.seat.InProcessSeat`).  Plain synchronous code: one bot is on move
at a time, and one wait (epoll) for it serves every bot's stderr and exit.
"""

from __future__ import annotations

import contextlib
import json
import operator
import os
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from protocol import messages as M

from .. import __version__
from ..rules.cards import Card, parse_deck
from ..rules.actions import ActionError
from ..rules.deal import Deal, IllegalAction
from ..seats.explain import FaultContext, describe, printable
from ..seats.faults import BotFault, FaultKind, evidence
from ..rules.partie import Partie, derive_seed, new_seed
from .secrecy import PUBLIC
from ..seats.process import BotCommand, BotProcess, Poller, encode_line, tree_rss_mb
from ..seats.streams import open_private
from ..seats.seat import Clock, InProcessSeat, Seat
from .tell import event_lines, request_line
from ..seats.resources import LIMIT_KEYS
from ..seats.sandbox import SandboxConfig, SandboxLimits, find_bwrap, limits_report, mark_output, mark_private_file, resolve_mode

BUILTIN_BOTS = ("random", "robot", "search")
_CODE = operator.attrgetter("code")  # an action's text
BYE_LINE = encode_line(M.BYE)


@dataclass
class BotSpec:
    """How to start one bot: a built-in name or a command line (never run through a shell).

    A bot's identity is ``label`` plus ``fingerprint`` (:mod:`referee.seats.identity`): the
    tables credit it by both, and a resumed tournament refuses a changed fingerprint.
    """

    label: str
    argv: list[str]
    cwd: str | None = None
    env: dict[str, str] | None = None
    builtin: str | None = None
    bot: object | None = None  # a protocol.sdk.Bot object played in this process (InProcessSeat) instead of a program
    seat: Callable[[], Seat] | None = None  # makes the seat itself, no program started (benchmarks: marias bench referee)
    # per-bot overrides of the match's limits (None: the match's)
    move_ms: int | None = None
    startup_ms: int | None = None
    bank_ms: int | None = None
    increment_ms: int | None = None
    # sandbox (referee/seats/sandbox.py): per-bot limits (None: the match's) and writable folder (None: a fresh one)
    memory_mb: int | None = None
    processes: int | None = None
    cpu_s: int | None = None
    file_mb: int | None = None
    disk_mb: int | None = None
    cpus: int | None = None
    workdir: str | None = None
    fingerprint: str | None = None  # computed on first use (:meth:`identity`) unless given
    fingerprint_paths: list[str] | None = None  # what the bot loads beyond its command line (YAML fingerprint:)
    partie_seed: str | None = None  # sent in partie_start (a tournament's built-in random bot: warm bots play many partie)

    @classmethod
    def parse(cls, value: str, *, seed: str | int = 0) -> "BotSpec":
        """``random``/``robot`` (optionally ``random:SEED``) or a command line split like a shell would.

        A built-in runs as ``python -I -m bots NAME``: isolated mode keeps the working
        folder (and PYTHONPATH) off the module path, so a ``bots/`` folder there cannot
        stand in for the installed package."""
        name, _, arg = value.partition(":")
        if name in BUILTIN_BOTS and " " not in value:
            argv = [sys.executable, "-I", "-m", "bots", name]  # `marias bot NAME` without the CLI toolkit
            if name == "random":
                argv += ["--seed", arg or derive_seed(seed, "bot")]  # one-way: never the match seed itself
            return cls(label=value, argv=argv, builtin=name)
        try:
            argv = shlex.split(value)
        except ValueError as e:
            raise ValueError(f"cannot parse bot command {value!r}: {e}") from None
        if not argv:
            raise ValueError("empty bot command")
        return cls(label=value, argv=argv)

    @classmethod
    def parse_named(cls, value: str, *, seed: str | int = 0) -> "BotSpec":
        """``NAME=COMMAND`` (as ``marias tournament --bot``) or a command alone, named by
        :func:`referee.seats.identity.default_label` (a built-in by its name: ``random:5`` is ``random-5``)."""
        from ..seats.identity import default_label, split_named

        name, command = split_named(value)
        if name is not None:
            spec = cls.parse(command, seed=seed)
            spec.label = name
            return spec
        spec = cls.parse(value.strip(), seed=seed)
        spec.label = default_label(spec.argv, spec.builtin, value.strip())
        return spec

    def identity(self) -> dict:
        """``{"label", "fingerprint"}``; the fingerprint is computed once (it reads the bot's files)."""
        if self.fingerprint is None:
            from ..seats.identity import listing_hash, spec_listing
            self.fingerprint = listing_hash(spec_listing(self))
        return {"label": self.label, "fingerprint": self.fingerprint}

    def exe_sha256(self) -> str | None:
        """Superseded by :meth:`identity` (it hashed the interpreter, not the bot): always None.
        Kept only while the log header still has the key."""
        return None

    def to_dict(self) -> dict:
        d = {"label": self.label, "command": self.argv if self.builtin is None else f"builtin:{self.builtin}"}
        if self.cwd:
            d["cwd"] = self.cwd
        own = {k: getattr(self, k) for k in ("move_ms", "startup_ms", "bank_ms", "increment_ms") if getattr(self, k) is not None}
        if own:
            d["limits"] = own  # this bot's own limits (validate checks its times against them)
        own = {k: getattr(self, k) for k in LIMIT_KEYS if getattr(self, k) is not None}
        if own:
            d["sandbox_limits"] = own  # this bot's own, over the header's
        d["fingerprint"] = self.identity()["fingerprint"]
        return d


@dataclass
class Limits:
    startup_ms: int = 10_000
    move_ms: int = 2_000
    bank_ms: int | None = None  # per-partie time bank (added to nothing: see decision_limit)
    increment_ms: int = 0
    max_line: int = 1_000_000
    stderr_cap: int = 1_000_000

    def to_dict(self) -> dict:
        return {"startup_ms": self.startup_ms, "move_ms": self.move_ms, "bank_ms": self.bank_ms,
                "increment_ms": self.increment_ms, "max_line": self.max_line, "stderr_cap": self.stderr_cap}


@dataclass
class FaultPolicy:
    max_faults: int = 3  # faults in a partie after which the bot forfeits the rest of it (R12.3)

    def to_dict(self) -> dict:
        return {"max_faults": self.max_faults, "after_max_faults": "forfeit", "restart": "next deal"}


@dataclass
class MatchConfig:
    bots: list[BotSpec]
    partie: int = 1
    seed: int | str = field(default_factory=new_seed)  # a fresh secret 128-bit seed unless given
    decks: list[list[Card]] | None = None
    limits: Limits = field(default_factory=Limits)
    policy: FaultPolicy = field(default_factory=FaultPolicy)
    log_path: Path | None = None
    transcript: bool = False
    work_dir: Path | None = None  # where stderr files go when there is no log
    keep_partie: bool = False  # keep the Partie objects in the result (tests, reports)
    sign_key: object = None  # Ed25519 key (PEM path, raw bytes or key) that signs the log's footer
    sandbox: str = "auto"  # auto | bwrap | required | none (referee/seats/sandbox.py); resolved when the match starts
    sandbox_limits: SandboxLimits = field(default_factory=SandboxLimits)
    sandbox_hide: tuple[str, ...] = ()  # more referee output (files, folders) no bot may see
    seed_kind: str | None = None  # "secret seed" (drawn, or from a seed file) or "public seed" (given; the default)
    warm: "WarmSeats | None" = None  # bot processes kept running from the previous match (a tournament's chain)


@dataclass
class SeatStats:
    decisions: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    faults: dict[str, int] = field(default_factory=dict)
    forfeited: list[dict] = field(default_factory=list)  # {"partie": P, "from_deal": K} (R12.3)

    def add_time(self, ms: float) -> None:
        self.decisions += 1
        self.total_ms += ms
        if ms > self.max_ms:
            self.max_ms = ms

    def to_dict(self) -> dict:
        return {"decisions": self.decisions, "mean_ms": round(self.total_ms / self.decisions, 3) if self.decisions else 0.0,
                "max_ms": round(self.max_ms, 3), "faults": dict(self.faults), "forfeited": [dict(f) for f in self.forfeited]}


@dataclass
class MatchResult:
    names: list[str]
    partie_totals: list[list[int]]
    partie_places: list[list[float]]
    stats: list[SeatStats]
    log_path: Path | None
    faults: list[dict]
    parties: list[Partie] = field(default_factory=list)
    stderr_dir: Path | None = None  # where the bots' stderr files (<stem>.seatN.stderr.log) are
    sandbox: str | None = None  # "bwrap" or "none": how the bots ran

    @property
    def totals(self) -> list[int]:
        return [sum(t[s] for t in self.partie_totals) for s in range(3)]

    def to_dict(self) -> dict:
        return {"names": self.names, "partie_totals": self.partie_totals, "partie_places": self.partie_places,
                "totals": self.totals, "seats": [s.to_dict() for s in self.stats],
                "faults": self.faults, "log": str(self.log_path) if self.log_path else None,
                "stderr_dir": str(self.stderr_dir) if self.stderr_dir else None, "sandbox": self.sandbox}


def load_decks(path: str | os.PathLike) -> list[list[Card]]:
    """A deck file: one deal-1 deck per line (32 card codes, spaces or commas); '#' comments."""
    decks = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            decks.append(parse_deck(text))
        except ValueError as e:
            raise ValueError(f"{path}:{n}: {e}") from None
    if not decks:
        raise ValueError(f"{path}: no deck in the file")
    return decks


# ---------------------------------------------------------------- players
class Player:
    """One seat across the match: its bot (a :class:`~referee.seats.seat.Seat`), announced name, faults and clock."""

    def __init__(self, seat: int, spec: BotSpec, config: MatchConfig, poller: Poller, transcript_file=None):
        """``transcript_file``: an open text file that gets every line sent and received, or None."""
        self.seat = seat
        self.spec = spec
        self.config = config
        self.poller = poller
        self.io: Seat | None = None
        self.name = spec.label
        self.version = ""
        self.announced = False
        self.pending_fault: BotFault | None = None  # a start-up failure, charged at the next deal
        self.pending: list[str] = []  # informational lines not yet written (encode_line)
        self.faults_in_partie = 0
        self.stats = SeatStats()
        self.clock = Clock(0)
        self.started_at = 0.0  # time.monotonic() when the bot was last started
        self.sandbox: SandboxConfig | None = None  # set by the referee once the mode is resolved
        self.phase = "startup"  # "startup" until its hello answer is read, then "move" (what a timeout means)
        self.adopted = False  # its bot came running from the previous match (WarmSeats): no start, no hello
        self.last_limit_ms: float | None = None  # the limit of the wait that faulted
        self._transcript_file = transcript_file
        self._limits = self._make_limits()
        stem = config.log_path.with_suffix("") if config.log_path else Path(config.work_dir or tempfile.gettempdir()) / "marias"
        self.stderr_path = Path(f"{stem}.seat{seat}.stderr.log")

    def _transcript(self, direction: str, line: str) -> None:
        self._transcript_file.write(json.dumps({"seat": self.seat, "dir": direction, "t": round(time.time(), 6),
                                                "line": line}, ensure_ascii=False) + "\n")

    @property
    def ready(self) -> bool:
        return self.io is not None and self.io.alive

    def _new_seat(self) -> Seat:
        if self.spec.seat is not None:
            return self.spec.seat()
        if self.spec.bot is not None:
            return InProcessSeat(self.spec.bot, name=f"seat {self.seat}")
        lim = self.config.limits
        return BotProcess(BotCommand(self.spec.argv, self.spec.cwd, self.spec.env or None, self.sandbox), name=f"seat {self.seat}",
                          stderr_path=self.stderr_path, stderr_cap=lim.stderr_cap, max_line=lim.max_line,
                          transcript=self._transcript if self._transcript_file else None, poller=self.poller)

    def start(self) -> None:
        """Start a fresh bot (ending the old one); raises BotFault."""
        self.kill()
        self.pending = []  # a fresh bot starts with a fresh story
        self.io = self._new_seat()
        self.started_at = time.monotonic()
        self.phase = "startup"
        self.last_limit_ms = float(self._limits["startup_ms"])
        try:
            self.io.start()
        except BotFault:
            self.io = None
            raise

    def handshake(self, partie_msg: dict) -> None:
        """hello and its answer within the start-up limit (counted from the start), then the partie;
        raises BotFault."""
        limits = self.limits()
        left = max(0.0, limits["startup_ms"] / 1000 - (time.monotonic() - self.started_at))
        answer, _ = self.io.request_lines([encode_line(M.hello(__version__, limits))], left)
        if answer.get("type") != "hello":
            raise BotFault(FaultKind.UNEXPECTED, f"seat {self.seat}: expected a hello answer, got type {_shown(answer.get('type'))}",
                           _raw(answer))
        if answer.get("protocol") != M.PROTOCOL_VERSION:
            raise BotFault(FaultKind.UNEXPECTED, f"seat {self.seat}: protocol {_shown(answer.get('protocol'))} is not {M.PROTOCOL_VERSION}",
                           _raw(answer))
        if not self.announced:
            self.name = printable(str(answer.get("name") or self.spec.label)[:80])
            self.version = printable(str(answer.get("version") or "")[:40])
            self.announced = True
        self.phase = "move"
        count = getattr(self.io, "count_start_cpu", None)
        if count is not None:
            count()
        self.io.send_lines([encode_line(partie_msg)])

    def ensure_started(self, partie_msg: dict) -> None:
        if not self.ready:
            self.start()
            self.handshake(partie_msg)

    def queue(self, msg: dict) -> None:
        """An informational message, written together with the next request (or flush)."""
        self.pending.append(encode_line(msg))

    def queue_lines(self, lines: list[str]) -> None:
        """Informational lines encoded already (shared with the other seats told the same)."""
        self.pending += lines

    def flush(self) -> None:
        """Deliver the queued lines; a failure is noticed (and charged) at the next request."""
        lines, self.pending = self.pending, []
        if lines and self.io is not None and not self.io.closed:
            with contextlib.suppress(BotFault):
                self.io.send_lines(lines)

    def send(self, msg: dict) -> None:
        self.queue(msg)
        self.flush()

    def request(self, line: str, timeout: float) -> tuple[dict, float]:
        """The request (encoded), after the queued lines in the same write."""
        lines, self.pending = self.pending, []
        lines.append(line)
        self.last_limit_ms = timeout * 1000
        return self.io.request_lines(lines, timeout)

    def limits(self) -> dict:
        """The match's limits with this bot's overrides (what its hello announces)."""
        return dict(self._limits)

    def _make_limits(self) -> dict:
        return bot_limits(self.spec, self.config.limits)

    def new_clock(self) -> None:
        lim = self._limits
        self.clock = Clock(lim["move_ms"], float(lim["bank_ms"]) if lim["bank_ms"] else None, lim["increment_ms"])

    def kill(self) -> None:
        """End the bot at once (after a fault: it is sent nothing more)."""
        if self.io is not None:
            self.io.kill()

    def close(self) -> None:
        if self.io is not None:
            self.io.close()


def _count_cpu(io: Seat) -> None:
    """A bot process's CPU counted before its bye (referee.seats.process.BOT_CPU; other seats have none)."""
    count = getattr(io, "count_cpu", None)
    if count is not None:
        count()


def _bye(io: Seat) -> None:
    """bye to a bot that is to end (its CPU counted first), and it runs from now on to read it and
    exit: a bot process that waits for its turn is frozen (referee.seats.freezer)."""
    _count_cpu(io)
    with contextlib.suppress(BotFault):  # it is ended after either way
        io.send_lines([BYE_LINE])
    release = getattr(io, "release", None)
    if release is not None:
        release()


# ---------------------------------------------------------------- warm bots
class WarmSeats:
    """Bot processes kept running from one match to the next (a tournament worker's *chain*), as the
    partie of one match keep them: each match adopts, seat by seat, the process left by the previous
    one when it runs the same bot (label, command, folder, workdir) in the same seat.

    The honesty rule of duplicate play is kept here as well as in the planning: a process is never
    given a match whose starting deck it has already played (it would remember the deal) — such a
    seat gets a fresh process.  A process is retired (bye) after ``max_partie`` partie (0: never)."""

    def __init__(self, max_partie: int = 0):
        self.poller = Poller()
        self.max_partie = max_partie
        self.kept: dict[int, tuple[tuple, Seat, str, str, set[str], int]] = {}  # seat -> (key, io, name, version, decks, partie)
        self.started = 0  # processes adopted / kept: what a test or a benchmark may look at
        self.adopted = 0

    @staticmethod
    def key(spec: BotSpec) -> tuple:
        argv = spec.argv
        if spec.partie_seed is not None and argv[-2:] == ["--seed", spec.partie_seed]:
            argv = argv[:-2]  # the seed of the first partie only: the others get theirs in partie_start
        return (spec.label, tuple(argv), spec.cwd, spec.workdir, tuple(sorted((spec.env or {}).items())),
                spec.builtin, spec.fingerprint)

    def adopt(self, p: Player, decks: list[str]) -> None:
        entry = self.kept.pop(p.seat, None)
        if entry is None:
            return
        key, io, name, version, seen, count = entry
        if key != self.key(p.spec) or not io.alive or seen.intersection(decks):
            self._end(io)  # another bot, a dead one, or one that has seen one of these decks: never reused
            return
        p.io, p.name, p.version, p.announced, p.phase, p.adopted = io, name, version, True, "move", True
        p.warm_decks, p.warm_partie = seen, count
        self.adopted += 1

    def keep(self, p: Player, decks: list[str]) -> bool:
        """Keep ``p``'s process for the next match (True), or leave it to be ended (False)."""
        seen = set(getattr(p, "warm_decks", ())) if p.adopted else set()
        count = (getattr(p, "warm_partie", 0) if p.adopted else 0) + len(decks)
        if self.max_partie and count >= self.max_partie:
            return False
        limit = p.sandbox.limits.memory_mb if p.sandbox is not None else None
        if limit and tree_rss_mb(getattr(p.io, "pid", None)) > 0.8 * limit:
            return False  # near its memory limit: retired now rather than killed by it in the next partie
        old = self.kept.pop(p.seat, None)
        if old is not None:
            self._end(old[1])
        self.kept[p.seat] = (self.key(p.spec), p.io, p.name, p.version, seen | set(decks), count)
        return True

    @staticmethod
    def _end(io: Seat) -> None:
        if not io.closed:
            _bye(io)
        io.close()

    def close(self) -> None:
        """bye to every kept process, then end them."""
        for entry in self.kept.values():
            if not entry[1].closed:
                _bye(entry[1])
        for entry in self.kept.values():
            entry[1].close()
        self.kept.clear()
        self.poller.close()


# ---------------------------------------------------------------- the match
class Referee:
    def __init__(self, config: MatchConfig, progress: Callable[[str], None] | None = None):
        if len(config.bots) != 3:
            raise ValueError(f"a match needs exactly three bots, got {len(config.bots)}")
        self.config = config
        self.progress = progress or (lambda s: None)
        self.request_id = 0
        self.faults: list[dict] = []
        self.log = None
        self.parties: list[Partie] = []
        self.play_seconds = 0.0
        self.play_cpu_seconds = 0.0  # the referee process's own CPU (user + system) while playing
        self.sandbox: str | None = None  # "bwrap" or "none" once the match has started

    def run(self) -> MatchResult:
        cfg = self.config
        if cfg.log_path is not None:
            made = not cfg.log_path.parent.exists()
            cfg.log_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if made:  # all of it is output: no bot of any run is shown it (referee/seats/sandbox.py)
                mark_output(cfg.log_path.parent)
        elif cfg.work_dir is None:  # a folder of its own (0700), named in the result
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
            cfg.work_dir = Path(tempfile.mkdtemp(prefix=f"marias-match-{stamp}-"))
            mark_output(cfg.work_dir)
        self.sandbox = resolve_mode(cfg.sandbox)  # bwrap or none (loudly); refuses when required and missing
        tfiles = [None, None, None]
        tnames: list[str] = []
        if cfg.transcript:
            stem = cfg.log_path.with_suffix("") if cfg.log_path else cfg.work_dir / "marias"
            tnames = [f"{stem}.seat{s}.transcript.jsonl" for s in range(3)]
            tfiles = [open_private(name, "w") for name in tnames]
        warm = cfg.warm
        poller = warm.poller if warm is not None else Poller()
        players = [Player(s, spec, cfg, poller, tfiles[s]) for s, spec in enumerate(cfg.bots)]
        self._sandbox_players(players, tnames)
        partie_totals: list[list[int]] = []
        partie_places: list[list[float]] = []
        decks = [self._deck_key(i) for i in range(cfg.partie)]
        finished = False
        try:
            if warm is not None:
                for p in players:
                    warm.adopt(p, decks)
            # the three start at once; the handshakes follow, so the log header names what each announced
            for p in players:
                if p.adopted:
                    continue
                try:
                    p.start()
                except BotFault as f:
                    p.pending_fault = f  # charged at the first deal (R12.1: the bot process ended)
            for p in players:
                if p.pending_fault is None and not p.adopted:
                    try:
                        p.handshake(M.partie_start(1, p.seat, 12, [b.label for b in cfg.bots], p.spec.partie_seed))
                    except BotFault as f:
                        p.pending_fault = f
                        p.kill()
            t_play, cpu_play = time.perf_counter(), time.process_time()
            if cfg.log_path is not None:
                from ..logs.log import LogWriter
                self.log = LogWriter(cfg.log_path, self._header(players), sign_key=cfg.sign_key)
            for i in range(cfg.partie):
                n = i + 1
                deck = cfg.decks[i] if cfg.decks else None
                partie = Partie(deck, seed=f"{cfg.seed}:{n}")
                totals = self._play_partie(n, partie, players)
                partie_totals.append(totals)
                partie_places.append(partie.places())
                if cfg.keep_partie:
                    self.parties.append(partie)
                self.progress(f"partie {n}: {totals}")
            self.play_seconds = time.perf_counter() - t_play
            self.play_cpu_seconds = time.process_time() - cpu_play
            if self.log is not None:
                self.log.close()
            finished = True
        finally:
            if self.log is not None and not finished:
                self.log.abort()  # stopped early: the log stays incomplete, and its lock is let go now, not at collection
            if warm is not None:  # a bot still playing well goes on to the next match of the chain
                for p in players:
                    if finished and p.ready and p.pending_fault is None and warm.keep(p, decks):
                        p.io = None
            for p in players:  # bye to all first, so that they end meanwhile
                if p.io is not None and not p.io.closed:
                    _bye(p.io)
            for p in players:
                p.close()
            if warm is None:
                poller.close()
            for f in tfiles:
                if f is not None:
                    f.close()
        return MatchResult([p.name for p in players], partie_totals, partie_places, [p.stats for p in players],
                           cfg.log_path, self.faults, self.parties, players[0].stderr_path.parent, self.sandbox)

    def _deck_key(self, i: int) -> str:
        """What identifies partie ``i``'s starting deck: its deal-book deck, else its shuffle's seed."""
        cfg = self.config
        if cfg.decks:
            return "deck:" + ",".join(str(int(c)) for c in cfg.decks[i])
        return f"seed:{cfg.seed}:{i + 1}"

    def _sandbox_players(self, players: list[Player], transcripts: list[str]) -> None:
        """Each bot's sandbox: the match's limits with its own, and what it must not see."""
        cfg = self.config
        outputs = [*transcripts, *(str(p.stderr_path) for p in players), *map(str, cfg.sandbox_hide)]
        if isinstance(cfg.sign_key, (str, os.PathLike)):  # a signing key given by its file: no bot reads it
            outputs += [str(cfg.sign_key), os.path.realpath(cfg.sign_key)]
        if cfg.log_path is not None:
            outputs.append(str(cfg.log_path))
        elif cfg.work_dir is not None:
            outputs.append(str(cfg.work_dir))
        outputs = [os.path.abspath(o) for o in outputs]  # from the referee's folder, whatever the bot's is
        written = [*transcripts, *(str(p.stderr_path) for p in players), *([str(cfg.log_path)] if cfg.log_path else [])]
        for o in written:  # in a folder that is not all output (--log . beside the bot): these files are named
            mark_private_file(o)
        workdirs = {q.seat: os.path.abspath(os.path.join(q.spec.cwd or ".", q.spec.workdir)) if q.spec.workdir else None
                    for q in players}
        for p in players:
            sp = p.spec
            own = workdirs[p.seat]
            others = [w for w in workdirs.values() if w and w != own]
            show = shown_folders(sp)
            limits = cfg.sandbox_limits.merged(**{k: getattr(sp, k) for k in LIMIT_KEYS})
            p.sandbox = SandboxConfig(self.sandbox, limits, own, tuple(outputs + others), show)

    def _header(self, players: list[Player]) -> dict:
        cfg = self.config
        return {
            "referee_version": __version__,
            "seed": cfg.seed,
            "decks": cfg.seed_kind or PUBLIC,  # what a seed given by its caller is: reproducible, so public
            "partie": cfg.partie,
            "bots": [{"seat": p.seat, **p.spec.to_dict(), "name": p.name, "version": p.version,
                      "exe_sha256": p.spec.exe_sha256()} for p in players],
            "limits": cfg.limits.to_dict(),
            "fault_policy": cfg.policy.to_dict(),
            "sandbox": self.sandbox,
            **({"bwrap": find_bwrap().found.to_dict()} if self.sandbox == "bwrap" else {}),  # which bwrap: path, version, source
            "sandbox_limits": cfg.sandbox_limits.to_dict(),
            "sandbox_limits_by": limits_report(cfg.sandbox_limits, self.sandbox),
        }

    def _play_partie(self, n: int, partie: Partie, players: list[Player]) -> list[int]:
        cfg = self.config
        names = [b.label for b in cfg.bots]
        for p in players:
            p.faults_in_partie = 0
            p.new_clock()
            if p.ready and (n > 1 or p.adopted):
                p.send(M.partie_start(n, p.seat, partie.n_deals, names, p.spec.partie_seed))
        if self.log is not None:
            self.log.partie_start(n, deck_book=cfg.decks is not None)
        max_faults = cfg.policy.max_faults
        forfeit = None
        for deal in partie.iter_deals():
            index = len(partie.deals)
            deck = list(deal.deck)
            times = self._play_deal(n, index, partie.cuts[-1], deal, players, partie)
            if self.log is not None:
                self.log.deal(n, index, deal, partie.cuts[-1], [str(c) for c in deck], times)
            out = [p for p in players if p.faults_in_partie >= max_faults]
            if out and index < partie.n_deals:
                forfeit = self._forfeit(n, partie, out[0])
        totals = partie.totals()
        places = partie.places()
        for p in players:
            p.send(M.partie_end(n, totals, places, forfeit))
        if self.log is not None:
            self.log.partie_end(n, totals, places)
        return totals

    def _play_deal(self, n: int, index: int, cut: int | None, deal: Deal, players: list[Player], partie: Partie) -> list[float]:
        names = [b.label for b in self.config.bots]
        times: list[float] = []
        # every seat needs a working bot; a bot that cannot start faults this deal
        for p in players:
            if p.pending_fault is not None:
                f, p.pending_fault = p.pending_fault, None
                self._fault(deal, p, f, n, index)
                break
            try:
                p.ensure_started(M.partie_start(n, p.seat, partie.n_deals, names, p.spec.partie_seed))
            except BotFault as f:
                self._fault(deal, p, f, n, index)
                break
        totals = partie.totals()  # groše so far in this partie (this deal is not settled yet)
        for p in players:
            p.queue(M.deal_start(n, index, p.seat, deal.forhont, deal.dealer, cut, totals))
        tricks, hlasky = deal.tricks, deal.hlasky
        while not deal.done:
            seat = deal.to_move
            p = players[seat]
            legal = deal.legal_actions()
            texts = list(map(_CODE, legal))
            decision = deal.decision
            rid = self.request_id = self.request_id + 1
            limit_ms = p.clock.limit_ms()
            line = request_line(rid, n, index, decision, deal.view(seat), texts, int(limit_ms), totals)
            try:
                answer, elapsed = p.request(line, limit_ms / 1000)
                action = legal[answer_index(answer, rid, texts, seat, elapsed)]
            except BotFault as f:
                self._fault(deal, p, f, n, index, legal=texts, rule=rule_broken(deal, f))
                break
            ms = round(elapsed * 1000, 3)  # as logged, so that a bank is rebuilt from the log exactly (marias replay)
            p.clock.spend(ms)
            p.stats.add_time(ms)
            times.append(ms)
            before_tricks, before_hl = len(tricks), len(hlasky)
            deal.apply(action)
            for q, lines in zip(players, event_lines(n, index, deal, decision, before_tricks, before_hl)):
                q.queue_lines(lines)
        if deal.fault_info is not None:
            fi = deal.fault_info
            line = encode_line(M.event(n, index, M.fault_event(fi.seat, fi.kind)))
            for q in players:
                q.queue_lines([line])
        result = deal.result.to_dict()
        for p in players:
            p.queue(M.deal_end(n, index, p.seat, deal.view(p.seat), result))
            p.flush()
        return times

    def _fault(self, deal: Deal, p: Player, f: BotFault, n: int, index: int,
               legal: list[str] | None = None, rule: str | None = None) -> None:
        ctx = self.fault_context(p, f, n, index, legal, rule)
        deal.fault(p.seat, str(f.kind), f.message, f.evidence, f.elapsed)
        kind = str(f.kind)
        p.stats.faults[kind] = p.stats.faults.get(kind, 0) + 1
        p.faults_in_partie += 1
        text = describe(ctx)
        self.faults.append({"partie": n, "deal": index, "seat": p.seat, "kind": kind, "message": f.message,
                            "bot": p.name, "text": text})
        self.progress(text)
        p.kill()  # whatever state the bot is in, it starts afresh for the next deal

    def fault_context(self, p: Player, f: BotFault, n: int | None, index: int | None,
                      legal: list[str] | None = None, rule: str | None = None) -> FaultContext:
        """Everything :func:`referee.seats.explain.describe` says about fault ``f`` of ``p``
        (read before the bot is ended: its stderr tail is taken from the running seat)."""
        tail = ""
        if p.io is not None:
            with contextlib.suppress(Exception):
                tail = p.io.stderr_tail
        kind = str(f.kind)
        stderr_path = None
        if p.spec.bot is None and p.stderr_path.exists():
            stderr_path = str(p.stderr_path)
        return FaultContext(kind=kind, message=without_seat(f.message, p.seat), bot=p.name, seat=p.seat,
                            partie=n, deal=index, evidence=f.evidence, elapsed_s=f.elapsed,
                            limit_ms=p.last_limit_ms, phase=p.phase, rule=rule,
                            legal=tuple(legal or ()) if kind == "illegal" else (),
                            stderr_tail=tail, stderr_path=stderr_path)

    def _forfeit(self, n: int, partie: Partie, p: Player) -> dict:
        """R12.3: ``p`` has faulted ``max_faults`` times in this partie and forfeits the rest of it."""
        f = partie.forfeit(p.seat)
        if self.log is not None:
            self.log.forfeit(n, f.seat, f.from_deal, f.totals)
        p.stats.forfeited.append({"partie": n, "from_deal": f.from_deal})
        self.progress(f"partie {n}: seat {p.seat} forfeits deals {f.from_deal}-{partie.n_deals} after "
                      f"{p.faults_in_partie} fault{'' if p.faults_in_partie == 1 else 's'} (R12.3: {f.totals[p.seat]} groše)")
        return {"seat": f.seat, "from_deal": f.from_deal}


def builtin_bot_folders() -> tuple[str, ...]:
    """The package folders a built-in bot imports (shown to it read-only in the sandbox)."""
    import bots
    import protocol
    return tuple(str(Path(m.__file__).resolve().parent) for m in (bots, protocol, sys.modules[__package__]))


def bot_limits(spec: BotSpec, limits: Limits) -> dict:
    """The match's ``limits`` with the bot's own overrides: what its hello announces and its clock keeps."""
    lim = limits.to_dict()
    for key in ("move_ms", "startup_ms", "bank_ms", "increment_ms"):
        value = getattr(spec, key)
        if value is not None:
            lim[key] = value
    return lim


def sdk_folders() -> tuple[str, ...]:
    """The Python bot SDK's package folder (``protocol``, public code), shown read-only to every bot:
    a bot written with ``protocol.sdk`` imports it from wherever marias is installed, also from an
    editable checkout under a hidden folder such as /home or /tmp."""
    import protocol
    return (str(Path(protocol.__file__).resolve().parent),)


def shown_folders(spec: BotSpec) -> tuple[str, ...]:
    """What the sandbox shows a bot beyond its command's own paths (:mod:`referee.seats.sandbox`)."""
    return builtin_bot_folders() if spec.builtin else sdk_folders()


def rule_broken(deal: Deal, f: BotFault) -> str | None:
    """For an illegal answer, the rule it breaks as the engine explains it (``R7.2: …``)."""
    if f.kind is not FaultKind.ILLEGAL:
        return None
    try:
        text = json.loads(f.evidence).get("action")
    except (ValueError, AttributeError):
        return None  # evidence cut short: the action is not known whole
    if not isinstance(text, str):
        return f"PROTOCOL.md section 5: the action must be a string, not {type(text).__name__}"
    try:
        deal.verify(text)
    except IllegalAction as e:
        return f"{e.rule}: {e.detail}"
    except ActionError as e:
        return f"not an action of PROTOCOL.md section 6: {e}"
    return None


def without_seat(message: str, seat: int) -> str:
    """A fault message without its leading ``seat N: `` (the headline names bot and seat)."""
    import re

    return re.sub(r"^seat [0-2]: ", "", message)  # (the seat the process was started in, or its own)


def answer_index(answer: dict, rid: int, texts: list[str], seat: int, elapsed: float) -> int:
    """Where the action of a bot's ``answer`` to request ``rid`` stands in ``texts`` (the legal
    actions); a :class:`BotFault` if the answer is not an action answer to this request naming one."""
    if answer.get("type") != "action":
        raise BotFault(FaultKind.UNEXPECTED, f"seat {seat}: expected an action answer, got type {_shown(answer.get('type'))}",
                       _raw(answer), elapsed)
    got = answer.get("id")
    if type(got) is not int or got != rid:  # 11.0 and true are not JSON integers
        raise BotFault(FaultKind.WRONG_ID, f"seat {seat}: answer id {_shown(got)} is not the request id {rid} "
                       "(a JSON integer)", _raw(answer), elapsed)
    text = answer.get("action")
    if type(text) is str:
        try:
            return texts.index(text)
        except ValueError:
            pass  # not among them: the fault below
    raise BotFault(FaultKind.ILLEGAL, f"seat {seat}: action {_shown(text)} is not one of the {len(texts)} legal actions",
                   _raw(answer), elapsed)


def _raw(answer: dict) -> str:
    """The evidence of a bad answer: its first 300 characters, and its length if longer."""
    return evidence(json.dumps(answer, ensure_ascii=False))


def _shown(value, limit: int = 60) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters (the evidence keeps more)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"…({len(text)} chars)"


def run_match(config: MatchConfig, progress: Callable[[str], None] | None = None) -> MatchResult:
    return Referee(config, progress).run()
