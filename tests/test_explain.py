"""Fault messages that explain themselves (issue 12): each kind names the bot, the place and the fix."""

from hypothesis import given, strategies as st

from referee.explain import FaultContext, describe, near_miss, printable, shorten


def test_near_miss_folds_diacritics_and_case():
    assert near_miss("dobrá", ["dobra", "spatna"]) == "dobra"
    assert near_miss("PLAY:KH", ["play:Kh", "play:7h"]) == "play:Kh"


def test_near_miss_card_without_prefix_and_spelling():
    assert near_miss("Kh", ["play:Kh", "play:7h"]) == "play:Kh"
    assert near_miss("spatan", ["dobra", "spatna"]) == "spatna"


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
