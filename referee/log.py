"""Game logs: one JSON Lines file per match (see protocol/LOGS.md).

A log is a sequence of complete JSON objects, one per line:

``header``        once, first: format, versions, seed, the bots, limits, fault policy;
``partie_start``  per partie: its seed and the shuffled deck (R2.2);
``deal``          per deal, one complete line: the deck before the deal, the cut,
                  every decision, the tricks, hlášky, laid cards, faults and the
                  settlement;
``partie_end``    per partie: totals and places (R9.7);
``footer``        once, last: the match totals, ``"complete": true``.

Every line is written whole and the file is flushed and fsynced after each
deal, so a match killed mid-deal leaves a log whose finished deals are valid;
its missing ``partie_end``/``footer`` (or a half line) marks it incomplete.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

from .cards import SUIT_CODES
from .partie import Partie, places

if TYPE_CHECKING:
    from protocol.sdk import Bot

    from .deal import Deal

FORMAT = "marias-log"
FORMAT_VERSION = 1
#: The rulebook these logs follow: the date it was fixed and the start of the
#: sha256 of RULES.md (R1–R12) at that time; tests/test_log.py checks it still matches.
RULES_VERSION = "2026-12-01 sha256:4078bc8b3f96"
DEALS_PER_PARTIE = 12
BLOCKS = (7, 5, 5, 5, 5, 5)

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def referee_version() -> str:
    try:
        from importlib.metadata import version
        return version("marias")
    except Exception:  # not installed as a distribution
        return "0.1.0"


def dealt_hands(deck: Sequence, forhont: int) -> list[list]:
    """R2.6: the three hands dealt from ``deck`` (top first) in blocks 7-5-5-5-5-5."""
    order = (forhont, (forhont + 1) % 3, (forhont + 2) % 3)
    hands: list[list] = [[], [], []]
    pos = 0
    for block, size in enumerate(BLOCKS):
        hands[order[block % 3]].extend(deck[pos:pos + size])
        pos += size
    return hands


def decision_kinds(history) -> list[str]:
    """The decision each recorded action answered (trump, talon, answer, contract, flek, play).

    Derived from the action kinds alone: ``dobra`` is an answer while a Barva or a
    betl is being answered (two answers after each such discard), a raise otherwise.
    """
    kinds = []
    answers_left = 0
    for _seat, a in history:
        k = a.kind
        if k == "trump":
            kind = "trump"
        elif k in ("barva", "betl", "durch") and a.cards:
            kind = "talon"
            answers_left = 2 if k in ("barva", "betl") else 0
        elif k == "spatna" or (k == "durch" and not a.cards):
            kind = "answer"
            answers_left = 0
        elif k == "dobra":
            if answers_left:
                kind = "answer"
                answers_left -= 1
            else:
                kind = "flek"
        elif k == "contract":
            kind = "contract"
        elif k == "flek":
            kind = "flek"
        else:  # play, lay
            kind = "play"
        kinds.append(kind)
    return kinds


def _codes(cards) -> list[str]:
    return [str(c) for c in cards]


def deal_record(partie: int, index: int, deal: "Deal", cut: int | None, deck: list,
                times_ms: list[float] | None = None) -> dict:
    """The complete ``deal`` line for a finished deal (see protocol/LOGS.md)."""
    if not deal.done:
        raise ValueError("only a finished deal (played, settled or ended by a fault) is logged")
    if times_ms is not None and len(times_ms) != len(deal.history):
        raise ValueError(f"times_ms has {len(times_ms)} entries for {len(deal.history)} decisions")
    kinds = decision_kinds(deal.history)
    decisions = []
    for i, ((seat, action), kind) in enumerate(zip(deal.history, kinds)):
        ms = None if times_ms is None or times_ms[i] is None else round(float(times_ms[i]), 3)
        decisions.append({"seat": seat, "decision": kind, "action": str(action), "ms": ms})
    return {
        "type": "deal",
        "partie": partie,
        "deal": index,
        "forhont": deal.forhont,
        "dealer": deal.dealer,
        "cut": cut,
        "deck": _codes(deck),
        "hands": [_codes(h) for h in dealt_hands(list(deck), deal.forhont)],
        "decisions": decisions,
        "trump_card": str(deal.trump_card) if deal.trump_card is not None else None,
        "zlidu": deal.zlidu,
        "talons": [{"seat": s, "cards": _codes(cards)} for s, cards, _knowers in deal.talons],
        "talon": _codes(deal.talon),
        "talon_owner": deal.talon_owner,
        "game": deal.game,
        "actor": deal.actor,
        "contract": deal.contract,
        "trump": SUIT_CODES[deal.trump] if deal.trump is not None else None,
        "levels": dict(deal.levels),
        "proti": dict(deal.proti),
        "tricks": [{"leader": l, "cards": _codes(cs), "winner": w} for l, cs, w in deal.tricks],
        "hlasky": [h.to_dict() for h in deal.hlasky],
        "points": list(deal.points),
        "laid": {"seat": deal.laid[0], "cards": _codes(deal.laid[1])} if deal.laid else None,
        "faults": [deal.fault_info.to_dict()] if deal.fault_info is not None else [],
        "result": deal.result.to_dict(),
    }


class LogWriter:
    """Writes one match log, line by line, each line complete and durable.

    ``header`` supplies the match fields (seed, bots, limits, fault_policy, ...);
    ``type``, ``format``, ``format_version``, ``referee_version``,
    ``rules_version`` and ``created`` are filled in unless given.  ``fsync=False``
    (benchmarks only) skips the fsync after each deal.
    """

    def __init__(self, path, header: dict, *, fsync: bool = True):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self._f = open(self.path, "w", encoding="utf-8", newline="\n")
        h = {
            "type": "header",
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "referee_version": referee_version(),
            "rules_version": RULES_VERSION,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seed": None,
            "deals_per_partie": DEALS_PER_PARTIE,
            "bots": [],
            "limits": {},
            "fault_policy": {},
        }
        h.update(header)
        h["type"] = "header"
        h["format"] = FORMAT
        h["format_version"] = FORMAT_VERSION
        self.header = h
        self._n_bots = max(3, len(h.get("bots") or []))
        self._totals = [0] * self._n_bots
        self._parties = 0
        self._seating: list[int] = [0, 1, 2]
        self.closed = False
        self._write(h)
        self._sync()

    # -- writing
    def _write(self, obj: dict) -> None:
        self._f.write(_dumps(obj) + "\n")

    def _sync(self) -> None:
        self._f.flush()
        if self.fsync:
            os.fsync(self._f.fileno())

    def partie_start(self, partie: int, seed, deck: list, *, seating: list[int] | None = None) -> None:
        """A new partie from ``deck`` (the shuffled order, R2.2).

        ``seating[s]`` is the index in the header's ``bots`` of the bot at seat
        ``s`` in this partie (default: bot ``s`` sits at seat ``s``).
        """
        rec = {"type": "partie_start", "partie": partie, "seed": seed, "deck": _codes(deck)}
        self._seating = [0, 1, 2]
        if seating is not None:
            self._seating = [int(x) for x in seating]
            rec["seating"] = list(self._seating)
        self._write(rec)
        self._sync()

    def deal(self, partie: int, index: int, deal: "Deal", cut: int | None, deck: list,
             times_ms: list[float] | None = None) -> None:
        self._write(deal_record(partie, index, deal, cut, deck, times_ms))
        self._sync()

    def forfeit(self, partie: int, seat: int, from_deal: int, deals: int, payments: list[int]) -> None:
        """R12.3: ``seat`` forfeited the rest of the partie from deal ``from_deal`` (1-based);
        ``payments``: what its ``deals`` forfeited deals paid each seat, together (R12.2).
        Written right after the deal that brought the last fault."""
        self._write({"type": "forfeit", "partie": partie, "seat": seat, "from_deal": from_deal, "deals": deals,
                     "payments": list(payments), "rule": "R12.3"})
        self._sync()

    def partie_end(self, partie: int, totals: list[int], places: list[float]) -> None:
        self._write({"type": "partie_end", "partie": partie, "totals": list(totals), "places": list(places)})
        self._parties += 1
        for s in range(3):
            self._totals[self._seating[s]] += totals[s]
        self._sync()

    def close(self, footer: dict | None = None) -> None:
        """Write the footer (the match totals unless given) and close the file."""
        if self.closed:
            return
        rec = {"type": "footer", "partie": self._parties, "totals": list(self._totals),
               "places": places(list(self._totals)), "complete": True}
        if footer:
            rec.update(footer)
            rec["type"] = "footer"
        self._write(rec)
        self._sync()
        self._f.close()
        self.closed = True

    def abort(self) -> None:
        """Close without a footer: the log stays marked incomplete."""
        if not self.closed:
            self._sync()
            self._f.close()
            self.closed = True

    def __enter__(self) -> "LogWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


# ------------------------------------------------------------------ reading

def split_lines(path) -> tuple[list, bool]:
    """The file's lines (str, or bytes if it is not UTF-8) and whether it ends with a newline."""
    data = Path(path).read_bytes()
    try:  # one decode of the whole file is cheaper than one per line
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    ends_with_newline = data.endswith(b"\n")
    if not data.strip():
        return [], ends_with_newline
    lines = text.split("\n") if text is not None else data.split(b"\n")
    if ends_with_newline:
        lines.pop()
    return lines, ends_with_newline


