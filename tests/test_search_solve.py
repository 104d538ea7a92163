"""The search bot's exact solver against brute force.

The reference is plain minimax over the engine itself: ``Deal.legal_actions()``
and ``Deal.apply`` on copies of the deal, scored by the engine's settlement
(what each defender pays the actor, ``payments[actor] / 2``), the actor
maximising and the defenders minimising.  Endings of 2–4 tricks come from real
deals (robots bid and play the first tricks, a seeded random number of cards
is then put on the table), in trump games with every contract and for betl
and durch; contracts with sto, sedma and games against are forced by
hand-built deals so the hlášky, the seven and the levels are all exercised.
"""

from __future__ import annotations

import random

import pytest

from bots.robot import Robot
from bots.search_settle import trump_settle
from bots.search_solve import Budget, Game, OutOfNodes, Solver, game_of_deal, position_of_deal
from referee.rules.deal import Deal
from referee.rules.partie import Partie, deck_from_hands

ROBOT = Robot()


def robot_step(deal: Deal) -> None:
    seat = deal.to_move
    legal = deal.legal_actions()
    texts = [a.code for a in legal]
    choice = ROBOT.decide(deal.decision, deal.view(seat), texts)
    if choice == "lay":
        choice = next(t for t in texts if t != "lay")
    deal.apply(legal[texts.index(choice)])


def clone(deal: Deal) -> Deal:
    """A copy of a deal in play (the engine's own ``Deal.copy``)."""
    return deal.copy()


def brute(deal: Deal) -> int:
    if deal.done:
        return deal.result.payments[deal.actor] // 2
    vals = []
    for a in deal.legal_actions():
        if a.kind == "lay":
            continue
        d = clone(deal)
        d.apply(a)
        vals.append(brute(d))
    return max(vals) if deal.to_move == deal.actor else min(vals)


def brute_by_card(deal: Deal) -> dict[int, int]:
    out = {}
    for a in deal.legal_actions():
        if a.kind == "lay":
            continue
        d = clone(deal)
        d.apply(a)
        out[a.cards[0]] = brute(d)
    return out


def ending(deal: Deal, tricks_left: int, rng: random.Random) -> Deal | None:
    """Robots play until ``tricks_left`` tricks remain; then 0–2 random cards go on the table."""
    while not deal.done and len(deal.tricks) < 10 - tricks_left:
        robot_step(deal)
    for _ in range(rng.randrange(3)):
        if deal.done:
            break
        deal.apply(rng.choice([a for a in deal.legal_actions() if a.kind != "lay"]))
    return None if deal.done else deal


def played_deals(kind: str, count: int, seed: str):
    """Deals of ``kind`` (barva/betl/durch) that robots bid into play."""
    found = 0
    for i in range(400):
        partie = Partie(seed=f"{seed}:{i}")
        for deal in partie.iter_deals():
            while not deal.done and deal.phase != "play":
                robot_step(deal)
            if not deal.done and deal.game == kind:
                yield deal
                found += 1
                if found >= count:
                    return
                break
            while not deal.done:
                robot_step(deal)


def check(deal: Deal) -> None:
    solver = Solver(game_of_deal(deal))
    got = solver.solve(position_of_deal(deal))
    assert got == brute_by_card(deal), repr(deal)


@pytest.mark.parametrize("tricks_left", [2, 3, 4])
@pytest.mark.parametrize("kind", ["barva", "betl", "durch"])
def test_solver_matches_brute_force_on_endings_of_real_deals(kind, tricks_left):
    rng = random.Random(f"{kind}:{tricks_left}")
    n = 0
    for deal in played_deals(kind, 5 if tricks_left < 4 else 2, f"solve:{kind}:{tricks_left}"):
        d = ending(deal, tricks_left, rng)
        if d is not None:
            check(d)
            n += 1
    assert n >= 1


def build(forhont: str, middle: str, dealer: str) -> Deal:
    return Deal(deck_from_hands({0: forhont, 1: middle, 2: dealer}, 0), 0)


def to_play(deal: Deal, actions: list[str]) -> Deal:
    for a in actions:
        deal.apply(a)
    assert deal.phase == "play", deal.phase
    return deal


