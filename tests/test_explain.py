"""Fault messages that explain themselves (issue 12): each kind names the bot, the place and the fix."""

from hypothesis import given, strategies as st

from referee.seats.explain import FaultContext, describe, near_miss, printable, shorten


def test_near_miss_folds_diacritics_and_case():
    assert near_miss("dobrá", ["dobra", "spatna"]) == "dobra"
    assert near_miss("PLAY:KH", ["play:Kh", "play:7h"]) == "play:Kh"


def test_near_miss_card_without_prefix_and_spelling():
    assert near_miss("Kh", ["play:Kh", "play:7h"]) == "play:Kh"
    assert near_miss("spatan", ["dobra", "spatna"]) == "spatna"


def test_near_miss_never_swaps_one_card_for_another_by_its_spelling():
    """Issue 34: ``play:Ah`` (the ace of hearts, not allowed now) drew "did you mean 'play:Xa'?", the ten
    of acorns: a card that merely shares letters.  A card is suggested only as the same card in
    another notation; otherwise the hint lists the cards that could have been played."""
    legal = ["play:Xa", "play:7a", "play:Ka"]
    assert near_miss("play:Ah", legal) is None
    assert near_miss("trump:Ah", ["trump:Xa", "trump:zlidu"]) is None
    assert near_miss("play:10a", legal) == "play:Xa"
    assert near_miss("play:K♣", legal) == "play:Ka"  # the terminal's symbol for žaludy
    assert near_miss("7a", legal) == "play:7a"
    assert near_miss("barva:8b,Uh", ["barva:Uh,8b", "barva:Uh,9b"]) == "barva:Uh,8b"
    assert near_miss("barva:8b,Ul", ["barva:Uh,8b", "barva:Uh,9b"]) is None
    text = describe(FaultContext("illegal", "action 'play:Ah' is not one of the 3 legal actions", bot="b", seat=1,
                                 evidence='{"type":"action","id":9,"action":"play:Ah"}',
                                 rule="R7.2: must follow suit (žaludy)", legal=tuple(legal)))
    assert "did you mean" not in text
    assert "answer one of the legal actions offered: play:Xa, play:7a, play:Ka" in text


def test_near_miss_none_when_nothing_is_close():
    assert near_miss("xyzzy", ["dobra", "spatna"]) is None
    assert near_miss("dobra", ["dobra"]) is None  # already legal: nothing to suggest


def test_printable_escapes_terminal_control_sequences():
    assert printable("evil\x1b[2Jname\n") == "evil\\x1b[2Jname\\n"
    assert "\x1b" not in describe(FaultContext("exit", "bot\x1b]0;owned\x07 ended", bot="\x1b[31mred"))


@given(st.text())
def test_printable_never_lets_a_control_character_through(text):
    out = printable(text)
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in out)


def test_shorten_cuts_and_says_how_long():
    s = shorten("x" * 1000, 20)
    assert s.startswith("x" * 20) and "1000 chars" in s


def test_timeout_at_startup_names_the_startup_limit_and_flushing():
    text = describe(FaultContext("timeout", "no complete line within 10 s", bot="java-bot", seat=2,
                                 partie=1, deal=1, limit_ms=10000, phase="startup"))
    assert text.startswith("fault: java-bot (seat 2), partie 1 deal 1: timeout:")
    assert "start-up limit (10000 ms, --startup-time)" in text
    assert "flush stdout after every line" in text


def test_timeout_on_a_move_names_the_move_limit():
    text = describe(FaultContext("timeout", "no answer", limit_ms=2000))
    assert "move limit (2000 ms, --move-time)" in text and "startup" not in text


def test_debug_print_shows_the_line_and_says_stderr():
    text = describe(FaultContext("malformed", "line is not valid JSON", evidence="considering Kh...", seat=0))
    assert "line: considering Kh..." in text
    assert "debug output belongs on stderr" in text


def test_illegal_answer_cites_the_rule_lists_the_legal_actions_and_suggests():
    text = describe(FaultContext(
        "illegal", "action 'dobrá' is not legal", bot="b", seat=1, partie=2, deal=5,
        evidence='{"type":"action","id":7,"action":"dobrá"}',
        rule="R4.1: answer dobrá or špatná", legal=("dobra", "spatna")))
    assert "rule: R4.1: answer dobrá or špatná" in text
    assert "dobra, spatna" in text
    assert "did you mean 'dobra'?" in text


def test_long_legal_lists_are_cut_with_a_count():
    legal = tuple(f"talon:{i}" for i in range(300))
    text = describe(FaultContext("illegal", "not legal", legal=legal))
    assert "(300 in all)" in text and "talon:299" not in text


def test_crash_shows_the_last_stderr_lines_and_where_the_rest_is():
    tail = "\n".join(f"line {i}" for i in range(20)) + "\nZeroDivisionError: division by zero\n"
    text = describe(FaultContext("exit", "bot process exited with return code 1", bot="py", seat=0,
                                 stderr_tail=tail, stderr_path="runs/m.seat0.stderr.log"))
    assert "ZeroDivisionError: division by zero" in text
    assert "line 0\n" not in text  # only the last lines
    assert "full stderr: runs/m.seat0.stderr.log" in text


