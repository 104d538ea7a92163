"""A person's seat: a :class:`protocol.sdk.Bot` that asks the person at the terminal.

:class:`Human` is an ordinary protocol player (the referee runs it as an
in-process seat, :mod:`referee.seats.seat`), so the person plays under exactly the
rules, checks, logs and validation of a match.  It shows what its seat may
know through :class:`referee.people.screen.Screen` — nothing else reaches it: it sees
only the protocol messages of its seat, which the referee has already
redacted — and reads the person's choice.

The legal actions are offered as numbered choices; a card code (``Kh``,
``10h``, ``K♥``), a word (``dobra``, ``špatná``, ``flek``, ``sedma proti``),
the game and two cards for the talon (``betl 7h 8h``) or the action's protocol
text work too.  Anything else is answered with what is allowed: the person is
never charged a fault for a typo.  ``?`` shows the position again; ``quit``,
Ctrl-C or the end of the input stops the match (:class:`PersonLeft`).
"""

from __future__ import annotations

import queue
import re
import sys
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from typing import IO

from protocol.sdk import Bot

from ..rules.actions import CONTRACTS, LEVEL_NAMES, parse_action
from ..rules.cards import SUIT_CODES, Card
from ..rules.deal import Deal
from .screen import ANSI, ANSWER_WORDS, GAME_WORDS, SUIT_SYMBOLS, Screen, card_key
from ..logs.show import CONTRACT_WORDS, flek_words

TALON_HELP = {
    "barva": "a trump game; discard two, but no ace, ten or the trump card",
    "betl": "you will take no trick; discard any two",
    "durch": "you will take every trick; discard any two",
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
        self.screen = Screen(self.out, color)
        self.say = self.screen.say
        self.echo = not bool(getattr(inp or sys.stdin, "isatty", lambda: False)())  # show piped input
        self._hand: list[str] = []
        self._legal: list[str] = []
        self._view: dict = {}

    # ---------------------------------------------------------------- what the seat is told
    def on_partie_start(self, message: dict) -> None:
        self.screen.partie_start(message)

    def on_deal_start(self, message: dict) -> None:
        self.screen.deal_start(message)

    def on_event(self, message: dict) -> None:
        self.screen.event(message)

    def on_deal_end(self, message: dict) -> None:
        self.screen.deal_end(message)

    def on_partie_end(self, message: dict) -> None:
        self.screen.partie_end(message)

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
                           key=lambda a: card_key(Card.parse(a.split(":")[1]), betl))
            for a in cards:
                code = a.split(":")[1]
                opts.append(Option(self.screen.card(code), a, keys={code}))
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
            rule = Deal.card_rule(self._view, hand[n]) or "R7: follow suit, beat the trick, trump when void"
            self.say(f"  {self.screen.card(hand[n])} may not be played now ({rule}).")
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
            self.say(f"  {' '.join(self.screen.card(c) for c in bad)} may not be discarded for {GAME_WORDS[kind]}"
                     f" ({TALON_HELP[kind]}); you may discard: {self.screen.cards(sorted(allowed, key=lambda c: card_key(Card.parse(c), False)))}")
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
            if len(ANSI.sub("", o.label)) < 14:
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
        self._view = view
        self.screen.sync(view)
        deadline = time.monotonic() + self.move_ms / 1000 if self.move_ms is not None else None
        self.lines.drop_late()
        for line in [""] + self.screen.position(decision, view):
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
                for line in self.screen.position(decision, view, full=True):
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
                elif len(tokens) == 1 and ":" not in n and not (n.isdigit() and 1 <= int(n) <= len(menu)
                                                                 and menu[int(n) - 1].kind != kind) \
                        and n not in {_norm(k) for o in menu if o.kind != kind for k in o.keys}:
                    now = f" ({GAME_WORDS[kind]} is chosen already)" if n.isdigit() or n == kind else ""
                    self.say(f"  „{raw.strip()}“{now}: name two cards to discard for {GAME_WORDS[kind]}, such as "
                             f"{self._example(kind, legal)} ({TALON_HELP[kind]}); a number chooses another game "
                             f"(1–{len(menu)}), back shows the choices")
                    continue
                else:
                    action, new_kind = self.resolve(raw, decision, menu, legal)
            else:
                action, new_kind = self.resolve(raw, decision, menu, legal)
            if action is not None and action in legal:
                return action
            if new_kind is not None:
                kind = new_kind
