"""Train a small bot for volený mariáš in the PettingZoo environment, with numpy alone.

The policy is linear: logits = observation @ W + b over the 133 action indices, the closed
ones masked out (protocol/RL.md).  Two stages, a few minutes on one core:

1. imitation -- the built-in robot plays all three seats of ``--imitate`` partie in the
   environment; every decision it makes (a talon decision as its three steps) becomes an
   example (the environment's observation, its mask, the robot's index), and W is fitted
   by softmax regression (Adam, cross-entropy over the open indices);
2. reinforce -- the policy then plays one seat (every seat in turn) against two robots for
   ``--reinforce`` partie and follows REINFORCE: each deal's groše, less a running mean, times
   the gradient of the log-probability of each index it chose.

    python examples/python-rl/train.py                      # writes runs/python-rl/policy.npz
    python examples/python-rl/train.py --imitate 20 --reinforce 0 --out runs/quick.npz   # a quicker, weaker one

The policy is then a protocol bot: ``python examples/python-rl/bot.py --policy runs/python-rl/policy.npz``
(without ``--policy`` it plays the policy shipped beside it).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import bots
from protocol import observation as O
from referee.rl.pettingzoo_env import MariasEnv

HERE = Path(__file__).resolve().parent


def robot_indices(robot, env, agent) -> tuple[int, ...]:
    """The robot's answer to the request the referee would send ``agent``, as indices."""
    view = env.view(agent)
    return O.action_indices(robot.decide(view["phase"], view, env.legal()))


# ------------------------------------------------------------------ imitation

def collect(partie: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The robot's decisions on every seat of ``partie`` whole partie: observations, masks, indices."""
    robot = bots.make("robot")
    env = MariasEnv(deals=12)
    xs, ms, ys = [], [], []
    for p in range(partie):
        env.reset(seed=f"imitate:{seed}:{p}")
        while not all(env.terminations.values()):
            agent = env.agent_selection
            for i in robot_indices(robot, env, agent):
                obs = env.observe(agent)
                xs.append(obs["observation"].astype(np.float16))
                ms.append(obs["action_mask"].astype(bool))
                ys.append(i)
                env.step(i)
    return np.array(xs), np.array(ms), np.array(ys)


def masked_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    z = np.where(mask, logits, -1e9)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z) * mask
    return e / e.sum(axis=-1, keepdims=True)


class Adam:
    def __init__(self, shapes, lr):
        self.lr, self.t = lr, 0
        self.m = [np.zeros(s, np.float32) for s in shapes]
        self.v = [np.zeros(s, np.float32) for s in shapes]

    def step(self, params, grads):
        self.t += 1
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            p -= self.lr * (m / (1 - 0.9 ** self.t)) / (np.sqrt(v / (1 - 0.999 ** self.t)) + 1e-8)


def imitate(x, m, y, epochs: int, seed: int, W=None, b=None):
    rng = np.random.default_rng(seed)
    W = np.zeros((O.OBS_SIZE, O.N_ACTIONS), np.float32) if W is None else W
    b = np.zeros(O.N_ACTIONS, np.float32) if b is None else b
    opt = Adam([W.shape, b.shape], 3e-3)
    n = len(y)
    for epoch in range(epochs):
        order = rng.permutation(n)
        loss = hits = 0.0
        for start in range(0, n, 256):
            idx = order[start:start + 256]
            xb, mb, yb = x[idx].astype(np.float32), m[idx], y[idx]
            p = masked_softmax(xb @ W + b, mb)
            loss -= np.log(p[np.arange(len(yb)), yb] + 1e-12).sum()
            hits += (p.argmax(axis=1) == yb).sum()
            g = p
            g[np.arange(len(yb)), yb] -= 1  # d(cross-entropy)/d(logits)
            g /= len(yb)
            opt.step([W, b], [xb.T @ g + 1e-5 * W, g.sum(axis=0)])
        print(f"  epoch {epoch + 1}: loss {loss / n:.3f}, agrees with the robot {hits / n:.1%}", flush=True)
    return W, b


# ------------------------------------------------------------------ reinforce

