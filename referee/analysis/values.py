"""The value of each legal card: double-dummy (every hand known) and from a seat's view.

Both come from the ``search`` bot's exact solver (:mod:`bots.search_solve`) run on
positions of the engine's :class:`~referee.rules.deal.Deal`:

* **double-dummy** — the deal's own hands, best play of both sides after the card;
* **from the seat's view** — the mean over ``N`` worlds that agree with what the seat
  knew at that decision: :meth:`Deal.view` (the referee's redaction, exactly what the
  seat was sent) read by the search bot's own sampler (:mod:`bots.search_worlds`), each
  world solved exactly.  A world is a deal of the unseen cards into the other hands
  (and an unknown talon) consistent with the view; no model of how the others bid is
  applied.

Units (:class:`Value`): ``grose`` is what the seat's side is paid under best play, in
the deal's settlement (R6–R9), as the seat's own payment: the actor receives twice
what each defender pays (R9.5), so one groš per defender is 2 to the actor and −1 to
each defender.  ``points`` (trump games only) is the card points of the seat's side at
the end (cards and the last trick, R1.4; hlášky not included).  Best play is
lexicographic: first the groše, then, between lines of equal groše, the card points
(the actor's side takes the most it can, the defence the most it can); so a card's
points are those of a best line, not of any line.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bots.search_settle import trump_settle
from bots.search_solve import Game, Position, Solver, game_of_deal, position_of_deal
from bots.search_worlds import Knowledge

from ..rules.actions import LAY
from ..rules.cards import CARDS
from ..rules.deal import Deal

#: a leaf's value in the analysis: the groše (per defender) times this, plus the actor's card points
SCALE = 128  # > 90, the most card points a side can take
CODE = tuple(str(c) for c in CARDS)


def ordered_settle(game, a_cards, d_cards, a_hl, d_hl, seven_in_last, lost_early=frozenset()) -> int:
    """A trump game's leaf for the analysis: the settlement (what each defender pays the actor,
    :func:`bots.search_settle.trump_settle`) first, then the actor's card points: the solver's
    best line is then the best in groše and, among those, in card points."""
    return trump_settle(game, a_cards, d_cards, a_hl, d_hl, seven_in_last, lost_early) * SCALE + a_cards


@dataclass(frozen=True)
class Value:
    """A legal action's value for the seat to move (module docstring: the units)."""

    grose: float
    points: float | None = None

    @property
    def won(self) -> bool:
        """The seat's side comes out ahead: its payment is positive (as R10.2 counts a deal won)."""
        return self.grose > 0

    def to_dict(self) -> dict:
        out = {"grose": _num(self.grose), "won": self.won}
        if self.points is not None:
            out["points"] = _num(self.points)
        return out


def _num(x: float):
    """An integer where the value is one, else rounded to 3 decimals (JSON stays short)."""
    r = round(float(x), 3)
    return int(r) if r == int(r) else r


class Valuer:
    """Exact solvers for the games of one deal, kept between its positions (their
    transposition tables serve the later positions of the same game)."""

    def __init__(self):
        self._solvers: dict[Game, Solver] = {}
        self._nodes = 0  # of solvers let go
        self._memo: dict[tuple, dict] = {}  # positions solved (the first lead is also the declared game's)

    def solver(self, game: Game) -> Solver:
        s = self._solvers.get(game)
        if s is None:
            if len(self._solvers) > 16:  # a deal's games: the one played, betls and durches passed by
                self._nodes += self.nodes
                self._solvers.clear()
            s = self._solvers[game] = Solver(game, settle=ordered_settle)
        return s

    def solve(self, game: Game, pos: Position) -> dict[int, tuple[int, int | None]]:
        """Each legal card of the player to move: (groše each defender pays the actor, the
        actor's card points at the end; ``None`` in betl and durch) under best play."""
        key = (game, tuple(pos.hands), pos.leader, tuple(pos.trick), pos.tricks_done, pos.a_cards, pos.d_cards,
               pos.a_hl, pos.d_hl, pos.lost_early)
        raw = self._memo.get(key)
        if raw is None:
            if len(self._memo) > 256:
                self._memo.clear()
            raw = self._memo[key] = self.solver(game).solve(pos)
        if game.kind != "barva":
            return {c: (v, None) for c, v in raw.items()}
        return {c: divmod(v, SCALE) for c, v in raw.items()}

    def nb_wins(self, game: Game, hands: list[int], leader: int) -> bool:
        """Betl or durch at a trick start, every hand known: does the actor win?"""
        return self.solver(game).nb_wins(hands, leader)

    @property
    def nodes(self) -> int:
        """Cards played by the searches so far."""
        return self._nodes + sum(s.nodes for s in self._solvers.values())


