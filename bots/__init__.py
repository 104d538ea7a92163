"""The built-in bots, each runnable as ``marias bot NAME`` (a protocol process)
or in-process through :func:`make`."""

from __future__ import annotations

from protocol.sdk import Bot

BUILTIN = ("random", "robot")


def make(name: str, seed: int | str = 0) -> Bot:
    """A fresh built-in bot by name."""
    if name == "random":
        from .random_bot import RandomBot
        return RandomBot(seed)
    if name == "robot":
        from .robot import Robot
        return Robot()
    raise KeyError(f"unknown built-in bot {name!r} (built-ins: {', '.join(BUILTIN)})")
