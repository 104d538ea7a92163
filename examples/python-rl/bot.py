"""The policy trained by train.py, as a protocol bot: ``python examples/python-rl/bot.py``.

Each request is answered by :func:`protocol.observation.decide`, which computes the same
observation and mask the training environment gave (from the request's ``view`` and
``legal``) and takes the talon's three steps; the policy picks the open index with the
highest logit.  ``--policy FILE`` loads another policy (default: policy.npz beside this file).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from protocol.observation import N_ACTIONS, OBS_SIZE, decide
from protocol.sdk import Bot, run


class Learned(Bot):
    name = "python-rl"
    version = "1"

    def __init__(self, path: Path):
        data = np.load(path)
        if int(data["obs_size"]) != OBS_SIZE or int(data["n_actions"]) != N_ACTIONS:
            raise SystemExit(f"{path} was trained for another encoding ({int(data['obs_size'])} x "
                             f"{int(data['n_actions'])}, this one is {OBS_SIZE} x {N_ACTIONS}); train it again")
        self.W = data["W"].astype(np.float32)
        self.b = data["b"].astype(np.float32)

    def greedy(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(np.argmax(np.where(mask, obs @ self.W + self.b, -np.inf)))

    def choose(self, view: dict, legal: list[str]) -> str:
        return decide(view, legal, self.greedy)


if __name__ == "__main__":
    args = sys.argv[1:]
    path = Path(args[args.index("--policy") + 1]) if "--policy" in args else Path(__file__).resolve().parent / "policy.npz"
    run(Learned(path))
