"""The first tricks' play-outs (:mod:`bots.search_rollout`): a deal rebuilt from
the true hands is the real deal again — the seat sees the same view, has the
same legal cards, and the robots' play-out from it ends with the same payments
as the real deal played on by the robots."""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from bots.robot import Robot
from bots.search import SearchBot
from bots.search_rollout import play_out, rebuild
from bots.search_worlds import TALON
from referee.rules.partie import Partie
from referee.rules.selfplay import play_partie

ROBOT = Robot()
SAME = ("seat", "phase", "to_move", "trump", "trump_card", "game", "actor", "contract", "levels", "proti",
        "bids", "tricks", "trick", "hlasky", "points")


def robot_move(deal):
    legal = deal.legal_actions()
    texts = [a.code for a in legal]
    return legal[texts.index(ROBOT.decide(deal.decision, deal.view(deal.to_move), texts))]


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10 ** 6))
def test_the_true_world_rebuilds_the_real_deal(seed):
    partie = Partie(seed=f"rollout:{seed}")
    checked = 0
    for n, deal in enumerate(partie.iter_deals()):
        while not deal.done:
            me = deal.to_move
            if deal.decision == "play" and len(deal.legal_actions()) > 1 and not (deal.tricks and len(deal.tricks) % 3):
                view = deal.view(me)
                truth = [m if p != me else 0 for p, m in enumerate(deal.masks)] + [0]
                if deal.talon and view["talon"] is None:
                    truth[TALON] = sum(1 << c for c in deal.talon)
                d = rebuild(view, truth, random.Random(seed))
                takeover = any(b["decision"] == "answer" and b["action"] in ("spatna", "durch") for b in view["bids"])
                if d is None:
                    assert takeover, "only a hidden earlier talon (a takeover) may leave no world to rebuild"
                else:
                    # the seat cannot tell the rebuilt deal from the real one; after a takeover the earlier
                    # talon is hidden and filled in consistently, so it is a world, not always the real deal
                    v2 = d.view(me)
                    for key in SAME:
                        assert v2[key] == view[key], key
                    assert sorted(v2["hand"]) == sorted(view["hand"])
                    assert sorted(a.code for a in d.legal_actions()) == sorted(a.code for a in deal.legal_actions())
                    if not takeover:  # the true hands and talon are the real deal: the same play-out
                        real = deal.copy()
                        while not real.done:
                            real.apply(robot_move(real))
                        assert play_out(d, me) == real.result.payments[me]
                        checked += 1
            deal.apply(robot_move(deal))
        if n >= 3:
            break
    assert checked > 0


def test_the_first_tricks_are_played_out_and_reproduce_with_a_node_budget():
    def run():
        bot = SearchBot(seed=3, nodes=20000)
        log = []

        orig = bot.choose_play

        def choose_play(view, legal):
            out = orig(view, legal)
            assert out in legal
            log.append(out)
            return out

        bot.choose_play = choose_play
        play_partie([bot, Robot(), Robot()], seed="rollout-det", deals=4)
        return log, bot.stats

    a, stats = run()
    b, _ = run()
    assert a == b
    assert stats["rollout_plays"] > 0 and stats["rollout_worlds"] >= 4 * stats["rollout_plays"] // 2


def _policy_file(path, rng, values: bool):
    """A small random MLP in the format of examples/python-rl2 (policy_W1 ... and values_W1 ...)."""
    import numpy as np

    from protocol.observation import N_ACTIONS, OBS_SIZE
    arrays = {}
    for prefix in ("policy_", "values_") if values else ("policy_",):
        sizes = (OBS_SIZE, 8, 8, N_ACTIONS)
        for i, (a, b) in enumerate(zip(sizes, sizes[1:]), 1):
            arrays[f"{prefix}W{i}"] = rng.standard_normal((a, b)).astype(np.float16)
            arrays[f"{prefix}b{i}"] = rng.standard_normal(b).astype(np.float16)
    np.savez(path, obs_size=OBS_SIZE, n_actions=N_ACTIONS, **arrays)
    return path


def test_a_trained_policy_plays_the_worlds_out_when_given(tmp_path):
    """search --rollout-policy: the play-outs of the first tricks are played by the policy at every
    seat (each of its actions legal: the engine refuses any other), reproducibly; a file that
    is not such a policy is refused."""
    np = __import__("pytest").importorskip("numpy", reason="the rl extra is not installed (pip install -e '.[rl]')")
    from bots.search_policy import PolicyPlayOut

    rng = np.random.default_rng(1)
    for values in (False, True):
        path = _policy_file(tmp_path / f"p{values}.npz", rng, values)
        player = PolicyPlayOut(path)
        steps = []
        orig = player.step
        player.step = lambda d: (steps.append(d.to_move), orig(d))
        partie = Partie(seed="policy-play-out")
        for deal in partie.iter_deals():
            while not deal.done and deal.phase != "play":
                deal.apply(robot_move(deal))
            if deal.done:
                continue
            copy = deal.copy()
            paid = player.play_out(copy, 0)
            assert copy.done and paid == copy.result.payments[0]
            assert set(steps) == {0, 1, 2}  # every seat is played by the policy
            while not deal.done:
                deal.apply(robot_move(deal))
            if len(partie.deals) == 3:
                break

        def run():
            bot = SearchBot(seed=3, nodes=20000, rollout_policy=str(path))
            log = []
            orig_choose = bot.choose_play
            bot.choose_play = lambda view, legal: log.append(orig_choose(view, legal)) or log[-1]
            play_partie([bot, Robot(), Robot()], seed="rollout-policy", deals=2)
            return log, bot.stats
        a, stats = run()
        assert run()[0] == a and stats["rollout_plays"] > 0
    (tmp_path / "bad.npz").write_bytes(b"not a policy")
    with __import__("pytest").raises(Exception):
        PolicyPlayOut(tmp_path / "bad.npz")
