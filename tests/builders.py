"""Helpers to build deals from explicit hands and drive them through ``Deal.apply``.

Every test states its hands in card codes (R1.2) by role: the forhont's 12 cards,
the middle player's 10 and the dealer's 10, each in hand order (R2.6).
``referee.partie.deck_from_hands`` turns them into the deck that deals them.
"""

from __future__ import annotations

from referee.cards import CARDS, Card, format_cards, parse_cards
from referee.deal import Deal
from referee.partie import deck_from_hands


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
    """Play cards in order; ``/`` separates tricks and each complete group must close a trick.

    ``"Al 8l 7l / Xl Ul 7a"`` plays two tricks.  A last group with fewer than three
    cards leaves a trick in progress.
    """
    groups = [g.split() for g in tricks.split("/") if g.strip()]
    for i, group in enumerate(groups):
        assert not deal.trick, f"trick {i + 1} of the test starts with cards already on the table"
        for code in group:
            deal.apply("play:" + code)
        if len(group) == 3:
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
