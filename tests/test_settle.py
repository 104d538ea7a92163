"""Settlement in groše (RULES.md R9) and fault settlement (R12.2).

Amounts are worked out by hand from R9 in the comments; the deals come from the
catalogue in :mod:`tests.builders`.
"""

from __future__ import annotations

import pytest

from referee.rules import settle
from referee.rules.deal import IllegalAction

from .builders import (
    BETL, DURCH, HRA_LOST, HRA_WON, LAY_TRUMP, SEDMA_PROTI, SEDMA_RED, STO_ORDER, STO_PROTI, STO_PROTI_LOST, STO_RED,
    STO_SEDMA, TICHE_STO, act, bid, comps, make_deal, nb_game, pays, play, trump_game,
)

# the middle player holds 7l (trump zelené) and Kh+Oh; the forhont neither seven nor hláška
DEAL_BID = ("Al Xl Ul 9l Ah Xh Ab Xb Aa Xa 7h 7b", "7l 8l Oh Kh 8h Ub 8b 7a 8a 9a", "Ol Kl 9h Uh Ob Kb 9b Ua Oa Ka")

FLEKS = {  # the raising answers that bring the hra to each level
    1: ("flek:hra", "dobra", "dobra"),
    2: ("flek:hra", "dobra", "flek:hra", "dobra", "dobra"),
    3: ("flek:hra", "dobra", "flek:hra", "flek:hra", "dobra", "dobra"),
    4: ("flek:hra", "dobra", "flek:hra", "dobra", "flek:hra", "flek:hra", "dobra", "dobra"),
}


# ---------------------------------------------------------------- R9.1 base stakes

def test_R9_1_base_stakes():
    assert settle.simple("hra", "actor", True, 0, False).amount == 1
    assert settle.simple("sedma", "actor", True, 0, False).amount == 2
    assert settle.simple("betl", "actor", True, 0, False).amount == 5
    assert settle.simple("durch", "actor", True, 0, False).amount == 10
    assert settle.simple("sedma-proti", "defence", True, 0, False).amount == 2
    # sto exactly 100: 4, nothing over
    assert settle.sto("sto", "actor", 100, 100, 0, 0, False).amount == 4
    assert settle.sto("sto-proti", "defence", 100, 100, 0, 0, False).amount == 4
    assert settle.ticha_sedma("actor", True, False).amount == 1
    # tiché sto at 100: 2, and 2 per ten over
    assert settle.tiche_sto("actor", 100, 0, False).amount == 2
    assert settle.tiche_sto("actor", 120, 0, False).amount == 6


# ---------------------------------------------------------------- R9.2 sto

def test_R9_2_sto_won_counts_every_hlaska_for_the_excess():
    # decisive 110 (first hláška only), every hláška 150: 4 + 5 x 4 = 24
    c = settle.sto("sto", "actor", 110, 150, 0, 0, False)
    assert (c.won, c.amount) == (True, 24)


def test_R9_2_sto_lost_pays_the_missing_tens_and_the_defences_hlasky():
    assert settle.sto("sto", "actor", 90, 130, 0, 0, False).amount == 4
    assert settle.sto("sto", "actor", 70, 70, 0, 0, False).amount == 12
    # 80 lacks 2 tens, the defence has 40 in hlášky: 4 x 2 + 4 x 4 = 24
    c = settle.sto("sto", "actor", 80, 80, 40, 0, False)
    assert (c.won, c.amount) == (False, 24)
    # sto proti the same with the sides swapped: the forhont's hlášky add
    c = settle.sto("sto-proti", "defence", 60, 60, 20, 0, False)
    assert (c.owner, c.won, c.amount) == ("defence", False, 4 * 4 + 4 * 2)


# ---------------------------------------------------------------- R9.3 raises

@pytest.mark.parametrize("level", range(5))
def test_R9_3_each_raise_doubles(level):
    assert settle.simple("hra", "actor", True, level, False).amount == 1 << level
    assert settle.simple("betl", "actor", False, level, False).amount == 5 << level
    # the tens over 100 are doubled too: (4 + 4) x 2^level
    assert settle.sto("sto", "actor", 110, 110, 0, level, False).amount == 8 << level
    # tiché sto takes the hra's level
    assert settle.hra(130, 20, level, False).amount == 8 << level