def test_every_kind_has_a_hint():
    for kind in ("timeout", "malformed", "line-too-long", "wrong-id", "unexpected", "illegal", "exit", "closed", "start"):
        assert "hint:" in describe(FaultContext(kind, "m")), kind


# ------------------------------------------------------------------ through the real referee
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from referee.matches.match import BotSpec, FaultPolicy, Limits, MatchConfig, run_match  # noqa: E402

FAULT_BOTS = Path(__file__).parent / "fault_bots"


def _spec(script: str, *args: str) -> BotSpec:
    return BotSpec(label=f"{script} {' '.join(args)}", argv=[sys.executable, str(FAULT_BOTS / script), *args])


def _console(bad: BotSpec, tmp_path: Path, move_ms: int = 1500, startup_ms: int = 10_000) -> tuple[str, dict]:
    """Play one partie with ``bad`` in seat 1; the progress text and the first fault."""
    lines: list[str] = []
    cfg = MatchConfig(bots=[BotSpec.parse("random"), bad, BotSpec.parse("random")], seed="explain",
                      limits=Limits(move_ms=move_ms, startup_ms=startup_ms), policy=FaultPolicy(max_faults=1),
                      log_path=tmp_path / "m.jsonl")
    result = run_match(cfg, lines.append)
    assert result.faults, "the bot was expected to fault"
    return "\n".join(lines), result.faults[0]


def _headline(text: str, name: str, kind: str) -> None:
    head = text.splitlines()[0]
    assert head.startswith(f"fault: {name} (seat 1), partie 1 deal ")
    assert f": {kind}: " in head


@pytest.mark.parametrize("mode,kind,hint_word", [
    ("garbage", "malformed", "debug output belongs on stderr"),
    ("wrong-id", "wrong-id", "with the request's own id"),
    ("unexpected", "unexpected", "answer a request with"),
    ("die", "exit", "its stderr above usually says why"),
    ("close-stdout", "closed", "keep stdout open until bye"),
    ("huge-line", "line-too-long", "one short JSON object"),
    ("hang", "timeout", "within the move limit (700 ms, --move-time)"),
])
def test_each_fault_kind_names_bot_place_evidence_stderr_file_and_hint(mode, kind, hint_word, tmp_path):
    text, fault = _console(_spec("faulty.py", mode, "2"), tmp_path, move_ms=700)
    _headline(text, f"faulty-{mode}", kind)
    hints = [line for line in text.splitlines() if line.startswith("  hint: ")]
    assert hints and hint_word in hints[0]
    assert f"full stderr: {tmp_path / 'm.seat1.stderr.log'}" in text
    assert fault["bot"] == f"faulty-{mode}" and fault["text"].splitlines()[0] in text
    if mode == "garbage":
        assert "  line: this is not json" in text  # the offending line itself


def test_an_illegal_answer_names_the_rule_the_legal_actions_and_the_near_miss(tmp_path):
    text, _ = _console(_spec("author_bot.py", "dobra"), tmp_path)
    _headline(text, "author-dobra", "illegal")
    first = text.split("\nfault:")[0]
    assert "did you mean 'dobra'?" in first
    assert "answer one of the legal actions offered: " in first and "dobra" in first
    assert "  rule: " in first


def test_an_illegal_card_cites_the_rule_of_the_engine(tmp_path):
    text, fault = _console(_spec("author_bot.py", "wrong-card"), tmp_path)
    _headline(text, "author-wrong-card", "illegal")
    first = text.split("\nfault:")[0].splitlines()
    rule = next(line for line in first if line.startswith("  rule: "))
    # a card held but not playable breaks a rule of play: following suit, beating or trumping (R7)
    assert rule.startswith("  rule: R7."), rule
    assert any(line.startswith("  hint: answer one of the legal actions offered: play:") for line in first)


def test_a_crash_shows_the_last_lines_of_stderr(tmp_path):
    bot = tmp_path / "crash.py"
    bot.write_text("import sys, json\n"
                   "for line in sys.stdin:\n"
                   "    m = json.loads(line)\n"
                   "    if m['type'] == 'hello':\n"
                   "        print(json.dumps({'type': 'hello', 'protocol': 1, 'name': 'crasher'}), flush=True)\n"
                   "    elif m['type'] == 'request':\n"
                   "        raise RuntimeError('my bug on ' + m['decision'])\n")
    text, _ = _console(BotSpec(label="crash", argv=[sys.executable, str(bot)]), tmp_path)
    _headline(text, "crasher", "exit")
    assert "  stderr (last lines):" in text
    assert "RuntimeError: my bug on" in text


def test_a_bot_that_never_flushes_is_told_to_flush_at_the_start_up_limit(tmp_path):
    text, _ = _console(_spec("author_bot.py", "noflush"), tmp_path, startup_ms=800)
    head = text.splitlines()[0]
    assert head.startswith("fault: author_bot.py noflush (seat 1), partie 1 deal 1: timeout")
    assert "start-up limit (800 ms, --startup-time)" in text
    assert "flush stdout after every line" in text


def test_a_program_that_cannot_start(tmp_path):
    text, _ = _console(BotSpec(label="nosuch", argv=[str(tmp_path / "no-such-bot")]), tmp_path)
    _headline(text, "nosuch", "start")
    assert "check the command, its path" in text
