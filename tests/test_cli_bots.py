"""External bots wherever a bot is named (issue 12): strength, selfplay, show --bot, --version."""

from __future__ import annotations

import json
import subprocess
import sys

from referee.tools import strength

PROGRAM_ROBOT = f"{sys.executable} -m bots robot"


def test_strength_through_the_referee_equals_the_in_process_report():
    # the robot is deterministic: played as three programs under the referee it must win
    # exactly what it wins called in-process over the same decks, cuts and seatings
    inproc = strength.run(["robot", "robot", "robot"], partie=3, seed="x")
    programs = strength.run(["a=robot", "b=robot", f"c={PROGRAM_ROBOT}"], partie=3, seed="x")
    assert programs["programs"] is True and "programs" not in inproc
    assert [r["groše"] for r in programs["results"]] == [r["groše"] for r in inproc["results"]]
    assert [r["bot"] for r in programs["results"]] == ["a", "b", "c"]
    assert all(r["faults"] == 0 and r["partie"] == 3 for r in programs["results"])
    # and the same declarations, game by game (--by-contract), read from the referee's partie
    strip = [[(r["game"], r["declared"], r["won"], r["mean"]) for r in rep["contracts"]] for rep in (inproc, programs)]
    assert strip[0] == strip[1] and sum(r[1] for r in strip[0]) == 3 * 12


def test_strength_counts_the_faults_of_a_faulty_program(tmp_path):
    from pathlib import Path

    faulty = Path(__file__).parent / "fault_bots" / "author_bot.py"
    report = strength.run(["robot", f"bad={sys.executable} {faulty} dobra", "random"], partie=3, seed=2)
    rows = {r["bot"]: r for r in report["results"]}
    assert rows["bad"]["faults"] > 0 and rows["robot"]["faults"] == 0
    assert sum(r["groše"] for r in report["results"]) == 0


def test_selfplay_takes_a_command_and_plays_the_in_process_partie():
    inproc = subprocess.run(["marias", "selfplay", "--seed", "5", "-b", "robot", "-b", "robot", "-b", "robot"],
                            capture_output=True, text=True)
    program = subprocess.run(["marias", "selfplay", "--seed", "5", "-b", "robot", "-b", "robot", "-b", f"r={PROGRAM_ROBOT}"],
                             capture_output=True, text=True)
    assert inproc.returncode == 0 and program.returncode == 0, program.stderr
    # the same deal-by-deal sheet (only the name of seat 2 differs)
    sheet = lambda out: out.split("\n\n")[0]  # noqa: E731
    assert sheet(program.stdout) == sheet(inproc.stdout)
    missing = subprocess.run(["marias", "selfplay", "-b", "robot", "-b", "robot", "-b", "no-such-program-xyz"],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "not found" in missing.stderr


def test_show_by_bot_name_and_version(tmp_path):
    from referee.matches.match import BotSpec, MatchConfig, run_match

    log = tmp_path / "m.jsonl"
    run_match(MatchConfig(bots=[BotSpec.parse("robot"), BotSpec.parse("random"), BotSpec.parse("random", seed=1)],
                          seed="s", log_path=log))
    by_bot = subprocess.run(["marias", "show", str(log), "--bot", "robot", "--deal", "2"], capture_output=True, text=True)
    by_seat = subprocess.run(["marias", "show", str(log), "--seat", "0", "--deal", "2"], capture_output=True, text=True)
    assert by_bot.returncode == 0 and by_bot.stdout == by_seat.stdout
    twice = subprocess.run(["marias", "show", str(log), "--bot", "random"], capture_output=True, text=True)
    assert twice.returncode == 2 and "seats 1, 2" in twice.stderr
    version = subprocess.run(["marias", "--version"], capture_output=True, text=True)
    from referee import __version__
    assert version.returncode == 0 and version.stdout.splitlines()[0] == f"marias {__version__} (protocol 1)"
    assert version.stdout.splitlines()[1].startswith("bwrap: ")  # which bwrap the sandbox uses
    assert json.loads(log.read_text().splitlines()[0])["referee_version"] == __version__
