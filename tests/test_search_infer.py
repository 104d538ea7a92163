"""Card play conditioned on the bids: :func:`bots.search_bid.explains_bids`.

Two independent checks: the true deal always explains the bids of robot
bidders (it is how they were made), and a world the rulebook's robot rule says
could not have produced a bid is refused — a robot defender who answered
dobrá to a plain hra holds, by R11.1, no hláška, fewer than three trumps and
fewer than three aces-and-tens (counted here from the rule, not from the
robot's code).
"""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from bots.robot import Robot
from bots.search_bid import explains_bids
from bots.search_worlds import TALON, Knowledge
from referee.rules.cards import ACE, KING, OBER, TEN
from referee.rules.partie import Partie

ROBOT = Robot()
CODES = "789XUOKA"
SUITS = "hlba"


def code_to_card(code: str) -> int:
    return SUITS.index(code[1]) * 8 + CODES.index(code[0])


def robot_fleks_hra(hand: int, trump: int) -> bool:
    """R11.1 for the hra: a hláška, or three trumps, or three aces-and-tens."""
    pair = any(hand >> (s * 8 + KING) & 1 and hand >> (s * 8 + OBER) & 1 for s in range(4))
    trumps = bin(hand >> (trump * 8) & 0xFF).count("1")
    ax = sum(hand >> (s * 8 + r) & 1 for s in range(4) for r in (TEN, ACE))
    return pair or trumps >= 3 or ax >= 3


def play_views(seed: str, deals: int = 4):
    """(deal, seat, view) at every card play with a choice, robots at every seat."""
    partie = Partie(seed=seed)
    for n, deal in enumerate(partie.iter_deals()):
        while not deal.done:
            seat = deal.to_move
            legal = deal.legal_actions()
            texts = [a.code for a in legal]
            if deal.decision == "play" and len(texts) > 1:
                yield deal, seat, deal.view(seat)
            deal.apply(legal[texts.index(ROBOT.decide(deal.decision, deal.view(seat), texts))])
        if n + 1 >= deals:
            break


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10 ** 6))
def test_the_true_deal_explains_the_robots_bids(seed):
    seen = 0
    for deal, seat, view in play_views(f"infer:{seed}"):
        truth = [m if p != seat else 0 for p, m in enumerate(deal.masks)] + [0]
        if deal.talon and view["talon"] is None:
            truth[TALON] = sum(1 << c for c in deal.talon)
        assert explains_bids(view, truth, random.Random(seed))
        seen += 1
    assert seen > 0


def test_a_dobra_defender_of_a_plain_hra_holds_no_flek_hand():
    refused = checked = 0
    for s in range(60):
        for deal, seat, view in play_views(f"dobra:{s}", deals=3):
            if view["contract"] != "hra" or view["proti"] or seat == view["actor"]:
                continue
            # the other defender answered dobrá in the first defence round
            other = 3 - seat - view["actor"]
            first = [b for b in view["bids"] if b["decision"] == "flek"][:2]
            if not any(b["seat"] == other and b["action"] == "dobra" for b in first):
                continue
            played = [code_to_card(c) for t in view["tricks"] for i, c in enumerate(t["cards"])
                      if (t["leader"] + i) % 3 == other]
            played += [code_to_card(e["card"]) for e in view["trick"] if e["seat"] == other]
            trump = SUITS.index(view["trump"])
            rng = random.Random(s)
            know = Knowledge(view)
            for _ in range(20):
                world = know.sample(rng)
                original = world[other] | sum(1 << c for c in played)
                if robot_fleks_hra(original, trump):
                    checked += 1
                    if not explains_bids(view, world, rng):
                        refused += 1
            break
    assert checked > 20
    assert refused == checked
