"""Worlds for the ``search`` bot: deals consistent with everything a seat knows.

:class:`Knowledge` reads a view (the dict a protocol bot receives, nothing
else) and derives, for each other seat and for the talon, which cards it must
hold and which it may hold:

* the robot's card counting (:class:`bots.robot_info.Info`): own hand, cards
  played, voids and "could not beat" from the follow-and-beat rules (R7.2,
  R7.3), the trump card once shown, the other half of a declared hláška, the
  trump seven of whoever announced sedma or sedma proti;
* a K or O played without a declaration: its partner was not in that hand (R7.5);
* a hláška in the hand of whoever announced sto or sto proti and has declared
  none yet (R5.1, R5.2: he held K and O of one suit, and playing either would
  have declared it);
* the own talon, and the talon of a trump game holding no ace, ten or the trump
  card (R3.2); cards this seat discarded earlier and somebody took are only with
  the takers or in the final talon.

:func:`sample` deals the unseen cards into the other hands and the unknown
talon under those constraints (most constrained card first, each slot weighted
by its free room), so every world agrees with the view.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from referee.rules.cards import KING, OBER, SEVEN

from .robot_info import AX_MASK, CODE, SUIT_CODE, Info, cards_of

TALON = 3  # the talon's slot number next to the seats 0, 1, 2


@dataclass
class Constraints:
    """What :func:`sample` must respect: for slots 0..2 (seats) and 3 (the talon)
    the cards each must hold (``known``), may hold (``possible``, a superset) and
    how many it holds (``size``); ``pool`` the cards to deal (every card not in
    the sampling seat's hand, not played and not in a talon it knows); ``pairs``
    the seats that must hold K and O of some suit."""

    me: int
    pool: int
    known: list[int]
    possible: list[int]
    size: list[int]
    pairs: tuple[int, ...] = ()


class Knowledge:
    """A seat's knowledge in the play phase, from its view."""

    def __init__(self, view: dict):
        info = self.info = Info(view)
        me = self.me = info.me
        self.view = view
        trump = info.trump
        extra = [0, 0, 0]
        if view.get("game") == "barva" and trump is not None:
            declared = {(h["seat"], SUIT_CODE[h["suit"]]) for h in info.hlasky}
            for seat, c in _plays(view):
                if (c & 7) in (KING, OBER) and (seat, c >> 3) not in declared:
                    extra[seat] |= 1 << (c ^ (KING ^ OBER))
        # earlier talons of mine that someone took: only the takers or the final talon hold them
        holders_of, mine_earlier = _earlier_talons(view)
        for c, holders in holders_of.items():
            for p in range(3):
                if p not in holders:
                    extra[p] |= 1 << c
        known = [0, 0, 0, 0]
        possible = [0, 0, 0, 0]
        size = [0, 0, 0, 0]
        for p in range(3):
            if p == me:
                continue
            known[p] = info.known[p]
            possible[p] = (info.possible[p] & ~extra[p]) | info.known[p]
            size[p] = info.size[p]
        pool = info.unseen
        if info.talon_known == 0 and view.get("game") is not None:
            size[TALON] = 2
            talon_ok = info.pool
            if view.get("game") == "barva":
                talon_ok &= ~AX_MASK
                tc = view.get("trump_card")
                if tc is not None:
                    talon_ok &= ~(1 << CODE[tc])
            for c in mine_earlier:
                talon_ok |= (1 << c) & pool & ~(known[0] | known[1] | known[2])
            possible[TALON] = talon_ok
        pairs = []
        if view.get("game") == "barva":
            lv = view.get("levels") or {}
            actor = info.actor
            have_hl = {h["seat"] for h in info.hlasky}
            if "sto" in lv and actor != me and actor not in have_hl:
                pairs.append(actor)
            if "sto-proti" in lv:
                announcer = _proti_announcer(view, "sto")
                if announcer is not None and announcer != me and announcer not in have_hl:
                    pairs.append(announcer)
        self.constraints = Constraints(me, pool, known, possible, size, tuple(pairs))

    def sample(self, rng: random.Random) -> list[int] | None:
        return sample(self.constraints, rng)


def _plays(view: dict):
    for tr in view.get("tricks") or []:
        for i, c in enumerate(tr["cards"]):
            yield (tr["leader"] + i) % 3, CODE[c]
    for e in view.get("trick") or []:
        yield e["seat"], CODE[e["card"]]


def _proti_announcer(view: dict, game: str) -> int | None:
    p = (view.get("proti") or {}).get(game)
    return int(p) if p is not None else None


def _earlier_talons(view: dict) -> tuple[dict[int, set[int]], list[int]]:
    """Cards of talons this seat discarded and somebody took afterwards: card ->
    the seats that may hold it now (the later takers)."""
    me = view["seat"]
    bids = view.get("bids") or []
    out: dict[int, set[int]] = {}
    mine: list[int] = []
    for i, b in enumerate(bids):
        if b["decision"] != "talon" or b["seat"] != me or ":" not in b["action"]:
            continue
        cards = [CODE[t] for t in b["action"].split(":", 1)[1].split(",")]
        takers = {bb["seat"] for bb in bids[i + 1:] if bb["decision"] == "answer" and bb["action"] in ("spatna", "durch")}
        if takers:
            for c in cards:
                out[c] = takers
            mine += cards
    return out, mine


def sample(k: Constraints, rng: random.Random, tries: int = 50) -> list[int] | None:
    """One world: the masks of seats 0..2 and the talon (slot 3); ``None`` when
    no consistent world was found (an inconsistent view)."""
    me = k.me
    slots = [p for p in range(4) if p != me and k.size[p] > 0]
    for _ in range(tries):
        hands = [k.known[p] if p != me else 0 for p in range(4)]
        for p in k.pairs:
            if _has_pair(hands[p]):
                continue
            suits = [s for s in range(4) if _pair_ok(k, p, s, hands)]
            if not suits:
                break
            s = rng.choice(suits)
            hands[p] |= (1 << (s * 8 + KING)) | (1 << (s * 8 + OBER))
        else:
            taken = hands[0] | hands[1] | hands[2] | hands[3]
            room = {p: k.size[p] - hands[p].bit_count() for p in slots}
            if any(r < 0 for r in room.values()):
                return None
            cards = cards_of(k.pool & ~taken)
            options = {c: [p for p in slots if k.possible[p] >> c & 1] for c in cards}
            rng.shuffle(cards)
            cards.sort(key=lambda c: len(options[c]))
            ok = True
            for c in cards:
                opts = [p for p in options[c] if room[p] > 0]
                if not opts:
                    ok = False
                    break
                if len(opts) == 1:
                    p = opts[0]
                else:
                    total = sum(room[p] for p in opts)
                    x = rng.randrange(total)
                    for p in opts:
                        x -= room[p]
                        if x < 0:
                            break
                hands[p] |= 1 << c
                room[p] -= 1
            if ok and all(r == 0 for r in room.values()):
                return hands
    return None


def _has_pair(hand: int) -> bool:
    return any(hand >> (s * 8 + KING) & 1 and hand >> (s * 8 + OBER) & 1 for s in range(4))


def _pair_ok(k: Constraints, p: int, s: int, hands: list[int]) -> bool:
    both = (1 << (s * 8 + KING)) | (1 << (s * 8 + OBER))
    if k.possible[p] & both != both:
        return False
    others = 0
    for q in range(4):
        if q != p:
            others |= hands[q]
    return not others & both and (hands[p] | both).bit_count() <= k.size[p]


def consistent(k: Constraints, world: list[int]) -> bool:
    """Does ``world`` agree with the constraints (for tests)?"""
    dealt = 0
    for p in range(4):
        if p == k.me:
            continue
        h = world[p]
        if h.bit_count() != k.size[p] or h & dealt:
            return False
        if h & ~k.possible[p] & ~k.known[p] or k.known[p] & ~h:
            return False
        dealt |= h
    if dealt != k.pool:
        return False
    return all(_has_pair(world[p]) for p in k.pairs)


def lost_early(view: dict) -> frozenset:
    """The announced sevens already played before the last trick (R7.4)."""
    lv = view.get("levels") or {}
    t = view.get("trump")
    if view.get("game") != "barva" or not t:
        return frozenset()
    seven = SUIT_CODE[t] * 8 + SEVEN
    out = set()
    early = list(_plays(view))[:27]  # the first nine tricks
    for seat, c in early:
        if c == seven:
            if "sedma" in lv and seat == view.get("actor"):
                out.add("sedma")
            proti = (view.get("proti") or {}).get("sedma")
            if "sedma-proti" in lv and proti is not None and seat == int(proti):
                out.add("sedma-proti")
    return frozenset(out)

