"""What the robot knows, rebuilt from its view alone (the dict a protocol bot receives).

Cards are ints 0..31 (``suit * 8 + rank``, ranks ``7 8 9 X U O K A``) and sets of
cards are 32-bit masks, as in :mod:`referee.rules.cards`.  :class:`Info` parses a view
once per decision and derives everything the play heuristics ask:

* ``unseen``: cards not in the robot's hand, not played, not on the table and not
  in a talon it knows;
* ``known[p]``: cards certainly in player ``p``'s hand: the trump card shown at
  the contract (in the forhont's hand until played), the other half of a hláška
  declared by playing one of its two cards, the trump seven of an announced sedma
  or sedma proti;
* ``possible[p]``: cards ``p`` may hold, narrowed by what the play revealed under
  the follow-and-beat rules (R7.2, R7.3): a player who did not follow suit is void
  in it; one who did not trump when void has no trump; one who followed without
  beating the winning card of that suit holds nothing higher in it;
* ``size[p]``: how many cards ``p`` still holds.

Nothing here reads the engine's state: a view from a log or from the protocol
gives the same knowledge.
"""

from __future__ import annotations

from referee.rules.cards import (
    ACE, HIGHER_BETL, HIGHER_TRUMP, KING, OBER, SEVEN, SUIT_MASKS, TEN, TRUMP_ORDER,
)

CODE = {r + s: si * 8 + ri for si, s in enumerate("hlba") for ri, r in enumerate("789XUOKA")}
NAME = {v: k for k, v in CODE.items()}
SUIT_CODE = {"h": 0, "l": 1, "b": 2, "a": 3}
FULL = (1 << 32) - 1
POINTS = tuple(10 if (c & 7) in (TEN, ACE) else 0 for c in range(32))
AX_MASK = sum(1 << c for c in range(32) if POINTS[c])
SEVENS = sum(1 << (s * 8 + SEVEN) for s in range(4))
ACES = sum(1 << (s * 8 + ACE) for s in range(4))
LOW_MASK = sum(1 << (s * 8 + r) for s in range(4) for r in range(3))  # 7 8 9
#: strength of a card in its suit: trump-game order and betl/durch order
TSTR = tuple(TRUMP_ORDER[c & 7] for c in range(32))
BSTR = tuple(c & 7 for c in range(32))


def mask_of_codes(codes) -> int:
    m = 0
    for c in codes:
        m |= 1 << CODE[c]
    return m


