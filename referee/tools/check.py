"""``marias check COMMAND``: a conformance check of one bot, run before any match.

The bot is started exactly as the referee starts it (the same :class:`~referee.matches.match.Player`
and :class:`~referee.seats.process.BotProcess`, the same limits) and plays three partie
against two scripted in-process opponents (:class:`Steer`, behind
:class:`~referee.seats.seat.InProcessSeat`), one partie in each seat, on decks shuffled
from a fixed seed.  The opponents steer the deals towards every kind of decision:
they take the trump card z lidu and from the hand, announce barva, betl and durch,
answer špatná and durch, raise whatever may be raised (up to boty) and announce
games against.  With its first two requests the bot is sent a message type it
cannot know and a request with fields it cannot know.  Then ``bye``, and stdin is
closed.

The report has one :class:`Check` per requirement, each passed or failed with the
fix (the hint of :func:`referee.seats.explain.describe`), which action forms the bot was
offered and which it answered, its slowest decisions, what it wrote on stdout that
was not an answer, and whether it exited after ``bye``.
"""

from __future__ import annotations

import contextlib
import os
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from protocol import messages as M

from ..rules.actions import LEVEL_NAMES
from ..seats.explain import describe, hint, shorten
from ..seats.faults import BotFault, FaultKind
from ..matches.match import without_seat
from ..matches.match import BYE_LINE, BotSpec, FaultPolicy, Limits, MatchConfig, Player, Referee
from ..rules.partie import Partie
from ..seats.process import BotProcess, Poller, encode_line
from ..seats.sandbox import SandboxLimits, resolve_mode

SEED = "marias-check"
#: Partie played (the bot in seat 0, then 1, then 2).
PARTIE = 3
#: The coverage run stops after this many faults (each is reported).
MAX_FAULTS = 3
#: How long the bot may take to exit after ``bye`` (and again after stdin is closed), in s.
BYE_WAIT = 2.0
#: After a timeout, how long to wait for a late answer before calling it unflushed, in s.
LATE_WAIT = 3.0

#: Every form of action a bot can be offered; the coverage lists which were reached.
FORMS = ("trump:card", "trump:zlidu", "talon:barva", "talon:betl", "talon:durch",
         "answer:dobra", "answer:spatna", "answer:durch",
         "contract:hra", "contract:sedma", "contract:sto", "contract:sto-sedma",
         "flek:dobra", "flek:flek", "flek:re", "flek:tutti", "flek:boty", "proti:sedma", "proti:sto",
         "play:card", "lay")

UNKNOWN_TYPE = {"type": "x-check-unknown", "note": "a message type from a later protocol version: ignore it"}
UNKNOWN_FIELDS = {"x_check_unknown": {"note": "a field from a later protocol version: ignore it"}}


def forms(decision: str, text: str, view: dict) -> list[str]:
    """The action forms (of :data:`FORMS`) one legal action text stands for."""
    if decision == "trump":
        return ["trump:zlidu" if text == "trump:zlidu" else "trump:card"]
    if decision == "talon":
        return ["talon:" + text.split(":")[0]]
    if decision == "answer":
        return ["answer:" + text]
    if decision == "contract":
        return ["contract:" + text.partition(":")[2]]
    if decision == "play":
        return ["lay" if text == "lay" else "play:card"]
    out = []
    levels = view.get("levels") or {}
    for item in text.split(" "):
        kind, _, name = item.partition(":")
        if kind == "flek":
            out.append("flek:" + LEVEL_NAMES[min(int(levels.get(name, 0)) + 1, len(LEVEL_NAMES) - 1)])
        elif kind == "proti":
            out.append("proti:" + name)
        else:
            out.append("flek:" + item)
    return out


