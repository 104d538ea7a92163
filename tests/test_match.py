"""The referee loop against misbehaving bots (R12): every fault is survived,
settled as R12.2 says, recorded with its kind, and no process is left behind."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from referee.match import BotSpec, FaultPolicy, Limits, MatchConfig, run_match

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


def test_R12_3_repeated_faults_replace_the_bot_by_the_robot(tmp_path):
    # exit-at-start faults at every deal start: after 3 faults the robot takes over (R12.3)
    result = play(faulty("exit-at-start"), tmp_path, max_faults=3)
    fault_deals = check_r12(result)
    assert len(fault_deals) == 3
    assert result.stats[0].replaced_in == [1]


def test_stderr_flood_is_capped_and_the_bot_plays_on(tmp_path):
    result = play(faulty("stderr-flood", 3), tmp_path)
    assert check_r12(result) == []
    files = list(tmp_path.glob("*.seat0.stderr.log"))
    assert files and files[0].stat().st_size < 200_000


def test_a_clean_match_has_no_faults(tmp_path):
    result = play(faulty("ok"), tmp_path)
    assert check_r12(result) == []
    assert result.stats[0].decisions > 0
