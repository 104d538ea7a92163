"""One seat of volený mariáš as a single-agent Gymnasium environment, the other two seats
played by opponents (protocol/RL.md, "One learner against opponents").

    env = MariasSoloEnv(opponents=["robot", "search"])
    obs, info = env.reset(seed=7)
    obs, reward, terminated, truncated, info = env.step(index)

``opponents`` names the two other seats in table order after the learner's, as RLCard's
``set_agents`` does: the name of a built-in bot (``random``, ``random:SEED``, ``robot``,
``search``) or a :class:`protocol.sdk.Bot` object plays in this process; any other string is
the command line of a protocol bot, started and played by the referee itself
(:func:`referee.matches.match.run_match`, in a thread) under its sandbox and time limits, as
in ``marias match``.  Observations, the action mask and the actions are those of the
PettingZoo environment (the encoding of the view the seat is sent); a talon decision is three
steps.  The reward is the learner's groše of every deal that ended during the step.

The deals follow one another as at a table: partie 1 of ``marias match --seed S`` (the partie
seed ``"S:1"``), its twelve deals, then partie 2, and so on (after 10,000 partie, those of
seed ``"S/2"``, then ``"S/3"``, ...); an episode is one deal
(``deals=1``) or one partie (``deals=12``), and each ``reset()`` without a seed goes on with
the next one (an episode left half-way is first played out, the learner taking its first
open index).  ``reset(seed=S)`` starts again from partie 1 of seed S; without any seed the
match seed is a fresh secret one.
"""

from __future__ import annotations

import itertools
import queue
import threading
import weakref
from pathlib import Path

import gymnasium
import numpy as np
from gymnasium import spaces

import bots
from protocol import observation as O
from protocol.sdk import Bot

from ..rules.partie import Partie, new_seed, partie_seed
from .stepper import IllegalIndex, Stepper

_DEALS = 12
#: partie a referee's match plays; then the next match goes on with seed "S/2", "S/3", ...
MATCH_PARTIE = 10_000


def _match_seed(seed, block: int):
    """The seed of the ``block``-th (from 0) match of MATCH_PARTIE partie."""
    return seed if block == 0 else f"{seed}/{block + 1}"


def _partie_seed(seed, n: int) -> str:
    """The seed of partie ``n`` (from 1) of the environment's sequence."""
    block, i = divmod(n - 1, MATCH_PARTIE)
    return partie_seed(_match_seed(seed, block), i + 1)


def _builtin(entry: str) -> bool:
    name, _, arg = entry.partition(":")
    return name in bots.BUILTIN and (not arg or name == "random") and " " not in entry


class MariasSoloEnv(gymnasium.Env):
    """The learner's seat against two opponents (see the module docstring).

    ``seat``: the learner's seat (0 is the forhont of the first deal); ``deals``: 1 (an
    episode is a deal) or 12 (a partie).  For protocol-bot opponents: ``sandbox`` (auto,
    bwrap, required, none), ``move_ms`` (their time per decision), ``work_dir`` (where
    their stderr files go; a fresh folder by default).
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, opponents=("robot", "robot"), seat: int = 0, deals: int = 1, render_mode: str | None = None,
                 sandbox: str = "auto", move_ms: int = 2000, work_dir: str | Path | None = None):
        opponents = list(opponents)
        if len(opponents) != 2:
            raise ValueError(f"opponents: two, one for each other seat, got {len(opponents)}")
        if seat not in (0, 1, 2):
            raise ValueError(f"seat must be 0, 1 or 2, got {seat!r}")
        if deals not in (1, _DEALS):
            raise ValueError(f"deals must be 1 (a deal an episode) or 12 (a partie), got {deals}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        for o in opponents:
            if not isinstance(o, (str, Bot)):
                raise TypeError(f"an opponent is a built-in name, a bot command or a protocol.sdk.Bot, not {type(o).__name__}")
        self.opponents = opponents
        self.seat = seat
        self.deals = deals
        self.render_mode = render_mode
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (O.OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (O.N_ACTIONS,), np.int8),
        })
        self.action_space = _OpenIndices(self)
        local = all(isinstance(o, Bot) or _builtin(o) for o in opponents)
        self._table = _LocalTable(self) if local else _RefereeTable(self, sandbox, move_ms, work_dir)
        self._match_seed: str | int | None = None

    # ------------------------------------------------------------ Gymnasium
    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed if isinstance(seed, int) else None)  # a match seed may also be a string
        table = self._table
        if seed is not None or self._match_seed is None:
            self._match_seed = new_seed() if seed is None else seed
            table.start(self._match_seed)
            table.active = False
        while table.active:  # an episode left half-way: its last decisions take the first open index
            table.active = not table.step(int(np.flatnonzero(table.mask())[0]))[2]
        obs, info = table.next_episode()
        table.active = True
        return obs, info

    def step(self, action):
        table = self._table
        if not table.active:
            raise RuntimeError("the episode is over (or not begun): call reset()")
        obs, reward, terminated, truncated, info = table.step(int(action))
        table.active = not terminated
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The mask of the open indices (the convention of sb3-contrib's MaskablePPO)."""
        return self._table.mask().astype(bool)

    def legal(self) -> list[str]:
        """The learner's legal actions now, as the request's ``legal`` lists them."""
        return self._table.legal()

    def view(self) -> dict:
        """The learner's protocol view now."""
        return self._table.view()

    def render(self):
        if self.render_mode == "ansi":
            return self._table.render()
        return None

    def close(self):
        self._table.close()


