"""Cards, codes, orders and points (RULES.md R1.1-R1.4)."""

from __future__ import annotations

import pytest

from referee.rules.cards import (
    CARDS, HIGHER_BETL, HIGHER_TRUMP, SUIT_MASKS, Card, CardError, beats, format_cards, mask_of,
    parse_cards, parse_deck,
)

TRUMP_RANKS = "789UOKXA"  # R1.3, trump games, low to high
BETL_RANKS = "789XUOKA"   # R1.3, betl and durch, low to high


def test_R1_1_thirty_two_cards_four_suits_eight_ranks():
    codes = [str(c) for c in CARDS]
    assert len(codes) == len(set(codes)) == 32
    assert {c[1] for c in codes} == set("hlba")
    assert {c[0] for c in codes} == set("789XUOKA")
    for s, suit in enumerate("hlba"):
        assert sum(1 for c in CARDS if c.suit == s) == 8
        assert [str(c) for c in CARDS if SUIT_MASKS[s] >> c & 1] == [r + suit for r in "789XUOKA"]


def test_R1_2_codes_round_trip():
    for c in CARDS:
        assert Card.parse(str(c)) is c
        assert len(str(c)) == 2
    assert (Card.parse("Ah").suit, Card.parse("Ah").rank) == (0, 7)  # červené eso
    assert (Card.parse("7l").suit, Card.parse("7l").rank) == (1, 0)  # zelená sedma
    assert (Card.parse("Ob").suit, Card.parse("Ob").rank) == (2, 5)  # kulový svršek
    assert format_cards(parse_cards("Ah Xh, 7a")) == "Ah Xh 7a"


@pytest.mark.parametrize("bad", ["ah", "AH", "Ax", "10h", "Th", "A", "Ahh", "", " Ah", "hA", "Jh"])
def test_R1_2_malformed_codes_rejected_naming_the_token(bad):
    with pytest.raises(CardError) as e:
        Card.parse(bad)
    assert str(e.value).startswith("R1.2")
    assert repr(bad) in str(e.value)


def test_R1_2_parse_cards_names_the_bad_token():
    with pytest.raises(CardError, match="'Zh'"):
        parse_cards("Ah Zh 7l")


def test_R1_1_card_index_out_of_range():
    with pytest.raises(CardError):
        Card(32)
    with pytest.raises(CardError):
        Card(-1)


def test_R1_1_parse_deck_needs_each_card_once():
    full = " ".join(str(c) for c in CARDS)
    assert parse_deck(full) == list(CARDS)
    with pytest.raises(CardError, match="missing Aa"):
        parse_deck(full.replace(" Aa", ""))
    with pytest.raises(CardError, match="repeated Ah"):
        parse_deck(full.replace("Aa", "Ah"))


def _sorted_by(order: str, suit: str, trump: str | None) -> list[str]:
    """Sort one suit's cards with beats(): a card is above every card it beats."""
    cards = [Card.parse(r + suit) for r in order]
    out = []
    for c in cards:
        above = sum(1 for o in cards if o != c and beats(c, o, trump))
        out.append((above, str(c)))
    return [code for _, code in sorted(out)]


@pytest.mark.parametrize("suit", "hlba")
def test_R1_3_trump_game_order_ten_between_king_and_ace(suit):
    # 7 < 8 < 9 < U < O < K < X < A, whatever the trump suit
    for trump in (0, 1, 2, 3):
        assert _sorted_by("789XUOKA", suit, trump) == [r + suit for r in TRUMP_RANKS]
    # the mask of cards that beat a card matches the order
    for i, r in enumerate(TRUMP_RANKS):
        c = Card.parse(r + suit)
        assert {str(x) for x in CARDS if HIGHER_TRUMP[c] >> x & 1} == {q + suit for q in TRUMP_RANKS[i + 1:]}


@pytest.mark.parametrize("suit", "hlba")
def test_R1_3_betl_durch_order_ten_under_spodek(suit):
    # 7 < 8 < 9 < X < U < O < K < A
    assert _sorted_by("789XUOKA", suit, None) == [r + suit for r in BETL_RANKS]
    for i, r in enumerate(BETL_RANKS):
        c = Card.parse(r + suit)
        assert {str(x) for x in CARDS if HIGHER_BETL[c] >> x & 1} == {q + suit for q in BETL_RANKS[i + 1:]}


def test_R1_3_beats_across_suits():
    P = Card.parse
    # trump game, trumps zelené (1): any trump beats a non-trump, an off-suit card never beats
    assert beats(P("7l"), P("Ah"), 1)
    assert not beats(P("Ah"), P("7l"), 1)
    assert not beats(P("Ab"), P("7h"), 1)
    assert beats(P("Xh"), P("Kh"), 1)
    assert not beats(P("Kh"), P("Xh"), 1)
    # no trumps: only a higher card of the same suit
    assert not beats(P("7l"), P("Ah"), None)
    assert beats(P("Uh"), P("Xh"), None)
    assert not beats(P("Xh"), P("Uh"), None)


def test_R1_4_points_aces_and_tens_ten_each():
    for c in CARDS:
        assert c.points == (10 if str(c)[0] in "AX" else 0)
    # cards 80 + last trick 10 = 90
    assert sum(c.points for c in CARDS) == 80


def test_masks():
    cards = parse_cards("Ah 7l Aa")
    m = mask_of(cards)
    assert bin(m).count("1") == 3
    assert all(m >> c & 1 for c in cards)
