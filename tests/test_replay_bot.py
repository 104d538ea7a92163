"""``marias replay``: one logged deal sent again to a bot from one seat (issue 12).

The lines are rebuilt from the log alone; a ``--transcript`` of the real match is the
independent record they must equal byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.matches.match import BotSpec, FaultPolicy, Limits, MatchConfig, run_match
from referee.tools.replay_bot import ReplayError, replay, seat_script

AUTHOR_BOT = Path(__file__).parent / "fault_bots" / "author_bot.py"
FAULTY = Path(__file__).parent / "fault_bots" / "faulty.py"


def _match(tmp_path: Path, seat1: BotSpec, partie: int = 2, bank_ms: int | None = None) -> Path:
    cfg = MatchConfig(bots=[BotSpec.parse("robot"), seat1, BotSpec.parse("random", seed="r")], partie=partie,
                      seed="replay", log_path=tmp_path / "m.jsonl", transcript=True, policy=FaultPolicy(max_faults=2),
                      limits=Limits(bank_ms=bank_ms, increment_ms=7) if bank_ms else Limits())
    run_match(cfg)
    return tmp_path / "m.jsonl"


@pytest.fixture(scope="module", params=[None, 1500], ids=["no-bank", "bank"])
def faulty_log(request, tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("replay")
    # with a bank, every time_ms depends on the times spent before: rebuilt from the logged ms
    return _match(tmp, BotSpec(label="illegal", argv=[sys.executable, str(FAULTY), "illegal", "4"]), bank_ms=request.param)


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_rebuilt_lines_equal_the_transcript_byte_for_byte(faulty_log):
    deals = [r for r in _records(faulty_log) if r["type"] == "deal"]
    assert any(r["faults"] for r in deals) and len({r["partie"] for r in deals}) == 2
    times = {json.loads(t["line"])["time_ms"] for s in range(3)
             for t in _records(faulty_log.with_name(f"m.seat{s}.transcript.jsonl"))
             if t["dir"] == "send" and '"type":"request"' in t["line"]}
    bank = json.loads(faulty_log.read_text().splitlines()[0])["limits"]["bank_ms"]
    assert (len(times) > 10) if bank else (times == {2000})
    for seat in range(3):
        transcript = _records(faulty_log.with_name(f"m.seat{seat}.transcript.jsonl"))
        sent = [t["line"] for t in transcript if t["dir"] == "send"]
        for r in deals:
            script = seat_script(faulty_log, r["partie"], r["deal"], seat)
            lines = script.lines[2:]  # from deal_start on (hello and partie_start are sent once per bot)
            start = sent.index(lines[0])
            assert sent[start:start + len(lines)] == lines, (seat, r["partie"], r["deal"])
            after = sent[start + len(lines):start + len(lines) + 1]
            # what follows is the next deal, the partie's end or bye: never one more line of this deal
            assert not after or json.loads(after[0])["type"] in ("deal_start", "partie_end", "bye", "hello")


def test_replay_reproduces_a_logged_fault_with_its_explanation(tmp_path):
    log = _match(tmp_path, BotSpec(label="dobra", argv=[sys.executable, str(AUTHOR_BOT), "dobra"]), partie=1)
    faulted = [r for r in _records(log) if r["type"] == "deal" and r["faults"]]
    rec = faulted[0]
    assert rec["faults"][0]["kind"] == "illegal" and rec["faults"][0]["seat"] == 1
    script = seat_script(log, 1, rec["deal"], 1)
    steps = replay(script, f"{sys.executable} {AUTHOR_BOT} dobra", work_dir=tmp_path / "w")
    asked = [s for s in steps if s.request is not None]
    assert (asked[-1].logged, asked[-1].logged_fault) == ("dobrá", "illegal")
    assert asked[-1].answer == "dobrá" and asked[-1].same  # the same faulty answer again
    assert "did you mean 'dobra'?" in asked[-1].fault
    assert all(s.same for s in asked[:-1])  # the answers before the fault are the logged ones
    # a bot without the bug answers the same request legally
    fixed = replay(script, f"{sys.executable} {AUTHOR_BOT} good", work_dir=tmp_path / "w2")
    assert not any(s.fault for s in fixed)


def test_the_command_prints_both_answers_and_fails_when_the_bot_would_fault(tmp_path, faulty_log):
    rec = next(r for r in _records(faulty_log) if r["type"] == "deal" and r["faults"])
    seat = rec["faults"][0]["seat"]
    args = ["marias", "replay", str(faulty_log), "--partie", str(rec["partie"]), "--deal", str(rec["deal"]),
            "--seat", str(seat)]
    bad = subprocess.run([*args, "--bot", f"{sys.executable} {FAULTY} illegal 1"], capture_output=True, text=True)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "(fault illegal)" in bad.stdout and "fault: faulty-illegal (seat 1)" in bad.stdout
    good = subprocess.run([*args, "--bot", "robot", "--json"], capture_output=True, text=True)
    assert good.returncode == 0, good.stdout + good.stderr
    assert json.loads(good.stdout)["faulted"] is False
    missing = subprocess.run(["marias", "replay", str(faulty_log), "--deal", "12", "--partie", "9", "--seat", "0",
                              "--bot", "robot"], capture_output=True, text=True)
    assert missing.returncode == 2 and "no deal 12 in partie 9" in missing.stderr


def test_no_such_seat_or_deal(faulty_log):
    with pytest.raises(ReplayError):
        seat_script(faulty_log, 1, 13, 0)
