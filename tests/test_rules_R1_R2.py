"""Seats, partie, shuffle, collecting, cut and dealing (RULES.md R1.4-R1.6, R2).

Expected decks are written out by hand: each pile bottom to top as R2.3 builds
it, the piles stacked forhont, middle, dealer, and the deck read from the top.
"""

from __future__ import annotations

import pytest

from referee.rules.cards import CARDS, Card, parse_cards
from referee.rules.deal import Deal
from referee.rules.partie import (
    CUT_RANGE, DEALS_PER_PARTIE, Partie, cut, deck_from_hands, forhont_of, next_deck, shuffled_deck,
)

from .builders import (
    BETL, HRA_WON, LAY_TRUMP, SEVEN_ON_TABLE, TICHE_STO, act, bid, codes, deck, hand_codes, make_deal, nb_game,
    play,
)


def top_first(*piles_bottom_to_top: str) -> list[str]:
    """The deck read from the top, given the piles (forhont, middle, dealer) bottom to top."""
    stack = " ".join(piles_bottom_to_top).split()
    return stack[::-1]


def concede_everything(d: Deal):
    """A chooser for Partie.play: every deal a conceded hra (the quickest deal)."""
    if d.decision == "trump":
        return "trump:zlidu"
    if d.decision == "talon":
        return next(a for a in d.legal_actions() if a.kind == "barva")
    if d.decision == "contract":
        return "contract:hra"
    return "dobra"


# ---------------------------------------------------------------- R1

@pytest.mark.parametrize("forhont", [0, 1, 2])
def test_R1_5_seats_dealer_forhont_middle(forhont):
    d = Deal(shuffled_deck(1), forhont)
    assert d.forhont == forhont
    assert d.middle == (forhont + 1) % 3
    assert d.dealer == (forhont + 2) % 3
    assert len(d.hands[forhont]) == 12 and len(d.hands[d.middle]) == 10 and len(d.hands[d.dealer]) == 10
    # speaking goes clockwise: the forhont first, then the middle player
    assert d.to_move == forhont


def test_R1_5_play_goes_clockwise():
    d = bid(HRA_WON, forhont=2)
    play(d, "Aa 7a Oa / Xa Ka 7b")
    assert d.tricks[0][0] == 2 and d.trick_seats == []
    # each trick: leader, then the next seats clockwise
    for leader, cards, winner in d.tricks:
        assert winner == 2
    d.apply("play:Al")
    assert d.trick_seats == [2] and d.to_move == 0


def test_R1_6_actor_against_the_defence():
    d = bid(HRA_WON)
    assert d.actor == 0 and d.defenders() == (1, 2)
    d = make_deal(*HRA_WON["hands"], forhont=1)
    act(d, "trump:Ua", "barva:7h,8h", "spatna", "betl:Ka,Xh")
    # the middle player (seat 2) took the game over
    assert d.actor == 2 and d.defenders() == (0, 1)


def test_R1_4_ninety_points_in_every_played_trump_game():
    for entry in (HRA_WON, TICHE_STO, SEVEN_ON_TABLE):
        d = bid(entry)
        play(d, entry["play"])
        assert sum(d.points) == 90  # 80 in cards + 10 for the last trick
        # the last trick's 10 went to its winner
        winner = d.tricks[-1][2]
        assert d.points[winner] >= 10


# ---------------------------------------------------------------- R2.1 partie

def test_R2_1_twelve_deals_dealer_moves_clockwise():
    p = Partie(seed=7).play(concede_everything)
    assert len(p.deals) == DEALS_PER_PARTIE == 12 and p.done
    assert [d.forhont for d in p.deals] == [0, 1, 2] * 4
    assert [forhont_of(i) for i in range(12)] == [0, 1, 2] * 4
    # deal 1: seat 0 forhont, seat 2 deals; the forhont of one deal deals the next
    assert p.deals[0].dealer == 2
    for a, b in zip(p.deals, p.deals[1:]):
        assert b.dealer == a.forhont
    assert sorted(d.dealer for d in p.deals) == [0] * 4 + [1] * 4 + [2] * 4


def test_R2_1_next_deal_only_after_the_current_one():
    p = Partie(seed=1)
    p.next_deal()
    with pytest.raises(ValueError):
        p.next_deal()


# ---------------------------------------------------------------- R2.2 shuffle