def test_R9_3_ticha_sedma_is_never_raised():
    # HRA_LOST with the hra fleked: the tichá sedma stays 1
    d = bid(HRA_LOST, "hra", FLEKS[2])
    play(d, HRA_LOST["play"])
    assert comps(d) == {"hra": (False, 4, "actor"), "ticha-sedma": (True, 1, "actor")}
    assert pays(d) == (-6, 3, 3)


# ---------------------------------------------------------------- R9.4 červené

def test_R9_4_cervene_doubles_trump_games_only():
    assert settle.simple("hra", "actor", True, 1, True).amount == 4
    assert settle.simple("sedma-proti", "defence", True, 0, True).amount == 4
    assert settle.ticha_sedma("actor", True, True).amount == 2
    assert settle.tiche_sto("actor", 130, 1, True).amount == 32
    assert settle.simple("betl", "actor", True, 0, True).amount == 5
    assert settle.simple("durch", "actor", True, 1, True).amount == 20


# ---------------------------------------------------------------- R9.5 payments

def test_R9_5_each_defender_pays_the_actor_twice():
    comp = (settle.simple("hra", "actor", True, 1, False), settle.simple("sedma", "actor", False, 0, False))
    # +2 and -2: nothing
    assert settle.payments(0, comp) == (0, 0, 0)
    comp = (settle.simple("hra", "actor", True, 1, False), settle.ticha_sedma("defence", True, False))
    # +2 - 1 = 1 from each defender
    assert settle.payments(1, comp) == (-1, 2, -1)
    comp = (settle.simple("sedma-proti", "defence", True, 2, True),)  # 2 x 4 x 2 = 16 to each defender
    assert settle.payments(2, comp) == (16, 16, -32)


# ---------------------------------------------------------------- R9.6 worked examples

def test_R9_6_sto_110_in_cervene():
    assert settle.sto("sto", "actor", 110, 110, 0, 0, True).amount == (4 + 4) * 2 == 16
    assert settle.sto("sto", "actor", 110, 110, 0, 1, True).amount == 32
    # played out: STO_RED, 70 + 40 = 110 in červené
    d = bid(STO_RED, "sto", ("dobra", "dobra"))
    play(d, STO_RED["play"])
    assert comps(d) == {"sto": (True, 16, "actor")} and pays(d) == (32, -16, -16)
    d = bid(STO_RED, "sto", ("flek:sto", "dobra", "dobra"))
    play(d, STO_RED["play"])
    assert comps(d) == {"sto": (True, 32, "actor")} and pays(d) == (64, -32, -32)


def test_R9_6_sto_lost_with_90_costs_4_with_70_costs_12():
    assert settle.sto("sto", "actor", 90, 90, 0, 0, False).amount == 4
    assert settle.sto("sto", "actor", 70, 70, 0, 0, False).amount == 3 * 4
    # played out: STO_ORDER with the 20 first, 70 + 20 = 90
    d = bid(STO_ORDER, "sto", ("dobra", "dobra"))
    play(d, STO_ORDER["twenty_first"])
    assert comps(d) == {"sto": (False, 4, "actor")} and pays(d) == (-8, 4, 4)


def test_R9_6_tiche_sto_130_with_flek_on_hra():
    assert settle.tiche_sto("actor", 130, 1, False).amount == (2 + 3 * 2) * 2 == 16
    # played out: LAY_TRUMP laid, 90 + 40 = 130
    d = bid(LAY_TRUMP, "hra", FLEKS[1])
    play(d, LAY_TRUMP["play"])
    d.apply("lay")
    assert comps(d) == {"tiche-sto": (True, 16, "actor")}
    # and for the defence: STO_PROTI, 90 + 40 = 130
    d = bid(STO_PROTI, "hra", FLEKS[1])
    play(d, STO_PROTI["play"])
    assert comps(d) == {"tiche-sto": (True, 16, "defence")} and pays(d) == (-32, 16, 16)


