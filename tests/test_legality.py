"""One rules implementation: ``Deal.is_legal``/``Deal.verify`` (one action checked
directly) agree with ``Deal.legal_actions()`` (the list) for every action of the
vocabulary at every decision of random partie, and an illegal action is refused by
``apply`` with the rule it breaks, changing nothing.

The expected rule of an illegal action and the card-play rules (R7.2-R7.4) are
worked out here independently, from RULES.md, on card codes.
"""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules import actions as A
from referee.rules.deal import Deal, IllegalAction
from referee.rules.partie import Partie
from tests.test_properties import STYLES, choose


def _subsets(items):
    out = [()]
    for it in items:
        out += [x + (it,) for x in out]
    return out


#: Every action there is: 5 words, 4 contracts, 32 trump cards, 32 plays, 3 x 32 x 31 discards, 511 raises.
VOCABULARY = [A.ZLIDU, A.DOBRA, A.SPATNA, A.DURCH_ANSWER, A.LAY, *A.CONTRACT.values(), *A.TRUMP, *A.PLAY]
VOCABULARY += [a for kind in A.GAME_KINDS for row in A.GAME_TABLE[kind] for a in row if a is not None]
VOCABULARY += [A.flek(w, p) for w in _subsets(A.COMPONENTS) for p in _subsets(A.PROTI) if w or p]

TRUMP_RANKS = "789UOKXA"  # R1.3, low to high
BETL_RANKS = "789XUOKA"


def may_follow(d: Deal, seat: int, code: str) -> bool:
    """R7.2 (trump game) / R7.3 (betl, durch) for a card ``seat`` holds, without R7.4."""
    if not d.trick:
        return True
    trump = "hlba"[d.trump] if d.game == "barva" else None
    ranks = TRUMP_RANKS if trump else BETL_RANKS
    table = [str(c) for c in d.trick]
    hand = [str(c) for c in d.hands[seat]]
    led = table[0][1]
    win = table[0]
    for c in table[1:]:
        if (c[1] == win[1] and ranks.index(c[0]) > ranks.index(win[0])) or (c[1] == trump != win[1]):
            win = c
    for suit in (led, trump):
        if suit is None:
            continue
        mine = [c for c in hand if c[1] == suit]
        if mine:
            if win[1] == suit:
                higher = [c for c in mine if ranks.index(c[0]) > ranks.index(win[0])]
                mine = higher or mine
            return code in mine
    return True


def seven_held_back(d: Deal, seat: int, code: str) -> bool:
    """R7.4: the trump seven of whoever announced sedma (or sedma proti) waits for the
    last trick, unless it is the only card he may play."""
    if d.game != "barva" or code != "7" + "hlba"[d.trump] or len(d.tricks) >= 9:
        return False
    announced = (seat == d.actor and "sedma" in d.levels) or d.proti.get("sedma") == seat
    others = [str(c) for c in d.hands[seat] if str(c) != code and may_follow(d, seat, str(c))]
    return announced and bool(others)


def expected_rule(d: Deal, action, legal: set) -> str:
    """The rule an illegal ``action`` breaks, from the decision asked (R3-R8)."""
    phase, seat = d.phase, d.to_move
    if phase == "trump":
        return "R3.1"
    if phase == "talon":
        return "R4.3" if action.kind == "durch" and not action.cards else "R3.2"
    if phase == "answer":
        return "R4.1"
    if phase == "contract":
        return "R5.1"
    if phase == "flek":
        if action.kind == "flek" and action.proti and A.flek((), action.proti) not in legal:
            return "R5.2"
        return "R5.3"
    assert phase == "play"
    if action.kind == "lay":
        return "R8.1"
    if action.kind != "play" or not d.holds(seat, action.cards[0]):
        return "R7.2"
    code = str(action.cards[0])
    if may_follow(d, seat, code) and seven_held_back(d, seat, code):
        return "R7.4"
    return "R7.2" if d.game == "barva" else "R7.3"


