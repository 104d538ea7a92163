"""The action vocabulary: canonical text, parsing and its errors."""

from __future__ import annotations

import pytest

from referee.rules import actions as A
from referee.rules.actions import Action, ActionError, parse_action
from referee.rules.cards import Card

CANONICAL = [
    "trump:Ah", "trump:zlidu", "barva:7h,8h", "betl:Ah,Xl", "durch:7a,Ob",
    "dobra", "spatna", "durch", "contract:hra", "contract:sedma", "contract:sto",
    "contract:sto-sedma", "flek:hra", "flek:hra,sedma", "flek:sto", "flek:betl", "flek:durch",
    "flek:sedma-proti", "flek:sto-proti", "flek:hra,sedma,sedma-proti", "proti:sedma",
    "proti:sto", "proti:sedma,sto", "flek:hra proti:sedma", "flek:hra,sedma proti:sto",
    "play:Ah", "play:7l", "lay",
]


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_text_round_trips(text):
    a = parse_action(text)
    assert str(a) == text
    assert parse_action(str(a)) == a


def test_action_fields():
    a = parse_action("barva:7h,8h")
    assert a.kind == "barva" and a.cards == (Card.parse("7h"), Card.parse("8h"))
    # the discard order is kept (it matters for the next deck, R2.3)
    assert parse_action("barva:8h,7h").cards == (Card.parse("8h"), Card.parse("7h"))
    assert parse_action("barva:8h,7h") != a
    f = parse_action("flek:hra proti:sedma")
    assert f.kind == "flek" and f.words == ("hra",) and f.proti == ("sedma",)
    assert parse_action("trump:zlidu").cards == ()
    assert parse_action("play:Ah").card == Card.parse("Ah")
    assert parse_action("contract:sto-sedma").words == ("sto-sedma",)


def test_flek_constructor_orders_components_and_dobra_when_empty():
    assert A.flek(("sedma", "hra")) == parse_action("flek:hra,sedma")
    assert A.flek((), ("sto", "sedma")) == parse_action("proti:sedma,sto")
    assert A.flek() is A.DOBRA
    assert Action.parse("dobra") is A.DOBRA


@pytest.mark.parametrize("text, token", [
    ("play:Zh", "'Zh'"),
    ("trump:10h", "'10h'"),
    ("barva:7h", "'7h'"),
    ("barva:7h,7h", "must differ"),
    ("barva:7h,8h,9h", "exactly two"),
    ("betl:7h,xx", "'xx'"),
    ("contract:betl", "'betl'"),
    ("flek:hra,hra", "'hra'"),
    ("flek:kilo", "'kilo'"),
    ("proti:hra", "'hra'"),
    ("flek:sedma,hra", "'flek:hra,sedma'"),
    ("proti:sedma flek:hra", "'flek:hra proti:sedma'"),
    ("flek:hra flek:sedma", "'flek:sedma'"),
    ("pass", "'pass'"),
    ("take:Ah", "'take'"),
])
def test_malformed_actions_name_the_bad_token(text, token):
    with pytest.raises(ActionError) as e:
        parse_action(text)
    assert token in str(e.value)


def test_non_string_action():
    with pytest.raises(ActionError):
        parse_action(None)  # type: ignore[arg-type]


def test_vocabulary_constants():
    assert A.LEVEL_NAMES == ("", "flek", "re", "tutti", "boty")
    assert A.MAX_LEVEL == 4
    assert A.CONTRACTS == {"hra": ("hra",), "sedma": ("hra", "sedma"), "sto": ("sto",), "sto-sedma": ("sto", "sedma")}
