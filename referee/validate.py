"""``marias validate``: check a game log against the rules by replaying it.

Every deal is replayed from its recorded deck with the engine, independently
of the recorder: each recorded action must be legal at its moment, a recorded
fault is re-applied at its moment, the deck of each deal must be exactly what
R2.2–R2.6 derive from the previous deal and the recorded cut (the collected
deck is derived here from the record itself, not taken from the engine), and
every recorded outcome (tricks, hlášky, laid cards, components, payments,
totals, places) must equal the replay's.  Each problem names the rule it
breaks: ``file:line: R7.2: …``.  Problems that are not about the game (a line
that is not JSON, a missing field) are named ``format``; a log without its
footer is ``incomplete``.

Optionally (``transcripts``), the per-seat protocol transcripts written by the
referee are checked for information leaks: no message sent to a seat may name
a card that seat could not know at that moment (see :func:`check_transcript`).
"""

from __future__ import annotations

import gc
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .actions import Action, ActionError, parse_action
from .cards import (
    BETL_ORDER, CARDS, HIGHER_BETL, HIGHER_TRUMP, KING, OBER, SEVEN, SUIT_CODES, SUIT_MASKS, TRUMP_ORDER, Card,
)
from .deal import DONE, Deal, IllegalAction
from .evidence import DecisionTimes, Forfeits, SeedEvidence, signature_problems
from .log import FORMAT, FORMAT_VERSION, dealt_hands, parse_lines, read_lines, split_lines
from .partie import CUT_RANGE, forhont_of, places
from .seal import chain_problems, load_public_key

PHASE_RULE = {"trump": "R3.1", "talon": "R3.2", "answer": "R4.1", "contract": "R5.1", "flek": "R5.3", "play": "R7.1"}
OUTCOME_RULE = {"hra": "R7.6", "sto": "R7.7", "sto-proti": "R7.7", "sedma": "R7.8", "sedma-proti": "R7.8",
                "ticha-sedma": "R7.9", "tiche-sto": "R7.10", "betl": "R7.11", "durch": "R7.11"}
AMOUNT_RULE = {"sto": "R9.2", "sto-proti": "R9.2"}  # every other component: R9.1 (× R9.3, R9.4)
RESULT_KIND_RULE = {"conceded": "R6.1", "not-played": "R6.2", "fault": "R12.2", "played": "R6.3"}
_BY_CODE = {str(c): c for c in CARDS}
CODE = tuple(str(c) for c in CARDS)  # card -> its code, without a method call
_CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])[789XUOKA][hlba](?![0-9A-Za-z])")


@dataclass
class Problem:
    line: int
    rule: str
    message: str
    path: str | None = None  # another file than the log (a transcript)

    def text(self, log_path: str) -> str:
        where = f"{self.path or log_path}:{self.line}" if self.line else f"{self.path or log_path}"
        return f"{where}: {self.rule}: {self.message}"

    def to_dict(self) -> dict:
        d = {"line": self.line, "rule": self.rule, "message": self.message}
        if self.path:
            d["file"] = self.path
        return d


@dataclass
class Report:
    """The outcome of validating one log file."""

    path: str
    problems: list[Problem] = field(default_factory=list)
    complete: bool = False
    parties: int = 0  # partie that ended (partie_end records)
    deals: int = 0  # deal records read
    deals_replayed: int = 0  # deal records replayed to their end without a problem
    transcripts: int = 0  # transcript files checked
    messages_checked: int = 0
    signer: str | None = None  # the key whose valid signature the footer carries (ed25519:HEX)
    verified: bool = False  # signed by the key asked for (validate --verify)
    verify: str | None = None  # the key asked for

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        return [p.text(self.path) for p in self.problems]

    def summary(self) -> str:
        state = "complete" if self.complete else "INCOMPLETE"
        verdict = "ok" if self.ok else f"{len(self.problems)} problem(s)"
        extra = f", {self.transcripts} transcript(s), {self.messages_checked} messages" if self.transcripts else ""
        if self.verified:
            extra += f", signature verified ({self.signer})"
        elif self.signer and self.verify is None:
            extra += f", signed by {self.signer} (not checked against a trusted key: use --verify)"
        elif self.signer:
            extra += f", signed by {self.signer}"
        return f"{self.path}: {verdict} — {state}, {self.parties} partie, {self.deals} deals, {self.deals_replayed} replayed{extra}"

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "ok": self.ok,
            "complete": self.complete,
            "parties": self.parties,
            "deals": self.deals,
            "deals_replayed": self.deals_replayed,
            "transcripts": self.transcripts,
            "messages_checked": self.messages_checked,
            "signer": self.signer,
            "verified": self.verified,
            "problems": [p.to_dict() for p in self.problems],
        }


# ------------------------------------------------------------------ replay of one deal record

_ACTION_CACHE: dict[str, Action] = {}


def _action(text) -> Action:
    a = _ACTION_CACHE.get(text)
    if a is None:
        a = parse_action(text)
        if len(_ACTION_CACHE) < 100_000:
            _ACTION_CACHE[text] = a
    return a


def parse_deck(value) -> tuple[list[Card] | None, str | None]:
    """A recorded deck: 32 distinct card codes.  (cards, None) or (None, why not)."""
    if not isinstance(value, list):
        return None, "R1.1: the deck is not a list of 32 card codes"
    try:
        cards = [_BY_CODE[code] for code in value]
    except (KeyError, TypeError):
        bad = next(code for code in value if not isinstance(code, str) or code not in _BY_CODE)
        return None, f"R1.2: malformed card code {bad!r} in the deck"
    if len(cards) != 32 or len(set(cards)) != 32:
        missing = sorted(set(CARDS) - set(cards))
        return None, (f"R1.1: the deck needs the 32 cards exactly once; it has {len(cards)} codes"
                      + (f", missing {' '.join(str(c) for c in missing)}" if missing else ""))
    return cards, None


class _ReplayDeal(Deal):
    """The engine's deal, with one shortcut for replaying recorded decisions.

    The engine decides whether an action is legal by listing every legal action
    (up to ~350 discard pairs at a talon decision).  The replay checks a recorded
    action against the rule directly (:func:`direct_ok`: R3.1, R3.2, R4.1–R4.3,
    R5.1, R7.2–R7.4; :class:`FlekRounds`: R5.2–R5.4) and, when it holds, lets the engine apply it without
    listing the alternatives.  An action the direct check does not accept (and
    every laying of cards) goes through the engine's own check, so an
    illegal action is always named by the engine's rule.  Tests check that the
    direct checks accept exactly the engine's legal actions.
    """

    _vouched: Action | None = None

    def legal_actions(self):
        v = self._vouched
        if v is not None:
            self._vouched = None
            return (v,)
        return Deal.legal_actions(self)