class Steer:
    """A scripted opponent (a :class:`protocol.sdk.Bot` in effect): its choices open as
    many kinds of decision to the others as it can.  Deterministic for a seed."""

    name = "check-opponent"
    version = "1"

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)
        self.deals = 0

    def on_hello(self, msg: dict) -> None: ...
    def on_partie_start(self, msg: dict) -> None: ...
    def on_event(self, msg: dict) -> None: ...
    def on_deal_end(self, msg: dict) -> None: ...
    def on_partie_end(self, msg: dict) -> None: ...

    def on_deal_start(self, msg: dict) -> None:
        self.deals += 1

    def decide(self, decision: str, view: dict, legal: list[str]) -> str:
        k = self.deals
        if decision == "trump":
            zlidu = [a for a in legal if a == "trump:zlidu"]
            return zlidu[0] if zlidu and k % 2 else self.rng.choice([a for a in legal if a != "trump:zlidu"] or legal)
        if decision == "talon":
            want = ("barva", "betl", "durch")[k % 3]
            return self.rng.choice([a for a in legal if a.split(":")[0] == want] or legal)
        if decision == "answer":
            want = ("spatna", "durch", "dobra", "durch")[k % 4]
            return want if want in legal else legal[0]
        if decision == "flek":  # raise everything that may be raised
            return max(legal, key=lambda a: (0 if a == "dobra" else len(a.split(" ")), a))
        if decision == "contract":
            return self.rng.choice(legal)
        plays = [a for a in legal if a != "lay"]
        return self.rng.choice(plays or legal)


@dataclass
class Check:
    name: str
    ok: bool | None  # None: not reached (an earlier failure ended the run)
    detail: str = ""
    fix: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


@dataclass
class Decision:
    partie: int
    deal: int
    seat: int
    decision: str
    ms: float
    action: str


@dataclass
class CheckReport:
    command: str
    name: str = ""
    checks: list[Check] = field(default_factory=list)
    offered: dict[str, int] = field(default_factory=dict)
    answered: dict[str, int] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    stray_stdout: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)  # describe() texts
    exit_status: str = ""
    stderr_dir: str = ""
    not_run: str = "not run: the bot did not start"  # why the later checks were not run
    unbuffered_env: bool = False  # PYTHONUNBUFFERED is set and the bot is a Python program

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    def slowest(self, n: int = 5) -> list[Decision]:
        return sorted(self.decisions, key=lambda d: -d.ms)[:n]

    def not_offered(self) -> list[str]:
        return [f for f in FORMS if f not in self.offered]

    def to_dict(self) -> dict:
        return {"command": self.command, "name": self.name, "ok": self.ok,
                "checks": [c.to_dict() for c in self.checks],
                "offered": dict(self.offered), "answered": dict(self.answered), "not_offered": self.not_offered(),
                "decisions": len(self.decisions),
                "slowest": [d.__dict__ for d in self.slowest()],
                "stray_stdout": self.stray_stdout, "faults": self.faults,
                "exit": self.exit_status, "stderr_dir": self.stderr_dir,
                "pythonunbuffered_set": self.unbuffered_env}

    def lines(self) -> list[str]:
        out = [f"marias check {self.command}" + (f"  (announced as {self.name!r})" if self.name else "")]
        for c in self.checks:
            mark = "PASS" if c.ok else "FAIL" if c.ok is False else "NOT RUN"
            out.append(f"  {mark:7} {c.name}" + (f": {c.detail}" if c.detail else ""))
            if c.fix and not c.ok:
                out.append(f"          fix: {c.fix}")
        out.append(f"decisions answered: {len(self.decisions)}")
        out.append("requests offering each action form (answered with it):")
        for f in FORMS:
            if f in self.offered:
                out.append(f"  {f:18} {self.offered[f]:5} ({self.answered.get(f, 0)})")
        missing = self.not_offered()
        if missing:
            out.append("  not reached (they depend on this bot's own choices too): " + ", ".join(missing))
        if self.decisions:
            out.append("slowest decisions:")
            for d in self.slowest():
                out.append(f"  {d.ms:9.1f} ms  partie {d.partie} deal {d.deal} seat {d.seat} {d.decision}: {d.action}")
        if self.stray_stdout:
            out.append("written to stdout that was not an answer:")
            out += [f"  {shorten(s, 120)}" for s in self.stray_stdout]
        for text in self.faults:
            out.append(text)
        out.append(f"after bye: {self.exit_status or 'not checked (' + self.not_run.removeprefix('not run: ') + ')'}")
        if self.unbuffered_env:
            out.append("note: PYTHONUNBUFFERED is set in this environment, so a Python bot that never flushes "
                       "passes here and fails elsewhere: check again with `env -u PYTHONUNBUFFERED marias check …`")
        out.append(f"bot's stderr: {self.stderr_dir}")
        out.append("result: " + ("every check passed" if self.ok else "FAILED"))
        return out


