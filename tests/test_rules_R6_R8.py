"""Unplayed deals, play and outcome, laid cards (RULES.md R6-R8).

The deals come from the catalogue in :mod:`tests.builders`; their tricks and the
points of each side are worked out by hand in the comments there.
"""

from __future__ import annotations

import copy

import pytest

from referee.rules.cards import Card
from referee.rules.deal import IllegalAction
from referee.rules import settle

from .builders import (
    BETL, DURCH, HRA_LOST, HRA_WON, LAY_ORDER, LAY_ORDER_SAME, LAY_SEDMA, LAY_STO_LOST, LAY_TRUMP,
    SEDMA_PROTI, SEDMA_RED, SEVEN_ON_TABLE, STO_ORDER, STO_PROTI, STO_PROTI_LOST, TICHA_PARTNER, TICHE_STO, act, bid, codes,
    comps, hand_codes, legal_cards, legal_texts, make_deal, nb_game, pays, play,
)


def rule_of(excinfo) -> str:
    return str(excinfo.value).split(":")[0]


def lay_offered(d) -> bool:
    return "lay" in legal_texts(d)


# ---------------------------------------------------------------- R6 unplayed deals

def test_R6_1_unfleked_hra_is_conceded():
    d = bid(HRA_WON, "hra", ("dobra", "dobra"))
    assert d.done and d.result.kind == "conceded"
    # no card is played; each defender pays the hra, 1 groš
    assert d.tricks == [] and len(d.hands[0]) == 10
    assert comps(d) == {"hra": (True, 1, "actor")}
    assert pays(d) == (2, -1, -1)


def test_R6_1_conceded_hra_in_cervene_is_2():
    d = bid(SEDMA_RED, "hra", ("dobra", "dobra"))
    assert d.result.kind == "conceded"
    assert pays(d) == (4, -2, -2)


def test_R6_1_conceded_hra_pays_the_forhont_whatever_his_seat():
    d = bid(HRA_WON, "hra", ("dobra", "dobra"), forhont=2)
    assert pays(d) == (-1, -1, 2)


def test_R6_2_sedma_with_only_the_hra_fleked_is_not_played():
    # HRA_LOST: the forhont holds 7b (trump kule)
    d = bid(HRA_LOST, "sedma", ("flek:hra", "dobra", "dobra"))
    assert d.done and d.result.kind == "not-played" and d.tricks == []
    # lost hra with flek 1 x 2 = 2 and won sedma 2 cancel
    assert comps(d) == {"hra": (False, 2, "actor"), "sedma": (True, 2, "actor")}
    assert pays(d) == (0, 0, 0)


def test_R6_2_in_cervene_4_and_4():
    d = bid(SEDMA_RED, "sedma", ("dobra", "flek:hra", "dobra"))
    assert d.result.kind == "not-played"
    assert comps(d) == {"hra": (False, 4, "actor"), "sedma": (True, 4, "actor")}
    assert pays(d) == (0, 0, 0)


@pytest.mark.parametrize("fleks", [
    ("dobra", "dobra"),                                   # sedma without flek
    ("flek:hra", "dobra", "flek:hra", "dobra", "dobra"),  # the forhont said re
    ("flek:sedma", "dobra", "dobra"),                     # the sedma fleked
    ("flek:hra,sedma", "dobra", "dobra"),
])
def test_R6_3_sedma_is_played_otherwise(fleks):
    d = bid(HRA_LOST, "sedma", fleks)
    assert d.decision == "play" and d.to_move == 0


def test_R6_3_sto_always_played():
    d = bid(STO_ORDER, "sto", ("dobra", "dobra"))
    assert d.decision == "play"


def test_R6_3_a_game_against_makes_the_deal_played():
    d = bid(SEDMA_PROTI, "hra", ("dobra", "proti:sedma", "dobra"))
    assert d.decision == "play" and d.levels == {"hra": 0, "sedma-proti": 0}


@pytest.mark.parametrize("kind", ["betl", "durch"])
def test_R6_3_betl_and_durch_always_played(kind):
    d = nb_game(kind, *BETL["hands"], talon="Ah Al")
    assert d.decision == "play" and d.levels == {kind: 0}


def test_R6_4_no_ticha_sedma_or_tiche_sto_in_an_unplayed_deal():
    # LAY_SEDMA: the forhont holds every trump (7l too) and would make 130 -- but a
    # conceded hra scores the hra alone
    d = bid(LAY_SEDMA, "hra", ("dobra", "dobra"))
    assert d.result.kind == "conceded"
    assert set(comps(d)) == {"hra"}
    d = bid(LAY_SEDMA, "sedma", ("flek:hra", "dobra", "dobra"))
    assert d.result.kind == "not-played"
    assert set(comps(d)) == {"hra", "sedma"}


