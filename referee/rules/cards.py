"""Cards, suits, ranks and their orders (RULES.md R1).

A card is a small immutable value: an ``int`` 0..31 (``suit * 8 + rank``) with a
readable face.  Being an ``int`` keeps hands cheap as 32-bit masks
(``1 << card``) while ``str(card)`` gives the canonical two-character code of
R1.2 (rank then suit, e.g. ``Ah`` červené eso, ``7l`` zelená sedma).

Ranks in code order ``7 8 9 X U O K A`` (X ten, U spodek, O svršek); suits
``h`` červené (hearts), ``l`` zelené (leaves), ``b`` kule (bells),
``a`` žaludy (acorns).  Two orders exist within a suit (R1.3): the trump-game
order, where the ten sits between the king and the ace, and the betl/durch
order, which is the code order.
"""

from __future__ import annotations

from typing import Iterable

RANK_CODES = "789XUOKA"
SUIT_CODES = "hlba"

SUIT_NAMES = ("červené", "zelené", "kule", "žaludy")
SUIT_NAMES_ASCII = ("cervene", "zelene", "kule", "zaludy")
RANK_NAMES = ("sedma", "osma", "devítka", "desítka", "spodek", "svršek", "král", "eso")

HEARTS, LEAVES, BELLS, ACORNS = 0, 1, 2, 3
SEVEN, EIGHT, NINE, TEN, UNTER, OBER, KING, ACE = range(8)

# Strength of a rank inside its suit (R1.3); higher beats lower.
TRUMP_ORDER = (0, 1, 2, 6, 3, 4, 5, 7)  # 7 8 9 U O K X A
BETL_ORDER = (0, 1, 2, 3, 4, 5, 6, 7)   # 7 8 9 X U O K A

FULL_MASK = (1 << 32) - 1
SUIT_MASKS = tuple(0xFF << (8 * s) for s in range(4))


class CardError(ValueError):
    """A malformed card code (R1.2); the message names the bad token."""


class Card(int):
    """One of the 32 cards; ``Card.parse("Ah")``, ``str(card) == "Ah"``."""

    __slots__ = ()

    def __new__(cls, value: int) -> "Card":
        if not 0 <= value < 32:
            raise CardError(f"R1.2: no card has index {value!r}")
        return _CARDS[value] if _CARDS else int.__new__(cls, value)

    @classmethod
    def make(cls, rank: int, suit: int) -> "Card":
        return _CARDS[suit * 8 + rank]

    @classmethod
    def parse(cls, code: str) -> "Card":
        card = _BY_CODE.get(code) if isinstance(code, str) else None
        if card is None:
            raise CardError(f"R1.2: malformed card code {code!r} (expected rank 7 8 9 X U O K A then suit h l b a, e.g. 'Ah')")
        return card

    @property
    def suit(self) -> int:
        return self >> 3

    @property
    def rank(self) -> int:
        return self & 7

    @property
    def bit(self) -> int:
        return 1 << self

    @property
    def points(self) -> int:
        """R1.4: aces and tens are worth 10, everything else 0."""
        return 10 if (self & 7) in (TEN, ACE) else 0

    @property
    def czech(self) -> str:
        return f"{SUIT_NAMES[self >> 3]} {RANK_NAMES[self & 7]}"

    def __str__(self) -> str:
        return _CODES[self]

    def __repr__(self) -> str:
        return f"Card({_CODES[self]})"

    def __format__(self, spec: str) -> str:
        return format(_CODES[self], spec)


_CARDS: list[Card] = []
_CARDS.extend(int.__new__(Card, i) for i in range(32))
_CODES = tuple(RANK_CODES[i & 7] + SUIT_CODES[i >> 3] for i in range(32))
_BY_CODE = {code: _CARDS[i] for i, code in enumerate(_CODES)}
CARDS: tuple[Card, ...] = tuple(_CARDS)
#: Each card by its code (``"Kh"`` -> the heart king).
CARD_BY_CODE: dict[str, Card] = dict(_BY_CODE)
CARD_POINTS = tuple(c.points for c in CARDS)
POINT_CARDS_MASK = sum(1 << c for c in CARDS if c.points)

# higher[c]: the cards of c's suit that beat c, in each order.
HIGHER_TRUMP = tuple(
    sum(1 << (c & ~7 | r) for r in range(8) if TRUMP_ORDER[r] > TRUMP_ORDER[c & 7]) for c in range(32)
)
HIGHER_BETL = tuple(
    sum(1 << (c & ~7 | r) for r in range(8) if BETL_ORDER[r] > BETL_ORDER[c & 7]) for c in range(32)
)


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse codes separated by spaces or commas (or an iterable of codes)."""
    if isinstance(text, str):
        tokens = [t for t in text.replace(",", " ").split() if t]
    else:
        tokens = list(text)
    return [Card.parse(t) for t in tokens]


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(_CODES[c] for c in cards)


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m






def beats(a: int, b: int, trump: int | None) -> bool:
    """Does card ``a`` beat card ``b`` when ``b`` was winning so far?

    ``trump`` is the trump suit, or ``None`` in betl and durch (R1.3).
    """
    if trump is None:
        return (a >> 3) == (b >> 3) and (a & 7) > (b & 7)
    if (a >> 3) == (b >> 3):
        return TRUMP_ORDER[a & 7] > TRUMP_ORDER[b & 7]
    return (a >> 3) == trump




def parse_deck(text: str | Iterable[str]) -> list[Card]:
    """A full 32-card order, top card first; every card exactly once."""
    cards = parse_cards(text)
    if len(cards) != 32 or len(set(cards)) != 32:
        missing = [str(c) for c in CARDS if c not in set(cards)]
        seen: set[int] = set()
        dupes = sorted({str(c) for c in cards if c in seen or seen.add(c)})
        raise CardError(
            f"R1.1: a deck needs each of the 32 cards exactly once; got {len(cards)} cards"
            + (f", missing {' '.join(missing)}" if missing else "")
            + (f", repeated {' '.join(dupes)}" if dupes else "")
        )
    return cards