def reinforce(W, b, partie: int, seed: int, lr: float = 1e-3):
    """REINFORCE against two robots; the learner's seat rotates with each partie."""
    rng = np.random.default_rng(seed)
    robot = bots.make("robot")
    env = MariasEnv(deals=12)
    opt = Adam([W.shape, b.shape], lr)
    baseline, total = 0.0, 0.0
    for p in range(partie):
        me = f"seat_{p % 3}"
        env.reset(seed=f"reinforce:{seed}:{p}")
        steps: list[tuple[np.ndarray, np.ndarray, int]] = []
        while not all(env.terminations.values()):
            agent = env.agent_selection
            deal = env.table.deal
            if agent == me:
                obs = env.observe(agent)
                x, mask = obs["observation"], obs["action_mask"].astype(bool)
                i = int(rng.choice(O.N_ACTIONS, p=masked_softmax(x @ W + b, mask)))
                steps.append((x, mask, i))
                env.step(i)
            else:
                for i in robot_indices(robot, env, agent):
                    env.step(i)
            if deal.done and steps:  # the deal just ended: env.rewards holds its groše
                reward = env.rewards[me]
                advantage = (reward - baseline) / 20.0
                baseline += 0.02 * (reward - baseline)
                total += reward
                xs = np.array([s[0] for s in steps])
                ms = np.array([s[1] for s in steps])
                ys = np.array([s[2] for s in steps])
                g = masked_softmax(xs @ W + b, ms)
                g[np.arange(len(ys)), ys] -= 1  # -d log p / d logits
                g *= advantage / len(ys)
                opt.step([W, b], [xs.T @ g, g.sum(axis=0)])
                steps = []
            elif deal.done:
                total += env.rewards[me]
        if (p + 1) % 10 == 0:
            print(f"  partie {p + 1}: mean groše per partie so far {total / (p + 1):+.1f}", flush=True)
    return W, b


def evaluate(W, b, partie: int, seed: int) -> float:
    """Mean groše per partie of the greedy policy on one seat (each seat in turn) against two robots."""
    robot = bots.make("robot")
    env = MariasEnv(deals=12)
    total = 0
    for p in range(partie):
        me = f"seat_{p % 3}"
        env.reset(seed=f"evaluate:{seed}:{p}")
        while not all(env.terminations.values()):
            agent = env.agent_selection
            if agent == me:
                obs = env.observe(agent)
                env.step(int(np.argmax(np.where(obs["action_mask"], obs["observation"] @ W + b, -np.inf))))
            else:
                for i in robot_indices(robot, env, agent):
                    env.step(i)
            total += env.rewards[me]
    return total / partie


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--imitate", type=int, default=150, help="partie of robot play to imitate")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--reinforce", type=int, default=150, help="partie of REINFORCE against two robots (0: none)")
    ap.add_argument("--lr", type=float, default=3e-4, help="REINFORCE's step size")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--evaluate", type=int, default=90, help="partie against two robots to measure the result (0: none)")
    ap.add_argument("--out", type=Path, default=Path("runs/python-rl/policy.npz"),
                    help="the policy file (under runs/, never into the checkout; bot.py --policy plays it)")
    args = ap.parse_args(argv)
    t0 = time.process_time()
    print(f"imitation: the robot plays {args.imitate} partie ...", flush=True)
    x, m, y = collect(args.imitate, args.seed)
    print(f"  {len(y)} decisions collected ({time.process_time() - t0:.0f} s CPU)", flush=True)
    W, b = imitate(x, m, y, args.epochs, args.seed)
    if args.evaluate:
        print(f"  greedy policy against two robots: {evaluate(W, b, args.evaluate, args.seed):+.1f} groše per partie", flush=True)
    if args.reinforce:
        print(f"reinforce: {args.reinforce} partie against two robots ...", flush=True)
        W, b = reinforce(W, b, args.reinforce, args.seed, args.lr)
        if args.evaluate:
            print(f"  greedy policy against two robots: {evaluate(W, b, args.evaluate, args.seed):+.1f} groše per partie", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, W=W.astype(np.float16), b=b.astype(np.float16),
                        obs_size=O.OBS_SIZE, n_actions=O.N_ACTIONS)
    print(f"saved {args.out} ({args.out.stat().st_size // 1024} KiB) after {time.process_time() - t0:.0f} s CPU")


if __name__ == "__main__":
    main()
