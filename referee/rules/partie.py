"""A partie: 12 deals, the dealer moving clockwise, the deck shuffled only before the
first deal and afterwards collected, cut and dealt as at a real table (R2).

Shuffles and cuts come from a cryptographic generator keyed by the partie's seed
(HMAC-SHA256 in counter mode, protocol/LOGS.md "Seeds"): seeing cards reveals
neither the seed nor the cuts to come, and anyone can re-derive every deck and
cut from a logged seed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from dataclasses import dataclass
from typing import Callable, Iterator

from . import settle
from .cards import CARDS, Card
from .deal import Deal

DEALS_PER_PARTIE = 12
CUT_RANGE = (2, 30)
SEED_BITS = 128
_EIGHT_UINT32 = struct.Struct(">8I")  # an HMAC-SHA256 block, read as big-endian unsigned integers


def new_seed() -> str:
    """A fresh secret match seed: 128 bits from the operating system, as 32 hex digits."""
    return secrets.token_hex(SEED_BITS // 8)


def seed_bytes(seed: int | str) -> bytes:
    """The HMAC key of a seed: the UTF-8 bytes of its text (``7`` and ``"7"`` are the same seed)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise TypeError(f"a seed is a whole number or a string, got {type(seed).__name__}")
    return str(seed).encode("utf-8")


def seed_sha256(seed: int | str) -> str:
    """The commitment to a seed: the SHA-256 (hex) of :func:`seed_bytes`."""
    return hashlib.sha256(seed_bytes(seed)).hexdigest()


def partie_seed(match_seed: int | str, n: int) -> str:
    """The seed of partie ``n`` (from 1) of a match: ``"<match seed>:<n>"``."""
    return f"{match_seed}:{n}"


def derive_seed(seed: int | str, label: str) -> str:
    """A seed derived one-way from ``seed`` (for a built-in bot, a tournament unit, ...):
    the first 32 hex digits of HMAC-SHA256(key = the seed, message = ``"marias/derive/" + label``).
    Knowing it reveals nothing of ``seed``."""
    mac = hmac.new(seed_bytes(seed), ("marias/derive/" + label).encode("utf-8"), hashlib.sha256)
    return mac.hexdigest()[:32]


class SeedStream:
    """Unbiased integers from HMAC-SHA256 in counter mode.

    Block ``c`` (c = 0, 1, ...) is HMAC-SHA256(key, label || 0x00 || c as 4 bytes big-endian);
    the blocks are read in order as 4-byte big-endian unsigned integers.
    """

    def __init__(self, key: bytes, label: str):
        self._key = key
        self._label = label.encode("ascii") + b"\x00"
        self._counter = 0
        self._block: tuple[int, ...] = ()  # the current block as 8 integers
        self._pos = 0

    def _next_block(self) -> None:
        digest = hmac.digest(self._key, self._label + self._counter.to_bytes(4, "big"), "sha256")
        self._block = _EIGHT_UINT32.unpack(digest)
        self._counter += 1
        self._pos = 0

    def uint32(self) -> int:
        if self._pos == len(self._block):
            self._next_block()
        x = self._block[self._pos]
        self._pos += 1
        return x

    def below(self, n: int) -> int:
        """A uniform integer in 0..n-1 (1 <= n <= 2**32): draws of 2**32 mod n
        or more below 2**32 are rejected, so every residue is equally likely."""
        if not 1 <= n <= 1 << 32:
            raise ValueError(f"n={n} out of range")
        limit = (1 << 32) - (1 << 32) % n
        while True:
            if self._pos == len(self._block):  # uint32(), inlined: a shuffle draws 31 times
                self._next_block()
            x = self._block[self._pos]
            self._pos += 1
            if x < limit:
                return x % n


