"""``random``: chooses uniformly among the legal actions, seeded, so a match with
it is reproducible.

The random generator is re-seeded at the start of every deal from the bot's seed,
the partie and the deal number, so a deal replays the same whether the bot runs
in-process or as a protocol process, and whatever came before it.
"""

from __future__ import annotations

import random

from protocol.sdk import Bot


class RandomBot(Bot):
    name = "random"
    version = "1"

    def __init__(self, seed: int | str = 0):
        self.seed = seed
        self.rng = random.Random(f"random:{seed}")

    def on_partie_start(self, message: dict) -> None:
        if message.get("seed") is not None:  # a per-partie seed from the referee (a warm bot in a tournament)
            self.seed = message["seed"]

    def on_deal_start(self, message: dict) -> None:
        self.rng = random.Random(f"random:{self.seed}:{message.get('partie')}:{message.get('deal')}:{message.get('seat')}")

    def choose(self, view: dict, legal: list[str]) -> str:
        return legal[self.rng.randrange(len(legal))]
