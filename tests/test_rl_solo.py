"""The single-agent environment (referee/rl/solo_env.py): one learner against opponents named in
one line -- built-in bots in this process, protocol bots run by the referee -- checked by
Gymnasium's own checks, against the PettingZoo environment, and the two kinds of opponent
against each other."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed (pip install -e '.[rl]')")
gymnasium = pytest.importorskip("gymnasium", reason="the rl extra is not installed (pip install -e '.[rl]')")

import bots  # noqa: E402
from protocol import observation as O  # noqa: E402
from referee.rl.pettingzoo_env import MariasEnv  # noqa: E402
from referee.rl.solo_env import ENV_ID, MariasSoloEnv  # noqa: E402
from referee.rl.stepper import IllegalIndex  # noqa: E402

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "python-rl"


def _play(env, seed, steps, rng_seed=0):
    """A random learner for ``steps`` steps: every (observation, mask, reward, terminated)."""
    rng = np.random.default_rng(rng_seed)
    obs, _info = env.reset(seed=seed)
    out = []
    for _ in range(steps):
        i = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, truncated, _info = env.step(i)
        out.append((obs["observation"].copy(), obs["action_mask"].copy(), reward, terminated))
        assert truncated is False
        if terminated:
            obs, _info = env.reset()
    return out


def test_gymnasiums_checks_pass():
    from gymnasium.utils import env_checker as C
    for deals in (1, 12):
        env = MariasSoloEnv(opponents=["robot", "random"], deals=deals)
        C.check_action_space(env.action_space)
        C.check_observation_space(env.observation_space)
        C.check_reset_return_type(env)
        C.check_reset_seed_determinism(env)
        C.check_reset_options(env)
        C.env_reset_passive_checker(env)
        C.env_step_passive_checker(env, env.action_space.sample())  # sample() draws an open index
        C.check_returned_data_not_reused(env)
        # check_step_determinism steps an index drawn before its reset, which the mask may close:
        # the same check with an index open after the reset
        a = _play(MariasSoloEnv(opponents=["robot", "random"], deals=deals), 123, 30)
        b = _play(MariasSoloEnv(opponents=["robot", "random"], deals=deals), 123, 30)
        assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) and x[2:] == y[2:] for x, y in zip(a, b))
        assert _play(MariasSoloEnv(opponents=["robot", "random"], deals=deals), 124, 30)[-1][0].tolist() != a[-1][0].tolist()


def test_a_partie_is_the_pettingzoo_partie_with_the_opponents_on_the_other_seats():
    """deals=12: the learner's rewards are its groše of the same partie played in MariasEnv with the
    robot answering for seats 1 and 2 and the same random choices for seat 0."""
    solo = MariasSoloEnv(opponents=["robot", "robot"], deals=12)
    rng = np.random.default_rng(5)
    obs, _ = solo.reset(seed="solo")
    choices, rewards, done = [], 0, False
    while not done:
        i = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        choices.append(i)
        obs, reward, done, _t, _info = solo.step(i)
        rewards += reward
    assert not obs["action_mask"].any()
    env = MariasEnv(deals=12)
    env.reset(seed="solo")
    robot = bots.make("robot")
    mine = iter(choices)
    total = 0
    while not all(env.terminations.values()):
        agent = env.agent_selection
        if agent == "seat_0":
            env.step(next(mine))
        else:
            view = env.view(agent)
            for i in O.action_indices(robot.decide(view["phase"], view, env.legal())):
                env.step(i)
        total += env.rewards["seat_0"]
    assert next(mine, None) is None and total == rewards
    assert np.array_equal(obs["observation"], env.observe("seat_0")["observation"])


def test_an_episode_of_one_deal_ends_with_its_payment_and_the_next_deal_follows():
    env = MariasSoloEnv(opponents=["robot", "robot"], seat=2)
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=3)
    assert info == {"partie": 1, "deal": 1}
    seen = []
    for _episode in range(13):
        done = False
        while not done:
            assert env.view()["seat"] == 2 and env.legal()
            obs, reward, done, _t, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        seen.append((info["partie"], info["deal"]))
        obs, info = env.reset()
    assert seen == [(1, d) for d in range(1, 13)] + [(2, 1)]


def test_a_closed_index_raises_and_changes_nothing_and_reset_plays_out_a_left_episode():
    env = MariasSoloEnv(opponents=["robot", "robot"])
    obs, _ = env.reset(seed=8)
    closed = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    before = env.view()
    with pytest.raises(IllegalIndex):
        env.step(closed)
    assert env.view() == before
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    _obs, info = env.reset()  # half-way: the deal is played out, the next one begins
    assert info == {"partie": 1, "deal": 2}
    with pytest.raises(ValueError):
        MariasSoloEnv(opponents=["robot"])
    with pytest.raises(TypeError):
        MariasSoloEnv(opponents=["robot", 3])


def test_the_vector_form_steps_a_batch():
    envs = gymnasium.make_vec(ENV_ID, num_envs=3, vectorization_mode="sync", opponents=["robot", "random"])
    obs, _ = envs.reset(seed=[1, 2, 3])
    assert obs["observation"].shape == (3, O.OBS_SIZE) and obs["action_mask"].shape == (3, O.N_ACTIONS)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        # a row whose episode just ended is reset by this step (Gymnasium's next-step autoreset): any index
        actions = [int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in obs["action_mask"]]
        obs, _r, terminated, _t, _info = envs.step(actions)
        ended += int(terminated.sum())
    assert ended >= 3
    envs.close()


def test_a_protocol_bot_opponent_plays_through_the_referee_as_the_same_bot_in_process(monkeypatch):
    """A command line is run by the referee (its process, limits and sandbox); the learner sees the
    view it is sent.  The same choices against the example policy's bot as a program and as an
    object in this process give the same observations and rewards, also past the end of the
    referee's match (one partie here), where the next match goes on."""
    import importlib.util

    import referee.rl.solo_env as solo
    monkeypatch.setattr(solo, "MATCH_PARTIE", 1)
    spec = importlib.util.spec_from_file_location("python_rl_bot", EXAMPLE / "bot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    local = _play(MariasSoloEnv(opponents=["robot", module.Learned(EXAMPLE / "policy.npz")]), 11, 200, rng_seed=4)
    env = MariasSoloEnv(opponents=["robot", f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLE / 'bot.py'))}"])
    remote = _play(env, 11, 200, rng_seed=4)
    env.close()
    assert sum(t for *_x, t in local) >= 13  # into the second partie
    for (o1, m1, r1, t1), (o2, m2, r2, t2) in zip(local, remote):
        assert np.array_equal(o1, o2) and np.array_equal(m1, m2) and (r1, t1) == (r2, t2)
    assert env._table.thread is None  # closed: the referee's match ended, and its program with it


def test_the_whole_loop_of_rl_md_runs_and_writes_under_runs(tmp_path, monkeypatch, capsys):
    text = (Path(__file__).resolve().parent.parent / "protocol" / "RL.md").read_text(encoding="utf-8")
    block = text.split("A whole loop against baseline opponents")[1].split("```python")[1].split("```")[0]
    assert "EPISODES = 3000" in block
    monkeypatch.chdir(tmp_path)
    exec(compile(block.replace("EPISODES = 3000", "EPISODES = 8"), "protocol/RL.md", "exec"), {})
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["solo-linear.npz"]
    assert np.load(tmp_path / "runs" / "solo-linear.npz")["W"].shape == (O.OBS_SIZE, O.N_ACTIONS)
    assert "groše per deal against two robots" in capsys.readouterr().out