def shuffled_deck(seed: int | str | None) -> list[Card]:
    """R2.2: a uniform shuffle from the partie's seed (top card first).

    Fisher-Yates from the card order of :data:`CARDS` (7h 8h ... Ah 7l ... Aa): for
    i = 31 down to 1 swap positions i and j = below(i + 1) of the stream labelled
    ``marias/shuffle``.  ``None``: a fresh secret seed.
    """
    if seed is None:
        seed = new_seed()
    deck = list(CARDS)
    stream = SeedStream(seed_bytes(seed), "marias/shuffle")
    for i in range(len(deck) - 1, 0, -1):
        j = stream.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def seeded_cut(seed: int | str, deal: int) -> int:
    """R2.5: the cut k before deal ``deal`` (2..12) of the partie with this seed:
    2 + below(29) of the stream labelled ``marias/cut/<deal>``."""
    if deal < 2:
        raise ValueError("deal 1 is not cut (R2.5)")
    lo, hi = CUT_RANGE
    return lo + SeedStream(seed_bytes(seed), f"marias/cut/{deal}").below(hi - lo + 1)


def forhont_of(deal_index: int) -> int:
    """R2.1: seat 0 is the forhont of deal 1 (index 0); the forhont moves clockwise."""
    return deal_index % 3


def cut(deck: list[Card], k: int) -> list[Card]:
    """R2.5: lift k cards from the top and put them under the rest."""
    lo, hi = CUT_RANGE
    if not lo <= k <= hi:
        raise ValueError(f"R2.5: the cut must leave at least two cards on each side: k={k} not in {lo}..{hi}")
    return deck[k:] + deck[:k]


def deck_from_hands(hands, forhont: int = 0) -> list[Card]:
    """The deck (top card first) that deals ``hands`` to the seats: the inverse of R2.6.

    ``hands`` maps each seat (0, 1, 2) to its cards in hand order, as card codes
    (``"Ah"``), :class:`Card` values or one string of codes; the forhont holds 12
    cards, the others 10.  Blocks of 7-5-5-5-5-5 are laid out forhont, middle,
    dealer, forhont, middle, dealer, so ``Deal(deck_from_hands(h, f), f).hands == h``.
    """
    def cards_of(value) -> list[Card]:
        if isinstance(value, str):
            value = value.replace(",", " ").split()
        return [c if isinstance(c, Card) else Card.parse(c) if isinstance(c, str) else Card(c) for c in value]

    by_seat = {int(s): cards_of(h) for s, h in (hands.items() if isinstance(hands, dict) else enumerate(hands))}
    if sorted(by_seat) != [0, 1, 2]:
        raise ValueError(f"R1.5: hands for seats 0, 1 and 2 are needed, got seats {sorted(by_seat)}")
    order = (forhont % 3, (forhont + 1) % 3, (forhont + 2) % 3)
    for seat in order:
        want = 12 if seat == order[0] else 10
        if len(by_seat[seat]) != want:
            raise ValueError(f"R2.6: seat {seat} must hold {want} cards, got {len(by_seat[seat])}")
    deck: list[Card] = []
    taken = {s: 0 for s in order}
    for block, size in enumerate((7, 5, 5, 5, 5, 5)):
        seat = order[block % 3]
        deck.extend(by_seat[seat][taken[seat]:taken[seat] + size])
        taken[seat] += size
    if len(set(deck)) != 32:
        seen: set[int] = set()
        dupes = sorted({str(c) for c in deck if c in seen or seen.add(c)})
        raise ValueError(f"R1.1: the hands must hold each of the 32 cards once; repeated {' '.join(dupes)}")
    return deck


def next_deck(finished: Deal, k: int) -> list[Card]:
    """R2.3–R2.5: collect the finished deal's piles and cut k."""
    return cut(finished.collected_deck(), k)