class _OpenIndices(spaces.Discrete):
    """``Discrete(N_ACTIONS)`` whose ``sample()`` draws an index open now (the environment's
    mask), so that a random agent, and Gymnasium's own checks, take legal actions."""

    def __init__(self, env: MariasSoloEnv):
        super().__init__(O.N_ACTIONS)
        self._env = weakref.ref(env)

    def sample(self, mask=None, probability=None):
        env = self._env()
        if mask is None and probability is None and env is not None and env._table.active:
            mask = env.action_masks().astype(np.int8)
        return super().sample(mask=mask, probability=probability)


def _obs(observation: np.ndarray, mask: np.ndarray) -> dict:
    return {"observation": observation, "action_mask": mask}


class _LocalTable:
    """Every opponent in this process: the engine plays the deals directly."""

    active = False  # in an episode (set by the environment)

    def __init__(self, env: MariasSoloEnv):
        self.env = env
        self.seat = env.seat
        self.table: Stepper | None = None
        self.partie: Partie | None = None
        self.n_partie = 0
        self.bots: list[Bot | None] = [None, None, None]
        self.entries = {(env.seat + k + 1) % 3: o for k, o in enumerate(env.opponents)}
        self.played = 0  # deals finished in this episode

    def start(self, match_seed) -> None:
        self.match_seed = match_seed
        self.n_partie = 0
        self.partie = None
        self.table = None
        for s, o in self.entries.items():
            if isinstance(o, Bot):
                self.bots[s] = o
            else:
                name, _, arg = o.partition(":")
                self.bots[s] = bots.make(name, seed=arg or f"{match_seed}:{s}")

    def _next_deal(self) -> None:
        if self.partie is None or len(self.partie.deals) == _DEALS:
            self.n_partie += 1
            self.partie = Partie(seed=_partie_seed(self.match_seed, self.n_partie))
        self.table = Stepper(self.partie.next_deal())

    def next_episode(self):
        if self.table is None or self.table.deal.done:
            self._next_deal()
        self.played = 0
        reward, done = self._advance()
        if done:  # cannot happen without faults: every seat decides in every deal
            raise RuntimeError("a deal ended before the learner's first decision")
        return self._observe(), {"partie": self.n_partie, "deal": len(self.partie.deals)}

    def _advance(self) -> tuple[int, bool]:
        """The opponents play until the learner must act or the episode ends."""
        reward = 0
        seat = self.seat
        while True:
            deal = self.table.deal
            if deal.done:
                reward += deal.result.payments[seat]
                self.played += 1
                if self.played == self.env.deals:
                    return reward, True
                self._next_deal()
                continue
            mover = deal.to_move
            if mover == seat:
                return reward, False
            legal = self.table.legal_texts()
            answer = self.bots[mover].decide(deal.decision, deal.view(mover), legal)
            if answer not in legal:
                raise ValueError(f"opponent at seat {mover} answered {answer!r}, not one of its legal actions")
            for i in O.action_indices(answer):
                self.table.step(i)

    def _observe(self) -> dict:
        return _obs(self.table.observation(self.seat), self.mask())

    def step(self, index: int):
        table = self.table
        table.step(index)  # IllegalIndex for a closed index, changing nothing
        reward, done = self._advance()
        info = {"partie": self.n_partie, "deal": len(self.partie.deals)}
        return self._observe(), reward, done, False, info

    def mask(self) -> np.ndarray:
        table = self.table
        if table.deal.done or table.deal.to_move != self.seat:
            return np.zeros(O.N_ACTIONS, np.int8)
        return np.frombuffer(bytearray(table.mask_bytes()), np.int8)  # a copy: the caller may change it

    def legal(self) -> list[str]:
        return list(self.table.legal_texts()) if self.table.deal.to_move == self.seat else []

    def view(self) -> dict:
        return self.table.view(self.seat)

    def render(self) -> str:
        return repr(self.table.deal)

    def close(self) -> None:
        pass


