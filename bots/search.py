"""``search``: the built-in searching player.

It decides from its own view only (the dict a protocol bot receives), like any
bot, and is deterministic given its seed and a budget in nodes.

* card play — Perfect Information Monte Carlo: deals consistent with the view
  are sampled (:mod:`bots.search_worlds`), those that do not explain the
  others' bids as the robot makes them drawn again
  (:func:`bots.search_bid.explains_bids`); in the first tricks, where an exact
  solve does not fit the budget, each legal card is played out in each world
  with the robot's policy (:mod:`bots.search_rollout`); later each world is solved exactly on the real
  settlement (:mod:`bots.search_solve`), and the card with the best mean groše
  for the bot's side is played; the robot's judgement of the cards
  (:mod:`bots.robot_play`) breaks ties and plays where too few worlds could be
  solved or played out within the budget;
* bidding and raising — :mod:`bots.search_bid`: the talon (Barva, betl,
  durch), answers, the contract, fleks and games against, each judged by the
  mean groše over sampled deals that explain the others' bids, played out with
  the robot's policy as the model of the table; the robot's own choice stands
  unless another beats it clearly.

Time: ``ms`` (default :data:`bots.SEARCH_MS`) is the most CPU time any one
decision may take, kept by a deadline on the bot's own CPU clock checked inside
the solver (a busy machine slows the bot's answers, not its play).  Bidding
decisions may use all of it; card plays take a share (:data:`PLAY_SHARE`), so the
mean over a partie is about a third of ``ms``.  A second deadline on the wall
clock, at :data:`WALL_FACTOR` × ``ms``, ends a decision that the machine starves
of CPU.  With ``nodes`` the budget is counted in solver nodes (a play-out as a
fixed number of them) and the bot reproduces its decisions exactly, whatever
the machine's load.
"""

from __future__ import annotations

import random
import time

from protocol.sdk import Bot

from . import SEARCH_MS, search_bid, search_rollout
from .robot import Robot
from .robot_info import CODE, NAME, Info
from .robot_play import choose_card
from .search_solve import Budget, Game, OutOfNodes, Position, Solver
from .search_worlds import Knowledge, lost_early

#: solver nodes per CPU millisecond assumed when only a time budget is given (a
#: cap above what pure Python reaches, so that the CPU deadline rules)
NODES_PER_MS = 1000
#: a decision ends at this many times ``ms`` of wall time, whatever CPU it had
WALL_FACTOR = 1.5
#: the CPU deadline is set this far into a decision's share, leaving room to answer
DEADLINE_SHARE = 0.9
MAX_WORLDS = 40
#: sampled worlds whose hands do not explain the others' bids (as the robot
#: bids) are drawn again, up to this many in a decision
MAX_REJECT = 60
#: beyond this many tricks left an exact solve is not even tried, by game (a
#: trump game at 7 tricks left costs ~40 ms a world, too few worlds fit a card
#: play's share; a betl from its first trick ~20-40 ms, a durch ~4 ms)
EXACT_TRICKS = {"barva": 6, "betl": 10, "durch": 10}
#: share of ``ms`` a card play spends, by tricks left under that limit (0: the
#: first searched trick, which costs most a world; bidding decisions spend up
#: to all of ``ms``, see search_bid)
PLAY_SHARE = {0: 0.55, 1: 0.35}
PLAY_SHARE_LATE = 0.27
#: share of a card play before that (play-outs with the robot's policy, :mod:`bots.search_rollout`); 0: the robot's card
ROLLOUT_SHARE = 0.27
#: fewer solved worlds than this do not overrule the robot's card
MIN_PLAY_WORLDS = 3


