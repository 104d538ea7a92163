"""Secret seeds (protocol/LOGS.md, Seeds): every deck and cut re-derived from a logged seed by
a small implementation written here from the documentation alone; the default seed is a
fresh 128-bit secret that no seat can find from its own cards; a built-in bot's seed says
nothing about the match seed; the log is created privately, exclusively, inside its folder."""

from __future__ import annotations

import hashlib
import hmac
import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.logs.log import LogWriter, reserve_log_path, safe_name
from referee.matches.match import BotSpec, MatchConfig, run_match
from referee.rules.partie import Partie, derive_seed, seeded_cut, shuffled_deck

CODES = [r + s for s in "hlba" for r in "789XUOKA"]  # LOGS.md: the starting order 7h 8h ... Ah 7l ... Aa


# ------------------------------------------------------------------ an independent re-derivation

def stream(key: bytes, label: str):
    """HMAC-SHA256(key, label || 0x00 || counter as 4 bytes big-endian), read as 4-byte big-endian words."""
    counter = 0
    while True:
        block = hmac.new(key, label.encode() + b"\0" + counter.to_bytes(4, "big"), hashlib.sha256).digest()
        for i in range(0, 32, 4):
            yield int.from_bytes(block[i:i + 4], "big")
        counter += 1


def below(words, n: int) -> int:
    while True:
        x = next(words)
        if x < 2 ** 32 - 2 ** 32 % n:
            return x % n


def deck_of(partie_seed: str) -> list[str]:
    deck = list(CODES)
    words = stream(partie_seed.encode(), "marias/shuffle")
    for i in range(31, 0, -1):
        j = below(words, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def cut_of(partie_seed: str, deal: int) -> int:
    return 2 + below(stream(partie_seed.encode(), f"marias/cut/{deal}"), 29)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def play(tmp_path: Path, seed=None, partie: int = 1) -> Path:
    log = reserve_log_path(tmp_path / "logs", "m")
    kwargs = {} if seed is None else {"seed": seed}
    run_match(MatchConfig(bots=[BotSpec.parse("random", seed="a"), BotSpec.parse("random", seed="b"),
                                BotSpec.parse("robot")], partie=partie, log_path=log, **kwargs))
    return log


def test_every_deck_and_cut_follows_from_the_logged_seed(tmp_path):
    recs = records(play(tmp_path, seed="öffentlich 7", partie=2))
    seed = recs[-1]["seed"]
    assert seed == "öffentlich 7"
    assert recs[0]["seed_sha256"] == hashlib.sha256(seed.encode()).hexdigest()
    deals = [r for r in recs if r["type"] == "deal"]
    assert len(deals) == 24
    for r in deals:
        ps = f"{seed}:{r['partie']}"
        if r["deal"] == 1:
            assert r["deck"] == deck_of(ps) and r["cut"] is None
        else:
            assert r["cut"] == cut_of(ps, r["deal"])


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(min_size=1, max_size=40), st.integers(min_value=0, max_value=10**40)), st.integers(1, 9))
def test_the_engine_follows_the_documented_derivation_for_any_seed(seed, n):
    ps = f"{seed}:{n}"
    assert [str(c) for c in shuffled_deck(ps)] == deck_of(ps)
    p = Partie(seed=ps)
    p.play(lambda d: d.legal_actions()[0])
    assert p.cuts == [None] + [cut_of(ps, d) for d in range(2, 13)]
    assert all(2 <= seeded_cut(ps, d) <= 30 for d in range(2, 13))
    assert derive_seed(seed, "bot") == hmac.new(str(seed).encode(), b"marias/derive/bot", hashlib.sha256).hexdigest()[:32]


def test_the_shuffle_is_a_permutation_and_spreads_the_cards():
    """Sanity of the derivation itself: 32 distinct cards; over 2000 seeds every card lands on
    the top about 1/32 of the time (a biased draw or a wrong loop bound would show)."""
    tops: dict[str, int] = {}
    for s in range(2000):
        d = deck_of(f"spread:{s}")
        assert sorted(d) == sorted(CODES)
        tops[d[0]] = tops.get(d[0], 0) + 1
    assert set(tops) == set(CODES) and max(tops.values()) < 2000 / 32 * 2


