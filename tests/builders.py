"""Helpers to build deals from explicit hands and drive them through ``Deal.apply``.

Every test states its hands in card codes (R1.2) by role: the forhont's 12 cards,
the middle player's 10 and the dealer's 10, each in hand order (R2.6).
``referee.rules.partie.deck_from_hands`` turns them into the deck that deals them.
"""

from __future__ import annotations

from referee.rules.cards import CARDS, Card, format_cards, parse_cards
from referee.rules.deal import Deal
from referee.rules.partie import deck_from_hands


def hands_by_seat(forhont_hand: str, middle_hand: str, dealer_hand: str, forhont: int = 0) -> dict[int, list[Card]]:
    hands = {
        forhont % 3: parse_cards(forhont_hand),
        (forhont + 1) % 3: parse_cards(middle_hand),
        (forhont + 2) % 3: parse_cards(dealer_hand),
    }
    every = [c for h in hands.values() for c in h]
    if sorted(every) != list(CARDS):
        missing = [c for c in CARDS if c not in every]
        raise AssertionError(f"test hands are not the 32 cards: missing {format_cards(missing)}; "
                             f"{len(every)} cards given")
    return hands


def deck(forhont_hand: str, middle_hand: str, dealer_hand: str, forhont: int = 0) -> list[Card]:
    return deck_from_hands(hands_by_seat(forhont_hand, middle_hand, dealer_hand, forhont), forhont)


def make_deal(forhont_hand: str, middle_hand: str, dealer_hand: str, forhont: int = 0) -> Deal:
    """A fresh deal whose forhont, middle player and dealer hold exactly these cards."""
    return Deal(deck(forhont_hand, middle_hand, dealer_hand, forhont), forhont)


def act(deal: Deal, *texts: str) -> Deal:
    """Apply actions (canonical text) in order, each by whoever is to move."""
    for t in texts:
        deal.apply(t)
    return deal


def play(deal: Deal, tricks: str) -> Deal:
    """Play cards in order; ``/`` separates tricks: a group that completes three cards on
    the table must close the trick.

    ``"Al 8l 7l / Xl Ul 7a"`` plays two tricks; ``"Kl 8l"`` leaves a trick in progress
    that a later ``"Ul"`` completes.
    """
    groups = [g.split() for g in tricks.split("/") if g.strip()]
    for group in groups:
        on_table = len(deal.trick)
        assert on_table + len(group) <= 3, f"group {group} runs past the end of a trick"
        for code in group:
            deal.apply("play:" + code)
        if on_table + len(group) == 3:
            assert deal.done or not deal.trick, f"group {group} did not close a trick"
    return deal


def trump_game(forhont_hand: str, middle_hand: str, dealer_hand: str, *, trump: str, talon: str,
               contract: str = "hra", fleks: tuple[str, ...] = ("dobra", "dobra"), forhont: int = 0) -> Deal:
    """Bid a trump game up to the first lead: trump card, discard for Barva, both dobrá,
    the contract, then the raising rounds ``fleks`` (each speaker's answer in turn)."""
    d = make_deal(forhont_hand, middle_hand, dealer_hand, forhont)
    a, b = talon.split()
    act(d, "trump:" + trump, f"barva:{a},{b}", "dobra", "dobra", "contract:" + contract, *fleks)
    return d


def nb_game(kind: str, forhont_hand: str, middle_hand: str, dealer_hand: str, *, talon: str,
            trump: str | None = None, answers: tuple[str, ...] = ("dobra", "dobra"),
            fleks: tuple[str, ...] = ("dobra", "dobra"), forhont: int = 0) -> Deal:
    """The forhont announces betl or durch at once (R3.2a); ``answers`` are the betl answers
    (none for durch); ``fleks`` the raising rounds."""
    d = make_deal(forhont_hand, middle_hand, dealer_hand, forhont)
    hand = parse_cards(forhont_hand)
    a, b = talon.split()
    # the trump card is irrelevant for betl and durch; take the first card not discarded
    tc = trump or next(str(c) for c in hand[:7] if str(c) not in (a, b))
    act(d, "trump:" + tc, f"{kind}:{a},{b}")
    if kind == "betl":
        act(d, *answers)
    act(d, *fleks)
    return d