def parse_lines(lines: list, ends_with_newline: bool, start: int = 0, stop: int | None = None
                ) -> Iterator[tuple[int, dict | None, str | None]]:
    """Parse ``lines[start:stop]``: see :func:`iter_lines`."""
    last = len(lines)
    loads = json.loads
    stop = last if stop is None else stop
    for n in range(start + 1, stop + 1):
        raw = lines[n - 1]
        try:
            obj = loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            if not raw.strip():
                yield n, None, "blank line"
            elif n == last and not ends_with_newline:
                yield n, None, f"truncated last line ({len(raw)} bytes, not complete JSON): the match stopped while writing"
            else:
                yield n, None, f"not JSON ({e.__class__.__name__}: {str(e)[:80]})"
            continue
        if type(obj) is not dict:
            yield n, None, f"a log line is a JSON object, got {type(obj).__name__}"
            continue
        yield n, obj, None


def iter_lines(path) -> Iterator[tuple[int, dict | None, str | None]]:
    """(line number, record, None) for each JSON object line, (line number, None, problem) otherwise.

    A last line that does not parse (no newline at the end) is reported as
    truncated; any other unparsable line as not JSON; an empty file once.
    Never raises on content (only ``OSError`` if the file cannot be read).
    """
    lines, ends = split_lines(path)
    if not lines:
        yield 1, None, "empty file: no header, not a marias log"
        return
    yield from parse_lines(lines, ends)