_ACE_TEN = {c for c in CARDS if c.points}
_KO_PAIRS = tuple((1 << (s * 8 + KING)) | (1 << (s * 8 + OBER)) for s in range(4))


def talon_discard_ok(deal: Deal, seat: int, action: Action) -> bool:
    """Is ``action`` a legal talon decision for ``seat`` now (R3.2, R4.2, R4.3)?"""
    kind = action.kind
    cards = action.cards
    if kind not in ("barva", "betl", "durch") or len(cards) != 2 or cards[0] == cards[1]:
        return False
    m = deal.masks[seat]
    if not (m >> cards[0] & 1 and m >> cards[1] & 1):
        return False
    last = deal.history[-1][1].kind if deal.history else ""
    if last == "spatna":  # R4.2: any two, then betl or durch
        return kind in ("betl", "durch")
    if last == "durch":  # R4.3: any two, durch
        return kind == "durch"
    if deal.talons or seat != deal.forhont:
        return False
    # R3.2: the forhont; never the trump card; for Barva no ace or ten
    if deal.trump_card in cards:
        return False
    return kind != "barva" or (cards[0] not in _ACE_TEN and cards[1] not in _ACE_TEN)


def play_ok(deal: Deal, seat: int, card: int) -> bool:
    """Is playing ``card`` legal for ``seat`` now (R7.2, R7.3, R7.4)?"""
    hand = deal.masks[seat]
    if not hand >> card & 1:
        return False
    barva = deal.game == "barva"
    trump = deal.trump if barva else None
    trick = deal.trick
    allowed = hand
    if trick:
        order = TRUMP_ORDER if barva else BETL_ORDER
        higher = HIGHER_TRUMP if barva else HIGHER_BETL
        led = trick[0]
        ls = led >> 3
        win = led
        for c in trick[1:]:  # the card winning the trick so far
            if c >> 3 == win >> 3:
                if order[c & 7] > order[win & 7]:
                    win = c
            elif c >> 3 == trump:
                win = c
        same = hand & SUIT_MASKS[ls]
        if same:  # follow suit, and beat the winning card if it is of the led suit and you can
            allowed = (same & higher[win]) or same if win >> 3 == ls else same
        elif trump is not None and hand & SUIT_MASKS[trump]:  # void: trump, over a winning trump if able
            trumps = hand & SUIT_MASKS[trump]
            allowed = (trumps & higher[win]) or trumps if win >> 3 == trump else trumps
        if not allowed >> card & 1:
            return False
    if barva and len(deal.tricks) < 9 and card == trump * 8 + SEVEN and allowed != 1 << card:
        # R7.4: an announced seven waits for the last trick unless it is the only legal card
        if (seat == deal.actor and "sedma" in deal.levels) or deal.proti.get("sedma") == seat:
            return False
    return True


class FlekRounds:
    """The raising rounds of R5.3/R5.4, followed from the recorded raises.

    In each round one side speaks (the defence: both defenders; the actor: he
    alone); it may raise what the other side raised or announced in the round
    before (round 1: the actor's components).  A round with nothing raised or
    announced ends the speaking.  Games against are announced only in round 1.
    """

    def __init__(self) -> None:
        self.round = 0
        self.raisable: set[str] = set()
        self.left = 0
        self.raised: set[str] = set()
        self.announced: set[str] = set()
        self.side = ""

    def ok(self, deal: Deal, seat: int, action: Action) -> bool:
        """Is ``action`` a legal raise (or dobrá) for ``seat`` now?"""
        if self.round == 0:  # the first raise of the deal: round 1, the defence
            self.round, self.side, self.left = 1, "defence", 2
            self.raisable = set(deal.levels)
        kind = action.kind
        if kind == "dobra":
            return True
        if kind != "flek":
            return False
        levels = deal.levels
        for w in action.words:
            if w not in self.raisable or levels.get(w, 4) >= 4:
                return False
        if action.proti:
            if self.round != 1 or deal.game != "barva":
                return False
            hand = deal.masks[seat]
            for p in action.proti:
                if p in levels or p in deal.proti:
                    return False
                if p == "sedma" and not hand >> (deal.trump * 8 + SEVEN) & 1:
                    return False
                if p == "sto" and not any(hand & pair == pair for pair in _KO_PAIRS):
                    return False
        return True

    def applied(self, action: Action) -> None:
        """Follow a raise the engine has applied."""
        self.raised.update(action.words)
        self.announced.update(action.proti)
        self.left -= 1
        if self.left == 0:
            self.raisable = self.raised | {p + "-proti" for p in self.announced}
            self.side = "actor" if self.side == "defence" else "defence"
            self.left = 2 if self.side == "defence" else 1
            self.round += 1
            self.raised, self.announced = set(), set()


def direct_ok(deal: Deal, seat: int, action: Action) -> bool:
    """True when ``action`` is certainly legal for ``seat`` now; False means: ask the engine."""
    phase = deal.phase
    kind = action.kind
    if phase == "play":
        return kind == "play" and play_ok(deal, seat, action.cards[0])
    if phase == "talon":
        return talon_discard_ok(deal, seat, action)
    if phase == "answer":  # R4.1–R4.3: dobrá, or špatná on Barva, durch on a betl
        return kind == "dobra" or (kind == "spatna" and deal.game == "barva") or (
            kind == "durch" and not action.cards and deal.game == "betl")
    if phase == "trump":  # R3.1: one of the forhont's first seven, or z lidu
        return kind == "trump" and (not action.cards or action.cards[0] in deal.hands[deal.forhont][:7])
    if phase == "contract" and kind == "contract":  # R5.1
        name = action.words[0]
        hand = deal.masks[deal.forhont]
        if "sedma" in name and not hand >> (deal.trump * 8 + SEVEN) & 1:
            return False
        if "sto" in name and not any(hand & pair == pair for pair in _KO_PAIRS):
            return False
        return name in ("hra", "sedma", "sto", "sto-sedma")
    return False


@dataclass
class Replay:
    """A deal record replayed by the engine."""

    deal: Deal | None
    problems: list[tuple[str, str]]
    complete: bool  # every decision applied (and the fault, if any) and the deal over
    hands: list[list[Card]] | None = None  # the remaining hands, tracked from the record (R2.3)
    table: list[tuple[int, Card]] | None = None  # cards on the table when the deal ended