class _Stop(Exception):
    """The environment closed or restarted: the learner's seat leaves the match."""


class _Learner(Bot):
    """The learner's seat in the referee's match: each request waits for the environment."""

    name = "learner"

    def __init__(self, to_env: queue.Queue, from_env: queue.Queue):
        self.to_env, self.from_env = to_env, from_env
        self.stopped = False

    def decide(self, decision, view, legal):
        if self.stopped:
            raise _Stop()
        self.to_env.put(("request", view, legal))
        answer = self.from_env.get()
        if answer is None:
            self.stopped = True
            raise _Stop()
        return answer

    def on_deal_start(self, message):
        self.to_env.put(("deal_start", message))

    def on_deal_end(self, message):
        self.to_env.put(("deal_end", message))

    def on_partie_end(self, message):
        self.to_env.put(("partie_end", message))


class _RefereeTable:
    """Some opponent is a program: the referee plays the match in a thread, the learner's seat
    answering from the environment's steps."""

    active = False  # in an episode (set by the environment)

    def __init__(self, env: MariasSoloEnv, sandbox: str, move_ms: int, work_dir):
        self.env = env
        self.sandbox, self.move_ms, self.work_dir = sandbox, move_ms, work_dir
        self.thread: threading.Thread | None = None
        self.request: tuple[dict, list[str]] | None = None
        self.pending: tuple[int, ...] = ()
        self.final: dict | None = None  # the learner's last view, at the end of an episode
        self.position = (0, 0)  # (partie, deal) being played
        self.paid = 0  # the learner's groše of the deals of this episode

    def start(self, match_seed) -> None:
        from ..matches.match import BotSpec, Limits, MatchConfig, run_match

        self.close()
        self.to_env: queue.Queue = queue.Queue()
        self.from_env: queue.Queue = queue.Queue()
        self.learner = _Learner(self.to_env, self.from_env)
        specs = [None, None, None]
        seat = self.env.seat
        # the learner's own time is the environment user's: no limit to speak of (a day a decision)
        specs[seat] = BotSpec(label="learner", argv=[], bot=self.learner, move_ms=86_400_000)
        for k, o in enumerate(self.env.opponents):
            s = (seat + k + 1) % 3
            if isinstance(o, Bot):
                specs[s] = BotSpec(label=getattr(o, "name", "bot"), argv=[], bot=o)
            elif _builtin(o):
                name, _, arg = o.partition(":")
                specs[s] = BotSpec(label=o, argv=[], bot=bots.make(name, seed=arg or f"{match_seed}:{s}"))
            else:
                specs[s] = BotSpec.parse(o)
        stopping = self.learner

        def stop_between_partie(_line: str) -> None:
            if stopping.stopped:
                raise _Stop()

        def play() -> None:
            try:
                for block in itertools.count():
                    config = MatchConfig(bots=specs, partie=MATCH_PARTIE, seed=_match_seed(match_seed, block),
                                         limits=Limits(move_ms=self.move_ms), sandbox=self.sandbox,
                                         work_dir=Path(self.work_dir) if self.work_dir else None)
                    run_match(config, progress=stop_between_partie)
            except _Stop:
                pass
            except BaseException as exc:  # noqa: BLE001 - handed to the environment's caller
                self.to_env.put(("error", exc))
            self.to_env.put(("over", None))

        self.thread = threading.Thread(target=play, name="marias-solo-referee", daemon=True)
        self.thread.start()
        self.request = None
        self.final = None

    def _until_request(self) -> tuple[int, bool]:
        """Read the match's messages until the learner's next request or the episode's end:
        (the learner's groše meanwhile, whether the episode ended)."""
        reward = 0
        seat = self.env.seat
        while True:
            kind, *payload = self.to_env.get()
            if kind == "request":
                self.request = (payload[0], payload[1])
                self.pending = ()
                return reward, False
            if kind == "deal_start":
                self.position = (payload[0]["partie"], payload[0]["deal"])
            elif kind == "deal_end":
                msg = payload[0]
                paid = msg["result"]["payments"][seat]
                reward += paid
                self.paid += paid
                self.final = msg["view"]
                if self.env.deals == 1:
                    return reward, True
            elif kind == "partie_end":
                if self.env.deals == _DEALS:  # a forfeit (R12.3) ends a partie early: the deals not played are paid here
                    reward += payload[0]["totals"][seat] - self.paid
                    return reward, True
            elif kind == "error":
                raise payload[0]
            elif kind == "over":
                raise RuntimeError("the referee's match ended")

    def next_episode(self):
        if self.thread is None:
            raise RuntimeError("reset() first")
        self.paid = 0
        before = 0
        while self.request is None:
            reward, done = self._until_request()
            before += reward  # deals (or a deal's start) that ended before the learner was asked (faults)
            if done:
                self.paid = 0
        info = {"partie": self.position[0], "deal": self.position[1]}
        if before:
            info["paid_before_the_first_decision"] = before
        return self._observe(), info

    def _observe(self) -> dict:
        if self.request is None:
            return _obs(O.observation(self.final), self.mask())
        return _obs(O.observation(self.request[0], self.pending), self.mask())

    def step(self, index: int):
        view, legal = self.request
        mask = O.action_mask(legal, self.pending)
        if not (0 <= index < O.N_ACTIONS and mask[index]):
            raise IllegalIndex(f"index {index} ({O.ACTIONS[index] if 0 <= index < O.N_ACTIONS else '?'}) is not open now")
        if O.is_talon(legal) and len(self.pending) < 2:
            self.pending += (index,)
            return self._observe(), 0, False, False, {}
        answer = O.action_text(self.pending + (index,)) if O.is_talon(legal) else O.ACTIONS[index]
        self.request = None
        self.from_env.put(answer)
        reward, done = self._until_request()
        return self._observe(), reward, done, False, {"partie": self.position[0], "deal": self.position[1]}

    def mask(self) -> np.ndarray:
        if self.request is None:
            return np.zeros(O.N_ACTIONS, np.int8)
        return O.action_mask(self.request[1], self.pending)

    def legal(self) -> list[str]:
        return list(self.request[1]) if self.request is not None else []

    def view(self) -> dict:
        return self.request[0] if self.request is not None else self.final

    def render(self) -> str:
        return repr(self.view())

    def close(self) -> None:
        """Leave the match: the learner's seat faults out of it (R12.3) and the referee ends it,
        closing the opponents' programs."""
        if self.thread is None:
            return
        self.learner.stopped = True
        self.from_env.put(None)  # a request waiting for the environment is answered with a stop
        while self.thread.is_alive():
            try:
                kind, *_ = self.to_env.get(timeout=0.1)
            except queue.Empty:
                continue
            if kind == "request":
                self.from_env.put(None)
        self.thread.join()
        self.thread = None


#: ``gymnasium.make("marias/Solo-v0", opponents=[...])`` and ``gymnasium.make_vec(...)`` once
#: this module is imported
ENV_ID = "marias/Solo-v0"
if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point=MariasSoloEnv)

