"""The play page's tables: one to three people in browsers and bots in the other seats, under the
match referee.

As ``marias play`` (:mod:`referee.people.play`), a table's partie is :func:`referee.matches.match.run_match`
with the same limits, log and rules.  Each person's seat is a :class:`BrowserSeat`
(``BotSpec.seat``), which implements the referee's :class:`referee.seats.seat.Seat` the way a bot
process does: every protocol line the referee writes to the seat is appended, unchanged, to
that seat's :class:`Place`, which its browser reads as server-sent events; a request blocks
the referee's thread until that browser POSTs its answer line, which goes through the
protocol's own decoder.  So each browser receives exactly the lines a bot in its seat receives
— already redacted by the referee — and nothing else; each seat's lines are also kept as a
transcript (LOGS.md, ``--transcript``) beside the log, which ``marias validate --transcript``
checks.

**Who may use a seat.**  A table is opened by one person, who chooses for every seat: himself,
another person, or a bot.  Every person's seat has a secret token (``secrets.token_urlsafe``,
192 bits); the opener's browser gets his in a cookie, the others' come in invite links that
the opener passes on.  A token admits only its own seat of its own table (compared in constant
time, :meth:`Place.admits`); it is never written to a file, a log or a file name.

**Starting and ending.**  The partie starts once every invited person has taken the seat (given
a name); the bots are started only then.  A person may have a move time (the referee's usual
limit: running out is a timeout fault, R12.1-R12.3, as for a bot).  The quit button of any
seat ends the table.  A table is *idle* when the person it waits for (to take the seat, or to
answer a request) has had no page of that seat open and given no answer for
``idle_minutes`` (default :data:`IDLE_MINUTES`, ``marias serve --table-idle-minutes``): it is
then ended like a quit.  An ended table stops its bots at once (the referee's own shutdown)
and leaves its log incomplete — never a result.
"""

from __future__ import annotations

import hmac
import json
import queue
import secrets
import threading
import time
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from protocol.messages import MessageError, decode_line

from ..logs.log import reserve_log_path
from ..matches.match import BUILTIN_BOTS, BotSpec, Limits, MatchConfig, run_match
from ..rules.partie import new_seed
from ..seats.faults import BotFault, FaultKind
from ..seats.seat import ProcesslessSeat
from ..seats.streams import open_private

#: a person's time per decision without a move time: none in practice (as ``marias play``)
NO_LIMIT_MS = 86_400_000
#: tables in progress at once
MAX_TABLES = 16
#: tables kept in all (ended ones are forgotten first, oldest first)
KEEP_TABLES = 64
#: a table waiting this long for a person who has no page open and gave no answer is ended
IDLE_MINUTES = 10.0
#: a page counts as open while it read its seat's lines this recently (a live page reads every second)
HERE_S = 5.0
#: the longest name a person may give
NAME_CHARS = 24
#: the move times the index offers (seconds; 0: none); any from 0 to MAX_MOVE_S is taken
MOVE_TIMES_S = (0, 15, 30, 60, 120, 300)
MAX_MOVE_S = 3600
YOU, PERSON = "you", "person"
LIVE = ("waiting", "playing")


class Stop(KeyboardInterrupt):
    """The table ends (a quit, an idle table, the server stopping): raised in the referee's thread,
    which ends the match as ``marias play`` ends on Ctrl-C (the bots closed, the log without a footer)."""


def clean_name(text: str | None) -> str:
    """A person's name as shown: printable characters only, trimmed, at most :data:`NAME_CHARS`."""
    text = "".join(ch for ch in str(text or "") if unicodedata.category(ch)[0] not in "CZ" or ch == " ")
    return " ".join(text.split())[:NAME_CHARS].strip()


class BrowserSeat(ProcesslessSeat):
    """A person's seat as the referee speaks to it: lines out to the seat's :class:`Place`, answers in
    from its browser.  After a fault the referee ends the seat and makes a new one for the next
    deal (as it restarts a bot's process): both feed the same place."""

    def __init__(self, place: "Place"):
        super().__init__()
        self.place = place

    def send_lines(self, lines: list[str]) -> None:
        if self._closed:
            raise BotFault(FaultKind.EXIT, "the person's seat was closed")
        self.place.emit(lines)

    def request_lines(self, lines: list[str], timeout_s: float | None) -> tuple[dict, float]:
        self.send_lines(lines)
        t0 = time.monotonic()
        raw = self.place.wait_answer(timeout_s)
        elapsed = time.monotonic() - t0
        if raw is None:
            raise BotFault(FaultKind.TIMEOUT, f"no answer within {timeout_s:g} s (the person's move time)", "", elapsed)
        try:
            message = decode_line(raw.encode("utf-8"))
        except MessageError as e:
            raise BotFault(FaultKind.MALFORMED, str(e), raw[:300], elapsed) from None
        return message, elapsed

    def kill(self) -> None:
        super().kill()
        self.place.withdraw()

    def close(self) -> None:
        super().close()
        self.place.withdraw()


