"""A trained policy as the ``search`` bot's play-out policy (``search --rollout-policy FILE``).

The first tricks of :mod:`bots.search_rollout` play each world out to the deal's end with a
model of the table, by default the robot's policy at every seat.  With a policy file -- the
``.npz`` that ``examples/python-rl2/train.py`` writes: an MLP over the encoding of
:mod:`protocol.observation` (``policy_W1``, ``policy_b1``, ...) and, if trained, the learnt
values that re-rank its three likeliest actions (``values_W1``, ...) -- every seat of the
play-out plays that policy's choice instead: the observation of its view (``Deal.view``, what
the seat would be sent) and the mask of its legal actions.  It needs numpy (the ``rl`` extra).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from protocol.observation import N_ACTIONS, OBS_SIZE, action_indices, observation

from referee.rules.deal import Deal

#: the bot weighs the policy's K likeliest actions, and plays another than its likeliest
#: only when the learnt value (x VALUE_SCALE groše) is MARGIN groše more (as examples/python-rl2)
K = 3
MARGIN = 1.0
VALUE_SCALE = 20.0


def _layers(data, prefix: str) -> list[np.ndarray]:
    n = sum(1 for k in data.files if k.startswith(prefix + "W"))
    return [data[f"{prefix}{k}{i}"].astype(np.float32) for i in range(1, n + 1) for k in ("W", "b")]


def _forward(params: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    h = x
    for i in range(0, len(params) - 2, 2):
        h = np.maximum(h @ params[i] + params[i + 1], 0.0)
    return h @ params[-2] + params[-1]


class PolicyPlayOut:
    """``play_out(deal, me)``: the deal played to its end by the policy at every seat."""

    def __init__(self, path: str | Path):
        data = np.load(path)
        if int(data["obs_size"]) != OBS_SIZE or int(data["n_actions"]) != N_ACTIONS:
            raise ValueError(f"{path}: a policy for another encoding ({int(data['obs_size'])} x {int(data['n_actions'])})")
        self.policy = _layers(data, "policy_")
        self.values = _layers(data, "values_") or None
        if not self.policy:
            raise ValueError(f"{path}: no policy_W1 ... in it (a file of examples/python-rl2/train.py is needed)")

    def choose(self, obs: np.ndarray, mask: np.ndarray) -> int:
        logits = np.where(mask, _forward(self.policy, obs), -np.inf)
        order = np.argsort(-logits)[:K]
        greedy = int(order[0])
        if self.values is None:
            return greedy
        cands = [int(i) for i in order if mask[i]]
        if len(cands) < 2:
            return greedy
        v = _forward(self.values, obs) * VALUE_SCALE
        best = max(cands, key=lambda i: v[i])
        return best if v[best] > v[greedy] + MARGIN else greedy

    def step(self, d: Deal) -> None:
        """The policy's action for the seat to move (a card play or laying the cards down)."""
        legal = d.legal_actions()
        if len(legal) == 1:
            d.apply(legal[0])
            return
        mask = np.zeros(N_ACTIONS, bool)
        by_index = {}
        for a in legal:
            (i,) = action_indices(a.code)  # the play: one index each
            mask[i] = True
            by_index[i] = a
        d.apply(by_index[self.choose(observation(d.view(d.to_move)), mask)])

    def play_out(self, d: Deal, me: int) -> int:
        """Play ``d`` (in its card play) to its end; the groše of seat ``me``."""
        while not d.done:
            if d.phase != "play":
                raise ValueError(f"a policy play-out starts in the card play, not at a {d.phase} decision")
            self.step(d)
        return d.result.payments[me]
