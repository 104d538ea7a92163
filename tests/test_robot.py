"""The built-in robot: R11 raising exactly (each clause met and just missed), legality,
determinism, laying (R8.4) and a few recognisable heuristics.

Deals are built from explicit hands with ``referee.rules.partie.deck_from_hands`` (the
inverse of the 7-5-5-5-5-5 deal, R2.6) and driven through the engine, so the robot
sees exactly the view and the legal texts a protocol bot would receive.
"""

from __future__ import annotations

import json
import random

from hypothesis import given, settings, strategies as st

import bots
from bots.robot import Robot
from referee.rules.actions import parse_action
from referee.rules.cards import CARDS, parse_cards
from referee.rules.deal import Deal
from referee.rules.partie import deck_from_hands, shuffled_deck

# ---------------------------------------------------------------- building deals


def build(forhont: str, middle: str = "", dealer: str = "") -> Deal:
    """Seat 0 is the forhont (12 cards), seat 1 the middle player, seat 2 the dealer
    (10 each).  Hands given short are filled up with the remaining cards in code
    order: the forhont first, then the middle player, then the dealer."""
    fixed = [parse_cards(forhont), parse_cards(middle), parse_cards(dealer)]
    used = {c for h in fixed for c in h}
    assert len(used) == sum(len(h) for h in fixed), "a card is given twice"
    rest = [c for c in CARDS if c not in used]
    for seat, size in ((0, 12), (1, 10), (2, 10)):
        while len(fixed[seat]) < size:
            fixed[seat].append(rest.pop(0))
    assert not rest
    return Deal(deck_from_hands({0: fixed[0], 1: fixed[1], 2: fixed[2]}, 0), 0)


def barva_discards(deal: Deal, trump_card: str, keep: str = "") -> str:
    """Two cards the forhont may discard for Barva: no A/X, not the trump card,
    none of ``keep``; taken from the end of his hand."""
    keep_set = set(keep.split()) | {trump_card}
    free = [str(c) for c in deal.hands[0] if str(c)[0] not in "AX" and str(c) not in keep_set]
    assert len(free) >= 2, "the forhont has nothing to discard"
    return f"{free[-1]},{free[-2]}"


def trump_game(forhont: str, middle: str = "", dealer: str = "", *, trump: str, contract: str = "hra",
               keep: str = "", then: tuple[str, ...] = ()) -> Deal:
    """Bid a trump game to the raising rounds: trump card, Barva, both dobrá, the contract,
    then the answers ``then``."""
    d = build(forhont, middle, dealer)
    d.apply("trump:" + trump)
    d.apply("barva:" + barva_discards(d, trump, keep))
    for t in ("dobra", "dobra", "contract:" + contract, *then):
        d.apply(t)
    return d


def nb_game(kind: str, forhont: str, middle: str = "", dealer: str = "", *, trump: str, talon: str,
            then: tuple[str, ...] = ()) -> Deal:
    """The forhont announces betl or durch at once; for betl both answer dobrá."""
    d = build(forhont, middle, dealer)
    d.apply("trump:" + trump)
    d.apply(f"{kind}:{talon}")
    if kind == "betl":
        d.apply("dobra")
        d.apply("dobra")
    for t in then:
        d.apply(t)
    return d


def robot_says(deal: Deal) -> str:
    legal = [str(a) for a in deal.legal_actions()]
    choice = Robot().decide(deal.decision, deal.view(deal.to_move), legal)
    assert choice in legal
    return choice


def raised(deal: Deal) -> tuple[set[str], set[str]]:
    """The robot's flek answer as (components raised, games against announced)."""
    assert deal.decision == "flek"
    a = parse_action(robot_says(deal))
    return set(a.words), set(a.proti)


# Seat 1 (the middle player, the first defender to speak) is the robot under test
# in the defence clauses; trumps are zelené (l) unless said otherwise.  The
# forhont's hand names the cards that must be his; the rest is filled in.

# ---------------------------------------------------------------- R11.1 defender fleks


