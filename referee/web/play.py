"""The play page: a person in the browser takes one seat against two bots, under the match referee.

As ``marias play`` (:mod:`referee.people.play`), the match is :func:`referee.matches.match.run_match`
with the same limits, log and rules; the person's seat is a :class:`BrowserSeat`
(``BotSpec.seat``), which implements the referee's :class:`referee.seats.seat.Seat` the way a bot
process does: every protocol line the referee writes to the seat is appended, unchanged, to
the session's outbox, which the browser reads as server-sent events; a request blocks the
referee's thread until the browser POSTs its answer line, which goes through the protocol's
own decoder.  So the browser receives exactly the lines a bot in that seat receives — already
redacted by the referee — and nothing else; the seat's lines are also kept as a transcript
(LOGS.md, ``--transcript``) beside the log, which ``marias validate --transcript`` checks.

The referee loop is synchronous, so each session's match runs in a thread of its own.  The
person has no time limit (as ``marias play`` without ``--move-time``); the quit button (or the
server stopping) ends the match, leaving the log incomplete, never a result.
"""

from __future__ import annotations

import json
import queue
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from protocol.messages import MessageError, decode_line

from ..logs.log import reserve_log_path
from ..matches.match import BUILTIN_BOTS, BotSpec, Limits, MatchConfig, run_match
from ..rules.partie import new_seed
from ..seats.faults import BotFault, FaultKind
from ..seats.seat import ProcesslessSeat
from ..seats.streams import open_private

#: the person's time per decision: none in practice (as ``marias play`` without ``--move-time``)
NO_LIMIT_MS = 86_400_000
#: sessions kept (finished ones are forgotten first)
MAX_SESSIONS = 16
#: a game whose page has not been connected for this long is stopped (the person left)
ABANDONED_S = 1800.0


class Stop(KeyboardInterrupt):
    """The person (or the server) stopped the match: raised in the referee's thread, which ends it
    as ``marias play`` ends on Ctrl-C (the bots closed, the log without a footer)."""


class BrowserSeat(ProcesslessSeat):
    """The person's seat: lines out to the session's outbox, answers in from the browser."""

    def __init__(self, session: "Session"):
        super().__init__()
        self.session = session

    def send_lines(self, lines: list[str]) -> None:
        if self._closed:
            raise BotFault(FaultKind.EXIT, "the person's seat was closed")
        self.session.emit(lines)

    def request_lines(self, lines: list[str], timeout_s: float | None) -> tuple[dict, float]:
        self.send_lines(lines)
        t0 = time.monotonic()
        raw = self.session.wait_answer(timeout_s)
        elapsed = time.monotonic() - t0
        if raw is None:
            raise BotFault(FaultKind.TIMEOUT, f"no answer within {timeout_s:g} s", "", elapsed)
        try:
            message = decode_line(raw.encode("utf-8"))
        except MessageError as e:
            raise BotFault(FaultKind.MALFORMED, str(e), raw[:300], elapsed) from None
        return message, elapsed


@dataclass
class Session:
    """One person's match: its thread, the lines sent to the browser, the answer awaited."""

    id: str
    seat: int
    bots: list[str]
    log_path: Path
    lines: list[str] = field(default_factory=list)
    state: str = "starting"  # starting | playing | finished | stopped | failed
    error: str | None = None
    totals: list[int] | None = None
    pending: dict | None = None  # the request awaiting an answer (decoded)
    _answers: "queue.Queue[str | None]" = field(default_factory=queue.Queue)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _stop: bool = False
    thread: threading.Thread | None = None
    transcript: object = None
    last_seen: float = field(default_factory=time.monotonic)  # when a page last read the lines

    def emit(self, lines: list[str]) -> None:
        with self._cond:
            for line in lines:
                self.lines.append(line)
                if self.transcript is not None:
                    self.transcript.write(json.dumps({"seat": self.seat, "dir": "send", "t": round(time.time(), 6),
                                                      "line": line}, ensure_ascii=False) + "\n")
                    self.transcript.flush()
            last = json.loads(lines[-1]) if lines else None
            if last is not None and last.get("type") in ("request", "hello"):
                self.pending = last
            self._cond.notify_all()

    def wait_answer(self, timeout_s: float | None) -> str | None:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            if self._stop or time.monotonic() - self.last_seen > ABANDONED_S:
                raise Stop()
            left = 1.0 if deadline is None else min(1.0, deadline - time.monotonic())
            if left <= 0:
                return None
            try:
                raw = self._answers.get(timeout=left)
            except queue.Empty:
                continue
            if raw is None:
                raise Stop()
            if self.transcript is not None:
                self.transcript.write(json.dumps({"seat": self.seat, "dir": "recv", "t": round(time.time(), 6),
                                                  "line": raw}, ensure_ascii=False) + "\n")
                self.transcript.flush()
            return raw

    def answer(self, raw: str) -> str | None:
        """Hand the browser's answer line to the referee; a reason when it is refused instead (the
        person is never charged a fault for a stale or mistaken click: only a listed action of
        the request awaiting an answer is passed on)."""
        if "\n" in raw or len(raw) > 10_000:
            return "one line, please"
        try:
            msg = json.loads(raw)
        except ValueError:
            return "not JSON"
        with self._cond:
            p = self.pending
            if p is None:
                return "nothing is asked now"
            if p["type"] == "hello":
                if not isinstance(msg, dict) or msg.get("type") != "hello":
                    return "a hello is awaited"
            elif (not isinstance(msg, dict) or msg.get("type") != "action" or msg.get("id") != p.get("id")
                  or msg.get("action") not in p.get("legal", [])):
                return "not one of the legal actions of the request awaiting an answer"
            self.pending = None
        self._answers.put(raw)
        return None

    def stop(self) -> None:
        self._stop = True
        self._answers.put(None)

    def wait_lines(self, start: int, timeout: float) -> list[str]:
        """The lines from index ``start`` on, waiting up to ``timeout`` s for one."""
        self.last_seen = time.monotonic()
        with self._cond:
            if len(self.lines) <= start and self.state in ("starting", "playing"):
                self._cond.wait(timeout)
            return self.lines[start:]

    def status(self) -> dict:
        return {"id": self.id, "seat": self.seat, "bots": self.bots, "state": self.state, "error": self.error,
                "totals": self.totals, "log": self.log_path.name, "lines": len(self.lines)}


