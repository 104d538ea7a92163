"""The fast exact solver (:mod:`bots.search_solve`) against the reference solver.

``tests/reference_solver.py`` is the solver as it was before issue 28's speed-up;
on random positions the two must give every legal card the same value:

* trump games at 3–7 tricks left, every contract (hra, sto, sedma, sedma proti,
  sto proti) at levels 0–2, hlášky already declared by either side, announced
  sevens already lost, a trick in progress with 0–2 cards;
* betl and durch from the first trick and mid-deal, with a trick in progress.

Positions are made directly (random hands, the trick's cards played by the
rules), not by the engine, so that thousands of them are cheap.  A solver is
reused across positions of one game, as the bot does (its tables keyed by the
positions' shapes are shared between them), and after a solve cut short by its
budget.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bots import search_solve as new
from referee.rules.cards import ACE, KING, OBER, SEVEN, TEN
from tests import reference_solver as ref

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_game(rng: random.Random, kind: str) -> tuple:
    actor = rng.randrange(3)
    if kind != "barva":
        return kind, actor, None, {kind: rng.randrange(3)}, {}
    trump = rng.randrange(4)
    levels = {rng.choice(["hra", "sto"]): rng.randrange(3)}
    proti = {}
    if rng.random() < 0.4:
        levels["sedma"] = rng.randrange(3)
    if rng.random() < 0.3:
        levels["sedma-proti"] = rng.randrange(2)
        proti["sedma"] = rng.choice([s for s in range(3) if s != actor])
    if "hra" in levels and rng.random() < 0.2:
        levels["sto-proti"] = rng.randrange(2)
    return kind, actor, trump, levels, proti


def random_position(rng: random.Random, game: ref.Game, tricks_left: int, leader: int | None = None) -> ref.Position:
    """Random hands of ``tricks_left`` cards, then 0–2 cards of the trick played by the rules."""
    deck = list(range(32))
    rng.shuffle(deck)
    hands = [sum(1 << c for c in deck[i * tricks_left:(i + 1) * tricks_left]) for i in range(3)]
    gone = deck[3 * tricks_left:]
    if leader is None:
        leader = rng.randrange(3)
    pos = ref.Position(hands=hands, leader=leader, tricks_done=10 - tricks_left)
    legal_of = ref.Solver(game)
    win = -1
    for _ in range(rng.randrange(3)):
        seat = pos.to_move
        legal = legal_of.legal(hands[seat], seat, [c for _s, c in pos.trick], win, pos.tricks_done)
        c = rng.choice([d for d in range(32) if legal >> d & 1])
        hands[seat] &= ~(1 << c)
        pos.trick.append((seat, c))
        if win < 0 or legal_of.beats(c, win):
            win = c
    if game.kind == "barva":
        # what the finished tricks scored: their tens and aces split between the sides, and the hlášky
        # of kings and obers already played
        gone_pts = sum(10 for c in gone if c & 7 in (TEN, ACE))
        a = 10 * rng.randint(0, gone_pts // 10)
        pos.a_cards, pos.d_cards = a, gone_pts - a
        hl = []
        for s in range(4):
            if (s * 8 + KING) in gone and (s * 8 + OBER) in gone and rng.random() < 0.5:
                hl.append(40 if s == game.trump else 20)
        rng.shuffle(hl)
        a_hl, d_hl = [], []
        for v in hl:
            (a_hl if rng.random() < 0.5 else d_hl).append(v)
        pos.a_hl, pos.d_hl = tuple(a_hl), tuple(d_hl)
        seven = game.trump * 8 + SEVEN
        lost = set()
        if seven in gone:
            for name in ("sedma", "sedma-proti"):
                if name in game.level and rng.random() < 0.5:
                    lost.add(name)
        pos.lost_early = frozenset(lost)
    return pos


def both(game_args: tuple) -> tuple[ref.Solver, new.Solver]:
    kind, actor, trump, levels, proti = game_args
    return (ref.Solver(ref.Game.make(kind, actor, trump, levels, proti)),
            new.Solver(new.Game.make(kind, actor, trump, levels, proti)))


def as_new(pos: ref.Position) -> new.Position:
    return new.Position(hands=list(pos.hands), leader=pos.leader, trick=list(pos.trick), tricks_done=pos.tricks_done,
                        a_cards=pos.a_cards, d_cards=pos.d_cards, a_hl=pos.a_hl, d_hl=pos.d_hl,
                        lost_early=pos.lost_early)


def same_values(kind: str, tricks_left: int, seed: int, first_trick_leader_is_actor: bool = False,
                positions: int = 2) -> None:
    rng = random.Random(seed)
    game_args = random_game(rng, kind)
    old_solver, new_solver = both(game_args)  # one solver of each for every position: tables kept between solves
    for _ in range(positions):
        leader = game_args[1] if first_trick_leader_is_actor else None
        pos = random_position(rng, old_solver.game, tricks_left, leader)
        want = old_solver.solve(pos)
        got = new_solver.solve(as_new(pos))
        assert got == want, (game_args, pos)


@settings(max_examples=60, **SETTINGS)
@given(seed=st.integers(0, 2**32), tricks_left=st.integers(3, 6))
def test_trump_games_equal_the_reference(seed, tricks_left):
    same_values("barva", tricks_left, seed)


@settings(max_examples=12, **SETTINGS)
@given(seed=st.integers(0, 2**32))
def test_trump_games_at_seven_tricks_equal_the_reference(seed):
    same_values("barva", 7, seed, positions=1)


@settings(max_examples=30, **SETTINGS)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["betl", "durch"]))
def test_betl_and_durch_from_the_first_trick_equal_the_reference(seed, kind):
    same_values(kind, 10, seed, first_trick_leader_is_actor=True, positions=1)


@settings(max_examples=60, **SETTINGS)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["betl", "durch"]), tricks_left=st.integers(2, 8))
def test_betl_and_durch_mid_deal_equal_the_reference(seed, kind, tricks_left):
    same_values(kind, tricks_left, seed)


@settings(max_examples=40, **SETTINGS)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["betl", "durch"]), tricks_left=st.integers(2, 10))
def test_nb_wins_is_the_value_at_a_trick_start(seed, kind, tricks_left):
    rng = random.Random(seed)
    game_args = random_game(rng, kind)
    old_solver, _ = both(game_args)
    pos = random_position(rng, old_solver.game, tricks_left,
                          game_args[1] if tricks_left == 10 else None)
    # back to the trick start: the trick's cards return to their hands
    for s, c in pos.trick:
        pos.hands[s] |= 1 << c
    pos.trick = []
    values = old_solver.solve(pos)
    actor_moves = pos.leader == game_args[1]
    won = max(values.values()) > 0 if actor_moves else min(values.values()) > 0
    game = new.Game.make(*game_args)
    assert new.nb_wins(game, pos.hands, pos.leader) == won
    assert new.Solver(game).nb_wins(pos.hands, pos.leader) == won


@settings(max_examples=15, **SETTINGS)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["barva", "betl"]), nodes=st.integers(1, 300))
def test_a_solve_cut_short_leaves_the_solver_exact(seed, kind, nodes):
    rng = random.Random(seed)
    game_args = random_game(rng, kind)
    old_solver, new_solver = both(game_args)
    pos = random_position(rng, old_solver.game, 6 if kind == "barva" else 8)
    try:
        new_solver.solve(as_new(pos), new.Budget(nodes=nodes))
    except new.OutOfNodes:
        pass  # the point: a solve cut short by its budget
    assert new_solver.solve(as_new(pos)) == old_solver.solve(pos)


def test_bench_search_times_a_baseline_on_the_same_positions():
    # the old solver (tests/reference_solver.py) solves the same positions in the same run;
    # the bench raises if the values differ
    from pathlib import Path

    from referee.tools import bench

    ref_file = Path(__file__).with_name("reference_solver.py")
    out = bench.search(positions=1, partie=0, tricks=(3,), baseline=str(ref_file))
    for name in ("trump_3_tricks", "betl_10_tricks", "durch_10_tricks"):
        assert out[f"baseline_{name}_ms_mean"] > 0
        assert out[f"speedup_{name}"] > 0
