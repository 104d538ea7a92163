"""Issue 22 (items 1-3): a hostile bot author against the organiser's secrets, real bots under the
real referee (sandbox on).

- seeds: a default duel deals from its drawn secret seed (two duels deal different cards, and a
  seat's first seven cards find no seed among 0..10000 by the code's own derivation); a seed given
  in the configuration is said to be public (warnings, the log header, the table); a seed file
  keeps a chosen seed secret and hidden;
- keys: a bot that searches its start folder, the folder above and the tournament file's folder
  for the signing key, the tournament file and the seed file finds none of them; the logs signed
  with the key verify; keygen writes the key 0600;
- working folders: a bot that writes every hand it is dealt to its persistent workdir and claims
  them in the next arrangements gets no opponent hand right.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from referee.rules.partie import seed_sha256, shuffled_deck
from referee.seats.sandbox import bwrap_status
from referee.matches.secrecy import PUBLIC, SECRET, decks_summary, read_seed_file, seed_bits, seed_warnings, SeedFileError

REPO = Path(__file__).resolve().parents[1]
THIEF = REPO / "tests" / "hostile_bots" / "secrets_thief.py"
needs_bwrap = pytest.mark.skipif(bwrap_status()[0] is None, reason="bubblewrap is not installed (or cannot run here)")


def marias(*args, cwd=REPO, timeout=600):
    return subprocess.run([sys.executable, "-m", "referee.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def first_deal(path: Path) -> dict:
    return next(r for r in records(path) if r["type"] == "deal")


# ------------------------------------------------------------------ seeds

def test_default_duels_deal_from_their_own_secret_seed_and_a_seat_cannot_find_it(tmp_path):
    decks, seeds = [], []
    for name in ("d1", "d2"):
        r = marias("duel", "robot", "random", "--max-groups", "1", "--out", tmp_path / name, "-q", "-j", "2")
        assert r.returncode == 0, r.stderr
        assert "decks           secret seed" in r.stdout
        state = json.loads((tmp_path / name / "tournament.json").read_text())
        log = tmp_path / name / "logs" / "g0001-saab.jsonl"
        header, footer = records(log)[0], records(log)[-1]
        assert header["decks"] == SECRET
        # every partie of the group is dealt from the drawn seed, and the header committed to it
        assert footer["seed"] == f"{state['config']['seed']}:g1" and not footer["seed"].startswith("None")
        assert header["seed_sha256"] == seed_sha256(footer["seed"])
        deal = first_deal(log)
        assert deal["deck"] == [str(c) for c in shuffled_deck(f"{footer['seed']}:1")]  # the code's own derivation
        decks.append(deal["deck"])
        seeds.append(state["config"]["seed"])
    assert decks[0] != decks[1] and seeds[0] != seeds[1]
    # the attack: seat 0's first seven cards of deal 1 against every small seed (and the old "None")
    for deck in decks:
        seven = deck[:7]
        hits = [v for v in [*map(str, range(10001)), "None"]
                if [str(c) for c in shuffled_deck(f"{v}:g1:1")[:7]] == seven]
        assert hits == []


def test_a_seed_in_the_configuration_is_public_and_said_to_be(tmp_path):
    (tmp_path / "t.yaml").write_text(textwrap.dedent("""\
        seed: 77
        arrangements: fixed
        bots:
          - {name: a, command: random}
          - {name: b, command: random}
          - {name: c, command: random}
        """))
    r = marias("tournament", tmp_path / "t.yaml", "--out", tmp_path / "out", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "public: anyone who knows it deals every hand" in r.stderr
    assert "is short (at most 7 bits" in r.stderr and "a bot can find it by trying values" in r.stderr
    log = next((tmp_path / "out" / "logs").glob("*.jsonl"))
    assert records(log)[0]["decks"] == PUBLIC
    assert r.stdout.rstrip().endswith("decks: public seed")
    table = marias("table", tmp_path / "out")
    assert table.returncode == 0 and "decks: public seed" in table.stdout


def test_a_seed_file_keeps_the_seed_secret_and_bad_ones_are_named(tmp_path):
    seed = "3f1c0e9a7b2d4c6e8f0a1b3c5d7e9f21"
    (tmp_path / "seed.txt").write_text(seed + "\n")
    (tmp_path / "t.yaml").write_text(textwrap.dedent("""\
        seed_file: seed.txt
        commit: true
        arrangements: fixed
        bots:
          - {name: a, command: random}
          - {name: b, command: random}
          - {name: c, command: random}
        """))
    r = marias("tournament", tmp_path / "t.yaml", "--out", tmp_path / "out", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"seed sha256: {seed_sha256(seed)}\n")  # published before play
    assert "warning" not in r.stderr
    log = next((tmp_path / "out" / "logs").glob("*.jsonl"))
    assert records(log)[0]["decks"] == SECRET and records(log)[-1]["seed"] == f"{seed}:t1:1"
    assert "decks: secret seed" in r.stdout
    # a missing seed file: exit 2, the file named
    (tmp_path / "seed.txt").unlink()
    r = marias("tournament", tmp_path / "t.yaml", "--out", tmp_path / "out2", cwd=tmp_path)
    assert r.returncode == 2 and "seed.txt" in r.stderr and "cannot read the seed file" in r.stderr
    r = marias("duel", "robot", "random", "--seed-file", tmp_path / "nope", "--out", tmp_path / "d")
    assert r.returncode == 2 and "nope" in r.stderr and "cannot read the seed file" in r.stderr
    r = marias("match", "-b", "random", "-b", "random", "-b", "random", "--seed-file", tmp_path / "nope")
    assert r.returncode == 2 and "nope" in r.stderr
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(SeedFileError, match="empty"):
        read_seed_file(tmp_path / "empty")


def test_seed_warnings_and_summaries():
    assert seed_warnings("8460376eebfeba7367d66d4191c01a00", SECRET) == []
    assert len(seed_warnings("8460376eebfeba7367d66d4191c01a00", PUBLIC)) == 1  # public, not short
    assert len(seed_warnings("2026", PUBLIC)) == 2 and len(seed_warnings("77", SECRET)) == 1  # short
    assert seed_bits("123456789012345678901234567890123456789") > 128 > seed_bits("12345678901234567890")
    assert decks_summary([]) is None


# ------------------------------------------------------------------ keys

def event_folder(tmp_path: Path, bot_args: list[str], extra: str = "", thief_keys: str = "") -> Path:
    ev = tmp_path / "ev"
    ev.mkdir()
    shutil.copy(THIEF, ev / "thief.py")
    argv = json.dumps([sys.executable, "thief.py", *bot_args])
    lines = ["sandbox: required", *extra.splitlines(), "bots:",
             f"  - {{name: thief, command: {argv}{thief_keys}}}",
             "  - {name: r1, command: random}", "  - {name: r2, command: random}"]
    (ev / "t.yaml").write_text("\n".join(lines) + "\n")
    return ev


def stderr_of(out: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted((out / "logs").glob("*.stderr.log")))


@needs_bwrap
def test_a_bot_finds_no_key_no_seed_file_and_no_tournament_file(tmp_path):
    ev = event_folder(tmp_path, ["loot", "{YAML_FOLDER}"], extra="seed_file: seed.txt\narrangements: rotations")
    (ev / "t.yaml").write_text((ev / "t.yaml").read_text().replace("{YAML_FOLDER}", str(ev)))
    (ev / "seed.txt").write_text("9c2f5e0b1d3a4c6e8f7a9b0c1d2e3f40\n")
    k = marias("keygen", ev / "organiser.key")
    assert k.returncode == 0, k.stderr
    assert "outside every folder a bot is shown" in k.stdout and "outside the output folder" in k.stdout
    assert stat.S_IMODE(os.stat(ev / "organiser.key").st_mode) == 0o600
    out = tmp_path / "out"
    r = marias("tournament", ev / "t.yaml", "--sign", ev / "organiser.key", "--out", out, "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = stderr_of(out)
    assert text.count("NOTE list") >= 3 and "thief.py" in text  # it ran, and looked where it starts
    assert "FOUND" not in text, text
    assert "'organiser.key'" not in text and "'seed.txt'" not in text and "'t.yaml'" not in text  # not even listed
    v = marias("validate", out, "--verify", ev / "organiser.key.pub")
    assert v.returncode == 0, v.stdout + v.stderr
    # the same bot without the sandbox (nothing hidden: the attack is real) reads them all
    bare = marias("tournament", ev / "t.yaml", "--sandbox", "none", "--out", tmp_path / "bare", "-q", cwd=tmp_path)
    assert bare.returncode == 0, bare.stderr
    loot = stderr_of(tmp_path / "bare")
    assert f"FOUND {ev / 'organiser.key'}" in loot and f"FOUND {ev / 'seed.txt'}" in loot and f"FOUND {ev / 't.yaml'}" in loot
    # the hello name in every log is the bot's own, not the key
    for log in (out / "logs").glob("*.jsonl"):
        names = [b["name"] for b in records(log)[0]["bots"]]
        assert "thief-loot" in names


@needs_bwrap
def test_a_match_hides_its_key_and_seed_file_from_a_bot_started_beside_them(tmp_path):
    ev = tmp_path / "ev"
    ev.mkdir()
    shutil.copy(THIEF, ev / "thief.py")
    assert marias("keygen", ev / "organiser.key").returncode == 0
    (ev / "seed.txt").write_text("0f1e2d3c4b5a69788796a5b4c3d2e1f0\n")
    r = marias("match", "-b", f"{sys.executable} thief.py loot", "-b", "random", "-b", "random", "--sandbox", "bwrap",
               "--sign", "organiser.key", "--seed-file", "seed.txt", "--log", tmp_path / "runs", "--json", cwd=ev)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["decks"] == SECRET
    text = "".join(p.read_text() for p in (tmp_path / "runs").glob("*.stderr.log"))
    assert "NOTE list" in text and "FOUND" not in text, text
    log = next((tmp_path / "runs").glob("*.jsonl"))
    assert records(log)[0]["decks"] == SECRET
    v = marias("validate", log, "--verify", ev / "organiser.key.pub")
    assert v.returncode == 0, v.stdout + v.stderr


def test_a_key_inside_the_output_folder_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    assert marias("keygen", out / "k.key").returncode == 0
    r = marias("duel", "robot", "random", "--sign", out / "k.key", "--out", out, "--max-groups", "1")
    assert r.returncode == 2 and "inside the output folder" in r.stderr


# ------------------------------------------------------------------ working folders

@pytest.mark.parametrize("scope,fmt", [("table", "round-robin"), ("tournament", "round-robin"), ("tournament", "gauntlet")])
def test_no_two_instances_on_one_deck_share_a_lane(scope, fmt):
    from referee.tournaments import tournament as T

    bots = [{"name": n, "command": "random", "workdir": f"w/{n}"} for n in "abcde"]
    data = {"bots": bots, "partie": 2, "format": fmt, "decks": {"scope": scope}, "seed": "x" * 32,
            **({"gauntlet": "a"} if fmt == "gauntlet" else {})}
    from referee.tournaments.tournament_config import config_from_data

    cfg = config_from_data(data, source="t", lines={}, base_dir=Path("/tmp"))
    seen: dict[tuple, set] = {}
    lanes_of: dict[str, set] = {}
    for u in T.plan_units(cfg):
        job = T.unit_job(cfg, u, Path("/tmp/logs"))
        for name, spec in zip(u.seats, job["specs"]):
            key = (u.deck_slot, name)
            assert spec.workdir not in seen.setdefault(key, set())  # never the same folder on the same deck
            seen[key].add(spec.workdir)
            lanes_of.setdefault(name, set()).add(spec.workdir)
    for name, lanes in lanes_of.items():  # and each lane is used on more than one deck: it persists
        uses = sum(1 for (slot, n), ws in seen.items() if n == name for w in ws)
        assert uses > len(lanes)
    assert all(os.path.dirname(w) == f"/tmp/w/{n}" for n, ws in lanes_of.items() for w in ws)


def test_a_workdir_holding_the_bots_start_folder_is_refused(tmp_path):
    from referee.tournaments.tournament_config import check_commands, config_from_data

    (tmp_path / "bot.py").write_text("")
    bots = [{"name": "x", "command": "python3 bot.py", "workdir": "."}, {"name": "y", "command": "random"},
            {"name": "z", "command": "random", "workdir": "state/z"}]
    cfg = config_from_data({"bots": bots}, source="t.yaml", lines={}, base_dir=tmp_path)
    problems = check_commands(cfg)
    assert len(problems) == 1 and "bots[0].workdir" in problems[0] and "a folder of its own" in problems[0]


def test_a_secret_inside_a_bots_workdir_is_refused(tmp_path):
    from referee.tournaments.tournament_config import check_commands, config_from_data

    (tmp_path / "state" / "x").mkdir(parents=True)
    (tmp_path / "state" / "x" / "seed.txt").write_text("ab" * 16)
    bots = [{"name": "x", "command": "random", "workdir": "state/x"}, {"name": "y", "command": "random"},
            {"name": "z", "command": "random"}]
    cfg = config_from_data({"bots": bots, "seed_file": "state/x/seed.txt"}, source="t.yaml", lines={}, base_dir=tmp_path)
    problems = check_commands(cfg)
    assert len(problems) == 1 and "the seed file" in problems[0] and "own working folder" in problems[0]
    cfg = config_from_data({"bots": bots}, source="t.yaml", lines={}, base_dir=tmp_path)
    cfg.private_paths = (str(tmp_path / "state" / "x" / "lane-1" / "k.key"),)
    assert "the signing key" in check_commands(cfg)[0]


def test_a_duel_group_gives_every_seat_of_a_bot_its_own_lane():
    from referee.tournaments.duel import SEAT_LANES, SEATINGS

    for letter in (0, 1):
        lanes = [SEAT_LANES[i][s] for i, t in enumerate(SEATINGS) for s in range(3) if t[s] == letter]
        assert sorted(lanes) == list(range(9))  # 9 seats of each bot in a group, 9 lanes


@needs_bwrap
def test_hands_written_to_a_workdir_are_never_read_on_the_same_deck(tmp_path):
    ev = event_folder(tmp_path, ["remember"], extra="partie: 2", thief_keys=", workdir: state/thief")
    out = tmp_path / "out"
    # cold: each unit's own stderr file holds its claims (warm, a chain's claims share the first unit's file);
    # a warm chain is one arrangement, so it stays in one lane either way
    r = marias("tournament", ev / "t.yaml", "--out", out, "-q", "-j", "2", "--cold", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    right = claims = 0
    for log in sorted((out / "logs").glob("*.jsonl")):
        recs = records(log)
        seat = [b["label"] for b in recs[0]["bots"]].index("thief")
        hands = {r["deal"]: r["hands"] for r in recs if r["type"] == "deal"}
        err = log.with_name(f"{log.stem}.seat{seat}.stderr.log").read_text()
        for m in re.finditer(r"^CLAIM \d+ (\d+): (.*)$", err, re.M):
            claims += 1
            deal = hands.get(int(m.group(1)))
            if deal and any(sorted(m.group(2).split()) == sorted(h) for s, h in enumerate(deal) if s != seat):
                right += 1
    # what a shared folder would have handed over: the hands it kept are whole opponent hands of
    # the other arrangements of the same deck
    opponents = set()
    for log in (out / "logs").glob("*.jsonl"):
        recs = records(log)
        seat = [b["label"] for b in recs[0]["bots"]].index("thief")
        deal1 = next(r for r in recs if r["type"] == "deal")["hands"]
        opponents |= {" ".join(sorted(h)) for s, h in enumerate(deal1) if s != seat}
    kept = [json.loads(p.read_text()) for p in (ev / "state" / "thief").glob("lane-*/p1-d1-*.json")]
    assert len(kept) == 12 and all(" ".join(sorted(k["hand"])) in opponents for k in kept)
    lanes = sorted(p.name for p in (ev / "state" / "thief").iterdir())
    assert lanes == [f"lane-{i}" for i in range(1, 7)]  # one per arrangement of the table
    assert claims > 0  # persistence works: in partie 2 each lane holds what partie 1 dealt there
    assert right == 0