def comps(deal: Deal) -> dict[str, tuple[bool, int, str]]:
    """name -> (won by its owner, amount each defender pays or receives, owner)."""
    assert deal.result is not None, "the deal is not settled"
    return {c.name: (c.won, c.amount, c.owner) for c in deal.result.components}


def pays(deal: Deal) -> tuple[int, int, int]:
    assert deal.result is not None, "the deal is not settled"
    return tuple(deal.result.payments)


def hand_codes(deal: Deal, seat: int) -> list[str]:
    return [str(c) for c in deal.hands[seat]]


def codes(cards) -> list[str]:
    return [str(c) for c in cards]


def legal_texts(deal: Deal) -> list[str]:
    return [str(a) for a in deal.legal_actions()]


def legal_cards(deal: Deal) -> set[str]:
    return {str(a.cards[0]) for a in deal.legal_actions() if a.kind == "play"}


# ============================================================================
# A catalogue of hand-built deals used by several test modules.  Hands by role
# (forhont, middle, dealer; the forhont is seat 0 unless a test says otherwise),
# the trump card, the two discards, and a complete legal play.  In a play string
# each trick is written in play order, the leader first.  The points in the
# comments are counted by hand from RULES.md (A and X are 10, the last trick 10).
# ============================================================================

# HRA_WON -- trump žaludy (Ua). No seat holds K and O of one suit: no hlášky.
#  T1  F Aa  M 7a  D Oa   F +10        T6  M Xh  D Uh  F Ah   F +20
#  T2  F Xa  M Ka  D 7b   F +10        T7  F 9a  M 9h  D Oh   F
#  T3  F Al  M Kl  D 8l   F +10        T8  F 8a  M Kh  D Ob   F
#  T4  F Ul  M Xl  D 9l   M +10        T9  F 7l  M Kb  D Ol   D (Ol beats 7l)
#  T5  M Ab  D 8b  F Xb   M +20        T10 D Ub  F Ua  M 9b   F +10 last trick
#  Forhont 10+10+10+20+10 = 60; defence 10+20 = 30.  Hra won 60:30.  The trump
#  seven 7a fell in trick 1: no tichá sedma.
HRA_WON = dict(
    hands=("Aa Xa Ua 9a 8a Ah 7h 8h Xb Al Ul 7l", "Ka 7a Xh Kh 9h Ab Kb 9b Xl Kl", "Oa Oh Uh Ob Ub 8b 7b Ol 9l 8l"),
    trump="Ua", talon="7h 8h",
    play="Aa 7a Oa / Xa Ka 7b / Al Kl 8l / Ul Xl 9l / Ab 8b Xb / Xh Uh Ah / 9a 9h Oh / 8a Kh Ob / 7l Kb Ol / Ub Ua 9b",
)

# HRA_LOST -- trump kule (Kb); the forhont keeps the trump seven 7b to the end.
#  T1  F Ah  M 9h  D Uh   F +10        T6  F Kb  M Ab  D Ob   M +10
#  T2  F 9l  M Al  D 7l   M +10        T7  M Kh  D 7a  F 9b   F (trump)
#  T3  M Aa  D Xa  F 8a   M +20        T8  F 9a  M Oa  D Ka   D
#  T4  M Xl  D Ul  F 8l   M +10        T9  D Ua  F Ub  M Xb   M +10 (Xb over Ub)
#  T5  M Xh  D Oh  F 8b   F +10        T10 M Ol  D Kl  F 7b   F +10 last trick
#  Forhont 10+10+10 = 30; defence 10+20+10+10+10 = 60.  Hra lost 30:60.  7b takes
#  the last trick: as a contract "sedma" is won, as hra a tichá sedma won.
HRA_LOST = dict(
    hands=("Kb Ub 9b 8b 7b Ah 7h 8h 9l 8l 9a 8a", "Ab Xb Xh Kh 9h Al Xl Ol Aa Oa", "Ob Uh Oh 7l Ul Kl Xa Ka Ua 7a"),
    trump="Kb", talon="7h 8h",
    play="Ah 9h Uh / 9l Al 7l / Aa Xa 8a / Xl Ul 8l / Xh Oh 8b / Kb Ab Ob / Kh 7a 9b / 9a Oa Ka / Ua Ub Xb / Ol Kl 7b",
)

