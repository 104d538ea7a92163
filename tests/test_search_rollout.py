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