# ---------------------------------------------------------------- R7.1 leads

def test_R7_1_forhont_leads_a_trump_game():
    for forhont in (0, 1, 2):
        d = bid(HRA_WON, forhont=forhont)
        assert d.decision == "play" and d.to_move == forhont


def test_R7_1_actor_leads_betl_and_durch_and_the_winner_leads_next():
    d = make_deal(*BETL["hands"])
    act(d, "trump:7b", "barva:7h,8h", "spatna", "betl:Xh,Uh", "dobra", "dobra", "dobra", "dobra")
    assert d.actor == 1 and d.decision == "play" and d.to_move == 1
    d = nb_game("betl", *BETL["hands"], talon="Ah Al")
    play(d, "7h Xh Oh")
    assert d.tricks[0][2] == 2 and d.to_move == 2


# ---------------------------------------------------------------- R7.2 following, trump games

def test_R7_2_follow_suit_and_beat():
    d = bid(HRA_WON)
    d.apply("play:Aa")  # trump lead; the middle player holds Ka 7a
    assert legal_cards(d) == {"Ka", "7a"}  # cannot beat the ace: any trump
    with pytest.raises(IllegalAction) as e:
        d.apply("play:Xh")
    assert rule_of(e) == "R7.2" and "follow suit" in str(e.value)
    d = bid(HRA_WON)
    play(d, "Aa 7a Oa / Xa Ka 7b / Al")
    # middle: Xl Kl can't beat Al -> either
    assert legal_cards(d) == {"Xl", "Kl"}
    play(d, "Kl 8l / Ul")
    # middle must beat Ul with Xl (his only zelené now)
    assert legal_cards(d) == {"Xl"}
    d.apply("play:Xl")
    # dealer: Ol 9l; Ol does not beat Xl (O < K < X): either
    assert legal_cards(d) == {"Ol", "9l"}


def test_R7_2_must_beat_when_able():
    d = bid(HRA_WON)
    play(d, "Aa 7a Oa / Xa Ka 7b / Al Kl 8l / Ul Xl 9l / Ab 8b Xb / Xh")
    # dealer holds Oh Uh: both beat Xh? no -- in trump-game order X beats O and U; any hearts
    assert legal_cards(d) == {"Oh", "Uh"}
    d.apply("play:Uh")
    # forhont holds Ah: must beat
    assert legal_cards(d) == {"Ah"}
    d = bid(TICHE_STO)
    play(d, "Al 8l 7l / Xl Ul 7a / Kl 8a Ua / Ol 8b Ub / 9l 9b Ob / Ah 9h Uh / Kh")
    # the middle player holds Xh: it beats Kh, so he must play it
    assert legal_cards(d) == {"Xh"}
    with pytest.raises(IllegalAction) as e:
        d.apply("play:9b")
    assert rule_of(e) == "R7.2"


def test_R7_2_void_must_trump_and_overtrump():
    d = bid(HRA_LOST)
    play(d, "Ah 9h Uh / 9l Al 7l / Aa Xa 8a / Xl Ul 8l / Xh Oh")
    # forhont void in hearts, holds trumps Kb Ub 9b 8b 7b: must trump (any: none on the table)
    assert legal_cards(d) == {"Kb", "Ub", "9b", "8b", "7b"}
    with pytest.raises(IllegalAction) as e:
        d.apply("play:9a")
    assert rule_of(e) == "R7.2" and "trump" in str(e.value)
    play(d, "8b / Kb")
    # middle holds Ab Xb: follows trumps and must beat Kb: both do
    assert legal_cards(d) == {"Ab", "Xb"}
    play(d, "Ab Ob / Kh 7a 9b / 9a Oa Ka / Ua")
    # forhont void in žaludy: trumps Ub 7b; dealer led Ua
    assert legal_cards(d) == {"Ub", "7b"}
    d.apply("play:Ub")
    # middle void in žaludy with trump Xb: must trump and beat Ub
    assert legal_cards(d) == {"Xb"}