def _seat_rule(deal: Deal) -> str:
    if deal.phase == "play":
        return "R7.1" if not deal.trick else "R1.5"
    if deal.phase == "talon" and deal.talons:
        return "R4.2"
    return PHASE_RULE.get(deal.phase, "R1.5")


def replay_record(rec: dict, deck: list[Card], on_step=None) -> Replay:
    """Replay ``rec``'s decisions (and fault) on a fresh deal from ``deck``.

    ``on_step(deal, i)`` is called before decision ``i`` and once more, with
    ``i == len(decisions)``, when the deal is over.  Besides the engine's state
    the replay tracks each player's hand order from the record alone (dealt
    order, talon taken appended, played and discarded cards leaving it), which
    is what the next deck is derived from.
    """
    problems: list[tuple[str, str]] = []
    forhont = rec.get("forhont")
    if forhont not in (0, 1, 2):
        return Replay(None, [("format", f"forhont {forhont!r} is not a seat 0..2")], False)
    d = _ReplayDeal(deck, forhont)
    hands = dealt_hands(deck, forhont)
    table: list[tuple[int, Card]] = []
    talon: list[Card] = []
    decisions = rec.get("decisions")
    if not isinstance(decisions, list):
        return Replay(d, [("format", "the deal has no list of decisions")], False)
    apply = d.apply
    plays: list = []  # seat and action of every card played, in order
    add_play = plays.append
    cache = _ACTION_CACHE
    flek = FlekRounds()
    for i, dec in enumerate(decisions):
        if on_step is not None:
            on_step(d, i)
        phase = d.phase
        try:
            seat = dec["seat"]
            kind = dec["decision"]
            text = dec["action"]
            bad = seat != d.to_move or kind != phase or phase == DONE
        except (KeyError, TypeError):
            bad = True
        if bad:
            problems.append(_decision_problem(d, dec, i + 1))
            return Replay(d, problems, False)
        action = cache.get(text) if type(text) is str else None
        if action is None:
            try:
                action = _action(text)
            except (ActionError, TypeError) as e:
                problems.append((PHASE_RULE[phase], f"decision {i + 1} (seat {seat}): malformed action {text!r}: {e}"))
                return Replay(d, problems, False)
        k = action.kind
        if k == "play":
            vouched = play_ok(d, seat, action.cards[0])
        elif phase == "flek":
            vouched = flek.ok(d, seat, action)
        else:
            vouched = direct_ok(d, seat, action)
        if vouched:
            d._vouched = action
        try:
            apply(action)
        except IllegalAction as e:
            problems.append(_illegal(e, i + 1, seat, text))
            return Replay(d, problems, False)
        if k == "play":
            add_play(seat)
            add_play(action.cards[0])
            continue
        # the hand order, tracked from the record (R2.3, R2.6); plays are taken out at the end
        if phase == "flek":
            flek.applied(action)
        elif k == "spatna" or (k == "durch" and not action.cards):
            hands[seat].extend(talon)
            talon = []
        elif action.cards and k in ("barva", "betl", "durch"):
            a, b = action.cards
            hands[seat].remove(a)
            hands[seat].remove(b)
            talon = [a, b]
    if plays:
        played = set(plays[1::2])
        hands = [[c for c in h if c not in played] for h in hands]
        n_plays = len(plays) // 2
        rest = plays[2 * (n_plays - n_plays % 3):]  # a trick left unfinished (a fault or laid cards)
        table = list(zip(rest[0::2], rest[1::2]))
    faults = rec.get("faults") or []
    if faults:
        if not isinstance(faults, list) or len(faults) != 1 or not isinstance(faults[0], dict):
            problems.append(("format", "faults is a list of at most one fault (a fault ends the deal, R12.1)"))
            return Replay(d, problems, False)
        f = faults[0]
        if d.phase == DONE:
            problems.append(("R12.1", f"a fault of seat {f.get('seat')} is recorded after the deal was over"))
            return Replay(d, problems, False)
        if f.get("seat") not in (0, 1, 2):
            problems.append(("format", f"the fault's seat {f.get('seat')!r} is not a seat 0..2"))
            return Replay(d, problems, False)
        d.fault(f["seat"], str(f.get("kind", "")), str(f.get("message", "")), str(f.get("evidence", "")),
                f.get("elapsed") if isinstance(f.get("elapsed"), (int, float)) else None)
    if d.phase != DONE:
        problems.append(("R12.1", f"the {len(decisions)} recorded decisions stop before the deal is over "
                                  f"(seat {d.to_move} still has a {d.phase} decision) and no fault is recorded"))
        return Replay(d, problems, False)
    if on_step is not None:
        on_step(d, len(decisions))
    return Replay(d, problems, True, hands, table)


def _illegal(e: IllegalAction, n: int, seat: int, text: str) -> tuple[str, str]:
    msg = str(e)
    if msg.startswith(e.rule + ": "):
        msg = msg[len(e.rule) + 2:]
    return e.rule, f"decision {n} (seat {seat}, {text}) is illegal: {msg}"


def _decision_problem(d: Deal, dec, n: int) -> tuple[str, str]:
    """Why decision ``n`` cannot be the next one: the deal is over, the seat or the decision kind is wrong."""
    if d.phase == DONE:
        return "R7.11", f"decision {n} ({_dec_text(dec)}) comes after the deal was over"
    if type(dec) is not dict or not {"seat", "decision", "action"} <= dec.keys():
        return "format", f"decision {n} is not an object with seat, decision and action"
    seat = dec["seat"]
    if seat != d.to_move:
        return _seat_rule(d), f"decision {n} ({_dec_text(dec)}) is recorded for seat {seat}, but it is seat {d.to_move}'s turn ({d.phase})"
    return PHASE_RULE[d.phase], f"decision {n} is recorded as a {dec['decision']!r} decision; seat {seat} faced a {d.phase} decision"


def _dec_text(dec) -> str:
    if isinstance(dec, dict):
        return f"{dec.get('decision')} {dec.get('action')}"
    return repr(dec)


