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
from learn import passes
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


def fit_values(net: Policy, data: dict, epochs: int, lr: float, seed: int, log=print) -> None:
    """Regress the values (Huber loss, in units of VALUE_SCALE groše) of the indices taken."""
    y, v = data["action"].astype(np.int64), data["value"] / VALUE_SCALE

    def loss_of(idx):
        target, value = y[idx], v[idx]

        def loss(out):
            rows = np.arange(len(target))
            err = out[rows, target] - value
            g = np.zeros_like(out)
            g[rows, target] = np.clip(err, -1, 1) / len(target)
            return np.where(np.abs(err) < 1, 0.5 * err * err, np.abs(err) - 0.5).sum(), g, 0
        return loss

    def report(epoch, total, _extra):
        log(f"  values epoch {epoch}/{epochs}: Huber loss {total / len(y):.4f}")

    passes(net, data["obs"], loss_of, epochs, lr, seed, report)
