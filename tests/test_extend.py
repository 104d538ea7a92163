"""A tournament continued with more partie (issue 25 point 1): a larger partie count is not another
game, so the same folder goes on, the units played keep their ids, seeds and logs byte for byte, and
only the new partie are played; what changes the games is still refused, key by key."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from referee.tournaments import tournament as T

REPO = Path(__file__).resolve().parents[1]


def marias(*args):
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=300)


def hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((folder / "logs").glob("*.jsonl"))}


def test_a_tournament_continues_with_more_partie(tmp_path):
    out = tmp_path / "t"
    field = ["-b", "a=random", "-b", "b=random:3", "-b", "c=random", "--arrangements", "rotations", "--seed", "grow",
             "--out", str(out), "--concurrency", "2", "--table-format", "json"]
    first = marias("tournament", *field, "--partie", "1")
    assert first.returncode == 0, first.stderr
    before = hashes(out)
    assert len(before) == 3
    changed = marias("tournament", *field, "--partie", "2", "--move-time", "100")
    assert changed.returncode == 2 and "holds a tournament with another configuration" in changed.stderr
    assert "time.move_ms: 2000 -> 100" in changed.stderr and "partie may change on a resume" in changed.stderr
    fewer = marias("tournament", *field[:-2], "--partie", "1")  # the same is a plain resume: nothing to play
    assert fewer.returncode == 0, fewer.stderr

    more = marias("tournament", *field, "--partie", "2")
    assert more.returncode == 0, more.stderr
    after = hashes(out)
    assert len(after) == 6 and {k: after[k] for k in before} == before
    body = json.loads(more.stdout)
    assert sum(r["partie"] for r in body["standings"]) == 3 * 6  # three bots in each of the six partie
    state = json.loads((out / "tournament.json").read_text())
    assert state["config"]["partie"] == 2 and state["units"] == 6 and state["extensions"][0]["changed"] == ["partie: 1 -> 2"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["units"]) == 6

    shrink = marias("tournament", *field, "--partie", "1")  # fewer partie than were planned: refused
    assert shrink.returncode == 2 and "partie: 2 -> 1" in shrink.stderr


def test_unit_ids_and_seeds_do_not_move_when_the_partie_count_grows(tmp_path):
    def units(partie, width=None):
        cfg = T.config_from_options(["a=random", "b=random", "c=random"], partie=partie, seed="s",
                                    output=str(tmp_path / "x"))
        cfg.id_width = width
        return {u.id: (u.match_seed, u.deck_slot, tuple(T.unit_seed(cfg, u, n) for n in u.seats))
                for u in T.plan_units(cfg)}

    small, big = units(99), units(250, width=2)  # past 99 partie: the stored width holds
    assert all(big[k] == v for k, v in small.items())
    assert "t01-p250-s012" in big


def test_a_deal_book_by_table_makes_the_partie_count_part_of_the_game():
    old = {"format": "round-robin", "partie": 1, "decks": {"scope": "table", "book": {"decks": 8, "sha256": "x"}}}
    new = {**old, "partie": 2}
    stop, game = T.stopping_rule_changes(old, new)
    assert stop == [] and game == ["partie: 1 -> 2"]
    new["decks"] = {"scope": "tournament", "book": {"decks": 8, "sha256": "x"}}
    old["decks"] = new["decks"]
    assert T.stopping_rule_changes(old, new) == (["partie: 1 -> 2"], [])
