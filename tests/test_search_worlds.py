"""Worlds sampled by the search bot always agree with what its seat knows.

Property: over random deals played by random and robot players, at every card
play of every seat the sampled worlds (a) satisfy the constraints the bot derived
from its view and (b) agree with every public fact re-derived here independently
from the engine's history: each card is where the deal could have it (never in
two places, never a played card, never a card of the sampling seat), hand sizes
match, a seat that failed to follow a suit holds none of it, a seat that failed
to trump holds no trump, the announced trump seven stays with its announcer, the
shown trump card stays with the forhont, the trump game's talon holds no ace or
ten.  And the true deal is always one of the worlds the constraints allow.
"""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from bots.robot import Robot
from bots.random_bot import RandomBot
from bots.search_worlds import TALON, Knowledge, consistent
from referee.rules.cards import ACE, SEVEN, SUIT_MASKS, TEN, Card, beats
from referee.rules.partie import Partie

ROBOT = Robot()


def public_exclusions(deal, seat: int) -> list[int]:
    """Cards each seat cannot hold, from the engine's history of the tricks (independent of the bot's code)."""
    excl = [0, 0, 0]
    trump = deal.trump if deal.game == "barva" else None
    tricks = [(l, list(cs)) for l, cs, _w in deal.tricks]
    if deal.trick:
        tricks.append((deal.trick_seats[0], list(deal.trick)))
    for leader, cards in tricks:
        led = cards[0]
        win = led
        for i, c in enumerate(cards[1:], 1):
            p = (leader + i) % 3
            if c >> 3 != led >> 3:
                excl[p] |= SUIT_MASKS[led >> 3]
                if trump is not None and c >> 3 != trump:
                    excl[p] |= SUIT_MASKS[trump]
            if beats(c, win, trump):
                win = c
    return excl


def check_view(deal, seat: int, rng: random.Random) -> None:
    view = deal.view(seat)
    know = Knowledge(view)
    k = know.constraints
    truth = list(deal.masks) + [0]
    if deal.talon and view["talon"] is None:
        for c in deal.talon:
            truth[TALON] |= 1 << c
    truth[seat] = 0
    assert consistent(k, truth), "the true deal must be allowed"
    excl = public_exclusions(deal, seat)
    for _ in range(3):
        world = know.sample(rng)
        assert world is not None
        assert consistent(k, world)
        seen = deal.masks[seat] | deal.played_mask
        for c in view["talon"] or []:
            seen |= 1 << Card.parse(c)
        assert not any(world[p] & seen for p in range(4) if p != seat)
        for p in range(3):
            if p == seat:
                continue
            assert world[p].bit_count() == deal.masks[p].bit_count()
            assert not world[p] & excl[p]
        if deal.game == "barva":
            tc = deal.trump_card
            if not deal.played_mask >> tc & 1 and deal.actor != seat:
                assert world[deal.actor] >> tc & 1
            assert not world[TALON] & sum(1 << (s * 8 + r) for s in range(4) for r in (ACE, TEN))
            seven = deal.trump * 8 + SEVEN
            if not deal.played_mask >> seven & 1:
                if "sedma" in deal.levels and deal.actor != seat:
                    assert world[deal.actor] >> seven & 1
                if "sedma" in deal.proti and deal.proti["sedma"] != seat:
                    assert world[deal.proti["sedma"]] >> seven & 1


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10 ** 6), robots=st.lists(st.booleans(), min_size=3, max_size=3))
def test_sampled_worlds_agree_with_the_view(seed, robots):
    rng = random.Random(seed)
    partie = Partie(seed=f"worlds:{seed}")
    players = [ROBOT if r else RandomBot(f"{seed}:{i}") for i, r in enumerate(robots)]
    for n, deal in enumerate(partie.iter_deals()):
        while not deal.done:
            if deal.phase == "play":
                check_view(deal, deal.to_move, rng)
                check_view(deal, (deal.to_move + 1) % 3, rng)
            seat = deal.to_move
            legal = deal.legal_actions()
            texts = [a.code for a in legal]
            choice = players[seat].decide(deal.decision, deal.view(seat), texts)
            deal.apply(legal[texts.index(choice)])
        if n >= 2:
            break
