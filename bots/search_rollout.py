"""The first tricks of the ``search`` bot: play-outs with the robot's policy.

An exact solve from more tricks left than :data:`bots.search.EXACT_TRICKS`
(by game) costs more nodes than a decision's budget holds, so there the card is chosen by
a one-step improvement of the robot's play: in each sampled world (consistent
with the view and explaining the others' bids, as for the exact search) the
deal is rebuilt in the engine (:func:`rebuild`), every legal card is played and
the deal played out with the robot's policy for every seat (or a trained
policy's, :mod:`bots.search_policy`), and the groše of the bot's seat are counted.  The same worlds serve every card (a paired
comparison); the robot's own card stays unless another beats it by more than
:data:`bots.search_bid.MARGIN` standard errors and :data:`bots.search_bid.MIN_GAIN`
groše: the bidding's own test, :func:`bots.search_bid.best_of_scores`.
"""

from __future__ import annotations

import random

from referee.rules.deal import Deal

from .robot_info import mask_of_codes
from .search_bid import INCONSISTENT, best_of_scores, robot_play_out, explains_bids, replay

#: fewer worlds than this never overrule the robot
MIN_WORLDS = 4
MAX_WORLDS = 40
MAX_REJECT = 40
#: solver nodes one play-out is counted as in a budget given in nodes (about its time)
ROLLOUT_NODES = 300


def rebuild(view: dict, world: list[int], rng: random.Random) -> Deal | None:
    """The engine's deal at the view's card play in ``world`` (the others' hands
    now and the talon): the hands are taken back to the bidding, the bidding
    replayed and the cards played so far applied.  After a takeover the earlier
    talon is hidden and filled in consistently (:func:`bots.search_bid.replay`), so
    the deal is one the seat cannot tell from the real one; ``None`` when no
    consistent deal is found."""
    me = view["seat"]
    played: list[list[str]] = [[], [], []]
    order: list[str] = []
    for tr in view.get("tricks") or []:
        for i, c in enumerate(tr["cards"]):
            played[(tr["leader"] + i) % 3].append(c)
            order.append(c)
    for e in view.get("trick") or []:
        played[e["seat"]].append(e["card"])
        order.append(e["card"])
    orig = list(world)
    for p in range(3):
        if p != me:
            orig[p] = world[p] | mask_of_codes(played[p])
    bid_view = dict(view, hand=list(view["hand"]) + played[me])
    d = replay(bid_view, orig, rng, check_turn=False)
    if d is None or d is INCONSISTENT:
        return None
    try:
        for c in order:
            d.apply("play:" + c)
    except ValueError:
        return None
    if d.done or d.to_move != me:
        return None
    return d


def play_out(d: Deal, me: int) -> int:
    """Play ``d`` to its end with the robot's policy; the groše of seat ``me``."""
    return robot_play_out(d, me)


def choose(bot, view: dict, know, texts: list[str], prior: str, budget, rng: random.Random) -> str:
    """The card to play among ``texts`` (``prior``: the robot's)."""
    if len(texts) == 1:
        return prior
    me = view["seat"]
    scores: dict[str, list[int]] = {t: [] for t in texts}
    worlds = rejected = 0
    while worlds < MAX_WORLDS and not budget.exhausted():
        world = know.sample(rng)
        if world is None:
            break
        if rejected < MAX_REJECT and not explains_bids(view, world, rng):
            rejected += 1
            continue
        d = rebuild(view, world, rng)
        if d is None:
            break
        for t in texts:
            e = d.copy()
            e.apply(t)
            scores[t].append(bot.play_out(e, me))
            if bot.nodes is not None:
                budget.used += ROLLOUT_NODES
        worlds += 1
    bot.stats["rollout_plays"] = bot.stats.get("rollout_plays", 0) + 1
    bot.stats["rollout_worlds"] = bot.stats.get("rollout_worlds", 0) + worlds
    if worlds < MIN_WORLDS:
        return prior
    scale = 2.0 if me == view["actor"] else 1.0
    best = best_of_scores({**scores, prior: scores[prior][:worlds]}, prior, texts, scale)
    if best != prior:
        bot.stats["rollout_changed"] = bot.stats.get("rollout_changed", 0) + 1
    return best
