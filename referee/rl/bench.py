"""``marias bench env``: the PettingZoo environment's steps per second against the engine's own
decisions per second, on the same deals, in the same run (CPU time).

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