def test_R7_2_trump_on_a_non_trump_lead_any_card_of_the_led_suit():
    d = bid(LAY_STO_LOST, "sto", ("dobra", "dobra"))
    play(d, "Xa 7a Aa / Ob 9l")
    # the forhont trumped Ob with 9l; the middle player holds 8b Kb Xb Ub: any of them
    assert legal_cards(d) == {"8b", "Kb", "Xb", "Ub"}


def test_R7_2_void_without_trumps_any_card():
    d = bid(HRA_WON)
    play(d, "Aa 7a Oa / Xa Ka")
    # dealer: no žaludy, no trumps left: any of his cards
    assert legal_cards(d) == set(hand_codes(d, 2))


# ---------------------------------------------------------------- R7.3 following, betl and durch

def test_R7_3_betl_follow_and_beat_ten_under_spodek():
    d = nb_game("betl", *BETL["hands"], talon="Ah Al")
    d.apply("play:7h")
    # middle holds Xh Uh; both beat 7h
    assert legal_cards(d) == {"Xh", "Uh"}
    d.apply("play:Xh")
    # dealer holds Oh Kh: both beat Xh (in betl the ten is under the spodek)
    assert legal_cards(d) == {"Oh", "Kh"}
    d.apply("play:Oh")
    play(d, "Ol")
    # forhont 7l 8l cannot beat Ol: either
    assert legal_cards(d) == {"7l", "8l"}
    with pytest.raises(IllegalAction) as e:
        d.apply("play:7b")
    assert rule_of(e) == "R7.3"


def test_R7_3_no_trumps_void_any_card():
    d = nb_game("betl", *BETL["hands"], talon="Ah Al")
    play(d, "7h Xh Oh / Ol 7l 9l / Kl 8l Xl / Ab 7b 9b / Kb 8b Xb / Ob")
    # forhont void in kule: anything
    assert legal_cards(d) == set(hand_codes(d, 0))


def test_R7_3_durch_must_beat():
    d = nb_game("durch", *DURCH["hands"], talon="Ob 7l")
    play(d, "Ah 7h Xh / Ab 8b Xb / 7b")
    assert legal_cards(d) == {"9b"}
    d.apply("play:9b")
    assert legal_cards(d) == {"Ub"}


# ---------------------------------------------------------------- R7.4 the announced seven

def test_R7_4_announced_seven_waits_for_the_last_trick():
    d = bid(HRA_LOST, "sedma", ("dobra", "dobra"))
    # forhont on lead with 7b: not playable
    assert "7b" not in legal_cards(d)
    with pytest.raises(IllegalAction) as e:
        d.apply("play:7b")
    assert rule_of(e) == "R7.4"
    # void in hearts he must trump, and may not trump with the seven either
    play(d, "Ah 9h Uh / 9l Al 7l / Aa Xa 8a / Xl Ul 8l / Xh Oh")
    assert legal_cards(d) == {"Kb", "Ub", "9b", "8b"}
    with pytest.raises(IllegalAction) as e:
        d.apply("play:7b")
    assert rule_of(e) == "R7.4"


def test_R7_4_cited_only_when_the_seven_would_otherwise_be_legal():
    d = bid(HRA_LOST, "sedma", ("dobra", "dobra"))
    play(d, "Ah 9h Uh / 9l Al 7l / Aa Xa")
    # the forhont holds 8a: playing 7b breaks R7.2 (follow suit) before R7.4
    with pytest.raises(IllegalAction) as e:
        d.apply("play:7b")
    assert rule_of(e) == "R7.2" and "follow suit" in str(e.value)


def test_R7_4_seven_not_announced_is_free():
    d = bid(HRA_LOST, "hra", ("flek:hra", "dobra", "dobra"))
    assert "7b" in legal_cards(d)


def test_R7_4_forced_seven_loses_the_sedma_at_once():
    d = bid(SEDMA_RED, "sedma", ("dobra", "dobra"))
    play(d, "Al 7l Ul / Xl 8l Ol / Kl 9l Uh / Ah")
    # 7h is the forhont's only heart: his only legal card
    assert legal_cards(d) == {"7h"}
    d.apply("play:7h")
    assert d.sedma_lost_early == {"sedma"}
    play(d, "Oh / Ub Kb 7b / Ab 8b Ob / Xb 9b Kh / Ua Ka 7a / Aa 8a Oa / Xa 9a Xh")
    assert comps(d)["sedma"] == (False, 4, "actor")  # 2 x 2 červené