class Place:
    """One person's seat at a table: the token that admits its browser, every protocol line the
    referee sent the seat (in order: their numbers are the event stream's ids), and the request
    awaiting its answer."""

    def __init__(self, table: "Table", seat: int, name: str | None = None):
        self.table = table
        self.seat = seat
        self.token = secrets.token_urlsafe(24)  # never logged, never in a file name
        self.name = name
        self.lines: list[str] = []
        self.pending: int | None = None  # the number (1-based) of the line awaiting an answer
        self._pending_msg: dict | None = None
        self._answers: "queue.Queue[str]" = queue.Queue()
        self.seen: float | None = None  # when a page of this seat last read its lines
        self.answered = time.monotonic()  # when it last answered (or took the seat, or the table was opened)
        self.transcript = None

    def admits(self, token: str | None) -> bool:
        """Whether ``token`` is this seat's (constant time: a wrong guess learns nothing of the right one)."""
        return isinstance(token, str) and hmac.compare_digest(token.encode("utf-8", "replace"), self.token.encode())

    @property
    def here(self) -> bool:
        return self.seen is not None and time.monotonic() - self.seen < HERE_S

    def _record(self, direction: str, line: str) -> None:
        if self.transcript is not None:
            self.transcript.write(json.dumps({"seat": self.seat, "dir": direction, "t": round(time.time(), 6),
                                              "line": line}, ensure_ascii=False) + "\n")
            self.transcript.flush()

    def emit(self, lines: list[str]) -> None:
        with self.table.cond:
            for line in lines:
                self.lines.append(line)
                self._record("send", line)
                if line.startswith('{"type":"deal_start"'):
                    self.table.deal = json.loads(line)["deal"]
            last = json.loads(lines[-1]) if lines else None
            if last is not None and last.get("type") in ("request", "hello"):
                self.pending, self._pending_msg = len(self.lines), last
                while not self._answers.empty():  # an answer that came too late for an earlier request
                    self._answers.get_nowait()
            self.table.cond.notify_all()

    def wait_answer(self, timeout_s: float | None) -> str | None:
        """The browser's answer line; None when ``timeout_s`` passed first; :class:`Stop` when the table ends."""
        since = time.monotonic()
        deadline = None if timeout_s is None else since + timeout_s
        while True:
            self.table.check(self, since)
            left = 1.0 if deadline is None else min(1.0, deadline - time.monotonic())
            if left <= 0:
                self.withdraw()
                return None
            try:
                raw = self._answers.get(timeout=left)
            except queue.Empty:
                continue
            self._record("recv", raw)
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
        with self.table.cond:
            p = self._pending_msg
            if p is None:
                return "nothing is asked now"
            if p["type"] == "hello":
                if not isinstance(msg, dict) or msg.get("type") != "hello":
                    return "a hello is awaited"
            elif (not isinstance(msg, dict) or msg.get("type") != "action" or msg.get("id") != p.get("id")
                  or msg.get("action") not in p.get("legal", [])):
                return "not one of the legal actions of the request awaiting an answer"
            self.pending = self._pending_msg = None
            self.answered = time.monotonic()
            self._answers.put(raw)
            self.table.cond.notify_all()
        return None

    def withdraw(self) -> None:
        """No answer is awaited any more (the time ran out, the seat was ended)."""
        with self.table.cond:
            self.pending = self._pending_msg = None
            self.table.cond.notify_all()

    def lines_from(self, start: int) -> list[str]:
        """The lines from index ``start`` on, at once; the page that asks is here."""
        self.seen = time.monotonic()
        with self.table.cond:
            return self.lines[start:]

    def wait_lines(self, start: int, timeout: float) -> list[str]:
        """The lines from index ``start`` on, waiting up to ``timeout`` s for one; the page is here."""
        self.seen = time.monotonic()
        with self.table.cond:
            if len(self.lines) <= start and self.table.state in LIVE:
                self.table.cond.wait(timeout)
            return self.lines[start:]


