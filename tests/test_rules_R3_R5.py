"""Trump choice, talon, answers, contract, games against and raising (RULES.md R3-R5),
and what each seat's view shows meanwhile."""

from __future__ import annotations

import pytest

from referee.rules.cards import Card
from referee.rules.deal import IllegalAction

from .builders import act, hand_codes, legal_texts, make_deal, nb_game, trump_game

# Hands by role (forhont = seat 0, middle = seat 1, dealer = seat 2), each in hand order.
#
# DEAL_A (trump žaludy when the trump card is an a): the forhont's first seven are
# Aa Xa Ua 9a 8a Ah 7h, his second block 8h Xb Al Ul 7l (8h is the z lidu card).
# No seat holds K and O of one suit.
DEAL_A = ("Aa Xa Ua 9a 8a Ah 7h 8h Xb Al Ul 7l",
          "Ka 7a Xh Kh 9h Ab Kb 9b Xl Kl",
          "Oa Oh Uh Ob Ub 8b 7b Ol 9l 8l")

# DEAL_BID (trump zelené with Al): the forhont has neither the trump seven nor a hláška;
# the middle player holds 7l (the trump seven) and Kh+Oh; the dealer holds
# Kl+Ol (trumps), Kb+Ob and Ka+Oa.
DEAL_BID = ("Al Xl Ul 9l Ah Xh Ab Xb Aa Xa 7h 7b",
            "7l 8l Oh Kh 8h Ub 8b 7a 8a 9a",
            "Ol Kl 9h Uh Ob Kb 9b Ua Oa Ka")

# DEAL_FULL (trump zelené with Al): the forhont holds 7l and Kl+Ol and Kh+Oh, so every
# contract is open to him.
DEAL_FULL = ("Al Xl Kl Ol Ah Xh Kh Oh Aa 7l 7h 7b",
             "9b 8l 8h Ab Kb 8b 7a 9a Xa Oa",
             "9l Ul 9h Uh Xb Ub Ob 8a Ua Ka")


def rule_of(excinfo) -> str:
    return str(excinfo.value).split(":")[0]


# ---------------------------------------------------------------- R3.1 trump card

def test_R3_1_trump_card_from_first_seven_or_z_lidu():
    d = make_deal(*DEAL_A)
    assert d.decision == "trump" and d.to_move == 0
    assert legal_texts(d) == ["trump:Aa", "trump:Xa", "trump:Ua", "trump:9a", "trump:8a", "trump:Ah", "trump:7h",
                              "trump:zlidu"]
    # a card of the second block (or another seat's card) is not a trump choice
    for bad in ("trump:8h", "trump:Xb", "trump:Ka"):
        with pytest.raises(IllegalAction) as e:
            make_deal(*DEAL_A).apply(bad)
        assert rule_of(e) == "R3.1"


def test_R3_1_forhont_sees_only_his_first_seven_at_the_trump_decision():
    d = make_deal(*DEAL_A)
    assert d.view(0)["hand"] == ["Aa", "Xa", "Ua", "9a", "8a", "Ah", "7h"]
    act(d, "trump:Ua")
    # he takes the rest: all twelve, the second block appended in order (R2.6)
    assert d.view(0)["hand"] == "Aa Xa Ua 9a 8a Ah 7h 8h Xb Al Ul 7l".split()


def test_R3_1_fault_at_the_trump_decision_shows_no_more_than_seven():
    d = make_deal(*DEAL_A)
    d.fault(0, "timeout")
    # the deal is over before he took the rest: his view still holds the first seven only
    assert d.done and d.view(0)["hand"] == ["Aa", "Xa", "Ua", "9a", "8a", "Ah", "7h"]


def test_R3_1_z_lidu_is_the_first_card_of_the_second_block():
    d = make_deal(*DEAL_A)
    # the 18th card from the top of the deck: 7 (forhont) + 5 + 5, then the forhont's 8h
    assert str(d.deck[17]) == "8h"
    act(d, "trump:zlidu")
    assert str(d.trump_card) == "8h" and d.zlidu is True
    # the forhont sees the card once chosen, nobody else; everyone sees that it was z lidu
    assert d.view(0)["trump_card"] == "8h"
    for seat in (1, 2):
        v = d.view(seat)
        assert v["trump_card"] is None and v["trump"] is None
        assert v["zlidu"] is True
        assert v["bids"][0]["action"] == "trump:zlidu"


