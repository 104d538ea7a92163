"""Volený mariáš as an OpenSpiel game, through OpenSpiel's Python game API (protocol/RL.md).

``import referee.rl.openspiel_game`` registers ``python_marias``; then
``pyspiel.load_game("python_marias")`` gives one deal between three players.  The first 32
moves are chance nodes that deal the deck from the top, card by card (each outcome a card
index, uniform over the cards not dealt yet); the deal then follows the rules engine with
the forhont at seat 0, players 0-2 being seats 0-2.  Actions are the indices of
:data:`protocol.observation.ACTIONS` (a talon decision takes three of them).  Returns are
the deal's groše.

Information states come from the referee's redaction: the information-state string is the
seat's whole protocol view (``Deal.view``, what a bot is sent) with the pending talon steps;
the tensor is :func:`protocol.observation.observation` of that view.  (The string identifies
the information state exactly; the tensor is the learning encoding and forgets, e.g., the
order of the tricks.)  The observation string and tensor are the same as the information
state's.

``resample_from_infostate(player, sampler)`` draws a state the player cannot tell from this
one, for IS-MCTS (``open_spiel.python.algorithms.ismcts``): the cards the player does not
know are dealt afresh to the places he cannot see (the other hands, a talon he did not
discard, the trump card while hidden, with the forhont's choice naming it), keeping each
place's size, every card whose place he knows, the suits a seat has shown void in, and no
ace or ten in a Barva talon. Inferences finer than voids (that a seat could not beat a card)
are not kept: the sampled worlds are plausible, not always possible.
"""

from __future__ import annotations

import random

import numpy as np
import pyspiel

from protocol import observation as O

from ..rules.cards import ACE, TEN
from ..rules.deal import Deal
from .stepper import Stepper

_NUM_PLAYERS = 3
#: The most decisions of one deal: the trump, three talons of 3 steps (the forhont's, after
#: špatná, after durch), 4 answers, the contract, 9 raising answers (6 rounds: the games
#: against reach boty in round 5), 30 cards, and one more for laying down.
MAX_DECISIONS = 1 + 9 + 4 + 1 + 9 + 30 + 1
#: A bound on what one seat can win or lose in a deal: the worst is a sto lost at boty in
#: červené with a sedma beside it, (4 x 20 + 2) x 16 x 2 = 2624 from each defender (R9.2-R9.4),
#: twice that, 5248, for the actor.
MAX_UTILITY = 6000.0

_GAME_TYPE = pyspiel.GameType(
    short_name="python_marias",
    long_name="Python volený mariáš (one deal)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=_NUM_PLAYERS,
    min_num_players=_NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={})
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=O.N_ACTIONS,
    max_chance_outcomes=32,
    num_players=_NUM_PLAYERS,
    min_utility=-MAX_UTILITY,
    max_utility=MAX_UTILITY,
    utility_sum=0.0,
    max_game_length=32 + MAX_DECISIONS)


class MariasGame(pyspiel.Game):
    """One deal of volený mariáš; the forhont is seat 0."""

    def __init__(self, params=None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or dict())

    def new_initial_state(self):
        return MariasState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"python_marias observers take no parameters, got {params}")
        return MariasObserver()

    def max_chance_nodes_in_history(self):
        return 32


class MariasState(pyspiel.State):
    """A deal being dealt (chance nodes) or played (the engine's :class:`Deal`)."""

    def __init__(self, game):
        super().__init__(game)
        self.deck: list[int] = []
        self.table: _Table | None = None

    # ------------------------------------------------------------ the game
    def current_player(self):
        if self.table is None:
            return pyspiel.PlayerId.CHANCE
        deal = self.table.deal
        return pyspiel.PlayerId.TERMINAL if deal.done else deal.to_move

    def _legal_actions(self, player):
        return list(self.table.open_indices()) if self.table is not None and player == self.table.deal.to_move else []

    def chance_outcomes(self):
        left = sorted(set(range(32)) - set(self.deck))
        p = 1.0 / len(left)
        return [(c, p) for c in left]

    def _apply_action(self, action):
        if self.table is None:
            self.deck.append(int(action))
            if len(self.deck) == 32:
                self.table = _Table(Deal(self.deck, 0))
        else:
            self.table.step(action)

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            return "deal " + O.CARD_CODES[action]
        return O.ACTIONS[action]

    def is_terminal(self):
        return self.table is not None and self.table.deal.done

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0, 0.0]
        return [float(p) for p in self.table.deal.result.payments]

    def __str__(self):
        if self.table is None:
            return f"dealing: {' '.join(O.CARD_CODES[c] for c in self.deck)}"
        return repr(self.table.deal) + (f" pending={[O.ACTIONS[i] for i in self.table.pending]}" if self.table.pending else "")

    # ------------------------------------------------------------ views
    def view(self, player: int) -> dict | None:
        """The protocol view of ``player`` (None while the deck is being dealt)."""
        return None if self.table is None else self.table.view(player)

    def resample_from_infostate(self, player_id, probability_sampler=None):
        """A state ``player_id`` cannot tell from this one (see the module docstring)."""
        rng = random.Random(_draw(probability_sampler))
        clone = self.clone()
        if clone.table is not None:
            _redeal_hidden(clone.table.deal, player_id, rng)
            clone.table.forget()
        return clone