def test_R9_6_betl_with_flek_10_durch_with_flek_20():
    assert settle.simple("betl", "actor", True, 1, False).amount == 10
    assert settle.simple("durch", "actor", True, 1, False).amount == 20
    d = nb_game("betl", *BETL["hands"], talon="Ah Al", fleks=("flek:betl", "dobra", "dobra"))
    play(d, BETL["won"])
    assert pays(d) == (20, -10, -10)
    d = nb_game("durch", *DURCH["hands"], talon="7l 7b", fleks=("dobra", "flek:durch", "dobra"))
    play(d, DURCH["won"])
    assert pays(d) == (40, -20, -20)


def test_R9_6_conceded_hra_1_or_2_in_cervene():
    d = bid(HRA_WON, "hra", ("dobra", "dobra"))
    assert pays(d) == (2, -1, -1)
    d = bid(SEDMA_RED, "hra", ("dobra", "dobra"))
    assert pays(d) == (4, -2, -2)


def test_R9_6_fleked_hra_lost_and_sedma_won_cancel():
    d = bid(HRA_LOST, "sedma", ("flek:hra", "dobra", "dobra"))
    assert comps(d) == {"hra": (False, 2, "actor"), "sedma": (True, 2, "actor")} and pays(d) == (0, 0, 0)
    d = bid(SEDMA_RED, "sedma", ("flek:hra", "dobra", "dobra"))
    assert comps(d) == {"hra": (False, 4, "actor"), "sedma": (True, 4, "actor")} and pays(d) == (0, 0, 0)


# ---------------------------------------------------------------- every contract played through Deal.apply

# (deal, contract, raising answers, play key, expected components, expected payments)
CONTRACTS = [
    # hra won 60:30, flek: 2
    ("hra won", HRA_WON, "hra", FLEKS[1], "play", {"hra": (True, 2, "actor")}, (4, -2, -2)),
    # hra lost 30:60 (flek 2), tichá sedma won by the forhont (1): -2 + 1
    ("hra lost", HRA_LOST, "hra", FLEKS[1], "play",
     {"hra": (False, 2, "actor"), "ticha-sedma": (True, 1, "actor")}, (-2, 1, 1)),
    # sedma won (2), hra lost (1): +1 from each defender
    ("sedma won", HRA_LOST, "sedma", ("dobra", "dobra"), "play",
     {"hra": (False, 1, "actor"), "sedma": (True, 2, "actor")}, (2, -1, -1)),
    # sedma and hra fleked: hra lost 2, sedma won 4
    ("sedma won fleked", HRA_LOST, "sedma", ("flek:hra,sedma", "dobra", "dobra"), "play",
     {"hra": (False, 2, "actor"), "sedma": (True, 4, "actor")}, (4, -2, -2)),
    # červené: hra lost 1 x 2, sedma lost (beaten) 2 x 2
    ("sedma beaten", SEDMA_RED, "sedma", ("dobra", "dobra"), "play",
     {"hra": (False, 2, "actor"), "sedma": (False, 4, "actor")}, (-12, 6, 6)),
    ("sedma forced early", SEDMA_RED, "sedma", ("dobra", "dobra"), "early",
     {"hra": (False, 2, "actor"), "sedma": (False, 4, "actor")}, (-12, 6, 6)),
    # červené, both fleked: hra 1 x 2 x 2 = 4, sedma 2 x 2 x 2 = 8
    ("sedma beaten fleked", SEDMA_RED, "sedma", ("flek:hra,sedma", "dobra", "dobra"), "play",
     {"hra": (False, 4, "actor"), "sedma": (False, 8, "actor")}, (-24, 12, 12)),
    ("sto won", STO_RED, "sto", ("dobra", "dobra"), "play", {"sto": (True, 16, "actor")}, (32, -16, -16)),
    ("sto lost, 20 first", STO_ORDER, "sto", ("dobra", "dobra"), "twenty_first",
     {"sto": (False, 4, "actor")}, (-8, 4, 4)),
    ("sto won, 40 first", STO_ORDER, "sto", ("dobra", "dobra"), "forty_first",
     {"sto": (True, 16, "actor")}, (32, -16, -16)),
    # cards 90 + first 40 = 130 >= 100; every hláška 150: 4 + 5 x 4 = 24; sedma 2
    ("sto a sedma", STO_SEDMA, "sto-sedma", ("dobra", "dobra"), "play",
     {"sto": (True, 24, "actor"), "sedma": (True, 2, "actor")}, (52, -26, -26)),
    # hra won 70:20 (1), sedma proti won by the dealer (2): the forhont pays 1 to each
    ("sedma proti won", SEDMA_PROTI, "hra", ("dobra", "proti:sedma", "dobra"), "play",
     {"hra": (True, 1, "actor"), "sedma-proti": (True, 2, "defence")}, (-2, 1, 1)),
    # the forhont fleks the sedma proti: 4
    ("sedma proti fleked", SEDMA_PROTI, "hra", ("dobra", "proti:sedma", "flek:sedma-proti", "dobra", "dobra"),
     "play", {"hra": (True, 1, "actor"), "sedma-proti": (True, 4, "defence")}, (-6, 3, 3)),
    ("sedma proti forced early", SEDMA_PROTI, "hra", ("dobra", "proti:sedma", "dobra"), "early",
     {"hra": (True, 1, "actor"), "sedma-proti": (False, 2, "defence")}, (6, -3, -3)),
    # defence 90 + 40 = 130: 4 + 3 x 4 = 16; hra lost 1
    ("sto proti", STO_PROTI, "hra", ("proti:sto", "dobra", "dobra"), "play",
     {"hra": (False, 1, "actor"), "sto-proti": (True, 16, "defence")}, (-34, 17, 17)),
    # defence 70 + first hláška 20 = 90: sto proti lost 4; hra lost 1; tichá sedma won 1:
    # each defender pays 4 - 1 + 1 = 4
    ("sto proti lost", STO_PROTI_LOST, "hra", ("proti:sto", "dobra", "dobra"), "play",
     {"hra": (False, 1, "actor"), "sto-proti": (False, 4, "defence"), "ticha-sedma": (True, 1, "actor")},
     (8, -4, -4)),
    # the same cards as contract sto: 80 + first hláška 40 = 120: 4 + 2 x 4 = 12 (the
    # defence's 40 in hlášky only count against a lost sto)
    ("sto won, defence hlasky", TICHE_STO, "sto", ("dobra", "dobra"), "play",
     {"sto": (True, 12, "actor")}, (24, -12, -12)),
    # 120 with flek on hra: (2 + 2 x 2) x 2 = 12
    ("tiche sto", TICHE_STO, "hra", FLEKS[1], "play", {"tiche-sto": (True, 12, "actor")}, (24, -12, -12)),
]


