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

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def encode(message: dict) -> str:
    """One line of the protocol, with its newline."""
    return _dumps(message) + "\n"


def decode(line: str | bytes) -> dict:
    """Parse one line; raises ``ValueError`` for anything but a JSON object."""
    obj = json.loads(line)
    if not isinstance(obj, dict):
        raise ValueError(f"a message is a JSON object, got {type(obj).__name__}")
    return obj