def test_R7_4_sedma_proti_seven_waits_too():
    d = bid(SEDMA_PROTI, "hra", ("dobra", "proti:sedma", "dobra"))
    d.apply("play:Ab")
    d.apply("play:Ub")
    # the dealer announced sedma proti: 8b 9b Kb but not 7b
    assert legal_cards(d) == {"8b", "9b", "Kb"}
    with pytest.raises(IllegalAction) as e:
        d.apply("play:7b")
    assert rule_of(e) == "R7.4"


def test_R7_4_forced_sedma_proti_seven_is_lost():
    d = bid(SEDMA_PROTI, "hra", ("dobra", "proti:sedma", "dobra"))
    play(d, "Ab Ub 8b / Xb Ob 9b / Ah 8h Oh / Xh 9h Kb / Ul Xl 8l / Al 9l Ol / Aa 7a 9a / Xa 8a Ua / Kh Uh")
    assert legal_cards(d) == {"7b"}  # void in hearts, 7b his only trump
    play(d, "7b / Oa Ka Kl")
    assert d.sedma_lost_early == {"sedma-proti"}
    # trick 9 went to the dealer's 7b, trick 10 to the forhont
    assert d.tricks[8][2] == 2 and d.tricks[9][2] == 0
    assert comps(d)["sedma-proti"] == (False, 2, "defence")


# ---------------------------------------------------------------- R7.5 hlášky

def test_R7_5_hlasky_declared_automatically_in_order():
    d = bid(TICHE_STO)
    play(d, "Al 8l 7l / Xl Ul 7a")
    assert d.hlasky == []
    play(d, "Kl")  # holding Ol: 40 in trumps, with no decision asked
    assert [(h.seat, h.suit, h.points) for h in d.hlasky] == [(0, 1, 40)]
    play(d, "8a Ua / Ol 8b Ub")  # Ol after Kl: nothing more
    assert len(d.hlasky) == 1
    play(d, "9l 9b Ob")  # dealer plays Ob holding Kb: 20
    play(d, "Ah 9h Uh / Kh Xh Oh")  # Kh without Oh: nothing
    play(d, "Xb Kb Ab / Aa 9a Oa")  # Kb after Ob: nothing; Oa with Ka: 20
    play(d, "7h Xa Ka")
    assert [(h.seat, h.suit, h.points) for h in d.hlasky] == [(0, 1, 40), (2, 2, 20), (2, 3, 20)]
    assert d.view(1)["hlasky"] == [{"seat": 0, "suit": "l", "points": 40}, {"seat": 2, "suit": "b", "points": 20},
                                   {"seat": 2, "suit": "a", "points": 20}]


def test_R7_5_no_hlasky_in_betl_or_durch():
    d = nb_game("durch", *DURCH["hands"], talon="7l 7b")
    play(d, DURCH["won"])  # the forhont plays Kh holding Oh, Kl holding Ol, ...
    assert d.hlasky == []


# ---------------------------------------------------------------- R7.6 hra

def test_R7_6_hra_won_on_more_points():
    d = bid(HRA_WON)
    play(d, HRA_WON["play"])
    assert d.points == [60, 30, 0]
    assert comps(d) == {"hra": (True, 2, "actor")}  # 1 x 2 (flek)


def test_R7_6_hra_lost():
    d = bid(HRA_LOST)
    play(d, HRA_LOST["play"])
    assert d.points == [30, 60, 0]
    assert comps(d)["hra"] == (False, 2, "actor")


def test_R7_6_hlasky_count_for_the_hra():
    # TICHE_PARTNER: 50:40 with no hlášky; STO_PROTI: the defence's 40 counts
    d = bid(TICHA_PARTNER)
    play(d, TICHA_PARTNER["play"])
    assert comps(d)["hra"] == (True, 2, "actor")


def test_R7_6_tie_goes_to_the_defence():
    # Card points and hlášky are multiples of 10 with 90 + 20k in all, so a played
    # deal never ties; the rule is checked on the settlement function.
    c = settle.hra(50, 50, 0, False)
    assert (c.name, c.won, c.amount) == ("hra", False, 1)
    c = settle.hra(60, 50, 0, False)
    assert (c.name, c.won) == ("hra", True)


# ---------------------------------------------------------------- R7.7 sto

def test_R7_7_sto_counts_only_the_first_hlaska():
    d = bid(STO_ORDER, "sto", ("dobra", "dobra"))
    play(d, STO_ORDER["twenty_first"])
    # cards 70 + first hláška 20 = 90 < 100, although all hlášky make 130
    assert d.points[0] == 70 and [h.points for h in d.hlasky] == [20, 40]
    assert comps(d) == {"sto": (False, 4, "actor")}
    d = bid(STO_ORDER, "sto", ("dobra", "dobra"))
    play(d, STO_ORDER["forty_first"])
    # 70 + 40 = 110: won; 4 + 4 x 3 (130 with every hláška) = 16
    assert comps(d) == {"sto": (True, 16, "actor")}


