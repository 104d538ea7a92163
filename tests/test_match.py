"""The referee loop against misbehaving bots (R12): every fault is survived,
settled as R12.2 says, recorded with its kind, and no process is left behind."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from referee.matches.match import BotSpec, FaultPolicy, Limits, MatchConfig, run_match

FAULTY = str(Path(__file__).parent / "fault_bots" / "faulty.py")


def faulty(mode: str, at: int = 5, once: Path | None = None, marker: str = "") -> BotSpec:
    env = {"FAULTY_ONCE": str(once)} if once else None
    # the flag file lives in the bot's own working folder: the sandbox lets a bot write nowhere else
    return BotSpec(label=f"faulty-{mode}", argv=[sys.executable, FAULTY, mode, str(at), marker], env=env,
                   workdir=str(once.parent) if once else None)


def bot_processes(marker: str) -> set[int]:
    """Live (non-zombie) processes whose command line carries ``marker`` (the faulty
    bot and the child it may start), so runs in parallel do not see each other's."""
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and marker.encode() in cmd:
            pids.add(int(entry))
    return pids


def play(spec: BotSpec, tmp_path: Path, move_ms: int = 1500, max_faults: int = 3, seed: str = "7"):
    config = MatchConfig(
        bots=[spec, BotSpec.parse("random", seed="a"), BotSpec.parse("random", seed="b")],
        partie=1, seed=seed, limits=Limits(startup_ms=5000, move_ms=move_ms, max_line=1_000_000, stderr_cap=100_000),
        policy=FaultPolicy(max_faults=max_faults), keep_partie=True, work_dir=tmp_path,
    )
    return run_match(config)


def check_r12(result, seat: int = 0):
    """Every deal ended and summed to zero; fault deals follow R12.2; others are ordinary."""
    (partie,) = result.parties
    assert len(partie.deals) == 12 and all(d.done for d in partie.deals)
    fault_deals = [d for d in partie.deals if d.fault_info is not None]
    for d in partie.deals:
        r = d.result
        assert sum(r.payments) == 0
        if d.fault_info is None:
            assert r.kind != "fault"
            continue
        assert d.fault_info.seat == seat and r.kind == "fault"
        if not r.components:  # before a contract: the faulting player pays each other 10
            assert r.payments[seat] == -20
            assert all(r.payments[s] == 10 for s in range(3) if s != seat)
        else:
            # the faulting side lost every component
            for c in r.components:
                faulting_side_owns = (c.owner == "actor") == (seat == d.actor)
                assert c.won != faulting_side_owns
            if seat != d.actor:  # a faulting defender alone pays the actor twice
                partner = 3 - seat - d.actor
                assert r.payments[partner] == 0
    assert sum(result.totals) == 0
    return fault_deals


CASES = [
    # mode, expected fault kind, misbehave at request, move time
    ("exit-at-start", "exit", 1, 1500),
    ("die", "exit", 5, 1500),
    ("hang", "timeout", 5, 400),
    ("late", "timeout", 5, 400),
    ("garbage", "malformed", 5, 1500),
    ("wrong-id", "wrong-id", 5, 1500),
    ("illegal", "illegal", 5, 1500),
    ("unexpected", "unexpected", 5, 1500),
    ("huge-line", "line-too-long", 5, 5000),
    ("close-stdout", "closed", 5, 1500),
    ("child-keeps-pipe", "exit", 5, 1500),
    ("early", "unexpected", 5, 1500),
    ("float-id", "wrong-id", 5, 1500),
    ("huge-illegal", "illegal", 5, 1500),
]


@pytest.mark.parametrize("mode,kind,at,move_ms", CASES, ids=[c[0] for c in CASES])
def test_R12_1_fault_is_survived_and_settled_per_R12_2(mode, kind, at, move_ms, tmp_path):
    marker = f"marias-test-{tmp_path.name}-{os.getpid()}"
    result = play(faulty(mode, at, once=tmp_path / "bot" / "faulted", marker=marker), tmp_path, move_ms=move_ms)
    fault_deals = check_r12(result)
    assert len(fault_deals) == 1, "exactly the one fault is recorded"
    assert fault_deals[0].fault_info.kind == kind
    assert result.stats[0].faults.get(kind, 0) >= 1
    # the other seats never faulted
    assert not result.stats[1].faults and not result.stats[2].faults
    assert bot_processes(marker) == set()


def forfeit_match(spec: BotSpec, tmp_path: Path, max_faults: int = 3):
    config = MatchConfig(
        bots=[spec, BotSpec.parse("random", seed="a"), BotSpec.parse("random", seed="b")],
        partie=2, seed="7", limits=Limits(startup_ms=5000, move_ms=1500),
        policy=FaultPolicy(max_faults=max_faults), keep_partie=True, transcript=True,
        log_path=tmp_path / "logs" / "m.jsonl",
    )
    return run_match(config)


