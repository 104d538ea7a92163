"""Tests for referee.seats.process: spawning bots, line I/O, limits and cleanup.

Bots are tiny inline Python programs run with ``sys.executable -c``.  Timing
assertions are only lower bounds (the machine may be slow and noisy).
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import textwrap

import pytest
from hypothesis import given, settings, strategies as st

from referee.seats import process as process_mod
from referee.seats.faults import evidence
from referee.seats.process import BotCommand, BotFault, BotProcess, FaultKind

PY = sys.executable

ECHO = textwrap.dedent(
    """
    import sys
    for line in sys.stdin:
        sys.stdout.write(line)
        sys.stdout.flush()
    """
)


def make_bot(code: str, **kwargs) -> BotProcess:
    cwd = kwargs.pop("cwd", None)
    env = kwargs.pop("env", None)
    return BotProcess(BotCommand([PY, "-c", textwrap.dedent(code)], cwd=cwd, env=env), **kwargs)


def _proc_state(pid: int) -> tuple[str, int] | None:
    """(state letter, pgrp) of a process, or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(")") + 2 :].split()
    return fields[0], int(fields[2])


def pid_running(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    if os.path.isdir("/proc"):
        st = _proc_state(pid)
        return st is not None and st[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def group_members(pgid: int) -> list[int]:
    """Non-zombie processes in process group ``pgid``."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        return [pgid]
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _proc_state(int(name))
            if st is not None and st[1] == pgid and st[0] not in ("Z", "X"):
                found.append(int(name))
    return found


def expect_fault(call, kind: FaultKind) -> BotFault:
    with pytest.raises(BotFault) as info:
        call()
    assert info.value.kind == kind, info.value
    return info.value


# ---------------------------------------------------------------- round trip


def test_echo_round_trip():
    def main():
        bot = make_bot(ECHO, name="echo")
        bot.start()
        try:
            assert bot.alive and bot.returncode is None
            for i in range(20):
                answer, elapsed = bot.request({"id": i, "text": "žluťoučký kůň"}, 5.0)
                assert answer == {"id": i, "text": "žluťoučký kůň"}
                assert elapsed >= 0
            bot.send({"id": 100})
            assert bot.receive(5.0) == {"id": 100}
        finally:
            bot.close()
        assert not bot.alive
        assert bot.returncode == 0  # the echo loop ends cleanly on stdin EOF
        bot.close()  # idempotent

    main()


def test_several_lines_in_one_write_crlf_and_blank_lines():
    code = """
        import sys
        sys.stdin.readline()
        sys.stdout.write('\\n{"id":1}\\r\\n\\n{"id":2}\\n{"id":3}')
        sys.stdout.flush()
        sys.stdout.write('\\n')
        sys.stdout.flush()
        sys.stdin.readline()
    """

    def main():
        bot = make_bot(code)
        bot.start()
        try:
            assert (bot.request({"id": 0}, 5.0))[0] == {"id": 1}
            assert bot.receive(5.0) == {"id": 2}
            assert bot.receive(5.0) == {"id": 3}
        finally:
            bot.close()

    main()


def test_transcript_sees_both_directions():
    lines: list[tuple[str, str]] = []

    def main():
        bot = make_bot(ECHO, transcript=lambda d, l: lines.append((d, l)))
        bot.start()
        try:
            bot.request({"id": 7, "a": [1, 2]}, 5.0)
        finally:
            bot.close()

    main()
    assert lines == [("send", '{"id":7,"a":[1,2]}'), ("recv", '{"id":7,"a":[1,2]}')]


def test_cwd_and_env_are_honoured(tmp_path):
    code = """
        import json, os, sys
        sys.stdin.readline()
        print(json.dumps({"cwd": os.getcwd(), "var": os.environ.get("MARIAS_TEST_VAR"),
                          "path": "PATH" in os.environ}), flush=True)
    """

    def main():
        bot = make_bot(code, cwd=str(tmp_path), env={"MARIAS_TEST_VAR": "jedna"})
        bot.start()
        try:
            answer, _ = bot.request({"id": 1}, 5.0)
        finally:
            bot.close()
        return answer

    answer = main()
    assert os.path.samefile(answer["cwd"], tmp_path)
    assert answer["var"] == "jedna"
    assert answer["path"] is True  # env entries are added, not a replacement


# -------------------------------------------------------------------- faults


def test_exit_at_start_reports_return_code():
    def main():
        bot = make_bot("import sys; sys.exit(3)")
        bot.start()
        try:
            fault = expect_fault(lambda: bot.request({"id": 1}, 5.0), FaultKind.EXIT)
            assert "3" in fault.message
        finally:
            bot.close()
        assert bot.returncode == 3
        assert not bot.alive

    main()


def test_exit_after_answer_and_stderr_evidence():
    code = """
        import sys
        sys.stdin.readline()
        print('{"id":1}', flush=True)
        sys.stderr.write("Traceback: something broke\\n")
        sys.exit(5)
    """

    def main():
        bot = make_bot(code)
        bot.start()
        try:
            assert (bot.request({"id": 1}, 5.0))[0] == {"id": 1}
            fault = expect_fault(lambda: bot.request({"id": 2}, 5.0), FaultKind.EXIT)
            assert "return code 5" in fault.message
            assert "something broke" in fault.evidence
            assert "something broke" in bot.stderr_tail
            assert fault.to_dict()["kind"] == "exit"
        finally:
            bot.close()
        assert bot.returncode == 5

    main()


def test_exit_after_half_a_line_keeps_the_half_line_as_evidence():
    code = """
        import sys
        sys.stdin.readline()
        sys.stdout.write('{"id": 1, "acti')
        sys.stdout.flush()
        sys.exit(2)
    """

    def main():
        bot = make_bot(code)
        bot.start()
        try:
            fault = expect_fault(lambda: bot.request({"id": 1}, 5.0), FaultKind.EXIT)
            assert "return code 2" in fault.message
            assert fault.evidence == '{"id": 1, "acti'
        finally:
            bot.close()

    main()


@pytest.mark.parametrize("wait", ["epoll", "poll"])
def test_hang_times_out(monkeypatch, wait):
    if wait == "poll":
        monkeypatch.delattr(process_mod.select, "epoll")

    def main():
        bot = make_bot("import time; time.sleep(1000)")
        bot.start()
        try:
            fault = expect_fault(lambda: bot.request({"id": 1}, 0.3), FaultKind.TIMEOUT)
            assert fault.elapsed >= 0.3
            assert bot.alive
        finally:
            bot.close(grace=0.1)
        assert not bot.alive
        assert bot.returncode is not None and bot.returncode < 0
        assert not group_members(bot.pgid)

    main()


def test_partial_line_then_timeout_keeps_evidence():
    code = """
        import sys, time
        sys.stdin.readline()
        sys.stdout.write('{"id": 1, "unfinished')
        sys.stdout.flush()
        time.sleep(1000)
    """

    def main():
        bot = make_bot(code)
        bot.start()
        try:
            fault = expect_fault(lambda: bot.request({"id": 1}, 0.5), FaultKind.TIMEOUT)
            assert fault.evidence == '{"id": 1, "unfinished'
            assert fault.elapsed >= 0.5
        finally:
            bot.close(grace=0.05)

    main()


@pytest.mark.parametrize(
    "payload, evidence",
    [
        ("b'this is not json\\n'", "this is not json"),
        ("b'[1, 2, 3]\\n'", "[1, 2, 3]"),
        ("b'\"just a string\"\\n'", '"just a string"'),
        ("b'{\"a\": NaN}\\n'", '{"a": NaN}'),
        ("b'\\xff\\xfe{}\\n'", None),
    ],
    ids=["garbage", "array", "string", "nan", "not-utf8"],
)
def test_malformed_lines(payload, evidence):
    code = f"""
        import sys
        sys.stdin.readline()
        sys.stdout.buffer.write({payload})
        sys.stdout.flush()
        sys.stdin.readline()
    """

    def main():
        bot = make_bot(code)
        bot.start()
        try:
            fault = expect_fault(lambda: bot.request({"id": 1}, 5.0), FaultKind.MALFORMED)
            if evidence is not None:
                assert fault.evidence == evidence
            else:
                assert fault.evidence  # something printable
        finally:
            bot.close()

    main()


def test_an_answer_written_before_its_request_is_unexpected_even_with_the_right_id():
    code = """
        import sys
        sys.stdin.readline()
        sys.stdout.write('{"id":1}\\n{"id":2}\\n')  # answers request 2 before it is sent
        sys.stdout.flush()
        sys.stdin.readline()
    """

    def main():
        bot = make_bot(code)
        bot.start()
        try:
            assert bot.request({"id": 1}, 5.0)[0] == {"id": 1}
            fault = expect_fault(lambda: bot.request({"id": 2}, 5.0), FaultKind.UNEXPECTED)
            assert fault.evidence == '{"id":2}\n'
        finally:
            bot.close()

    main()


def test_integer_beyond_64_bits_is_malformed():
    code = """
        import sys
        sys.stdin.readline()
        sys.stdout.write('{"type":"action","id":99999999999999999999,"action":"play:Ah"}\\n')
        sys.stdout.flush()
        sys.stdin.readline()
    """

    def main():
        bot = make_bot(code)
        bot.start()
        try:
            fault = expect_fault(lambda: bot.request({"id": 1}, 5.0), FaultKind.MALFORMED)
            assert "99999999999999999999 does not fit in 64 bits" in fault.message
            assert "99999999999999999999" in fault.evidence
        finally:
            bot.close()

    main()


def test_huge_line_without_newline_is_line_too_long():
    code = """
        import sys
        sys.stdin.readline()
        chunk = b"x" * (1 << 20)
        for _ in range(50):
            sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        import time; time.sleep(1000)
    """

    def main():
        bot = make_bot(code)
        bot.start()
        try:
            fault = expect_fault(lambda: bot.request({"id": 1}, 20.0), FaultKind.LINE_TOO_LONG)
            assert fault.evidence.startswith("x" * 300)
            assert fault.evidence.endswith("bytes)")
            assert len(fault.evidence) < 400
            assert len(bot._lines.data) <= bot.max_line + 65536
        finally:
            bot.close(grace=0.05)

    main()


def test_long_line_is_skipped_and_next_line_is_readable():
    code = """
        import sys
        sys.stdin.readline()
        sys.stdout.write("y" * 5000 + "\\n" + '{"id":2}\\n')
        sys.stdout.flush()
        sys.stdin.readline()
    """

    def main():
        bot = make_bot(code, max_line=100)
        bot.start()
        try:
            expect_fault(lambda: bot.request({"id": 1}, 5.0), FaultKind.LINE_TOO_LONG)
            assert bot.receive(5.0) == {"id": 2}
        finally:
            bot.close()

    main()


def test_closed_stdout_while_running():
    code = """
        import os, sys, time
        sys.stdin.readline()
        os.close(1)
        time.sleep(1000)
    """

    def main():
        bot = make_bot(code)
        bot.start()
        try:
            expect_fault(lambda: bot.request({"id": 1}, 5.0), FaultKind.CLOSED)
            assert bot.alive
        finally:
            bot.close(grace=0.05)
        assert not bot.alive

    main()


def test_missing_program_and_bad_cwd_are_start_faults(tmp_path):
    script = tmp_path / "not_executable.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)

    def main():
        for command in (
            BotCommand([str(tmp_path / "no-such-program")]),
            BotCommand([str(script)]),
            BotCommand([PY, "-c", "pass"], cwd=str(tmp_path / "missing-dir")),
            BotCommand([]),
        ):
            bot = BotProcess(command, stderr_path=tmp_path / "err.log")
            fault = expect_fault(lambda: bot.start(), FaultKind.START)
            assert fault.message
            assert not bot.alive
            bot.close()  # harmless on a never-started bot

    main()


def test_write_timeout_when_bot_never_reads():
    def main():
        bot = make_bot("import time; time.sleep(1000)", write_timeout=0.3)
        bot.start()
        try:
            fault = expect_fault(lambda: bot.send({"blob": "z" * 2_000_000}), FaultKind.TIMEOUT)
            assert fault.elapsed >= 0.3
        finally:
            bot.close(grace=0.05)

    main()


# -------------------------------------------------------------------- stderr


def test_stderr_flood_is_capped_and_bot_keeps_answering(tmp_path):
    log = tmp_path / "logs" / "bot.stderr"
    log.parent.mkdir()
    log.write_bytes(b"earlier run\n")
    cap = 100_000
    code = """
        import sys
        line = b"e" * 1023 + b"\\n"
        sys.stdin.readline()
        for _ in range(20 * 1024):          # 20 MiB
            sys.stderr.buffer.write(line)
        sys.stderr.flush()
        print('{"id":1}', flush=True)
        for line in sys.stdin:
            sys.stdout.write(line)
            sys.stdout.flush()
    """

    def main():
        bot = make_bot(code, stderr_path=log, stderr_cap=cap)
        bot.start()
        try:
            assert (bot.request({"id": 1}, 15.0))[0] == {"id": 1}
            assert (bot.request({"id": 2}, 5.0))[0] == {"id": 2}
            assert bot.alive
        finally:
            bot.close()

    main()
    data = log.read_bytes()
    assert data.startswith(b"earlier run\n")
    body = data[len(b"earlier run\n") :]
    marker = f"[marias: stderr truncated at {cap} bytes]\n".encode()
    assert body.endswith(marker)
    captured = body[: cap]
    assert captured == (b"e" * 1023 + b"\n") * (cap // 1024) + b"e" * (cap % 1024)
    assert len(body) == cap + 1 + len(marker)  # "\n" closes the cut line


def test_stderr_below_cap_is_copied_verbatim(tmp_path):
    log = tmp_path / "bot.stderr"
    code = """
        import sys
        sys.stderr.write("hello from stderr\\n")
        sys.stderr.flush()
        sys.stdin.readline()
    """

    def main():
        bot = make_bot(code, stderr_path=log)
        bot.start()
        bot.close()

    main()
    assert log.read_text() == "hello from stderr\n"


@pytest.mark.parametrize("wait", ["epoll", "poll"])
def test_one_poll_serves_every_bot_while_waiting_for_one(tmp_path, monkeypatch, wait):
    # B writes 300 KB to stderr (more than a pipe holds) and then exits: it can only finish
    # if its stderr is drained while the referee waits for A, through the shared poller
    # (epoll, or poll() where there is no epoll)
    if wait == "poll":
        monkeypatch.delattr(process_mod.select, "epoll")
    poller = process_mod.Poller()
    assert (poller._epoll is None) == (wait == "poll")
    a = make_bot("import time; time.sleep(1000)", poller=poller)
    b = make_bot("""
        import sys
        sys.stderr.write("b" * 300_000)
        sys.stderr.flush()
    """, poller=poller, stderr_path=tmp_path / "b.stderr", stderr_cap=10**6)
    a.start()
    b.start()
    try:
        expect_fault(lambda: a.request({"id": 1}, 0.5), FaultKind.TIMEOUT)
        for _ in range(60):  # only waits for A: B is served meanwhile (or never, were it not shared)
            if b._exited:
                break
            expect_fault(lambda: a.receive(0.5), FaultKind.TIMEOUT)
        assert b.returncode == 0 and not b.alive
        assert (tmp_path / "b.stderr").read_bytes() == b"b" * 300_000
    finally:
        a.close(grace=0.05)
        b.close()


def test_output_out_of_turn_is_seen_while_another_bot_is_asked():
    # A answers, then writes one more line a moment later, in a write of its own, while the
    # referee waits for B: the shared poll holds it, and A's next request is refused for it
    poller = process_mod.Poller()
    a = make_bot("""
        import sys, time
        sys.stdin.readline()
        sys.stdout.write('{"id":1}\\n'); sys.stdout.flush()
        time.sleep(0.2)
        sys.stdout.write('{"id":2}\\n'); sys.stdout.flush()
        sys.stdin.readline()
    """, poller=poller)
    b = make_bot("""
        import sys, time
        sys.stdin.readline()
        time.sleep(1.0)
        sys.stdout.write('{"id":9}\\n'); sys.stdout.flush()
        sys.stdin.readline()
    """, poller=poller)
    a.start()
    b.start()
    try:
        assert a.request({"id": 1}, 5.0)[0] == {"id": 1}
        assert b.request({"id": 9}, 5.0)[0] == {"id": 9}
        fault = expect_fault(lambda: a.request({"id": 2}, 5.0), FaultKind.UNEXPECTED)
        assert fault.evidence == '{"id":2}\n'
    finally:
        a.close(grace=0.05)
        b.close(grace=0.05)


def test_a_bot_flooding_stdout_out_of_turn_does_not_keep_the_poll_busy():
    # A writes without end while B is asked; the poll takes one chunk of A's and then leaves
    # A's stdout alone until A is asked: the wait for B sleeps instead of spinning
    poller = process_mod.Poller()
    wakeups = []
    wait = poller.wait
    poller.wait = lambda timeout: (wakeups.append(timeout), wait(timeout))
    a = make_bot("""
        import sys
        sys.stdin.readline()
        sys.stdout.write('{"id":1}\\n'); sys.stdout.flush()
        while True:
            sys.stdout.write("x" * 4096); sys.stdout.flush()
    """, poller=poller)
    b = make_bot("import time; time.sleep(1000)", poller=poller)
    a.start()
    b.start()
    try:
        assert a.request({"id": 1}, 5.0)[0] == {"id": 1}
        wakeups.clear()
        expect_fault(lambda: b.request({"id": 1}, 1.0), FaultKind.TIMEOUT)
        assert len(wakeups) <= 3  # A's chunk wakes it once; a busy poll would return thousands of times
        assert len(a._lines.data) <= 2 * 65536  # what came with its answer and one chunk, not the flood
        expect_fault(lambda: a.request({"id": 2}, 1.0), FaultKind.UNEXPECTED)
    finally:
        a.close(grace=0.05)
        b.close(grace=0.05)


# ------------------------------------------------------------------- cleanup

CHILD_SPAWNER = f"""
    import json, subprocess, sys
    sys.stdin.readline()
    child = subprocess.Popen([{PY!r}, "-c", "import time; time.sleep(1000)"])
    print(json.dumps({{"child": child.pid}}), flush=True)
    sys.exit(0)
"""


def _check_child_spawner():
    def main():
        bot = make_bot(CHILD_SPAWNER)
        bot.start()
        pgid = bot.pgid
        try:
            answer, _ = bot.request({"id": 1}, 5.0)
            child = answer["child"]
            # The leader is gone but the child still holds stdout open: this
            # must be reported as an exit, not run into the timeout.
            fault = expect_fault(lambda: bot.receive(10.0), FaultKind.EXIT)
            assert "return code 0" in fault.message
            assert pid_running(child)
        finally:
            bot.close()
        assert not pid_running(child)
        assert group_members(pgid) == []
        return child

    main()


def test_children_holding_pipes_are_killed_on_close():
    _check_child_spawner()


def test_thread_exit_watcher_fallback(monkeypatch):
    monkeypatch.setattr(process_mod, "_USE_PIDFD", False)
    _check_child_spawner()


def test_close_escalates_to_sigkill_when_sigterm_is_ignored():
    code = """
        import signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print('{"ready":true}', flush=True)
        time.sleep(1000)
    """

    def main():
        bot = make_bot(code)
        bot.start()
        pgid = bot.pgid
        assert bot.receive(5.0) == {"ready": True}
        bot.close(grace=0.1)
        assert bot.returncode == -signal.SIGKILL
        assert group_members(pgid) == []

    main()


class _Interrupted(Exception):
    pass


def test_interrupted_request_then_close_still_cleans_up():
    # a request broken off from outside (here by a signal handler, as Ctrl-C would) leaves
    # a bot that close() still ends with its whole group
    def interrupt(signum, frame):
        raise _Interrupted

    def main():
        bot = make_bot("import time; time.sleep(1000)")
        bot.start()
        old = signal.signal(signal.SIGALRM, interrupt)
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.2)
            with pytest.raises(_Interrupted):
                bot.request({"id": 1}, None)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        bot.close(grace=0.05)
        assert not bot.alive
        assert group_members(bot.pgid) == []

    main()


def test_a_closed_bot_cannot_be_read_or_written():
    def main():
        bot = make_bot("import time; time.sleep(1000)")
        bot.start()
        bot.close(grace=0.05)
        with pytest.raises(BotFault) as info:
            bot.receive(None)
        assert info.value.kind == FaultKind.EXIT
        with pytest.raises(BotFault):
            bot.send({"id": 1})

    main()


def test_use_after_close_and_context_manager():
    def main():
        with make_bot(ECHO) as bot:
            assert (bot.request({"id": 1}, 5.0))[0] == {"id": 1}
        assert bot.closed and not bot.alive
        fault = expect_fault(lambda: bot.request({"id": 2}, 1.0), FaultKind.EXIT)
        assert "closed" in fault.message

    main()


# ----------------------------------------------------------------- BotFault


def test_bot_fault_evidence_truncation_and_dict():
    text = "á" * 1000
    ev = evidence(text.encode())
    assert ev == "á" * 300 + "…(2000 bytes)"
    assert evidence(b"short") == "short"
    fault = BotFault(FaultKind.TIMEOUT, "too slow", ev, 1.25)
    assert fault.to_dict() == {
        "kind": "timeout",
        "message": "too slow",
        "evidence": ev,
        "elapsed": 1.25,
    }
    assert str(FaultKind.LINE_TOO_LONG) == "line-too-long"
    assert FaultKind("wrong-id") is FaultKind.WRONG_ID
    assert "timeout" in str(fault)


# ----------------------------------------------------------------- LineBuffer


def test_line_buffer_cuts_lines_and_refuses_long_ones_without_holding_them():
    from referee.seats.streams import LineBuffer, LineTooLong

    lines = LineBuffer(max_line=5)
    for chunk in (b"ab", b"c\nde", b"\n\n12345\n"):
        lines.feed(chunk)
    assert [lines.next_line(), lines.next_line(), lines.next_line(), lines.next_line()] == [b"abc", b"de", b"", b"12345"]
    assert lines.next_line() is None
    lines.feed(b"123456")  # too long before its newline arrives
    with pytest.raises(LineTooLong) as info:
        lines.next_line()
    assert info.value.head == b"123456" and not lines.data
    lines.feed(b"789" * 1000)  # the rest of it is dropped as it comes
    assert lines.next_line() is None and not lines.data
    lines.feed(b"0\nok\n")
    assert lines.next_line() == b"ok"
    lines.feed(b"toolong\nfine\n")  # too long with its newline
    with pytest.raises(LineTooLong):
        lines.next_line()
    assert lines.next_line() == b"fine"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"x")), max_size=12), st.integers(1, 8),
       st.data())
def test_line_buffer_gives_every_line_or_one_refusal_whatever_the_chunks(lines, max_line, data):
    """Fed the lines in arbitrary chunks, the buffer gives each line of at most ``max_line``
    bytes whole and in order, refuses each longer one exactly once, and never holds more
    than ``max_line`` bytes plus one chunk."""
    from referee.seats.streams import LineBuffer, LineTooLong

    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.sets(st.integers(0, len(stream)), max_size=8)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)]) if b > a]
    buf = LineBuffer(max_line)
    got = []
    for chunk in chunks:
        buf.feed(chunk)
        while True:
            try:
                line = buf.next_line()
            except LineTooLong:
                got.append(None)
                continue
            if line is None:
                break
            got.append(line)
        assert len(buf.data) <= max_line + len(chunk)
    assert got == [line if len(line) <= max_line else None for line in lines]