class _Enough(Exception):
    """Too many faults: the coverage run stops."""


class _CheckPlayer(Player):
    """The checked bot's seat: records each decision and carries the injected lines."""

    report: CheckReport
    inject: list[str]  # "type", "fields": injected into the next requests, in order
    injected_at: dict[int, str]  # request id -> what was injected with it

    current_rid: int | None = None  # the request being answered (None after a restart)

    def start(self) -> None:
        self.current_rid = None
        super().start()

    def request(self, line: str, timeout: float):
        req = orjson.loads(line)
        self.current_rid = req["id"]
        what = self.inject.pop(0) if self.inject else None
        if what == "type":
            self.pending.append(encode_line(UNKNOWN_TYPE))
        elif what == "fields":
            line = encode_line({**req, **UNKNOWN_FIELDS, "view": {**req["view"], **UNKNOWN_FIELDS}})
        if what:
            self.injected_at[req["id"]] = what
        decision, view = req["decision"], req["view"]
        for f in {f for text in req["legal"] for f in forms(decision, text, view)}:  # once per request
            self.report.offered[f] = self.report.offered.get(f, 0) + 1
        answer, elapsed = super().request(line, timeout)
        action = answer.get("action")
        if isinstance(action, str) and action in req["legal"]:
            for f in set(forms(decision, action, view)):
                self.report.answered[f] = self.report.answered.get(f, 0) + 1
            self.report.decisions.append(Decision(req["partie"], req["deal"], self.seat, decision,
                                                  round(elapsed * 1000, 3), action))
        return answer, elapsed


class _CheckReferee(Referee):
    def __init__(self, config: MatchConfig, bot: _CheckPlayer, report: CheckReport):
        super().__init__(config)
        self.bot = bot
        self.report = report
        self.fault_records: list[tuple[BotFault, dict, str]] = []  # fault, record, diagnosis

    def _fault(self, deal, p, f, n, index, legal=None, rule=None):
        diagnosis = diagnose(p, f) if p is self.bot else ""
        rid = self.bot.current_rid
        super()._fault(deal, p, f, n, index, legal, rule)
        if p is self.bot:
            self.fault_records.append((f, {**self.faults[-1], "request": rid}, diagnosis))
            if len(self.fault_records) >= MAX_FAULTS:
                raise _Enough


def diagnose(p: Player, f: BotFault) -> str:
    """After a timeout, was the answer late or never flushed?  ``"late"``, ``"unflushed"``,
    ``"silent"`` (no answer even at the end of its input) or ``""`` (not a timeout).
    Waits up to :data:`LATE_WAIT` seconds for the answer, then closes the bot's stdin: a
    program that did not flush writes its buffer out as it ends."""
    if f.kind is not FaultKind.TIMEOUT or not isinstance(p.io, BotProcess) or not p.io.alive:
        return ""
    io = p.io
    with contextlib.suppress(BotFault):
        io.receive(LATE_WAIT)
        return "late"
    io._close_stdin()
    with contextlib.suppress(BotFault):
        io.receive(BYE_WAIT)
        return "unflushed"
    return "silent"


_KIND_CHECK = {  # fault kind -> the check it fails
    "timeout": "answers in time", "malformed": "stdout holds only answers", "unexpected": "stdout holds only answers",
    "wrong-id": "answers carry the request id", "illegal": "answers are legal actions",
    "exit": "stays up", "closed": "stays up", "line-too-long": "stdout holds only answers", "start": "starts and answers hello",
}
_FIXES = {
    "unflushed": "answer not flushed: flush stdout after every line (the answer came only when its input was closed)",
    "late": "answer late: it came after the time limit; answer within time_ms of the request (think less, or keep a margin)",
    "silent": "no answer at all, even when its input was closed: the bot hangs (a blocking read or an endless loop)",
}