def collected_deck(rec: dict, rp: Replay) -> list[Card]:
    """R2.3–R2.4: the deck after collecting a finished deal (top first, before the cut).

    Built here from the replayed tricks, the final talon and the hand order
    tracked while replaying, not by the engine's own collection.
    """
    d = rp.deal
    hands = [list(h) for h in rp.hands]
    table = rp.table
    actor = d.actor
    laid_pile: list[Card] = []
    if d.fault_info is not None:
        for s, c in table:  # R2.3: cards on the table go back to their players
            hands[s].append(c)
    elif d.laid is not None:
        if d.game == "betl":  # R2.4: betl cards stay in the hands, table cards go back
            for s, c in table:
                hands[s].append(c)
        else:  # R2.4: table cards, the actor's hand, the others clockwise
            laid_pile = [c for _s, c in table] + hands[actor] + hands[(actor + 1) % 3] + hands[(actor + 2) % 3]
            hands = [[], [], []]
    piles: list[list[Card]] = [[], [], []]
    if d.talon and d.talon_owner is not None:  # the final talon, under its discarder's pile
        piles[d.talon_owner].extend(d.talon)
    for _leader, cards, winner in d.tricks:
        piles[winner].extend(cards)
    if laid_pile:
        piles[actor].extend(laid_pile)
    for s in range(3):
        piles[s].extend(hands[s])
    f = d.forhont
    stack = piles[f] + piles[(f + 1) % 3] + piles[(f + 2) % 3]  # bottom to top
    stack.reverse()
    return stack


# ------------------------------------------------------------------ comparing a replay with its record

def _component_rule(kind: str, name: str, default: str) -> str:
    if kind == "fault":
        return "R12.2"
    if kind == "conceded":
        return "R6.1"
    if kind == "not-played":
        return "R6.2"
    return default


def compare(rec: dict, d: Deal, out: list[tuple[str, str]]) -> None:
    """Append (rule, message) for every recorded outcome that differs from the replay ``d``."""
    game = d.game
    betl_durch = game in ("betl", "durch")

    def diff(key, expected, rule, what):
        if key in rec and rec[key] != expected:
            out.append((rule, f"{what}: the replay gives {_short(expected)}, the log says {_short(rec[key])}"))

    diff("trump_card", CODE[d.trump_card] if d.trump_card is not None else None, "R3.1", "trump card")
    diff("zlidu", d.zlidu, "R3.1", "z lidu")
    diff("talons", [{"seat": s, "cards": [CODE[a], CODE[b]]} for s, (a, b), _k in d.talons], "R3.3", "discards (talons)")
    diff("talon", [CODE[c] for c in d.talon], "R3.3", "final talon")
    diff("talon_owner", d.talon_owner, "R3.3", "talon owner")
    diff("game", game, "R3.2", "game")
    diff("actor", d.actor, "R1.6", "actor")
    diff("contract", d.contract, "R5.1", "contract")
    diff("trump", SUIT_CODES[d.trump] if d.trump is not None else None, "R3.1", "trump suit")
    diff("levels", d.levels, "R5.4" if betl_durch else "R5.3", "levels")
    diff("proti", d.proti, "R5.2", "games against")
    diff("points", d.points, "R1.4", "card points per seat")
    if d.hlasky or rec.get("hlasky"):
        diff("hlasky", [{"seat": h.seat, "suit": SUIT_CODES[h.suit], "points": h.points} for h in d.hlasky], "R7.5", "hlášky")
    diff("laid", {"seat": d.laid[0], "cards": [CODE[c] for c in d.laid[1]]} if d.laid else None, "R8.4", "laid cards")

    rt = rec.get("tricks")
    same = isinstance(rt, list) and len(rt) == len(d.tricks)
    if same:
        for (l, cs, w), t in zip(d.tricks, rt):
            if (type(t) is not dict or t.get("leader") != l or t.get("winner") != w
                    or t.get("cards") != [CODE[cs[0]], CODE[cs[1]], CODE[cs[2]]]):
                same = False
                break
    if not same:
        tricks = [{"leader": l, "cards": [CODE[c] for c in cs], "winner": w} for l, cs, w in d.tricks]
        if not isinstance(rt, list):
            out.append(("format", "tricks is not a list"))
        else:
            if len(rt) != len(tricks):
                out.append(("R7.11" if betl_durch else "R7.12",
                            f"the replay has {len(tricks)} tricks, the log {len(rt)}"))
            play_rule = "R7.3" if betl_durch else "R7.2"
            for i, (a, b) in enumerate(zip(tricks, rt), 1):
                if not isinstance(b, dict):
                    out.append(("format", f"trick {i} is not an object"))
                    continue
                if a["leader"] != b.get("leader"):
                    out.append(("R7.1", f"trick {i} is led by seat {a['leader']}, the log says seat {b.get('leader')}"))
                if a["cards"] != b.get("cards"):
                    out.append((play_rule, f"trick {i} is {' '.join(a['cards'])}, the log says {_short(b.get('cards'))}"))
                if a["winner"] != b.get("winner"):
                    out.append(("R1.3", f"trick {i} ({' '.join(a['cards'])}) is won by seat {a['winner']}, the log says seat {b.get('winner')}"))

    res = rec.get("result")
    r = d.result
    if not isinstance(res, dict):
        out.append(("format", "the deal has no result object"))
        return
    kind = r.kind
    if res.get("kind") != kind:
        rule = RESULT_KIND_RULE.get(res.get("kind")) if res.get("kind") != "played" else None
        rule = rule or RESULT_KIND_RULE[kind]
        out.append((rule, f"result: the deal is {kind}, the log says {res.get('kind')!r}"))
    if res.get("actor") != r.actor:
        out.append(("R1.6", f"result: the actor is {r.actor}, the log says {res.get('actor')!r}"))
    comps = res.get("components")
    if not isinstance(comps, list):
        out.append(("format", "result.components is not a list"))
        comps = []
    names = [c.name for c in r.components]
    rnames = [c.get("name") if isinstance(c, dict) else None for c in comps]
    if names != rnames:
        odd = [n for n in rnames if n not in names] + [n for n in names if n not in rnames]
        odd_rule = OUTCOME_RULE.get(odd[0], "R5.1") if odd else "R9.5"
        if odd and odd[0] in ("sedma-proti", "sto-proti"):
            odd_rule = "R5.2"
        out.append((_component_rule(kind, "", odd_rule),
                    f"result components: the replay settles {names}, the log lists {rnames}"))
    for c, rc in zip(r.components, comps):
        if not isinstance(rc, dict) or rc.get("name") != c.name:
            continue
        nm = c.name
        if rc.get("owner") != c.owner:
            out.append((_component_rule(kind, nm, "R1.6"), f"{nm}: owner is {c.owner}, the log says {rc.get('owner')!r}"))
        if rc.get("level") != c.level:
            lrule = "R5.4" if nm in ("betl", "durch") else ("R9.3" if nm == "tiche-sto" else "R5.3")
            out.append((lrule if kind != "fault" else "R12.2",
                        f"{nm}: level {c.level}, the log says {rc.get('level')!r}"))
        if rc.get("won") != c.won:
            out.append((_component_rule(kind, nm, OUTCOME_RULE.get(nm, "R7.6")),
                        f"{nm}: {'won' if c.won else 'lost'} by its owner ({c.owner}), the log says {'won' if rc.get('won') else 'lost'}"))
        if rc.get("amount") != c.amount:
            out.append((_component_rule(kind, nm, AMOUNT_RULE.get(nm, "R9.1")),
                        f"{nm}: amount {c.amount} ({c.detail}), the log says {rc.get('amount')!r}"))
    pay = res.get("payments")
    if not (isinstance(pay, list) and len(pay) == 3 and all(type(x) is int for x in pay)):
        out.append(("format", f"result.payments must be three integers, got {_short(pay)}"))
        return
    if sum(pay) != 0:
        out.append(("R9.5", f"payments {pay} sum to {sum(pay):+d}, not zero"))
    if pay != list(r.payments):
        out.append(("R12.2" if kind == "fault" else ("R6.1" if kind == "conceded" else "R9.5"),
                    f"payments: the replay gives {list(r.payments)}, the log says {pay}"))
    # the payments must follow from the recorded components themselves (R9.5, R12.2)
    if names == rnames and kind != "fault" and r.actor is not None:
        expected = _payments_from(res, r.actor, None)
        if expected is not None and expected != pay and pay == list(r.payments):
            out.append(("R9.5", f"payments {pay} do not follow from the recorded components ({expected})"))


