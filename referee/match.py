"""The referee loop: plays partie between three bot processes (PROTOCOL.md).

The referee owns the rules engine (:mod:`referee.deal`): it asks the player to
move with his seat's view and the complete list of legal actions, checks the
answer, applies it and tells every seat what it may see.  A breach (R12.1) ends
the deal and is settled by the engine (R12.2); a bot that died or misbehaved is
started afresh for the next deal, and after ``max_faults`` faults in a partie it
is replaced by the built-in robot for the rest of that partie (R12.3).

Bots are processes (:mod:`referee.process`); built-in bots run as
``marias bot NAME`` so they take exactly the path of an external bot.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from protocol import messages as M

from . import __version__
from .actions import Action
from .cards import Card, parse_deck
from .deal import Deal
from .partie import Partie
from .process import BotCommand, BotFault, BotProcess, FaultKind, encode_line

BUILTIN_BOTS = ("random", "robot")


@dataclass
class BotSpec:
    """How to start one bot: a built-in name or a command line (never run through a shell)."""

    label: str
    argv: list[str]
    cwd: str | None = None
    env: dict[str, str] | None = None
    builtin: str | None = None
    # per-bot overrides of the match's limits (None: the match's)
    move_ms: int | None = None
    startup_ms: int | None = None
    bank_ms: int | None = None
    increment_ms: int | None = None
    # a protocol.sdk.Bot played in-process (referee/seat.py) instead of starting argv
    bot: object | None = None

    @classmethod
    def parse(cls, value: str, *, seed: str | int = 0) -> "BotSpec":
        """``random``/``robot`` (optionally ``random:SEED``) or a command line split like a shell would."""
        name, _, arg = value.partition(":")
        if name in BUILTIN_BOTS and " " not in value:
            argv = [sys.executable, "-m", "bots", name]  # what `marias bot NAME` runs, without the CLI toolkit
            if name == "random":
                argv += ["--seed", arg or str(seed)]
            return cls(label=value, argv=argv, builtin=name)
        try:
            argv = shlex.split(value)
        except ValueError as e:
            raise ValueError(f"cannot parse bot command {value!r}: {e}") from None
        if not argv:
            raise ValueError("empty bot command")
        return cls(label=value, argv=argv)

    def exe_sha256(self) -> str | None:
        """A hash of the executable (or script) that is run, where there is one."""
        candidates = [a for a in self.argv[1:3] if os.path.isfile(a)] if self.argv and Path(self.argv[0]).name.startswith(("python", "node", "ruby", "perl")) else []
        path = candidates[0] if candidates else shutil.which(self.argv[0]) if self.argv else None
        if not path or not os.path.isfile(path):
            return None
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()

    def to_dict(self) -> dict:
        d = {"label": self.label, "command": self.argv if self.builtin is None else f"builtin:{self.builtin}"}
        if self.cwd:
            d["cwd"] = self.cwd
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
    max_faults: int = 3  # faults in a partie before the bot is replaced by the robot (R12.3)

    def to_dict(self) -> dict:
        return {"max_faults": self.max_faults, "replacement": "robot", "restart": "next deal"}


@dataclass
class MatchConfig:
    bots: list[BotSpec]
    partie: int = 1
    seed: int | str = 1
    decks: list[list[Card]] | None = None
    limits: Limits = field(default_factory=Limits)
    policy: FaultPolicy = field(default_factory=FaultPolicy)
    log_path: Path | None = None
    transcript: bool = False
    work_dir: Path | None = None  # where stderr files go when there is no log
    keep_partie: bool = False  # keep the Partie objects in the result (tests, reports)


@dataclass
class SeatStats:
    decisions: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    faults: dict[str, int] = field(default_factory=dict)
    replaced_in: list[int] = field(default_factory=list)

    def add_time(self, ms: float) -> None:
        self.decisions += 1
        self.total_ms += ms
        if ms > self.max_ms:
            self.max_ms = ms

    def to_dict(self) -> dict:
        return {"decisions": self.decisions, "mean_ms": round(self.total_ms / self.decisions, 3) if self.decisions else 0.0,
                "max_ms": round(self.max_ms, 3), "faults": dict(self.faults), "replaced_in_partie": list(self.replaced_in)}


@dataclass
class MatchResult:
    names: list[str]
    partie_totals: list[list[int]]
    partie_places: list[list[float]]
    stats: list[SeatStats]
    log_path: Path | None
    faults: list[dict]
    parties: list[Partie] = field(default_factory=list)

    @property
    def totals(self) -> list[int]:
        return [sum(t[s] for t in self.partie_totals) for s in range(3)]

    def to_dict(self) -> dict:
        return {"names": self.names, "partie_totals": self.partie_totals, "partie_places": self.partie_places,
                "totals": self.totals, "seats": [s.to_dict() for s in self.stats],
                "faults": self.faults, "log": str(self.log_path) if self.log_path else None}


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


# ---------------------------------------------------------------- redaction
def public_action(deal: Deal, index: int, viewer: int) -> str:
    """The text of ``deal.history[index]`` as ``viewer`` may see it (the same rules as Deal.view bids)."""
    seat, action = deal.history[index]
    if viewer == seat:
        return str(action)
    if action.kind == "trump":
        return str(action) if not action.cards or deal.trump_shown else "trump"
    if action.kind in ("barva", "betl", "durch") and action.cards:
        return action.kind
    return str(action)


# ---------------------------------------------------------------- players
class Player:
    """One seat's bot across the match: its process, its announced name, its faults."""

    def __init__(self, seat: int, spec: BotSpec, config: MatchConfig, transcript_file=None):
        self.seat = seat
        self.spec = spec
        self.config = config
        self.proc: BotProcess | None = None
        self.name = spec.label
        self.version = ""
        self.announced = False
        self.replacement = None  # in-process robot after too many faults
        self.pending_fault: BotFault | None = None  # a start-up failure, charged at the next deal
        self.pending: list[str] = []  # informational messages not yet written, encoded (encode_line)
        self.faults_in_partie = 0
        self.stats = SeatStats()
        self.bank_ms: float | None = None
        self._transcript_file = transcript_file
        self._limits = self._make_limits()
        stem = config.log_path.with_suffix("") if config.log_path else (config.work_dir or Path(tempfile.gettempdir())) / "marias"
        self.stderr_path = Path(f"{stem}.seat{seat}.stderr.log")

    def _transcript(self, direction: str, line: str) -> None:
        f = self._transcript_file
        if f is not None:
            f.write(json.dumps({"seat": self.seat, "dir": direction, "t": round(time.time(), 6), "line": line},
                               ensure_ascii=False) + "\n")

    @property
    def ready(self) -> bool:
        return self.replacement is not None or (self.proc is not None and self.proc.alive and not self.proc.closed)

    async def ensure_started(self, partie_msg: dict) -> None:
        """Start (or restart) the process, handshake, and tell it the partie; raises BotFault."""
        if self.replacement is not None:
            return
        if self.proc is not None and self.proc.alive and not self.proc.closed:
            return
        if self.proc is not None:
            await self.proc.close()
        self.pending = []  # a fresh process starts with a fresh story
        lim = self.config.limits
        env = dict(self.spec.env or {})
        if self.spec.bot is not None:
            from .seat import InProcessSeat
            self.proc = InProcessSeat(self.spec.bot, name=f"seat {self.seat}")
        else:
            self.proc = BotProcess(BotCommand(self.spec.argv, self.spec.cwd, env or None), name=f"seat {self.seat}",
                                   stderr_path=self.stderr_path, stderr_cap=lim.stderr_cap, max_line=lim.max_line,
                                   transcript=self._transcript if self._transcript_file else None)
        try:
            await self.proc.start()
        except BotFault:
            self.proc = None
            raise
        limits = self.limits()
        answer, _ = await self.proc.request(M.hello(__version__, limits), limits["startup_ms"] / 1000)
        if answer.get("type") != "hello":
            raise BotFault(FaultKind.UNEXPECTED, f"seat {self.seat}: expected a hello answer, got type {answer.get('type')!r}",
                           json.dumps(answer)[:300])
        if answer.get("protocol") != M.PROTOCOL_VERSION:
            raise BotFault(FaultKind.UNEXPECTED, f"seat {self.seat}: protocol {answer.get('protocol')!r} is not {M.PROTOCOL_VERSION}",
                           json.dumps(answer)[:300])
        if not self.announced:
            self.name = str(answer.get("name") or self.spec.label)[:80]
            self.version = str(answer.get("version") or "")[:40]
            self.announced = True
        await self.proc.send(partie_msg)

    def queue(self, msg: dict) -> None:
        """An informational message, written together with the next request (or flush)."""
        self.pending.append(encode_line(msg))

    def queue_lines(self, lines: list[str]) -> None:
        """Informational messages encoded already (shared with other seats that get the same lines)."""
        self.pending += lines

    async def flush(self) -> None:
        """Deliver the queued informational messages; a failure is noticed at the next request."""
        lines, self.pending = self.pending, []
        if not lines:
            return
        if self.replacement is not None:
            for line in lines:
                m = M.decode(line)
                hook = getattr(self.replacement, "on_" + m["type"], None)
                if hook is not None:
                    hook(m)
            return
        if self.proc is None or self.proc.closed:
            return
        with contextlib.suppress(BotFault):  # a dead bot is noticed (and charged) at its next request
            await self.proc.send_lines(lines)

    async def send(self, msg: dict) -> None:
        self.queue(msg)
        await self.flush()

    async def request(self, line: str, timeout: float) -> tuple[dict, float]:
        """The request (encoded), preceded in the same write by the queued messages."""
        lines, self.pending = self.pending, []
        lines.append(line)
        return await self.proc.request_lines(lines, timeout)

    def limits(self) -> dict:
        """The match's limits with this bot's overrides (what its hello announces)."""
        return dict(self._limits)

    def _make_limits(self) -> dict:
        lim = self.config.limits.to_dict()
        for key in ("move_ms", "startup_ms", "bank_ms", "increment_ms"):
            value = getattr(self.spec, key)
            if value is not None:
                lim[key] = value
        return lim

    def decision_limit_ms(self) -> float:
        lim = self._limits
        move = lim["move_ms"]
        if self.bank_ms is None:
            return move
        self.bank_ms += lim["increment_ms"]
        # an empty bank leaves no time at all: the flag has fallen (a timeout)
        return max(0.0, min(move, self.bank_ms) if move else self.bank_ms)

    async def close(self) -> None:
        if self.proc is not None:
            await self.proc.close()


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
        self._transcripts = []
        self.parties: list[Partie] = []
        self.play_seconds = 0.0

    async def run(self) -> MatchResult:
        cfg = self.config
        if cfg.log_path is not None:
            cfg.log_path.parent.mkdir(parents=True, exist_ok=True)
        else:
            cfg.work_dir = cfg.work_dir or Path(tempfile.mkdtemp(prefix="marias-"))
        tfiles = [None, None, None]
        if cfg.transcript:
            stem = cfg.log_path.with_suffix("") if cfg.log_path else cfg.work_dir / "marias"
            tfiles = [open(f"{stem}.seat{s}.transcript.jsonl", "w", encoding="utf-8") for s in range(3)]
            self._transcripts = tfiles
        players = [Player(s, spec, cfg, tfiles[s]) for s, spec in enumerate(cfg.bots)]
        partie_totals: list[list[int]] = []
        partie_places: list[list[float]] = []
        try:
            # handshake first so the log header can name what each bot announced
            async def start(p: Player) -> None:
                try:
                    await p.ensure_started(M.partie_start(1, p.seat, 12, [b.label for b in cfg.bots]))
                except BotFault as f:
                    p.pending_fault = f  # charged at the first deal (R12.1: the bot process ended)

            await asyncio.gather(*(start(p) for p in players))  # the three start at once
            t_play = time.perf_counter()
            if cfg.log_path is not None:
                from .log import LogWriter
                self.log = LogWriter(cfg.log_path, self._header(players))
            for i in range(cfg.partie):
                n = i + 1
                deck = cfg.decks[i] if cfg.decks else None
                partie = Partie(deck, seed=f"{cfg.seed}:{n}")
                totals = await self._play_partie(n, partie, players)
                partie_totals.append(totals)
                partie_places.append(partie.places())
                if cfg.keep_partie:
                    self.parties.append(partie)
                self.progress(f"partie {n}: {totals}")
            self.play_seconds = time.perf_counter() - t_play
            if self.log is not None:
                self.log.close()
        finally:
            for p in players:
                if p.proc is not None and not p.proc.closed:
                    with contextlib.suppress(BotFault):  # it is ended below either way
                        await p.proc.send(M.BYE)
            await asyncio.gather(*(p.close() for p in players), return_exceptions=True)
            for f in tfiles:
                if f is not None:
                    f.close()
        return MatchResult([p.name for p in players], partie_totals, partie_places, [p.stats for p in players],
                           cfg.log_path, self.faults, self.parties)

    def _header(self, players: list[Player]) -> dict:
        cfg = self.config
        return {
            "referee_version": __version__,
            "seed": cfg.seed,
            "partie": cfg.partie,
            "bots": [{"seat": p.seat, **p.spec.to_dict(), "name": p.name, "version": p.version,
                      "exe_sha256": p.spec.exe_sha256()} for p in players],
            "limits": cfg.limits.to_dict(),
            "fault_policy": cfg.policy.to_dict(),
        }

    async def _play_partie(self, n: int, partie: Partie, players: list[Player]) -> list[int]:
        cfg = self.config
        names = [b.label for b in cfg.bots]
        for p in players:
            p.faults_in_partie = 0
            p.replacement = None
            bank = p.limits()["bank_ms"]
            p.bank_ms = float(bank) if bank else None
            if p.proc is not None and p.proc.alive and not p.proc.closed and n > 1:
                await p.send(M.partie_start(n, p.seat, partie.n_deals, names))
        if self.log is not None:
            self.log.partie_start(n, f"{cfg.seed}:{n}", [str(c) for c in partie.initial_deck])
        for deal in partie.iter_deals():
            index = len(partie.deals)
            deck = list(deal.deck)
            times = await self._play_deal(n, index, partie.cuts[-1], deal, players, partie)
            if self.log is not None:
                self.log.deal(n, index, deal, partie.cuts[-1], [str(c) for c in deck], times)
        totals = partie.totals()
        places = partie.places()
        for p in players:
            await p.send(M.partie_end(n, totals, places))
        if self.log is not None:
            self.log.partie_end(n, totals, places)
        return totals

    async def _play_deal(self, n: int, index: int, cut: int | None, deal: Deal, players: list[Player], partie: Partie) -> list[float]:
        cfg = self.config
        names = [b.label for b in cfg.bots]
        times: list[float] = []
        # make sure every seat has a working bot; a bot that cannot start faults this deal
        for p in players:
            if p.pending_fault is not None:
                f, p.pending_fault = p.pending_fault, None
                self._fault(deal, p, f, n, index)
                break
            if p.ready:
                continue
            try:
                await p.ensure_started(M.partie_start(n, p.seat, partie.n_deals, names))
            except BotFault as f:
                self._fault(deal, p, f, n, index)
                break
        totals = partie.totals()  # groše so far in this partie (this deal is not settled yet)
        for p in players:
            p.queue(M.deal_start(n, index, p.seat, deal.forhont, deal.dealer, cut, totals))
        while not deal.done:
            seat = deal.to_move
            p = players[seat]
            legal = deal.legal_actions()
            texts = [a.code for a in legal]
            decision = deal.decision
            if p.replacement is not None:
                await p.flush()
                t0 = time.perf_counter()
                try:
                    choice = p.replacement.decide(decision, deal.view(seat), texts)
                    action = legal[texts.index(choice)]
                except Exception as e:  # the stand-in must never stop the match
                    self.progress(f"partie {n} deal {index}: replacement robot failed ({e!r}); first legal action taken")
                    action = legal[0]
                ms = (time.perf_counter() - t0) * 1000
            else:
                self.request_id += 1
                rid = self.request_id
                limit_ms = p.decision_limit_ms()
                line = request_line(rid, n, index, decision, deal.view(seat), texts, int(limit_ms), totals)
                try:
                    answer, elapsed = await p.request(line, limit_ms / 1000)
                    action = self._check_answer(answer, rid, legal, seat, elapsed)
                except BotFault as f:
                    self._fault(deal, p, f, n, index)
                    break
                ms = elapsed * 1000
                if p.bank_ms is not None:
                    p.bank_ms -= ms
            p.stats.add_time(ms)
            times.append(round(ms, 3))
            before_tricks = len(deal.tricks)
            before_hl = len(deal.hlasky)
            deal.apply(action)
            for q, lines in zip(players, event_lines(n, index, deal, decision, before_tricks, before_hl)):
                q.queue_lines(lines)
        if deal.fault_info is not None:
            fi = deal.fault_info
            line = encode_line(M.event(n, index, M.fault_event(fi.seat, fi.kind, fi.message)))
            for q in players:
                q.queue_lines([line])
        result = deal.result.to_dict()
        for p in players:
            p.queue(M.deal_end(n, index, p.seat, deal.view(p.seat), result))
            await p.flush()
        return times

    def _check_answer(self, answer: dict, rid: int, legal: list[Action], seat: int, elapsed: float) -> Action:
        if answer.get("type") != "action":
            raise BotFault(FaultKind.UNEXPECTED, f"seat {seat}: expected an action answer, got type {answer.get('type')!r}",
                           _raw(answer), elapsed)
        if answer.get("id") != rid:
            raise BotFault(FaultKind.WRONG_ID, f"seat {seat}: answer id {answer.get('id')!r} is not the request id {rid}",
                           _raw(answer), elapsed)
        text = answer.get("action")
        if isinstance(text, str):
            for action in legal:
                if action.code == text:
                    return action
        raise BotFault(FaultKind.ILLEGAL, f"seat {seat}: action {text!r} is not one of the {len(legal)} legal actions",
                       _raw(answer), elapsed)

    def _fault(self, deal: Deal, p: Player, f: BotFault, n: int, index: int) -> None:
        deal.fault(p.seat, str(f.kind), f.message, f.evidence, f.elapsed)
        kind = str(f.kind)
        p.stats.faults[kind] = p.stats.faults.get(kind, 0) + 1
        p.faults_in_partie += 1
        self.faults.append({"partie": n, "deal": index, "seat": p.seat, "kind": kind, "message": f.message})
        self.progress(f"partie {n} deal {index}: seat {p.seat} fault {kind}: {f.message}")
        # whatever state the process is in, it starts afresh for the next deal
        if p.proc is not None:
            p.proc.kill()
        if p.faults_in_partie >= self.config.policy.max_faults and p.replacement is None:
            import bots
            p.replacement = bots.make("robot")
            p.stats.replaced_in.append(n)
            self.progress(f"partie {n}: seat {p.seat} replaced by the built-in robot after {p.faults_in_partie} faults (R12.3)")


