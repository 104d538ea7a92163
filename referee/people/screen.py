"""What a person's seat is shown: the messages of one seat, rendered as plain lines.

:class:`Screen` turns the protocol messages one seat receives — already
redacted by the referee, so they never hold a card the seat may not know —
into text for a person: the hand sorted by suit with the Czech suit names and
symbols (coloured on a terminal), the trump card once this seat may know it,
the bidding in the game's words (*Barva?*, *dobrá*, *špatná*, *flek*, *re*,
*tutti*, *boty*, *sedma proti* …), the trick on the table, the hlášky, the
points, and after each deal the settlement per component and the running
totals.  Plain lines only (no full-screen library), so it works over ssh and
in a pipe.  :class:`referee.people.human.Human` reads the person's choices.
"""

from __future__ import annotations

import re
import shlex
from typing import IO

from ..rules.actions import LEVEL_NAMES, ActionError, parse_action
from ..rules.cards import BETL_ORDER, SUIT_CODES, SUIT_NAMES, TRUMP_ORDER, Card
from ..logs.show import CONTRACT_WORDS, ROLE, Paint, flek_words

#: Suit symbols: the German suits drawn with the French symbols Czech players use for them.
SUIT_SYMBOLS = ("♥", "♠", "♦", "♣")  # červené, zelené, kule, žaludy
GAME_WORDS = {"barva": "„Barva?“", "betl": "„betl“", "durch": "„durch“"}
ANSWER_WORDS = {
    "dobra": ("„dobrá“", "agreed"),
    "spatna": ("„špatná“", "you take the talon, then discard and play betl or durch"),
    "durch": ("„durch“", "you take the talon, discard and play durch"),
}
TITLES = {
    "trump": "choose the trump card (you have seen your first seven cards)",
    "talon": "discard two cards and announce the game",
    "answer": "your answer",
    "contract": "announce the contract",
    "flek": "raise (flek) or say dobrá",
    "play": "your card",
}


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def short_label(label: str) -> str:
    """A bot's label as the table calls it: ``python /x/y/mybot.py --fast`` → ``mybot.py --fast``."""
    try:
        words = shlex.split(label)
    except ValueError:
        words = label.split()
    words = [w.rsplit("/", 1)[-1] for w in words] or [label]
    if len(words) > 1 and re.match(r"(python|pypy|node|ruby|perl|java)", words[0]):
        words = words[1:]
    return " ".join(words)[:24]


def card_key(c: Card, betl: bool):
    order = BETL_ORDER if betl else TRUMP_ORDER
    return (c >> 3, -order[c & 7])


