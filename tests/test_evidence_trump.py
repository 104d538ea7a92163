"""Issue 22, item 7: a deal ended by a fault at the contract decision (both defenders said
dobrá, the forhont has not named the contract) records ``contract`` and ``trump`` both null,
as LOGS.md says; ``marias validate`` holds a log to it, and reads the older form (the suit
recorded there) with a note instead of refusing it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.logs.log import sealed_lines
from referee.matches.match import BotSpec, FaultPolicy, Limits, MatchConfig, run_match
from referee.logs.validate import validate_file

FAULTY = str(Path(__file__).parent / "fault_bots" / "faulty.py")


@pytest.fixture(scope="module")
def contract_fault_log(tmp_path_factory):
    """One partie of three bots that say barva and dobrá and fault at their contract decision."""
    tmp = tmp_path_factory.mktemp("contract-fault")
    bots = [BotSpec(label=f"c{i}", argv=[sys.executable, FAULTY, "contract"]) for i in range(3)]
    config = MatchConfig(bots=bots, partie=1, seed="7", limits=Limits(startup_ms=10000, move_ms=5000),
                         policy=FaultPolicy(max_faults=3), log_path=tmp / "logs" / "m.jsonl", work_dir=tmp)
    run_match(config)
    (log,) = sorted((tmp / "logs").glob("*.jsonl"))
    return log


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _rewrite(path: Path, records: list[dict], out: Path) -> Path:
    out.write_text("\n".join(sealed_lines(records)) + "\n")
    return out


def test_a_fault_at_the_contract_decision_records_neither_contract_nor_trump(contract_fault_log):
    deal1 = next(r for r in _records(contract_fault_log) if r["type"] == "deal" and r["deal"] == 1)
    # the situation of the report: a barva approved by both defenders, then the forhont's fault
    assert [d["decision"] for d in deal1["decisions"]] == ["trump", "talon", "answer", "answer"]
    assert [d["action"] for d in deal1["decisions"][2:]] == ["dobra", "dobra"]
    assert deal1["faults"][0]["seat"] == 0 and deal1["faults"][0]["kind"] == "illegal"
    assert deal1["game"] == "barva" and deal1["actor"] == 0
    assert deal1["contract"] is None and deal1["trump"] is None
    assert deal1["trump_card"] is not None  # the card itself stays on record
    assert deal1["result"]["payments"] == [-20, 10, 10]  # R12.2: a fault before a contract
    report = validate_file(contract_fault_log)
    assert report.ok and report.complete and not report.notes, report.lines_and_notes()


def test_validate_refuses_a_trump_suit_without_a_contract_other_than_the_older_slip(contract_fault_log, tmp_path):
    recs = _records(contract_fault_log)
    deal1 = next(r for r in recs if r["type"] == "deal" and r["deal"] == 1)
    suit = deal1["trump_card"][-1]
    other = next(s for s in "hlba" if s != suit)
    deal1["trump"] = other
    report = validate_file(_rewrite(contract_fault_log, recs, tmp_path / "other.jsonl"))
    assert not report.ok
    assert any(p.rule == "R3.1" and "trump suit" in p.message and "deal 1" in p.message for p in report.problems)
    # the form older referees wrote (the trump card's suit) is read, with a note naming it
    deal1["trump"] = suit
    report = validate_file(_rewrite(contract_fault_log, recs, tmp_path / "older.jsonl"))
    assert report.ok, report.lines()
    assert len(report.notes) == 1 and "deal 1" in report.notes[0].message and "LOGS.md says null" in report.notes[0].message