def test_R2_2_shuffled_only_before_the_first_deal():
    a, b = shuffled_deck(11), shuffled_deck(11)
    assert a == b and sorted(a) == list(CARDS)
    assert shuffled_deck(12) != a
    p = Partie(seed=11)
    assert p.initial_deck == a
    d1 = p.next_deal()
    assert d1.deck == a and p.cuts == [None]  # no cut before deal 1 (R2.5)
    while not d1.done:
        d1.apply(concede_everything(d1))
    d2 = p.next_deal(k=5)
    # deal 2 is collected and cut, never reshuffled
    assert d2.deck == cut(d1.collected_deck(), 5) == next_deck(d1, 5)
    assert p.cuts == [None, 5]


def test_R2_2_given_initial_deck_is_used_as_is():
    order = list(reversed(CARDS))
    p = Partie(order)
    assert p.next_deal().deck == order


# ---------------------------------------------------------------- R2.3 collecting

def test_R2_3_unplayed_deal_talon_under_the_forhonts_hand():
    d = bid(HRA_WON, "hra", ("dobra", "dobra"))  # conceded: nothing played
    assert d.result.kind == "conceded"
    # forhont (seat 0): talon in discard order 7h 8h, then his hand in hand order
    forhont = "7h 8h  Aa Xa Ua 9a 8a Ah Xb Al Ul 7l"
    middle = "Ka 7a Xh Kh 9h Ab Kb 9b Xl Kl"
    dealer = "Oa Oh Uh Ob Ub 8b 7b Ol 9l 8l"
    assert [codes(p) for p in d.piles()] == [forhont.split(), middle.split(), dealer.split()]
    assert codes(d.collected_deck()) == top_first(forhont, middle, dealer)
    assert codes(d.collected_deck())[:3] == ["8l", "9l", "Ol"]  # the dealer's pile is on top


def test_R2_3_piles_stacked_from_the_forhont_whatever_his_seat():
    d = bid(HRA_WON, "hra", ("dobra", "dobra"), forhont=1)
    forhont = "7h 8h  Aa Xa Ua 9a 8a Ah Xb Al Ul 7l"  # seat 1
    middle = "Ka 7a Xh Kh 9h Ab Kb 9b Xl Kl"         # seat 2
    dealer = "Oa Oh Uh Ob Ub 8b 7b Ol 9l 8l"         # seat 0
    assert codes(d.piles()[1]) == forhont.split() and codes(d.piles()[0]) == dealer.split()
    assert codes(d.collected_deck()) == top_first(forhont, middle, dealer)


def test_R2_3_played_trump_game_tricks_in_order_taken():
    d = bid(TICHE_STO)
    play(d, TICHE_STO["play"])
    # forhont: talon 8h 7b, then the tricks he took (1-6, 8, 9, 10), each in play order;
    # the middle player took trick 7; the dealer none
    forhont = ("8h 7b  Al 8l 7l  Xl Ul 7a  Kl 8a Ua  Ol 8b Ub  9l 9b Ob  Ah 9h Uh  Xb Kb Ab  Aa 9a Oa"
               "  7h Xa Ka")
    middle = "Kh Xh Oh"
    assert [codes(p) for p in d.piles()] == [forhont.split(), middle.split(), []]
    assert codes(d.collected_deck()) == top_first(forhont, middle, "")


def test_R2_3_betl_ended_early_hands_on_top():
    d = nb_game("betl", *BETL["hands"], talon="9a Al")
    play(d, BETL["lost"])
    # actor (forhont): talon 9a Al, the trick he took (D Kh, F Ah, M Uh), his hand
    forhont = "9a Al  Kh Ah Uh  8h 9h 7l 8l 7b 8b 7a 8a"
    middle = "9l Xl Ul 9b Xb Ub Xa Ua"
    dealer = "7h Xh Oh  Ol Kl Ob Kb Ab Oa Ka Aa"
    assert [codes(p) for p in d.piles()] == [forhont.split(), middle.split(), dealer.split()]
    assert codes(d.collected_deck()) == top_first(forhont, middle, dealer)