def test_R3_1_trump_card_known_only_to_the_forhont_until_the_contract():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua")
    assert d.view(0)["trump_card"] == "Ua" and d.view(0)["trump"] == "a"
    for seat in (1, 2):
        assert d.view(seat)["trump_card"] is None
        assert d.view(seat)["trump"] is None
        assert d.view(seat)["zlidu"] is False
        assert d.view(seat)["bids"][0]["action"] == "trump"  # redacted
    act(d, "barva:7h,8h", "dobra", "dobra")
    assert d.decision == "contract"
    for seat in (1, 2):
        assert d.view(seat)["trump_card"] is None
    act(d, "contract:hra")
    # R5.1: shown to everyone with the contract
    for seat in (0, 1, 2):
        assert d.view(seat)["trump_card"] == "Ua"
        assert d.view(seat)["trump"] == "a"
        assert d.view(seat)["bids"][0]["action"] == "trump:Ua"
    # and it returns to (stays in) his hand
    assert "Ua" in hand_codes(d, 0)


# ---------------------------------------------------------------- R3.2 the forhont's first decision

def test_R3_2_barva_discards_exclude_aces_tens_and_the_trump_card():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua")
    legal = set(legal_texts(d))
    barva = {t for t in legal if t.startswith("barva:")}
    cards_in_barva = {c for t in barva for c in t[6:].split(",")}
    # his twelve minus aces, tens and the trump card Ua
    assert cards_in_barva == {"9a", "8a", "7h", "8h", "Ul", "7l"}
    assert len(barva) == 6 * 5  # ordered pairs: the discard order matters (R2.3)
    for text, why in (("barva:Aa,7h", "ace"), ("barva:7h,Xb", "ten"), ("barva:Ua,7h", "trump card")):
        dd = make_deal(*DEAL_A)
        act(dd, "trump:Ua")
        with pytest.raises(IllegalAction) as e:
            dd.apply(text)
        assert rule_of(e) == "R3.2", why
    # a card he does not hold
    with pytest.raises(IllegalAction) as e:
        d.apply("barva:7h,Ka")
    assert rule_of(e) == "R3.2"


def test_R3_2_betl_and_durch_discard_anything_but_the_trump_card():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua")
    legal = set(legal_texts(d))
    assert "betl:Aa,Xa" in legal and "durch:Ah,Xb" in legal
    assert not any("Ua" in t for t in legal if t.startswith(("betl:", "durch:")))
    assert len([t for t in legal if t.startswith("betl:")]) == 11 * 10
    with pytest.raises(IllegalAction) as e:
        d.apply("betl:Ua,7h")
    assert rule_of(e) == "R3.2" and "Ua" in str(e.value)
    act(d, "betl:Aa,Xa")
    # the trump card stays in his hand for play; the talon is the two discards
    assert "Ua" in hand_codes(d, 0) and len(d.hands[0]) == 10
    assert [str(c) for c in d.talon] == ["Aa", "Xa"]
    assert d.game == "betl" and d.actor == 0 and d.trump is None


def test_R3_2_z_lidu_trump_card_cannot_be_discarded_either():
    d = make_deal(*DEAL_A)
    act(d, "trump:zlidu")  # 8h
    with pytest.raises(IllegalAction) as e:
        d.apply("barva:8h,7h")
    assert rule_of(e) == "R3.2"
    assert all("8h" not in t for t in legal_texts(d))


# ---------------------------------------------------------------- R3.3 the talon

def test_R3_3_talon_known_only_to_whoever_discarded_it():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "barva:8h,7h")
    assert [str(c) for c in d.talon] == ["8h", "7h"]  # in discard order
    assert d.view(0)["talon"] == ["8h", "7h"]
    assert d.view(0)["bids"][1]["action"] == "barva:8h,7h"
    for seat in (1, 2):
        assert d.view(seat)["talon"] is None
        assert d.view(seat)["bids"][1]["action"] == "barva"  # seen: that he discarded; not: what