def random_play(deal: Deal, tricks_left: int, rng: random.Random) -> Deal:
    """Random legal cards (never lay) until ``tricks_left`` tricks remain and a few more."""
    while not deal.done and len(deal.tricks) < 10 - tricks_left:
        deal.apply(rng.choice([a for a in deal.legal_actions() if a.kind != "lay"]))
    for _ in range(rng.randrange(3)):
        if not deal.done:
            deal.apply(rng.choice([a for a in deal.legal_actions() if a.kind != "lay"]))
    return deal


# Forhont (seat 0): červené (hearts) trumps with K+O of hearts and of leaves, the heart
# seven; the defenders hold hlášky too, so sto, sto proti, sedma, sedma proti, tichá
# sedma and tiché sto are all in play.
F = "7h Kh Oh Ah Xh Kl Ol 9h Ab 8h Ub 7b"
M = "Ul Al Xl 9l 8l Ka Oa Xa 8a 7a"
D = "Uh 7l Kb Ob Xb 9b 8b Aa Ua 9a"


@pytest.mark.parametrize("contract,flek", [
    ("hra", "flek:hra"),
    ("sedma", "flek:hra,sedma"),
    ("sto", "flek:sto"),
    ("sto-sedma", "flek:sedma,sto"),
    ("hra", "proti:sto"),
])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_solver_matches_brute_force_on_trump_contracts(contract, flek, seed):
    deal = build(F, M, D)
    # the first defender raises (or announces), the second says dobrá, the actor dobrá
    acts = ["trump:7h", "barva:7b,Ub", "dobra", "dobra", f"contract:{contract}", flek, "dobra", "dobra"]
    deal = to_play(deal, acts)
    rng = random.Random(seed)
    random_play(deal, 3, rng)
    check(deal)


def test_solver_sedma_proti_and_the_early_seven():
    # the dealer holds the trump seven (hearts) and announces sedma proti
    f = "Kh Oh Ah Xh 9h 8h Kl Ol Ab 7b Ub Al"
    m = "Ul Xl 9l 8l Ka Oa Xa 8a 7a Uh"
    d = "7h 7l Kb Ob Xb 9b 8b Aa Ua 9a"
    for seed in range(4):
        deal = to_play(build(f, m, d), ["trump:Kh", "barva:7b,Ub", "dobra", "dobra", "contract:hra",
                                        "dobra", "proti:sedma", "dobra"])
        random_play(deal, 3, random.Random(seed))
        check(deal)


def test_solver_betl_and_durch_from_hand_built_deals():
    f = "7h 8h 9h 7l 8l 9l 7b 8b Ab Kb 7a 8a"
    m = "Xh Uh Oh Kh Ah Xl Ul Ol Kl Al"
    d = "9b Xb Ub Ob 9a Xa Ua Oa Ka Aa"
    for kind in ("betl", "durch"):
        for seed in range(3):
            deal = build(f, m, d)
            acts = ["trump:7h", f"{kind}:Ab,Kb"]
            acts += ["dobra", "dobra"] if kind == "betl" else []  # nobody takes the betl over
            acts += ["dobra", "dobra"]  # no flek
            to_play(deal, acts)
            random_play(deal, 3, random.Random(seed))
            if not deal.done:
                check(deal)


def test_leaf_settlement_reproduces_rules_examples():
    # R9.6: sto with 110 in červené: (4 + 4) x 2 = 16 from each defender, with flek 32
    g = Game.make("barva", 0, 0, {"sto": 0})
    assert trump_settle(g, 70, 20, (40,), (), None) == 16
    g1 = Game.make("barva", 0, 0, {"sto": 1})
    assert trump_settle(g1, 70, 20, (40,), (), None) == 32
    # sto lost with 90 costs 4 (not červené)
    g2 = Game.make("barva", 0, 1, {"sto": 0})
    assert trump_settle(g2, 70, 20, (20,), (), None) == -4
    # tiché sto with 130 and flek on hra: (2 + 3 x 2) x 2 = 16
    g3 = Game.make("barva", 0, 1, {"hra": 1})
    assert trump_settle(g3, 90, 0, (40,), (), None) == 16


def test_node_budget_stops_a_solve():
    deal = next(played_deals("barva", 1, "budget"))
    solver = Solver(game_of_deal(deal))
    with pytest.raises(OutOfNodes):
        solver.solve(position_of_deal(deal), Budget(nodes=200))
    # an unlimited budget records what it used
    d = ending(deal, 3, random.Random(0))
    b = Budget()
    Solver(game_of_deal(d)).solve(position_of_deal(d), b)
    assert b.used > 0