def test_R11_1_hra_flek_with_a_hlaska_and_not_without():
    # two trumps, two aces-and-tens, a hláška in kule (not trumps)
    meets = trump_game("Ul Ol Kl Al Xl 9l", "7l 8l Ab Xh Kb Ob 7h 8h 9h 7a", trump="Ul")
    assert raised(meets) == ({"hra"}, set())
    # the same but the K of kule replaced by the U: no hláška
    misses = trump_game("Ol Kl Al Xl 9l Kb", "7l 8l Ab Xh Ub Ob 7h 8h 9h 7a", trump="Ol")
    assert raised(misses) == (set(), set())


def test_R11_1_hra_flek_with_three_trumps_and_not_two():
    meets = trump_game("Ul Ol Kl Al Xl", "7l 8l 9l 7h 8h 9h Uh 7b 8b 9b", trump="Ul")
    assert raised(meets) == ({"hra"}, set())
    misses = trump_game("Ul Ol Kl Al Xl 9l", "7l 8l 7h 8h 9h Uh 7b 8b 9b 7a", trump="Ul")
    assert raised(misses) == (set(), set())


def test_R11_1_hra_flek_with_three_aces_and_tens_and_not_two():
    meets = trump_game("Ul Ol Kl Al Xl 9l 8l 7l", "Ah Xh Ab 7h 8h 9h 7b 8b 9b 7a", trump="Ul")
    assert raised(meets) == ({"hra"}, set())
    misses = trump_game("Ul Ol Kl Al Xl 9l 8l 7l", "Ah Xh 8a 7h 8h 9h 7b 8b 9b 7a", trump="Ul")
    assert raised(misses) == (set(), set())


def test_R11_1_hra_within_sedma_and_sedma_flek_with_three_trumps():
    # sedma: the hra and the sedma are fleked with three trumps
    meets = trump_game("7l Ol Kl Al Xl", "Ul 8l 9l 7h 8h 9h Uh 7b 8b 9b", trump="7l", contract="sedma")
    assert raised(meets) == ({"hra", "sedma"}, set())
    # two trumps and three aces-and-tens: the hra of the sedma only
    hra_only = trump_game("7l Ol Kl Al Xl 9l", "Ul 8l Ah Xh Ab 9h Uh 7b 8b 9b", trump="7l", contract="sedma")
    assert raised(hra_only) == ({"hra"}, set())
    misses = trump_game("7l Ol Kl Al Xl 9l", "Ul 8l 7h 8h 9h Uh 7b 8b 9b 7a", trump="7l", contract="sedma")
    assert raised(misses) == (set(), set())


def test_R11_1_sto_flek_with_four_trumps_or_four_aces_and_tens():
    fh = "Kl Ol Al Xl"
    four_trumps = trump_game(fh, "7l 8l 9l Ul 7h 8h 9h 7b 8b 9b", trump="Kl", contract="sto", keep="Ol")
    assert raised(four_trumps) == ({"sto"}, set())
    four_ax = trump_game(fh, "Ah Xh Ab Xb 7h 8h 9h 7b 8b 9b", trump="Kl", contract="sto", keep="Ol")
    assert raised(four_ax) == ({"sto"}, set())
    three_and_three = trump_game(fh, "7l 8l 9l Ah Xh Ab 8h 9h 7b 8b", trump="Kl", contract="sto", keep="Ol")
    assert raised(three_and_three) == (set(), set())


def test_R11_1_betl_flek_with_two_sevens_and_not_one():
    forhont = "8h 9h 8l 9l 8b 9b 8a 9a Uh Ol Ah Al"
    meets = nb_game("betl", forhont, "7h 7l Kh Kl Kb Ab Xb Ka Xa Aa", trump="8h", talon="Ah,Al")
    assert raised(meets) == ({"betl"}, set())
    misses = nb_game("betl", forhont, "7h Xh Kh Kl Kb Ab Xb Ka Xa Aa", trump="8h", talon="Ah,Al")
    assert raised(misses) == (set(), set())


