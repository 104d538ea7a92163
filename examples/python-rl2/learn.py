"""Learning the MLPs of ``policy.py`` with numpy: backpropagation, Adam, and the passes over
the rows (shared by the imitation of ``train.py`` and the values of ``improve.py``)."""

from __future__ import annotations

import numpy as np

from collect import SCALE
from policy import Policy


class Adam:
    def __init__(self, params, lr):
        self.lr, self.t = lr, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, params, grads):
        self.t += 1
        c1, c2 = 1 - 0.9 ** self.t, 1 - 0.999 ** self.t
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            p -= self.lr * (m / c1) / (np.sqrt(v / c2) + 1e-8)


def backprop(net: Policy, x: np.ndarray, loss):
    """``loss(out) -> (value, d value / d out, extra)`` of the net's output for the rows ``x``;
    (value, extra, the gradients of the parameters)."""
    p = net.params
    hs, zs = [x], []
    h = x
    for i in range(0, len(p) - 2, 2):
        z = h @ p[i] + p[i + 1]
        zs.append(z)
        h = np.maximum(z, 0.0)
        hs.append(h)
    value, g, extra = loss(h @ p[-2] + p[-1])
    grads = [None] * len(p)
    for i in range(len(p) - 2, -1, -2):
        grads[i] = hs[i // 2].T @ g
        grads[i + 1] = g.sum(axis=0)
        if i:
            g = (g @ p[i].T) * (zs[i // 2 - 1] > 0)
    return value, extra, grads


def passes(net: Policy, obs: np.ndarray, loss_of, epochs: int, lr: float, seed: int, report,
           batch: int = 512, decay: float = 1e-5) -> None:
    """``epochs`` passes of Adam over the rows (observations stored as uint8 x SCALE), the step
    size halved over each half of them; ``loss_of(rows)`` gives the loss of those rows (see
    :func:`backprop`), ``report(epoch, total value, total extra)`` is told each pass's sums."""
    rng = np.random.default_rng(seed)
    opt = Adam(net.params, lr)
    n = len(obs)
    for epoch in range(epochs):
        order = rng.permutation(n)
        total = extra = 0.0
        opt.lr = lr * (0.5 ** (epoch / max(1, epochs / 2)))
        for start in range(0, n, batch):
            idx = order[start:start + batch]
            value, more, grads = backprop(net, obs[idx].astype(np.float32) / SCALE, loss_of(idx))
            for k in range(0, len(grads), 2):
                grads[k] += decay * net.params[k]
            opt.step(net.params, grads)
            total += value
            extra += more
        report(epoch + 1, total, extra)