class Partie:
    """Twelve deals.  Start from a seed (shuffled deck) or from a given deck order.

    The cut before each later deal follows from the partie's seed (:func:`seeded_cut`;
    a fresh secret seed when none is given), unless supplied by the caller of
    :meth:`next_deal`.
    """

    def __init__(self, deck: list[int] | None = None, *, seed: int | str | None = None,
                 deals: int = DEALS_PER_PARTIE):
        self.seed = new_seed() if seed is None else seed
        if deck is None:
            deck = shuffled_deck(self.seed)
        self.initial_deck: list[Card] = [c if c.__class__ is Card else Card(c) for c in deck]  # (Card() checks the range)
        self.n_deals = deals
        self.deals: list[Deal] = []
        self.cuts: list[int | None] = []
        self.current: Deal | None = None

    @property
    def done(self) -> bool:
        if self.forfeited is not None:
            return True
        return len(self.deals) == self.n_deals and (self.current is None or self.current.done)

    def draw_cut(self) -> int:
        """The seeded cut before the next deal."""
        return seeded_cut(self.seed, len(self.deals) + 1)

    def next_deal(self, k: int | None = None) -> Deal:
        """Start the next deal (after the previous one is finished)."""
        if self.current is not None and not self.current.done:
            raise ValueError("the current deal is not finished")
        index = len(self.deals)
        if index >= self.n_deals or self.forfeited is not None:
            raise ValueError("the partie is over")
        if index == 0:
            deck = self.initial_deck
            k = None
        else:
            if k is None:
                k = self.draw_cut()
            deck = next_deck(self.deals[-1], k)
        deal = Deal(deck, forhont_of(index))
        self.deals.append(deal)
        self.cuts.append(k)
        self.current = deal
        return deal

    def totals(self) -> list[int]:
        t = [0, 0, 0]
        for d in self.deals:
            if d.result:
                for s in range(3):
                    t[s] += d.result.payments[s]
        if self.forfeited is not None:
            for s in range(3):
                t[s] += self.forfeited.totals[s]
        return t

    def places(self) -> list[float]:
        return places(self.totals())

    def play(self, choose: Callable[[Deal], object]) -> "Partie":
        """Play every deal in-process, ``choose(deal)`` giving the action for ``deal.to_move``."""
        for _ in self.iter_deals():
            d = self.current
            while not d.done:
                d.apply(choose(d))
        return self

    def iter_deals(self) -> Iterator[Deal]:
        while len(self.deals) < self.n_deals and self.forfeited is None:
            yield self.next_deal()

    #: Set by :meth:`forfeit`: who forfeited the rest of the partie, from which deal, and what it paid.
    forfeited: "Forfeit | None" = None

    def forfeit(self, seat: int) -> "Forfeit":
        """R12.3: ``seat`` forfeits the rest of the partie (after its last allowed fault, in the
        deal just finished).  No further deal is dealt or played; each remaining deal is settled
        as a fault by ``seat`` before a contract (R12.2), and :meth:`totals` include it."""
        if self.forfeited is not None:
            raise ValueError(f"R12.3: seat {self.forfeited.seat} has forfeited this partie already")
        if self.current is not None and not self.current.done:
            raise ValueError("R12.3: a partie is forfeited between deals, not in the middle of one")
        if seat not in (0, 1, 2):
            raise ValueError(f"R1.5: seats are 0, 1 and 2, not {seat!r}")
        remaining = self.n_deals - len(self.deals)
        if remaining <= 0:
            raise ValueError("R12.3: the partie is over; nothing is left to forfeit")
        each = settle.fault_before_contract(seat)
        self.forfeited = Forfeit(seat, len(self.deals) + 1, (each,) * remaining)
        return self.forfeited


@dataclass(frozen=True)
class Forfeit:
    """R12.3: ``seat`` forfeited a partie from deal ``from_deal`` (1-based, the first deal not
    played); ``payments`` holds the R12.2 settlement of each deal it could not play."""

    seat: int
    from_deal: int
    payments: tuple[tuple[int, int, int], ...]

    @property
    def deals(self) -> int:
        """How many deals were forfeited."""
        return len(self.payments)

    @property
    def totals(self) -> list[int]:
        """What the forfeited deals paid each seat, together."""
        return [sum(p[s] for p in self.payments) for s in range(3)]


def places(totals: list[int]) -> list[float]:
    """R9.7: most groše first; equal totals share the place (the mean of the shared ranks)."""
    out = []
    for t in totals:
        better = sum(1 for u in totals if u > t)
        equal = sum(1 for u in totals if u == t)
        out.append(better + (equal + 1) / 2)
    return out
