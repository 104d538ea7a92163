"""The ladder's folder and data API (referee/ladder/folder.py, store.py): versions, the rating of a
group written once, the leaderboard, history, games, pairs and stderr — without playing (partie
results are entered as the runner enters them)."""

from __future__ import annotations

import os
import stat

import pytest

from referee.ladder import store
from referee.ladder.folder import SEATINGS, LadderError, LadderFolder, Refused, unit_id


def ladder_with(tmp_path, names=("a", "b", "c")):
    lad = LadderFolder.init(tmp_path / "lad")
    ids = [lad.add(n, "random", check=False) for n in names]
    return lad, ids


def play_group(lad, versions, per_version):
    """Enter one group whose partie give version i ``per_version[i]`` groše in each seating
    (the three sum to zero, as partie do)."""
    with lad.db() as con:
        g = store.plan_group(con, store.next_table(con), tuple(versions))
        out = None
        for s in SEATINGS:
            totals = [per_version[int(c)] for c in s]
            out = store.accept_unit(con, g, s, f"logs/{unit_id(g.n, s)}.jsonl", "0" * 64, totals, [0, 0, 0]) or out
    return g, out


def test_init_makes_a_private_seed_and_refuses_a_second_ladder(tmp_path):
    lad = LadderFolder.init(tmp_path / "lad")
    seed = lad.path / "seed.secret"
    assert stat.S_IMODE(os.stat(seed).st_mode) == 0o600
    assert len(lad.seed()) == 32
    assert (lad.path / ".marias-output").exists()  # hidden from every bot
    with pytest.raises(LadderError, match="already a ladder"):
        LadderFolder.init(tmp_path / "lad")
    with pytest.raises(LadderError, match="not a ladder"):
        LadderFolder.open(tmp_path)


def test_a_seed_file_is_used_where_it_lies_and_a_short_one_is_refused(tmp_path):
    (tmp_path / "s").write_text("x" * 40 + "\n")
    lad = LadderFolder.init(tmp_path / "lad", seed_file=tmp_path / "s")
    assert lad.seed() == "x" * 40 and not (lad.path / "seed.secret").exists()
    (tmp_path / "short").write_text("1234\n")
    with pytest.raises(LadderError, match="at least 16"):
        LadderFolder.init(tmp_path / "lad2", seed_file=tmp_path / "short")


def test_add_numbers_versions_and_a_bot_that_fails_its_check_is_refused_with_the_report(tmp_path):
    lad = LadderFolder.init(tmp_path / "lad")
    assert lad.add("rnd", "random", author="eva") == "rnd@1"  # checked for real
    assert lad.add("rnd", "random", check=False) == "rnd@2"
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(Refused) as e:
        lad.add("bad", f"python3 {bad}")
    assert "check" in str(e.value) and e.value.report.strip()
    assert [v["id"] for v in lad.versions()] == ["rnd@1", "rnd@2"]
    assert lad.versions()[0]["author"] == "eva"
    with pytest.raises(LadderError, match="bot name"):
        lad.add("no/slash", "random", check=False)
    lad.retire("rnd@1")
    assert [v["status"] for v in lad.versions()] == ["retired", "active"]
    assert [v.id for v in lad.playing()] == ["rnd@2"]
    with pytest.raises(LadderError, match="no version"):
        lad.retire("rnd@9")


def test_a_group_is_rated_once_with_its_sixth_partie_and_the_winner_rises(tmp_path):
    lad, (a, b, c) = ladder_with(tmp_path)
    g, change = play_group(lad, (a, b, c), [30, -10, -20])
    assert change is not None and change["totals"] == [180, -60, -120]
    board = lad.leaderboard()
    assert [r["id"] for r in board] == [a, b, c]  # openskill orders them as their totals
    assert board[0]["rating"] > 25 > board[2]["rating"]
    assert all(r["games"] == 6 and r["groups"] == 1 for r in board)
    assert board[0]["groše"] == 30
    # the same partie entered again (a runner restarted after a crash) changes nothing
    before = lad.leaderboard()
    with lad.db() as con:
        assert store.accept_unit(con, g, "012", "x", "0" * 64, [1, 2, -3], [0, 0, 0]) is None
        assert store.rate_group(con, g) is None
    assert lad.leaderboard() == before
    assert lad.counts() == {"rated": 1, "void": 0, "playing": 0, "partie": 6}


def test_history_games_and_pairs(tmp_path):
    lad, (a, b, c) = ladder_with(tmp_path)
    play_group(lad, (a, b, c), [6, 0, -6])
    play_group(lad, (b, a, c), [0, 12, -12])
    h = lad.history(a)
    assert [x["group"] for x in h] == [1, 2] and [x["game"] for x in h] == [6, 12]
    assert h[1]["low"] < h[1]["rating"] < h[1]["high"]
    games = lad.games(a)
    assert len(games) == 12 and games[0]["group"] == 2
    assert lad.games(a, limit=3)[0]["id"] == games[0]["id"] and len(lad.games(a, limit=3)) == 3
    one = games[0]
    assert one["groše"] == 12 and set(one["others"]) == {b, c} and one["seats"][one["seat"]] == a
    assert {g["group_status"] for g in games} == {"rated"}
    pairs = {(p.a, p.b): p.estimate for p in lad.pairs()}
    ac = pairs[(a, c)]  # a over c: (6 - -6) and (12 - -12) groše per partie in the two groups
    assert ac.n == 2 and ac.mean == pytest.approx(18.0)
    # t interval with one degree of freedom: 12.706 * sd / sqrt(2), sd of (12, 24) = 8.485
    assert ac.half == pytest.approx(12.7062 * 8.48528 / 2 ** 0.5, rel=1e-3)
    ab = pairs[(a, b)]
    assert ab.mean == pytest.approx((6 + 12) / 2)