def test_R11_1_durch_flek_with_two_aces_and_not_one():
    forhont = "Kh Oh Uh Kl Ol Ul Kb Ob Ub Ka Oa 7h"
    meets = nb_game("durch", forhont, "Ah Al 7l 8l 9l 7b 8b 9b 7a 8a", trump="Kh", talon="7h,Oa")
    assert raised(meets) == ({"durch"}, set())
    misses = nb_game("durch", forhont, "Ah Xl 7l 8l 9l 7b 8b 9b 7a 8a", trump="Kh", talon="7h,Oa")
    assert raised(misses) == (set(), set())


def test_R11_1_second_defender_judges_for_itself():
    # seat 1 says dobrá (a random bot, say); the robot on seat 2 with three trumps fleks
    d = trump_game("Ul Ol Kl Al Xl", "7h 8h 9h Uh 7b 8b 9b Ub 7a 8a", "7l 8l 9l Oh Ob 9a Ua Xh Xb Aa",
                   trump="Ul", then=("dobra",))
    assert d.to_move == 2
    assert raised(d) == ({"hra"}, set())


# ---------------------------------------------------------------- R11.2 games against


def test_R11_2_sedma_proti_with_the_seven_and_five_trumps():
    # the forhont plays hra (not sedma), so sedma proti is open to the holder of the seven
    five = trump_game("Ol Kl Al", "7l 8l 9l Xl Ul 7h 8h 9h 7b 8b", trump="Ol")
    assert raised(five) == ({"hra"}, {"sedma"})
    four = trump_game("Ol Kl Al Ul", "7l 8l 9l Xl 7h 8h 9h 7b 8b 9b", trump="Ol")
    assert "proti:sedma" in [str(x) for x in four.legal_actions()]
    assert raised(four) == ({"hra"}, set())


def test_R11_2_sedma_proti_needs_the_seven_among_the_five():
    # five trumps without the seven: no sedma proti (and none is legal)
    d = trump_game("7l Ol Kl", "8l 9l Xl Ul Al 7h 8h 9h 7b 8b", trump="Ol")
    assert raised(d)[1] == set()


def test_R11_2_sto_proti_with_trump_hlaska_and_five_aces_and_tens():
    # the trump ace counts as an ace-and-ten: Al Ah Xh Ab Xb are five
    meets = trump_game("7l 8l 9l", "Kl Ol Al Ah Xh Ab Xb 8h 9h 7b", trump="7l")
    assert raised(meets) == ({"hra"}, {"sto"})
    four_ax = trump_game("7l 8l 9l", "Kl Ol Ah Xh Ab Xb 7h 8h 9h 7b", trump="7l")
    assert raised(four_ax) == ({"hra"}, set())
    # a hláška in kule and five aces-and-tens: not in trumps, so no sto proti
    not_trumps = trump_game("7l 8l 9l", "Kb Ob Ah Xh Ab Xb Al 8h 9h 7b", trump="7l")
    assert raised(not_trumps) == ({"hra"}, set())


# ---------------------------------------------------------------- R11.3 tutti, never boty


def _re_on_hra(middle: str, forhont: str = "Ul Ol Kl Al Xl") -> Deal:
    """Defence fleks the hra (seat 1 flek, seat 2 dobrá), the forhont says re:
    seat 1 to answer."""
    d = trump_game(forhont, middle, trump="Ul", then=("flek:hra", "dobra", "flek:hra"))
    assert d.to_move == 1 and d.levels["hra"] == 2
    return d


def test_R11_3_tutti_with_a_hlaska_in_trumps():
    d = _re_on_hra("Kl Ol 7l 7h 8h 9h 7b 8b 9b 7a", forhont="Ul Al Xl 9l 8l")
    assert raised(d) == ({"hra"}, set())


def test_R11_3_tutti_with_two_hlasky_and_not_one():
    two = _re_on_hra("Kh Oh Kb Ob 7h 8h 9h 7b 8b 9b")
    assert raised(two) == ({"hra"}, set())
    one = _re_on_hra("Kh Oh Kb Ub 7h 8h 9h 7b 8b 9b")
    assert raised(one) == (set(), set())