def _payments_from(res: dict, actor: int, faulting_defender: int | None) -> list[int] | None:
    """R9.5: each defender pays a component's amount, the actor receives twice that."""
    total = 0
    for c in res.get("components", []):
        amount = c.get("amount") if isinstance(c, dict) else None
        if type(amount) is not int or c.get("owner") not in ("actor", "defence"):
            return None
        total += amount if (c.get("owner") == "actor") == bool(c.get("won")) else -amount
    pay = [-total, -total, -total]
    pay[actor] = 2 * total
    return pay


def _short(v) -> str:
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 160 else s[:157] + "..."


# ------------------------------------------------------------------ a whole file

class _FileCheck:
    def __init__(self, path: Path, keep_deals: bool, verify: str | None = None):
        self.path = path
        self.verify = verify  # the public key (ed25519:HEX) the footer must be signed with
        self.report = Report(str(path), verify=verify)
        self.problems = self.report.problems
        self.keep_deals = keep_deals
        self.deals: dict[tuple[int, int], tuple[int, dict, list[Card]]] = {}
        self.header: dict | None = None
        self.deals_per_partie = 12
        self.n_bots = 3
        self.partie: int | None = None  # the open partie
        self.last_partie = 0
        self.declared_parties: int | None = None  # the header's partie count
        # what the log states about itself (referee/evidence.py); replaced by check_header, which always comes first
        self.seed = SeedEvidence({"seed_sha256": "0" * 64}, self.add)
        self.times = DecisionTimes({}, 3, self.add)
        self.forfeits = Forfeits({}, 12, self.add)
        self.last_type: str | None = None
        self.seating = [0, 1, 2]
        self.indexes: list[int] = []
        self.partie_pay = [0, 0, 0]
        self.prev: tuple[int, list[Card] | None] | None = None  # (index, collected deck) of the previous deal
        self.match_totals: list[int] = [0, 0, 0]
        self.footer = False
        self.defer_footer = False  # a worker of a parallel run leaves the footer to the main process
        self.pending_footer: tuple[int, dict] | None = None

    def add(self, line: int, rule: str, message: str) -> None:
        self.problems.append(Problem(line, rule, message))

    def run(self) -> Report:
        header_seen = False
        last_line = 0
        early: list[tuple[int, str]] = []  # unreadable lines before the first record
        try:
            lines, ends = split_lines(self.path)
        except OSError as e:
            self.add(0, "format", f"cannot read the file: {e.strerror or e}")
            return self.report
        seal = chain_problems(lines, ends) if lines else []
        parsed = parse_lines(lines, ends) if lines else [(1, None, "empty file: no header, not a marias log")]
        for n, rec, problem in parsed:
            last_line = n
            if rec is None:
                if header_seen:
                    self.add(n, "format", problem)
                else:
                    early.append((n, problem))
                continue
            if not header_seen:
                if rec.get("type") != "header":
                    for m, msg in early:
                        self.add(m, "format", msg)
                    self.add(n, "format", f"not a marias log: the first record is {rec.get('type')!r}, not the header")
                    return self.report
                for m, msg in early:
                    self.add(m, "format", msg)
                header_seen = True
                self.check_header(n, rec)
                continue
            try:
                self.record(n, rec)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
                self.add(n, "format", f"malformed {rec.get('type', 'record')} record ({e.__class__.__name__}: {e})")
        if not header_seen:
            if not early or "empty file" in early[0][1]:
                self.add(1, "format", "empty file: no header, not a marias log")
            else:
                self.add(early[0][0], "format", f"not a marias log: no line is a JSON object (line {early[0][0]}: {early[0][1]})")
            return self.report
        if not self.footer:
            self.report.complete = False
            where = f"stopped in partie {self.partie}" if self.partie is not None else f"stopped after partie {self.last_partie}"
            self.add(last_line, "incomplete",
                     f"{self.report.deals} complete deals, {where} (no footer: the match did not finish; not a result)")
        self.add_seal(seal)
        self.problems.sort(key=lambda q: q.line)
        return self.report

    def add_seal(self, seal: list[tuple[int, str]]) -> None:
        """The hash chain's problems (after the line's own, at the same line)."""
        if self.header is not None and self.header.get("format_version") != FORMAT_VERSION:
            return  # an unsupported version is reported once, as such
        for line, msg in seal:
            self.add(line, "seal", msg)

    def check_header(self, n: int, h: dict) -> None:
        self.header = h
        if h.get("format") != FORMAT:
            self.add(n, "format", f"format is {h.get('format')!r}, expected {FORMAT!r}")
        if h.get("format_version") != FORMAT_VERSION:
            self.add(n, "format", f"format_version {h.get('format_version')!r} is not supported (this validator reads {FORMAT_VERSION})")
        dpp = h.get("deals_per_partie", 12)
        if type(dpp) is int and dpp >= 1:
            self.deals_per_partie = dpp
        else:
            self.add(n, "format", f"deals_per_partie {dpp!r} is not a positive integer")
        bots = h.get("bots")
        if not isinstance(bots, list) or len(bots) < 3:
            self.add(n, "format", "the header lists fewer than three bots")
            bots = []
        else:
            self.n_bots = len(bots)
        self.match_totals = [0] * self.n_bots
        count = h.get("partie")
        if count is not None:
            if type(count) is int and count >= 1:
                self.declared_parties = count
            else:
                self.add(n, "format", f"the header's partie count {count!r} is not a positive integer")
        self.seed = SeedEvidence(h, self.add, n)
        self.times = DecisionTimes(h, self.n_bots, self.add, n)
        self.forfeits = Forfeits(h, self.deals_per_partie, self.add, n)

    def record(self, n: int, rec: dict) -> None:
        t = rec.get("type")
        if self.footer:
            self.add(n, "format", f"a {t!r} record after the footer")
        if t == "deal":
            self.deal(n, rec)
        elif t == "forfeit":
            self.forfeit(n, rec)
        elif t == "partie_start":
            self.partie_start(n, rec)
        elif t == "partie_end":
            self.partie_end(n, rec)
        elif t == "footer":
            if self.defer_footer:
                self.footer = True
                self.pending_footer = (n, rec)
            else:
                self.check_footer(n, rec)
        elif t == "header":
            self.add(n, "format", "a second header")
        else:
            self.add(n, "format", f"unknown record type {t!r}")
        self.last_type = t

    def partie_start(self, n: int, rec: dict) -> None:
        p = rec.get("partie")
        if self.partie is not None:
            self.add(n, "R2.1", f"partie {p} starts before partie {self.partie} ended ({len(self.indexes)} of {self.deals_per_partie} deals)")
        if p != self.last_partie + 1:
            self.add(n, "format", f"partie {p!r} follows partie {self.last_partie}; partie are numbered 1, 2, …")
        self.partie = p if type(p) is int else self.last_partie + 1
        self.last_partie = self.partie
        if self.declared_parties is not None and self.partie > self.declared_parties:
            self.add(n, "format", f"partie {self.partie}: the header announces {self.declared_parties} partie")
        if "deck" in rec:
            self.add(n, "format", f"partie {p}: partie_start holds a deck; no card is logged before its deal is over")
        shuffle = rec.get("shuffle")
        if shuffle not in ("seed", "deck-book"):
            self.add(n, "format", f"partie {p}: shuffle {_short(shuffle)} is neither \"seed\" nor \"deck-book\"")
            shuffle = "seed"
        self.seed.partie_start(self.partie, shuffle)
        seating = rec.get("seating", [0, 1, 2])
        if (isinstance(seating, list) and len(seating) == 3 and len(set(seating)) == 3
                and all(type(x) is int and 0 <= x < self.n_bots for x in seating)):
            self.seating = seating
        else:
            self.add(n, "format", f"seating {seating!r} must name three different bots of the header")
            self.seating = [0, 1, 2]
        self.indexes = []
        self.partie_pay = [0, 0, 0]
        self.prev = None
        self.times.start_partie(self.seating)
        self.forfeits.start_partie()

    def deal(self, n: int, rec: dict) -> None:
        rep = self.report
        rep.deals += 1
        if self.partie is None:
            self.add(n, "format", "a deal outside a partie (no open partie_start)")
            return
        p, i = rec.get("partie"), rec.get("deal")
        if p != self.partie:
            self.add(n, "R2.1", f"the deal is recorded in partie {p!r}, but partie {self.partie} is being played")
        if type(i) is not int or i < 1:
            self.add(n, "format", f"deal number {i!r} is not a positive integer")
            return
        expected = len(self.indexes) + 1
        if i != expected:
            if i in self.indexes:
                self.add(n, "R2.1", f"deal {i} of partie {self.partie} is recorded twice")
            elif i > expected:
                missing = ", ".join(str(k) for k in range(expected, i))
                self.add(n, "R2.1", f"deal {i} follows deal {expected - 1}: deal(s) {missing} of partie {self.partie} missing")
            else:
                self.add(n, "R2.1", f"deal {i} is out of order (deal {expected} expected)")
        if i > self.deals_per_partie:
            self.add(n, "R2.1", f"deal {i}: a partie has {self.deals_per_partie} deals")
        self.forfeits.before_deal(n, i, self.add)
        self.indexes.append(i)
        # R2.1, R1.5: rotation
        fh = forhont_of(i - 1)
        if rec.get("forhont") != fh:
            self.add(n, "R2.1", f"deal {i}: the forhont is seat {fh} (seat 0 in deal 1, then clockwise), the log says {rec.get('forhont')!r}")
        f = rec.get("forhont")
        if f in (0, 1, 2) and rec.get("dealer") != (f + 2) % 3:
            self.add(n, "R1.5", f"deal {i}: the dealer sits before the forhont (seat {(f + 2) % 3}), the log says {rec.get('dealer')!r}")
        # R2.5: the cut
        k = rec.get("cut", "missing")
        first = i == 1
        if first:
            if k is not None:
                self.add(n, "R2.5", f"deal 1 has no cut (the shuffled deck is dealt as it is), the log says cut {k!r}")
        elif type(k) is not int:
            self.add(n, "R2.5", f"deal {i}: the cut k is missing or not an integer ({k!r})")
        elif not CUT_RANGE[0] <= k <= CUT_RANGE[1]:
            self.add(n, "R2.5", f"deal {i}: cut {k} is out of range {CUT_RANGE[0]}..{CUT_RANGE[1]} (at least two cards from the top and the bottom)")
        # the deck
        deck, why = parse_deck(rec.get("deck"))
        if why:
            self.add(n, why[:why.index(':')], f"deal {i} deck: {why[why.index(':') + 2:]}")
            self.prev = None
            self.record_pay(n, rec)
            self.forfeits.after_deal(i, rec)
            return
        self.seed.deal(self.partie, n, rec)
        self.times.check(n, i, rec, self.add)
        if not first and self.prev is not None and self.prev[0] == i - 1 and self.prev[1] is not None and type(k) is int:
            self.check_chain(n, i, k, deck, self.prev[1])
        # R2.6: the hands dealt
        hands = rec.get("hands")
        if hands is not None and f in (0, 1, 2):
            dealt = dealt_hands(rec["deck"], f)
            if hands != dealt:
                bad = [s for s in range(3) if not isinstance(hands, list) or len(hands) != 3 or hands[s] != dealt[s]]
                self.add(n, "R2.6", f"deal {i}: the hands recorded for seat(s) {bad} are not the ones dealt from the deck (7-5-5-5-5-5 from the forhont)")
        # replay
        rp = replay_record(rec, deck)
        for rule, msg in rp.problems:
            self.add(n, rule, f"deal {i}: {msg}")
        collected = None
        if rp.complete:
            before = len(self.problems)
            out: list[tuple[str, str]] = []
            try:
                compare(rec, rp.deal, out)
            except (KeyError, TypeError, AttributeError) as e:
                out.append(("format", f"malformed outcome fields ({e.__class__.__name__}: {e})"))
            for rule, msg in out:
                self.add(n, rule, f"deal {i}: {msg}")
            try:
                collected = collected_deck(rec, rp)
            except (KeyError, TypeError, ValueError) as e:
                self.add(n, "format", f"deal {i}: cannot collect the deck from the record ({e.__class__.__name__}: {e})")
            if len(self.problems) == before:
                rep.deals_replayed += 1
            if self.keep_deals and type(p) is int:
                self.deals[(p, i)] = (n, rec, deck)
        self.prev = (i, collected)
        self.record_pay(n, rec)
        self.forfeits.after_deal(i, rec)

    def check_chain(self, n: int, i: int, k: int, deck: list[Card], collected: list[Card]) -> None:
        expected = collected[k % 32:] + collected[:k % 32]
        if deck == expected:
            return
        for j in range(32):
            if collected[j:] + collected[:j] == deck:
                self.add(n, "R2.5", f"deal {i}: the deck is the collected deck of deal {i - 1} cut at {j}, but the log says cut {k}")
                return
        pos = next(j for j in range(32) if deck[j] != expected[j])
        self.add(n, "R2.3", f"deal {i}: the deck is not the collected deck of deal {i - 1} (R2.3–R2.4) cut at {k}: "
                            f"position {pos + 1} holds {deck[pos]}, expected {expected[pos]}")

    def forfeit(self, n: int, rec: dict) -> None:
        p = rec.get("partie")
        if self.partie is None:
            self.add(n, "format", f"a forfeit record outside a partie (partie {_short(p)})")
            return
        if p != self.partie:
            self.add(n, "format", f"the forfeit record says partie {_short(p)}, but partie {self.partie} is being played")
        pay = self.forfeits.record(n, rec, self.last_type == "deal", self.add)
        if pay is not None:
            for s in range(3):
                self.partie_pay[s] += pay[s]

    def record_pay(self, n: int, rec: dict) -> None:
        res = rec.get("result")
        pay = res.get("payments") if isinstance(res, dict) else None
        if isinstance(pay, list) and len(pay) == 3 and all(type(x) is int for x in pay):
            for s in range(3):
                self.partie_pay[s] += pay[s]

    def partie_end(self, n: int, rec: dict) -> None:
        p = rec.get("partie")
        if self.partie is None:
            self.add(n, "format", f"partie_end of partie {p!r} without its partie_start")
            return
        if p != self.partie:
            self.add(n, "format", f"partie_end says partie {p!r}, but partie {self.partie} is being played")
        expected = self.forfeits.expected_deals(n, self.partie, self.add)
        if self.forfeits.forfeited is not None:
            if len(self.indexes) != expected:
                self.add(n, "R2.1", f"partie {self.partie} ends after {len(self.indexes)} deals; forfeited from deal "
                                    f"{expected + 1} it has {expected}")
        elif len(self.indexes) != self.deals_per_partie:
            self.add(n, "R2.1", f"partie {self.partie} ends after {len(self.indexes)} deals; a partie has {self.deals_per_partie}")
        totals = rec.get("totals")
        if totals != self.partie_pay:
            self.add(n, "R9.7", f"partie {self.partie} totals: the deals' payments sum to {self.partie_pay}, the log says {_short(totals)}")
        pl = places(self.partie_pay)
        if rec.get("places") != pl:
            self.add(n, "R9.7", f"partie {self.partie} places: totals {self.partie_pay} give places {pl}, the log says {_short(rec.get('places'))}")
        for s in range(3):
            self.match_totals[self.seating[s]] += self.partie_pay[s]
        self.report.parties += 1
        self.partie = None
        self.prev = None

    def check_footer(self, n: int, rec: dict) -> None:
        self.footer = True
        if self.partie is not None:
            self.add(n, "R2.1", f"the footer comes while partie {self.partie} is unfinished ({len(self.indexes)} deals)")
        if rec.get("partie") != self.report.parties:
            self.add(n, "R9.7", f"the footer counts {rec.get('partie')!r} partie, the log has {self.report.parties}")
        if rec.get("totals") != self.match_totals:
            self.add(n, "R9.7", f"match totals: the partie totals sum to {self.match_totals}, the footer says {_short(rec.get('totals'))}")
        pl = places(self.match_totals)
        if rec.get("places") != pl:
            self.add(n, "R9.7", f"match places: totals {self.match_totals} give places {pl}, the footer says {_short(rec.get('places'))}")
        if rec.get("complete") is not True:
            self.add(n, "format", "the footer does not say complete: true")
        else:
            self.report.complete = True
        if self.declared_parties is not None and self.report.parties != self.declared_parties:
            self.add(n, "format", f"the header announces {self.declared_parties} partie, the log holds {self.report.parties}")
        self.check_seed(n, rec)
        self.check_signature(n, rec)

    def check_seed(self, n: int, rec: dict) -> None:
        """R2.2, R2.5: every deck and cut follows from the revealed seed.  Such a problem is
        the first thing wrong on its line (a deal replayed from another deck fails anyway)."""
        before = len(self.problems)
        self.seed.check(n, rec, self.add)
        found = self.problems[before:]
        del self.problems[before:]
        self.problems[:0] = found

    def check_signature(self, n: int, rec: dict) -> None:
        problems, signer, verified = signature_problems(rec, self.verify)
        for msg in problems:
            self.add(n, "seal", msg)
        self.report.signer = signer
        self.report.verified = verified