def run_check(command: str, *, move_ms: int = 2000, startup_ms: int = 10_000, seed: str = SEED,
              work_dir: Path | None = None, cwd: str | None = None, sandbox: str = "auto",
              sandbox_limits: "SandboxLimits | None" = None) -> CheckReport:
    """Check the bot started by ``command`` (a command line, or a built-in bot name), in the
    sandbox it would play in (``sandbox``: a mode of :mod:`referee.seats.sandbox`, with ``sandbox_limits``,
    default the match's defaults)."""
    spec = BotSpec.parse(command, seed=seed)
    if cwd:
        spec.cwd = cwd
    report = CheckReport(command)
    from ..matches.preflight import static_problems

    problems = static_problems(spec)  # as match says it: a path with spaces, a built-in misspelt
    if problems:
        report.checks.append(Check("starts and answers hello", False, "start: " + "; ".join(problems),
                                   "the program could not be started: check the command, its path and that it "
                                   "is executable"))
        report.not_run = "not run: the bot could not be started"
        _judge(report, None, False, None)
        return report
    report.unbuffered_env = bool(os.environ.get("PYTHONUNBUFFERED")) and (
        spec.builtin is not None or "python" in Path(spec.argv[0]).name)
    work = work_dir or Path(tempfile.mkdtemp(prefix="marias-check-"))
    work.mkdir(parents=True, exist_ok=True)
    report.stderr_dir = str(work)
    opponents = [BotSpec(label=f"opponent {i}", argv=[], bot=Steer(f"{seed}:opp{i}")) for i in (1, 2)]
    config = MatchConfig(bots=[spec, *opponents], partie=PARTIE, seed=seed,
                         limits=Limits(startup_ms=startup_ms, move_ms=move_ms),
                         policy=FaultPolicy(max_faults=10_000), work_dir=work, sandbox=sandbox,
                         sandbox_limits=sandbox_limits or SandboxLimits())
    poller = Poller()
    bot = _CheckPlayer(0, spec, config, poller)
    bot.report, bot.inject, bot.injected_at = report, [], {}
    players = [bot, *(Player(s, o, config, poller) for s, o in zip((1, 2), opponents))]
    ref = _CheckReferee(config, bot, report)
    ref.sandbox = resolve_mode(config.sandbox)  # started as the referee starts it: in its sandbox
    ref._sandbox_players(players, [])
    names = [b.label for b in config.bots]
    started = False
    bye = None
    try:
        try:
            for p in players:
                p.start()
                p.handshake(M.partie_start(1, p.seat, 12, names))
            started = True
        except BotFault as f:
            diagnosis = diagnose(bot, f)
            ctx = ref.fault_context(bot, f, None, None)
            report.faults.append(describe(ctx))
            report.checks.append(Check("starts and answers hello", False, f"{f.kind}: {shorten(f.message, 120)}",
                                       _FIXES.get(diagnosis) or hint(ctx) or ""))
            if f.kind is FaultKind.START:
                report.not_run = "not run: the bot could not be started"
            elif diagnosis == "unflushed":
                report.not_run = "not run: the bot started but its hello answer was not flushed"
            elif diagnosis == "late":
                report.not_run = "not run: the bot started but answered hello too late"
            else:
                report.not_run = f"not run: the bot started but did not answer hello ({f.kind})"
            _stray(report, f)
        report.name = bot.name if bot.announced else ""
        if started:
            report.checks.append(Check("starts and answers hello", True, f"announced {bot.name!r}"))
            with contextlib.suppress(_Enough):
                for n in range(1, PARTIE + 1):
                    seat = n - 1  # partie N: the bot in seat N-1 (a new partie in another seat)
                    order = [players[(i - seat) % 3] for i in range(3)]
                    for s, p in enumerate(order):
                        p.seat = s
                    if n == 1:  # the first two requests: before any other fault can stop the run
                        bot.inject = ["type", "fields"]
                    ref._play_partie(n, Partie(None, seed=f"{seed}:{n}"), order)
            bye = _bye(bot, report)
    finally:
        for p in players:
            p.close()
    _judge(report, ref, started, bye)
    return report