def _raw(answer: dict) -> str:
    """The evidence of a bad answer: its first 300 characters."""
    return json.dumps(answer, ensure_ascii=False)[:300]


def deal_events(deal: Deal, decision: str, before_tricks: int, before_hl: int, viewer: int) -> list[dict]:
    """The event bodies ``viewer`` is told after the last action of ``deal``
    (``before_*``: how many tricks and hlášky there were before it)."""
    text = public_action(deal, len(deal.history) - 1, viewer)
    return [_action_event(deal, decision, text), *_shared_events(deal, before_tricks, before_hl)]


def _action_event(deal: Deal, decision: str, text: str) -> dict:
    """The event of the last action, shown as ``text`` (its :func:`public_action`
    for the viewer: the only part of the events that depends on the viewer)."""
    seat, action = deal.history[-1]
    shown = str(deal.trump_card) if action.kind == "contract" else None
    return M.action_event(seat, decision, text, shown)


def _shared_events(deal: Deal, before_tricks: int, before_hl: int) -> list[dict]:
    """The event bodies after the last action that every seat is told alike."""
    out = [M.hlaska_event(hl.to_dict()) for hl in deal.hlasky[before_hl:]]
    out += [M.trick_event(leader, [str(c) for c in cards], winner) for leader, cards, winner in deal.tricks[before_tricks:]]
    if deal.history[-1][1].kind == "lay" and deal.laid:
        out.append(M.laid_event(deal.laid[0], [str(c) for c in deal.laid[1]]))
    return out


