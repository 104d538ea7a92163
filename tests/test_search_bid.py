"""Bidding by search: the deals rebuilt for play-outs agree with the seat's view.

At every bidding decision of robot-bid deals (talon, answer, contract, flek, no
takeover) the worlds sampled for the deciding seat are rebuilt in the engine
(:func:`bots.search_bid.replay`); the rebuilt deal must ask the same seat the same
decision with the same legal actions, and show it exactly the view it has in the
real deal (hand, talon, bids, levels, games against).  The true deal itself is
one of the worlds the constraints allow.
"""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from bots.robot import Robot
from bots.search_bid import bidding_constraints, replay, _no_takeover
from bots.search_worlds import TALON, consistent, sample
from referee.rules.partie import Partie

ROBOT = Robot()
SAME = ("seat", "phase", "to_move", "talon", "game", "actor", "contract", "levels", "proti", "bids", "trump_card", "zlidu")


def check(deal, rng):
    me = deal.to_move
    view = deal.view(me)
    k = bidding_constraints(view)
    if k is None:
        return 0
    truth = [m if p != me else 0 for p, m in enumerate(deal.masks)] + [0]
    if deal.talon and view["talon"] is None:
        truth[TALON] = sum(1 << c for c in deal.talon)
    assert consistent(k, truth)
    for _ in range(2):
        world = sample(k, rng)
        assert world is not None and consistent(k, world)
        d = replay(view, world, random.Random(rng.random()))
        assert d is not None
        v2 = d.view(me)
        for key in SAME:
            assert v2[key] == view[key], key
        assert sorted(v2["hand"]) == sorted(view["hand"])
        assert [a.code for a in d.legal_actions()] == [a.code for a in deal.legal_actions()]
    return 1


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10 ** 6))
def test_rebuilt_deals_agree_with_the_view(seed):
    rng = random.Random(seed)
    partie = Partie(seed=f"bid:{seed}")
    checked = 0
    for n, deal in enumerate(partie.iter_deals()):
        while not deal.done and deal.phase != "play":
            if deal.phase != "trump" and _no_takeover(deal.view(deal.to_move)):
                checked += check(deal, rng)
            legal = deal.legal_actions()
            texts = [a.code for a in legal]
            choice = ROBOT.decide(deal.decision, deal.view(deal.to_move), texts)
            deal.apply(legal[texts.index(choice)])
        while not deal.done:
            legal = deal.legal_actions()
            texts = [a.code for a in legal]
            deal.apply(legal[texts.index(ROBOT.decide(deal.decision, deal.view(deal.to_move), texts))])
        if n >= 3:
            break
    assert checked > 0


def test_the_trump_choice_keeps_an_obvious_trump_and_reproduces():
    """Six červené with the ace, ten, king and ober and one small zelená: hearts are
    the trump by any measure (z lidu or the lone seven would throw the hand away)."""
    from bots.search import SearchBot
    from referee.rules.partie import deck_from_hands

    first7 = ["Ah", "Xh", "Kh", "Oh", "9h", "8h", "7l"]
    rest = [c for c in (r + s for s in "hlba" for r in "789XUOKA") if c not in first7]
    hands = {0: first7 + rest[:5], 1: rest[5:15], 2: rest[15:25]}
    from referee.rules.deal import Deal
    deal = Deal(deck_from_hands(hands, 0), 0)
    view = deal.view(0)
    legal = [a.code for a in deal.legal_actions()]
    assert view["hand"] == first7
    picks = {SearchBot(seed=s, nodes=30000).choose_trump(view, legal) for s in (1, 2)}
    assert all(p in legal and p[-1] == "h" for p in picks)
    a = SearchBot(seed=9, nodes=30000)
    b = SearchBot(seed=9, nodes=30000)
    assert a.choose_trump(view, legal) == b.choose_trump(view, legal)
    assert a.stats["trump_worlds"] > 0