@pytest.mark.parametrize("name, entry, contract, fleks, key, expected, payments", CONTRACTS,
                         ids=[c[0] for c in CONTRACTS])
def test_R9_contract_played_through_deal_apply(name, entry, contract, fleks, key, expected, payments):
    d = bid(entry, contract, fleks)
    play(d, entry[key])
    assert d.done and d.result.kind == "played"
    assert comps(d) == expected
    assert pays(d) == payments and sum(payments) == 0


@pytest.mark.parametrize("forhont", [1, 2])
def test_R9_5_payments_follow_the_actors_seat(forhont):
    d = bid(STO_PROTI, "hra", ("proti:sto", "dobra", "dobra"), forhont=forhont)
    play(d, STO_PROTI["play"])
    expected = [17, 17, 17]
    expected[forhont] = -34
    assert pays(d) == tuple(expected)


@pytest.mark.parametrize("kind, talon, key, won, base", [
    ("betl", "Ah Al", "won", True, 5), ("betl", "9a Al", "lost", False, 5),
    ("durch", "7l 7b", "won", True, 10), ("durch", "Ob 7l", "lost", False, 10),
])
@pytest.mark.parametrize("level", range(5))
def test_R9_betl_durch_every_level(kind, talon, key, won, base, level):
    entry = BETL if kind == "betl" else DURCH
    fleks = {0: ("dobra", "dobra"),
             1: (f"flek:{kind}", "dobra", "dobra"),
             2: (f"flek:{kind}", "dobra", f"flek:{kind}", "dobra", "dobra"),
             3: (f"flek:{kind}", "dobra", f"flek:{kind}", f"flek:{kind}", f"flek:{kind}", "dobra"),
             4: ("dobra", f"flek:{kind}", f"flek:{kind}", "dobra", f"flek:{kind}", f"flek:{kind}", "dobra", "dobra")}
    d = nb_game(kind, *entry["hands"], talon=talon, fleks=fleks[level])
    assert d.levels == {kind: level}
    play(d, entry[key])
    amount = base << level  # never doubled for červené: there are no trumps
    sign = 1 if won else -1
    assert comps(d) == {kind: (won, amount, "actor")}
    assert pays(d) == (2 * sign * amount, -sign * amount, -sign * amount)


