"""Message encoding shared by the referee and the SDK (PROTOCOL.md).

One JSON object per line, UTF-8, ``\\n``-terminated.  Every message has a
``type``; requests carry an ``id`` that the answer echoes.
"""

from __future__ import annotations

import json

PROTOCOL_VERSION = 1

#: Referee -> bot message types; only ``hello`` and ``request`` expect an answer.
TO_BOT = ("hello", "partie_start", "deal_start", "request", "event", "deal_end", "partie_end", "bye")
#: Bot -> referee message types.
FROM_BOT = ("hello", "action")

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


class MessageError(ValueError):
    """A line that is not one protocol message (not UTF-8, not JSON, not a JSON object)."""


def _make_line_encoder():
    """``_ENCODER.encode`` without its set-up cost per call (one C encoder made once), where
    the C accelerator exists and gives exactly the same text for a probe."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _ENCODER.encode
    try:
        c_encode = make(None, _ENCODER.default, json.encoder.encode_basestring, None,
                        _ENCODER.key_separator, _ENCODER.item_separator, False, False, False)
    except TypeError:
        return _ENCODER.encode

    def encode(message) -> str:
        return "".join(c_encode(message, 0))

    probe = {"a": [0, -7, 1.5, "é č \"\\\n\u2028", None, True, False, {}, []], "b": {"c": {"d": "x"}}, "": 2**70}
    try:
        same = encode(probe) == _ENCODER.encode(probe)
    except Exception:
        same = False
    return encode if same else _ENCODER.encode


#: One message as the JSON text of its line, without the newline (compact, UTF-8 kept as it is).
encode_line = _make_line_encoder()


def encode(message: dict) -> str:
    """One line of the protocol, with its newline."""
    return encode_line(message) + "\n"


def decode_line(line: bytes) -> dict | None:
    """The message on one line (without its newline); None for a blank line.
    Raises :class:`MessageError` saying what is wrong otherwise."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise MessageError("line is not valid UTF-8") from None
    if not text.strip():
        return None
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:
        raise MessageError(f"line is not valid JSON ({exc})") from None
    if type(value) is not dict:
        raise MessageError(f"expected a JSON object, got {type(value).__name__}")
    return value


def decode(line: str | bytes) -> dict:
    """Parse one line; raises ``ValueError`` for anything but a JSON object."""
    obj = json.loads(line)
    if not isinstance(obj, dict):
        raise ValueError(f"a message is a JSON object, got {type(obj).__name__}")
    return obj


# ---------------------------------------------------------------- builders
# The referee builds every message it sends with these, so PROTOCOL.md and the
# schemas in protocol/schema/ describe exactly one place.

def hello(referee_version: str, limits: dict) -> dict:
    return {"type": "hello", "protocol": PROTOCOL_VERSION, "referee": f"marias {referee_version}", "limits": limits}


def partie_start(partie: int, seat: int, deals: int, players: list[str]) -> dict:
    return {"type": "partie_start", "partie": partie, "seat": seat, "deals": deals, "players": players}


def deal_start(partie: int, deal: int, seat: int, forhont: int, dealer: int, cut: int | None,
               totals: list[int] | None = None) -> dict:
    """``totals``: each seat's groše in this partie before this deal."""
    return {"type": "deal_start", "partie": partie, "deal": deal, "seat": seat, "forhont": forhont,
            "middle": (forhont + 1) % 3, "dealer": dealer, "cut": cut, "totals": list(totals or (0, 0, 0))}


def request(id: int, partie: int, deal: int, decision: str, view: dict, legal: list[str], time_ms: int | None,
            totals: list[int] | None = None) -> dict:
    """``totals``: each seat's groše in this partie before this deal; ``legal`` stays the last field."""
    return {"type": "request", "id": id, "partie": partie, "deal": deal, "decision": decision,
            "time_ms": time_ms, "totals": list(totals or (0, 0, 0)), "view": view, "legal": legal}


def event(partie: int, deal: int, body: dict) -> dict:
    return {"type": "event", "partie": partie, "deal": deal, "event": body}


def action_event(seat: int, decision: str, action: str, trump_card: str | None = None) -> dict:
    """A player's action as one seat may see it (redacted by the referee)."""
    body = {"kind": "action", "seat": seat, "decision": decision, "action": action}
    if trump_card is not None:
        body["trump_card"] = trump_card  # the contract shows the trump card to everyone (R5.1)
    return body


def trick_event(leader: int, cards: list[str], winner: int) -> dict:
    return {"kind": "trick", "leader": leader, "cards": cards, "winner": winner}


def hlaska_event(hlaska: dict) -> dict:
    return {"kind": "hlaska", **hlaska}


def laid_event(seat: int, cards: list[str]) -> dict:
    return {"kind": "laid", "seat": seat, "cards": cards}


def fault_event(seat: int, fault: str, message: str) -> dict:
    return {"kind": "fault", "seat": seat, "fault": fault, "message": message}


def deal_end(partie: int, deal: int, seat: int, view: dict, result: dict) -> dict:
    return {"type": "deal_end", "partie": partie, "deal": deal, "seat": seat, "view": view, "result": result}


def partie_end(partie: int, totals: list[int], places: list[float], forfeit: dict | None = None) -> dict:
    """``forfeit``: ``{"seat": S, "from_deal": K}`` when seat S forfeited the partie from deal K (R12.3)."""
    msg = {"type": "partie_end", "partie": partie, "totals": totals, "places": places}
    if forfeit is not None:
        msg["forfeit"] = forfeit
    return msg


BYE = {"type": "bye"}
