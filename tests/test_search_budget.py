"""The ``search`` bot's budgets and its bidding of betl and durch.

* A betl or durch reached in a bidding world is solved exactly
  (:class:`bots.search_bid.Outcomes`): checked on hands whose result follows
  from R7.3 and R7.11 by hand, with R9.1's stakes.
* A time budget is kept on the clock the bot is given (its CPU time by
  default): a solve stops at the deadline.  Checked with a fake clock, so no
  test depends on the machine's speed.
* A node budget makes every decision independent of the clocks.
"""

from __future__ import annotations

import itertools
import time

import pytest

import bots
from bots import search_bid
from bots.search import SearchBot
from bots.search_bid import Outcomes
from bots.search_solve import Budget, OutOfNodes, Solver, game_of_deal, position_of_deal
from referee.rules.deal import Deal
from referee.rules.partie import deck_from_hands
from referee.rules.selfplay import play_partie

# the defenders hold every X, U, O, K and A (five of each suit): whatever the actor
# leads, someone follows and beats it (R7.3); a card of his is never the highest
LOW_HANDS = {
    1: "Xh Uh Oh Kh Ah Xl Ul Ol Kl Al",
    2: "Xb Ub Ob Kb Ab Xa Ua Oa Ka Aa",
}


# the actor keeps all eight hearts, Al and Kl (7l, 8l discarded): nobody else holds a
# heart or a leaf above the king, so whatever he leads to the first trick (R7.1: the
# actor leads) takes it
TAKES_FIRST = ("7h 8h 9h Xh Uh Oh Kh Ah Al Kl 7l 8l",
               {1: "9l Xl Ul Ol 7b 8b 9b Xb Ub Ob", 2: "Kb Ab 7a 8a 9a Xa Ua Oa Ka Aa"})


def betl_deal(forhont_hand: str, discard: str, trump_card: str, others: dict = LOW_HANDS) -> Deal:
    """A deal where the forhont (seat 0) announces betl discarding ``discard``,
    both others answer dobrá and nobody raises: the first card is next."""
    d = Deal(deck_from_hands({0: forhont_hand, **others}), 0)
    d.apply(f"trump:{trump_card}")
    d.apply(f"betl:{discard}")
    while d.phase != "play":
        assert "dobra" in [a.code for a in d.legal_actions()], d.phase
        d.apply("dobra")
    assert d.game == "betl" and d.actor == 0
    return d


def test_a_betl_of_only_the_lowest_cards_is_solved_as_won():
    # the actor keeps 7s, 8s and 9s: every trick is taken by a defender's higher card (R7.3),
    # so the betl is won (R7.11); R9.1: betl 5 from each defender, 10 to the actor
    d = betl_deal("7h 8h 9h 7l 8l 9l 7b 8b 9b 7a 8a 9a", "9h,9l", "7h")
    bot = SearchBot(nodes=10**6)
    outcome = Outcomes(bot, bot.budget())
    assert outcome(d.copy(), 0) == 10
    assert outcome(d.copy(), 1) == -5
    assert bot.stats["nb_solved"] == 2


def test_a_betl_that_must_take_the_first_trick_is_solved_as_lost():
    # R7.11: the first trick the actor takes ends the betl, lost
    d = betl_deal(TAKES_FIRST[0], "7l,8l", "7h", TAKES_FIRST[1])
    bot = SearchBot(nodes=10**6)
    outcome = Outcomes(bot, bot.budget())
    assert outcome(d.copy(), 0) == -10
    assert outcome(d.copy(), 2) == 5


def test_a_solve_cut_short_by_the_budget_falls_back_to_a_play_out():
    d, _nodes = heavy_betl()
    bot = SearchBot(nodes=10**6)
    outcome = Outcomes(bot, Budget(nodes=1))  # the solver stops at its first look at the budget
    value = outcome(d.copy(), 0)
    assert value in (-10, 10)  # the robot's play-out settles it: R9.1, betl 5 from each defender
    assert bot.stats["nb_unsolved"] == 1


class FakeClock:
    """A clock that advances one second each time it is read."""

    def __init__(self):
        self.t = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        self.t += 1.0
        return self.t


def heavy_betl() -> tuple[Deal, int]:
    """The first shuffled deck (by seed) whose betl, the forhont discarding his last
    two cards, takes the solver more than 4,096 nodes: a solve that reads the clock
    more than three times.  Its deal and node count."""
    from referee.rules.partie import shuffled_deck

    for i in range(200):
        d = Deal(shuffled_deck(f"heavy-betl:{i}"), 0)
        first7 = [a.code for a in d.legal_actions() if a.code.startswith("trump:") and a.code != "trump:zlidu"]
        d.apply(first7[0])
        talon = [a.code for a in d.legal_actions() if a.code.startswith("betl:")]
        d.apply(talon[-1])
        while d.phase != "play":
            d.apply("dobra")
        full = Budget()
        Solver(game_of_deal(d)).solve(position_of_deal(d), full)
        if full.used > 4096:
            return d, full.used
    raise AssertionError("no betl of 200 decks needs 4,096 nodes")


def test_a_solve_stops_at_the_deadline_of_the_given_clock():
    d, nodes = heavy_betl()
    clock = FakeClock()
    budget = Budget(deadline=3.5, clock=clock)  # passed at the fourth reading
    with pytest.raises(OutOfNodes):
        Solver(game_of_deal(d)).solve(position_of_deal(d), budget)
    assert clock.reads == 4
    assert 0 < budget.used < nodes


def test_a_wall_deadline_in_the_past_ends_a_decision_at_once():
    budget = Budget(nodes=10**9, wall=time.perf_counter() - 1.0)
    assert budget.exhausted() and budget.timed_out()
    assert not Budget(nodes=10).exhausted()


def test_a_node_budget_gives_the_same_decisions_whatever_the_clocks_say(monkeypatch):
    def decisions():
        bot = SearchBot(seed=3, nodes=20_000)
        log = []

        class Rec(bots.Bot if hasattr(bots, "Bot") else object):
            name = "rec"

            def decide(self, decision, view, legal):
                out = bot.decide(decision, view, legal)
                log.append(out)
                return out

        play_partie([Rec(), bots.make("robot"), bots.make("robot")], seed="clocks:1", deals=3)
        return log

    calm = decisions()
    # a machine so loaded that every clock reading jumps a minute ahead
    jump = itertools.count(0, 60.0)
    monkeypatch.setattr(time, "process_time", lambda: next(jump))
    monkeypatch.setattr(time, "perf_counter", lambda: next(jump))
    busy = decisions()
    assert calm == busy
    assert len(calm) > 20


def test_every_share_of_the_decision_limit_is_at_most_the_whole():
    from bots import search

    shares = [search_bid.BID_SHARE, search_bid.TRUMP_SHARE, search.ROLLOUT_SHARE, search.PLAY_SHARE_LATE,
              *search.PLAY_SHARE.values()]
    assert all(0 < s <= 1 for s in shares)
    bot = SearchBot(ms=200)
    t0 = time.process_time()
    b = bot.budget(5.0)  # a share above 1 is cut to the whole limit
    assert b.deadline - t0 <= 0.2 + 1e-3
