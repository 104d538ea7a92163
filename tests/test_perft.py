"""Perft-like counts (as chess engines pin node counts of published positions): the
number of action sequences of each length from the start of one fixed deal, over
``legal_actions()`` and ``apply`` on cheap copies (``Deal.copy``).

The deal is dealt from a deck written out here (it was ``partie.shuffled_deck(1)``
when the counts were confirmed by an independent implementation, STYLE.md section 7),
so the counts do not depend on how a seed is turned into a deck.  A talon action
counts once per discard order, as the protocol lists it (R2.3: the order matters).

Depth 1: the forhont's first seven cards as the trump card, or z lidu (8).
Depth 2: for each trump choice, his discards (counted from the hand below).
Depth 3: the first answer to each: dobrá or špatná on Barva, dobrá or durch on betl,
dobrá or flek:durch on durch (which needs no answer, R4): 2 x 2,354.
Depth 4: the second answer, the taker's own discards, or the first raise.
"""

from __future__ import annotations

import copy

from referee.rules.cards import Card
from referee.rules.deal import Deal

DECK = ("9a 8b Xl 9l Ua 8h Oh Uh Ah 7b 8l Xb Ka Ol Kb 7h Ob Oa Kh Ul Ub Ab Kl Al Xh Aa 9h 7a 8a Xa 9b 7l").split()


def start() -> Deal:
    return Deal([Card.parse(c) for c in DECK], 0)


def perft(deal: Deal, depth: int) -> int:
    """Sequences of ``depth`` legal actions from ``deal`` (a deal that ends sooner adds none)."""
    if depth == 0:
        return 1
    if depth == 1:  # bulk count at the last level; every listed action must also pass verify
        legal = deal.legal_actions()
        assert all(deal.is_legal(a) for a in legal)
        return len(legal)
    n = 0
    for a in deal.legal_actions():
        child = deal.copy()
        child.apply(a)
        n += perft(child, depth - 1)
    return n


def test_the_deck_is_a_deck():
    assert len(DECK) == 32 and len(set(DECK)) == 32


def test_perft_depth_1_to_3():
    d = start()
    assert [perft(d, k) for k in (1, 2, 3)] == [8, 2354, 4708]
    assert d.history == [] and d.phase == "trump"  # the copies never touched the start


def test_perft_depth_1_by_hand():
    """8 = the seven cards the forhont has seen, or z lidu (R3.1)."""
    d = start()
    assert sorted(str(a) for a in d.legal_actions()) == sorted(
        ["trump:" + c for c in DECK[:7]] + ["trump:zlidu"])


def test_perft_depth_4():
    assert perft(start(), 4) == 279_444


def test_perft_depth_2_by_hand():
    """Each trump choice leaves 11 cards that may be discarded (never the trump card, R3.2):
    betl and durch take any ordered pair (2 x 11 x 10); Barva pairs of cards that are
    neither ace nor ten.  Counted here from the hand itself."""
    d = start()
    total = 0
    for a in d.legal_actions():
        c = d.copy()
        c.apply(a)
        free = [x for x in c.hands[0] if x != c.trump_card]
        small = [x for x in free if str(x)[0] not in "XA"]
        total += 2 * len(free) * (len(free) - 1) + len(small) * (len(small) - 1)
    assert total == 2354


def test_copy_is_independent_and_equals_deepcopy():
    d = start()
    for text in ("trump:Ua", "barva:9a,8b", "dobra", "dobra", "contract:hra"):
        d.apply(text)
    snap = copy.deepcopy(d)
    c = d.copy()
    twin = copy.deepcopy(d)
    while not c.done:
        a = c.legal_actions()[-1]
        c.apply(a)
        twin.apply(a)
        assert c.__dict__ == twin.__dict__
    assert d.__dict__ == snap.__dict__