def read_lines(path) -> tuple[list[tuple[int, dict]], list[tuple[int, str]]]:
    """Records with their 1-based line numbers, and (line, problem) for lines that are not records."""
    records: list[tuple[int, dict]] = []
    problems: list[tuple[int, str]] = []
    for n, obj, problem in iter_lines(path):
        if obj is None:
            problems.append((n, problem))
        else:
            records.append((n, obj))
    return records, problems


def read_log(path) -> tuple[list[dict], list[str]]:
    """All records of a log, and a message for each truncated or garbage line."""
    records, problems = read_lines(path)
    return [r for _n, r in records], [f"line {n}: {msg}" for n, msg in problems]


# ------------------------------------------------------------------ in-process self-play, logged

class _Timed:
    """Wraps an in-process bot: same answers, each decision's time recorded in ms."""

    def __init__(self, bot: "Bot", times: list[float]):
        self.bot = bot
        self.name = getattr(bot, "name", "bot")
        self.version = getattr(bot, "version", "")
        self.times = times

    def decide(self, decision: str, view: dict, legal: list[str]) -> str:
        t0 = time.perf_counter()
        choice = self.bot.decide(decision, view, legal)
        self.times.append((time.perf_counter() - t0) * 1000.0)
        return choice

    def __getattr__(self, name):
        return getattr(self.bot, name)


def bot_entry(seat: int, command, bot: "Bot | None" = None, exe_sha256: str | None = None) -> dict:
    """A header ``bots`` entry.  ``command`` is an argv list or ``"builtin:NAME"``."""
    return {
        "seat": seat,
        "command": command,
        "name": getattr(bot, "name", None),
        "version": getattr(bot, "version", None),
        "exe_sha256": exe_sha256,
    }


def selfplay_log(path, bots: Sequence["Bot"], *, seed=0, commands: Sequence | None = None,
                 deals: int = DEALS_PER_PARTIE, fsync: bool = True) -> Partie:
    """Play one partie of in-process bots (as :func:`referee.selfplay.play_partie`) and log it.

    ``commands[i]`` names bot ``i`` in the header (default ``"builtin:" + name``).
    Returns the played :class:`Partie`.
    """
    from .selfplay import play_deal

    if commands is None:
        commands = [f"builtin:{getattr(b, 'name', 'bot')}" for b in bots]
    header = {
        "seed": seed,
        "deals_per_partie": deals,
        "bots": [bot_entry(i, commands[i], b) for i, b in enumerate(bots)],
        "limits": {"in_process": True},
        "fault_policy": {"in_process": True, "note": "in-process bots are called directly; none can fault"},
    }
    times: list[float] = []
    timed = [_Timed(b, times) for b in bots]
    partie = Partie(seed=seed, deals=deals)
    with LogWriter(path, header, fsync=fsync) as w:
        w.partie_start(1, seed, partie.initial_deck)
        for s, b in enumerate(bots):
            b.on_partie_start({"type": "partie_start", "partie": 1, "seat": s, "deals": deals})
        for deal in partie.iter_deals():
            n = len(partie.deals)
            for s, b in enumerate(bots):
                b.on_deal_start({"type": "deal_start", "partie": 1, "deal": n, "seat": s,
                                 "forhont": deal.forhont, "dealer": deal.dealer, "cut": partie.cuts[-1]})
            times.clear()
            play_deal(deal, timed)
            w.deal(1, n, deal, partie.cuts[-1], deal.deck, list(times))
            for s, b in enumerate(bots):
                b.on_deal_end({"type": "deal_end", "partie": 1, "deal": n, "seat": s,
                               "view": deal.view(s), "result": deal.result.to_dict()})
        w.partie_end(1, partie.totals(), partie.places())
    return partie