def test_R11_3_no_tutti_on_sedma_and_never_boty():
    # a sedma re'd on both components: tutti only on the hra
    d = trump_game("7l Ul Al Xl", "Kl Ol 9l 7h 8h 9h 7b 8b 9b 7a", trump="7l", contract="sedma",
                   then=("flek:hra,sedma", "dobra", "flek:hra,sedma"))
    assert d.to_move == 1 and d.levels == {"hra": 2, "sedma": 2}
    assert raised(d) == ({"hra"}, set())
    # the actor at tutti: a robot actor never says boty, whatever it holds
    boty = trump_game("Al Xl Kl Ol Ul 9l 8l 7l Ah Ab", "Kh Oh Kb Ob 7h 8h 9h 7b 8b 9b", trump="Ul",
                      then=("flek:hra", "dobra", "flek:hra", "flek:hra", "dobra"))
    assert boty.to_move == 0 and boty.levels["hra"] == 3
    assert raised(boty) == (set(), set())


# ---------------------------------------------------------------- R11.4 the actor's re


def test_R11_4_re_on_hra_with_six_trumps_and_not_five():
    six = trump_game("Ul Ol Kl 9l 8l 7l 7h 8h 9h 7b 8b 9b", "Al Xl", trump="Ul", then=("flek:hra", "dobra"))
    assert six.to_move == 0
    assert raised(six) == ({"hra"}, set())
    five = trump_game("Ul Ol Kl 9l 8l 7h 8h 9h 7b 8b 9b Uh", "Al Xl 7l", trump="Ul", then=("flek:hra", "dobra"))
    assert raised(five) == (set(), set())


def test_R11_4_re_on_hra_with_five_trumps_ace_ten_and_four_aces_and_tens():
    meets = trump_game("Al Xl Ul 9l 8l Ah Ab 7h 8h 9h 7b 8b", "", trump="Ul", then=("flek:hra", "dobra"))
    assert raised(meets) == ({"hra"}, set())
    three_ax = trump_game("Al Xl Ul 9l 8l Ah 7h 8h 9h 7b 8b Uh", "", trump="Ul", then=("flek:hra", "dobra"))
    assert raised(three_ax) == (set(), set())
    no_ten = trump_game("Al Kl Ul 9l 8l Ah Ab Xh 8h 9h 7b 8b", "", trump="Ul", then=("flek:hra", "dobra"))
    assert raised(no_ten) == (set(), set())


def test_R11_4_re_on_sedma_with_six_trumps_including_the_seven():
    meets = trump_game("7l 8l 9l Ul Ol Kl 7h 8h 9h 7b 8b 9b", "Al Xl", trump="7l", contract="sedma",
                       then=("flek:sedma", "dobra"))
    assert raised(meets) == ({"sedma"}, set())
    five = trump_game("7l 8l 9l Ul Ol 7h 8h 9h 7b 8b 9b Uh", "Al Xl Kl", trump="7l", contract="sedma",
                      then=("flek:sedma", "dobra"))
    assert raised(five) == (set(), set())


def test_R11_4_re_on_betl_with_three_sevens_and_only_low_cards():
    forhont = "7h 7l 7b 8h 9h 8l 9l 8b 9b 8a Ah Al"
    meets = nb_game("betl", forhont, trump="8h", talon="Ah,Al", then=("flek:betl", "dobra"))
    assert meets.to_move == 0
    assert raised(meets) == ({"betl"}, set())
    a_ten = nb_game("betl", "7h 7l 7b 8h 9h 8l 9l 8b Xb 8a Ah Al", trump="8h", talon="Ah,Al",
                    then=("flek:betl", "dobra"))
    assert raised(a_ten) == (set(), set())
    two_sevens = nb_game("betl", "7h 7l 9a 8h 9h 8l 9l 8b 9b 8a Ah Al", trump="8h", talon="Ah,Al",
                         then=("flek:betl", "dobra"))
    assert raised(two_sevens) == (set(), set())