# TICHE_STO -- trump zelené (Al); hlášky: forhont Kl+Ol 40 (trick 3), dealer Kb+Ob
# 20 (trick 5) and Ka+Oa 20 (trick 9).
#  T1  F Al  M 8l  D 7l   F +10        T6  F Ah  M 9h  D Uh   F +10
#  T2  F Xl  M Ul  D 7a   F +10        T7  F Kh  M Xh  D Oh   M +10
#  T3  F Kl  M 8a  D Ua   F (40)       T8  M Xb  D Kb  F Ab   F +20
#  T4  F Ol  M 8b  D Ub   F            T9  F Aa  M 9a  D Oa   F +10 (D: 20)
#  T5  F 9l  M 9b  D Ob   F (D: 20)    T10 F 7h  M Xa  D Ka   F +10 +10 last
#  Forhont cards 80, + 40 = 120; defence 10 + 20 + 20 = 50.  Tiché sto: 120 >= 100.
TICHE_STO = dict(
    hands=("Al Xl Kl Ol 9l Ah Kh Ab Aa 7h 8h 7b", "Ul 8l Xh 9h Xb 9b 8b Xa 9a 8a", "7l Oh Uh Kb Ob Ub Ka Oa Ua 7a"),
    trump="Al", talon="8h 7b",
    play="Al 8l 7l / Xl Ul 7a / Kl 8a Ua / Ol 8b Ub / 9l 9b Ob / Ah 9h Uh / Kh Xh Oh / Xb Kb Ab / Aa 9a Oa / 7h Xa Ka",
)

# SEDMA_RED -- trump červené (the trump card is the forhont's only heart, 7h; he
# discards 8h 9h).  The dealer holds Xh Uh Kh Ah, the middle player Oh.
# SEDMA_RED["play"]: the seven is beaten in the last trick.
#  T1  F Al  M 7l  D Ul   F +10        T6  F Xb  M 9b  D Kh   D +10 (trumps)
#  T2  F Xl  M 8l  D Ol   F +10        T7  D Ua  F Ka  M 7a   F
#  T3  F Kl  M 9l  D Uh   D (trumps)   T8  F Aa  M 8a  D Oa   F +10
#  T4  D Ub  F Kb  M 7b   F            T9  F Xa  M 9a  D Xh   D +20
#  T5  F Ab  M 8b  D Ob   F +10        T10 D Ah  F 7h  M Oh   D +10 +10 last
#  Forhont 40, defence 50: hra lost; the seven played in trick 10 is beaten by Ah.
# SEDMA_RED["early"]: the dealer leads Ah in trick 4; 7h is the forhont's only heart,
# so it is forced out (R7.4) and the sedma is lost at once.
#  T1-T3 as above; T4 D Ah F 7h M Oh  D +10;  T5 D Ub F Kb M 7b  F;
#  T6 F Ab M 8b D Ob  F +10;  T7 F Xb M 9b D Kh  D +10;  T8 D Ua F Ka M 7a  F;
#  T9 F Aa M 8a D Oa  F +10;  T10 F Xa M 9a D Xh  D +20 +10 last.
#  Forhont 10+10+10+10 = 40, defence 10+10+30 = 50: hra lost.
SEDMA_RED = dict(
    hands=("7h Al Xl Kl Ab Xb Kb Aa Xa Ka 8h 9h", "Oh 7l 8l 9l 7b 8b 9b 7a 8a 9a", "Xh Uh Kh Ah Ul Ol Ub Ob Ua Oa"),
    trump="7h", talon="8h 9h",
    play="Al 7l Ul / Xl 8l Ol / Kl 9l Uh / Ub Kb 7b / Ab 8b Ob / Xb 9b Kh / Ua Ka 7a / Aa 8a Oa / Xa 9a Xh / Ah 7h Oh",
    early="Al 7l Ul / Xl 8l Ol / Kl 9l Uh / Ah 7h Oh / Ub Kb 7b / Ab 8b Ob / Xb 9b Kh / Ua Ka 7a / Aa 8a Oa / Xa 9a Xh",
)

