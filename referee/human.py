"""A person's seat: a :class:`protocol.sdk.Bot` that asks the person at the terminal.

:class:`Human` renders what its seat may know — nothing else reaches it: it
sees only the protocol messages of its seat, which the referee has already
redacted — and reads the person's choice.  It is an ordinary protocol player
(the referee runs it as an in-process seat, :mod:`referee.seat`), so the
person plays under exactly the rules, checks, logs and validation of a match.

The screen is plain lines (no full-screen library; it works over ssh and in a
pipe): the hand sorted by suit with the Czech suit names and symbols (coloured
on a terminal), the trump card once this seat may know it, the bidding in the
game's words (*Barva?*, *dobrá*, *špatná*, *flek*, *re*, *tutti*, *boty*,
*sedma proti* …), the trick on the table, the hlášky, the points, and after
each deal the settlement per component and the running totals.

The legal actions are offered as numbered choices; a card code (``Kh``), a
word (``dobra``, ``flek``, ``betl 7h 8h``) or the action's protocol text work
too.  Anything else is answered with what is allowed: the person is never
charged a fault for a typo.  ``?`` shows the position again; ``quit``, Ctrl-C
or the end of the input stops the match (:class:`PersonLeft`).
"""

from __future__ import annotations

import queue
import re
import shlex
import sys
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from typing import IO

from protocol.sdk import Bot

from .actions import CONTRACTS, LEVEL_NAMES, ActionError, parse_action
from .cards import BETL_ORDER, SUIT_CODES, SUIT_NAMES, TRUMP_ORDER, Card
from .show import CONTRACT_WORDS, ROLE, _Paint, flek_words

#: Suit symbols: the German suits drawn with the French symbols Czech players use for them.
SUIT_SYMBOLS = ("♥", "♠", "♦", "♣")  # červené, zelené, kule, žaludy
GAME_WORDS = {"barva": "„Barva?“", "betl": "„betl“", "durch": "„durch“"}
TALON_HELP = {
    "barva": "a trump game; discard two, but no ace, ten or the trump card",
    "betl": "you will take no trick; discard any two",
    "durch": "you will take every trick; discard any two",
}
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


class PersonLeft(KeyboardInterrupt):
    """The person stopped the game (``quit``, Ctrl-C, or the end of the input).

    A :class:`KeyboardInterrupt`, so that it stops the match wherever it is
    raised: the referee closes the bots and leaves the log without a footer,
    which ``marias validate`` reports as incomplete, never as a result."""


def _norm(text: str) -> str:
    """Input as compared: no accents, lower case, symbols as suit codes, ``10`` as ``x``."""
    s = unicodedata.normalize("NFKD", text)
    s = "".join(ch for ch in s if not unicodedata.combining(ch)).lower()
    for sym, code in zip(SUIT_SYMBOLS, SUIT_CODES):
        s = s.replace(sym, code)
    s = re.sub(r"[\s,;„“\"'.!]+", " ", s).strip()
    return re.sub(r"\b10([hlba])\b", r"x\1", s)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


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


def _card_key(c: Card, betl: bool):
    order = BETL_ORDER if betl else TRUMP_ORDER
    return (c >> 3, -order[c & 7])


@dataclass
class Option:
    """One numbered choice: an action, or (talon) a game kind whose discards are asked next."""

    label: str
    action: str | None = None
    kind: str | None = None
    keys: set[str] = field(default_factory=set)


class _Lines:
    """The person's input, line by line; with a time limit read by a thread so a read can time out."""

    def __init__(self, stream: IO[str], timed: bool):
        self.stream = stream
        self.queue: queue.Queue | None = None
        if timed:
            self.queue = queue.Queue()
            threading.Thread(target=self._pump, daemon=True, name="person-input").start()

    def _pump(self) -> None:
        while True:
            line = self.stream.readline()
            self.queue.put(line)
            if not line:
                return

    def drop_late(self) -> None:
        """Forget lines typed after the last time limit passed (they answered nothing)."""
        while self.queue is not None and not self.queue.empty():
            if self.queue.get_nowait() == "":
                self.queue.put("")  # the end of the input stays
                return

    def read(self, timeout: float | None) -> str | None:
        """One line ("" at the end of the input); None when ``timeout`` seconds passed first."""
        if self.queue is None:
            return self.stream.readline()
        try:
            return self.queue.get(timeout=None if timeout is None else max(0.0, timeout))
        except queue.Empty:
            return None