def test_R2_3_talon_under_whoever_discarded_it_last():
    d = make_deal(*HRA_WON["hands"])
    act(d, "trump:Ua", "barva:7h,8h", "spatna", "betl:Ka,Xh", "dobra", "dobra")
    d.fault(2, "timeout")  # the betl stands; cards never played
    # the middle player took 7h 8h (appended) and discarded Ka Xh: his pile starts with them
    forhont = "Aa Xa Ua 9a 8a Ah Xb Al Ul 7l"
    middle = "Ka Xh  7a Kh 9h Ab Kb 9b Xl Kl 7h 8h"
    dealer = "Oa Oh Uh Ob Ub 8b 7b Ol 9l 8l"
    assert [codes(p) for p in d.piles()] == [forhont.split(), middle.split(), dealer.split()]
    assert codes(d.collected_deck()) == top_first(forhont, middle, dealer)


def test_R2_3_fault_cards_on_the_table_go_back_to_their_players():
    d = bid(HRA_WON)
    play(d, "Aa 7a Oa / Xa Ka")
    d.fault(2, "timeout")
    assert hand_codes(d, 0)[-1] == "Xa" and hand_codes(d, 1)[-1] == "Ka"
    forhont = "7h 8h  Aa 7a Oa  Ua 9a 8a Ah Xb Al Ul 7l Xa"
    middle = "Xh Kh 9h Ab Kb 9b Xl Kl Ka"
    dealer = "Oh Uh Ob Ub 8b 7b Ol 9l 8l"
    assert [codes(p) for p in d.piles()] == [forhont.split(), middle.split(), dealer.split()]


def test_R2_3_piles_only_once_the_deal_is_over():
    d = bid(HRA_WON)
    with pytest.raises(ValueError):
        d.piles()


# ---------------------------------------------------------------- R2.4 laid cards

def test_R2_4_laid_trump_game_one_more_pile_for_the_actor():
    d = bid(LAY_TRUMP)
    play(d, LAY_TRUMP["play"])
    d.apply("lay")
    # talon, trick 1, then the laid pile: his hand, then the middle player's, then the dealer's
    forhont = ("7h 8h  Al 7l 7a  Xl Kl Ol Ul 9l 8l Ah Ab Aa  Xh 9h Uh Oh Kh Xb 9b 8b 7b"
               "  Ub Ob Kb 8a 9a Ua Oa Ka Xa")
    assert [codes(p) for p in d.piles()] == [forhont.split(), [], []]
    assert codes(d.collected_deck()) == forhont.split()[::-1]


def test_R2_4_laid_during_a_trick_table_cards_first():
    d = bid(SEVEN_ON_TABLE)
    play(d, SEVEN_ON_TABLE["play"].rsplit(" / ", 1)[0])
    play(d, "7l Xl")
    d.apply("lay")
    deck_ = codes(d.collected_deck())
    # the laid pile 7l Xl Al tops the forhont's pile; the middle player took trick 9
    # (D Ua, F Aa, M Kl) and the dealer tricks 5 and 8
    dealer = "Ab 9b Ul  Ah 9h Ol"
    middle = "Ua Aa Kl"
    assert deck_[:9] == top_first("", middle, dealer)
    assert deck_[9:12] == ["Al", "Xl", "7l"]
    assert deck_[-2:] == ["9l", "8l"]  # the talon at the bottom


def test_R2_4_laid_betl_cards_stay_in_the_hands():
    d = nb_game("betl", *BETL["hands"], talon="Ah Al")
    play(d, "7h Xh Oh / Ol")
    d.apply("lay")
    forhont = "Ah Al  8h 9h 7l 8l 7b 8b 7a 8a 9a"
    middle = "Uh 9l Xl Ul 9b Xb Ub Xa Ua"
    dealer = "7h Xh Oh  Kh Kl Ob Kb Ab Oa Ka Aa Ol"  # Ol from the table, appended
    assert [codes(p) for p in d.piles()] == [forhont.split(), middle.split(), dealer.split()]
    assert codes(d.collected_deck()) == top_first(forhont, middle, dealer)


# ---------------------------------------------------------------- R2.5 cut

def test_R2_5_cut_lifts_k_from_the_top_to_the_bottom():
    d = [Card(i) for i in range(32)]
    assert cut(d, 2) == d[2:] + d[:2]
    assert cut(d, 30) == d[30:] + d[:30]
    assert codes(cut(parse_cards(" ".join(str(c) for c in d)), 3)[:2]) == ["Xh", "Uh"]
    for k in (0, 1, 31, 32):
        with pytest.raises(ValueError, match="R2.5"):
            cut(d, k)
    assert CUT_RANGE == (2, 30)


