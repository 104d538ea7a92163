"""Train the policy of ``examples/python-rl2`` (a numpy MLP, ``policy.py``) in one command.

1. **collect** -- the built-in ``robot`` plays all three seats of ``--robot-partie`` partie and
   ``search`` (budget ``--nodes`` solver nodes a decision, so the data are the same on any
   machine) of ``--search-partie`` partie, in the PettingZoo environment; each decision is a
   row: the environment's observation and mask, and the bot's index (``collect.py``).  Kept
   under ``--work`` (resumed if stopped; ``--jobs`` processes play search's partie);
2. **imitate** -- the MLP learns the robot's decisions (``--robot-epochs``), then search's
   (``--search-epochs``, the robot's rows mixed in at ``--robot-share``): cross-entropy over
   the open indices, Adam;
3. **improve by play** -- ``--improve`` rounds: the policy plays one seat against two robots
   in MariasSoloEnv, its greedy choices replayed with each other open index at the decisions
   where it is least sure, and it learns the choices whose deals paid more (see
   :func:`improve`);
4. **evaluate** -- the greedy policy on each seat of ``--evaluate`` partie against two robots,
   paired with the robot on the same seat of the same partie (its own mean is the reference).

    python examples/python-rl2/train.py                   # writes runs/python-rl2/policy.npz
    python examples/python-rl2/train.py --jobs 2          # search's partie in two processes

The bot (``bot.py``) plays the shipped ``policy.npz`` unless given ``--policy``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import bots
from protocol import observation as O
from referee.rl.pettingzoo_env import MariasEnv

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the example's own modules
from collect import collect, load  # noqa: E402
from improve import explore, fit_values  # noqa: E402
from learn import passes  # noqa: E402
from policy import Chooser, Policy, load as load_policy, save  # noqa: E402


# ------------------------------------------------------------------ imitation

def fit(policy: Policy, x: np.ndarray, m: np.ndarray, y: np.ndarray, w: np.ndarray, epochs: int, lr: float,
        seed: int, label: str) -> None:
    """Softmax regression: the weighted cross-entropy of the indices ``y`` among the open ones."""
    def loss_of(idx):
        mask, target, weight = m[idx], y[idx], w[idx]

        def loss(logits):
            logits = np.where(mask, logits, -1e9)
            logits -= logits.max(axis=1, keepdims=True)
            e = np.exp(logits) * mask
            prob = e / e.sum(axis=1, keepdims=True)
            rows = np.arange(len(target))
            value = -(weight * np.log(prob[rows, target] + 1e-12)).sum()
            hits = (prob.argmax(axis=1) == target).sum()
            g = prob
            g[rows, target] -= 1
            g *= (weight / weight.sum())[:, None]
            return value, g, hits
        return loss

    def report(epoch, total, hits):
        print(f"  {label} epoch {epoch}/{epochs}: loss {total / w.sum():.3f}, agrees {hits / len(y):.1%}", flush=True)

    passes(policy, x, loss_of, epochs, lr, seed, report)


# ------------------------------------------------------------------ evaluation

def play_partie(seed: str, me: int | None, act) -> list[int]:
    """One partie in MariasEnv: seat ``me`` played by ``act(obs, mask) -> index`` (None: no
    seat), the others by the robot; each seat's groše."""
    robot = bots.make("robot")
    env = MariasEnv(deals=12)
    env.reset(seed=seed)
    totals = [0, 0, 0]
    while not all(env.terminations.values()):
        agent = env.agent_selection
        seat = int(agent[-1])
        if seat == me:
            obs = env.observe(agent)
            env.step(act(obs["observation"], obs["action_mask"]))
        else:
            view = env.view(agent)
            for i in O.action_indices(robot.decide(view["phase"], view, env.legal())):
                env.step(i)
        for s in range(3):
            totals[s] += env.rewards[f"seat_{s}"]
    return totals


def evaluate(act, partie: int, seed: str = "evaluate") -> tuple[float, float]:
    """``act(obs, mask)`` on each seat of ``partie`` partie against two robots, less the robot on
    the same seat of the same partie: (mean groše per partie, its standard error)."""
    diffs = []
    for p in range(partie):
        robot = play_partie(f"{seed}:{p}", None, None)
        for me in range(3):
            diffs.append(play_partie(f"{seed}:{p}", me, act)[me] - robot[me])
    d = np.array(diffs, float)
    return d.mean(), d.std(ddof=1) / np.sqrt(len(d))


# ------------------------------------------------------------------ the command