def validate_file(path, transcripts=None, jobs: int = 1, verify: str | None = None) -> Report:
    """Validate one log; with ``transcripts`` (a folder) also check its seats' transcripts.

    ``jobs`` > 1 validates the partie of a large log in that many processes
    (the report is the same as with one).  ``verify`` (a public key, ``ed25519:HEX``
    or a key file, see :func:`referee.log.load_public_key`): the log must be signed
    with that key.
    """
    path = Path(path)
    if verify is not None:
        verify = load_public_key(verify)
    if jobs > 1 and transcripts is None:
        report = _validate_parallel(path, jobs, verify)
        if report is not None:
            return report
    check = _FileCheck(path, keep_deals=transcripts is not None, verify=verify)
    with _gc_paused():
        report = check.run()
    if transcripts is not None:
        tdir = Path(transcripts)
        stem = path.name[:-len(".jsonl")] if path.name.endswith(".jsonl") else path.stem
        for tpath in sorted(tdir.glob(f"{stem}.seat*.transcript.jsonl")):
            m = re.fullmatch(re.escape(stem) + r"\.seat(\d+)\.transcript\.jsonl", tpath.name)
            if not m:
                continue
            report.transcripts += 1
            probs, count = check_transcript(tpath, int(m.group(1)), check.deals)
            report.problems.extend(probs)
            report.messages_checked += count
    return report