def test_R3_3_talon_known_to_whoever_takes_it():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "barva:8h,7h", "spatna")
    # the middle player took the talon: it is in his hand, appended in talon order (R2.6)
    assert hand_codes(d, 1)[-2:] == ["8h", "7h"]
    assert d.view(1)["bids"][1]["action"] == "barva:8h,7h"
    assert d.view(2)["bids"][1]["action"] == "barva"
    act(d, "betl:Ka,Xh")
    assert d.view(1)["talon"] == ["Ka", "Xh"]
    assert d.view(0)["talon"] is None and d.view(2)["talon"] is None
    assert d.view(0)["bids"][3]["action"] == "betl"
    # the forhont still knows his own discard, the dealer never learns it
    assert d.view(0)["bids"][1]["action"] == "barva:8h,7h"
    assert d.view(2)["bids"][1]["action"] == "barva"


# ---------------------------------------------------------------- R4 round 1

def test_R4_1_answers_clockwise_from_the_forhont_both_dobra_approve():
    d = make_deal(*DEAL_A, forhont=1)
    # forhont seat 1: middle 2, dealer 0
    act(d, "trump:Ua", "barva:7h,8h")
    assert d.decision == "answer" and d.to_move == 2
    assert legal_texts(d) == ["dobra", "spatna"]
    act(d, "dobra")
    assert d.to_move == 0
    act(d, "dobra")
    assert d.decision == "contract" and d.to_move == 1
    assert d.trump == 3  # žaludy, the suit of Ua
    assert d.game == "barva" and d.actor == 1


def test_R4_1_wrong_answer_word_is_illegal():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "barva:7h,8h")
    with pytest.raises(IllegalAction) as e:
        d.apply("durch")
    assert rule_of(e) == "R4.1"


def test_R4_2_spatna_takes_the_talon_then_betl_or_durch():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "barva:7h,8h", "spatna")
    assert d.decision == "talon" and d.to_move == 1
    assert hand_codes(d, 1) == "Ka 7a Xh Kh 9h Ab Kb 9b Xl Kl 7h 8h".split()
    legal = legal_texts(d)
    assert not any(t.startswith("barva:") for t in legal)
    assert "betl:Ab,Xh" in legal and "durch:Ka,7h" in legal  # aces and tens allowed
    assert len(legal) == 2 * 12 * 11
    act(d, "durch:7h,8h")
    # R4.4 nobody answers a durch: the raising starts with the defence (seat 2, then 0)
    assert d.game == "durch" and d.actor == 1 and d.decision == "flek" and d.to_move == 2
    # R4.2 the forhont's trump card returns unshown; the trump suit is never set
    assert d.trump is None and "Ua" in hand_codes(d, 0)
    assert d.view(1)["trump_card"] is None and d.view(2)["trump_card"] is None
    assert d.view(1)["trump"] is None


def test_R4_2_after_spatna_nobody_else_answers_the_barva():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "barva:7h,8h", "spatna", "betl:7h,8h")
    # the betl is answered by the two others from the player after the betl player:
    # dealer (2) then forhont (0); the dealer was never asked about the Barva
    assert d.decision == "answer" and d.to_move == 2
    assert legal_texts(d) == ["dobra", "durch"]
    assert [(s, str(a)) for s, a in d.history] == [(0, "trump:Ua"), (0, "barva:7h,8h"), (1, "spatna"),
                                                   (1, "betl:7h,8h")]


def test_R4_3_betl_answered_with_durch_takes_the_talon():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "betl:7h,8h")
    assert d.decision == "answer" and d.to_move == 1
    act(d, "dobra")
    assert d.to_move == 2
    act(d, "durch")
    assert d.decision == "talon" and d.to_move == 2
    assert hand_codes(d, 2)[-2:] == ["7h", "8h"]
    # only durch now
    assert {t.split(":")[0] for t in legal_texts(d)} == {"durch"}
    with pytest.raises(IllegalAction):
        d.apply("betl:7h,8h")
    act(d, "durch:Oa,Oh")
    assert d.game == "durch" and d.actor == 2
    assert [str(c) for c in d.talon] == ["Oa", "Oh"] and d.talon_owner == 2
    assert d.decision == "flek" and d.to_move == 0  # defence: after the actor, clockwise