def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("runs/python-rl2"), help="where data and the policy are written")
    ap.add_argument("--robot-partie", type=int, default=1000)
    ap.add_argument("--search-partie", type=int, default=120)
    ap.add_argument("--nodes", type=int, default=100_000, help="search's budget per decision (solver nodes)")
    ap.add_argument("--jobs", type=int, default=1, help="processes that play search's partie")
    ap.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    ap.add_argument("--robot-epochs", type=int, default=8)
    ap.add_argument("--search-epochs", type=int, default=6)
    ap.add_argument("--robot-share", type=float, default=0.1, help="weight of the robot's rows beside search's")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--improve", type=int, default=1500, help="partie of each round of improvement by play (0: none)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of improvement: each plays with the values learnt so far")
    ap.add_argument("--play-share", type=float, default=0.5, help="share of its card plays at which the bot tries its likeliest")
    ap.add_argument("--value-epochs", type=int, default=8)
    ap.add_argument("--margin", type=float, default=2.0, help="groše a learnt value must gain over the policy's own choice")
    ap.add_argument("--evaluate", type=int, default=200, help="partie per seat against two robots (0: none)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="the policy file (default WORK/policy.npz)")
    args = ap.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    out = args.out or args.work / "policy.npz"
    t0 = time.process_time()
    print(f"collect: robot {args.robot_partie} partie, search {args.search_partie} partie ({args.nodes} nodes a decision)", flush=True)
    collect(args.work / "robot", args.robot_partie, "robot")
    collect(args.work / f"search-{args.nodes}", args.search_partie, "search", args.nodes, jobs=args.jobs)
    robot = load(args.work / "robot", args.robot_partie)
    search = load(args.work / f"search-{args.nodes}", args.search_partie) if args.search_partie else None
    print(f"  {len(robot['action'])} robot rows ({robot['cpu_seconds']:.0f} s CPU to play), "
          f"{len(search['action']) if search else 0} search rows ({search['cpu_seconds'] if search else 0:.0f} s CPU to play; "
          f"chunks made earlier count too)", flush=True)
    policy = Policy.new(tuple(args.hidden), args.seed)
    t1 = time.process_time()
    w = np.ones(len(robot["action"]), np.float32)
    fit(policy, robot["obs"], robot["mask"], robot["action"].astype(np.int64), w, args.robot_epochs, args.lr, args.seed, "robot")
    if search is not None and args.search_epochs:
        x = np.concatenate([search["obs"], robot["obs"]])
        m = np.concatenate([search["mask"], robot["mask"]])
        y = np.concatenate([search["action"], robot["action"]]).astype(np.int64)
        w = np.concatenate([np.ones(len(search["action"]), np.float32),
                            np.full(len(robot["action"]), args.robot_share, np.float32)])
        fit(policy, x, m, y, w, args.search_epochs, args.lr / 2, args.seed + 1, "search")
    print(f"  imitation: {time.process_time() - t1:.0f} s CPU", flush=True)
    values = None
    if args.improve:
        t2 = time.process_time()
        rounds = []
        for r in range(1, args.rounds + 1):
            act = policy.greedy if values is None else Chooser(policy, values, margin=args.margin)
            print(f"improve, round {r}: the bot plays {args.improve} partie against two robots, its policy's "
                  f"likeliest actions tried", flush=True)
            rounds.append(explore(policy, args.improve, f"improve:{args.seed}:{r}", act=act, play_share=args.play_share))
            data = {k: np.concatenate([d[k] for d in rounds]) for k in rounds[0]}
            values = Policy.new(tuple(args.hidden), args.seed + 2 + r)
            fit_values(values, data, args.value_epochs, args.lr, args.seed + 2 + r)
        print(f"  improvement: {len(data['action'])} values, {time.process_time() - t2:.0f} s CPU", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    save(out, policy, values)
    if args.evaluate:
        t3 = time.process_time()
        policy, values = load_policy(out)  # what the bot plays: the float16 weights
        for name, act in (("policy", policy.greedy), ("policy with the learnt values", Chooser(policy, values, margin=args.margin))):
            if name != "policy" and values is None:
                continue
            mean, se = evaluate(act, args.evaluate)
            print(f"evaluate: {name} - robot {mean:+.1f} ± {1.96 * se:.1f} groše per partie "
                  f"(each of {3 * args.evaluate} partie against two robots)", flush=True)
        print(f"  evaluation: {time.process_time() - t3:.0f} s CPU", flush=True)
    print(f"saved {out} ({out.stat().st_size // 1024} KiB) after {time.process_time() - t0:.0f} s CPU in this process")


if __name__ == "__main__":
    main()
