"""Transcripts' information leaks: no message the referee sent to a seat may name a
card that seat could not know at that moment (``marias validate --transcripts``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..rules.cards import CARD_BY_CODE, Card
from ..rules.deal import Deal
from .log import read_lines
from .replay import replay_record
from .problem import Problem

_CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])[789XUOKA][hlba](?![0-9A-Za-z])")


# ------------------------------------------------------------------ transcripts: information leaks

def _cards_mentioned(obj, skip=("message", "evidence", "notes", "detail")) -> set[str]:
    """Card codes in a message's structured fields (free-text fields are not scanned)."""
    found: set[str] = set()
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, str):
            found.update(_CARD_TOKEN.findall(o))
        elif isinstance(o, dict):
            stack.extend(v for k, v in o.items() if k not in skip)
        elif isinstance(o, list):
            stack.extend(o)
    return found


class _Knowledge:
    """What each seat may know of a replayed deal, moment by moment (cumulative)."""

    def __init__(self, rec: dict, deck: list[Card]):
        self.snapshots: list[list[int]] = []  # after i decisions: a mask per seat
        self.talon_masks: list[int] = []  # cards that were in any talon up to moment i
        self.trump_masks: list[int] = []
        known = [0, 0, 0]

        def step(deal: Deal, i: int) -> None:
            played = deal.played_mask
            tal = 0
            for _s, cards, _k in deal.talons:
                for c in cards:
                    tal |= 1 << c
            laid = 0
            if deal.laid:
                for c in deal.laid[1]:
                    laid |= 1 << c
            for s in range(3):
                m = played | laid
                for c in deal.known_cards(s):
                    m |= 1 << c
                for ts, cards, knowers in deal.talons:
                    if s in knowers:
                        for c in cards:
                            m |= 1 << c
                for c in deal.trick:
                    m |= 1 << c
                known[s] |= m
            self.snapshots.append(list(known))
            self.talon_masks.append(tal)
            self.trump_masks.append((1 << deal.trump_card) if deal.trump_card is not None else 0)

        rp = replay_record(rec, deck, on_step=step)
        self.ok = rp.complete
        if not self.snapshots:
            self.snapshots.append([0, 0, 0])
            self.talon_masks.append(0)
            self.trump_masks.append(0)

    def at(self, moment: int | None) -> int:
        """Index of the snapshot for ``moment`` decisions made (None: the end)."""
        last = len(self.snapshots) - 1
        return last if moment is None else max(0, min(moment, last))


def _leak_rule(card: Card, k: _Knowledge, idx: int) -> str:
    if k.trump_masks[idx] >> card & 1:
        return "R3.1"
    if k.talon_masks[idx] >> card & 1:
        return "R3.3"
    return "R8.4"


def check_transcript(tpath: Path, seat: int, deals: dict) -> tuple[list[Problem], int]:
    """Check one seat's transcript for cards the seat could not know.

    Each message sent to the seat inside a deal is checked at its moment, the
    number of decisions made: a ``request`` at the count its view shows (bids +
    cards played), an ``event`` at the count of ``action`` events the seat has
    been sent in the deal so far (one per decision, PROTOCOL.md section 8), a
    ``deal_end`` at the end.  Checked: every card code in the request's view and
    legal actions or in the event (hand, talon, trump card, bids, ...); free-text
    fields (message, evidence) are not scanned.  A card is allowed if the seat
    has held it, discarded or taken it in a talon, seen it played or laid, or
    been shown it as the trump card, at that moment.
    """
    problems: list[Problem] = []
    spath = str(tpath)
    try:
        records, bad = read_lines(tpath)
    except OSError as e:
        return [Problem(0, "format", f"cannot read the transcript: {e.strerror or e}", spath)], 0
    for n, msg in bad:
        problems.append(Problem(n, "format", msg, spath))
    partie = None
    current: tuple[int, int] | None = None
    by_deal: dict[tuple[int, int], list[tuple[int, dict]]] = {}
    for n, rec in records:
        if rec.get("dir") != "send":
            continue
        if rec.get("seat") not in (None, seat):
            problems.append(Problem(n, "format", f"a line of seat {rec.get('seat')!r} in seat {seat}'s transcript", spath))
            continue
        raw = rec.get("line")
        if not isinstance(raw, str):
            problems.append(Problem(n, "format", "the transcript line has no protocol line", spath))
            continue
        for part in raw.splitlines():
            if not part.strip():
                continue
            try:
                msg = json.loads(part)
            except ValueError:
                problems.append(Problem(n, "format", "the recorded protocol line is not JSON", spath))
                continue
            if not isinstance(msg, dict):
                continue
            t = msg.get("type")
            if t == "partie_start":
                partie = msg.get("partie")
                current = None
            elif t == "deal_start":
                current = (msg.get("partie", partie), msg.get("deal"))
            elif t in ("event", "deal_end", "request") and msg.get("deal") is not None:
                current = (msg.get("partie", partie), msg.get("deal"))
            if t in ("request", "event", "deal_end"):
                if current is None:
                    problems.append(Problem(n, "format", f"a {t} outside a deal", spath))
                    continue
                by_deal.setdefault(current, []).append((n, msg))
    count = 0
    for key, msgs in by_deal.items():
        entry = deals.get(key)
        if entry is None:
            problems.append(Problem(msgs[0][0], "format", f"partie {key[0]} deal {key[1]} is not a replayed deal of the log", spath))
            continue
        _line, rec, deck = entry
        know = _Knowledge(rec, deck)
        actions_seen = 0
        for n, msg in msgs:
            count += 1
            t = msg.get("type")
            if t == "request":
                v = msg.get("view") or {}
                moment: int | None = len(v.get("bids") or []) + 3 * len(v.get("tricks") or []) + len(v.get("trick") or [])
                body = {"view": v, "legal": msg.get("legal")}
            elif t == "event":
                body = msg.get("event")
                if isinstance(body, dict) and body.get("kind") == "action":
                    actions_seen += 1
                moment = None if isinstance(body, dict) and body.get("kind") == "fault" else actions_seen
            else:
                moment = None
                body = {"view": msg.get("view"), "result": msg.get("result")}
            idx = know.at(moment)
            allowed = know.snapshots[idx][seat]
            leaked = sorted(CARD_BY_CODE[c] for c in _cards_mentioned(body) if not allowed >> CARD_BY_CODE[c] & 1)
            if leaked:
                where = f"after {moment} decisions" if moment is not None else "the end of the deal"
                problems.append(Problem(n, _leak_rule(leaked[0], know, idx),
                                        f"partie {key[0]} deal {key[1]}: the {t} sent to seat {seat} names "
                                        f"{' '.join(str(c) for c in leaked)}, which seat {seat} cannot know {where}", spath))
    return problems, count