@pytest.mark.parametrize("level", range(1, 5))
def test_R9_3_hra_every_level_up_to_boty(level):
    d = bid(HRA_WON, "hra", FLEKS[level])
    assert d.levels == {"hra": level}
    play(d, HRA_WON["play"])
    assert pays(d) == (2 << level, -(1 << level), -(1 << level))


@pytest.mark.parametrize("level", range(1, 5))
def test_R9_4_cervene_every_level(level):
    # SEDMA_RED played as hra: lost 40:50, 1 x 2^level x 2; the forhont's 7h is beaten in
    # the last trick: tichá sedma lost, 1 x 2, never raised (R9.3)
    d = bid(SEDMA_RED, "hra", FLEKS[level])
    play(d, SEDMA_RED["play"])
    amount = (1 << level) * 2
    assert comps(d) == {"hra": (False, amount, "actor"), "ticha-sedma": (False, 2, "actor")}
    assert pays(d) == (-2 * (amount + 2), amount + 2, amount + 2)


@pytest.mark.parametrize("level", range(5))
def test_R9_4_games_against_in_cervene(level):
    assert settle.simple("sedma-proti", "defence", False, level, True).amount == 2 * (1 << level) * 2
    assert settle.sto("sto-proti", "defence", 110, 110, 0, level, True).amount == 8 * (1 << level) * 2


# ---------------------------------------------------------------- R9.7 the partie

def test_R9_7_partie_score_is_the_sum_of_its_deals_equal_totals_share():
    from referee.rules.partie import Partie, places

    p = Partie(seed=4)
    for d in p.iter_deals():
        # every deal a conceded hra: each defender pays the forhont 1 (2 in červené)
        act(d, "trump:zlidu")
        act(d, next(str(a) for a in d.legal_actions() if a.kind == "barva"), "dobra", "dobra", "contract:hra",
            "dobra", "dobra")
    assert len(p.deals) == 12 and all(d.result.kind == "conceded" for d in p.deals)
    expected = [0, 0, 0]
    for d in p.deals:
        stake = 2 if d.cervene else 1
        for s in range(3):
            expected[s] += 2 * stake if s == d.forhont else -stake
    assert p.totals() == expected and sum(expected) == 0
    # most groše first; equal totals share the place (the mean of the places shared)
    assert places([5, 5, -10]) == [1.5, 1.5, 3]
    assert places([10, -5, -5]) == [1, 2.5, 2.5]
    assert places([0, 0, 0]) == [2, 2, 2]
    assert places([-3, 7, -4]) == [2, 1, 3]
    assert p.places() == places(expected)


# ---------------------------------------------------------------- R12.2 faults

def test_R12_2_before_a_contract_the_faulting_player_pays_10_to_each():
    for actions in ((), ("trump:Ua",), ("trump:Ua", "barva:7h,8h"), ("trump:Ua", "barva:7h,8h", "dobra", "dobra"),
                    ("trump:Ua", "betl:7h,8h")):
        d = make_deal(*HRA_WON["hands"])
        act(d, *actions)
        seat = d.to_move
        r = d.fault(seat, "illegal", "R4.1: bad answer", evidence='{"type":"action"}', elapsed=0.25)
        expected = [10, 10, 10]
        expected[seat] = -20
        assert r.kind == "fault" and r.payments == tuple(expected) and r.components == ()
        assert d.done and d.fault_info.seat == seat and d.fault_info.evidence == '{"type":"action"}'
        assert d.fault_info.elapsed == 0.25 and "R12.2" in r.notes[0]