class Sessions:
    """The play sessions of one server; bots are built-ins or the ones given to ``marias serve --bot``."""

    def __init__(self, log_dir: Path, extra_bots: dict[str, str] | None = None, bot_move_ms: int = 2000,
                 sandbox: str = "auto"):
        self.log_dir = Path(log_dir)
        self.extra_bots = dict(extra_bots or {})
        self.bot_move_ms = bot_move_ms
        self.sandbox = sandbox
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def choices(self) -> list[str]:
        return [b for b in BUILTIN_BOTS] + sorted(self.extra_bots)

    def get(self, sid: str) -> Session | None:
        with self._lock:
            return self._sessions.get(sid)

    def start(self, seat: int, bots: list[str], seed: str | None = None) -> Session:
        if seat not in (0, 1, 2):
            raise ValueError("the seat is 0, 1 or 2")
        if len(bots) != 2 or any(b not in self.choices() for b in bots):
            raise ValueError(f"choose two bots of: {', '.join(self.choices())}")
        sid = secrets.token_urlsafe(12)  # the page's address: the only key to the game (never in a file name)
        seed = seed or new_seed()
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        log_path = reserve_log_path(self.log_dir, f"play-{stamp}")  # -2, -3 ... when two start in one second
        session = Session(sid, seat, list(bots), log_path)
        specs, others = [], iter(bots)
        for s in range(3):
            if s == seat:
                specs.append(BotSpec(label="person", argv=[], builtin="person", seat=lambda: BrowserSeat(session),
                                     move_ms=NO_LIMIT_MS, startup_ms=NO_LIMIT_MS))
            else:
                b = next(others)
                value = f"{b}={self.extra_bots[b]}" if b in self.extra_bots else b
                specs.append(BotSpec.parse_named(value, seed=f"{seed}:{s}"))
        config = MatchConfig(bots=specs, partie=1, seed=seed, limits=Limits(move_ms=self.bot_move_ms),
                             log_path=log_path, transcript=True, sandbox=self.sandbox)
        with self._lock:
            if len(self._sessions) >= MAX_SESSIONS:
                for k, s in list(self._sessions.items()):
                    if s.state not in ("starting", "playing"):
                        del self._sessions[k]
                        break
                else:
                    log_path.unlink(missing_ok=True)  # the name reserved above, still empty
                    raise ValueError(f"{MAX_SESSIONS} games are being played already")
            self._sessions[sid] = session
        session.thread = threading.Thread(target=self._run, args=(session, config), name=f"play-{sid[:6]}", daemon=True)
        session.thread.start()
        return session

    def _run(self, session: Session, config: MatchConfig) -> None:
        tpath = Path(str(config.log_path.with_suffix("")) + f".seat{session.seat}.transcript.jsonl")
        try:
            with open_private(tpath, "a") as tf:  # appended to: the referee creates (truncates) it too
                session.transcript = tf
                session.state = "playing"
                result = run_match(config)
            session.totals = result.totals
            session.state = "finished"
        except (KeyboardInterrupt, Stop):
            session.state = "stopped"
        except Exception as e:  # noqa: BLE001 - shown to the person, the server goes on
            session.state = "failed"
            session.error = f"{type(e).__name__}: {e}"
        finally:
            session.transcript = None
            with session._cond:
                session._cond.notify_all()

    def stop_all(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
        for s in sessions:
            s.stop()
        for s in sessions:
            if s.thread is not None:
                s.thread.join(timeout=10)