def fingerprint(d: Deal):
    return (d.phase, d.to_move, len(d.history), [list(h) for h in d.hands], list(d.masks), list(d.trick),
            dict(d.levels), dict(d.proti), d.lay_offered)


def check_every_action(d: Deal, rng: random.Random) -> None:
    before = fingerprint(d)
    views = [d.view(s) for s in range(3)]
    legal = d.legal_actions()
    assert fingerprint(d) == before and [d.view(s) for s in range(3)] == views  # queries change nothing (R8.1 included)
    legal_set = set(legal)
    assert len(legal_set) == len(legal), "an action is listed twice"
    seat = d.to_move
    tried_apply = 0
    for a in VOCABULARY:
        ok = d.is_legal(a)
        assert ok == (a in legal_set), (d.phase, str(a))
        if a.kind == "play" and d.phase == "play" and d.holds(seat, a.cards[0]):
            code = str(a.cards[0])
            assert ok == (may_follow(d, seat, code) and not seven_held_back(d, seat, code)), code
        if ok:
            assert d.verify(a) is a and d.verify(str(a)) is a
            continue
        try:
            d.verify(a)
            raise AssertionError(f"verify accepts {a}, is_legal does not")
        except IllegalAction as e:
            err = e
        assert err.rule == expected_rule(d, a, legal_set), (d.phase, str(a), str(err))
        assert str(err) == f"{err.rule}: {err.detail}"
        if tried_apply < 12 and rng.random() < 0.05:  # apply refuses it the same way and changes nothing
            tried_apply += 1
            with pytest.raises(IllegalAction) as e2:
                d.apply(str(a))
            assert str(e2.value) == str(err)
            assert fingerprint(d) == before
    assert fingerprint(d) == before


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), style=STYLES)
def test_is_legal_is_membership_in_legal_actions(seed, style):
    rng = random.Random(seed)
    partie = Partie(seed=seed)
    for d in partie.iter_deals():
        while not d.done:
            check_every_action(d, rng)
            d.apply(choose(rng, d, style))
        assert not any(d.is_legal(a) for a in VOCABULARY[:80])
        with pytest.raises(IllegalAction) as e:
            d.verify(A.DOBRA)
        assert e.value.rule == "R7.11"


def test_verify_names_the_rule_for_hand_made_cases():
    """A few illegal actions with their rules, worked out from RULES.md."""
    from referee.rules.cards import Card
    deck = [Card.parse(c) for c in
            "9a 8b Xl 9l Ua 8h Oh Uh Ah 7b 8l Xb Ka Ol Kb 7h Ob Oa Kh Ul Ub Ab Kl Al Xh Aa 9h 7a 8a Xa 9b 7l".split()]
    d = Deal(deck, 0)  # forhont's first seven: 9a 8b Xl 9l Ua 8h Oh; later Oa Kh Ul Ub Ab
    for text, rule in (("trump:Oa", "R3.1"), ("dobra", "R3.1"), ("play:9a", "R3.1")):
        with pytest.raises(IllegalAction) as e:
            d.verify(text)
        assert e.value.rule == rule
    d.apply("trump:Ua")
    for text, rule in (("barva:Ua,9a", "R3.2"),   # the trump card never goes to the talon
                       ("barva:Xl,9a", "R3.2"),   # no ten (or ace) for Barva
                       ("betl:Uh,9a", "R3.2"),    # not his card
                       ("durch", "R4.3")):        # a talon decision discards two
        with pytest.raises(IllegalAction) as e:
            d.verify(text)
        assert e.value.rule == rule, text
    assert d.is_legal("betl:Xl,9a") and d.is_legal("barva:9a,8b")
    d.apply("barva:9a,8b")
    with pytest.raises(IllegalAction) as e:
        d.verify("durch")  # on Barva: dobrá or špatná
    assert e.value.rule == "R4.1"
    snapshot = copy.deepcopy(d.__dict__)
    with pytest.raises(IllegalAction):
        d.apply("durch")
    assert d.__dict__ == snapshot