def _bye(bot: Player, report: CheckReport) -> str | None:
    """Send bye, then close stdin; how the bot ended (also written to ``report``)."""
    if not bot.ready:  # ended after its last fault: a fresh one is told bye
        try:
            bot.start()
            bot.handshake(M.partie_start(PARTIE + 1, bot.seat, 12, ["bot", "opponent 1", "opponent 2"]))
        except BotFault:
            bot.kill()
    io = bot.io
    if not isinstance(io, BotProcess) or not io.alive:
        report.exit_status = "not checked (the bot could not be started again after its last fault)"
        return None
    with contextlib.suppress(BotFault):
        io.send_lines([BYE_LINE])
    io.release()  # it runs from now on (frozen while it waited: referee/seats/freezer.py)
    t0 = time.monotonic()
    how = "bye"
    if not io._wait_exit(BYE_WAIT):
        io._close_stdin()
        how = "stdin" if io._wait_exit(BYE_WAIT) else "killed"
    waited = time.monotonic() - t0
    with contextlib.suppress(BotFault, OSError):  # whatever it wrote after the last answer
        while True:
            msg = io.receive(0.05)
            report.stray_stdout.append(orjson.dumps(msg).decode())
    rc = io.returncode
    report.exit_status = {"bye": f"exited {waited * 1000:.0f} ms after bye (status {rc})",
                          "stdin": f"ignored bye; exited only when its stdin was closed (status {rc})",
                          "killed": "ignored bye and the end of its input: killed"}[how]
    return how


def _stray(report: CheckReport, f: BotFault) -> None:
    if f.kind in (FaultKind.MALFORMED, FaultKind.UNEXPECTED, FaultKind.LINE_TOO_LONG) and f.evidence:
        report.stray_stdout.append(f.evidence)


def _judge(report: CheckReport, ref: _CheckReferee, started: bool, bye: str | None) -> None:
    names = ["answers in time", "stdout holds only answers", "answers carry the request id",
             "answers are legal actions", "stays up", "ignores an unknown message type",
             "ignores unknown fields in a request", "plays a new partie in another seat", "exits after bye"]
    if not started:
        report.checks += [Check(n, None, report.not_run) for n in names]
        return
    failed: dict[str, Check] = {}
    injected = ref.bot.injected_at
    for f, record, diagnosis in ref.fault_records:
        ctx_text = record["text"]
        report.faults.append(ctx_text)
        _stray(report, f)
        fix = _FIXES.get(diagnosis) or next((line.strip()[6:] for line in ctx_text.splitlines()
                                             if line.strip().startswith("hint: ")), "")
        rid = record["request"]
        name = _KIND_CHECK.get(str(f.kind), "stays up")
        if rid in injected:
            name = {"type": "ignores an unknown message type", "fields": "ignores unknown fields in a request"}[injected[rid]]
            fix = ("ignore message types you do not know (PROTOCOL.md: later versions may add them)"
                   if injected[rid] == "type" else "ignore fields you do not know, in the request and in its view")
        where = f"partie {record['partie']} deal {record['deal']}"
        message = without_seat(f.message, 0)
        failed.setdefault(name, Check(name, False, f"{where}: {f.kind}: {shorten(message, 100)}", fix))
    stopped = len(ref.fault_records) >= MAX_FAULTS
    seats = {d.seat for d in report.decisions}
    for n in names:
        if n in failed:
            report.checks.append(failed[n])
        elif n == "exits after bye":
            if bye == "bye":
                report.checks.append(Check(n, True, report.exit_status))
            elif bye is None:
                report.checks.append(Check(n, None, report.exit_status))
            else:
                report.checks.append(Check(n, False, report.exit_status,
                                           "end the program when you read bye (do not wait for the end of input)"))
        elif n.startswith("ignores"):
            what = "type" if "type" in n else "fields"
            done = what in injected.values()
            report.checks.append(Check(n, True if done else None, "" if done else "not run: stopped by earlier faults"))
        elif n == "plays a new partie in another seat":
            ok = seats >= {0, 1, 2}
            report.checks.append(Check(n, True if ok else None, f"played seats {sorted(seats)}" if ok else
                                       "not run: stopped by earlier faults"))
        else:
            report.checks.append(Check(n, None if stopped else True, "not run to the end" if stopped else ""))