def test_R7_7_sto_proti_with_the_defences_first_hlaska():
    d = bid(STO_PROTI, "hra", ("proti:sto", "dobra", "dobra"))
    play(d, STO_PROTI["play"])
    assert d.points == [0, 40, 50] and [(h.seat, h.points) for h in d.hlasky] == [(1, 40)]
    # defence 90 + 40 = 130: 4 + 3 x 4 = 16
    assert comps(d)["sto-proti"] == (True, 16, "defence")


def test_R7_7_sto_proti_lost_on_the_first_hlaska():
    d = bid(STO_PROTI_LOST, "hra", ("proti:sto", "dobra", "dobra"))
    play(d, STO_PROTI_LOST["play"])
    assert [(h.seat, h.points) for h in d.hlasky] == [(1, 20), (1, 40)]
    assert d.points == [20, 70, 0]
    # 70 + 20 = 90: lost, 1 x 4 (the forhont has no hlášky); the hra is lost (130:20) but
    # the announced sto proti replaces the defence's tiché sto; 7l took the last trick
    assert comps(d) == {"hra": (False, 1, "actor"), "sto-proti": (False, 4, "defence"),
                        "ticha-sedma": (True, 1, "actor")}


# ---------------------------------------------------------------- R7.8 sedma

def test_R7_8_sedma_won_with_the_last_trick():
    d = bid(HRA_LOST, "sedma", ("dobra", "dobra"))
    play(d, HRA_LOST["play"])
    assert d.tricks[-1] == (1, tuple(Card.parse(c) for c in "Ol Kl 7b".split()), 0)
    assert comps(d) == {"hra": (False, 1, "actor"), "sedma": (True, 2, "actor")}


def test_R7_8_sedma_lost_when_the_seven_is_beaten():
    d = bid(SEDMA_RED, "sedma", ("dobra", "dobra"))
    play(d, SEDMA_RED["play"])
    assert d.tricks[-1][2] == 2  # Ah took it
    assert comps(d)["sedma"] == (False, 4, "actor")


def test_R7_8_sedma_proti_won():
    d = bid(SEDMA_PROTI, "hra", ("dobra", "proti:sedma", "dobra"))
    play(d, SEDMA_PROTI["play"])
    assert d.tricks[-1][2] == 2
    assert comps(d) == {"hra": (True, 1, "actor"), "sedma-proti": (True, 2, "defence")}


# ---------------------------------------------------------------- R7.9 tichá sedma

def test_R7_9_ticha_sedma_won_by_its_holder():
    d = bid(HRA_LOST)
    play(d, HRA_LOST["play"])
    assert comps(d)["ticha-sedma"] == (True, 1, "actor")


def test_R7_9_ticha_sedma_beaten_by_the_partner():
    d = bid(TICHA_PARTNER)
    play(d, TICHA_PARTNER["play"])
    # the dealer led Xl, the middle player's 7l under it: the defence loses 1
    assert comps(d)["ticha-sedma"] == (False, 1, "defence")


def test_R7_9_seven_in_an_earlier_trick_scores_nothing():
    d = bid(HRA_WON)
    play(d, HRA_WON["play"])  # 7a fell in trick 1
    assert "ticha-sedma" not in comps(d)


def test_R7_9_no_ticha_sedma_beside_an_announced_one():
    d = bid(SEDMA_PROTI, "hra", ("dobra", "proti:sedma", "dobra"))
    play(d, SEDMA_PROTI["play"])
    assert "ticha-sedma" not in comps(d)


# ---------------------------------------------------------------- R7.10 tiché sto

def test_R7_10_tiche_sto_for_the_actor():
    d = bid(TICHE_STO)
    play(d, TICHE_STO["play"])
    # 80 + 40 = 120: (2 + 2 x 2) x 2 (flek on hra) = 12, instead of the hra
    assert d.points == [80, 10, 0]
    assert comps(d) == {"tiche-sto": (True, 12, "actor")}
    assert pays(d) == (24, -12, -12)