# STO_RED -- trump červené (Oh); the forhont holds Kh+Oh (40).
#  T1  F Ah  M 7h  D 9h   F +10        T6  F Xl  M 7a  D Kl   F +10
#  T2  F Kh  M 8h  D Uh   F (40)       T7  F Ab  M Kb  D 8b   F +10
#  T3  F Xh  M 8l  D 8a   F +10        T8  F Xb  M 9a  D Ub   F +10
#  T4  F Oh  M 9l  D Ka   F            T9  F Aa  M Oa  D Ua   F +10
#  T5  F Al  M Ol  D Ul   F +10        T10 F 9b  M Xa  D Ob   D +10 +10 last
#  Forhont cards 70 (no last trick) + 40 = 110; defence 20.
STO_RED = dict(
    hands=("Ah Xh Kh Oh Al Xl 9b Ab Xb Aa 7l 7b", "7h 8h 8l 9l Ol Kb 7a 9a Oa Xa", "9h Uh Ul Kl 8b Ub Ob 8a Ua Ka"),
    trump="Oh", talon="7l 7b",
    play="Ah 7h 9h / Kh 8h Uh / Xh 8l 8a / Oh 9l Ka / Al Ol Ul / Xl 7a Kl / Ab Kb 8b / Xb 9a Ub / Aa Oa Ua / 9b Xa Ob",
)

# STO_ORDER -- trump zelené (Al); the forhont holds Kl+Ol (40) and Kh+Oh (20).
# "twenty_first": Kh in trick 2 (20 first), Kl in trick 3 (40); "forty_first": the
# other way round.  Either way the same cards fall:
#  T1  F Al  M 7l  D 9l   F +10        T6  F Xh  M 9a  D Ua   F +10
#  T2  F K?  ...          F            T7  F Aa  M Oa  D Ka   F +10
#  T3  F K?  ...          F            T8  F Oh  M Kb  D Ob   F
#  T4  F Xl  M 8b  D 8a   F +10        T9  F Ol  M Ab  D Xb   F +20
#  T5  F Ah  M 7a  D Uh   F +10        T10 F 9b  M Xa  D Ub   D +10 +10 last
#  Forhont cards 70 (no last trick); hlášky 20 + 40 = 60; defence 20.
STO_ORDER = dict(
    hands=("Al Xl Kl Ol Ah Xh Kh Oh Aa 9b 7h 7b", "7l 8l 8h Ab Kb 8b 7a 9a Xa Oa", "9l Ul 9h Uh Xb Ub Ob 8a Ua Ka"),
    trump="Al", talon="7h 7b",
    twenty_first="Al 7l 9l / Kh 8h 9h / Kl 8l Ul / Xl 8b 8a / Ah 7a Uh / Xh 9a Ua / Aa Oa Ka / Oh Kb Ob / Ol Ab Xb / 9b Xa Ub",
    forty_first="Al 7l 9l / Kl 8l Ul / Kh 8h 9h / Xl 8b 8a / Ah 7a Uh / Xh 9a Ua / Aa Oa Ka / Oh Kb Ob / Ol Ab Xb / 9b Xa Ub",
)