def cards_of(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def count(mask: int) -> int:
    return mask.bit_count()


def hlasky_suits(hand: int) -> list[int]:
    """Suits in which ``hand`` holds both K and O (a hláška)."""
    return [s for s in range(4) if hand >> (s * 8 + KING) & 1 and hand >> (s * 8 + OBER) & 1]


def top_card(mask: int, trump_order: bool) -> int:
    """The strongest card of a single-suit mask (-1 if empty)."""
    best, bs = -1, -1
    strength = TSTR if trump_order else BSTR
    for c in cards_of(mask):
        if strength[c] > bs:
            best, bs = c, strength[c]
    return best


def low_card(mask: int, trump_order: bool) -> int:
    """The weakest card of a mask (by rank strength, ties to the lower suit)."""
    best, bs = -1, 99
    strength = TSTR if trump_order else BSTR
    for c in cards_of(mask):
        if strength[c] < bs:
            best, bs = c, strength[c]
    return best


class Info:
    """The robot's knowledge at one decision (see the module docstring)."""

    __slots__ = (
        "view", "me", "game", "actor", "trump", "hand", "hand_list", "played", "table", "table_seats",
        "unseen", "known", "possible", "size", "talon_known", "partner", "higher", "leader",
        "led_suit", "winner_card", "winner_seat", "tricks_done", "levels", "proti", "contract",
        "hlasky", "points", "pool", "nb",
    )

    def __init__(self, view: dict):
        self.view = view
        me = self.me = view["seat"]
        game = self.game = view.get("game")
        self.actor = view.get("actor")
        self.levels = view.get("levels") or {}
        self.proti = view.get("proti") or {}
        self.contract = view.get("contract")
        self.nb = game in ("betl", "durch")
        t = view.get("trump")
        self.trump = SUIT_CODE[t] if t and game in (None, "barva") else None
        self.hand_list = [CODE[c] for c in view["hand"]]
        hand = 0
        for c in self.hand_list:
            hand |= 1 << c
        self.hand = hand
        self.higher = HIGHER_BETL if self.nb else HIGHER_TRUMP
        talon = view.get("talon")
        self.talon_known = mask_of_codes(talon) if talon else 0
        self.partner = None
        if self.actor is not None and me != self.actor:
            self.partner = 3 - me - self.actor
        self.hlasky = view.get("hlasky") or []
        self.points = view.get("points") or [0, 0, 0]
        # ------------------------------------------------ the play so far
        played = 0
        size = [10, 10, 10]
        known = [0, 0, 0]
        excluded = [0, 0, 0]  # cards a player cannot hold
        trump = self.trump
        higher = self.higher
        tricks = view.get("tricks") or []
        self.tricks_done = len(tricks)
        seq: list[tuple[list[tuple[int, int]], bool]] = [
            ([((tr["leader"] + i) % 3, CODE[c]) for i, c in enumerate(tr["cards"])], True) for tr in tricks
        ]
        cur = [(e["seat"], CODE[e["card"]]) for e in (view.get("trick") or [])]
        seq.append((cur, False))
        decl_half = {}  # (seat, suit) -> the card still held after a declared hláška
        hl_by_play = {(h["seat"], SUIT_CODE[h["suit"]]) for h in self.hlasky}
        for cards, _complete in seq:
            if not cards:
                continue
            led = cards[0][1]
            ls = led >> 3
            win = led
            for i, (seat, c) in enumerate(cards):
                played |= 1 << c
                size[seat] -= 1
                if i > 0:
                    cs = c >> 3
                    if cs != ls:
                        excluded[seat] |= SUIT_MASKS[ls]
                        if trump is not None and cs != trump:
                            excluded[seat] |= SUIT_MASKS[trump]
                        elif trump is not None and cs == trump and (win >> 3) == trump and not (higher[win] >> c & 1):
                            excluded[seat] |= higher[win]
                    elif (win >> 3) == ls and not (higher[win] >> c & 1):
                        excluded[seat] |= higher[win]
                    # the new winning card
                    if (c >> 3) == (win >> 3):
                        if higher[win] >> c & 1:
                            win = c
                    elif trump is not None and (c >> 3) == trump:
                        win = c
                if (c & 7) in (KING, OBER) and (seat, c >> 3) in hl_by_play and (seat, c >> 3) not in decl_half:
                    decl_half[(seat, c >> 3)] = c ^ (KING ^ OBER)
        # a declared hláška: the other card stays in that hand until played
        for (seat, _s), other in decl_half.items():
            if seat != me and not (played >> other & 1):
                known[seat] |= 1 << other
        if self.actor is not None and me != self.actor and game == "barva":
            tc = view.get("trump_card")
            if tc is not None and not (played >> CODE[tc] & 1):
                known[self.actor] |= 1 << CODE[tc]
            if trump is not None and "sedma" in self.levels:
                seven = trump * 8 + SEVEN
                if not (played >> seven & 1):
                    known[self.actor] |= 1 << seven
        if trump is not None and "sedma" in self.proti:
            holder = self.proti["sedma"]
            seven = trump * 8 + SEVEN
            if holder != me and not (played >> seven & 1):
                known[holder] |= 1 << seven
        self.played = played
        self.table = [c for _s, c in cur]
        self.table_seats = [s for s, _c in cur]
        self.size = size
        unseen = FULL & ~hand & ~played & ~self.talon_known
        self.unseen = unseen
        for p in range(3):
            known[p] &= unseen
        all_known = known[0] | known[1] | known[2]
        possible = [0, 0, 0]
        for p in range(3):
            if p == me:
                continue
            possible[p] = (unseen & ~all_known & ~excluded[p]) | known[p]
        possible[me] = hand
        known[me] = hand
        self.known = known
        self.possible = possible
        # the cards nobody is known to hold (possibly in the talon)
        self.pool = unseen & ~all_known
        # the trick in progress
        if cur:
            self.leader = cur[0][0]
            self.led_suit = cur[0][1] >> 3
            w, ws = cur[0][1], cur[0][0]
            for seat, c in cur[1:]:
                if self.beats(c, w):
                    w, ws = c, seat
            self.winner_card, self.winner_seat = w, ws
        else:
            self.leader = me
            self.led_suit = -1
            self.winner_card = self.winner_seat = -1

    # ------------------------------------------------------------ helpers
    def beats(self, a: int, b: int) -> bool:
        """Does card ``a`` beat the winning card ``b``?"""
        if (a >> 3) == (b >> 3):
            return bool(self.higher[b] >> a & 1)
        return self.trump is not None and (a >> 3) == self.trump

    def side(self, seat: int) -> int:
        """0 for the actor, 1 for the defence."""
        return 0 if seat == self.actor else 1

    def same_side(self, a: int, b: int) -> bool:
        return self.side(a) == self.side(b)

    def opponents(self) -> list[int]:
        if self.me == self.actor:
            return [(self.me + 1) % 3, (self.me + 2) % 3]
        return [self.actor]

    def talon_unknown(self) -> int:
        """How many talon cards the robot does not know (0 or 2)."""
        return 0 if self.talon_known else 2

    def holding_prob(self, p: int, point_card: bool = False) -> float:
        """Chance that one given card of the unknown pool lies in ``p``'s hand.

        The talon of a trump game holds no ace or ten (R3.2), so for those cards
        only the other hands share the pool.
        """
        free = [0, 0, 0]
        for s in range(3):
            if s != self.me:
                free[s] = max(0, self.size[s] - count(self.known[s]))
        hands = free[0] + free[1] + free[2]
        pool = hands if point_card and self.game == "barva" else count(self.pool)
        if pool <= 0 or free[p] <= 0:
            return 0.0
        return min(1.0, free[p] / pool)

    def prob_has_any(self, p: int, mask: int) -> float:
        """Approximate chance that ``p`` holds at least one card of ``mask``."""
        if self.known[p] & mask:
            return 1.0
        cand = self.possible[p] & mask
        n = count(cand)
        if n == 0:
            return 0.0
        ax = count(cand & AX_MASK)
        q = self.holding_prob(p)
        if ax and self.game == "barva":
            qa = self.holding_prob(p, True)
            return 1.0 - (1.0 - q) ** (n - ax) * (1.0 - qa) ** ax
        return 1.0 - (1.0 - q) ** n

    def prob_void(self, p: int, suit: int) -> float:
        return 1.0 - self.prob_has_any(p, SUIT_MASKS[suit])

    def prob_beats(self, p: int, win: int, led_suit: int) -> float:
        """Chance that ``p``, to play next, can beat the winning card ``win`` (R7.2/R7.3)."""
        if self.size[p] <= 0:
            return 0.0
        lm = SUIT_MASKS[led_suit]
        trump = self.trump
        if (win >> 3) == led_suit:
            in_suit = self.prob_has_any(p, lm & self.higher[win])
            if trump is None or led_suit == trump:
                return in_suit
            void = self.prob_void(p, led_suit)
            return min(1.0, in_suit + void * self.prob_has_any(p, SUIT_MASKS[trump]))
        # a trump is winning a non-trump lead
        void = self.prob_void(p, led_suit)
        return void * self.prob_has_any(p, SUIT_MASKS[trump] & self.higher[win])

    def sure_top(self, c: int) -> bool:
        """No unseen card of ``c``'s suit beats it."""
        return not (self.unseen & self.higher[c])

    def seat_after(self, k: int) -> int:
        return (self.me + k) % 3