def test_R7_10_tiche_sto_for_the_defence():
    d = bid(STO_PROTI, "hra", ("flek:hra", "dobra", "dobra"))
    play(d, STO_PROTI["play"])
    # defence 90 + 40 = 130 wins the hra: (2 + 3 x 2) x 2 = 16 paid by the forhont
    assert comps(d) == {"tiche-sto": (True, 16, "defence")}
    assert pays(d) == (-32, 16, 16)


def test_R7_10_sto_proti_replaces_the_defences_tiche_sto():
    d = bid(STO_PROTI, "hra", ("proti:sto", "dobra", "dobra"))
    play(d, STO_PROTI["play"])
    assert comps(d) == {"hra": (False, 1, "actor"), "sto-proti": (True, 16, "defence")}


# ---------------------------------------------------------------- R7.11 betl and durch end early

def test_R7_11_betl_lost_at_the_first_trick_the_actor_takes():
    d = nb_game("betl", *BETL["hands"], talon="9a Al")
    play(d, BETL["lost"])
    assert d.done and len(d.tricks) == 2
    assert comps(d) == {"betl": (False, 5, "actor")}
    assert len(d.hands[0]) == 8 and len(d.hands[1]) == 8  # the rest is not played


def test_R7_11_betl_won_after_ten_tricks():
    d = nb_game("betl", *BETL["hands"], talon="Ah Al")
    play(d, BETL["won"])
    assert len(d.tricks) == 10 and all(w != 0 for _, _, w in d.tricks)
    assert comps(d) == {"betl": (True, 5, "actor")}


def test_R7_11_durch_lost_at_the_first_trick_lost():
    d = nb_game("durch", *DURCH["hands"], talon="Ob 7l")
    play(d, DURCH["lost"])
    assert d.done and len(d.tricks) == 3
    assert comps(d) == {"durch": (False, 10, "actor")}


def test_R7_11_durch_won():
    d = nb_game("durch", *DURCH["hands"], talon="7l 7b")
    play(d, DURCH["won"])
    assert len(d.tricks) == 10 and comps(d) == {"durch": (True, 10, "actor")}


def test_R7_11_no_action_after_the_end():
    d = nb_game("betl", *BETL["hands"], talon="9a Al")
    play(d, BETL["lost"])
    assert d.legal_actions() == [] and d.to_move is None and d.decision is None
    with pytest.raises(IllegalAction):
        d.apply("play:8h")


# ---------------------------------------------------------------- R7.12 trump games to the end

def test_R7_12_trump_game_played_to_the_last_trick():
    d = bid(HRA_WON)
    play(d, "Aa 7a Oa / Xa Ka 7b / Al Kl 8l / Ul Xl 9l / Ab 8b Xb / Xh Uh Ah")
    # the hra is decided (60 is out of the defence's reach) yet play goes on
    assert not d.done and d.decision == "play"
    play(d, "9a 9h Oh / 8a Kh Ob / 7l Kb Ol / Ub Ua 9b")
    assert d.done and len(d.tricks) == 10 and sum(d.points) == 90


# ---------------------------------------------------------------- R8 laid cards

def test_R8_1_offered_when_the_order_cannot_matter():
    d = bid(LAY_TRUMP)
    # 7l is unseen: not offered
    assert not lay_offered(d)
    play(d, LAY_TRUMP["play"])
    assert lay_offered(d)
    assert d.view(0)["lay_offered"] is True
    # the offer never shows in the defenders' views
    assert d.view(1)["lay_offered"] is False and d.view(2)["lay_offered"] is False


def test_R8_1_view_shows_the_offer_at_his_turn_whatever_is_asked_first():
    d = bid(LAY_SEDMA, "sedma", ("dobra", "dobra"))
    # the view is asked before the legal actions: it must already show the offer
    assert d.view(0)["lay_offered"] is True
    assert lay_offered(d)


def test_R8_1_only_to_the_actor():
    d = bid(SEVEN_ON_TABLE)
    for trick in SEVEN_ON_TABLE["play"].split("/")[:9]:
        for code in trick.split():
            if d.to_move != 0:
                assert not lay_offered(d)
            d.apply("play:" + code)
    # trick 10: the middle player (on lead) and the dealer, holding the top cards left, are
    # never offered laying; the forhont is
    assert d.to_move == 1 and not lay_offered(d)
    play(d, "7l Xl")
    assert d.to_move == 0 and lay_offered(d)


def test_R8_1_stays_offered_at_later_turns():
    d = bid(LAY_TRUMP)
    play(d, LAY_TRUMP["play"])
    assert lay_offered(d)
    play(d, "Xl Xh Ub")
    assert lay_offered(d) and d.lay_offered