class Human(Bot):
    """The person at the terminal, as a protocol player (see the module docstring)."""

    name = "person"
    version = "1"

    def __init__(self, inp: IO[str] | None = None, out: IO[str] | None = None, *, color: bool | None = None,
                 move_ms: int | None = None, name: str = "person"):
        self.out = out or sys.stdout
        self.name = name
        self.move_ms = move_ms
        self.lines = _Lines(inp or sys.stdin, timed=move_ms is not None)
        if color is None:
            color = bool(getattr(self.out, "isatty", lambda: False)())
        self.p = _Paint(color)
        self.seat = 0
        self.labels = ["seat 0", "seat 1", "seat 2"]
        self.partie = self.deal = 0
        self.totals = [0, 0, 0]
        self._hand: list[str] = []
        self._legal: list[str] = []
        self.echo = not bool(getattr(inp or sys.stdin, "isatty", lambda: False)())  # show piped input
        self._new_deal(None)

    # ---------------------------------------------------------------- output helpers
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
    def on_partie_start(self, message: dict) -> None:
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
        self.game = None
        self.contract = None
        self.trump_card = None
        self._levels: dict[str, int] = {}
        self._side: str | None = None
        self._pending: set[str] = set()
        self._tricks = 0
        if message is not None:
            self.deal = message["deal"]
            self.forhont = message["forhont"]
            self.totals = list(message.get("totals") or self.totals)

    def on_deal_start(self, message: dict) -> None:
        self._new_deal(message)
        f = message["forhont"]
        roles = " · ".join(f"{ROLE[r]} {self.who((f + r) % 3)}" for r in range(3))
        cut = message.get("cut")
        self.say("")
        self.say(self.p.bold(f"━━ partie {self.partie} · deal {self.deal} ━━") + f"  {roles}"
                 + (f" · cut {cut}" if cut is not None else ""))
        self.say(f"groše so far: {self.money(self.totals)}")

    def on_event(self, message: dict) -> None:
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
            self.actor, self.game = seat, kind
            if a is not None and a.cards:
                return f"{who}: discards {self.cards([str(c) for c in a.cards])} — {GAME_WORDS[kind]}"
            return f"{who}: discards two cards — {GAME_WORDS.get(kind, kind)}"
        if decision == "answer":
            word, _ = ANSWER_WORDS.get(text, (text, ""))
            return f"{who}: {word}" + (" — takes the talon" if text in ("spatna", "durch") else "")
        if decision == "contract":
            self.contract = text.split(":")[1]
            self.trump_card = trump_card or self.trump_card
            shown = ""
            if self.trump_card:
                s = Card.parse(self.trump_card) >> 3
                shown = f" — shows the trump card {self.card(self.trump_card)}: trumps are {self.suit(s)}"
            return f"{who}: „{CONTRACT_WORDS.get(self.contract, self.contract)}“{shown}"
        if decision == "flek":
            return f"{who}: „{self._flek_text(seat, a)}“"
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
        if a is None or a.kind != "flek":
            return "dobrá"
        text = flek_words(a.words, a.proti, self._levels)
        self._pending |= set(a.words)
        return text

    def on_deal_end(self, message: dict) -> None:
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

    def on_partie_end(self, message: dict) -> None:
        totals, places = message.get("totals") or self.totals, message.get("places") or [0, 0, 0]
        self.say("")
        self.say(self.p.bold(f"══ partie {message.get('partie')} is over ══"))
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
        cards = sorted((Card.parse(c) for c in codes), key=lambda c: _card_key(c, betl))
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

    def position(self, decision: str, view: dict) -> list[str]:
        """The status block shown before each choice: only what ``view`` (this seat's) holds."""
        out = [self.p.bold(f"── {TITLES.get(decision, decision)} ──") + f"  (partie {self.partie} · deal {self.deal})"]
        line = self.game_line(view)
        if line:
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

    # ---------------------------------------------------------------- the choice
    def menu(self, decision: str, view: dict, legal: list[str]) -> list[Option]:
        """The numbered choices for ``legal`` (talon: one per game kind)."""
        betl = view.get("game") in ("betl", "durch")
        if decision == "talon":
            kinds = [k for k in ("barva", "betl", "durch") if any(a.startswith(k + ":") for a in legal)]
            return [Option(f"{GAME_WORDS[k]} — {TALON_HELP[k]}", kind=k, keys={k}) for k in kinds]
        opts: list[Option] = []
        if decision in ("trump", "play"):
            cards = sorted((a for a in legal if a.count(":") == 1 and a.split(":")[1] != "zlidu"),
                           key=lambda a: _card_key(Card.parse(a.split(":")[1]), betl))
            for a in cards:
                code = a.split(":")[1]
                opts.append(Option(self.card(code), a, keys={code}))
            if "trump:zlidu" in legal:
                opts.append(Option("z lidu — the 8th card, blind", "trump:zlidu", keys={"zlidu", "z lidu"}))
            if "lay" in legal:
                opts.append(Option("lay the cards down (R8: the rest of the play cannot change the result)", "lay",
                                   keys={"lay", "lay down", "vylozit"}))
            return opts
        for a in legal:
            if decision == "answer":
                word, why = ANSWER_WORDS.get(a, (a, ""))
                opts.append(Option(f"{word} — {why}", a, keys={a}))
            elif decision == "contract":
                name = a.split(":")[1]
                parts = " + ".join(CONTRACTS[name])
                opts.append(Option(f"„{CONTRACT_WORDS[name]}“ ({parts})", a,
                                   keys={name, CONTRACT_WORDS[name], name.replace("-", " ")}))
            elif decision == "flek":
                act = parse_action(a)
                levels = view.get("levels") or {}
                if act.kind != "flek":
                    opts.append(Option("„dobrá“ — no raise", a, keys={"dobra"}))
                    continue
                words = flek_words(act.words, act.proti, levels)
                keys = {words}
                raised = {LEVEL_NAMES[min(levels.get(w, 0) + 1, 4)] for w in act.words}
                if len(raised) == 1 and not act.proti:
                    keys.add(raised.pop())  # "flek", "re" … alone (ambiguous ones are refused)
                opts.append(Option(f"„{words}“", a, keys=keys))
            else:
                opts.append(Option(a, a))
        return opts

    def resolve(self, text: str, decision: str, menu: list[Option], legal: list[str]):
        """The person's line → (action, None), (None, talon kind), or (None, None) with a message printed."""
        n = _norm(text)
        if n.isdigit():
            i = int(n)
            if 1 <= i <= len(menu):
                o = menu[i - 1]
                return o.action, o.kind
            self.say(f"  there is no choice {i}: choose 1–{len(menu)}")
            return None, None
        found: dict[str, list[Option]] = {}
        for o in menu:
            for k in o.keys | ({o.action, o.action.replace(":", " ")} if o.action else set()):
                found.setdefault(_norm(k), []).append(o)
        for a in legal:  # the protocol's own text of any legal action
            found.setdefault(_norm(a), [Option(a, a)])
        if decision == "talon":
            got = self._talon_line(n, menu, legal)
            if got is not None:
                return got
        hits = {id(o): o for o in found.get(n, [])}
        if len(hits) == 1:
            o = next(iter(hits.values()))
            return o.action, o.kind
        if len(hits) > 1:
            self.say(f"  „{text.strip()}“ could mean " + " or ".join(f"{menu.index(o) + 1}) {o.label}" for o in hits.values() if o in menu))
            return None, None
        hand = {_norm(c): c for c in self._hand}
        if decision == "play" and n in hand:
            self.say(f"  {self.card(hand[n])} may not be played now (R7: follow suit, beat the trick, trump when void).")
        else:
            self.say(f"  „{text.strip()}“ is not allowed here.")
        self.show_menu(decision, menu)
        return None, None

    def _talon_line(self, n: str, menu: list[Option], legal: list[str]):
        """``betl 7h 8h``, ``2 7h 8h`` or ``7h 8h`` (when one game is offered) in one line."""
        tokens = n.split()
        if ":" in n:
            return None
        if len(tokens) == 3:
            head = tokens[0]
            if head.isdigit() and 1 <= int(head) <= len(menu):
                head = menu[int(head) - 1].kind
            if head in ("barva", "betl", "durch"):
                return self._discard(head, tokens[1:], legal)
        if len(tokens) == 2 and len(menu) == 1:
            return self._discard(menu[0].kind, tokens, legal)
        return None

    def _discard(self, kind: str, tokens: list[str], legal: list[str]):
        """The talon action for two typed cards, or (None, kind) after saying why they will not do."""
        by_norm = {_norm(str(c)): str(c) for c in (Card(i) for i in range(32))}
        codes = [by_norm.get(t) for t in tokens]
        if len(codes) != 2 or None in codes:
            self.say(f"  name two cards, such as {self._example(kind, legal)}")
            return None, kind
        action = f"{kind}:{codes[0]},{codes[1]}"
        if action in legal:
            return action, None
        if not any(a.startswith(kind + ":") for a in legal):
            self.say(f"  {GAME_WORDS[kind]} is not offered now")
            return None, None
        allowed = {c for a in legal if a.startswith(kind + ":") for c in a.split(":")[1].split(",")}
        bad = [c for c in codes if c not in allowed]
        if codes[0] == codes[1]:
            self.say("  two different cards, please")
        elif bad:
            self.say(f"  {' '.join(self.card(c) for c in bad)} may not be discarded for {GAME_WORDS[kind]}"
                     f" ({TALON_HELP[kind]}); you may discard: {self.cards(sorted(allowed, key=lambda c: _card_key(Card.parse(c), False)))}")
        else:
            self.say(f"  {' '.join(codes)} cannot be discarded for {GAME_WORDS[kind]}")
        return None, kind

    @staticmethod
    def _example(kind: str, legal: list[str]) -> str:
        for a in legal:
            if a.startswith(kind + ":"):
                return " ".join(a.split(":")[1].split(","))
        return "7h 8h"

    def show_menu(self, decision: str, menu: list[Option]) -> None:
        row: list[str] = []  # short choices (cards) share a line, in order; long ones get their own
        for i, o in enumerate(menu, 1):
            item = f"{i}) {o.label}"
            if len(_ANSI.sub("", o.label)) < 14:
                row.append(item)
                continue
            if row:
                self.say("  " + "   ".join(row))
                row = []
            self.say("  " + item)
        if row:
            self.say("  " + "   ".join(row))
        if decision in ("play", "trump"):
            hint = f"a number or a card code such as {menu[0].action.split(':')[1]}"
        elif decision == "talon":
            hint = "a number, or the game and two cards: " + menu[0].kind + " " + self._example(menu[0].kind, self._legal)
        else:
            hint = "a number or the word"
        self.say(f"  (type {hint}; ? shows the position again; quit ends the game)")

    def choose(self, view: dict, legal: list[str]) -> str:
        decision = view.get("phase") or ""
        self._hand = list(view.get("hand") or [])
        self._legal = legal
        if view.get("actor") is not None:
            self.actor = view["actor"]
        if decision == "flek":  # the view holds the levels of the rounds already over (R5.3)
            self._levels = dict(view.get("levels") or {})
            side = "actor" if self.seat == self.actor else "defence"
            if side != self._side:
                self._pending, self._side = set(), side
        deadline = time.monotonic() + self.move_ms / 1000 if self.move_ms is not None else None
        self.lines.drop_late()
        for line in [""] + self.position(decision, view):
            self.say(line)
        if self.move_ms is not None:
            self.say(f"  you have {self.move_ms / 1000:g} s for this choice (--move-time)")
        menu = self.menu(decision, view, legal)
        self.show_menu(decision, menu)
        kind = None
        while True:
            prompt = f"discard two cards for {GAME_WORDS[kind]} (e.g. {self._example(kind, legal)}; back for the choices)" if kind else "your choice"
            self.out.write(f"{prompt}> ")
            self.out.flush()
            raw = self.lines.read(None if deadline is None else deadline - time.monotonic() + 0.05)
            if raw is None:
                self.say("\n  time is up (--move-time): the referee charges a timeout")
                return legal[0]
            if raw == "":
                self.say("")
                raise PersonLeft("end of input")
            if self.echo:
                self.say(raw.rstrip("\n"))
            n = _norm(raw)
            if not n:
                continue
            if n in ("quit", "exit", "konec"):
                raise PersonLeft("quit")
            if n in ("?", "help", "h"):
                for line in self.position(decision, view):
                    self.say(line)
                self.show_menu(decision, menu)
                continue
            if kind is not None:
                if n == "back":
                    kind = None
                    self.show_menu(decision, menu)
                    continue
                tokens = n.split()
                if len(tokens) == 2 and ":" not in n:
                    action, new_kind = self._discard(kind, tokens, legal)
                else:
                    action, new_kind = self.resolve(raw, decision, menu, legal)
            else:
                action, new_kind = self.resolve(raw, decision, menu, legal)
            if action is not None and action in legal:
                return action
            if new_kind is not None:
                kind = new_kind