def seat_value(seat: int, actor: int, per_defender: float, actor_points: float | None) -> Value:
    """The solver's terms (per defender, to the actor; the actor's card points) in the seat's."""
    if seat == actor:
        return Value(2 * per_defender, actor_points)
    return Value(-per_defender, None if actor_points is None else 90 - actor_points)


def dd_values(deal: Deal, valuer: Valuer) -> dict[str, Value]:
    """Every legal action of the seat to move in the play phase, double-dummy (``play:Ah`` ->
    its value; ``lay`` settled by the engine, R8.4).  The solver's lines are card play: laying
    down is valued where it is offered, not as a choice inside a line (it scores as the best
    play-out does, but for a trump seven the actor would have to trump with before the last
    trick: laying counts it in the last trick, so ``lay`` can be worth more than every card)."""
    seat = deal.to_move
    game = game_of_deal(deal)
    out = {}
    for c, (v, pts) in valuer.solve(game, position_of_deal(deal)).items():
        out["play:" + CODE[c]] = seat_value(seat, deal.actor, v, pts)
    if LAY in deal.legal_actions():
        out["lay"] = laid_value(deal, seat)
    return out


def laid_value(deal: Deal, seat: int) -> Value:
    """The actor's cards laid now (R8.4): the engine's settlement of it."""
    d = deal.copy()
    d.apply(LAY)
    actor = d.actor
    pts = None
    if d.game == "barva":
        own = d.points[actor]
        pts = own if seat == actor else sum(d.points) - own
    return Value(d.result.payments[seat], pts)


def view_values(deal: Deal, worlds: int, rng: random.Random, valuer: Valuer) -> tuple[dict[str, Value], int]:
    """Every legal action of the seat to move, as the mean over ``worlds`` worlds consistent
    with its view (:meth:`Deal.view`, read by :class:`bots.search_worlds.Knowledge`), and the
    number of worlds solved.  ``lay`` is worth the actor's best card in each world: it is offered
    only when he takes every remaining trick whatever is played (R8.1), and then scores what
    his best play-out scores (R8.4) — except where the rules of play would make him trump with
    his trump seven before the last trick, which laying counts in the last trick; the engine's
    value of laying needs the real hands, so a world does not get it and laying is never shown
    worse than a card from the view."""
    seat = deal.to_move
    know = Knowledge(deal.view(seat))
    game = game_of_deal(deal)
    base = position_of_deal(deal)
    own = deal.masks[seat]
    actions = [str(a) for a in deal.legal_actions()]
    sums = {a: [0.0, 0.0] for a in actions}
    solved = 0
    for _ in range(worlds):
        world = know.sample(rng)
        if world is None:
            break
        base.hands = [own if p == seat else world[p] for p in range(3)]
        vals = {"play:" + CODE[c]: seat_value(seat, deal.actor, v, pts) for c, (v, pts) in valuer.solve(game, base).items()}
        if "lay" in sums:
            vals["lay"] = max(vals.values(), key=lambda x: (x.grose, x.points or 0))
        for a in actions:
            s = sums[a]
            s[0] += vals[a].grose
            s[1] += vals[a].points or 0
        solved += 1
    if not solved:
        return {}, 0
    trump = deal.game == "barva"
    return {a: Value(s[0] / solved, s[1] / solved if trump else None) for a, s in sums.items()}, solved


def best(values: dict[str, Value], order: list[str]) -> str:
    """The best action: most groše, then most card points, then the first in ``order``."""
    return max(order, key=lambda a: (values[a].grose, values[a].points or 0, -order.index(a)))


def best_line(deal: Deal, valuer: Valuer) -> Deal:
    """A copy of ``deal`` (in its play phase) played to its end by both sides' best cards,
    double-dummy (:func:`best`; laying down is not chosen, its value is a card's): the
    settlement of best play in the deal's own terms (components won and lost)."""
    d = deal.copy()
    while not d.done:
        vals = dd_values(d, valuer)
        vals.pop("lay", None)
        order = [str(a) for a in d.legal_actions() if str(a) in vals]
        d.apply(best(vals, order))
    return d


def start_position(deal: Deal) -> Position:
    """The position at the first lead (R7.1) of a deal whose contract is set and no card played."""
    return Position(hands=list(deal.masks), leader=deal.forhont if deal.game == "barva" else deal.actor)


def root_value(game: Game, pos: Position, valuer: Valuer) -> tuple[int, int | None]:
    """The value of a position for the actor's side, the actor to move first (per defender; the
    actor's card points): his best card's."""
    vals = valuer.solve(game, pos).values()
    mover_is_actor = pos.to_move == game.actor
    return (max if mover_is_actor else min)(vals)
