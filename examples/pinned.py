"""Run a built-in bot from another checkout of marias: ``python examples/pinned.py CHECKOUT NAME [ARGS]``.

A pinned copy of a bot, to measure a new version against an old one in a duel::

    git worktree add ../marias-search-v1 search-v1
    marias duel "new=python -m bots search" "v1=python examples/pinned.py ../marias-search-v1 search"

CHECKOUT's ``bots`` and ``referee`` are imported instead of the installed ones; NAME and
ARGS are those of ``python -m bots`` (for example ``search --ms 100``).
"""

import sys
from pathlib import Path

if len(sys.argv) < 3 or not (Path(sys.argv[1]) / "bots" / "__main__.py").is_file():
    sys.exit("usage: python examples/pinned.py CHECKOUT NAME [ARGS]  (CHECKOUT: a marias checkout with bots/)")
sys.path[0] = str(Path(sys.argv[1]).resolve())
from bots.__main__ import main  # noqa: E402  (imported from CHECKOUT)

sys.exit(main(sys.argv[2:]))
