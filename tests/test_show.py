"""marias show: deal sheets from a log, in the game's words; --seat shows only what that seat saw."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from referee.rules.cards import SUIT_NAMES, Card
from referee.cli import app
from referee.logs.log import read_log, selfplay_log
from referee.logs.show import ShowError, flek_words, show

from tests.test_log import chooser_bots, fault_log, random_bots

CARD = re.compile(r"(?<![0-9A-Za-z])[789XUOKA][hlba](?![0-9A-Za-z])")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("show")
    out = {}
    for seed in range(4):
        selfplay_log(d / f"c{seed}.jsonl", chooser_bots(seed), seed=seed, fsync=False)
        out[f"c{seed}"] = d / f"c{seed}.jsonl"
    selfplay_log(d / "r.jsonl", random_bots(2), seed=2, fsync=False)
    out["r"] = d / "r.jsonl"
    out["f"] = fault_log(d / "f.jsonl", 3, parties=2)
    return out


def deal_records(path):
    return [r for r in read_log(path)[0] if r["type"] == "deal"]


def find(logs, pred):
    for name, path in logs.items():
        for rec in deal_records(path):
            if pred(rec):
                return path, rec
    raise AssertionError("no deal in the test logs has this property")


def test_flek_words_are_the_games_own():
    assert flek_words((), (), {"hra": 0}) == "dobrá"
    assert flek_words(("hra",), (), {"hra": 0}) == "flek na hru"
    assert flek_words(("hra",), (), {"hra": 1}) == "re na hru"
    assert flek_words(("hra", "sedma"), (), {"hra": 0, "sedma": 0}) == "flek na obojí"
    assert flek_words(("hra", "sedma"), (), {"hra": 2, "sedma": 0}) == "tutti na hru, flek na sedmu"
    assert flek_words(("betl",), (), {"betl": 3}) == "boty na betla"
    assert flek_words((), ("sedma",), {"hra": 0}) == "sedma proti"
    assert flek_words(("hra",), ("sto",), {"hra": 0}) == "flek na hru, sto proti"
    assert flek_words(("sedma-proti",), (), {"sedma-proti": 0}) == "flek na sedmu proti"


def test_a_trump_game_sheet_has_hands_bidding_tricks_hlasky_and_settlement(logs):
    path, rec = find(logs, lambda r: r["game"] == "barva" and r["hlasky"] and r["tricks"] and not r["laid"]
                     and any(v for v in r["levels"].values()))
    text = show(path, partie=rec["partie"], deal=rec["deal"])
    assert f"partie {rec['partie']} · deal {rec['deal']}" in text
    assert "hands as dealt" in text and all(name in text for name in SUIT_NAMES if any(
        Card.parse(c).suit == SUIT_NAMES.index(name) for h in rec["hands"] for c in h))
    assert "„Barva?“" in text and "„dobrá“" in text
    assert re.search(r"„(flek|re|tutti|boty) na (hru|sedmu|sto|obojí)", text)
    contract_words = {"hra": "hra", "sedma": "sedma", "sto": "sto", "sto-sedma": "sto a sedma"}[rec["contract"]]
    assert f"„{contract_words}“ — shows the trump card {rec['trump_card']}" in text
    for t, trick in enumerate(rec["tricks"], 1):
        assert re.search(rf"^\s+{t}\s+seat {trick['leader']} leads\s+{' · '.join(trick['cards'])}\s+→ seat {trick['winner']}",
                         text, re.M)
    assert text.count("hláška: seat") == len(rec["hlasky"])
    assert f"settlement ({rec['result']['kind']})" in text
    pay = rec["result"]["payments"]
    assert " · ".join(f"seat {s} {pay[s]:+d}" for s in range(3)) in text


def test_laid_cards_betl_durch_and_faults_are_shown(logs):
    path, rec = find(logs, lambda r: r["laid"] and r["game"] == "barva")
    text = show(path, partie=rec["partie"], deal=rec["deal"])
    assert f"seat {rec['laid']['seat']} lays his cards: {' '.join(rec['laid']['cards'])}" in text
    path, rec = find(logs, lambda r: r["game"] == "durch" and any(v for v in r["levels"].values()))
    text = show(path, partie=rec["partie"], deal=rec["deal"])
    assert "„durch“" in text and re.search(r"„(flek|re|tutti|boty) na durch“", text)
    path, rec = find(logs, lambda r: bool(r["faults"]))
    text = show(path, partie=rec["partie"], deal=rec["deal"])
    f = rec["faults"][0]
    assert f"fault: seat {f['seat']} {f['kind']}: {f['message']}" in text and "settlement (fault)" in text


def test_running_totals_follow_the_partie(logs):
    recs = deal_records(logs["r"])
    text = show(logs["r"])
    running = [0, 0, 0]
    for rec in recs:
        running = [running[s] + rec["result"]["payments"][s] for s in range(3)]
        assert "running " + " ".join(f"{x:+d}" for x in running) in text
    end = [r for r in read_log(logs["r"])[0] if r["type"] == "partie_end"][0]
    place = {1.0: "1", 2.0: "2", 3.0: "3", 1.5: "1.5", 2.5: "2.5"}
    assert "partie 1 totals: " + " · ".join(f"seat {s} {end['totals'][s]:+d} (place {place[end['places'][s]]})"
                                            for s in range(3)) in text


@pytest.mark.parametrize("name", ["c0", "c1", "c2", "c3", "r", "f"])
def test_seat_view_names_no_card_the_seat_could_not_know(logs, name):
    """Every card code on a --seat sheet is one that seat held, saw played or laid, knew in a talon,
    or was shown as the trump card (or chose it)."""
    for rec in deal_records(logs[name]):
        for seat in range(3):
            text = show(logs[name], partie=rec["partie"], deal=rec["deal"], seat=seat)
            sheet = text.split("━━", 1)[1]
            known = set(rec["hands"][seat])
            known |= {c for t in rec["tricks"] for c in t["cards"]}
            if rec["laid"]:
                known |= set(rec["laid"]["cards"])
            talon = -1
            for x in rec["decisions"]:
                if x["decision"] == "talon":
                    talon += 1
                    if x["seat"] == seat:
                        known |= set(rec["talons"][talon]["cards"])
                elif x["action"] in ("spatna", "durch") and x["seat"] == seat:  # takes the talon
                    known |= set(rec["talons"][talon]["cards"])
            shown = rec["contract"] is not None or seat == rec["forhont"]
            if shown and rec["trump_card"]:
                known.add(rec["trump_card"])
            # cards on the table when a fault ended the deal are public too
            plays = [x["action"][5:] for x in rec["decisions"] if x["action"].startswith("play:")]
            known |= set(plays)
            leaked = set(CARD.findall(sheet)) - known
            assert not leaked, (name, rec["deal"], seat, leaked)


def test_seat_view_redacts_other_players_discards_and_trump_choice(logs):
    # a Barva refused (špatná): the trump card is never shown, the taker learns the forhont's discards
    path, rec = find(logs, lambda r: r["decisions"][1]["action"].startswith("barva:") and r["game"] != "barva"
                     and r["decisions"][2]["action"] == "spatna" and not r["zlidu"])
    middle, dealer = (rec["forhont"] + 1) % 3, (rec["forhont"] + 2) % 3
    text = show(path, partie=rec["partie"], deal=rec["deal"], seat=dealer)
    assert f"seen by seat {dealer} (dealer)" in text
    assert f"seat {rec['forhont']}  chooses a trump card from his first seven" in text
    assert f"seat {rec['forhont']}  trump card" not in text
    forhont_discards = " ".join(rec["talons"][0]["cards"])
    assert f"seat {rec['forhont']}  discards two cards — „Barva?“" in text
    taker = show(path, partie=rec["partie"], deal=rec["deal"], seat=middle)
    assert f"seat {rec['forhont']} discarded {forhont_discards}, taken by seat {middle}" in taker
    # a Barva played: the trump card is shown with the contract, the talon stays the forhont's secret
    path, rec = find(logs, lambda r: r["game"] == "barva" and len(r["talons"]) == 1 and not r["zlidu"])
    other = (rec["forhont"] + 1) % 3
    text = show(path, partie=rec["partie"], deal=rec["deal"], seat=other)
    assert f"seen by seat {other} (middle)" in text
    assert f"seat {rec['forhont']}  trump card {rec['trump_card']}" in text  # shown with the contract
    assert f"seat {rec['forhont']}  discards two cards — „Barva?“" in text
    assert f"talon: seat {rec['forhont']} discarded two cards (the talon)" in text
    mine = show(path, partie=rec["partie"], deal=rec["deal"], seat=rec["forhont"])
    assert f"discards {' '.join(rec['talons'][0]['cards'])} — „Barva?“" in mine
    assert f"talon: seat {rec['forhont']} discarded {' '.join(rec['talons'][0]['cards'])} (the talon)" in mine
    assert "first seven" in mine and "after the choice" in mine


def test_colour_only_when_asked(logs):
    plain = show(logs["c0"], deal=3)
    coloured = show(logs["c0"], deal=3, color=True)
    assert not ANSI.search(plain)
    assert "\x1b[31m" in coloured  # červené in red
    assert ANSI.sub("", coloured) == plain


def test_errors_are_clear(tmp_path, logs):
    (tmp_path / "x.jsonl").write_text("nonsense\n")
    with pytest.raises(ShowError, match="not a marias log"):
        show(tmp_path / "x.jsonl")
    with pytest.raises(ShowError, match="no deal"):
        show(logs["r"], deal=13)
    runner = CliRunner()
    r = runner.invoke(app, ["show", str(tmp_path / "x.jsonl")])
    assert r.exit_code == 1 and "not a marias log" in r.output
    r = runner.invoke(app, ["show", str(logs["r"]), "--deal", "2", "--seat", "1"])
    assert r.exit_code == 0 and "seen by seat 1" in r.output and not ANSI.search(r.output)
    r = runner.invoke(app, ["show", str(logs["r"]), "--seat", "3"])
    assert r.exit_code != 0


def test_an_incomplete_log_shows_its_finished_deals(tmp_path, logs):
    lines = logs["c1"].read_text().splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_text("".join(lines[:6]) + lines[6][:100])
    text = show(tmp_path / "cut.jsonl")
    assert "deal 4" in text and "deal 5" not in text
    assert "the log has no footer" in text
    assert json.loads(lines[0])["type"] == "header"


def test_every_card_played_is_shown_also_in_the_trick_the_lay_interrupts(logs, tmp_path):
    """Issue 25 point 6: a deal ending ``play, play, lay`` shows the trick in progress (R8)."""
    from tests.test_log import chooser_bots as bots_for

    found = 0
    paths = list(logs.values())
    for seed in range(4, 40):
        if found >= 2:
            break
        p = tmp_path / f"x{seed}.jsonl"
        selfplay_log(p, bots_for(seed), seed=seed, fsync=False)
        paths.append(p)
        for rec in deal_records(p):
            acts = [x["action"] for x in rec["decisions"]]
            if acts and acts[-1] == "lay" and sum(a.startswith("play:") for a in acts) % 3:
                found += 1
    assert found, "no deal ending in a trick interrupted by a lay"
    for path in paths:
        for rec in deal_records(path):
            acts = [x["action"] for x in rec["decisions"]]
            if not (acts and acts[-1] == "lay" and sum(a.startswith("play:") for a in acts) % 3):
                continue
            text = show(path, partie=rec["partie"], deal=rec["deal"])
            play = text.split("\nplay\n", 1)[1]
            for a in acts:
                if a.startswith("play:"):
                    assert a[5:] in play, (a, play)
            assert "the trick is not finished" in play


def test_bots_are_shown_by_their_distinct_names(tmp_path):
    """Issue 25 point 6: two tournament bots random-1, random-2 are told apart on the sheet."""
    r = CliRunner().invoke(app, ["match", "-q", "-b", "random-1=random", "-b", "random-2=random", "-b", "robot",
                                 "--seed", "3", "--log", str(tmp_path)])
    assert r.exit_code == 0, r.output
    (log,) = tmp_path.glob("match-*.jsonl")
    text = show(log, deal=1)
    assert "seat 0: random-1 (says random 1), builtin:random" in text
    assert "seat 1: random-2 (says random 1), builtin:random" in text
    assert "seat 2: robot 1, builtin:robot" in text
