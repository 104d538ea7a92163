"""examples/python-rl: the training script trains and saves a policy, and the bot plays it
under the referee as a protocol process (the loop closed end to end)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed (pip install -e '.[rl]')")
pytest.importorskip("pettingzoo", reason="the rl extra is not installed (pip install -e '.[rl]')")

from protocol import observation as O  # noqa: E402
from referee.matches.match import BotSpec, MatchConfig, run_match  # noqa: E402

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "python-rl"


def test_the_committed_policy_fits_the_encoding():
    data = np.load(EXAMPLE / "policy.npz")
    assert data["W"].shape == (O.OBS_SIZE, O.N_ACTIONS) and data["b"].shape == (O.N_ACTIONS,)
    assert np.abs(data["W"]).max() > 0  # trained, not the zeros it starts from


def test_training_writes_a_policy_the_bot_plays_through_the_referee(tmp_path):
    policy = tmp_path / "tiny.npz"
    run = subprocess.run([sys.executable, str(EXAMPLE / "train.py"), "--imitate", "2", "--epochs", "1",
                          "--evaluate", "0", "--out", str(policy)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "agrees with the robot" in run.stdout and policy.exists()
    # the bot reads its policy from beside it unless told; hand it the tiny one
    bot = BotSpec.parse(f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLE / 'bot.py'))} --policy "
                        f"{shlex.quote(str(policy))}")
    result = run_match(MatchConfig(bots=[bot, BotSpec.parse("robot"), BotSpec.parse("random")], partie=1,
                                   seed="rl-example", work_dir=tmp_path, sandbox="none"))
    assert not result.faults
    assert result.names[0] == "python-rl"
    assert sum(result.partie_totals[0]) == 0


def test_the_bot_passes_marias_check(tmp_path):
    from referee.tools.check import run_check
    report = run_check(f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLE / 'bot.py'))}", work_dir=tmp_path)
    assert report.ok, "\n".join(report.lines())
    for kind in ("trump", "talon", "answer", "contract", "flek", "play"):
        assert any(d.decision == kind for d in report.decisions), kind


# ------------------------------------------------------------------ examples/python-rl2

EXAMPLE2 = EXAMPLE.parent / "python-rl2"


def test_the_shipped_mlp_and_its_values_fit_the_encoding():
    data = np.load(EXAMPLE2 / "policy.npz")
    assert data["policy_W1"].shape[0] == O.OBS_SIZE and data["policy_W3"].shape[1] == O.N_ACTIONS
    assert data["values_W1"].shape[0] == O.OBS_SIZE and data["values_W3"].shape[1] == O.N_ACTIONS
    assert (EXAMPLE2 / "policy.npz").stat().st_size < 4 << 20  # small: a few MB at most


def test_python_rl2_trains_in_one_command_under_its_work_folder_and_its_bot_plays(tmp_path):
    work = tmp_path / "work"
    run = subprocess.run([sys.executable, str(EXAMPLE2 / "train.py"), "--work", str(work), "--robot-partie", "5",
                          "--search-partie", "0", "--robot-epochs", "1", "--improve", "3", "--value-epochs", "1",
                          "--evaluate", "1", "--hidden", "16", "16"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "agrees" in run.stdout and "Huber loss" in run.stdout and "policy with the learnt values - robot" in run.stdout
    policy = work / "policy.npz"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]  # nothing written beside it
    bot = BotSpec.parse(f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLE2 / 'bot.py'))} --policy "
                        f"{shlex.quote(str(policy))}")
    result = run_match(MatchConfig(bots=[bot, BotSpec.parse("robot"), BotSpec.parse("robot")], partie=1,
                                   seed="rl2-example", work_dir=tmp_path / "match", sandbox="none"))
    assert not result.faults and result.names[0] == "python-rl2"
