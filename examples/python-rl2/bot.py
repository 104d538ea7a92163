"""The bot of ``examples/python-rl2`` as a protocol program: ``python examples/python-rl2/bot.py``.

Each request is answered by :func:`protocol.observation.decide` -- the observation and mask
the training environment gave, computed from the request's ``view`` and ``legal``, the talon
in its three steps -- with :class:`policy.Chooser`: the MLP's likeliest action, or another of
its three likeliest when the learnt values say it is worth more.  numpy and the protocol
package only.  ``--policy FILE`` plays another policy (default: policy.npz beside this file).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from policy import Chooser, load  # noqa: E402

from protocol.observation import decide  # noqa: E402
from protocol.sdk import Bot, run  # noqa: E402


class Trained(Bot):
    name = "python-rl2"
    version = "1"

    def __init__(self, path: Path):
        self.choose_index = Chooser(*load(path))

    def choose(self, view: dict, legal: list[str]) -> str:
        if len(legal) == 1:
            return legal[0]
        return decide(view, legal, self.choose_index)


if __name__ == "__main__":
    args = sys.argv[1:]
    path = Path(args[args.index("--policy") + 1]) if "--policy" in args else HERE / "policy.npz"
    run(Trained(path))
