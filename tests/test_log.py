"""Game logs (protocol/LOGS.md): what is written, that it replays, that it survives a crash.

The helpers at the top also feed tests/test_validate.py and tests/test_show.py:
``ChooserBot`` steers self-play into trump games with fleks, games against,
hlášky and laid cards (random bots mostly end up in durch), and
:func:`fault_log` writes partie whose deals end by faults (R12) at random moments.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import bots as builtin
from protocol.sdk import Bot
from referee.cli import app
from referee.rules.deal import Deal
from referee.logs.log import (
    FORMAT, FORMAT_VERSION, LogWriter, decision_kinds, deal_record, read_log, read_lines, selfplay_log,
)
from referee.rules.partie import Partie, places
from referee.rules.selfplay import play_partie
from referee.logs.validate import validate_file

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "protocol" / "schema" / "log.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


class ChooserBot(Bot):
    """A seeded test bot: asks Barva? when it can, mostly agrees, raises often, lays when offered."""

    name = "chooser"
    version = "test"

    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed)

    def on_deal_start(self, message: dict) -> None:
        self.rng = random.Random(f"{self.seed}:{message['partie']}:{message['deal']}:{message['seat']}")

    def choose(self, view: dict, legal: list[str]) -> str:
        r = self.rng
        if "lay" in legal:
            return "lay"
        barva = [a for a in legal if a.startswith("barva:")]
        if barva and r.random() < 0.85:
            return r.choice(barva)
        if "spatna" in legal:
            return "spatna" if r.random() < 0.1 else "dobra"
        contracts = [a for a in legal if a.startswith("contract:")]
        if contracts:
            return r.choice(contracts)
        if view["phase"] == "flek":
            raises = [a for a in legal if a != "dobra"]
            if raises and r.random() < 0.6:
                return r.choice(raises)
            return "dobra" if "dobra" in legal else legal[0]
        return r.choice(legal)


def chooser_bots(seed) -> list[Bot]:
    return [ChooserBot(f"{seed}:{i}") for i in range(3)]


def random_bots(seed) -> list[Bot]:
    return [builtin.make("random", seed=f"{seed}:{i}") for i in range(3)]


def uniform_header(seed) -> dict:
    return {"seed": seed, "bots": [{"seat": s, "command": "builtin:test", "name": "test", "version": "1", "exe_sha256": None}
                                   for s in range(3)]}


def fault_log(path, seed, parties: int = 1) -> Path:
    """Partie of mostly trump games where about half the deals end by a fault (R12.1) at a random moment."""
    rng = random.Random(f"fault:{seed}")
    with LogWriter(path, uniform_header(seed), fsync=False) as w:
        for p in range(1, parties + 1):
            partie = Partie(seed=f"{seed}:{p}")
            w.partie_start(p)
            for deal in partie.iter_deals():
                fault_at = rng.choice((rng.randrange(6), rng.randrange(40))) if rng.random() < 0.5 else None
                k = 0
                while not deal.done:
                    if k == fault_at:
                        seat = deal.to_move if rng.random() < 0.7 else rng.randrange(3)
                        deal.fault(seat, rng.choice(["timeout", "illegal", "exit"]), "test fault", '{"type":"action"}', 0.25)
                        break
                    legal = deal.legal_actions()
                    pref = [a for a in legal if a.kind in ("barva", "dobra", "contract")]
                    deal.apply(rng.choice(pref) if pref and rng.random() < 0.8 else rng.choice(legal))
                    k += 1
                w.deal(p, len(partie.deals), deal, partie.cuts[-1], deal.deck)
            w.partie_end(p, partie.totals(), partie.places())
    return Path(path)


def records_of(path) -> list[dict]:
    records, problems = read_log(path)
    assert problems == []
    return records


# ------------------------------------------------------------------ the lines

def test_every_line_matches_the_schema_and_the_order_is_header_partie_deals_footer(tmp_path):
    selfplay_log(tmp_path / "c.jsonl", chooser_bots(3), seed=3)
    selfplay_log(tmp_path / "r.jsonl", random_bots(4), seed=4)
    logs = [tmp_path / "c.jsonl", tmp_path / "r.jsonl", fault_log(tmp_path / "f.jsonl", 5, parties=2)]
    for log in logs:
        recs = records_of(log)
        for r in recs:
            errors = list(VALIDATOR.iter_errors(r))
            assert not errors, (r["type"], errors[0].message)
        types = [r["type"] for r in recs]
        parties = types.count("partie_start")
        assert types == ["header"] + (["partie_start"] + ["deal"] * 12 + ["partie_end"]) * parties + ["footer"]
        h = recs[0]
        assert (h["format"], h["format_version"]) == (FORMAT, FORMAT_VERSION)
        assert h["rules_version"] and h["referee_version"] and h["created"]
        assert recs[-1]["complete"] is True


def test_header_names_each_seat_bot_by_command_name_and_version(tmp_path):
    selfplay_log(tmp_path / "x.jsonl", random_bots(1), seed=1)
    h = records_of(tmp_path / "x.jsonl")[0]
    assert [b["seat"] for b in h["bots"]] == [0, 1, 2]
    assert all(b["command"] == "builtin:random" and b["name"] == "random" and b["version"] == "1"
               and b["exe_sha256"] is None for b in h["bots"])
    # the seed is committed to in the header and revealed in the footer (no card before its deal is over)
    assert "seed" not in h and h["seed_sha256"] == hashlib.sha256(b"1").hexdigest()
    assert records_of(tmp_path / "x.jsonl")[-1]["seed"] == 1 and h["limits"] == {"in_process": True}


def test_logged_selfplay_plays_exactly_the_partie_of_play_partie(tmp_path):
    logged = selfplay_log(tmp_path / "x.jsonl", random_bots(8), seed=8)
    plain = play_partie(random_bots(8), seed="8:1")  # partie 1 of a match with seed 8
    assert logged.totals() == plain.totals()
    assert [d.history for d in logged.deals] == [d.history for d in plain.deals]
    recs = records_of(tmp_path / "x.jsonl")
    deals = [r for r in recs if r["type"] == "deal"]
    for rec, d, cut in zip(deals, plain.deals, plain.cuts):
        assert rec["cut"] == cut
        assert rec["deck"] == [str(c) for c in d.deck]
        assert [x["action"] for x in rec["decisions"]] == [str(a) for _s, a in d.history]
        assert rec["result"]["payments"] == list(d.result.payments)
        assert all(isinstance(x["ms"], float) and x["ms"] >= 0 for x in rec["decisions"])
    assert deals[0]["deck"] == [str(c) for c in plain.initial_deck]
    assert recs[1] == {"type": "partie_start", "partie": 1, "shuffle": "seed", "chain": recs[1]["chain"]}
    end = recs[-2]
    assert end == {"type": "partie_end", "partie": 1, "totals": plain.totals(), "places": places(plain.totals()),
                   "chain": end["chain"]}


def test_deal_line_records_the_hands_dealt_7_5_5_5_5_5_from_the_forhont(tmp_path):
    selfplay_log(tmp_path / "x.jsonl", random_bots(2), seed=2)
    for rec in (r for r in records_of(tmp_path / "x.jsonl") if r["type"] == "deal"):
        f = rec["forhont"]
        deck = rec["deck"]
        assert rec["hands"][f] == deck[0:7] + deck[17:22]
        assert rec["hands"][(f + 1) % 3] == deck[7:12] + deck[22:27]
        assert rec["hands"][(f + 2) % 3] == deck[12:17] + deck[27:32]
        assert rec["dealer"] == (f + 2) % 3


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.booleans())
def test_recorded_decision_kinds_are_the_decisions_the_engine_asked(seed, chooser):
    """decision_kinds() reads the kind from the actions alone; it must agree with the engine."""
    partie = play_partie(chooser_bots(seed) if chooser else random_bots(seed), seed=seed)
    for d in partie.deals:
        replay = Deal(d.deck, d.forhont)
        asked = []
        for _seat, a in d.history:
            asked.append(replay.decision)
            replay.apply(a)
        assert decision_kinds(d.history) == asked


def test_only_finished_deals_are_logged_and_times_must_match_the_decisions():
    d = Partie(seed=1).next_deal()
    with pytest.raises(ValueError, match="finished"):
        deal_record(1, 1, d, None, d.deck)
    d.apply(d.legal_actions()[0])
    d.fault(0, "timeout", "too slow", "", 2.5)
    rec = deal_record(1, 1, d, None, d.deck, [12.0])
    assert rec["faults"] == [{"seat": 0, "kind": "timeout", "message": "too slow", "evidence": "", "elapsed": 2.5}]
    assert rec["result"]["kind"] == "fault" and rec["decisions"][0]["ms"] == 12.0
    with pytest.raises(ValueError, match="times_ms"):
        deal_record(1, 1, d, None, d.deck, [1.0, 2.0])


# ------------------------------------------------------------------ durability

def test_finished_deals_are_on_disk_before_the_match_ends(tmp_path):
    """Each deal line is complete on disk as soon as deal() returns: a killed match keeps them."""
    path = tmp_path / "live.jsonl"
    w = LogWriter(path, uniform_header(7))
    partie = Partie(seed="7:1")
    w.partie_start(1)
    rng = random.Random(7)
    for i in range(3):
        deal = partie.next_deal()
        while not deal.done:
            legal = deal.legal_actions()
            deal.apply(rng.choice(legal))
        w.deal(1, i + 1, deal, partie.cuts[-1], deal.deck)
        text = path.read_bytes()  # what another process would see now
        assert text.endswith(b"\n") and text.count(b"\n") == 2 + i + 1
    # the process dies here: no partie_end, no footer
    report = validate_file(path)
    assert not report.complete and report.deals == 3 and report.deals_replayed == 3
    assert [p.rule for p in report.problems] == ["incomplete"]
    assert "3 complete deals, stopped in partie 1" in report.problems[0].message
    w.abort()


def test_an_exception_inside_the_writer_leaves_the_log_incomplete(tmp_path):
    path = tmp_path / "crash.jsonl"
    with pytest.raises(RuntimeError):
        with LogWriter(path, uniform_header(1)) as w:
            w.partie_start(1)
            raise RuntimeError("referee crashed")
    types = [r["type"] for r in records_of(path)]
    assert types == ["header", "partie_start"]
    assert validate_file(path).problems[-1].rule == "incomplete"


def test_read_log_reports_a_half_written_last_line_and_garbage_lines(tmp_path):
    selfplay_log(tmp_path / "x.jsonl", random_bots(1), seed=1)
    lines = (tmp_path / "x.jsonl").read_text().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "not json at all\n" + "".join(lines[1:5]) + lines[5][:40])
    records, problems = read_log(bad)
    assert [r["type"] for r in records] == ["header", "partie_start", "deal", "deal", "deal"]
    assert problems[0].startswith("line 2: not JSON")
    assert problems[1].startswith("line 7: truncated last line")
    _recs, numbered = read_lines(bad)
    assert [n for n, _m in numbered] == [2, 7]


def test_seating_maps_partie_totals_to_the_bots_in_the_footer(tmp_path):
    path = tmp_path / "seating.jsonl"
    rng = random.Random(3)
    expected = [0, 0, 0]
    with LogWriter(path, uniform_header(3), fsync=False) as w:
        for p, seating in enumerate(([0, 1, 2], [1, 2, 0], [2, 0, 1]), 1):
            partie = Partie(seed=f"3:{p}")
            w.partie_start(p, seating=seating)
            for deal in partie.iter_deals():
                while not deal.done:
                    deal.apply(rng.choice(deal.legal_actions()))
                w.deal(p, len(partie.deals), deal, partie.cuts[-1], deal.deck)
            w.partie_end(p, partie.totals(), partie.places())
            for s in range(3):
                expected[seating[s]] += partie.totals()[s]
    footer = records_of(path)[-1]
    assert footer["totals"] == expected and footer["partie"] == 3
    assert footer["places"] == places(expected)
    assert validate_file(path).ok


# ------------------------------------------------------------------ the command

def test_marias_selfplay_log_writes_a_valid_log(tmp_path):
    r = CliRunner().invoke(app, ["selfplay", "-b", "random", "-b", "random", "-b", "random", "--seed", "6",
                                 "--log", str(tmp_path / "logs")])
    assert r.exit_code == 0, r.output
    path = tmp_path / "logs" / "selfplay-s6.jsonl"
    assert f"log: {path}" in r.output
    report = validate_file(path)
    assert report.ok and report.complete and report.deals == 12
    # the printed table is the same partie
    recs = records_of(path)
    assert recs[-1]["totals"] == play_partie(random_bots(6), seed="6:1").totals()


def test_fault_logs_validate(tmp_path):
    for seed in range(4):
        report = validate_file(fault_log(tmp_path / f"f{seed}.jsonl", seed, parties=2))
        assert report.ok, report.lines()[:5]
        faults = [r for r in records_of(tmp_path / f"f{seed}.jsonl") if r["type"] == "deal" and r["faults"]]
        assert faults and all(r["result"]["kind"] == "fault" for r in faults)


def test_rules_version_names_the_rulebook_in_the_repository():
    """Logs cite RULES_VERSION: it must be the hash of the RULES.md shipped with the code,
    so a change of the rules cannot go unnoticed in the logs."""
    import hashlib
    from pathlib import Path

    from referee.logs.log import RULES_VERSION

    digest = hashlib.sha256((Path(__file__).resolve().parents[1] / "RULES.md").read_bytes()).hexdigest()
    assert RULES_VERSION.endswith("sha256:" + digest[:12])