def log_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_R12_3_a_bot_that_never_starts_forfeits_with_20_per_deal(tmp_path):
    # exit-at-start: every deal it should play starts with its fault before a contract
    # (R12.2: it pays each other player 10); after 3 faults it forfeits deals 4-12,
    # each settled the same way (R12.3).  So by hand: -20 x 12 per partie, +10 x 12 to each other.
    result = forfeit_match(faulty("exit-at-start"), tmp_path)
    assert result.partie_totals == [[-240, 120, 120], [-240, 120, 120]]
    assert [pl[0] for pl in result.partie_places] == [3.0, 3.0]  # last
    for partie in result.parties:
        assert len(partie.deals) == 3  # nothing was dealt after the third fault
        assert partie.forfeited.seat == 0 and partie.forfeited.from_deal == 4 and partie.forfeited.deals == 9
    assert result.stats[0].forfeited == [{"partie": 1, "from_deal": 4}, {"partie": 2, "from_deal": 4}]
    assert result.stats[0].decisions == 0


@pytest.mark.parametrize("mode", ["die", "garbage"])
def test_R12_3_a_bot_that_fails_every_request_forfeits_the_rest_of_the_partie(mode, tmp_path):
    # it answers hello, then fails at its first request after every (re)start: deals 1, 2 and 3
    result = forfeit_match(faulty(mode, at=1), tmp_path)
    records = log_records(result.log_path)
    for n, partie in enumerate(result.parties, 1):
        assert [d.fault_info.seat if d.fault_info else None for d in partie.deals] == [0, 0, 0]
        # the faults settle as R12.2 says (checked deal by deal against the rule's own terms) ...
        fault_pay = 0
        for d in partie.deals:
            r = d.result
            assert r.kind == "fault" and sum(r.payments) == 0
            if not r.components:
                assert r.payments == (-20, 10, 10)
            fault_pay += r.payments[0]
        # ... and each of the 9 forfeited deals costs it 20 (10 to each other player)
        others = [sum(d.result.payments[s] for d in partie.deals) + 90 for s in (1, 2)]
        assert result.partie_totals[n - 1] == [fault_pay - 180, *others]
        assert result.partie_places[n - 1][0] == 3.0
        # the log: three deal records, then the forfeit, then partie_end
        mine = [r for r in records if r.get("partie") == n and r["type"] not in ("header", "footer")]
        assert [r["type"] for r in mine] == ["partie_start", "deal", "deal", "deal", "forfeit", "partie_end"]
        forfeit = {k: v for k, v in mine[4].items() if k != "chain"}  # the seal's field (LOGS.md)
        assert forfeit == {"type": "forfeit", "partie": n, "seat": 0, "from_deal": 4, "deals": 9,
                           "payments": [-180, 90, 90], "rule": "R12.3"}
        assert mine[5]["totals"] == result.partie_totals[n - 1]
    header = records[0]
    assert header["fault_policy"]["after_max_faults"] == "forfeit"
    # the other seats are told in partie_end; nobody played seat 0 after its third fault
    for seat in (1, 2):
        sent = [json.loads(json.loads(x)["line"]) for x in
                (tmp_path / "logs" / f"m.seat{seat}.transcript.jsonl").read_text().splitlines()
                if json.loads(x)["dir"] == "send"]
        ends = [m for m in sent if m["type"] == "partie_end"]
        assert [m["forfeit"] for m in ends] == [{"seat": 0, "from_deal": 4}] * 2
        assert sum(1 for m in sent if m["type"] == "deal_end") == 6
    transcript0 = (tmp_path / "logs" / "m.seat0.transcript.jsonl").read_text().splitlines()
    sent0 = [json.loads(rec["line"]) for rec in map(json.loads, transcript0) if rec["dir"] == "send"]
    assert sum(1 for m in sent0 if m["type"] == "request") == 6


def test_R12_3_no_forfeit_when_the_last_fault_is_in_the_last_deal(tmp_path):
    result = forfeit_match(faulty("die", at=1), tmp_path, max_faults=12)
    for partie in result.parties:
        assert len(partie.deals) == 12 and partie.forfeited is None
    assert all(r["type"] != "forfeit" for r in log_records(result.log_path))
    assert result.stats[0].forfeited == []


def test_stderr_flood_is_capped_and_the_bot_plays_on(tmp_path):
    result = play(faulty("stderr-flood", 3), tmp_path)
    assert check_r12(result) == []
    files = list(tmp_path.glob("*.seat0.stderr.log"))
    assert files and files[0].stat().st_size < 200_000


