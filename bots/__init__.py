"""The built-in bots, each runnable as ``marias bot NAME`` (a protocol process)
or in-process through :func:`make`."""

from __future__ import annotations

from protocol.sdk import Bot

BUILTIN = ("random", "robot", "search")
#: the search bot's default limit per decision: the most CPU milliseconds any one
#: decision may take (card plays take a share of it, so the mean is about a third)
SEARCH_MS = 300.0


def make(name: str, seed: int | str = 0, *, ms: float = SEARCH_MS, nodes: int | None = None,
         rollout_policy: str | None = None) -> Bot:
    """A fresh built-in bot by name (``ms``/``nodes``: the search bot's limit per decision, in CPU
    milliseconds or in solver nodes; ``rollout_policy``: a trained policy file its first tricks
    play out with instead of the robot, :mod:`bots.search_policy`)."""
    if name == "random":
        from .random_bot import RandomBot
        return RandomBot(seed)
    if name == "robot":
        from .robot import Robot
        return Robot()
    if name == "search":
        from .search import SearchBot
        return SearchBot(seed, ms=ms, nodes=nodes, rollout_policy=rollout_policy)
    raise KeyError(f"unknown built-in bot {name!r} (built-ins: {', '.join(BUILTIN)})")