def test_stderr_files_are_the_versions_own(tmp_path):
    lad, (a, b, c) = ladder_with(tmp_path)
    g, _ = play_group(lad, (a, b, c), [0, 0, 0])
    # in seating 012 seat 0 is a; in 102 seat 1 is a
    (lad.logs_dir / f"{unit_id(g.n, '012')}.seat0.stderr.log").write_text("a says\n")
    (lad.logs_dir / f"{unit_id(g.n, '012')}.seat1.stderr.log").write_text("b says\n")
    (lad.logs_dir / f"{unit_id(g.n, '102')}.seat1.stderr.log").write_text("a again\n")
    mine = sorted(p.name for p in lad.stderr_files(a))
    assert mine == sorted([f"{unit_id(g.n, '012')}.seat0.stderr.log", f"{unit_id(g.n, '102')}.seat1.stderr.log"])
    assert [p.name for p in lad.stderr_files(b)] == [f"{unit_id(g.n, '012')}.seat1.stderr.log"]


def test_a_version_faulting_past_the_threshold_is_suspended(tmp_path):
    lad, (a, b, c) = ladder_with(tmp_path)
    rule = {"fault_rate": 1.0, "window": 24, "min_partie": 12}
    with lad.db() as con:
        for k in range(2):
            g = store.plan_group(con, 1, (a, b, c))
            for s in SEATINGS:
                faults = [2 if (a == g.versions[int(x)]) else 0 for x in s]
                store.accept_unit(con, g, s, "x", "0" * 64, [0, 0, 0], faults)
            why = store.suspend_if_faulty(con, a, rule)
            assert (why is None) == (k == 0)  # 6 partie are fewer than min_partie; 12 at 2 faults each pass
        assert store.suspend_if_faulty(con, b, rule) is None
    row = {v["id"]: v for v in lad.versions()}[a]
    assert row["status"] == "suspended" and "2.00 faults per partie" in row["reason"]
    assert [v.id for v in lad.playing()] == [b, c]


def test_until_takes_a_duration_or_a_time():
    from datetime import datetime, timezone

    from referee.ladder.run import parse_until

    assert parse_until("90s", now=1000.0) == 1090.0
    assert parse_until("2h", now=0.0) == 7200.0 and parse_until("1.5d", now=0.0) == 1.5 * 86400
    assert parse_until("2026-12-24T18:00") == datetime(2026, 12, 24, 18, 0, tzinfo=timezone.utc).timestamp()
    assert parse_until("2026-12-24T18:00+01:00") == datetime(2026, 12, 24, 17, 0, tzinfo=timezone.utc).timestamp()
    with pytest.raises(ValueError, match="a duration"):
        parse_until("soon")


def test_a_groups_deck_seed_reveals_neither_the_secret_nor_another_group():
    from referee.ladder.run import group_seed

    secret = "f" * 32
    seeds = [group_seed(secret, n) for n in range(1, 50)]
    assert len(set(seeds)) == 49 and all(secret not in s for s in seeds)
    assert group_seed(secret, 7) == group_seed(secret, 7) != group_seed("e" * 32, 7)


def test_one_run_at_a_time(tmp_path):
    from referee.ladder.run import run_ladder
    from referee.tournaments.folder import FolderLock

    lad, _ = ladder_with(tmp_path)
    with FolderLock(lad.path):
        with pytest.raises(LadderError, match="another `marias ladder run`"):
            run_ladder(lad.path, groups=0)


def test_the_commands_say_what_is_wrong(tmp_path):
    from typer.testing import CliRunner

    from referee.cli import app

    cli = CliRunner()
    r = cli.invoke(app, ["ladder", "add", str(tmp_path), "x", "random"])
    assert r.exit_code == 2 and "not a ladder" in r.output and "marias ladder init" in r.output
    lad, (a, b, c) = ladder_with(tmp_path)
    r = cli.invoke(app, ["ladder", "retire", str(lad.path), "zz@1"])
    assert r.exit_code == 2 and "no version 'zz@1'" in r.output
    r = cli.invoke(app, ["ladder", "run", str(lad.path), "--until", "soon"])
    assert r.exit_code == 2 and "a duration" in r.output
    r = cli.invoke(app, ["ladder", "retire", str(lad.path), a])
    assert r.exit_code == 0 and lad.versions()[0]["status"] == "retired"
    play_group(lad, (a, b, c), [5, 0, -5])
    r = cli.invoke(app, ["ladder", "table", str(lad.path), "--format", "md"])
    assert r.exit_code == 0 and f"| {a}" in r.output and "retired" in r.output
    r = cli.invoke(app, ["ladder", "table", str(lad.path), "--format", "csv", "--active"])
    assert r.exit_code == 0 and a not in r.output.split("# pairs")[0] and b in r.output


def test_adds_of_one_name_at_once_each_get_their_own_version(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    lad = LadderFolder.init(tmp_path / "lad")
    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(lambda _: LadderFolder(lad.path).add("same", "random", check=False), range(16)))
    assert sorted(ids, key=lambda v: int(v.split("@")[1])) == [f"same@{k}" for k in range(1, 17)]
