"""The OpenSpiel game (referee/rl/openspiel_game.py): OpenSpiel's own checks and its IS-MCTS
bot run on it, its deals are the engine's, and its information states are the referee's
redaction."""

from __future__ import annotations

import json
import random

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed (pip install -e '.[rl]')")
pyspiel = pytest.importorskip("pyspiel", reason="the rl extra is not installed (pip install -e '.[rl]')")

import referee.rl.openspiel_game as G  # noqa: E402  (registers python_marias)
from protocol import observation as O  # noqa: E402
from referee.matches.tell import request_line  # noqa: E402
from referee.rules.deal import Deal  # noqa: E402
from referee.rules.partie import shuffled_deck  # noqa: E402


@pytest.fixture(scope="module")
def game():
    return pyspiel.load_game("python_marias")


def _dealt(game, deck):
    state = game.new_initial_state()
    for c in deck:
        assert state.is_chance_node()
        state.apply_action(int(c))
    return state


def _random_move(state, rng):
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
    else:
        state.apply_action(rng.choice(state.legal_actions()))


def test_the_game_is_registered_with_the_action_table(game):
    assert "python_marias" in pyspiel.registered_names()
    assert game.num_players() == 3 and game.num_distinct_actions() == O.N_ACTIONS
    assert game.max_chance_outcomes() == 32
    assert game.information_state_tensor_shape() == [O.OBS_SIZE]


def test_openspiels_random_simulation_checks_pass(game):
    pyspiel.random_sim_test(game, num_sims=10, serialize=True, verbose=False)


def test_the_chance_nodes_deal_the_deck_from_the_top(game):
    deck = shuffled_deck("os-deck")
    state = game.new_initial_state()
    assert sorted(a for a, _p in state.chance_outcomes()) == list(range(32))
    assert all(p == pytest.approx(1 / 32) for _a, p in state.chance_outcomes())
    state = _dealt(game, deck)
    engine = Deal(deck, 0)
    for seat in range(3):
        assert state.view(seat) == engine.view(seat)
    assert state.current_player() == 0  # the forhont of deal 1 chooses the trump


def test_a_random_deal_pays_what_the_engine_pays_for_the_same_actions(game):
    rng = random.Random(8)
    for k in range(20):
        deck = shuffled_deck(f"os-pay:{k}")
        state = _dealt(game, deck)
        engine = Deal(deck, 0)
        texts = []
        pending = []
        while not state.is_terminal():
            seat = state.current_player()
            a = rng.choice(state.legal_actions())
            name = state.action_to_string(seat, a)
            state.apply_action(a)
            if name.startswith(("talon:", "discard:")):
                pending.append(a)
                if len(pending) < 3:
                    continue
                texts.append(O.action_text(pending))
                pending = []
            else:
                texts.append(name)
        for t in texts:
            engine.apply(t)
        assert engine.done and state.returns() == [float(p) for p in engine.result.payments]
        assert sum(state.returns()) == 0


def test_information_states_are_the_referees_request_views(game):
    rng = random.Random(3)
    state = _dealt(game, shuffled_deck("os-views"))
    pending = ()
    while not state.is_terminal():
        deal = state.table.deal
        seat = state.current_player()
        req = json.loads(request_line(1, 1, 1, deal.decision, deal.view(seat), [str(a) for a in deal.legal_actions()], 2000))
        assert state.information_state_string(seat) == O.information_string(req["view"], pending)
        assert np.array_equal(np.array(state.information_state_tensor(seat), np.float32), O.observation(req["view"], pending))
        for other in range(3):
            if other != seat:  # another seat's information state: its own view, nothing of the mover's cards
                assert state.information_state_string(other) == O.information_string(deal.view(other))
        assert sorted(state.legal_actions()) == O.legal_indices(req["legal"], pending)
        a = rng.choice(state.legal_actions())
        state.apply_action(a)
        name = O.ACTIONS[a]
        pending = pending + (a,) if name.startswith(("talon:", "discard:")) and len(pending) < 2 else ()


def test_a_resampled_state_is_one_the_player_cannot_tell_apart(game):
    rng = random.Random(11)
    sampler = pyspiel.UniformProbabilitySampler(11, 0.0, 1.0)  # seeded: the same worlds every run
    changed = 0
    checked = 0
    for k in range(12):
        state = _dealt(game, shuffled_deck(f"os-resample:{k}"))
        while not state.is_terminal():
            for player in range(3):
                world = state.resample_from_infostate(player, sampler)
                assert world.information_state_string(player) == state.information_state_string(player)
                true, new = state.table.deal, world.table.deal
                assert [len(h) for h in new.hands] == [len(h) for h in true.hands]
                assert new.hands[player] == true.hands[player]
                # the same cards, only elsewhere among the places the player cannot see
                assert sorted([c for h in new.hands for c in h] + new.talon) == sorted([c for h in true.hands for c in h] + true.talon)
                assert world.current_player() == state.current_player()
                if state.current_player() == player:  # what he may do depends only on what he knows
                    assert world.legal_actions() == state.legal_actions()
                changed += new.hands != true.hands
                fv = new.view(new.forhont)  # the world's forhont sees his own trump choice as the world's trump card
                if fv["trump_card"] is not None and not fv["zlidu"]:
                    assert fv["bids"][0]["action"] == "trump:" + fv["trump_card"]
                    assert new.holds(new.forhont, new.trump_card) or new.trump_card in [c for t in new.tricks for c in t[1]] + new.trick
                checked += 1
                _check_voids_kept(new, G._voids(true))
            _random_move(state, rng)
    assert checked > 300 and changed > checked // 3  # it really deals other worlds


def _check_voids_kept(deal, void):
    for seat in range(3):
        for c in deal.hands[seat]:
            assert (c >> 3) not in void[seat]


def test_a_resampled_world_plays_on_to_a_legal_end(game):
    rng = random.Random(4)
    for k in range(15):
        state = _dealt(game, shuffled_deck(f"os-playon:{k}"))
        for _ in range(rng.randrange(5, 40)):
            if state.is_terminal():
                break
            _random_move(state, rng)
        if state.is_terminal():
            continue
        world = state.resample_from_infostate(state.current_player(), pyspiel.UniformProbabilitySampler(k, 0.0, 1.0))
        while not world.is_terminal():
            _random_move(world, rng)
        assert sum(world.returns()) == 0


def test_openspiels_ismcts_bot_plays_a_whole_deal_legally_on_every_seat(game):
    from open_spiel.python.algorithms import ismcts, mcts
    rs = np.random.RandomState(5)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    bots = [ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=25, random_state=rs) for _ in range(3)]
    for bot in bots:  # worlds drawn from the bots' own seeded generator, so the test replays exactly
        bot.set_resampler(lambda state, player: state.resample_from_infostate(player, rs.uniform))
    for k in range(2):
        state = _dealt(game, shuffled_deck(f"os-ismcts:{k}"))
        moves = 0
        while not state.is_terminal():
            seat = state.current_player()
            a = bots[seat].step(state)  # asserts that every sampled world has the same information state
            assert a in state.legal_actions()
            state.apply_action(a)
            moves += 1
        assert moves >= 4 and sum(state.returns()) == 0
