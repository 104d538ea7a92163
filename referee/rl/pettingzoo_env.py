"""A PettingZoo AEC environment of volený mariáš (protocol/RL.md).

Agents ``seat_0``, ``seat_1``, ``seat_2``.  An episode is one deal (``deals=1``, the default)
or the first ``deals`` deals of a partie (``deals=12``: a whole partie, collected, cut and
dealt as at the referee's table, R2).  Each agent observes ``{"observation": float32
[OBS_SIZE], "action_mask": int8 [N_ACTIONS]}``: :func:`protocol.observation.observation` of
the view the referee would send that seat (``Deal.view``), and the mask of the indices open
to it (all zero when it is not its turn).  Actions are the indices of
:data:`protocol.observation.ACTIONS`; a talon decision takes three steps of the same agent.
The reward is each seat's groše, given at the end of every deal.

Seeding: ``reset(seed=s)`` deals partie 1 of ``marias match --seed s`` (the partie seed
``"s:1"``); each later ``reset()`` without a seed deals the next partie of that match
(``"s:2"``, ...).  Unseeded from the start, the match seed is a fresh secret one.
"""

from __future__ import annotations

import functools

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from protocol import observation as O

from ..rules.partie import Partie, new_seed, partie_seed
from .stepper import Stepper

AGENTS = ("seat_0", "seat_1", "seat_2")
_SEAT = {a: s for s, a in enumerate(AGENTS)}


class MariasEnv(AECEnv):
    metadata = {"name": "marias_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, deals: int = 1, render_mode: str | None = None):
        super().__init__()
        if not 1 <= deals <= 12:
            raise ValueError(f"deals must be 1..12 (one deal up to a whole partie), got {deals}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.deals = deals
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (O.OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (O.N_ACTIONS,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(O.N_ACTIONS) for a in AGENTS}
        self._match_seed: str | int | None = None
        self._episode = 0
        self.partie: Partie | None = None
        self.table: Stepper | None = None
        self.history: list[tuple[int, str]] = []  # (seat, protocol action) of the current deal

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------ episode
    def reset(self, seed=None, options=None):
        if seed is not None:
            self._match_seed, self._episode = seed, 0
        elif self._match_seed is None:
            self._match_seed = new_seed()
        self._episode += 1
        self.partie_seed = partie_seed(self._match_seed, self._episode)
        self.partie = Partie(seed=self.partie_seed, deals=self.deals)
        self.table = Stepper(self.partie.next_deal())
        self.history = []
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0)
        self._paid = False
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[self.table.deal.to_move]

    def observe(self, agent):
        seat = _SEAT[agent]
        table = self.table
        if seat == table.deal.to_move:
            obs = table.encoder.observation(seat, table.pending)
            mask = np.frombuffer(bytearray(table.mask_bytes()), np.int8)  # a copy: the caller may change it
        else:
            obs = table.encoder.observation(seat)
            mask = np.zeros(O.N_ACTIONS, np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} must act (a None action is only for a terminated agent)")
        table = self.table
        seat = table.deal.to_move
        applied = table.step(action)  # raises IllegalIndex, changing nothing, for a closed index
        self._cumulative_rewards[agent] = 0
        if self._paid:  # the last step paid a deal: its rewards are spent
            self.rewards = dict.fromkeys(AGENTS, 0)
            self._paid = False
        if applied is not None:
            self.history.append((seat, applied))
            deal = table.deal
            if deal.done:
                self.rewards = dict(zip(AGENTS, deal.result.payments))
                self._paid = True
                self._accumulate_rewards()
                if len(self.partie.deals) < self.deals:
                    self.table = table = Stepper(self.partie.next_deal())
                    self.history = []
                else:
                    self.terminations = dict.fromkeys(AGENTS, True)
                    self.agent_selection = self._next_live(agent)
                    return
        self.agent_selection = AGENTS[table.deal.to_move]

    def _next_live(self, agent):
        i = AGENTS.index(agent)
        return AGENTS[(i + 1) % 3]

    # ------------------------------------------------------------ for people and tests
    def legal(self) -> list[str]:
        """The legal actions of the agent to move, as the request's ``legal`` lists them."""
        return list(self.table.legal_texts())

    def view(self, agent) -> dict:
        """The protocol view of ``agent`` now (what the referee would send it)."""
        return self.table.view(AGENTS.index(agent))

    def render(self):
        if self.render_mode is None:
            return None
        return repr(self.table.deal)

    def close(self):
        pass


def env(deals: int = 1, render_mode: str | None = None) -> MariasEnv:
    """The environment (PettingZoo's ``env()`` convention)."""
    return MariasEnv(deals=deals, render_mode=render_mode)