# STO_SEDMA -- trump zelené (Al); the forhont holds 7l, Kl+Ol (40) and Kh+Oh (20).
#  T1  F Al  M 8l  D 9l   F +10        T6  F Xh  M 9a  D Ua   F +10
#  T2  F Kl  M 9b  D Ul   F (40)       T7  F Aa  M Oa  D Ka   F +10
#  T3  F Kh  M 8h  D 9h   F (20)       T8  F Oh  M Kb  D Ob   F
#  T4  F Xl  M 8b  D 8a   F +10        T9  F Ol  M Ab  D Xb   F +20
#  T5  F Ah  M 7a  D Uh   F +10        T10 F 7l  M Xa  D Ub   F +10 +10 last
#  Forhont cards 90, first hláška 40, all hlášky 60; 7l takes the last trick.
STO_SEDMA = dict(
    hands=("Al Xl Kl Ol Ah Xh Kh Oh Aa 7l 7h 7b", "9b 8l 8h Ab Kb 8b 7a 9a Xa Oa", "9l Ul 9h Uh Xb Ub Ob 8a Ua Ka"),
    trump="Al", talon="7h 7b",
    play="Al 8l 9l / Kl 9b Ul / Kh 8h 9h / Xl 8b 8a / Ah 7a Uh / Xh 9a Ua / Aa Oa Ka / Oh Kb Ob / Ol Ab Xb / 7l Xa Ub",
)

# SEDMA_PROTI -- trump kule (Ab); the dealer holds the trump seven 7b (+ 8b 9b Kb).
# "play": the dealer keeps 7b and takes the last trick with it.
#  T1  F Ab  M Ub  D 8b   F +10        T6  F Al  M 9l  D Ol   F +10
#  T2  F Xb  M Ob  D 9b   F +10        T7  F Aa  M 7a  D 9a   F +10
#  T3  F Ah  M 8h  D Oh   F +10        T8  F Xa  M 8a  D Ua   F +10
#  T4  F Xh  M 9h  D Kb   D +10        T9  F Ka  M Kl  D Oa   F
#  T5  D Ul  F Xl  M 8l   F +10        T10 F Kh  M Uh  D 7b   D +10 last
#  Forhont 70, defence 20: hra won; sedma proti won.
# "early": trick 9 F Kh M Uh D 7b -- the dealer, void in hearts, must trump and 7b is
# his only trump (R7.4): sedma proti lost at once; trick 10 D Oa F Ka M Kl, F +10.
#  Forhont 80, defence 10.
SEDMA_PROTI = dict(
    hands=("Ab Xb Ah Xh Kh Al Xl Aa Xa Ka 7h 7l", "Ub Ob 8h 9h Uh 8l 9l Kl 7a 8a", "7b 8b 9b Kb Oh Ul Ol 9a Ua Oa"),
    trump="Ab", talon="7h 7l",
    play="Ab Ub 8b / Xb Ob 9b / Ah 8h Oh / Xh 9h Kb / Ul Xl 8l / Al 9l Ol / Aa 7a 9a / Xa 8a Ua / Ka Kl Oa / Kh Uh 7b",
    early="Ab Ub 8b / Xb Ob 9b / Ah 8h Oh / Xh 9h Kb / Ul Xl 8l / Al 9l Ol / Aa 7a 9a / Xa 8a Ua / Kh Uh 7b / Oa Ka Kl",
)

# STO_PROTI -- trump žaludy (Ua); a weak forhont; the middle player holds Oa+Ka (40).
#  T1  F 7h  M Uh  D Xh   D +10        T6  M Ah  D Oh  F 8h   M +10
#  T2  D Aa  F 8a  M Ka   D +10 (M 40) T7  M Kh  D Ul  F 9h   M
#  T3  D Xa  F 9a  M 7a   D +10        T8  M Ol  D Kl  F 8l   D
#  T4  D Al  F 7l  M Xl   D +20        T9  D Ub  F 8b  M Kb   M
#  T5  D Xb  F 7b  M Ab   M +20        T10 M Oa  D Ob  F Ua   M +10 last
#  Defence cards 90, first hláška 40: 130.  Forhont 0.
STO_PROTI = dict(
    hands=("Ua 9a 8a 7h 8h 9h 7l 8l 9l 7b 8b 9b", "Oa Ka 7a Ah Kh Xl Ol Ab Kb Uh", "Xa Aa Xh Oh Al Ul Kl Xb Ub Ob"),
    trump="Ua", talon="9l 9b",
    play="7h Uh Xh / Aa 8a Ka / Xa 9a 7a / Al 7l Xl / Xb 7b Ab / Ah Oh 8h / Kh Ul 9h / Ol Kl 8l / Ub 8b Kb / Oa Ob Ua",
)

