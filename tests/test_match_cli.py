"""`marias match` as a user runs it: options, output, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.rules.cards import CARDS, format_cards
from referee.rules.partie import shuffled_deck


@pytest.fixture(autouse=True)
def _private_tmp(tmp_path, monkeypatch):
    """Without --log a match keeps its bots' stderr in a folder under TMPDIR: the test's own."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))


def marias(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_match_json_reports_zero_sum_totals_per_partie():
    r = marias("match", "--bot", "random", "--bot", "random", "--bot", "random", "--partie", "2", "--seed", "5", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert len(out["partie_totals"]) == 2
    for t in out["partie_totals"]:
        assert sum(t) == 0
    assert out["totals"] == [sum(t[s] for t in out["partie_totals"]) for s in range(3)]
    assert all(not seat["faults"] for seat in out["seats"])
    assert out["names"] == ["random", "random", "random"]


def test_same_seed_same_result_and_deck_file_fixes_the_cards(tmp_path):
    a = marias("match", "-b", "random", "-b", "random", "-b", "random", "--seed", "9", "--json")
    b = marias("match", "-b", "random", "-b", "random", "-b", "random", "--seed", "9", "--json")
    assert json.loads(a.stdout)["partie_totals"] == json.loads(b.stdout)["partie_totals"]
    # a deck file holding the seed's own shuffle gives the same cards, so the same partie
    deck_file = tmp_path / "decks.txt"
    deck_file.write_text("# one deck per line\n" + format_cards(shuffled_deck("9:1")) + "\n")
    c = marias("match", "-b", "random", "-b", "random", "-b", "random", "--seed", "9", "--deck", str(deck_file), "--json")
    assert c.returncode == 0, c.stderr
    assert json.loads(c.stdout)["partie_totals"] == json.loads(a.stdout)["partie_totals"]


def test_transcript_keeps_every_line_per_seat(tmp_path):
    r = marias("match", "-b", "random", "-b", "random", "-b", "random", "--log", str(tmp_path), "--transcript", "-q")
    assert r.returncode == 0, r.stderr
    for seat in range(3):
        (path,) = tmp_path.glob(f"*.seat{seat}.transcript.jsonl")
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        sent = [json.loads(x["line"]) for x in lines if x["dir"] == "send"]
        received = [json.loads(x["line"]) for x in lines if x["dir"] == "recv"]
        assert sent[0]["type"] == "hello" and received[0]["type"] == "hello"
        requests = [m for m in sent if m["type"] == "request"]
        actions = [m for m in received if m["type"] == "action"]
        assert [m["id"] for m in requests] == [m["id"] for m in actions]
        assert sum(1 for m in sent if m["type"] == "deal_end") == 12
        assert all(m["view"]["seat"] == seat for m in requests)


def test_bad_input_is_refused_with_a_clear_message(tmp_path):
    r = marias("match", "-b", "random", "-b", "random")
    assert r.returncode != 0 and "three bots" in r.stderr
    bad = tmp_path / "deck.txt"
    bad.write_text("Ah Kh Zz\n")
    r = marias("match", "-b", "random", "-b", "random", "-b", "random", "--deck", str(bad))
    assert r.returncode == 2 and "Zz" in r.stderr and "deck.txt:1" in r.stderr
    good = tmp_path / "one.txt"
    good.write_text(format_cards(CARDS) + "\n")
    r = marias("match", "-b", "random", "-b", "random", "-b", "random", "--deck", str(good), "--partie", "2")
    assert r.returncode == 2 and "1 deck" in r.stderr