def test_R4_3_betl_taken_over_by_the_forhont_as_durch():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "barva:7h,8h", "spatna", "betl:Ka,Xh", "dobra")
    assert d.to_move == 0
    act(d, "durch")
    # the forhont takes the middle player's talon
    assert hand_codes(d, 0)[-2:] == ["Ka", "Xh"]
    act(d, "durch:7l,Xh")
    assert d.game == "durch" and d.actor == 0 and d.talon_owner == 0


def test_R4_3_both_dobra_the_betl_stands():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "betl:7h,8h", "dobra", "dobra")
    assert d.game == "betl" and d.actor == 0
    assert d.decision == "flek" and d.to_move == 1 and d.levels == {"betl": 0}


def test_R4_4_durch_is_not_answered():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "durch:7h,8h")
    assert d.decision == "flek" and d.to_move == 1 and d.levels == {"durch": 0}


# ---------------------------------------------------------------- R5.1 contract

def test_R5_1_contracts_need_the_seven_or_a_hlaska():
    d = make_deal(*DEAL_BID)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra")
    # neither the trump seven (7l is the middle player's) nor K+O of one suit
    assert legal_texts(d) == ["contract:hra"]
    with pytest.raises(IllegalAction) as e:
        d.apply("contract:sedma")
    assert rule_of(e) == "R5.1" and "seven" in str(e.value)
    with pytest.raises(IllegalAction) as e:
        d.apply("contract:sto")
    assert rule_of(e) == "R5.1"
    with pytest.raises(IllegalAction) as e:
        d.apply("contract:sto-sedma")
    assert rule_of(e) == "R5.1"

    d = make_deal(*DEAL_FULL)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra")
    assert legal_texts(d) == ["contract:hra", "contract:sedma", "contract:sto", "contract:sto-sedma"]


@pytest.mark.parametrize("contract, components", [
    ("hra", {"hra": 0}), ("sedma", {"hra": 0, "sedma": 0}), ("sto", {"sto": 0}),
    ("sto-sedma", {"sto": 0, "sedma": 0}),
])
def test_R5_1_contract_components(contract, components):
    d = make_deal(*DEAL_FULL)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra", "contract:" + contract)
    assert d.levels == components and d.contract == contract
    assert d.decision == "flek" and d.to_move == 1


# ---------------------------------------------------------------- R5.2 games against

def test_R5_2_games_against_open_only_with_the_seven_or_a_hlaska():
    d = make_deal(*DEAL_BID)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra", "contract:hra")
    # middle (seat 1): 7l and Kh+Oh -> sedma proti and sto proti
    assert set(legal_texts(d)) == {"dobra", "flek:hra", "proti:sedma", "proti:sto", "proti:sedma,sto",
                                   "flek:hra proti:sedma", "flek:hra proti:sto", "flek:hra proti:sedma,sto"}
    act(d, "proti:sto")
    # dealer: hlášky but no seven; sto proti is taken (once per deal)
    assert set(legal_texts(d)) == {"dobra", "flek:hra"}
    with pytest.raises(IllegalAction) as e:
        d.apply("proti:sto")
    assert rule_of(e) == "R5.2"
    with pytest.raises(IllegalAction) as e:
        d.apply("proti:sedma")
    assert rule_of(e) == "R5.2"
    act(d, "dobra")
    assert d.proti == {"sto": 1} and d.levels == {"hra": 0, "sto-proti": 0}
    # the actor's round: the announced game against can be fleked (its first raise is his)
    assert d.to_move == 0 and set(legal_texts(d)) == {"dobra", "flek:sto-proti"}
    act(d, "flek:sto-proti")
    assert d.levels == {"hra": 0, "sto-proti": 1}
    # the defence may re it; no new games against after the first answer
    assert d.to_move == 1 and set(legal_texts(d)) == {"dobra", "flek:sto-proti"}
    act(d, "dobra", "flek:sto-proti")
    assert d.levels["sto-proti"] == 2
    assert d.to_move == 0 and set(legal_texts(d)) == {"dobra", "flek:sto-proti"}
    act(d, "dobra")
    # R6.3: a deal with a game against is played
    assert d.decision == "play"