def test_a_clean_match_has_no_faults(tmp_path):
    result = play(faulty("ok"), tmp_path)
    assert check_r12(result) == []
    assert result.stats[0].decisions > 0


def test_partie_forfeit_settles_every_deal_left_as_a_fault_before_a_contract():
    from referee.rules.partie import Partie

    partie = Partie(seed="forfeit")
    for deal in partie.iter_deals():
        if len(partie.deals) == 5:
            deal.fault(2, "exit")
            break
        deal.apply(deal.legal_actions()[0])
        while not deal.done:
            deal.apply(deal.legal_actions()[-1])
    played = [sum(d.result.payments[s] for d in partie.deals) for s in range(3)]
    f = partie.forfeit(2)
    # R12.3 with R12.2 before a contract: deals 6..12, each -20 for seat 2 and +10 to each other
    assert (f.seat, f.from_deal, f.deals) == (2, 6, 7)
    assert f.totals == [70, 70, -140]
    assert partie.totals() == [played[0] + 70, played[1] + 70, played[2] - 140]
    assert partie.done and list(partie.iter_deals()) == []
    with pytest.raises(ValueError, match="R12.3"):
        partie.forfeit(1)
    with pytest.raises(ValueError, match="over"):
        partie.next_deal()
    fresh = Partie(seed="x")
    next(fresh.iter_deals())
    with pytest.raises(ValueError, match="between deals"):
        fresh.forfeit(0)


def test_a_fault_tells_the_others_who_and_what_never_the_answer_and_the_evidence_is_capped(tmp_path):
    config = MatchConfig(
        bots=[faulty("huge-illegal", 3, once=tmp_path / "once"), BotSpec.parse("random", seed="a"), BotSpec.parse("random", seed="b")],
        partie=1, seed="7", transcript=True, log_path=tmp_path / "logs" / "m.jsonl",
    )
    result = run_match(config)
    (fault,) = result.faults
    assert fault["kind"] == "illegal" and len(fault["message"]) < 200
    (deal,) = [r for r in log_records(result.log_path) if r["type"] == "deal" and r["faults"]]
    (logged,) = deal["faults"]
    assert len(logged["evidence"].encode()) <= 4096
    assert logged["evidence"].startswith('{"type": "action", "id": ') and "900" in logged["evidence"][-20:]
    assert logged["evidence"].endswith(f"…({900_000 + len(logged['evidence'].split('xxx')[0]) + 2} bytes)")
    for seat in (1, 2):
        lines = (tmp_path / "logs" / f"m.seat{seat}.transcript.jsonl").read_text().splitlines()
        events = [json.loads(json.loads(x)["line"]) for x in lines]
        (ev,) = [m["event"] for m in events if m["type"] == "event" and m["event"]["kind"] == "fault"]
        assert ev == {"kind": "fault", "seat": 0, "fault": "illegal", "message": "seat 0 faulted (illegal)"}
    # the bots' files are the user's alone
    for path in [*(tmp_path / "logs").glob("*.stderr.log"), *(tmp_path / "logs").glob("*.transcript.jsonl")]:
        assert path.stat().st_mode & 0o777 == 0o600, path


def test_a_hello_name_reaches_the_console_with_control_characters_escaped(tmp_path):
    spec = faulty("ok")
    spec.env = {"FAULTY_NAME": "evil\x1b[2J\x07bot"}
    result = play(spec, tmp_path)
    assert result.names[0] == "evil\\x1b[2J\\x07bot"
    assert "\x1b" not in result.names[0]


def test_without_a_log_the_stderr_files_are_in_a_named_private_folder(tmp_path):
    import subprocess
    # it passes the pre-flight hello, then writes to stderr and ends at its first request
    bot = tmp_path / "says_hi.py"
    bot.write_text("import sys\nsys.stdin.readline()\n"
                   "print('{\"type\":\"hello\",\"protocol\":1,\"name\":\"hi\",\"version\":\"1\"}', flush=True)\n"
                   "sys.stdin.readline()\nsys.stderr.write('hi\\n')\nsys.exit(1)\n")
    r = subprocess.run([sys.executable, "-m", "referee.cli", "match", "-b", "random", "-b", "random", "-b",
                        f"{sys.executable} {bot}", "-q"],
                       capture_output=True, text=True, timeout=600, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stdout.splitlines() if x.startswith("bots' stderr: ")][-1]
    folder = Path(line.removeprefix("bots' stderr: "))
    try:
        assert folder.is_dir() and folder.name.startswith("marias-match-") and folder.parent == tmp_path
        assert folder.stat().st_mode & 0o777 == 0o700
        assert (folder / "marias.seat2.stderr.log").read_text().startswith("hi\n")
        assert (folder / "marias.seat2.stderr.log").stat().st_mode & 0o777 == 0o600
    finally:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)