class SearchBot(Bot):
    name = "search"
    version = "1"

    def __init__(self, seed: int | str = 0, ms: float = SEARCH_MS, nodes: int | None = None, bid: bool = True,
                 rollout_policy: str | None = None):
        self.seed = seed
        self.bid = bid  # False: bid and raise as the robot does (to measure what bidding by search adds)
        # the first tricks' play-outs: the robot's policy at every seat, or a trained one (bots/search_policy.py)
        if rollout_policy:
            from .search_policy import PolicyPlayOut
            self.play_out = PolicyPlayOut(rollout_policy).play_out
        else:
            self.play_out = search_rollout.play_out
        self.ms = float(ms)
        self.nodes = nodes
        self.robot = Robot()
        self._solver: Solver | None = None
        self.stats = {"decisions": 0, "play": 0, "searched": 0, "worlds": 0, "nodes": 0}

    # ------------------------------------------------------------ budget and randomness
    def budget(self, share: float = 1.0) -> Budget:
        """The budget of a decision that may spend ``share`` (at most 1) of ``ms``."""
        share = min(share, 1.0)
        if self.nodes is not None:
            return Budget(nodes=int(self.nodes * share))
        ms = self.ms * share
        return Budget(nodes=int(ms * NODES_PER_MS), deadline=time.process_time() + ms / 1000.0 * DEADLINE_SHARE,
                      wall=time.perf_counter() + self.ms * WALL_FACTOR / 1000.0)

    def rng(self, view: dict, decision: str) -> random.Random:
        """A generator seeded by the bot's seed and what the seat has seen, so a
        decision replays the same in-process or as a protocol process."""
        plays = sum(len(t["cards"]) for t in view.get("tricks") or []) + len(view.get("trick") or [])
        key = (f"search:{self.seed}:{view.get('seat')}:{decision}:{','.join(view.get('hand') or [])}:"
               f"{len(view.get('bids') or [])}:{plays}:{view.get('trump_card')}")
        return random.Random(key)

    def decide(self, decision: str, view: dict, legal: list[str]) -> str:
        self.stats["decisions"] += 1
        if len(legal) == 1:
            return legal[0]
        return super().decide(decision, view, legal)

    # ------------------------------------------------------------ bidding
    def _bidding(self, name: str, view: dict, legal: list[str]) -> str:
        """A bidding decision by search (:mod:`bots.search_bid`), or as the robot decides it
        when ``bid`` is off."""
        if not self.bid:
            return getattr(self.robot, name)(view, legal)
        return getattr(search_bid, name)(self, view, legal)

    def choose_trump(self, view: dict, legal: list[str]) -> str:
        return self._bidding("choose_trump", view, legal)

    def choose_talon(self, view: dict, legal: list[str]) -> str:
        return self._bidding("choose_talon", view, legal)

    def choose_answer(self, view: dict, legal: list[str]) -> str:
        return self._bidding("choose_answer", view, legal)

    def choose_contract(self, view: dict, legal: list[str]) -> str:
        return self._bidding("choose_contract", view, legal)

    def choose_flek(self, view: dict, legal: list[str]) -> str:
        return self._bidding("choose_flek", view, legal)

    # ------------------------------------------------------------ play
    def solver_for(self, game: Game) -> Solver:
        if self._solver is None or self._solver.game != game:
            self._solver = Solver(game)
        return self._solver

    def choose_play(self, view: dict, legal: list[str]) -> str:
        if "lay" in legal:
            return "lay"  # R8: the result cannot change any more; laying ends the deal at once
        self.stats["play"] += 1
        cards = [CODE[t[5:]] for t in legal if t.startswith("play:")]
        info = Info(view)
        fallback = choose_card(info, cards)
        if 10 - len(view.get("tricks") or []) > EXACT_TRICKS[view["game"]]:
            if ROLLOUT_SHARE <= 0:
                return "play:" + NAME[fallback]
            # equivalent cards (no other card still in play between them, see Solver.moves) are played out once
            game = Game.make(view["game"], view["actor"], info.trump, view.get("levels") or {}, view.get("proti") or {})
            legal_mask = sum(1 << c for c in cards)
            present = info.hand | info.unseen | sum(1 << CODE[e["card"]] for e in view.get("trick") or [])
            reps = self.solver_for(game).moves(legal_mask, info.hand, present)
            texts = ["play:" + NAME[c] for c in cards if c in reps or c == fallback]
            return search_rollout.choose(self, view, Knowledge(view), texts, "play:" + NAME[fallback],
                                         self.budget(ROLLOUT_SHARE), self.rng(view, "rollout"))
        values = self.pimc(view, cards)
        if values is None:
            return "play:" + NAME[fallback]
        actor_side = view["seat"] == view["actor"]
        sign = 1 if actor_side else -1
        best = max(sign * v for v in values.values())
        eps = 1e-9
        if sign * values[fallback] >= best - eps:
            return "play:" + NAME[fallback]
        pick = min((c for c in cards if sign * values[c] >= best - eps), key=lambda c: cards.index(c))
        return "play:" + NAME[pick]

    def pimc(self, view: dict, cards: list[int]) -> dict[int, float] | None:
        """Mean value (groše each defender pays the actor) of each legal card over
        sampled worlds, or ``None`` when no world could be solved in the budget."""
        tricks = view.get("tricks") or []
        exact = EXACT_TRICKS[view["game"]]
        if 10 - len(tricks) > exact:
            return None
        know = Knowledge(view)
        game = Game.make(view["game"], view["actor"], know.info.trump, view.get("levels") or {}, view.get("proti") or {})
        solver = self.solver_for(game)
        rng = self.rng(view, "play")
        budget = self.budget(PLAY_SHARE.get(exact - (10 - len(tricks)), PLAY_SHARE_LATE))
        per_world = (budget.nodes or 0) // 2
        pos0 = _position(view, know)
        sums = {c: 0.0 for c in cards}
        worlds = 0
        rejected = 0
        while worlds < MAX_WORLDS and not budget.exhausted():
            world = know.sample(rng)
            if world is None:
                break
            if rejected < MAX_REJECT and not search_bid.explains_bids(view, world, rng):
                rejected += 1  # the others' bids say their hands are not these
                continue
            pos = Position(hands=[world[p] if p != know.me else know.info.hand for p in range(3)], **pos0)
            left = budget.left()
            sub = budget.part(min(per_world, left) if left is not None else per_world)
            try:
                vals = solver.solve(pos, sub)
            except OutOfNodes:
                budget.used += sub.used
                break
            budget.used += sub.used
            worlds += 1
            for c in cards:
                sums[c] += vals[c]
        self.stats["nodes"] += budget.used
        self.stats["max_play_nodes"] = max(self.stats.get("max_play_nodes", 0), budget.used)
        if worlds < MIN_PLAY_WORLDS:
            return None
        self.stats["searched"] += 1
        self.stats["worlds"] += worlds
        self.stats["play_rejected"] = self.stats.get("play_rejected", 0) + rejected
        return {c: sums[c] / worlds for c in cards}


def _position(view: dict, know: Knowledge) -> dict:
    """The parts of a :class:`Position` that the view gives (everything but the hands)."""
    actor = view["actor"]
    trick = [(e["seat"], CODE[e["card"]]) for e in view.get("trick") or []]
    tricks = view.get("tricks") or []
    if trick:
        leader = trick[0][0]
    elif tricks:
        leader = tricks[-1]["winner"]
    else:
        leader = view["actor"] if view["game"] != "barva" else view["forhont"]
    points = view.get("points") or [0, 0, 0]
    hl = view.get("hlasky") or []
    return {
        "leader": leader, "trick": trick, "tricks_done": len(tricks),
        "a_cards": points[actor], "d_cards": sum(points) - points[actor],
        "a_hl": tuple(h["points"] for h in hl if h["seat"] == actor),
        "d_hl": tuple(h["points"] for h in hl if h["seat"] != actor),
        "lost_early": lost_early(view),
    }
