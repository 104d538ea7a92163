"""The teacher's decisions, recorded in the environment: what ``train.py`` imitates.

A built-in bot (``search`` by default, or ``robot``) plays all three seats of whole partie in
the PettingZoo environment; at each of its decisions the environment's observation and mask
are recorded with the teacher's index (a talon decision as its three steps), the robot's
index at the same step (when the robot would take the same earlier talon steps), and, once
the deal is paid, the deal's groše for that seat.  The partie are split into chunks of
``CHUNK`` partie, each written once to ``<folder>/chunk-<n>.npz``, so that a run stopped
part-way resumes where it stopped, and chunks can be made by several processes at once.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import bots
from protocol import observation as O
from referee.rl.pettingzoo_env import MariasEnv

CHUNK = 5
#: observations are stored as round(100 x value): every value of the encoding is a multiple of
#: 1/100 (tricks / 10, points / 100, raises / 4), so the uint8 copy is exact
SCALE = 100


def chunk_path(folder: Path, n: int) -> Path:
    return folder / f"chunk-{n:04d}.npz"


def collect_chunk(folder: Path, n: int, teacher: str, nodes: int, seed: str) -> tuple[Path, float]:
    """Play chunk ``n`` (partie CHUNK*n .. CHUNK*n+CHUNK-1) with ``teacher`` on every seat and
    write it; (its path, the CPU seconds it took)."""
    path = chunk_path(folder, n)
    c0 = time.process_time()
    robot = bots.make("robot")
    env = MariasEnv(deals=12)
    xs, ms, ys, rs, pay, deal_of, seat_of = [], [], [], [], [], [], []
    deal_id = 0
    for p in range(CHUNK * n, CHUNK * n + CHUNK):
        env.reset(seed=f"{seed}:{p}")
        players = [robot] * 3 if teacher == "robot" else [
            bots.make(teacher, seed=f"{seed}:{p}:{s}", nodes=nodes) for s in range(3)]
        open_rows: list[int] = []  # rows of the deal being played, paid when it ends
        while not all(env.terminations.values()):
            agent = env.agent_selection
            seat = env.possible_agents.index(agent)
            deal = env.table.deal
            view, legal = env.view(agent), env.legal()
            chosen = O.action_indices(players[seat].decide(view["phase"], view, legal))
            robots = chosen if teacher == "robot" else O.action_indices(robot.decide(view["phase"], view, legal))
            for k, i in enumerate(chosen):
                obs = env.observe(agent)
                open_rows.append(len(ys))
                xs.append(np.rint(obs["observation"] * SCALE).astype(np.uint8))
                ms.append(obs["action_mask"].astype(bool))
                ys.append(i)
                rs.append(robots[k] if robots[:k] == chosen[:k] else -1)
                seat_of.append(seat)
                deal_of.append(deal_id)
                pay.append(0)
                env.step(i)
            if deal.done:
                for row in open_rows:
                    pay[row] = deal.result.payments[seat_of[row]]
                open_rows = []
                deal_id += 1
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    cpu = time.process_time() - c0
    np.savez_compressed(tmp, cpu_seconds=cpu, obs=np.array(xs), mask=np.array(ms), action=np.array(ys, np.int16),
                        robot=np.array(rs, np.int16), payment=np.array(pay, np.int16),
                        deal=np.array(deal_of, np.int32) + 1000 * n, seat=np.array(seat_of, np.int8),
                        obs_size=O.OBS_SIZE, n_actions=O.N_ACTIONS)
    tmp.replace(path)
    return path, cpu


def _job(args):
    return collect_chunk(*args)


def collect(folder: Path, partie: int, teacher: str = "search", nodes: int = 100_000, seed: str = "rl2",
            jobs: int = 1, log=print) -> float:
    """Make the chunks of ``partie`` partie that are not written yet; the CPU seconds spent
    (all processes)."""
    chunks = [n for n in range(-(-partie // CHUNK)) if not chunk_path(folder, n).exists()]
    if not chunks:
        return 0.0
    log(f"  {teacher}: {len(chunks)} chunks of {CHUNK} partie to play into {folder}")
    work = [(folder, n, teacher, nodes, seed) for n in chunks]
    every = max(1, len(work) // 20)  # at most about twenty lines of progress

    def report(done) -> float:
        cpu = 0.0
        for k, (path, c) in enumerate(done, 1):
            cpu += c
            if k % every == 0 or k == len(work):
                log(f"  {path.name} ({k}/{len(work)}, {cpu:.0f} s CPU so far)")
        return cpu

    if jobs > 1:
        from multiprocessing import Pool
        with Pool(jobs) as pool:
            return report(pool.imap_unordered(_job, work))
    return report(map(_job, work))


def load(folder: Path, partie: int) -> dict[str, np.ndarray]:
    """The chunks of the first ``partie`` partie, joined; ``cpu_seconds``: what making them took."""
    parts = [np.load(chunk_path(folder, n)) for n in range(-(-partie // CHUNK))]
    out = {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "mask", "action", "robot", "payment", "deal", "seat")}
    for p in parts:
        if int(p["obs_size"]) != O.OBS_SIZE or int(p["n_actions"]) != O.N_ACTIONS:
            raise SystemExit(f"{folder} holds data of another encoding: delete it and collect again")
    out["cpu_seconds"] = sum(float(p["cpu_seconds"]) for p in parts)
    return out


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="Record a built-in bot's decisions (see the module docstring).")
    ap.add_argument("--teacher", default="search", choices=["search", "robot"])
    ap.add_argument("--partie", type=int, default=100)
    ap.add_argument("--nodes", type=int, default=100_000, help="search's budget per decision in solver nodes")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", default="rl2")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    print(f"{collect(a.out, a.partie, a.teacher, a.nodes, a.seed, a.jobs):.0f} s CPU")
