"""The ``search`` bot as a player: reproducible with a node budget, legal in
every decision, and whole matches under the real referee without a fault."""

from __future__ import annotations

import json
import subprocess
import sys

import bots
from bots.search import SearchBot
from protocol.sdk import Bot
from referee.matches.match import BotSpec, FaultPolicy, Limits, MatchConfig, run_match
from referee.rules.selfplay import play_partie


class Recorder(Bot):
    """Passes decisions through and records them."""

    def __init__(self, inner: Bot):
        self.inner = inner
        self.name = inner.name
        self.log: list[tuple[str, str]] = []

    def decide(self, decision, view, legal):
        out = self.inner.decide(decision, view, legal)
        assert out in legal
        self.log.append((decision, out))
        return out


def play(seed: str, nodes: int, deals: int = 4):
    me = Recorder(SearchBot(seed=5, nodes=nodes))
    partie = play_partie([me, bots.make("robot"), bots.make("robot")], seed=seed, deals=deals)
    return me.log, partie.totals()


def test_same_seed_and_node_budget_give_the_same_decisions():
    a = play("det:1", 4000)
    b = play("det:1", 4000)
    assert a == b
    assert any(d == "play" for d, _ in a[0])


def test_a_node_budget_is_kept_per_decision():
    bot = SearchBot(seed=1, nodes=3000)
    partie = play_partie([bot, bots.make("robot"), bots.make("robot")], seed="budget:1", deals=3)
    assert partie.deals
    # a card play spends at most its share of the budget (the largest share: the first searched trick)
    from bots.search import PLAY_SHARE, PLAY_SHARE_LATE
    assert bot.stats["searched"] > 0
    assert bot.stats["max_play_nodes"] <= 3000 * max(PLAY_SHARE_LATE, *PLAY_SHARE.values())


def test_whole_match_under_the_real_referee_without_faults(tmp_path):
    config = MatchConfig(
        bots=[BotSpec.parse("search"), BotSpec.parse("robot"), BotSpec.parse("random", seed="r")],
        partie=1, seed="search-match", limits=Limits(startup_ms=10000, move_ms=5000, max_line=1_000_000, stderr_cap=100_000),
        policy=FaultPolicy(max_faults=3), keep_partie=True, work_dir=tmp_path,
    )
    result = run_match(config)
    (partie,) = result.parties
    assert len(partie.deals) == 12
    for d in partie.deals:
        assert d.done and d.fault_info is None
        assert sum(d.result.payments) == 0


def test_protocol_process_answers_with_a_legal_action():
    from referee.rules.partie import Partie
    from protocol import messages as M

    deal = Partie(seed="proto").next_deal()
    req = M.request(1, 1, 1, deal.decision, deal.view(deal.to_move), [a.code for a in deal.legal_actions()], 2000)
    lines = [json.dumps({"type": "hello", "protocol": 1}), json.dumps(req), json.dumps({"type": "bye"})]
    out = subprocess.run([sys.executable, "-m", "bots", "search", "--nodes", "2000"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    answers = [json.loads(x) for x in out.stdout.splitlines()]
    assert answers[0]["type"] == "hello" and answers[0]["name"] == "search"
    assert answers[1]["action"] in req["legal"]


def test_bad_budget_is_refused_with_a_message():
    out = subprocess.run([sys.executable, "-m", "bots", "search", "--ms", "-5"], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "--ms" in out.stderr