def test_R8_1_not_offered_with_a_card_that_can_lose():
    # HRA_WON: the forhont's Xb is beaten by the unseen Ab, unseen trumps remain
    d = bid(HRA_WON)
    assert not lay_offered(d)
    with pytest.raises(IllegalAction) as e:
        d.apply("lay")
    assert rule_of(e) == "R8.1"


def test_R8_1_durch_laid_from_the_start():
    d = nb_game("durch", *DURCH["hands"], talon="7l 7b")
    assert lay_offered(d)
    d = nb_game("durch", *DURCH["hands"], talon="Ob 7l")
    assert not lay_offered(d)  # 7b is beaten by unseen kule


def test_R8_1_durch_not_offered_while_a_card_can_lose():
    d = nb_game("durch", *DURCH["hands"], talon="Ob 7l")
    # the forhont keeps 7b, which unseen kule beat: never offered
    play(d, "Ah 7h Xh")
    assert not lay_offered(d)


def test_R8_1_betl_laid_from_the_start():
    d = nb_game("betl", *BETL["hands"], talon="Ah Al")
    assert lay_offered(d)
    d = nb_game("betl", *BETL["hands"], talon="9a Al")
    assert not lay_offered(d)  # Ah is above every unseen heart


def test_R8_1_betl_on_lead_needs_an_unseen_card_in_each_suit():
    # the forhont holds all eight žaludy and discards Ka Aa: every card he keeps is the
    # lowest of its suit among those he has not seen, but if he led an a nobody could
    # follow and he would take the trick -- not offered
    hands = ("7a 8a 9a Xa Ua Oa 7h 8h 7l 8l Ka Aa", "9h Xh Uh Oh 9l Xl Ul 7b 8b 9b",
             "Kh Ah Ol Kl Al Xb Ub Ob Kb Ab")
    d = nb_game("betl", *hands, talon="Ka Aa")
    assert not lay_offered(d)
    # six žaludy with Ka Aa still out (the middle player's): offered
    hands = ("7a 8a 9a Xa Ua Oa 7h 8h 7l 8l 7b 8b", "9h Xh Uh Oh 9l Xl Ul Ka 9b Aa",
             "Kh Ah Ol Kl Al Xb Ub Ob Kb Ab")
    d = nb_game("betl", *hands, talon="7b 8b")
    assert lay_offered(d)


def test_R8_2_offered_even_when_laying_loses():
    d = bid(LAY_STO_LOST, "sto", ("dobra", "dobra"))
    play(d, LAY_STO_LOST["play"])
    assert lay_offered(d)
    d.apply("lay")
    # 70 + 20 = 90: sto lost, 4
    assert d.points == [70, 0, 20]
    assert comps(d) == {"sto": (False, 4, "actor")}


def test_R8_3_not_offered_while_the_order_of_hlasky_matters():
    d = bid(LAY_ORDER, "sto", ("dobra", "dobra"))
    play(d, LAY_ORDER["play"])
    assert d.points[0] == 30 and d.hlasky == []
    assert not lay_offered(d)
    forty = copy.deepcopy(d)
    play(forty, "Kl 7h Uh")  # 40 declared first
    assert lay_offered(forty)
    forty.apply("lay")
    # 70 + 40 = 110, all hlášky 130: 4 + 3 x 4 = 16
    assert comps(forty) == {"sto": (True, 16, "actor")}
    twenty = copy.deepcopy(d)
    play(twenty, "Kh 7h Uh")  # 20 declared first
    assert lay_offered(twenty)
    twenty.apply("lay")
    assert comps(twenty) == {"sto": (False, 4, "actor")}


def test_R8_3_offered_when_every_order_settles_the_same():
    d = bid(LAY_ORDER_SAME, "sto", ("dobra", "dobra"))
    play(d, LAY_ORDER_SAME["play"])
    assert d.hlasky == [] and lay_offered(d)
    d.apply("lay")
    # 90 + 40 (Kl+Ol come first in his hand) = 130 >= 100, all hlášky 150:
    # 4 + 5 x 4 = 24 -- the same with 20 first (110, the excess counts every hláška)
    assert comps(d) == {"sto": (True, 24, "actor")}


