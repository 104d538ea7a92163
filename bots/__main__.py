"""``python -m bots NAME [--seed S]``: a built-in bot as a protocol process.

The same as ``marias bot NAME`` without loading the command-line toolkit, so a
bot starts quickly; the referee starts built-in bots this way.
"""

from __future__ import annotations

import argparse
import sys

from . import BUILTIN, make
from protocol.sdk import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bots", description="Run a built-in bot on stdin/stdout (protocol/PROTOCOL.md).")
    parser.add_argument("name", choices=BUILTIN, help="the built-in bot")
    parser.add_argument("--seed", default="0", help="seed of the bot's own random choices (random only)")
    args = parser.parse_args(argv)
    return run(make(args.name, seed=args.seed))


if __name__ == "__main__":
    sys.exit(main())
