"""The referee's fast encoders write exactly what plain JSON encoding writes
(bots must receive the same bytes whichever path made them)."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings, strategies as st

from protocol import messages as M
from referee.match import deal_events, event_lines, request_line
from referee.partie import Partie
from referee.process import encode_line

PLAIN = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def _steer(deal, rng):
    legal = deal.legal_actions()
    trumpish = [a for a in legal if a.kind in ("barva", "dobra", "contract") or a.words]
    return rng.choice(trumpish if trumpish and rng.random() < 0.7 else legal)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_request_and_event_lines_equal_plain_json(seed):
    rng = random.Random(seed)
    partie = Partie(seed=seed)
    for index, deal in enumerate(partie.iter_deals(), 1):
        rid = 0
        while not deal.done:
            rid += 1
            seat, decision = deal.to_move, deal.decision
            texts = [str(a) for a in deal.legal_actions()]
            view = deal.view(seat)
            assert request_line(rid, 1, index, decision, view, texts, 2000) == PLAIN(M.request(rid, 1, index, decision, view, texts, 2000))
            before_tricks, before_hl = len(deal.tricks), len(deal.hlasky)
            deal.apply(_steer(deal, rng))
            lines = event_lines(1, index, deal, decision, before_tricks, before_hl)
            for viewer in range(3):
                expected = [PLAIN(M.event(1, index, b)) for b in deal_events(deal, decision, before_tricks, before_hl, viewer)]
                assert lines[viewer] == expected
        if index == 3:
            break


def test_encode_line_escapes_like_json():
    awkward = {"type": "event", "text": 'quote " backslash \\ newline \n tab \t ž ☃ \u0001', "n": [1, 2.5, None, True]}
    assert encode_line(awkward) == PLAIN(awkward)
    texts = ['play:Ah', 'odd"text', 'back\\slash', 'žluť']
    assert request_line(1, 1, 1, "play", {}, texts, 5) == PLAIN(M.request(1, 1, 1, "play", {}, texts, 5))