# STO_PROTI_LOST -- trump zelené (Ul); the middle player holds Kh+Oh (20) and Kl+Ol (40)
# and announces sto proti, but declares the 20 first.
#  T1  F 7a  M Aa  D 8a   M +10        T6  M Kl  D Ua  F Ul   M
#  T2  M Xh  D Uh  F 8h   M +10        T7  M Al  D Xa  F 9l   M +20
#  T3  M Oh  D Ab  F 7h   M +10 (20)   T8  M Kh  D 8b  F 8l   F (trumps)
#  T4  M 9b  D Ub  F Kb   F            T9  F 7b  M Xl  D Xb   M +20 (trumps)
#  T5  F Ka  M Ol  D Oa   M (40)       T10 M Ah  D Ob  F 7l   F +10 +10 last
#  Defence cards 70 + first hláška 20 = 90; forhont 20, and his 7l takes the last trick.
STO_PROTI_LOST = dict(
    hands=("7l 8l 9l Ul 7h 8h 9h 7b Kb 7a Ka 9a", "Al Xl Kl Ol Ah Xh Kh Oh Aa 9b", "Uh 8b Xb Ub Ob Ab 8a Xa Ua Oa"),
    trump="Ul", talon="9h 9a",
    play="7a Aa 8a / Xh Uh 8h / Oh Ab 7h / 9b Ub Kb / Ka Ol Oa / Kl Ua Ul / Al Xa 9l / Kh 8b 8l / 7b Xl Xb / Ah Ob 7l",
)

# TICHA_PARTNER -- trump zelené (Al); the middle player's 7l is his last card and his
# partner beats it with Xl in the last trick.
#  T1  F Al  M Kl  D Ul   F +10        T6  F Ab  M 8b  D Ob   F +10
#  T2  F Ah  M 7h  D Uh   F +10        T7  F Aa  M 7a  D Ua   F +10
#  T3  F Xh  M 8h  D Oh   F +10        T8  F Ka  M 8a  D Xa   D +10
#  T4  F Kh  M 9h  D Ol   D (trumps)   T9  D Oa  F Kb  M 9a   D
#  T5  D 9b  F Ub  M 7b   F            T10 D Xl  F Xb  M 7l   D +20 +10 last
#  Forhont 50, defence 40: hra won; tichá sedma lost by the defence.
TICHA_PARTNER = dict(
    hands=("Al Ah Xh Kh Ub Xb Kb Ab Aa Ka 8l 9l", "7l Kl 7h 8h 9h 7b 8b 7a 8a 9a", "Xl Ul Ol Uh Oh 9b Ob Xa Ua Oa"),
    trump="Al", talon="8l 9l",
    play="Al Kl Ul / Ah 7h Uh / Xh 8h Oh / Kh 9h Ol / 9b Ub 7b / Ab 8b Ob / Aa 7a Ua / Ka 8a Xa / Oa Kb 9a / Xl Xb 7l",
)

