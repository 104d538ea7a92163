"""``python -m bots NAME [--seed S]``: a built-in bot as a protocol process.

The same as ``marias bot NAME`` without loading the command-line toolkit, so a
bot starts quickly; the referee starts built-in bots this way.
"""

from __future__ import annotations

import argparse
import sys

from . import BUILTIN, SEARCH_MS, make
from protocol.sdk import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bots", description="Run a built-in bot on stdin/stdout (protocol/PROTOCOL.md).")
    parser.add_argument("name", choices=BUILTIN, help="the built-in bot")
    parser.add_argument("--seed", default="0", help="seed of the bot's own random choices (random, search)")
    parser.add_argument("--ms", type=_positive(float), default=SEARCH_MS, help=f"search: the most CPU time any one decision may take, in milliseconds (default {SEARCH_MS:g}; card plays take a share of it, bidding up to all)")
    parser.add_argument("--nodes", type=_positive(int), default=None, help="search: budget per decision in solver nodes instead of time (reproducible)")
    parser.add_argument("--rollout-policy", default=None, metavar="FILE",
                        help="search: play the first tricks' worlds out with this trained policy (an .npz of "
                             "examples/python-rl2/train.py; needs numpy) instead of the robot's")
    args = parser.parse_args(argv)
    return run(make(args.name, seed=args.seed, ms=args.ms, nodes=args.nodes, rollout_policy=args.rollout_policy))


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value
    return parse


if __name__ == "__main__":
    sys.exit(main())
