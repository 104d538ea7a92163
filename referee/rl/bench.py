"""``marias bench env``: the PettingZoo environment's steps per second against the engine's own
decisions per second, on the same deals, in the same run (CPU time); with ``--peers``
(:func:`peers_speed`), against other card-game environments installed beside it.

Both play the same random partie: the engine alone (``legal_actions`` and ``apply``, as
``marias bench engine`` does) and the environment, where each step is what a learning
loop does -- observe the agent to move (its view encoded, and the mask) and step one index.
The engine is timed twice: alone, and building the mover's view at each decision as the
referee does for a request.  The choices come from one seeded generator, each a uniform pick among the legal actions,
so both play exactly the same actions (a talon action is three environment steps).
"""

from __future__ import annotations

import random
import statistics
import time

from protocol import observation as O

from ..rules.partie import Partie, partie_seed
from .pettingzoo_env import MariasEnv


def _engine_partie(pseed: str, rng: random.Random, view: bool = False) -> tuple[float, int]:
    """The engine alone plays one partie: (CPU seconds, decisions); with ``view``, the mover's
    view is built at each decision too, as the referee does for a request."""
    part = Partie(seed=pseed)
    decisions = 0
    c0 = time.process_time()
    for deal in part.iter_deals():
        while not deal.done:
            if view:
                deal.view(deal.to_move)
            legal = deal.legal_actions()
            deal.apply(legal[rng.randrange(len(legal))])
            decisions += 1
    return time.process_time() - c0, decisions


def _env_partie(env: MariasEnv, seed: str, first: bool, rng: random.Random) -> tuple[float, int, int]:
    """The environment plays the same partie: (CPU seconds, steps, decisions)."""
    steps = decisions = 0
    c0 = time.process_time()
    env.reset(seed=seed) if first else env.reset()
    while not all(env.terminations.values()):
        agent = env.agent_selection
        legal = env.table.deal.legal_actions()  # the same pick as the engine's, to play the same game
        for i in O.action_indices(legal[rng.randrange(len(legal))].code):
            env.observe(agent)  # what a learning loop asks at every step
            env.step(i)
            steps += 1
        decisions += 1
    return time.process_time() - c0, steps, decisions


def env_speed(partie: int = 20, repeats: int = 3, seed: str = "bench-env") -> dict:
    """Median figures over ``repeats``; in each, the engine and the environment play the same
    ``partie`` partie, one after the other partie by partie (so that a change in the machine's
    load falls on both)."""
    eng, eng_view, stp, dec = [], [], [], []
    for r in range(repeats):
        s = f"{seed}:{r}"
        env = MariasEnv(deals=12)
        e_cpu = w_cpu = v_cpu = 0.0
        e_dec = v_steps = v_dec = 0
        for p in range(1, partie + 1):
            c, n = _engine_partie(partie_seed(s, p), random.Random(f"{s}:{p}"))
            e_cpu += c
            e_dec += n
            w_cpu += _engine_partie(partie_seed(s, p), random.Random(f"{s}:{p}"), view=True)[0]
            c, n_steps, n = _env_partie(env, s, p == 1, random.Random(f"{s}:{p}"))
            v_cpu += c
            v_steps += n_steps
            v_dec += n
        if v_dec != e_dec:
            raise RuntimeError(f"the environment made {v_dec} decisions, the engine {e_dec}: not the same games")
        eng.append(e_dec / e_cpu)
        eng_view.append(e_dec / w_cpu)
        stp.append(v_steps / v_cpu)
        dec.append(v_dec / v_cpu)
    med = statistics.median
    return {
        "benchmark": "env",
        "partie": partie,
        "repeats": repeats,
        "decisions": e_dec,
        "env_steps": v_steps,
        "engine_decisions_per_cpu_second": round(med(eng)),
        "engine_with_view_decisions_per_cpu_second": round(med(eng_view)),
        "env_steps_per_cpu_second": round(med(stp)),
        "env_decisions_per_cpu_second": round(med(dec)),
        "steps_per_engine_decision": round(med(stp) / med(eng), 2),
        "decisions_per_engine_decision": round(med(dec) / med(eng), 2),
        "steps_per_engine_decision_with_view": round(med(stp) / med(eng_view), 2),
    }


# ------------------------------------------------------------------ peers

