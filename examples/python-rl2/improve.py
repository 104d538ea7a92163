"""Improvement by play: what each alternative of the policy's own choice brings, learnt.

The policy plays one seat of whole partie against two robots (the engine directly, as the
environments do).  At its decisions it tries its ``K`` likeliest open actions (a talon
decision: its likeliest games, each with its own discards): for each, a copy of the deal goes
on with that action and is played to its end -- the policy's greedy choices for its seat,
the robot's for the others -- and the seat's groše are the action's value in that deal.
A deal is one sample of the cards the seat cannot see, so a second network (the same shape)
regressed on these values learns their mean over the deals that look alike: the action's
value given what the seat knows.  The bot then plays, among the policy's ``K`` likeliest
actions, the one of highest learnt value when it beats the policy's own by ``MARGIN`` groše
(:class:`policy.Chooser`).
"""

from __future__ import annotations

import time
import zlib

import numpy as np

import bots
from protocol import observation as O
from referee.rl.stepper import Stepper
from referee.rules.partie import Partie

from collect import SCALE
from policy import VALUE_SCALE, Policy, candidates

def _own_steps(act, table: Stepper, seat: int) -> None:
    """``act``'s choice for ``seat`` (to move), a talon decision in its three steps."""
    first = True
    while first or table.pending:
        first = False
        mask = np.frombuffer(table.mask_bytes(), np.uint8).astype(bool)
        table.step(act(table.observation(seat), mask))


def _robot_step(robot, table: Stepper) -> None:
    deal = table.deal
    seat = deal.to_move
    legal = table.legal_texts()
    text = legal[0] if len(legal) == 1 else robot.decide(deal.decision, deal.view(seat), legal)
    for i in O.action_indices(text):
        table.step(i)


def play_out(act, robot, table: Stepper, me: int) -> int:
    """Play the deal of ``table`` to its end, ``act(obs, mask)`` for seat ``me``; its groše."""
    deal = table.deal
    while not deal.done:
        if deal.to_move == me:
            _own_steps(act, table, me)
        else:
            _robot_step(robot, table)
    return deal.result.payments[me]


def _value_of(act, robot, table: Stepper, me: int, index: int) -> int:
    """The value of taking ``index`` now (a talon's game: then ``act``'s own discards)."""
    copy = Stepper(table.deal.copy())
    copy.pending = table.pending
    copy.step(index)
    if copy.pending:
        _own_steps(act, copy, me)
    return play_out(act, robot, copy, me)


def explore(policy: Policy, partie: int, seed: str, act=None, play_share: float = 0.5, log=print) -> dict[str, np.ndarray]:
    """Rows (observation, mask, index, value) from ``partie`` partie, the policy on seat p % 3:
    its ``K`` likeliest actions tried at its decisions (at a share ``play_share`` of its card
    plays), the seat then playing ``act`` (default: the policy's greedy choice), also in the
    play-outs."""
    act = act or policy.greedy
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    robot = bots.make("robot")
    xs, ms, ys, vs = [], [], [], []
    c0 = time.process_time()
    for p in range(partie):
        me = p % 3
        part = Partie(seed=f"{seed}:{p}")
        for deal in part.iter_deals():
            table = Stepper(deal)
            while not deal.done:
                if deal.to_move != me:
                    _robot_step(robot, table)
                    continue
                obs = table.observation(me)
                mask = np.frombuffer(table.mask_bytes(), np.uint8).astype(bool)
                chosen = act(obs, mask)
                talon_step = bool(table.pending) or deal.phase == "talon"
                if not (talon_step and table.pending) and mask.sum() > 1 and (deal.phase != "play" or rng.random() < play_share):
                    for i in candidates(policy, obs, mask):
                        xs.append(np.rint(obs * SCALE).astype(np.uint8))
                        ms.append(mask)
                        ys.append(i)
                        vs.append(_value_of(act, robot, table, me, i))
                table.step(chosen)
        if (p + 1) % 50 == 0:
            log(f"  explored {p + 1}/{partie} partie: {len(ys)} values ({time.process_time() - c0:.0f} s CPU)")
    return {"obs": np.array(xs), "mask": np.array(ms), "action": np.array(ys, np.int16), "value": np.array(vs, np.float32)}


def value_gradients(net: Policy, x: np.ndarray, y: np.ndarray, v: np.ndarray):
    """Huber loss of the value of the index taken, and its gradients."""
    p = net.params
    hs, zs = [x], []
    h = x
    for i in range(0, len(p) - 2, 2):
        z = h @ p[i] + p[i + 1]
        zs.append(z)
        h = np.maximum(z, 0.0)
        hs.append(h)
    out = h @ p[-2] + p[-1]
    rows = np.arange(len(y))
    err = out[rows, y] - v / VALUE_SCALE
    loss = np.where(np.abs(err) < 1, 0.5 * err * err, np.abs(err) - 0.5).sum()
    g = np.zeros_like(out)
    g[rows, y] = np.clip(err, -1, 1) / len(y)
    grads = [None] * len(p)
    for i in range(len(p) - 2, -1, -2):
        grads[i] = hs[i // 2].T @ g
        grads[i + 1] = g.sum(axis=0)
        if i:
            g = (g @ p[i].T) * (zs[i // 2 - 1] > 0)
    return loss, grads


def fit_values(net: Policy, data: dict, epochs: int, lr: float, seed: int, batch: int = 512, log=print) -> None:
    from train import Adam

    rng = np.random.default_rng(seed)
    opt = Adam(net.params, lr)
    x, y, v = data["obs"], data["action"].astype(np.int64), data["value"]
    n = len(y)
    for epoch in range(epochs):
        order = rng.permutation(n)
        total = 0.0
        opt.lr = lr * (0.5 ** (epoch / max(1, epochs / 2)))
        for start in range(0, n, batch):
            idx = order[start:start + batch]
            loss, grads = value_gradients(net, x[idx].astype(np.float32) / SCALE, y[idx], v[idx])
            for k in range(0, len(grads), 2):
                grads[k] += 1e-5 * net.params[k]
            opt.step(net.params, grads)
            total += loss
        log(f"  values epoch {epoch + 1}/{epochs}: Huber loss {total / n:.4f}")