def test_R11_4_never_re_on_sto_or_durch():
    sto = trump_game("Kl Ol Al Xl Ul 9l 8l 7l Ah Ab Xb 7h", "", trump="Ul", contract="sto", keep="Kl Ol",
                     then=("flek:sto", "dobra"))
    assert sto.to_move == 0
    assert raised(sto) == (set(), set())
    durch = nb_game("durch", "Ah Kh Oh Al Kl Ol Ab Kb Ob Aa 7h 8h", trump="Ah", talon="7h,8h",
                    then=("flek:durch", "dobra"))
    assert durch.to_move == 0
    assert raised(durch) == (set(), set())


# ---------------------------------------------------------------- R11.5 the actor fleks games against


def test_R11_5_flek_on_sedma_proti_with_four_trumps_and_not_three():
    # the defender (seat 1) announces sedma proti; the forhont answers
    four = trump_game("Ul Ol Kl Al 7h 8h 9h 7b 8b 9b Uh Ub", "7l", trump="Ul", then=("proti:sedma", "dobra"))
    assert four.to_move == 0 and "sedma-proti" in four.levels
    assert raised(four) == ({"sedma-proti"}, set())
    three = trump_game("Ul Ol Kl 7h 8h 9h 7b 8b 9b Uh Ub Ob", "7l", trump="Ul", then=("proti:sedma", "dobra"))
    assert raised(three) == (set(), set())


def test_R11_5_flek_on_sto_proti_with_three_aces_and_tens_and_not_two():
    three = trump_game("Ul 9l 8l Ah Xh Ab 7h 8h 9h 7b 8b 9b", "Kl Ol", trump="Ul", then=("proti:sto", "dobra"))
    assert three.to_move == 0 and "sto-proti" in three.levels
    assert raised(three) == ({"sto-proti"}, set())
    two = trump_game("Ul 9l 8l Ah Xh Ub 7h 8h 9h 7b 8b 9b", "Kl Ol", trump="Ul", then=("proti:sto", "dobra"))
    assert raised(two) == (set(), set())


def test_R11_5_robot_defenders_never_re_the_flek_on_a_game_against():
    # seat 1 announced sedma proti with a huge hand; the actor fleked it: no re
    d = trump_game("Ul Ol Kl Al 7h 8h 9h 7b 8b 9b Uh Ub", "7l 8l 9l Xl Ah Xh Ab Xb Kb Ob", trump="Ul",
                   then=("flek:hra proti:sedma", "dobra", "flek:sedma-proti"))
    assert d.to_move == 1 and d.levels["sedma-proti"] == 1
    assert raised(d) == (set(), set())


# ---------------------------------------------------------------- legality, determinism, laying


def _play_checked(deck, forhont: int, players, rng_view_check: bool = False) -> Deal:
    d = Deal(deck, forhont)
    while not d.done:
        seat = d.to_move
        legal = [str(a) for a in d.legal_actions()]
        view = d.view(seat)
        choice = players[seat].decide(d.decision, view, legal)
        assert choice in legal, (d.decision, choice, legal)
        if isinstance(players[seat], Robot):
            if "lay" in legal:
                assert choice == "lay"  # R8.4: the robot lays whenever offered
            # same view (also after a JSON round trip, as over the protocol) -> same action
            again = Robot().decide(d.decision, json.loads(json.dumps(view)), list(legal))
            assert again == choice
        d.apply(choice)
    return d


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**9), forhont=st.integers(0, 2), randoms=st.sets(st.integers(0, 2), max_size=2))
def test_robot_always_legal_deterministic_and_lays(seed, forhont, randoms):
    players = [bots.make("random", seed=f"{seed}:{s}") if s in randoms else Robot() for s in range(3)]
    d = _play_checked(shuffled_deck(seed), forhont, players)
    assert d.result is not None and sum(d.result.payments) == 0


