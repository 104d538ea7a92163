"""R12.3 in the log: after its last allowed fault a bot forfeits the rest of the partie; the
``forfeit`` record follows that deal's record, and ``validate`` holds it to the rule."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from referee.logs.log import LogWriter, read_log, sealed_lines
from referee.rules.partie import Partie, partie_seed, places
from referee.logs.validate import validate_file

POLICY = {"max_faults": 3, "after_max_faults": "forfeit", "restart": "next deal"}


def header(seed="ff") -> dict:
    return {"seed": seed, "partie": 1, "fault_policy": POLICY,
            "bots": [{"seat": s, "command": "builtin:x", "name": f"b{s}", "version": "1", "exe_sha256": None} for s in range(3)],
            "limits": {"in_process": True}}


def write_partie(path: Path, faults: dict[int, int], *, forfeit: bool = True, seed="ff") -> Path:
    """One partie where ``faults[d]`` (a seat) faults at the start of deal d; after its third
    fault before deal 12 the seat forfeits: R12.3 says each remaining deal costs it 20
    (10 to each other player, R12.2 before a contract)."""
    rng = random.Random(1)
    count = [0, 0, 0]
    with LogWriter(path, header(seed), fsync=False) as w:
        partie = Partie(seed=partie_seed(seed, 1))
        w.partie_start(1)
        totals = [0, 0, 0]
        for deal in partie.iter_deals():
            d = len(partie.deals)
            if d in faults:
                deal.fault(faults[d], "exit", "the bot process ended", "", 0.0)
            while not deal.done:
                deal.apply(rng.choice(deal.legal_actions()))
            w.deal(1, d, deal, partie.cuts[-1], deal.deck)
            totals = [t + p for t, p in zip(totals, deal.result.payments)]
            if d in faults:
                s = faults[d]
                count[s] += 1
                if count[s] == 3 and d < 12 and forfeit:
                    n = 12 - (d + 1) + 1
                    pay = [10 * n if x != s else -20 * n for x in range(3)]  # R12.3 by hand
                    w.forfeit(1, s, d + 1, pay)
                    totals = [t + p for t, p in zip(totals, pay)]
                    break
        w.partie_end(1, totals, places(totals))
    return path


def rules(path: Path) -> list[str]:
    return [p.rule for p in validate_file(path).problems]


def test_a_partie_forfeited_from_deal_6_is_valid_and_complete_with_5_deals(tmp_path):
    path = write_partie(tmp_path / "f.jsonl", {2: 1, 4: 1, 5: 1})
    recs, _ = read_log(path)
    assert [r["type"] for r in recs] == ["header", "partie_start"] + ["deal"] * 5 + ["forfeit", "partie_end", "footer"]
    f = recs[7]
    assert {k: f[k] for k in ("partie", "seat", "from_deal", "deals", "payments", "rule")} == \
        {"partie": 1, "seat": 1, "from_deal": 6, "deals": 7, "payments": [70, -140, 70], "rule": "R12.3"}
    report = validate_file(path)
    assert report.ok and report.complete and report.deals == 5, report.lines()
    from tests.test_log import VALIDATOR  # the log schema
    assert not list(VALIDATOR.iter_errors(f)) and not list(VALIDATOR.iter_errors(recs[-1]))


def test_a_third_fault_in_deal_12_needs_no_forfeit_record(tmp_path):
    path = write_partie(tmp_path / "f.jsonl", {3: 2, 7: 2, 12: 2})
    assert validate_file(path).ok


def _tampered(tmp_path, change) -> Path:
    path = write_partie(tmp_path / "orig.jsonl", {2: 1, 4: 1, 5: 1})
    recs, _ = read_log(path)
    recs = change(copy.deepcopy(recs))
    out = tmp_path / "t.jsonl"
    out.write_text("".join(line + "\n" for line in sealed_lines(recs)))
    return out


def _refresh(recs):
    pay = [0, 0, 0]
    for r in recs:
        if r["type"] in ("deal", "forfeit"):
            p = r["result"]["payments"] if r["type"] == "deal" else r["payments"]
            pay = [a + b for a, b in zip(pay, p)]
        elif r["type"] in ("partie_end", "footer"):
            r["totals"], r["places"] = list(pay), places(pay)
    return recs


@pytest.mark.parametrize("what,change,expected", [
    ("the forfeit record dropped", lambda r: _refresh([x for x in r if x["type"] != "forfeit"]), "R12.3"),
    ("the payments softened", lambda r: _refresh([dict(x, payments=[35, -70, 35]) if x["type"] == "forfeit" else x for x in r]), "R12.3"),
    ("the wrong first deal", lambda r: [dict(x, from_deal=7) if x["type"] == "forfeit" else x for x in r], "R12.3"),
    ("the wrong number of deals", lambda r: [dict(x, deals=6) if x["type"] == "forfeit" else x for x in r], "R12.3"),
    ("another seat named", lambda r: [dict(x, seat=0) if x["type"] == "forfeit" else x for x in r], "R12.3"),
    ("totals without the forfeit", lambda r: [dict(x, totals=[a - b for a, b in zip(x["totals"], [70, -140, 70])])
                                              if x["type"] == "partie_end" else x for x in r], "R9.7"),
])
def test_a_forfeit_record_is_held_to_r12_3(tmp_path, what, change, expected):
    assert rules(_tampered(tmp_path, change))[0] == expected, what


def test_a_deal_played_after_the_forfeit_is_caught(tmp_path):
    def move(recs):
        i = next(k for k, r in enumerate(recs) if r["type"] == "forfeit")
        recs.insert(i - 1, recs.pop(i))  # the forfeit before the deal of the third fault
        return recs
    assert "R12.3" in rules(_tampered(tmp_path, move))


def test_a_forfeit_before_the_last_allowed_fault_or_under_another_policy_is_caught(tmp_path):
    early = write_partie(tmp_path / "e.jsonl", {2: 1, 4: 1, 5: 1})
    recs, _ = read_log(early)
    recs[0]["fault_policy"] = {"max_faults": 4, "after_max_faults": "forfeit"}  # the third fault is not the last
    out = tmp_path / "t.jsonl"
    out.write_text("".join(line + "\n" for line in sealed_lines(recs)))
    assert rules(out)[0] == "R12.3"
    recs[0]["fault_policy"] = {"max_faults": 3, "replacement": "robot"}  # a policy without forfeits
    out.write_text("".join(line + "\n" for line in sealed_lines(recs)))
    assert "R12.3" in rules(out)


def test_a_partie_that_goes_on_after_the_last_allowed_fault_is_caught(tmp_path):
    path = write_partie(tmp_path / "f.jsonl", {2: 1, 4: 1, 5: 1}, forfeit=False)
    msgs = [p for p in validate_file(path).problems if p.rule == "R12.3"]
    assert msgs and "deal 6 is played although seat 1 reached 3 faults" in msgs[0].message
    assert json.loads(path.read_text().splitlines()[-1])["type"] == "footer"