class _gc_paused:
    """Many short-lived objects and no cycles worth collecting: pause the cyclic GC meanwhile."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()


# ------------------------------------------------------------------ parallel validation of one large log

MIN_PARTIE_PER_JOB = 2
_SHARED: tuple | None = None  # (path, lines, ends_with_newline), inherited by forked workers


def _validate_parallel(path: Path, jobs: int, verify: str | None = None) -> Report | None:
    """Split the log at partie boundaries and check the pieces in ``jobs`` processes.

    Each partie is independent of the others (its deck chain starts from its own
    shuffle), so a worker checks whole partie; the main process checks the header,
    the joints between pieces (partie numbering) and the footer totals.  Returns
    None when the log cannot be split (then the caller validates it in one piece).
    """
    global _SHARED
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    try:
        lines, ends = split_lines(path)
    except OSError:
        return None
    if len(lines) < 3 or not isinstance(lines[0], str) or not lines[0].startswith('{"type":"header"'):
        return None
    starts = [i for i, line in enumerate(lines) if line.startswith('{"type":"partie_start"')]
    pieces = min(jobs, len(starts) // MIN_PARTIE_PER_JOB)
    if pieces < 2:
        return None
    try:
        header = json.loads(lines[0])
    except ValueError:
        return None
    cuts = [starts[len(starts) * k // pieces] for k in range(pieces)] + [len(lines)]
    cuts[0] = 1  # the first piece also takes anything between the header and the first partie
    bounds = list(zip(cuts[:-1], cuts[1:]))
    _SHARED = (path, lines, ends)
    try:
        with ProcessPoolExecutor(max_workers=pieces, mp_context=multiprocessing.get_context("fork")) as ex:
            results = list(ex.map(_check_piece, bounds))
    finally:
        _SHARED = None
    main = _FileCheck(path, keep_deals=False, verify=verify)
    main.check_header(1, header)
    rep = main.report
    prev = None
    for res in results:
        if prev is not None and res["first_partie"] is not None:
            line, p = res["first_line"], res["first_partie"]
            if prev["partie"] is not None:
                main.add(line, "R2.1", f"partie {p} starts before partie {prev['partie']} ended ({prev['n_indexes']} of {main.deals_per_partie} deals)")
            if p != prev["last_partie"] + 1:
                main.add(line, "format", f"partie {p!r} follows partie {prev['last_partie']}; partie are numbered 1, 2, …")
        main.problems.extend(Problem(*q) for q in res["problems"])
        rep.deals += res["deals"]
        rep.deals_replayed += res["deals_replayed"]
        rep.parties += res["parties"]
        for i, x in enumerate(res["match_totals"]):
            main.match_totals[i] += x
        main.seed.facts.update(res["seed_facts"])
        prev = res
    last = results[-1]
    main.partie = last["partie"]
    main.last_partie = last["last_partie"]
    main.indexes = [0] * last["n_indexes"]
    if last["footer"] is not None:
        main.check_footer(*last["footer"])
    else:
        where = f"stopped in partie {main.partie}" if main.partie is not None else f"stopped after partie {main.last_partie}"
        main.add(len(lines), "incomplete",
                 f"{rep.deals} complete deals, {where} (no footer: the match did not finish; not a result)")
    main.add_seal(chain_problems(lines, ends))
    main.problems.sort(key=lambda q: q.line)
    return rep


def _check_piece(bounds: tuple[int, int]) -> dict:
    """A worker: check lines ``start+1..stop`` (whole partie) of the shared log."""
    path, lines, ends = _SHARED
    start, stop = bounds
    check = _FileCheck(Path(path), keep_deals=False)
    check.defer_footer = True
    check.check_header(1, json.loads(lines[0]))
    check.problems.clear()
    first_partie = None
    first = lines[start] if start < len(lines) else ""
    if first.startswith('{"type":"partie_start"'):
        try:
            first_partie = json.loads(first).get("partie")
        except ValueError:
            first_partie = None
        if type(first_partie) is int:
            check.last_partie = first_partie - 1
    with _gc_paused():
        for n, rec, problem in parse_lines(lines, ends, start, stop):
            if rec is None:
                check.add(n, "format", problem)
                continue
            try:
                check.record(n, rec)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
                check.add(n, "format", f"malformed {rec.get('type', 'record')} record ({e.__class__.__name__}: {e})")
    return {
        "problems": [(q.line, q.rule, q.message) for q in check.problems],
        "deals": check.report.deals,
        "deals_replayed": check.report.deals_replayed,
        "parties": check.report.parties,
        "match_totals": check.match_totals,
        "partie": check.partie,
        "n_indexes": len(check.indexes),
        "last_partie": check.last_partie,
        "first_partie": first_partie,
        "first_line": start + 1,
        "footer": check.pending_footer,
        "seed_facts": check.seed.facts,
    }


def validate_files(paths, transcripts=None, jobs: int = 1, verify: str | None = None) -> list[Report]:
    """Validate several logs: with ``jobs`` > 1, several files at once, or one large file in pieces."""
    paths = [Path(p) for p in paths]
    if verify is not None:
        verify = load_public_key(verify)
    if jobs > 1 and len(paths) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        if "fork" in multiprocessing.get_all_start_methods():
            with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=multiprocessing.get_context("fork")) as ex:
                return list(ex.map(validate_file, paths, [transcripts] * len(paths), [1] * len(paths), [verify] * len(paths)))
    return [validate_file(p, transcripts, jobs, verify) for p in paths]


def log_files(paths) -> list[Path]:
    """The logs named: files as given, folders searched for *.jsonl (transcripts excluded)."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*.jsonl") if not q.name.endswith(".transcript.jsonl")))
        else:
            out.append(p)
    return out


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
            leaked = sorted(_BY_CODE[c] for c in _cards_mentioned(body) if not allowed >> _BY_CODE[c] & 1)
            if leaked:
                where = f"after {moment} decisions" if moment is not None else "the end of the deal"
                problems.append(Problem(n, _leak_rule(leaked[0], know, idx),
                                        f"partie {key[0]} deal {key[1]}: the {t} sent to seat {seat} names "
                                        f"{' '.join(str(c) for c in leaked)}, which seat {seat} cannot know {where}", spath))
    return problems, count