def test_robot_plays_whole_partie_legally():
    from referee.rules.partie import Partie
    for seed in range(3):
        partie = Partie(seed=f"robot-partie:{seed}")
        players = [Robot(), Robot(), Robot()]
        for deal in partie.iter_deals():
            while not deal.done:
                legal = [str(a) for a in deal.legal_actions()]
                choice = players[deal.to_move].decide(deal.decision, deal.view(deal.to_move), legal)
                assert choice in legal
                deal.apply(choice)
        assert sum(partie.totals()) == 0


def test_robot_lays_when_offered():
    # the forhont holds every trump and the side aces: laying is offered at once
    d = trump_game("Al Xl Kl Ol Ul 9l 8l 7l Ah Ab Aa 7h", "", trump="Ul", contract="hra",
                   then=("flek:hra", "dobra", "dobra"))
    assert d.decision == "play" and d.to_move == 0
    assert "lay" in [str(a) for a in d.legal_actions()]
    assert robot_says(d) == "lay"


def test_same_view_same_decision_across_instances():
    rng = random.Random(5)
    for k in range(30):
        d = Deal(shuffled_deck(f"det:{k}"), k % 3)
        steps = rng.randrange(0, 25)
        while not d.done and steps:
            legal = [str(a) for a in d.legal_actions()]
            d.apply(legal[rng.randrange(len(legal))])
            steps -= 1
        if d.done:
            continue
        legal = [str(a) for a in d.legal_actions()]
        view = d.view(d.to_move)
        answers = {Robot().decide(d.decision, view, legal) for _ in range(3)}
        assert len(answers) == 1


# ---------------------------------------------------------------- heuristics a player would recognise


def test_takes_z_lidu_with_weak_first_seven_and_a_long_suit_otherwise():
    weak = build("7h 8l 9b Ua Kh 8b 7a")
    assert robot_says(weak) == "trump:zlidu"
    long_suit = build("7h 8l Al Xl Kl 9b Ua")
    assert robot_says(long_suit) == "trump:8l"  # the lowest card of its longest suit (zelené)


def test_barva_discards_keep_aces_tens_trumps_and_hlasky():
    d = build("Al Xl Kl Ol 9l 8l Ah Xh Kb Ob 7a 8b")
    d.apply("trump:8l")
    choice = robot_says(d)
    assert choice.startswith("barva:")
    thrown = set(choice[6:].split(","))
    # the only non-trump cards that break nothing are 7a and 8b: making a void in žaludy
    assert thrown == {"7a", "8b"}


def test_announces_betl_and_durch_with_hands_that_cannot_lose():
    betl = build("7h 8h 7l 8l 7b 8b 9b 7a 8a 9a Ah Al")
    betl.apply("trump:7h")
    assert robot_says(betl).startswith("betl:")
    durch = build("Ah Kh Oh Uh Al Kl Ol Ab Kb Aa 7l 7b")
    durch.apply("trump:Ah")
    assert robot_says(durch).startswith("durch:")
    barva = build("Al Xl Kl Ol 9l 8l Ah Xh Kb Ob 7a 8b")
    barva.apply("trump:Al")
    assert robot_says(barva).startswith("barva:")


def test_spatna_with_a_safe_betl_hand_then_plays_betl():
    d = build("Al Xl Kl Ol Ul 9l Ah Xh Kh Ab Xb Kb", "7h 8h 7l 8l 7b 8b 9b 7a 8a 9a")
    d.apply("trump:Al")
    d.apply("barva:" + barva_discards(d, "Al"))
    assert robot_says(d) == "spatna"
    d.apply("spatna")
    assert robot_says(d).startswith("betl:")