class Screen:
    """One seat's screen: the state needed to tell its messages in words, and the text."""

    def __init__(self, out: IO[str], color: bool):
        self.out = out
        self.p = Paint(color)
        self.seat = 0
        self.labels = ["seat 0", "seat 1", "seat 2"]
        self.partie = self.deal = 0
        self.totals = [0, 0, 0]
        self._new_deal(None)

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def who(self, s: int | None) -> str:
        if s is None:
            return "nobody"
        return "you" if s == self.seat else f"{self.labels[s]} (seat {s})"

    def card(self, code: str) -> str:
        return self.p.card(Card.parse(code))

    def cards(self, codes) -> str:
        return " ".join(self.card(c) for c in codes) if codes else "—"

    def suit(self, s: int) -> str:
        return f"{SUIT_SYMBOLS[s]} {self.p.suit(s)}"

    def money(self, values) -> str:
        return " · ".join(f"{self.who(s)} {v:+d}" for s, v in enumerate(values))

    # ---------------------------------------------------------------- informational messages
    def partie_start(self, message: dict) -> None:
        if self.partie == message["partie"] and self.seat == message["seat"]:
            self.say("  (after the fault your seat starts afresh, as a bot's process would: PROTOCOL.md §10)")
            return
        self.seat = message["seat"]
        self.partie = message["partie"]
        self.labels = [short_label(str(x)) for x in message.get("players") or self.labels]
        self.labels[self.seat] = "you"
        self.totals = [0, 0, 0]
        self.say(self.p.bold(f"══ partie {self.partie} ({message.get('deals', 12)} deals) ══") +
                 f"  you are seat {self.seat}; " + ", ".join(self.who(s) for s in range(3) if s != self.seat))

    def _new_deal(self, message: dict | None) -> None:
        self.actor = None
        self.contract = None
        self.trump_card = None
        self._levels: dict[str, int] = {}
        self._side: str | None = None
        self._pending: set[str] = set()
        self._round = 0  # the raising round (R5.3) of the raises told so far
        self._answer_to: str | None = None  # the game the answers of the answer round are to
        self._tricks = 0
        if message is not None:
            self.deal = message["deal"]
            self.totals = list(message.get("totals") or self.totals)

    def deal_start(self, message: dict) -> None:
        self._new_deal(message)
        f = message["forhont"]
        roles = " · ".join(f"{ROLE[r]} {self.who((f + r) % 3)}" for r in range(3))
        cut = message.get("cut")
        self.say("")
        self.say(self.p.bold(f"━━ partie {self.partie} · deal {self.deal} ━━") + f"  {roles}"
                 + (f" · cut {cut}" if cut is not None else ""))
        self.say(f"groše so far: {self.money(self.totals)}")

    def event(self, message: dict) -> None:
        for line in self.event_lines(message.get("event") or {}):
            self.say("  " + line)

    def event_lines(self, ev: dict) -> list[str]:
        """What one event tells this seat, in the game's words."""
        kind = ev.get("kind")
        if kind == "action":
            line = self.action_words(ev["seat"], ev["decision"], ev["action"], ev.get("trump_card"))
            return [line] if line else []
        if kind == "hlaska":
            s = ev["suit"]
            return [f"hláška: {self.who(ev['seat'])} {ev['points']} in {self.suit(SUIT_CODES.index(s))}"]
        if kind == "trick":
            self._tricks += 1
            leader = ev["leader"]
            played = " · ".join(f"{self.who((leader + i) % 3)} {self.card(c)}" for i, c in enumerate(ev["cards"]))
            return [f"trick {self._tricks}: {played}  → {self.who(ev['winner'])}"]
        if kind == "laid":
            who = self.who(ev["seat"])
            return [f"{who} {'lay' if who == 'you' else 'lays'} the cards down (R8): {self.cards(ev['cards'])}"]
        if kind == "fault":
            return [f"fault: {self.who(ev['seat'])} {ev.get('fault')}: {ev.get('message')} — the deal ends"]
        return []

    def action_words(self, seat: int, decision: str, text: str, trump_card: str | None = None) -> str | None:
        """One action as this seat was told it (redacted by the referee), in words; None for a card play."""
        who = self.who(seat)
        try:
            a = parse_action(text)
        except ActionError:
            a = None
        if decision == "trump":
            if text == "trump:zlidu":
                return f"{who}: trump card z lidu (the 8th card, blind)"
            if a is not None and a.cards:
                self.trump_card = text.split(":")[1]
                return f"{who}: trump card {self.card(self.trump_card)} ({a.cards[0].czech}) from the first seven"
            return f"{who}: chooses a trump card from his first seven"
        if decision == "talon":
            kind = text.split(":")[0]
            self.actor = seat
            self._answer_to = kind
            if a is not None and a.cards:
                return f"{who}: discards {self.cards([str(c) for c in a.cards])} — {GAME_WORDS[kind]}"
            return f"{who}: discards two cards — {GAME_WORDS.get(kind, kind)}"
        if decision == "answer":
            word, _ = ANSWER_WORDS.get(text, (text, ""))
            to = f" (answer to {GAME_WORDS.get(self._answer_to, self._answer_to)})" if self._answer_to else ""
            return f"{who}: {word}" + (" — takes the talon" if text in ("spatna", "durch") else "") + to
        if decision == "contract":
            self.contract = text.split(":")[1]
            self.trump_card = trump_card or self.trump_card
            shown = ""
            if self.trump_card:
                s = Card.parse(self.trump_card) >> 3
                shown = f" — shows the trump card {self.card(self.trump_card)}: trumps are {self.suit(s)}"
            return f"{who}: „{CONTRACT_WORDS.get(self.contract, self.contract)}“{shown}"
        if decision == "flek":
            text = self._flek_text(seat, a)
            return f"{who}: „{text}“ (raising round {self._round})"
        if text == "lay":
            return None  # the laid event says it
        return None

    def _flek_text(self, seat: int, a) -> str:
        """A raise in words; the level of a component rises when its side's round is over (R5.3)."""
        side = "actor" if seat == self.actor else "defence"
        if side != self._side:
            for w in self._pending:
                self._levels[w] = self._levels.get(w, 0) + 1
            self._pending, self._side = set(), side
            self._round += 1
        if a is None or a.kind != "flek":
            return "dobrá"
        text = flek_words(a.words, a.proti, self._levels)
        self._pending |= set(a.words)
        return text

    def deal_end(self, message: dict) -> None:
        view, result = message.get("view") or {}, message.get("result") or {}
        self.say("  " + self.p.bold(f"deal {self.deal} is over") + f" ({result.get('kind')})")
        if view.get("tricks") or view.get("laid"):
            self.say("  " + self.points_line(view))
        for c in result.get("components") or []:
            level = f" {LEVEL_NAMES[c['level']]}" if c.get("level") else ""
            owner = "actor" if c.get("owner") == "actor" else "defence"
            outcome = "won" if c.get("won") else "lost"
            self.say(f"    {c['name'] + level:<17} {owner:<7} {outcome:<4} {c['amount']:>4} groše each  ({c.get('detail')})")
        for note in result.get("notes") or []:
            self.say(f"    {note}")
        pay = result.get("payments") or [0, 0, 0]
        self.totals = [t + x for t, x in zip(self.totals, pay)]
        self.say(f"  this deal: {self.money(pay)}")
        self.say(self.p.bold(f"  partie totals: {self.money(self.totals)}"))

    def partie_end(self, message: dict) -> None:
        totals, places = message.get("totals") or self.totals, message.get("places") or [0, 0, 0]
        self.say("")
        self.say(self.p.bold(f"══ partie {message.get('partie')} is over ══"))
        f = message.get("forfeit")  # R12.3, where the referee has a seat forfeit the rest of the partie
        if isinstance(f, dict) and f.get("seat") in (0, 1, 2):
            self.say(f"  {self.who(f['seat'])} forfeited the deals from deal {f.get('from_deal')} on (R12.3)")
        for s in sorted(range(3), key=lambda s: places[s]):
            pl = places[s]
            self.say(f"  place {int(pl) if pl == int(pl) else pl}: {self.who(s)} {totals[s]:+d} groše")

    # ---------------------------------------------------------------- the position
    def points_line(self, view: dict) -> str:
        pts = view.get("points") or [0, 0, 0]
        won = [0, 0, 0]
        for t in view.get("tricks") or []:
            won[t["winner"]] += 1
        return "tricks " + " · ".join(f"{self.who(s)} {won[s]}" for s in range(3)) + \
               ("   points " + " · ".join(f"{self.who(s)} {pts[s]}" for s in range(3)) if view.get("game") == "barva" else "")

    def hand_lines(self, codes, betl: bool) -> list[str]:
        cards = sorted((Card.parse(c) for c in codes), key=lambda c: card_key(c, betl))
        out = []
        for s in range(4):
            mine = [c for c in cards if c >> 3 == s]
            if mine:
                out.append(f"{SUIT_SYMBOLS[s]} {self.p.suit(s)}{' ' * (8 - len(SUIT_NAMES[s]))}" + " ".join(self.p.card(c) for c in mine))
        return out

    def game_line(self, view: dict) -> str | None:
        game = view.get("game")
        if game is None:
            return None
        lv = ", ".join(f"{c}{' ' + LEVEL_NAMES[v] if v else ''}" for c, v in (view.get("levels") or {}).items())
        proti = "".join(f" · {g} proti by {self.who(s)}" for g, s in (view.get("proti") or {}).items())
        if game == "barva":
            what = f"„{CONTRACT_WORDS[view['contract']]}“" if view.get("contract") else "„Barva?“"
            trump = view.get("trump")
            where = f" in {self.suit(SUIT_CODES.index(trump))}" if trump and view.get("contract") else ""
            head = f"{what}{where}"
        else:
            head = f"„{game}“"
        return f"game    {head}, actor {self.who(view.get('actor'))}{proti}" + (f" · stakes: {lv}" if lv else "")

    def bidding(self, view: dict) -> list[str]:
        """``view.bids`` (redacted for this seat) in words, told afresh: the whole bidding of the deal so far."""
        told = Screen(self.out, False)
        told.p, told.seat, told.labels = self.p, self.seat, self.labels
        lines = []
        for b in view.get("bids") or []:
            tc = view.get("trump_card") if b["decision"] == "contract" else None
            line = told.action_words(b["seat"], b["decision"], b["action"], tc)
            if line:
                lines.append(line)
        return lines

    def position(self, decision: str, view: dict, full: bool = False) -> list[str]:
        """The status block shown before each choice: only what ``view`` (this seat's) holds;
        ``full`` adds the bidding so far and the tricks played."""
        out = [self.p.bold(f"── {TITLES.get(decision, decision)} ──") + f"  (partie {self.partie} · deal {self.deal})"]
        if full:
            out += [f"bidding {b}" if i == 0 else f"        {b}" for i, b in enumerate(self.bidding(view))]
            for i, t in enumerate(view.get("tricks") or [], 1):
                played = " · ".join(f"{self.who((t['leader'] + k) % 3)} {self.card(c)}" for k, c in enumerate(t["cards"]))
                out.append(f"trick {i:<2} {played}  → {self.who(t['winner'])}")
        taken = self.taken_talon(view) if decision == "talon" else None
        line = self.game_line(view)
        if taken:
            seat, kind, cards = taken
            out.append(f"game    {GAME_WORDS.get(kind, kind)} of {self.who(seat)} is off: you took the talon, "
                       f"you are the actor now (R4.2)")
            out.append(f"talon   {self.cards(cards)} — taken from the talon ({self.who(seat)}'s discards), now in your hand")
        elif line:
            out.append(line)
        tc = view.get("trump_card")
        if tc:
            out.append(f"trump   {self.card(tc)} ({Card.parse(tc).czech})" + (", taken z lidu" if view.get("zlidu") else ""))
        elif view.get("zlidu"):
            out.append("trump   taken z lidu by the forhont (not shown)")
        if view.get("talon"):
            out.append(f"talon   {self.cards(view['talon'])} (your discards)")
        if view.get("hlasky"):
            out.append("hlášky  " + " · ".join(f"{self.who(h['seat'])} {h['points']} {self.suit(SUIT_CODES.index(h['suit']))}"
                                               for h in view["hlasky"]))
        if decision == "play":
            out.append(self.points_line(view))
            table = view.get("trick") or []
            out.append("table   " + (" · ".join(f"{self.who(t['seat'])} {self.card(t['card'])}" for t in table) if table else "— you lead"))
        betl = view.get("game") in ("betl", "durch")
        hand = self.hand_lines(view.get("hand") or [], betl)
        out.append(f"hand    {hand[0] if hand else '—'}")
        out += [f"        {h}" for h in hand[1:]]
        return out

    def taken_talon(self, view: dict):
        """After „špatná“ (R4.2) or „durch“ to a betl (R4.3), at this seat's own talon decision: the
        seat whose discards it took, their game and the two cards; None otherwise."""
        talons = [b for b in view.get("bids") or [] if b["decision"] == "talon"]
        if not talons or talons[-1]["seat"] == self.seat or ":" not in talons[-1]["action"]:
            return None
        kind, cards = talons[-1]["action"].split(":", 1)
        return talons[-1]["seat"], kind, cards.split(",")

    def sync(self, view: dict) -> None:
        """At this seat's own decision: the actor, and the levels of the raising rounds already over (R5.3)."""
        if view.get("actor") is not None:
            self.actor = view["actor"]
        if view.get("phase") == "flek":
            self._levels = dict(view.get("levels") or {})
            side = "actor" if self.seat == self.actor else "defence"
            if side != self._side:
                self._pending, self._side = set(), side
                self._round += 1