# SEVEN_ON_TABLE -- trump zelené (Al); in trick 10 the middle player leads his 7l and
# the dealer plays Xl before the forhont, who holds Al.
#  T1  F Kb  M 8b  D Ub   F            T6  D Oa  F Ka  M 7a   F
#  T2  F Xb  M 7b  D Ob   F +10        T7  F Xh  M 7h  D Uh   F +10
#  T3  F Kh  M 8h  D Oh   F            T8  F Ah  M 9h  D Ol   D +10 (trumps)
#  T4  F Xa  M 8a  D 9a   F +10        T9  D Ua  F Aa  M Kl   M +10 (trumps)
#  T5  F Ab  M 9b  D Ul   D +10        T10 M 7l  D Xl  F Al   F +20 +10 last
#  Forhont 60, defence 30: hra won; the middle player's seven is beaten in trick 10.
SEVEN_ON_TABLE = dict(
    hands=("Al Ah Xh Kh Ab Xb Kb Aa Xa Ka 8l 9l", "7l Kl 7h 8h 9h 7b 8b 9b 7a 8a", "Xl Ul Ol Uh Oh Ub Ob 9a Ua Oa"),
    trump="Al", talon="8l 9l",
    play="Kb 8b Ub / Xb 7b Ob / Kh 8h Oh / Xa 8a 9a / Ab 9b Ul / Oa Ka 7a / Xh 7h Uh / Ah 9h Ol / Ua Aa Kl / 7l Xl Al",
)

# BETL -- the forhont's betl with his lowest cards.
# "won": he discards Ah Al; "lost": he discards 9a Al and keeps Ah.
#  won:  T1 F 7h M Xh D Oh; then the dealer leads Ol Kl Ab Kb Ob Aa Ka Oa Kh and wins
#        every trick; the forhont takes none.
#  lost: T1 F 7h M Xh D Oh; T2 D Kh F Ah M Uh -- the forhont must beat Kh with Ah
#        (R7.3) and takes the trick: betl lost, the deal ends after trick 2.
BETL = dict(
    hands=("7h 8h 9h 7l 8l 7b 8b 7a 8a 9a Ah Al", "Xh Uh 9l Xl Ul 9b Xb Ub Xa Ua", "Oh Kh Ol Kl Ob Kb Ab Oa Ka Aa"),
    won="7h Xh Oh / Ol 7l 9l / Kl 8l Xl / Ab 7b 9b / Kb 8b Xb / Ob 9h Ub / Aa 7a Xa / Ka 8a Ua / Oa 9a Ul / Kh 8h Uh",
    lost="7h Xh Oh / Kh Ah Uh",
)

# DURCH -- the forhont's durch with the top cards (betl/durch order A K O U X 9 8 7).
# "won": he discards 7l 7b and leads Ah Kh Oh Al Kl Ol Ab Kb Ob Aa, taking every trick.
# "lost": he discards Ob 7l and keeps 7b; trick 3 F 7b M 9b D Ub -- the dealer wins,
# durch lost, the deal ends after trick 3.
DURCH = dict(
    hands=("Ah Kh Oh Al Kl Ol Ab Kb Ob Aa 7l 7b", "7h 8h 9h 8l 9l 8b 9b 7a 8a 9a", "Xh Uh Xl Ul Xb Ub Xa Ua Oa Ka"),
    won="Ah 7h Xh / Kh 8h Uh / Oh 9h Xa / Al 8l Xl / Kl 9l Ul / Ol 7a Ua / Ab 8b Xb / Kb 9b Ub / Ob 8a Oa / Aa 9a Ka",
    lost="Ah 7h Xh / Ab 8b Xb / 7b 9b Ub",
)


def bid(entry: dict, contract: str = "hra", fleks: tuple[str, ...] = ("flek:hra", "dobra", "dobra"),
        forhont: int = 0) -> Deal:
    """A catalogue trump deal bid up to the first lead."""
    return trump_game(*entry["hands"], trump=entry["trump"], talon=entry["talon"], contract=contract,
                      fleks=fleks, forhont=forhont)