def test_R5_2_not_against_the_forhonts_own_sedma_or_sto():
    # forhont plays sedma: nobody may announce sedma proti; sto proti stays open
    d = make_deal(*DEAL_BID)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra", "contract:hra")
    assert "proti:sedma" in legal_texts(d)
    d = make_deal(*DEAL_FULL)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra", "contract:sedma")
    # middle: Ab Kb ... holds no K+O, no seven (7l is the forhont's)
    assert set(legal_texts(d)) == {"dobra", "flek:hra", "flek:sedma", "flek:hra,sedma"}
    d = make_deal(*DEAL_FULL)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra", "contract:sto")
    assert set(legal_texts(d)) == {"dobra", "flek:sto"}


def test_R5_2_both_games_against_by_one_defender_and_the_other_declines():
    d = make_deal(*DEAL_BID)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra", "contract:hra", "flek:hra proti:sedma,sto")
    assert set(legal_texts(d)) == {"dobra", "flek:hra"}
    act(d, "dobra")
    assert d.proti == {"sedma": 1, "sto": 1}
    assert d.levels == {"hra": 1, "sedma-proti": 0, "sto-proti": 0}
    # actor's round: the raised hra (re) and the announced games against (flek)
    assert set(legal_texts(d)) == {"dobra", "flek:hra", "flek:sedma-proti", "flek:sto-proti",
                                   "flek:hra,sedma-proti", "flek:hra,sto-proti",
                                   "flek:sedma-proti,sto-proti", "flek:hra,sedma-proti,sto-proti"}


def test_R5_2_games_against_only_in_the_first_answer():
    d = make_deal(*DEAL_BID)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra", "contract:hra", "flek:hra", "dobra", "flek:hra")
    # defence's second round: the middle player still holds 7l and Kh+Oh, but may only tutti
    assert d.to_move == 1 and set(legal_texts(d)) == {"dobra", "flek:hra"}
    with pytest.raises(IllegalAction) as e:
        d.apply("proti:sedma")
    assert rule_of(e) == "R5.2"


def test_R5_2_no_games_against_in_betl_or_durch():
    d = make_deal(*DEAL_BID)
    act(d, "trump:Al", "betl:7h,7b", "dobra", "dobra")
    assert set(legal_texts(d)) == {"dobra", "flek:betl"}


# ---------------------------------------------------------------- R5.3 raising

def test_R5_3_flek_re_tutti_boty_and_nothing_past_boty():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "barva:7h,8h", "dobra", "dobra", "contract:hra")
    # round 1, defence: middle then dealer; the middle player holds 7a, the trump seven
    assert d.to_move == 1
    assert set(legal_texts(d)) == {"dobra", "flek:hra", "proti:sedma", "flek:hra proti:sedma"}
    act(d, "flek:hra")
    assert d.to_move == 2 and legal_texts(d) == ["dobra", "flek:hra"]
    assert d.levels == {"hra": 0}  # counted when the round ends
    act(d, "dobra")
    assert d.levels == {"hra": 1}
    # round 2, actor: re
    assert d.to_move == 0 and legal_texts(d) == ["dobra", "flek:hra"]
    act(d, "flek:hra")
    assert d.levels == {"hra": 2}
    # round 3, defence: both say tutti -> one level
    act(d, "flek:hra", "flek:hra")
    assert d.levels == {"hra": 3}
    # round 4, actor: boty
    act(d, "flek:hra")
    assert d.levels == {"hra": 4}
    # round 5, defence: nothing past boty, yet both still speak ("even one left with no choice")
    assert d.decision == "flek" and d.to_move == 1 and legal_texts(d) == ["dobra"]
    with pytest.raises(IllegalAction) as e:
        d.apply("flek:hra")
    assert rule_of(e) == "R5.3"
    act(d, "dobra")
    assert d.to_move == 2 and legal_texts(d) == ["dobra"]
    act(d, "dobra")
    assert d.decision == "play" and d.levels == {"hra": 4}