def test_R2_5_partie_cuts_drawn_in_range_and_logged():
    p = Partie(seed=3).play(concede_everything)
    assert p.cuts[0] is None
    assert all(2 <= k <= 30 for k in p.cuts[1:])
    for prev, nxt, k in zip(p.deals, p.deals[1:], p.cuts[1:]):
        assert nxt.deck == cut(prev.collected_deck(), k)
    # the same seed draws the same cuts
    assert Partie(seed=3).play(concede_everything).cuts == p.cuts


# ---------------------------------------------------------------- R2.6 dealing

@pytest.mark.parametrize("forhont", [0, 1, 2])
def test_R2_6_blocks_of_7_5_5_5_5_5(forhont):
    deck_ = shuffled_deck(5)
    d = Deal(deck_, forhont)
    m, dl = (forhont + 1) % 3, (forhont + 2) % 3
    assert d.hands[forhont] == deck_[0:7] + deck_[17:22]
    assert d.hands[m] == deck_[7:12] + deck_[22:27]
    assert d.hands[dl] == deck_[12:17] + deck_[27:32]
    # z lidu: the 18th card from the top
    act(d, "trump:zlidu")
    assert d.trump_card == deck_[17]


@pytest.mark.parametrize("forhont", [0, 1, 2])
def test_R2_6_deck_from_hands_is_the_inverse(forhont):
    hands = HRA_WON["hands"]
    d = make_deal(*hands, forhont=forhont)
    assert hand_codes(d, forhont) == hands[0].split()
    assert hand_codes(d, (forhont + 1) % 3) == hands[1].split()
    assert hand_codes(d, (forhont + 2) % 3) == hands[2].split()
    assert deck_from_hands({s: d.hands[s] for s in range(3)}, forhont) == d.deck
    assert deck(*hands, forhont=forhont) == d.deck


def test_R2_6_deck_from_hands_rejects_bad_hands():
    f, m, dl = (h.split() for h in HRA_WON["hands"])
    with pytest.raises(ValueError, match="R2.6"):
        deck_from_hands({0: f[:11], 1: m + f[11:], 2: dl}, 0)
    with pytest.raises(ValueError, match="R1.1"):
        deck_from_hands({0: f, 1: m[:-1] + [f[0]], 2: dl}, 0)
    with pytest.raises(ValueError, match="R1.5"):
        deck_from_hands({0: f, 1: m}, 0)


def test_R2_6_hand_order_talon_appended_discards_leave():
    d = make_deal(*HRA_WON["hands"])
    act(d, "trump:Xa", "barva:9a,7h")
    # the trump card keeps its place; the discards simply leave the order
    assert hand_codes(d, 0) == "Aa Xa Ua 8a Ah 8h Xb Al Ul 7l".split()
    act(d, "spatna")
    assert hand_codes(d, 1) == "Ka 7a Xh Kh 9h Ab Kb 9b Xl Kl 9a 7h".split()


# ---------------------------------------------------------------- R2.7 what lay together

def _cyclic_run(deck_: list[Card], cards) -> bool:
    """Are ``cards`` consecutive in ``deck_`` (cyclically, as the cut only rotates)?"""
    pos = sorted(deck_.index(c) for c in cards)
    n = len(deck_)
    gaps = [(pos[(i + 1) % len(pos)] - pos[i]) % n for i in range(len(pos))]
    return sorted(gaps)[:-1] == [1] * (len(pos) - 1)


def test_R2_7_tricks_and_hands_arrive_together():
    d = bid(TICHE_STO)
    play(d, TICHE_STO["play"])
    for k in range(2, 31):
        nxt = next_deck(d, k)
        for _, cards, _ in d.tricks:
            assert _cyclic_run(nxt, cards)
        assert _cyclic_run(nxt, d.talon)
    # an unplayed hand stays together too
    d = bid(HRA_WON, "hra", ("dobra", "dobra"))
    for k in (2, 17, 30):
        assert _cyclic_run(next_deck(d, k), d.hands[1])


def test_R2_7_every_partie_starts_from_a_shuffle():
    a = Partie(seed="x").play(concede_everything)
    b = Partie(seed="y")
    assert b.initial_deck == shuffled_deck("y") != a.deals[-1].collected_deck()
