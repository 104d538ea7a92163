"""The referee's fast encoders write exactly what plain JSON encoding writes
(bots must receive the same bytes whichever path made them)."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings, strategies as st

from protocol import messages as M
from referee.matches.tell import deal_events, event_lines, request_line
from referee.rules.partie import Partie
from referee.seats.process import encode_line

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


def test_every_line_of_real_partie_is_what_the_standard_encoder_writes(tmp_path):
    """orjson on the hot path: every line the referee sent in two partie (with faults and a
    forfeit, so that every message kind occurs) is byte for byte the standard encoder's text."""
    import sys
    from pathlib import Path

    from referee.matches.match import BotSpec, FaultPolicy, MatchConfig, run_match

    faulty = Path(__file__).parent / "fault_bots" / "faulty.py"
    bots = [BotSpec(label="garbage", argv=[sys.executable, str(faulty), "garbage", "12"]),
            BotSpec.parse("random", seed="e"), BotSpec.parse("robot")]
    run_match(MatchConfig(bots=bots, partie=2, seed="bytes", transcript=True, work_dir=tmp_path,
                          policy=FaultPolicy(max_faults=3)))
    kinds = set()
    for seat in range(3):
        for raw in (tmp_path / f"marias.seat{seat}.transcript.jsonl").read_text(encoding="utf-8").splitlines():
            rec = json.loads(raw)
            if rec["dir"] == "send":
                msg = json.loads(rec["line"])
                assert rec["line"].encode() == PLAIN(msg).encode()
                kinds.add(msg["type"] if msg["type"] != "event" else msg["event"]["kind"])
                if msg["type"] == "partie_end":
                    kinds.add("forfeit" if "forfeit" in msg else "no forfeit")
    assert kinds >= {"hello", "partie_start", "deal_start", "request", "action", "trick", "fault", "deal_end",
                     "partie_end", "forfeit", "bye"}


def test_decoding_answers_holds_the_protocol_to_json_integers():
    import pytest

    from protocol.messages import MessageError, decode_line

    assert decode_line(b'{"type":"action","id":7,"action":"play:Ah"}') == {"type": "action", "id": 7, "action": "play:Ah"}
    assert decode_line(b'{"id":18446744073709551615,"x":[1]}') == {"id": 18446744073709551615, "x": [1]}
    assert decode_line(b"   ") is None
    for line, words in ((b'{"id":99999999999999999999}', "64 bits"), (b'{"id":-9223372036854775809}', "64 bits"),
                        (b'{"a":[1,{"b":123456789012345678901234567890}]}', "64 bits"),
                        (b'{"a": NaN}', "NaN"), (b"[1]", "list"), (b"\xff{}", "UTF-8"), (b"{", "not valid JSON")):
        with pytest.raises(MessageError, match=words):
            decode_line(line)