@dataclass(frozen=True)
class Seating:
    """Who sits where, as the opener chose: ``you``, ``person`` or a bot's name, for seats 0, 1, 2."""

    seats: tuple[str, str, str]
    name: str = ""
    move_s: int = 0

    def check(self, bots: list[str]) -> None:
        if len(self.seats) != 3:
            raise ValueError("choose for three seats")
        if self.seats.count(YOU) != 1:
            raise ValueError("choose one seat for yourself")
        for s in self.seats:
            if s not in (YOU, PERSON) and s not in bots:
                raise ValueError(f"a seat is you, a person or one of the bots: {', '.join(bots)}")
        if not 0 <= self.move_s <= MAX_MOVE_S:
            raise ValueError(f"the move time is 0 (none) to {MAX_MOVE_S} s")


class Table:
    """One table: its places (people) and bots, the referee's thread, its state."""

    def __init__(self, tables: "Tables", seating: Seating):
        self.id = secrets.token_urlsafe(9)  # the table's address: public (the index lists it); the seats' tokens are not
        self.tables = tables
        self.seating = seating
        self.cond = threading.Condition()
        self.state = "waiting"  # waiting | playing | finished | stopped | failed
        self.reason: str | None = None
        self.deal = 0
        self.totals: list[int] | None = None
        self.created = time.time()
        self.opener = seating.seats.index(YOU)
        self.places = {s: Place(self, s, (seating.name or "person") if c == YOU else None)
                       for s, c in enumerate(seating.seats) if c in (YOU, PERSON)}
        self._stop: str | None = None
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        self.log_path = reserve_log_path(tables.log_dir, f"play-{stamp}")  # -2, -3 ... when two start in one second
        self.thread = threading.Thread(target=self._run, name=f"table-{self.id[:6]}", daemon=True)

    # ---------------------------------------------------------------- people
    def place(self, seat: int) -> Place | None:
        return self.places.get(seat)

    def sit(self, place: Place, name: str) -> None:
        """The invited person takes the seat under ``name``; the partie starts when every seat is taken."""
        with self.cond:
            if place.name is None and self.state == "waiting":
                place.name = clean_name(name) or f"person {place.seat}"
                place.answered = time.monotonic()
            self.cond.notify_all()

    def labels(self) -> list[str]:
        """Each seat's name in the log and in ``partie_start``: the person's, or the bot's; made unique."""
        out: list[str] = []
        for s, choice in enumerate(self.seating.seats):
            label = self.places[s].name or f"person {s}" if s in self.places else choice
            out.append(label if label not in out else f"{label}-{s}")
        return out

    # ---------------------------------------------------------------- ending
    def stop(self, why: str) -> None:
        with self.cond:
            if self._stop is None:
                self._stop = why
            self.cond.notify_all()

    def check(self, place: Place, since: float) -> None:
        """:class:`Stop` when the table is ending, or when the person it waits for (``place``, since
        ``since``) has had no page open and given no answer for the idle time."""
        if self._stop is not None:
            raise Stop(self._stop)
        quiet = time.monotonic() - max(place.seen or 0.0, place.answered, since)
        if quiet > self.tables.idle_s:
            self.stop(f"idle: {place.name or f'the person invited to seat {place.seat}'} had no page of the table "
                      f"open and gave no answer for {self.tables.idle_s / 60:g} minutes")
            raise Stop(self._stop)

    # ---------------------------------------------------------------- the partie
    def _wait_seated(self) -> None:
        since = time.monotonic()
        while True:
            with self.cond:
                missing = [p for p in self.places.values() if p.name is None]
                if not missing:
                    return
                self.cond.wait(1.0)
            self.check(missing[0], since)

    def _config(self) -> MatchConfig:
        t = self.tables
        seed = new_seed()
        labels = self.labels()
        move_ms = self.seating.move_s * 1000 or NO_LIMIT_MS
        specs = []
        for s, choice in enumerate(self.seating.seats):
            if s in self.places:
                place = self.places[s]
                specs.append(BotSpec(label=labels[s], argv=[], builtin="person", seat=lambda p=place: BrowserSeat(p),
                                     move_ms=move_ms, startup_ms=NO_LIMIT_MS))
            else:
                spec = BotSpec.parse(t.extra_bots.get(choice, choice), seed=f"{seed}:{s}")
                spec.label = labels[s]
                specs.append(spec)
        return MatchConfig(bots=specs, partie=1, seed=seed, limits=Limits(move_ms=t.bot_move_ms),
                           log_path=self.log_path, transcript=True, sandbox=t.sandbox)

    def _run(self) -> None:
        files = []
        try:
            self._wait_seated()
            config = self._config()
            for p in self.places.values():  # appended to: the referee creates (truncates) it too
                p.transcript = open_private(Path(str(self.log_path.with_suffix("")) + f".seat{p.seat}.transcript.jsonl"), "a")
                files.append(p.transcript)
            self.state = "playing"
            result = run_match(config)
            self.totals = result.totals
            self.state = "finished"
        except (KeyboardInterrupt, Stop) as e:
            self.state = "stopped"
            self.reason = self._stop or str(e) or "stopped"
        except Exception as e:  # noqa: BLE001 - shown to the people, the server goes on
            self.state = "failed"
            self.reason = f"{type(e).__name__}: {e}"
        finally:
            for p in self.places.values():
                p.transcript = None
            for f in files:
                f.close()
            if self.state == "stopped" and self.log_path.exists() and self.log_path.stat().st_size == 0:
                self.log_path.unlink()  # the name reserved for a partie that never began
            with self.cond:
                for p in self.places.values():
                    p.pending = p._pending_msg = None
                self.cond.notify_all()

    # ---------------------------------------------------------------- what is shown
    def public(self) -> dict:
        """What anyone may know of the table (the index): who sits where, which seats wait for their
        person, the deal, the move time; never a token."""
        seats = []
        for s, choice in enumerate(self.seating.seats):
            if s in self.places:
                p = self.places[s]
                seats.append({"seat": s, "kind": "person", "name": p.name, "taken": p.name is not None, "here": p.here})
            else:
                seats.append({"seat": s, "kind": "bot", "name": choice, "taken": True, "here": True})
        return {"table": self.id, "state": self.state, "reason": self.reason, "deal": self.deal, "deals": 12,
                "move_s": self.seating.move_s, "idle_minutes": round(self.tables.idle_s / 60, 2), "seats": seats,
                "labels": self.labels()}

    def status(self, place: Place) -> dict:
        """What ``place``'s page is told besides its protocol lines: the table, the line awaiting an
        answer, and the invite links (for the opener only)."""
        d = self.public()
        d.update({"you": place.seat, "awaiting": place.pending, "name": place.name,
                  "totals": self.totals})
        if place.seat == self.opener:
            d["invites"] = {str(s): f"/play/{self.id}/{s}/join/{p.token}" for s, p in self.places.items() if s != self.opener}
        return d