#: What ``--peers`` compares: (name, library, how to make it).  The peers are learning
#: environments of other card games; rlcard's bridge is the closest (Python, bidding and tricks).
PEERS = (
    ("MariasEnv (one deal an episode)", "marias", "deal"),
    ("MariasEnv (a partie an episode)", "marias", "partie"),
    ("python_marias through pyspiel", "pyspiel", "python_marias"),
    ("rlcard bridge", "rlcard", "bridge"),
    ("rlcard uno", "rlcard", "uno"),
    ("rlcard gin-rummy", "rlcard", "gin-rummy"),
    ("OpenSpiel C++ spades", "pyspiel", "spades"),
    ("OpenSpiel C++ bridge (played out)", "pyspiel", "bridge(use_double_dummy_result=false)"),
)
REFERENCE = "rlcard bridge"

#: The loop every environment runs, stated once for the help and the report.
LOOP = ("each environment runs the same loop: reset, then at every step observe the player to "
        "move (its observation and its legal actions), pick one of them uniformly at random "
        "(random.Random.randrange) and step, until the episode ends, then reset again; steps "
        "are the players' actions (a talon decision of MariasEnv is three; chance nodes are not "
        "steps but their time counts); the CPU time of the process (resets included) divides them")


def _marias_episodes(deals: int):
    from .pettingzoo_env import MariasEnv

    env = MariasEnv(deals=deals)
    env.reset(seed="bench-peers")

    def episode(rng) -> int:
        steps = 0
        env.reset()
        for _agent in env.agent_iter():  # PettingZoo's own loop
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]  # the open indices of the mask
            env.step(legal[rng.randrange(len(legal))])
            steps += 1
        return steps
    return episode


def _rlcard_episodes(name: str):
    import rlcard

    env = rlcard.make(name, config={"seed": 1})

    def episode(rng) -> int:
        steps = 0
        state, _player = env.reset()  # rlcard's states carry the observation ("obs") of the player to move
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _player = env.step(legal[rng.randrange(len(legal))])
            steps += 1
        return steps
    return episode


def _spiel_episodes(name: str):
    import pyspiel

    if name == "python_marias":
        from . import openspiel_game  # noqa: F401  (registers python_marias)
    game = pyspiel.load_game(name)

    def episode(rng) -> int:
        steps = 0
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                x = rng.random()
                for action, p in outcomes:
                    x -= p
                    if x < 0:
                        break
                state.apply_action(action)
                continue
            player = state.current_player()
            state.observation_tensor(player)
            legal = state.legal_actions(player)  # the open indices of its legal-action mask, made in C++
            state.apply_action(legal[rng.randrange(len(legal))])
            steps += 1
        return steps
    return episode


def _make(library: str, what: str):
    if library == "marias":
        return _marias_episodes(1 if what == "deal" else 12)
    if library == "rlcard":
        return _rlcard_episodes(what)
    if library == "pyspiel":
        return _spiel_episodes(what)
    raise ImportError(f"no runner for {library}", name=library)


def peers_speed(seconds: float = 1.0, repeats: int = 3, seed: str = "bench-peers") -> dict:
    """Steps per CPU second of MariasEnv and of each peer installed (:data:`PEERS`), all in
    this process and interleaved: each of ``repeats`` rounds gives every environment about
    ``seconds`` of CPU in turn, and the median over the rounds is reported, with MariasEnv's
    ratio to each.  A peer whose library is missing is skipped with a note."""
    runners, notes = {}, []
    for name, library, what in PEERS:
        try:
            runners[name] = _make(library, what)
        except ImportError as exc:
            notes.append(f"{name}: skipped ({library} is not installed: {exc.name or exc}; pip install {'open_spiel' if library == 'pyspiel' else library})")
        except Exception as exc:  # a peer that cannot be made here is reported, never fatal
            notes.append(f"{name}: skipped ({type(exc).__name__}: {exc})")
    rates: dict[str, list[float]] = {name: [] for name in runners}
    for r in range(repeats):
        for name, episode in runners.items():
            rng = random.Random(f"{seed}:{r}:{name}")
            steps = 0
            c0 = time.process_time()
            while True:
                steps += episode(rng)
                cpu = time.process_time() - c0
                if cpu >= seconds:
                    break
            rates[name].append(steps / cpu)
    med = {name: statistics.median(v) for name, v in rates.items()}
    ours = med[PEERS[0][0]]
    rows = [{"environment": name, "steps_per_cpu_second": round(v), "marias_env_to_it": round(ours / v, 2)}
            for name, v in med.items()]
    out = {"benchmark": "env --peers", "loop": LOOP, "cpu_seconds_each": seconds, "repeats": repeats, "environments": rows}
    if REFERENCE in med:
        out["marias_env_to_rlcard_bridge"] = round(ours / med[REFERENCE], 2)
    spades = "OpenSpiel C++ spades"
    if spades in med:
        out["marias_env_to_openspiel_spades"] = round(ours / med[spades], 2)
    out["notes"] = notes
    return out
