"""The policy of ``examples/python-rl2``: a small multilayer perceptron in numpy.

logits = relu(relu(obs @ W1 + b1) @ W2 + b2) @ W3 + b3 over the 133 action indices of
protocol/RL.md, the indices the mask closes left out; its greedy choice is the open index with
the highest logit.  The same shape serves the learnt values of ``improve.py`` (one value per
index).  The weights are a numpy ``.npz`` (float16), so playing needs numpy alone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from protocol.observation import N_ACTIONS, OBS_SIZE, OFFSET

#: the bot weighs the policy's K likeliest actions ...
K = 3
#: ... and plays another than the policy's own only when its learnt value is this many groše more
MARGIN = 1.0
#: values are learnt divided by this (a deal's groše run to a few hundred)
VALUE_SCALE = 20.0
_PENDING_GAME = slice(OFFSET["pending_game"], OFFSET["pending_game"] + 3)

class Policy:
    def __init__(self, params: list[np.ndarray]):
        self.params = params  # W1, b1, W2, b2, W3, b3 (float32)

    @classmethod
    def new(cls, hidden: tuple[int, ...] = (256, 256), seed: int = 0) -> "Policy":
        rng = np.random.default_rng(seed)
        sizes = (OBS_SIZE, *hidden, N_ACTIONS)
        params = []
        for a, b in zip(sizes, sizes[1:]):
            params += [(rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32), np.zeros(b, np.float32)]
        params[-2] *= 0.1  # small first logits: the first guesses are near uniform
        return cls(params)

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        n = len(self.params) // 2
        return {f"{prefix}{k}{i}": p.astype(np.float16)
                for i in range(1, n + 1) for k, p in zip(("W", "b"), self.params[2 * i - 2:2 * i])}

    @classmethod
    def from_arrays(cls, data, prefix: str) -> "Policy":
        n = sum(1 for k in data.files if k.startswith(prefix + "W"))
        return cls([data[f"{prefix}{k}{i}"].astype(np.float32) for i in range(1, n + 1) for k in ("W", "b")])

    def logits(self, x: np.ndarray) -> np.ndarray:
        p = self.params
        h = x
        for i in range(0, len(p) - 2, 2):
            h = np.maximum(h @ p[i] + p[i + 1], 0.0)
        return h @ p[-2] + p[-1]

    def greedy(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The open index with the highest logit (what the bot plays)."""
        return int(np.argmax(np.where(mask, self.logits(obs), -np.inf)))


def save(path: str | Path, policy: Policy, values: Policy | None = None) -> None:
    """The policy (and the learnt values of ``improve.py``, if any) as one .npz of float16."""
    arrays = policy.arrays("policy_")
    if values is not None:
        arrays.update(values.arrays("values_"))
    np.savez_compressed(path, obs_size=OBS_SIZE, n_actions=N_ACTIONS, **arrays)


def load(path: str | Path) -> tuple[Policy, Policy | None]:
    data = np.load(path)
    if int(data["obs_size"]) != OBS_SIZE or int(data["n_actions"]) != N_ACTIONS:
        raise SystemExit(f"{path} was trained for another encoding ({int(data['obs_size'])} x "
                         f"{int(data['n_actions'])}, this one is {OBS_SIZE} x {N_ACTIONS}); train it again")
    values = Policy.from_arrays(data, "values_") if "values_W1" in data.files else None
    return Policy.from_arrays(data, "policy_"), values


def candidates(policy: Policy, obs: np.ndarray, mask: np.ndarray, k: int = K) -> list[int]:
    """The policy's ``k`` likeliest open indices, the likeliest first."""
    logits = np.where(mask, policy.logits(obs), -np.inf)
    order = np.argsort(-logits)[:k]
    return [int(i) for i in order if mask[i]]


class Chooser:
    """The bot's choice: the policy's greedy index, unless another of its ``K`` likeliest is
    worth ``MARGIN`` groše more by the learnt values (talon steps after the game: greedy)."""

    def __init__(self, policy: Policy, values: Policy | None, k: int = K, margin: float = MARGIN):
        self.policy, self.values, self.k, self.margin = policy, values, k, margin

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> int:
        greedy = self.policy.greedy(obs, mask)
        if self.values is None or obs[_PENDING_GAME].any():
            return greedy
        cands = candidates(self.policy, obs, mask, self.k)
        if len(cands) < 2:
            return greedy
        v = self.values.logits(obs) * VALUE_SCALE
        best = max(cands, key=lambda i: v[i])
        return best if v[best] > v[greedy] + self.margin else greedy
