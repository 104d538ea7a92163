"""Message encoding shared by the referee and the SDK (PROTOCOL.md).

One JSON object per line, UTF-8, ``\\n``-terminated.  Every message has a
``type``; requests carry an ``id`` that the answer echoes.
"""

from __future__ import annotations

import json

import orjson

PROTOCOL_VERSION = 1

#: Referee -> bot message types; only ``hello`` and ``request`` expect an answer.
TO_BOT = ("hello", "partie_start", "deal_start", "request", "event", "deal_end", "partie_end", "bye")
#: Bot -> referee message types.
FROM_BOT = ("hello", "action")

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_INT64 = (-(1 << 63), (1 << 64) - 1)  # the widest integers a line may hold (int64 and uint64)
_SUSPECT = frozenset((float, dict, list))  # values decoded again by the standard decoder (see decode_line)


class MessageError(ValueError):
    """A line that is not one protocol message (not UTF-8, not JSON, not a JSON object)."""


def _int(text: str) -> int:
    value = int(text)
    if not _INT64[0] <= value <= _INT64[1]:
        shown = text if len(text) <= 40 else text[:40] + "…"
        raise ValueError(f"the integer {shown} does not fit in 64 bits")
    return value


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_int)


def encode_line(message) -> str:
    """One message as the JSON text of its line, without the newline: compact, UTF-8 kept as
    it is, exactly what ``json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)`` writes
    (orjson writes the same bytes for the referee's messages, faster; the standard encoder
    takes what orjson refuses, such as integers beyond 64 bits)."""
    try:
        return orjson.dumps(message).decode()
    except (TypeError, orjson.JSONEncodeError):
        return _ENCODER.encode(message)


def encode(message: dict) -> str:
    """One line of the protocol, with its newline."""
    return encode_line(message) + "\n"


def decode_line(line: bytes) -> dict | None:
    """The message on one line (without its newline); None for a blank line.
    Raises :class:`MessageError` saying what is wrong otherwise.

    orjson decodes; a line it refuses (or one holding a float or a nested value, where
    orjson would silently turn an integer beyond 64 bits into a float) is decoded again by
    the standard decoder, which gives the precise verdict and message."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        value = None
    else:
        if type(value) is dict and _SUSPECT.isdisjoint(map(type, value.values())):
            return value
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
    """Parse one line; raises ``ValueError`` (:class:`MessageError`) for anything but a JSON object."""
    value = decode_line(line.encode("utf-8") if isinstance(line, str) else line)
    if value is None:
        raise MessageError("a message is a JSON object, got a blank line")
    return value


# ---------------------------------------------------------------- builders
# The referee builds every message it sends with these, so PROTOCOL.md and the
# schemas in protocol/schema/ describe exactly one place.

def hello(referee_version: str, limits: dict) -> dict:
    return {"type": "hello", "protocol": PROTOCOL_VERSION, "referee": f"marias {referee_version}", "limits": limits}


def partie_start(partie: int, seat: int, deals: int, players: list[str], seed: str | None = None) -> dict:
    """``seed``: a seed for the bot's own random choices in this partie, when the referee gives one
    (a tournament's built-in random bot without its own: the same bot process may play several partie)."""
    msg = {"type": "partie_start", "partie": partie, "seat": seat, "deals": deals, "players": players}
    if seed is not None:
        msg["seed"] = seed
    return msg


def deal_start(partie: int, deal: int, seat: int, forhont: int, dealer: int, cut: int | None,
               totals: list[int] | None = None) -> dict:
    """``totals``: each seat's groše in this partie before this deal."""
    return {"type": "deal_start", "partie": partie, "deal": deal, "seat": seat, "forhont": forhont,
            "middle": (forhont + 1) % 3, "dealer": dealer, "cut": cut, "totals": list(totals or (0, 0, 0))}


def request(id: int, partie: int, deal: int, decision: str, view: dict, legal: list[str], time_ms: int,
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


def fault_event(seat: int, fault: str) -> dict:
    """Who faulted and the kind of fault, never the faulting bot's text (a fault must not carry
    a message to the other seats; the log keeps the evidence)."""
    return {"kind": "fault", "seat": seat, "fault": fault, "message": f"seat {seat} faulted ({fault})"}


def deal_end(partie: int, deal: int, seat: int, view: dict, result: dict) -> dict:
    return {"type": "deal_end", "partie": partie, "deal": deal, "seat": seat, "view": view, "result": result}


def partie_end(partie: int, totals: list[int], places: list[float], forfeit: dict | None = None) -> dict:
    """``forfeit``: ``{"seat": S, "from_deal": K}`` when seat S forfeited the partie from deal K (R12.3)."""
    msg = {"type": "partie_end", "partie": partie, "totals": totals, "places": places}
    if forfeit is not None:
        msg["forfeit"] = forfeit
    return msg


BYE = {"type": "bye"}