# LAY_TRUMP -- trump zelené (Al); the forhont holds every trump but 7l (the middle
# player's) and the aces Ah Ab Aa.  After trick 1 (F Al, M 7l, D 7a) no unseen trump
# is left and each of his cards beats every unseen card of its suit: laying is offered.
# Laid: every card goes to him: cards 80 + last trick 10, + Kl+Ol 40 (declared at
# the lay) = 130.  Hlášky still held by the defence: middle Kh+Oh, dealer Kb+Ob, Ka+Oa.
LAY_TRUMP = dict(
    hands=("Al Xl Kl Ol Ul 9l 8l Ah Ab Aa 7h 8h", "7l Xh 9h Uh Oh Kh Xb 9b 8b 7b", "Ub Ob Kb 7a 8a 9a Ua Oa Ka Xa"),
    trump="Al", talon="7h 8h",
    play="Al 7l 7a",
)

# LAY_SEDMA -- the forhont holds all eight trumps (7l included) and Ah Ab: laying is
# offered at the first lead; his 7l falls in the last trick and takes it.
LAY_SEDMA = dict(
    hands=("Al Xl Kl Ol Ul 9l 8l 7l Ah Ab 7h 8h", "Xh 9h Uh Oh Kh Xb 9b 8b 7b Ub", "Ob Kb 7a 8a 9a Xa Ua Oa Ka Aa"),
    trump="Al", talon="7h 8h",
)

# LAY_STO_LOST -- trump zelené (Al), contract sto with Kh+Oh (20) only.
#  T1  F Xa  M 7a  D Aa   D +20 (the dealer must beat Xa with Aa)
#  T2  D Ob  F 9l  M 8b   F (trumps)
#  T3  F Al  M 7l  D Ol   F +10
#  Now no trump is unseen and Xl Kl Ul Ah Xh Kh Oh all top their suits: laying is
#  offered although sto cannot be reached: remaining card points 50 (Xl Ah Xh, Xb, Ab)
#  + last 10 -> forhont 10 + 60 = 70, + 20 = 90.
LAY_STO_LOST = dict(
    hands=("Al Xl Kl Ul 9l Ah Xh Kh Oh Xa 8l 7b", "7l 7h 8h 8b Kb Xb Ub 7a 8a Ka", "Ol 9h Uh Ob 9b Ab Ua Oa 9a Aa"),
    trump="Al", talon="8l 7b",
    play="Xa 7a Aa / Ob 9l 8b / Al 7l Ol",
)

# LAY_ORDER -- trump zelené (Al), contract sto; the forhont holds Kl+Ol (40) and
# Kh+Oh (20).
#  T1  F Xa  M 7a  D Aa   D +20
#  T2  D Ab  F Ul  M 9b   F +10 (trumps)
#  T3  F Al  M 7l  D 9l   F +10
#  T4  F Xl  M 8l  D 9h   F +10
#  Forhont 30 so far; laying now would give him Ah Xh, Xb and the last trick: 70.
#  70 + 20 = 90 fails, 70 + 40 = 110 reaches sto: the order of hlášky matters, so
#  laying is not offered (R8.3) until he has declared one.
LAY_ORDER = dict(
    hands=("Al Xl Kl Ol Ul Ah Xh Kh Oh Xa 7b 8b", "7l 8l 7h 8h 9b Xb Kb 7a 8a Ka", "9l 9h Uh Ub Ob Ab 9a Ua Oa Aa"),
    trump="Al", talon="7b 8b",
    play="Xa 7a Aa / Ab Ul 9b / Al 7l 9l / Xl 8l 9h",
)

# LAY_ORDER_SAME -- as LAY_ORDER but the forhont holds Aa (the dealer Xa): after
#  T1 F Al M 7l D 9l, T2 F Xl M 8l D 9h the defence has taken nothing; laying gives
#  him 90, and 90 + 20 already reaches 100: every order settles the same, laying is
#  offered.
LAY_ORDER_SAME = dict(
    hands=("Al Xl Kl Ol Ul Ah Xh Kh Oh Aa 7b 8b", "7l 8l 7h 8h 9b Xb Kb 7a 8a Ka", "9l 9h Uh Ub Ob Ab 9a Ua Oa Xa"),
    trump="Al", talon="7b 8b",
    play="Al 7l 9l / Xl 8l 9h",
)