def event_lines(n: int, index: int, deal: Deal, decision: str, before_tricks: int, before_hl: int) -> list[list[str]]:
    """For each seat, the encoded ``event`` messages of :func:`deal_events`.  Each
    distinct line is encoded once and shared by every seat that is told the
    same (usually all three: only a hidden discard or trump card makes the
    action event differ)."""
    h = len(deal.history) - 1
    shared = [encode_line(M.event(n, index, body)) for body in _shared_events(deal, before_tricks, before_hl)]
    by_text: dict[str, str] = {}  # public text of the action -> its encoded event
    out = []
    for viewer in range(3):
        text = public_action(deal, h, viewer)
        line = by_text.get(text)
        if line is None:
            line = by_text[text] = encode_line(M.event(n, index, _action_event(deal, decision, text)))
        out.append([line, *shared])
    return out


def request_line(rid: int, n: int, index: int, decision: str, view: dict, texts: list[str], time_ms: int,
                 totals: list[int] | None = None) -> str:
    """``encode_line(M.request(...))``, faster for long legal lists (a talon
    decision has hundreds): the legal texts are joined as they are, which is
    exactly their JSON when none holds a character JSON would escape (checked:
    otherwise, or should ``legal`` ever stop being the last field, the encoder
    does it all)."""
    joined = '","'.join(texts)
    if texts and joined.isascii() and joined.isprintable() and '"' not in joined and "\\" not in joined:
        text = encode_line(M.request(rid, n, index, decision, view, [], time_ms, totals))
        if text.endswith(',"legal":[]}'):
            return text[:-3] + '["' + joined + '"]}'
    return encode_line(M.request(rid, n, index, decision, view, texts, time_ms, totals))


def run_match(config: MatchConfig, progress: Callable[[str], None] | None = None) -> MatchResult:
    return asyncio.run(Referee(config, progress).run())