class _Table(Stepper):
    __slots__ = ()

    def copy(self) -> "_Table":
        new = _Table(self.deal.copy())
        new.pending = self.pending
        return new

    def __deepcopy__(self, memo):  # State.clone deep-copies the attributes: Deal.copy is the cheap way
        return self.copy()


class MariasObserver:
    """Information state and observation alike: the encoding of the seat's view."""

    def __init__(self):
        self.tensor = np.zeros(O.OBS_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state, player):
        if state.table is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = state.table.observation(player)

    def string_from(self, state, player):
        if state.table is None:
            return f"dealing {len(state.deck)}"
        return state.table.information_string(player)


# ------------------------------------------------------------ resampling

def _draw(sampler) -> int:
    if sampler is None:
        return random.getrandbits(64)
    return int(sampler() * (1 << 53)) if callable(sampler) else int(sampler.sample() * (1 << 53))


def _redeal_hidden(deal: Deal, player: int, rng: random.Random) -> None:
    """Deal the cards ``player`` cannot see afresh among the places he cannot see."""
    others = [s for s in range(3) if s != player]
    talon_hidden = bool(deal.talon) and player not in deal.talons[-1][2]
    trump_hidden = deal.trump_card is not None and not deal.trump_shown and player != deal.forhont
    places: list[tuple[object, int]] = [(s, len(deal.hands[s])) for s in others]
    pool = [c for s in others for c in deal.hands[s]]
    if talon_hidden:
        places.append(("talon", 2))
        pool += list(deal.talon)
    hidden = set(pool)
    # Cards he knows the place of, or a few places of: the trump card once shown stays in the
    # forhont's hand; a talon he knows is with the seats that took it or a later talon.
    only: dict[int, set] = {}
    if deal.trump_card in hidden and deal.trump_shown:
        only[deal.trump_card] = {deal.forhont}
    for k, (_discarder, cards, knowers) in enumerate(deal.talons):
        if player in knowers:
            where = set().union(*(kn for _d, _c, kn in deal.talons[k:])) - {player}
            if talon_hidden:
                where.add("talon")
            for c in cards:
                if c in hidden:
                    only[c] = only.get(c, where) & where
    void = _voids(deal)
    barva = deal.game == "barva"

    def allowed(c: int, place) -> bool:
        if c in only and place not in only[c]:
            return False
        if place == "talon":
            return not (barva and (c & 7) in (TEN, ACE))
        return (c >> 3) not in void[place]

    for _attempt in range(100):
        rng.shuffle(pool)
        room = dict(places)
        got: dict[object, list[int]] = {p: [] for p, _n in places}
        for c in sorted(pool, key=lambda c: sum(allowed(c, p) for p, _n in places)):  # the most constrained first
            choices = [p for p, _n in places if room[p] > 0 and allowed(c, p)]
            if not choices:
                break
            p = rng.choice(choices)
            got[p].append(c)
            room[p] -= 1
        else:
            break
    else:
        return  # no other world found: keep this one, which he cannot tell apart either
    hands = [got[s] if s in got else list(deal.hands[s]) for s in range(3)]
    trump_card = None
    if trump_hidden and hands[deal.forhont]:  # the forhont's trump choice names the card: draw it anew
        trump_card = rng.choice(hands[deal.forhont])
    deal.redeal(hands, got["talon"] if talon_hidden else None, trump_card)


def _voids(deal: Deal) -> dict[int, set[int]]:
    """The suits each seat has shown it lacks: it did not follow the led suit (and, in a
    trump game, did not trump either: then it has no trumps)."""
    void: dict[int, set[int]] = {0: set(), 1: set(), 2: set()}
    trump = deal.trump if deal.game == "barva" else None
    tricks = [(leader, cards) for leader, cards, _w in deal.tricks]
    if deal.trick:
        tricks.append((deal.trick_seats[0], tuple(deal.trick)))
    for leader, cards in tricks:
        led = cards[0] >> 3
        for k, c in enumerate(cards[1:], 1):
            s = (leader + k) % 3
            if c >> 3 != led:
                void[s].add(led)
                if trump is not None and c >> 3 != trump:
                    void[s].add(trump)
    return void


pyspiel.register_game(_GAME_TYPE, MariasGame)
