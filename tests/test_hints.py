"""Hints that lead with the right cause and messages that say it whole (issue 25 point 7)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from referee.cli import app
from referee.seats.explain import FaultContext, hint
from referee.tools.check import run_check
from referee.tournaments import duel as D
from referee.tournaments.sprt import SPRT

PERL_BOT = "#!/usr/bin/perl\n$| = 1;\nwhile (<STDIN>) {}\n"


def test_a_timeout_with_nothing_on_the_pipe_says_slow_first_and_a_partial_line_says_newline():
    slow = hint(FaultContext("timeout", "no complete line", limit_ms=700))
    assert slow.startswith("no complete line within the move limit (700 ms, --move-time) and nothing of one arrived")
    assert slow.index("thinks too long") < slow.index("flush")
    partial = hint(FaultContext("timeout", "no complete line", limit_ms=700, evidence='{"type": "action"'))
    assert "no newline" in partial and partial.index("newline") < partial.index("flush")


def test_the_flush_hint_names_perl():
    assert "Perl: $| = 1" in hint(FaultContext("timeout", "x", phase="startup"))


def _bot_in_spaces(tmp_path: Path) -> str:
    folder = tmp_path / "my bots"
    folder.mkdir()
    bot = folder / "perl bot.pl"
    bot.write_text(PERL_BOT)
    bot.chmod(0o755)
    return str(bot)


def test_check_of_an_unquoted_path_with_spaces_says_to_quote_it(tmp_path):
    path = _bot_in_spaces(tmp_path)
    report = run_check(path)
    text = "\n".join(report.lines())
    assert "a path with spaces must be quoted" in text and repr(path) in text
    assert text.count("must be quoted") == 1
    assert "not run: the bot could not be started" in text
    assert "after bye: not checked (the bot could not be started)" in text


def test_match_says_the_quoting_hint_once(tmp_path):
    path = _bot_in_spaces(tmp_path)
    r = CliRunner().invoke(app, ["match", "-b", path, "-b", "robot", "-b", "robot"])
    assert r.exit_code == 2
    assert r.output.count("must be quoted") == 1


def test_a_misspelt_builtin_gets_did_you_mean():
    r = CliRunner().invoke(app, ["match", "-b", "rbot", "-b", "robot", "-b", "robot"])
    assert r.exit_code == 2 and "did you mean the built-in bot 'robot'?" in r.output
    text = "\n".join(run_check("rbot").lines())
    assert "did you mean the built-in bot 'robot'?" in text


def test_an_unflushed_bot_is_not_said_not_to_start(tmp_path):
    bot = tmp_path / "noflush.py"
    bot.write_text("import sys, json\nfor line in sys.stdin:\n"
                   "    print(json.dumps({'type': 'hello', 'protocol': 1, 'name': 'x'}))\n")
    text = "\n".join(run_check(f"python3 -u {bot}".replace("-u ", ""), startup_ms=800).lines())
    assert "did not start" not in text
    assert "not run: the bot started but" in text
    assert "after bye: not checked (the bot started but" in text


def test_a_duel_wholly_below_zero_says_b_is_better_and_every_estimate_line_is_whole():
    plan = D.Plan("A", "B", "1", SPRT(h0=0, h1=10, max_groups=50))
    st = plan.test.run([-60, -50, -70, -65, -55, -62])
    assert "B is better than A" in D.decision_text(plan, st)
    first = D._progress_line(plan, plan.test.run([5]))
    assert "(95%)" not in first and "one group: no interval yet" in first
    later = D._progress_line(plan, plan.test.run([5, 7, 3]))
    assert "95% interval [" in later


def test_a_forfeit_after_one_fault_is_said_in_the_singular():
    import sys

    from referee.matches.match import BotSpec, FaultPolicy, MatchConfig, run_match

    faulty = Path(__file__).parent / "fault_bots" / "author_bot.py"
    lines = []
    run_match(MatchConfig(bots=[BotSpec.parse("robot"), BotSpec.parse(f"{sys.executable} {faulty} dobra"),
                                BotSpec.parse("random")], partie=1, seed="f", policy=FaultPolicy(max_faults=1)),
              lines.append)
    forfeit = [x for x in lines if "forfeits" in x]
    assert forfeit and "after 1 fault (" in forfeit[0], lines


def test_validate_names_a_missing_format_without_none(tmp_path):
    import json

    log = tmp_path / "x.jsonl"
    log.write_text(json.dumps({"type": "header", "format_version": 1}) + "\n")
    r = CliRunner().invoke(app, ["validate", str(log)])
    assert "format is None" not in r.output
    assert "the header's format is missing" in r.output


def test_an_unquoted_path_with_spaces_names_the_bot_by_its_file(tmp_path):
    from referee.matches.match import BotSpec

    path = _bot_in_spaces(tmp_path)
    assert BotSpec.parse_named(path).label == "perl_bot"
