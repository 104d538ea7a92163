"""The view kept between calls (``Deal.view``) equals the view built from scratch
(``Deal.view_from_scratch``, and the view of a fresh deal replayed to the same
moment) at every decision of random partie, whichever seats ask and how often."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.deal import Deal
from referee.rules.partie import Partie, shuffled_deck
from tests.test_properties import STYLES, choose


def replayed(d: Deal) -> Deal:
    """A fresh deal from the same deck with the same actions (and fault), asked nothing before."""
    fresh = Deal(d.deck, d.forhont)
    for _seat, action in d.history:
        fresh.apply(action)
    if d.fault_info is not None:
        f = d.fault_info
        fresh.fault(f.seat, f.kind, f.message, f.evidence, f.elapsed)
    return fresh


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), style=STYLES, ask=st.sampled_from([0.15, 0.5, 1.0]),
       fault_rate=st.sampled_from([0.0, 0.02]))
def test_the_kept_view_equals_the_view_from_scratch(seed, style, ask, fault_rate):
    rng = random.Random(seed)
    partie = Partie(seed=seed)
    for d in partie.iter_deals():
        while True:
            for s in range(3):
                if rng.random() < ask or d.done:
                    v = d.view(s)
                    assert v == d.view_from_scratch(s), (s, d.phase)
                    v["bids"].append("junk")  # the top-level lists are the caller's own
                    v["tricks"].clear()
                    v["hlasky"].append("junk")
            if rng.random() < 0.05:
                fresh = replayed(d)
                for s in range(3):
                    assert d.view(s) == fresh.view(s) == fresh.view_from_scratch(s)
            if d.done:
                break
            if rng.random() < fault_rate:
                d.fault(d.to_move, "test", "injected by the property test")
                continue
            if rng.random() < 0.1:  # a copy's views are its own
                c = d.copy()
                before = [d.view(s) for s in range(3)]
                assert [c.view(s) for s in range(3)] == before
                while not c.done:
                    c.apply(choose(rng, c, style))
                    c.view(c.to_move if c.to_move is not None else 0)
                assert [d.view(s) for s in range(3)] == before
            d.apply(choose(rng, d, style))


def test_a_redeal_moves_hidden_cards_and_every_view_follows():
    """Deal.redeal (the resampler's world): the hands, the talon and a hidden trump card are
    changed through the public method; each seat's view shows its new hand, the discarder's
    view names the new talon, a seat that saw none of the moved cards sees the same view, and
    a wrong redeal (other sizes or cards) is refused and changes nothing."""
    from referee.rules.cards import Card
    d = Deal(shuffled_deck("redeal"), 0)
    d.apply(f"trump:{d.hands[0][0]}")
    talon_action = next(a for a in d.legal_actions() if a.kind == "barva")
    d.apply(talon_action)  # seat 0 discards; seats 1 and 2 are asked "Barva?"
    assert d.phase == "answer" and d.to_move == 1
    before = d.view(1)  # seat 1 knows its own hand only
    hands = [list(h) for h in d.hands]
    # swap one card of seat 0 (not the trump card) with the first talon card, and seat 2's last
    # with seat 0's last: seat 1 cannot tell this world apart
    free = next(c for c in hands[0] if c != d.trump_card)
    t0, t1 = d.talon
    new_talon = [free, t1]
    hands[0][hands[0].index(free)] = t0
    hands[0][-1], hands[2][-1] = hands[2][-1], hands[0][-1]
    new_trump = next(c for c in hands[0] if c not in (d.trump_card,) and (c >> 3) != (d.trump_card >> 3))
    with pytest.raises(ValueError):
        d.redeal([hands[0][:-1], hands[1], hands[2]], new_talon)  # a place changes its size
    with pytest.raises(ValueError):
        d.redeal(hands, [t0, hands[1][0]])  # a card twice, another card gone
    assert d.view(1) == before
    d.redeal(hands, new_talon, new_trump)
    assert d.view(1) == before == d.view_from_scratch(1)
    assert d.view(0)["hand"] == [str(Card(c)) for c in hands[0]]
    assert d.view(0)["talon"] == [str(Card(free)), str(Card(t1))]
    assert d.view(0)["trump_card"] == str(Card(new_trump))
    assert d.view(0)["bids"][0]["action"] == f"trump:{Card(new_trump)}"
    assert d.view(0)["bids"][1]["action"] == f"barva:{Card(free)},{Card(t1)}"
    assert d.view(2)["hand"] == [str(Card(c)) for c in hands[2]]
    assert d.masks[0] == sum(1 << c for c in hands[0]) and d.holds(0, t0)
    assert [a.code for a in d.legal_actions()] == ["dobra", "spatna"]  # the deal goes on
    d.apply("dobra")
    d.apply("dobra")
    assert d.trump == new_trump >> 3  # the trump suit follows the new card
