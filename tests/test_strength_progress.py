"""marias strength: progress with an ETA, -j N, limits, Ctrl-C keeps what was played (issue 25 point 3)."""

import os
import signal
import subprocess
import sys
import time

from typer.testing import CliRunner

from referee.cli import app
from referee.tools import strength


def _scores(report):
    return [(r["bot"], r["groše"], r["mean"], r["ci95_low"], r["ci95_high"], r["mean_place"], r["firsts"])
            for r in report["results"]]


def test_jobs_give_the_same_report_as_one_process():
    one = strength.run(["robot", "robot", "random"], partie=6, seed="j", jobs=1)
    two = strength.run(["robot", "robot", "random"], partie=6, seed="j", jobs=2)
    assert _scores(one) == _scores(two)


def test_progress_is_called_for_every_partie():
    seen = []
    strength.run(["random", "random", "random"], partie=3, seed=2, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_an_interrupt_returns_the_whole_decks_played_marked_partial(monkeypatch):
    real = strength._play_one
    calls = []

    def stop_at_fifth(*a):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(*a)

    monkeypatch.setattr(strength, "_play_one", stop_at_fifth)
    report = strength.run(["robot", "random", "random"], partie=9, seed=3)
    assert report["partial"] is True
    assert report["partie"] == 3 and report["decks"] == 1  # deck 2 was not whole
    assert report["partie_planned"] == 9 and report["partie_played"] == 4


def test_limits_refuse_an_absurd_partie():
    r = CliRunner().invoke(app, ["strength", "-b", "random", "-b", "random", "-b", "random", "-n", "999999999999"])
    assert r.exit_code == 2
    assert "100000" in r.output


def test_default_seed_is_said_public_and_progress_goes_to_stderr():
    r = CliRunner().invoke(app, ["strength", "-b", "random", "-b", "random", "-b", "random", "-n", "3"])
    assert r.exit_code == 0, r.output
    assert "default seed 1 is public" in r.stderr
    assert "partie 3/3" in r.stderr and "ETA" in r.stderr
    assert "(public default)" in r.stdout
    q = CliRunner().invoke(app, ["strength", "-q", "-b", "random", "-b", "random", "-b", "random",
                                                 "-n", "3", "--seed", "x"])
    assert q.stderr == ""


def test_ctrl_c_prints_the_partial_report():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "referee.cli", "strength", "-b", "robot", "-b", "robot", "-b",
                             "random", "-n", "3000", "--seed", "c"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    line = ""
    while "partie 1/" not in line:
        line = proc.stderr.readline()
        assert line, "no progress line"
    time.sleep(4)  # some whole decks are certainly done (a robot partie takes a fraction of a second)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert "PARTIAL (stopped)" in out and "of 3000 partie planned" in out
    assert "robot#1" in out
