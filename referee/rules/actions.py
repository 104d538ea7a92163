"""Actions: the small immutable values a player chooses (RULES.md R3–R8).

Every action has one canonical text form used in logs, in the bot protocol and
on the command line.  The vocabulary, by decision kind:

``trump``     ``trump:Ah`` a card of the forhont's first seven; ``trump:zlidu``
              the blind card "z lidu" (R3.1).
``talon``     ``barva:7h,8h`` discard two and ask "Barva?" (a trump game);
              ``betl:7h,8h`` / ``durch:7h,8h`` discard two and announce betl or
              durch (R3.2, R4.2, R4.3).  The two cards are discarded in the order
              named, which matters for the next deck (R2.3).
``answer``    ``dobra`` (agreed), ``spatna`` (on "Barva?": I take the talon),
              ``durch`` (on a betl: I take the talon and play durch) (R4).
``contract``  ``contract:hra``, ``contract:sedma``, ``contract:sto``,
              ``contract:sto-sedma`` (R5.1).
``flek``      ``dobra`` or the components raised one level, e.g.
              ``flek:hra,sedma``; a defender's first answer may also announce
              games against: ``proti:sedma``, ``flek:hra proti:sto`` (R5.2, R5.3).
``play``      ``play:Ah`` play a card; ``lay`` lay the cards down (R8).

Czech terms kept as players use them: *flek* (a raise; the levels are flek, re,
tutti, boty), *barva* ("colour", the trump game), *betl* (take no trick),
*durch* (take every trick), *dobrá*/*špatná* (good/bad: accept/refuse),
*proti* (a game announced against the actor), *z lidu* ("from the people", the
blind trump card).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from .cards import Card, CardError

#: Components that can be raised, in canonical order (R5.1–R5.4).
COMPONENTS = ("hra", "sedma", "sto", "betl", "durch", "sedma-proti", "sto-proti")
CONTRACTS = {
    "hra": ("hra",),
    "sedma": ("hra", "sedma"),
    "sto": ("sto",),
    "sto-sedma": ("sto", "sedma"),
}
PROTI = ("sedma", "sto")
LEVEL_NAMES = ("", "flek", "re", "tutti", "boty")
MAX_LEVEL = 4

GAME_KINDS = ("barva", "betl", "durch")


class ActionError(ValueError):
    """A malformed action; the message names the bad token."""


@dataclass(frozen=True, slots=True)
class Action:
    """One choice.  ``kind`` is one of ``trump zlidu barva betl durch dobra
    spatna contract flek play lay``; ``cards`` the cards it names; ``words``
    the contract name or the components raised; ``proti`` the games against
    announced with it."""

    kind: str
    cards: tuple[Card, ...] = ()
    words: tuple[str, ...] = ()
    proti: tuple[str, ...] = ()
    code: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", _code(self))

    def __str__(self) -> str:
        return self.code

    @property
    def card(self) -> Card:
        return self.cards[0]

    @classmethod
    def parse(cls, text: str) -> "Action":
        return parse_action(text)


def _code(action: Action) -> str:
    """The canonical text, computed once when the action is made."""
    k = action.kind
    if k == "play":
        return "play:" + str(action.cards[0])
    if k == "trump":
        return "trump:" + (str(action.cards[0]) if action.cards else "zlidu")
    if k in GAME_KINDS and action.cards:
        return f"{k}:{action.cards[0]},{action.cards[1]}"
    if k == "contract":
        return "contract:" + action.words[0]
    if k == "flek":
        parts = []
        if action.words:
            parts.append("flek:" + ",".join(action.words))
        if action.proti:
            parts.append("proti:" + ",".join(action.proti))
        return " ".join(parts)
    return k


# ---------------------------------------------------------------- constructors
# Interned so that hot paths (legal-action lists) allocate nothing.

PLAY = tuple(Action("play", (c,)) for c in (Card(i) for i in range(32)))
TRUMP = tuple(Action("trump", (c,)) for c in (Card(i) for i in range(32)))
ZLIDU = Action("trump")
DOBRA = Action("dobra")
SPATNA = Action("spatna")
DURCH_ANSWER = Action("durch")
LAY = Action("lay")
CONTRACT = {name: Action("contract", words=(name,)) for name in CONTRACTS}

#: GAME_TABLE[kind][first][second]: every two-card discard, made once (hot in legal-action lists).
GAME_TABLE: dict[str, list[list[Action | None]]] = {
    kind: [[Action(kind, (Card(a), Card(b))) if a != b else None for b in range(32)] for a in range(32)]
    for kind in GAME_KINDS
}


def game(kind: str, first: int, second: int) -> Action:
    """``barva``/``betl``/``durch`` with two discards, in discard order."""
    a = GAME_TABLE[kind][first][second]
    if a is None:
        raise ActionError(f"the two discards must differ, got {Card(first)} twice")
    return a


@lru_cache(maxsize=None)
def flek(words: tuple[str, ...] = (), proti: tuple[str, ...] = ()) -> Action:
    """A raise: the components raised and the games against announced."""
    if not words and not proti:
        return DOBRA
    words = tuple(sorted(words, key=COMPONENTS.index))
    proti = tuple(sorted(proti, key=PROTI.index))
    return Action("flek", words=words, proti=proti)


def play(card: int) -> Action:
    return PLAY[card]


# ---------------------------------------------------------------- parsing

def _parse_card(token: str, text: str) -> Card:
    try:
        return Card.parse(token)
    except CardError:
        raise ActionError(f"R1.2: malformed card {token!r} in action {text!r}") from None


def parse_action(text: str) -> Action:
    """Parse the canonical text form; raises :class:`ActionError` naming the bad token."""
    if not isinstance(text, str):
        raise ActionError(f"an action is a string, got {type(text).__name__}")
    s = text.strip()
    if s in ("dobra", "spatna", "durch", "lay"):
        return {"dobra": DOBRA, "spatna": SPATNA, "durch": DURCH_ANSWER, "lay": LAY}[s]
    head, sep, rest = s.partition(":")
    if not sep:
        raise ActionError(f"unknown action {s!r}")
    if head == "play":
        return PLAY[_parse_card(rest, s)]
    if head == "trump":
        return ZLIDU if rest == "zlidu" else TRUMP[_parse_card(rest, s)]
    if head in GAME_KINDS:
        tokens = rest.split(",")
        if len(tokens) != 2:
            raise ActionError(f"{head} names exactly two discards, got {rest!r} in {s!r}")
        a, b = (_parse_card(t, s) for t in tokens)
        if a == b:
            raise ActionError(f"the two discards must differ in {s!r}")
        return game(head, a, b)
    if head == "contract":
        if rest not in CONTRACTS:
            raise ActionError(f"unknown contract {rest!r} in {s!r} (hra, sedma, sto, sto-sedma)")
        return CONTRACT[rest]
    if head in ("flek", "proti"):
        words: list[str] = []
        proti: list[str] = []
        for part in s.split():
            h, sep2, r = part.partition(":")
            items = r.split(",") if sep2 else []
            if h == "flek" and sep2 and not words:
                for w in items:
                    if w not in COMPONENTS or w in words:
                        raise ActionError(f"unknown or repeated component {w!r} in {s!r}")
                    words.append(w)
            elif h == "proti" and sep2 and not proti:
                for w in items:
                    if w not in PROTI or w in proti:
                        raise ActionError(f"unknown or repeated game against {w!r} in {s!r}")
                    proti.append(w)
            else:
                raise ActionError(f"unexpected token {part!r} in {s!r}")
        action = flek(tuple(words), tuple(proti))
        if str(action) != s:
            raise ActionError(f"non-canonical raise {s!r}; write it as {str(action)!r}")
        return action
    raise ActionError(f"unknown action {head!r} in {s!r}")