def test_the_default_seed_is_a_fresh_128_bit_secret_no_seat_can_find_by_trying_small_seeds(tmp_path):
    a, b = play(tmp_path), play(tmp_path)
    seeds = [records(p)[-1]["seed"] for p in (a, b)]
    assert seeds[0] != seeds[1]
    assert all(len(s) == 32 and int(s, 16) >= 0 for s in seeds)  # 128 bits as hex
    # the attack of issue 9: seat 0 tries seeds 0..5000 against its own first seven cards
    first = next(r for r in records(a) if r["type"] == "deal")
    mine = first["hands"][0][:7]
    found = [s for s in range(5001) if deck_of(f"{s}:1")[:7] == mine]
    assert found == []


def test_the_same_attack_does_find_a_small_seed_given_by_hand(tmp_path):
    """The control: the search above works, so its failure against the default means something."""
    first = next(r for r in records(play(tmp_path, seed="4242")) if r["type"] == "deal")
    mine = first["hands"][0][:7]
    assert [s for s in range(5001) if deck_of(f"{s}:1")[:7] == mine] == [4242]


def test_the_random_bot_gets_a_one_way_derived_seed_not_the_match_seed():
    spec = BotSpec.parse("random", seed="secret-match-seed:0")
    assert "secret-match-seed" not in " ".join(spec.argv)
    given = spec.argv[spec.argv.index("--seed") + 1]
    assert given == hmac.new(b"secret-match-seed:0", b"marias/derive/bot", hashlib.sha256).hexdigest()[:32]
    assert BotSpec.parse("random:77").argv[-1] == "77"  # a seed chosen for the bot is its own


def test_match_prints_the_seed_and_with_commit_its_sha256_before_play(tmp_path):
    def marias(*args):
        return subprocess.run([sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True, timeout=300,
                              cwd=tmp_path)
    r = marias("match", "-b", "random", "-b", "random", "-b", "random", "--commit", "--log", "logs", "-q")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    commit = out[0].removeprefix("seed sha256: ")
    seed = next(line for line in out if line.startswith("seed: ")).removeprefix("seed: ")
    assert hashlib.sha256(seed.encode()).hexdigest() == commit and len(seed) == 32
    log = next((tmp_path / "logs").glob("*.jsonl"))
    assert seed not in log.name  # the folder listing does not give the seed away
    recs = records(log)
    assert recs[0]["seed_sha256"] == commit and recs[-1]["seed"] == seed
    assert seed not in "".join(json.dumps(r) for r in recs[:-1])  # revealed only in the footer


# ------------------------------------------------------------------ log files: private, exclusive, inside their folder

def test_log_files_are_0600_in_folders_0700_and_never_overwritten(tmp_path):
    path = tmp_path / "a" / "b" / "log.jsonl"
    header = {"seed": 1, "bots": [{"seat": s, "command": "builtin:x", "name": "x", "version": "1", "exe_sha256": None} for s in range(3)]}
    w = LogWriter(path, header)
    w.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match="never overwritten"):
        LogWriter(path, header)
    assert path.read_bytes() == before
    # a symlink planted at the log's name is not followed
    target = tmp_path / "elsewhere"
    (tmp_path / "a" / "b" / "link.jsonl").symlink_to(target)
    with pytest.raises(OSError):
        LogWriter(tmp_path / "a" / "b" / "link.jsonl", header)
    assert not target.exists()


def test_two_logs_with_the_same_name_both_survive(tmp_path):
    first = reserve_log_path(tmp_path, "match-20261201T000000-s1")
    second = reserve_log_path(tmp_path, "match-20261201T000000-s1")
    assert first != second and first.name == "match-20261201T000000-s1.jsonl"
    assert second.name == "match-20261201T000000-s1-2.jsonl"


def test_two_matches_with_the_same_seed_at_once_keep_both_logs(tmp_path):
    cmd = [sys.executable, "-m", "referee.cli", "match", "-b", "random", "-b", "random", "-b", "random",
           "--seed", "5", "--log", str(tmp_path / "logs"), "-q"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    logs = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 2
    assert all(records(p)[-1]["type"] == "footer" for p in logs)


def test_a_seed_with_slashes_never_writes_outside_the_log_folder(tmp_path):
    (tmp_path / "run").mkdir()
    r = subprocess.run([sys.executable, "-m", "referee.cli", "match", "-b", "random", "-b", "random", "-b", "random",
                        "--seed", "/../../x", "--log", "logs", "-q"], capture_output=True, text=True, timeout=300,
                       cwd=tmp_path / "run")
    assert r.returncode == 0, r.stderr
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written and all(w.startswith("run/logs/") for w in written), written
    assert safe_name("/../x") == "____x" and "/" not in safe_name("a/b\n\x1b[31m")
    log = next((tmp_path / "run" / "logs").glob("*.jsonl"))
    assert records(log)[-1]["seed"] == "/../../x"  # the seed itself is kept as given