def test_contract_sedma_with_seven_and_long_trumps_else_hra():
    seven = build("7l 8l 9l Ul Ol Al Ah Ab 7h 8h 9b 8b")
    seven.apply("trump:7l")
    seven.apply("barva:" + barva_discards(seven, "7l", keep="8l 9l Ul Ol"))
    seven.apply("dobra")
    seven.apply("dobra")
    assert robot_says(seven) == "contract:sedma"
    weak = build("7l 8l Ul Ah Ab 7h 8h 9h 9b 8b Ub Ob")
    weak.apply("trump:7l")
    weak.apply("barva:" + barva_discards(weak, "7l", keep="8l Ul"))
    weak.apply("dobra")
    weak.apply("dobra")
    assert robot_says(weak) == "contract:hra"


def test_sto_actor_declares_the_forty_first():
    d = trump_game("Kl Ol Al Xl Ul 9l Kh Oh Ah Ab Xb 7h", "", trump="Ul", contract="sto", keep="Kl Ol Kh Oh",
                   then=("flek:sto", "dobra", "dobra"))
    assert d.decision == "play" and d.to_move == 0
    assert robot_says(d) in ("play:Ol", "play:Kl")


def test_defender_smears_a_ten_onto_the_partners_sure_trick():
    # trumps žaludy; the actor (seat 0) leads 8h, the partner (seat 1) takes it with the ace;
    # seat 2 cannot beat the ace and smears its ten onto the partner's trick
    forhont = "8h 7a 8a 9a Ua Oa Ka 7l 8l 7b 8b 9b"
    middle = "Ah Xl Al Ab Xb Uh Kh Ul Ol Kl"
    dealer = "Xh 9h Oh 9l Kb Ob Ub Xa Aa 7h"
    d = build(forhont, middle, dealer)
    d.apply("trump:7a")
    d.apply("barva:9b,8b")
    for t in ("dobra", "dobra", "contract:hra", "flek:hra", "dobra", "dobra", "play:8h", "play:Ah"):
        d.apply(t)
    assert d.to_move == 2
    assert robot_says(d) == "play:Xh"


# ---------------------------------------------------------------- strength reports (marias strength)


def test_strength_rotates_seats_over_the_same_decks():
    from referee.tools import strength

    # three identical deterministic robots: every entry plays every seat of each deck,
    # so each one's total is the same, and the table sums to zero
    report = strength.run(["robot", "robot", "robot"], partie=6, seed="t")
    assert report["decks"] == 2 and report["partie"] == 6
    rows = report["results"]
    assert [r["bot"] for r in rows] == ["robot#1", "robot#2", "robot#3"]
    assert len({r["groše"] for r in rows}) == 1 and sum(r["groše"] for r in rows) == 0
    assert all(r["partie"] == 6 and r["mean_place"] == 2.0 for r in rows)


def test_strength_report_sums_to_zero_and_rounds_up_to_whole_decks():
    from referee.tools import strength

    report = strength.run(["robot", "random", "random"], partie=4, seed=3, permutations=True)
    assert report["seatings"] == "permutations" and report["decks"] == 1 and report["partie"] == 6
    rows = report["results"]
    assert sum(r["groše"] for r in rows) == 0
    assert [r["bot"] for r in rows] == ["robot", "random#1", "random#2"]
    for r in rows:
        assert r["partie"] == 6
        assert r["mean"] == round(r["groše"] / 6, 2)
    assert strength.seatings(False) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert sorted(strength.seatings(True)) == sorted(set(strength.seatings(True)))
    assert len(strength.seatings(True)) == 6


def test_strength_command_prints_json_and_a_table():
    from typer.testing import CliRunner

    from referee.cli import app

    runner = CliRunner()
    out = runner.invoke(app, ["strength", "--bot", "robot", "--bot", "random", "--bot", "random",
                              "--partie", "3", "--seed", "9", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["partie"] == 3 and len(report["results"]) == 3
    table = runner.invoke(app, ["strength", "-b", "robot", "-b", "robot", "-b", "random", "-n", "3"])
    assert table.exit_code == 0 and "95% CI" in table.output and "robot#2" in table.output
    bad = runner.invoke(app, ["strength", "-b", "robot", "-b", "nobody", "-b", "random", "-n", "3"])
    assert bad.exit_code != 0
