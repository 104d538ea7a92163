"""A small SDK for writing bots in Python (see PROTOCOL.md).

Subclass :class:`Bot`, implement :meth:`Bot.choose` (or one ``choose_<decision>``
method per decision kind) and call :func:`run`::

    from protocol.sdk import Bot, run

    class First(Bot):
        name = "first"
        def choose(self, view, legal):
            return legal[0]

    if __name__ == "__main__":
        run(First())

The same object also plays in-process (the referee's benchmarks and tests call
:meth:`Bot.decide` directly), so a bot behaves identically either way.
"""

from __future__ import annotations

import json
import sys
from typing import IO

from .messages import PROTOCOL_VERSION, encode

DECISIONS = ("trump", "talon", "answer", "contract", "flek", "play")


class Bot:
    """Base class: one method per decision kind, all defaulting to :meth:`choose`."""

    name = "bot"
    version = "1"

    def choose(self, view: dict, legal: list[str]) -> str:
        raise TypeError(f"{type(self).__name__} implements neither choose() nor choose_<decision>() for this decision")

    def decide(self, decision: str, view: dict, legal: list[str]) -> str:
        method = getattr(self, "choose_" + decision, None)
        if method is not None:
            return method(view, legal)
        return self.choose(view, legal)

    # Optional hooks; the defaults ignore the message.
    def on_hello(self, message: dict) -> None: ...
    def on_partie_start(self, message: dict) -> None: ...
    def on_deal_start(self, message: dict) -> None: ...
    def on_event(self, message: dict) -> None: ...
    def on_deal_end(self, message: dict) -> None: ...
    def on_partie_end(self, message: dict) -> None: ...


def run(bot: Bot, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Speak the protocol on stdin/stdout until ``bye`` or end of input."""
    inp = stdin or sys.stdin
    out = stdout or sys.stdout
    hooks = {
        "partie_start": bot.on_partie_start,
        "deal_start": bot.on_deal_start,
        "event": bot.on_event,
        "deal_end": bot.on_deal_end,
        "partie_end": bot.on_partie_end,
    }
    for line in inp:
        if not line.strip():
            continue
        msg = json.loads(line)
        t = msg.get("type")
        if t == "request":
            action = bot.decide(msg["decision"], msg["view"], msg["legal"])
            out.write(encode({"type": "action", "id": msg["id"], "action": action}))
            out.flush()
        elif t == "hello":
            bot.on_hello(msg)
            out.write(encode({"type": "hello", "protocol": PROTOCOL_VERSION, "name": bot.name, "version": bot.version}))
            out.flush()
        elif t == "bye":
            break
        else:
            hook = hooks.get(t)
            if hook is not None:
                hook(msg)
    return 0


#: Names of :mod:`protocol.observation` (the learning encoding, protocol/RL.md) offered here;
#: imported on first use, since they need numpy (the ``rl`` extra) and the SDK itself does not.
_OBSERVATION_NAMES = ("observation", "action_mask", "legal_indices", "action_indices", "action_text",
                      "decide", "information_string", "ACTIONS", "N_ACTIONS", "OBS_SIZE", "LAYOUT")


def __getattr__(name: str):
    if name in _OBSERVATION_NAMES:
        from . import observation
        return getattr(observation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