def test_R5_3_only_what_the_other_side_raised_in_the_previous_round():
    d = make_deal(*DEAL_FULL)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra", "contract:sedma")
    act(d, "flek:hra", "dobra")
    assert d.levels == {"hra": 1, "sedma": 0}
    # the actor may re the hra only: the sedma was not raised
    assert legal_texts(d) == ["dobra", "flek:hra"]
    with pytest.raises(IllegalAction) as e:
        d.apply("flek:sedma")
    assert rule_of(e) == "R5.3"
    with pytest.raises(IllegalAction) as e:
        d.apply("flek:hra,sedma")
    assert rule_of(e) == "R5.3"


def test_R5_3_each_component_separately_and_set_answers():
    d = make_deal(*DEAL_FULL)
    act(d, "trump:Al", "barva:7h,7b", "dobra", "dobra", "contract:sedma")
    # first round: each defender may raise either or both ("flek na obojí")
    assert set(legal_texts(d)) == {"dobra", "flek:hra", "flek:sedma", "flek:hra,sedma"}
    act(d, "flek:hra", "flek:sedma")
    assert d.levels == {"hra": 1, "sedma": 1}
    assert set(legal_texts(d)) == {"dobra", "flek:hra", "flek:sedma", "flek:hra,sedma"}
    act(d, "flek:sedma")  # re on the sedma only
    assert d.levels == {"hra": 1, "sedma": 2}
    # the defence may now raise only the sedma
    assert set(legal_texts(d)) == {"dobra", "flek:sedma"}
    with pytest.raises(IllegalAction) as e:
        d.apply("flek:hra")
    assert rule_of(e) == "R5.3"
    act(d, "dobra", "dobra")
    assert d.decision == "play" and d.levels == {"hra": 1, "sedma": 2}


def test_R5_3_both_defenders_raising_one_component_raise_it_one_level():
    d = make_deal(*DEAL_A)
    act(d, "trump:Ua", "barva:7h,8h", "dobra", "dobra", "contract:hra", "flek:hra", "flek:hra")
    assert d.levels == {"hra": 1}
    act(d, "dobra")
    assert d.decision == "play"


def test_R5_3_speaking_starts_after_the_actor():
    # forhont seat 2: the defence speaks seat 0 then seat 1
    d = make_deal(*DEAL_A, forhont=2)
    act(d, "trump:Ua", "barva:7h,8h", "dobra", "dobra", "contract:hra")
    assert d.to_move == 0
    act(d, "flek:hra")
    assert d.to_move == 1
    act(d, "dobra")
    assert d.to_move == 2


# ---------------------------------------------------------------- R5.4 betl and durch

@pytest.mark.parametrize("kind", ["betl", "durch"])
def test_R5_4_betl_durch_flek_re_tutti_boty(kind):
    d = nb_game(kind, *DEAL_A, talon="7h 8h", trump="Ua", fleks=())
    assert d.decision == "flek" and d.to_move == 1
    assert legal_texts(d) == ["dobra", f"flek:{kind}"]
    act(d, "dobra", f"flek:{kind}")  # one defender's flek is enough
    assert d.levels == {kind: 1} and d.to_move == 0
    act(d, f"flek:{kind}")  # re
    act(d, f"flek:{kind}", "dobra")  # tutti
    act(d, f"flek:{kind}")  # boty
    assert d.levels == {kind: 4}
    assert legal_texts(d) == ["dobra"]
    act(d, "dobra", "dobra")
    assert d.decision == "play" and d.to_move == 0  # R7.1 the actor leads


def test_R5_4_actor_dobra_ends_the_raising():
    d = nb_game("betl", *DEAL_A, talon="7h 8h", trump="Ua", fleks=("flek:betl", "dobra", "dobra"))
    assert d.levels == {"betl": 1} and d.decision == "play"


def test_trump_card_view_keeps_card_identity():
    # the contract shows the trump card: it is the same card the forhont chose
    d = trump_game(*DEAL_A, trump="Xa", talon="7h 8h", contract="hra", fleks=("flek:hra", "dobra", "dobra"))
    assert d.trump_card == Card.parse("Xa") and d.view(2)["trump_card"] == "Xa"
