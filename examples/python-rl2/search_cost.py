"""The CPU cost of ``search --rollout-policy``: ``python examples/python-rl2/search_cost.py``.

``search`` with its default play-outs (the robot's) and with this example's policy play the
same partie on seat 0 against two robots, in this process, partie by partie in turn; for each,
the CPU time per decision, per decision of the first tricks (the ones played out), and the
worlds played out per such decision.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bots.robot import Robot
from bots.search import EXACT_TRICKS, SearchBot
from referee.rules.selfplay import play_partie


class Timed:
    """A bot whose decisions are timed on the process's CPU clock."""

    def __init__(self, bot):
        self.bot = bot
        self.cpu = self.first_cpu = 0.0
        self.n = self.first_n = 0

    def __getattr__(self, name):
        return getattr(self.bot, name)

    def decide(self, decision, view, legal):
        c0 = time.process_time()
        out = self.bot.decide(decision, view, legal)
        cpu = time.process_time() - c0
        self.cpu += cpu
        self.n += 1
        if decision == "play" and len(legal) > 1 and 10 - len(view.get("tricks") or []) > EXACT_TRICKS[view["game"]]:
            self.first_cpu += cpu
            self.first_n += 1
        return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", type=Path, default=Path(__file__).resolve().parent / "policy.npz")
    ap.add_argument("--partie", type=int, default=6)
    ap.add_argument("--ms", type=float, default=None, help="search's CPU limit per decision (default 300)")
    ap.add_argument("--nodes", type=int, default=None, help="search's budget in solver nodes instead")
    args = ap.parse_args(argv)
    budget = {"nodes": args.nodes} if args.nodes else {"ms": args.ms or 300.0}
    label = " ".join(f"--{k} {v:g}" for k, v in budget.items())
    bots = {"robot's play-outs": Timed(SearchBot(seed=1, **budget)),
            "the policy's play-outs": Timed(SearchBot(seed=1, rollout_policy=str(args.policy), **budget))}
    for p in range(args.partie):
        for bot in bots.values():
            play_partie([bot, Robot(), Robot()], seed=f"search-cost:{p}")
    for name, t in bots.items():
        s = t.bot.stats
        worlds = s.get("rollout_worlds", 0) / max(1, s.get("rollout_plays", 0))
        print(f"search {label}, {name}: {1000 * t.cpu / t.n:.1f} ms CPU per decision ({t.n}); first tricks "
              f"{1000 * t.first_cpu / max(1, t.first_n):.1f} ms ({t.first_n}), {worlds:.1f} worlds each")


if __name__ == "__main__":
    main()