def test_R12_2_faulting_actor_loses_every_component_at_base_stake():
    # SEDMA_RED, sedma with hra and sedma fleked, faulting in the middle of play:
    # hra 1 x 2 x 2 = 4, sedma 2 x 2 x 2 = 8, each defender receives 12
    d = bid(SEDMA_RED, "sedma", ("flek:hra,sedma", "dobra", "dobra"))
    play(d, "Al 7l Ul / Xl 8l")
    r = d.fault(0, "timeout")
    assert comps(d) == {"hra": (False, 4, "actor"), "sedma": (False, 8, "actor")}
    assert r.payments == (-24, 12, 12)


def test_R12_2_faulting_defender_pays_alone_twice():
    d = bid(SEDMA_RED, "sedma", ("flek:hra,sedma", "dobra", "dobra"))
    play(d, "Al 7l Ul / Xl")
    r = d.fault(1, "illegal")
    assert comps(d) == {"hra": (True, 4, "actor"), "sedma": (True, 8, "actor")}
    # the middle player pays 2 x 12, his partner nothing
    assert r.payments == (24, -24, 0)


def test_R12_2_sto_at_4_without_tens_and_no_silent_scores():
    # STO_RED is on its way to 110 (16); a defender's fault settles sto at 4 x 2 (červené)
    d = bid(STO_RED, "sto", ("dobra", "dobra"))
    play(d, "Ah 7h 9h / Kh 8h Uh / Xh 8l")
    r = d.fault(2, "crash")
    assert comps(d) == {"sto": (True, 8, "actor")} and r.payments == (16, 0, -16)
    # TICHE_STO: a fault before tiché sto or tichá sedma could fall scores the hra only
    d = bid(TICHE_STO, "hra", FLEKS[1])
    play(d, TICHE_STO["play"].rsplit(" / ", 1)[0])
    r = d.fault(0, "timeout")
    assert comps(d) == {"hra": (False, 2, "actor")} and r.payments == (-4, 2, 2)


def test_R12_2_games_against_go_with_their_side():
    # the forhont faults: he loses the hra, the defence wins its sedma proti
    d = bid(SEDMA_PROTI, "hra", ("dobra", "proti:sedma", "dobra"))
    r = d.fault(0, "timeout")
    assert comps(d) == {"hra": (False, 1, "actor"), "sedma-proti": (True, 2, "defence")}
    assert r.payments == (-6, 3, 3)
    # the announcing defender faults: his side loses both, he alone pays twice
    d = bid(SEDMA_PROTI, "hra", ("dobra", "proti:sedma", "dobra"))
    play(d, "Ab Ub")
    r = d.fault(2, "illegal")
    assert comps(d) == {"hra": (True, 1, "actor"), "sedma-proti": (False, 2, "defence")}
    assert r.payments == (6, 0, -6)


def test_R12_2_game_against_announced_in_an_unfinished_round():
    # the middle player says "flek na hru" and announces sedma proti; his partner then
    # faults before the round ends: the defence loses the hra and the sedma proti
    d = trump_game(*DEAL_BID, trump="Al", talon="7h 7b", fleks=("flek:hra proti:sedma",))
    assert d.to_move == 2
    r = d.fault(2, "timeout")
    assert set(comps(d)) == {"hra", "sedma-proti"}
    assert comps(d)["sedma-proti"] == (False, 2, "defence")
    assert r.payments[0] == -r.payments[2] and r.payments[1] == 0


def test_R12_2_betl_stands_only_after_round_one():
    # betl announced, answers pending: before a contract
    d = nb_game("betl", *BETL["hands"], talon="Ah Al", answers=(), fleks=())
    assert d.decision == "answer"
    assert d.fault(1, "timeout").payments == (10, -20, 10)
    # betl standing (raising under way): the faulting actor loses the betl, 5 x 2^level
    d = nb_game("betl", *BETL["hands"], talon="Ah Al", fleks=("flek:betl", "dobra"))
    assert d.decision == "flek" and d.to_move == 0
    r = d.fault(0, "timeout")
    assert comps(d) == {"betl": (False, 10, "actor")} and r.payments == (-20, 10, 10)


def test_R12_2_no_fault_after_the_end():
    d = bid(HRA_WON, "hra", ("dobra", "dobra"))
    with pytest.raises(IllegalAction):
        d.fault(1, "timeout")