def test_R8_4_trump_game_laid():
    d = bid(LAY_TRUMP)
    play(d, LAY_TRUMP["play"])
    d.apply("lay")
    assert d.result.kind == "played" and "R8.4" in d.result.notes[0]
    # every remaining trick and the last trick are his: 80 + 10
    assert d.points == [90, 0, 0]
    # pairs still held declared: actor first, then clockwise, each hand in hand order
    assert [(h.seat, h.suit, h.points) for h in d.hlasky] == [(0, 1, 40), (1, 0, 20), (2, 2, 20), (2, 3, 20)]
    # 90 + 40 = 130 beats 0 + 60: tiché sto (2 + 3 x 2) x 2 = 16
    assert comps(d) == {"tiche-sto": (True, 16, "actor")}
    assert pays(d) == (32, -16, -16)
    # the actor's cards are shown to everyone, the defenders' are not
    shown = "Xl Kl Ol Ul 9l 8l Ah Ab Aa".split()
    for seat in (0, 1, 2):
        v = d.view(seat)
        assert v["laid"] == {"seat": 0, "cards": shown}
    # no trick is invented: the laid cards make one more pile (R2.4)
    assert len(d.tricks) == 1


def test_R8_4_actors_seven_falls_in_the_last_trick():
    d = bid(LAY_SEDMA, "sedma", ("dobra", "dobra"))
    assert lay_offered(d)
    d.apply("lay")
    # sedma won 2; 90 + 40 = 130 -> tiché sto 2 + 3 x 2 = 8 (hra at level 0)
    assert comps(d) == {"tiche-sto": (True, 8, "actor"), "sedma": (True, 2, "actor")}
    d = bid(LAY_SEDMA, "hra", ("flek:hra", "dobra", "dobra"))
    d.apply("lay")
    assert comps(d) == {"tiche-sto": (True, 16, "actor"), "ticha-sedma": (True, 1, "actor")}


def test_R8_4_defenders_seven_on_the_table_in_trick_10_is_beaten():
    d = bid(SEVEN_ON_TABLE)
    play(d, " / ".join(SEVEN_ON_TABLE["play"].split(" / ")[:9]))
    play(d, "7l Xl")
    d.apply("lay")
    # the cards on the table and his Al: 20 + the last trick: 60 in all
    assert d.points[0] == 60
    assert comps(d) == {"hra": (True, 2, "actor"), "ticha-sedma": (False, 1, "defence")}
    assert codes(d.laid_pile) == ["7l", "Xl", "Al"]


def test_R8_4_seven_played_earlier_is_not_a_ticha_sedma():
    # LAY_TRUMP: the middle player's 7l fell in trick 1, so laying scores no tichá sedma
    d = bid(LAY_TRUMP)
    play(d, LAY_TRUMP["play"])
    d.apply("lay")
    assert "ticha-sedma" not in comps(d)


def test_R8_4_seven_in_the_talon_lay_before_any_trick():
    # the forhont discards the trump seven itself and lays at once
    hands = ("Al Xl Kl Ol Ul 9l 8l 7l Ah Ab Aa 7h", "8h Xh 9h Uh Oh Kh Xb 9b 8b 7b",
             "Ub Ob Kb 7a 8a 9a Ua Oa Ka Xa")
    d = bid(dict(hands=hands, trump="Al", talon="7l 7h"))
    assert lay_offered(d)
    d.apply("lay")
    assert d.tricks == [] and comps(d) == {"tiche-sto": (True, 16, "actor")}


def test_R8_4_durch_laid():
    d = nb_game("durch", *DURCH["hands"], talon="7l 7b", fleks=("flek:durch", "dobra", "dobra"))
    d.apply("lay")
    # durch won with flek: 20 (R9.6)
    assert comps(d) == {"durch": (True, 20, "actor")}
    assert pays(d) == (40, -20, -20)


def test_R8_4_betl_laid():
    d = nb_game("betl", *BETL["hands"], talon="Ah Al", fleks=("flek:betl", "dobra", "dobra"))
    d.apply("lay")
    # betl won with flek: 10 (R9.6)
    assert comps(d) == {"betl": (True, 10, "actor")}
    # the cards stay in each hand (R2.4)
    assert [len(h) for h in d.hands] == [10, 10, 10]


def test_R8_4_betl_laid_while_following():
    d = nb_game("betl", *BETL["hands"], talon="Ah Al")
    play(d, "7h Xh Oh / Ol")
    assert d.to_move == 0 and lay_offered(d)
    d.apply("lay")
    assert comps(d) == {"betl": (True, 5, "actor")}
    # the dealer's Ol, on the table, went back to his hand (appended)
    assert hand_codes(d, 2)[-1] == "Ol" and len(d.hands[2]) == 9