class Tables:
    """The tables of one server; bots are built-ins or the ones given to ``marias serve --bot``."""

    def __init__(self, log_dir: Path, extra_bots: dict[str, str] | None = None, bot_move_ms: int = 2000,
                 sandbox: str = "auto", idle_minutes: float = IDLE_MINUTES):
        self.log_dir = Path(log_dir)
        self.extra_bots = dict(extra_bots or {})
        self.bot_move_ms = bot_move_ms
        self.sandbox = sandbox
        self.idle_s = idle_minutes * 60
        self._tables: dict[str, Table] = {}
        self._lock = threading.Lock()

    def choices(self) -> list[str]:
        return list(BUILTIN_BOTS) + sorted(self.extra_bots)

    def get(self, tid: str) -> Table | None:
        with self._lock:
            return self._tables.get(tid)

    def open(self, seating: Seating) -> Table:
        """A new table as ``seating`` says; its thread waits for the invited people, then plays."""
        seating.check(self.choices())
        with self._lock:
            live = [t for t in self._tables.values() if t.state in LIVE]
            if len(live) >= MAX_TABLES:
                raise ValueError(f"{MAX_TABLES} tables are in play already: wait for one to end")
            ended = sorted((t for t in self._tables.values() if t.state not in LIVE), key=lambda t: t.created)
            while len(self._tables) >= KEEP_TABLES and ended:
                del self._tables[ended.pop(0).id]
            table = Table(self, seating)
            self._tables[table.id] = table
        table.thread.start()
        return table

    def in_progress(self) -> list[dict]:
        with self._lock:
            tables = [t for t in self._tables.values() if t.state in LIVE]
        return [t.public() for t in sorted(tables, key=lambda t: t.created)]

    def stop_all(self) -> None:
        with self._lock:
            tables = list(self._tables.values())
        for t in tables:
            t.stop("the server stopped")
        for t in tables:
            t.thread.join(timeout=10)
