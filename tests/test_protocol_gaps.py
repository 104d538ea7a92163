"""What PROTOCOL.md and LOGS.md now say about corners found while writing bots (issue 12, item 5),
checked against the engine and the schemas."""

from __future__ import annotations

import json
import random
from pathlib import Path

from jsonschema import Draft202012Validator

from referee.rules.deal import Deal
from referee.logs.log import deal_record
from referee.rules.partie import shuffled_deck

ROOT = Path(__file__).resolve().parent.parent


def _barva_deal(seed: int) -> tuple[Deal, list]:
    d = Deal(shuffled_deck(seed), 0)
    deck = list(d.deck)
    d.apply(d.legal_actions()[0])  # a trump card
    d.apply(next(a for a in d.legal_actions() if a.kind == "barva"))
    return d, deck


def test_a_fault_at_the_trump_decision_leaves_actor_and_game_null_and_the_faulter_pays_10_to_each():
    d = Deal(shuffled_deck(1), 0)
    d.fault(0, "timeout")
    for seat in range(3):
        v = d.view(seat)
        assert (v["actor"], v["game"], v["contract"], v["trump"]) == (None, None, None, None)
    r = d.result.to_dict()
    assert r["actor"] is None and r["components"] == [] and r["payments"] == [-20, 10, 10]  # R12.2


def test_a_fault_after_barva_shows_the_game_so_far_and_its_announcer_without_contract():
    d, deck = _barva_deal(2)
    faulter = d.to_move  # a defender answering
    d.fault(faulter, "timeout")
    views = [d.view(s) for s in range(3)]
    assert all(v["game"] == "barva" and v["actor"] == 0 and v["contract"] is None for v in views)
    assert views[0]["trump"] is not None  # the forhont knows his trump card
    assert views[1]["trump"] is None and views[2]["trump"] is None
    r = d.result.to_dict()
    assert r["actor"] == 0 and r["components"] == []
    assert r["payments"][faulter] == -20 and sum(r["payments"]) == 0
    rec = deal_record(1, 1, d, None, deck)
    assert (rec["game"], rec["actor"], rec["contract"], rec["trump"]) == ("barva", 0, None, None)
    assert rec["trump_card"] is not None


def _play(seed: int, prefer) -> Deal:
    rng = random.Random(seed)
    d = Deal(shuffled_deck(seed), seed % 3)
    while not d.done:
        legal = d.legal_actions()
        liked = [a for a in legal if prefer(d, a)]
        d.apply(rng.choice(liked) if liked and rng.random() < 0.9 else rng.choice(legal))
    return d


def test_laid_points_count_the_remaining_cards_in_a_trump_game_not_in_durch():
    seen = set()
    for seed in range(1, 5000):
        want = "durch" if "durch" not in seen else "barva"
        d = _play(seed, lambda d, a, w=want: a.kind in (w, "lay"))
        if not d.laid or d.game not in ("durch", "barva") or d.game in seen:
            continue
        seen.add(d.game)
        played = sum(1 for _ in d.tricks)
        if d.game == "barva":
            assert sum(d.points) == 90  # every card's points and the last trick's 10 are counted (R8.4)
        else:
            assert played < 10 and sum(d.points) < 90  # only the tricks played
        if seen == {"durch", "barva"}:
            return
    raise AssertionError(f"no laid durch and laid trump game found, only {seen}")


def test_a_game_against_enters_levels_only_when_its_raising_round_is_over():
    for seed in range(1, 3000):
        d, _ = _barva_deal(seed)
        while d.phase == "answer":
            d.apply("dobra")
        if d.phase != "contract":
            continue
        d.apply(d.legal_actions()[0])
        proti = [a for a in d.legal_actions() if a.proti] if d.phase == "flek" else []
        if not proti:
            continue
        d.apply(proti[0])
        name = proti[0].proti[0]
        if d.phase == "flek" and d.to_move != d.actor:  # the other defender still speaks in this round
            assert name in d.proti and f"{name}-proti" not in d.levels
            d.apply("dobra")
        assert f"{name}-proti" in d.levels and d.levels[f"{name}-proti"] == 0
        return
    raise AssertionError("no deal with a game against found")


def test_hello_limits_may_grow_and_time_ms_is_an_integer():
    schemas = {p.stem: json.loads(p.read_text()) for p in (ROOT / "protocol" / "schema").glob("*.json")}
    hello = Draft202012Validator(schemas["hello"])
    base = {"type": "hello", "protocol": 1, "referee": "marias 9", "limits": {
        "startup_ms": 1, "move_ms": 1, "bank_ms": None, "increment_ms": 0, "max_line": 1, "stderr_cap": 0}}
    assert hello.is_valid(base)
    assert hello.is_valid({**base, "limits": {**base["limits"], "think_ms": 5}})  # a later limit
    assert not hello.is_valid({**base, "extra": 1})  # the message itself stays closed
    assert schemas["request"]["properties"]["time_ms"]["type"] == "integer"
