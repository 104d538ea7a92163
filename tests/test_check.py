"""``marias check``: passes good bots, fails each bad habit of a bot author with its fix (issue 12).

The bad bots are real programs (tests/fault_bots/author_bot.py) run by the real referee;
each has exactly one habit, so exactly one check may fail for it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.tools.check import FORMS, forms, run_check

ROOT = Path(__file__).resolve().parent.parent
AUTHOR_BOT = Path(__file__).parent / "fault_bots" / "author_bot.py"


def habit(name: str) -> str:
    return f"{sys.executable} {AUTHOR_BOT} {name}"


def failed(report) -> dict[str, str]:
    return {c.name: c.fix for c in report.checks if c.ok is False}


@pytest.mark.parametrize("command", ["robot", "random", "search", habit("good")])
def test_good_bots_pass_every_check_and_meet_every_decision_kind(command, tmp_path):
    report = run_check(command, work_dir=tmp_path)
    assert report.ok, "\n".join(report.lines())
    assert all(c.ok for c in report.checks) and len(report.checks) == 10
    assert {d.seat for d in report.decisions} == {0, 1, 2}  # a new partie in each seat
    for kind in ("trump", "talon", "answer", "contract", "flek", "play"):
        assert any(d.decision == kind for d in report.decisions), kind
    # the scripted opponents offer these whatever the checked bot chooses
    for form in ("trump:card", "trump:zlidu", "talon:barva", "talon:betl", "talon:durch",
                 "answer:dobra", "answer:spatna", "answer:durch", "flek:flek", "play:card"):
        assert report.offered.get(form, 0) > 0, form
    assert report.exit_status.startswith("exited")


def test_forms_name_raise_levels_from_the_view():
    view = {"levels": {"hra": 2, "sedma": 0}}
    assert forms("flek", "flek:hra proti:sto", view) == ["flek:tutti", "proti:sto"]
    assert forms("flek", "flek:sedma", view) == ["flek:flek"]
    assert forms("trump", "trump:zlidu", {}) == ["trump:zlidu"] and forms("play", "lay", {}) == ["lay"]
    assert set(forms("talon", "durch:Ab,Kb", {})) <= set(FORMS)


def _built_examples(tmp_path) -> list[str]:
    out = []
    if shutil.which("node"):
        out.append(f"node {ROOT / 'examples' / 'js' / 'bot.js'}")
    if shutil.which("gcc"):
        exe = tmp_path / "c-bot"
        subprocess.run(["gcc", "-O2", "-std=c99", "-o", str(exe), str(ROOT / "examples" / "c" / "bot.c")], check=True)
        out.append(str(exe))
    if shutil.which("cargo"):
        target = tmp_path / "rust-target"
        subprocess.run(["cargo", "build", "--release", "--offline", "--quiet", "--manifest-path",
                        str(ROOT / "examples" / "rust" / "Cargo.toml")], check=True,
                       env={**os.environ, "CARGO_TARGET_DIR": str(target)})
        out.append(str(target / "release" / "marias-example-bot"))
    return out


def test_the_example_bots_pass(tmp_path):
    examples = _built_examples(tmp_path)
    assert examples, "no toolchain for any example bot (node, gcc, cargo)"
    for command in examples:
        report = run_check(command, work_dir=tmp_path / "w")
        assert report.ok, "\n".join(report.lines())


@pytest.mark.parametrize("name,check,fix", [
    ("noflush", "starts and answers hello", "answer not flushed: flush stdout after every line"),
    ("debug", "stdout holds only answers", "debug output belongs on stderr"),
    ("late", "answers in time", "answer late"),
    ("unknown-id", "answers carry the request id", "with the request's own id"),
    ("crash-unknown", "ignores an unknown message type", "ignore message types you do not know"),
    ("ignore-bye", "exits after bye", "end the program when you read bye"),
])
def test_each_bad_habit_fails_its_check_with_the_fix(name, check, fix, tmp_path):
    report = run_check(habit(name), move_ms=500, startup_ms=1500, work_dir=tmp_path)
    assert not report.ok
    bad = failed(report)
    assert list(bad) == [check], "\n".join(report.lines())
    assert fix in bad[check]
    if name == "debug":
        assert any(s.startswith("thinking about") for s in report.stray_stdout)


def test_a_bot_that_never_exits_is_killed_and_fails(tmp_path):
    report = run_check(habit("never-exit"), work_dir=tmp_path)
    assert list(failed(report)) == ["exits after bye"]
    assert "killed" in report.exit_status


def test_the_command_exits_0_only_when_every_check_passes_and_json_is_for_ci(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    good = subprocess.run(["marias", "check", habit("good"), "--json"], capture_output=True, text=True, env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    data = json.loads(good.stdout)
    assert data["ok"] is True and data["name"] == "author-good"
    bad = subprocess.run(["marias", "check", habit("ignore-bye")], capture_output=True, text=True, env=env)
    assert bad.returncode == 1
    assert "FAIL    exits after bye" in bad.stdout and "fix: end the program when you read bye" in bad.stdout
    missing = subprocess.run(["marias", "check", str(tmp_path / "no-such-bot")], capture_output=True, text=True, env=env)
    assert missing.returncode == 1
    assert "FAIL    starts and answers hello" in missing.stdout and "check the command, its path" in missing.stdout
