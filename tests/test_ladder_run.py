"""``marias ladder run`` playing for real (referee/ladder/run.py): five bots (built-in random and robot,
the Node.js and C example bots, a second version entered mid-run) survive a ``kill -9`` of the real
process; a killed run's finished logs are recorded and its cut ones played again, with the same
ratings as a run never stopped; old logs are gzipped and read back byte for byte; a faulting
version is suspended with its stderr kept."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.ladder import store
from referee.ladder.archive import compress_old
from referee.ladder.folder import SEATINGS, LadderFolder, connect, unit_id
from referee.ladder.run import run_ladder
from referee.logs.seal import generate_key_pair
from referee.logs.validate import validate_file
from referee.seats.identity import file_sha256
from referee.tournaments.units import check_unit_log, log_totals
from tests.cluster_kill import a_busy_worker_killed

ROOT = Path(__file__).resolve().parent.parent
FAULTY = ROOT / "tests" / "fault_bots" / "faulty.py"
WAIT_S = 300  # a guard against a run that hangs; not a speed check


def marias(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=WAIT_S, **kw)


def wait_for(what, cond, proc=None):
    t0 = time.monotonic()
    while not cond():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run ended (rc {proc.returncode}) before {what}")
        if time.monotonic() - t0 > WAIT_S:
            raise AssertionError(f"waited {WAIT_S} s for {what}")
        time.sleep(0.5)


def check_books(lad: LadderFolder) -> None:
    """What the database says adds up, and matches the logs in the folder."""
    with lad.db() as con:
        units = con.execute("SELECT id, grp, seating, log, sha256, seat0, seat1, seat2 FROM units").fetchall()
        groups = dict(con.execute("SELECT n, status FROM groups"))
        versions = con.execute("SELECT id, games, groups FROM versions").fetchall()
        pair_groups = con.execute("SELECT COALESCE(SUM(groups), 0) FROM pairs").fetchone()[0]
        history = con.execute("SELECT version, COUNT(*) FROM history GROUP BY version").fetchall()
    by_group: dict[int, list[str]] = {}
    for uid, grp, seating, log, sha, *seats in units:
        assert uid == unit_id(grp, seating)
        by_group.setdefault(grp, []).append(seating)
        path = lad.path / log
        assert file_sha256(path) == sha, uid  # the log is the one accepted
        assert check_unit_log(path, seats=seats) is None, uid  # and it is complete and valid
    rated = [n for n, s in groups.items() if s == "rated"]
    for n in rated:
        assert sorted(by_group[n]) == sorted(SEATINGS), n  # a rated group is its six seatings, each once
    assert pair_groups == 3 * len(rated)
    hist = dict(history)
    for vid, games, n_groups in versions:
        assert games == sum(vid in u[5:] for u in units), vid
        assert n_groups == hist.get(vid, 0) == sum(1 for n in rated if vid in {s for u in units if u[1] == n
                                                                              for s in u[5:]}), vid
    on_disk = {p.name for p in lad.logs_dir.glob("*.jsonl")}
    assert on_disk == {Path(u[3]).name for u in units}  # no log left over that counts for nothing


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory):
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc to build the C example bot")
    d = tmp_path_factory.mktemp("cbot")
    subprocess.run([gcc, "-O2", "-std=c99", "-o", str(d / "mariasbot"), str(ROOT / "examples" / "c" / "bot.c")],
                   check=True)
    return d


def test_five_bots_survive_a_kill_9_and_a_version_added_mid_run(tmp_path, c_bot):
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node for the Node.js example bot")
    lad_dir = tmp_path / "season"
    assert marias("ladder", "init", lad_dir, "--groups-per-table", 1).returncode == 0
    for args in (("rnd", "random", "--author", "eva"), ("rob", "robot"),
                 ("js", f"{node} {ROOT / 'examples' / 'js' / 'bot.js'}"), ("c", "./mariasbot", "--cwd", c_bot)):
        r = marias("ladder", "add", lad_dir, *args)
        assert r.returncode == 0, r.stderr
    lad = LadderFolder(lad_dir)
    log = open(tmp_path / "run1.err", "w")
    run = subprocess.Popen([sys.executable, "-m", "referee.cli", "ladder", "run", str(lad_dir), "-j", "2"],
                           stdout=log, stderr=log, start_new_session=True)
    try:
        wait_for("eight partie", lambda: lad.counts()["partie"] >= 8, run)
        r = marias("ladder", "add", lad_dir, "rnd", "random")  # while it runs
        assert r.returncode == 0 and r.stdout.strip() == "rnd@2", r.stderr
        wait_for("rnd@2 to play", lambda: any(v["id"] == "rnd@2" and v["games"] > 0 for v in lad.leaderboard()), run)
        r = marias("ladder", "retire", lad_dir, "rnd@1")  # while it runs too
        assert r.returncode == 0, r.stderr
        with lad.db() as con:  # a table being drawn as it retired may still seat it: one group (--groups-per-table 1)
            last_seating_it = con.execute("SELECT MAX(n) FROM groups").fetchone()[0] + 1
        before = {g["id"] for v in lad.versions() for g in lad.games(v["id"])}
        os.kill(run.pid, signal.SIGKILL)  # the coordinator only: its workers see it gone and end
        run.wait(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        log.close()
    assert lad.counts()["playing"] >= 0
    r = marias("ladder", "run", lad_dir, "-j", "2", "--groups", 3)
    assert r.returncode == 0, r.stderr
    with lad.db() as con:
        later = con.execute("SELECT v0, v1, v2 FROM groups WHERE n > ?", (last_seating_it,)).fetchall()
    assert later and all("rnd@1" not in vs for vs in later)  # retired: never seated again
    after = {g["id"] for v in lad.versions() for g in lad.games(v["id"])}
    assert before <= after  # no finished partie lost
    c = lad.counts()
    assert c["playing"] == 0 and c["void"] == 0 and c["rated"] >= 3
    check_books(lad)
    board = lad.leaderboard()
    assert {r["id"] for r in board} == {"rnd@1", "rob@1", "js@1", "c@1", "rnd@2"}
    assert all(r["games"] > 0 and r["faults"] == 0 for r in board)
    assert {r["id"]: r["status"] for r in board}["rnd@1"] == "retired"
    table = CliRunner().invoke(app, ["ladder", "table", str(lad_dir), "--format", "json"])
    body = json.loads(table.output)
    assert [r["version"] for r in body["leaderboard"]] == [r["id"] for r in board]
    assert {(p["version"], p["vs"]) for p in body["pairs"]} <= set(itertools.permutations([r["id"] for r in board], 2))


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A ladder of three built-in bots that played one group, its logs signed (the public key beside it)."""
    base = tmp_path_factory.mktemp("ladder")
    _, pub, _ = generate_key_pair(base / "keys" / "ladder.key")
    lad = LadderFolder.init(base / "one", groups_per_table=1)
    for n, cmd in (("a", "random"), ("b", "robot"), ("c", "random")):
        lad.add(n, cmd, check=False)
    r = run_ladder(lad.path, workers=2, groups=1, sign_key=base / "keys" / "ladder.key")
    assert r.rated == 1 and r.played == 6 and not r.failed
    lad.public_key = pub
    return lad


def test_a_killed_runs_finished_logs_are_recorded_and_its_cut_one_played_again(tmp_path, played):
    """The state a kill -9 leaves, made by hand: a group planned, three of its logs finished and not
    recorded, one cut in the middle.  The next run records the three (validated in full), plays the
    other three, and the group's ratings come out as those of the run that was never stopped (same
    secret seed, so the same decks, and seeded bots)."""
    lad = LadderFolder.init(tmp_path / "l", seed_file=played.path / "seed.secret")
    for v in played.versions():
        lad.add(v["name"], v["command"], check=False)
    g1 = next(iter(played.games("a@1")))["group"]
    with lad.db() as con:
        g = store.plan_group(con, 1, tuple(played.games("a@1")[0]["seats"][i] for i in range(3)))
    # the played ladder's group 1 seats its versions in its own table order
    with played.db() as con:
        order = con.execute("SELECT v0, v1, v2 FROM groups WHERE n=?", (g1,)).fetchone()
    with lad.db() as con:
        con.execute("UPDATE groups SET v0=?, v1=?, v2=? WHERE n=?", (*order, g.n))
        con.commit()
    for s in SEATINGS[:3]:
        shutil.copy(played.logs_dir / f"{unit_id(g1, s)}.jsonl", lad.logs_dir / f"{unit_id(g.n, s)}.jsonl")
    whole = (played.logs_dir / f"{unit_id(g1, SEATINGS[3])}.jsonl").read_bytes()
    (lad.logs_dir / f"{unit_id(g.n, SEATINGS[3])}.jsonl").write_bytes(whole[: len(whole) // 2])
    r = run_ladder(lad.path, workers=2, groups=0)
    assert (r.resumed, r.played, r.rated) == (3, 6, 1)
    check_books(lad)
    again = lad.logs_dir / f"{unit_id(g.n, SEATINGS[3])}.jsonl"  # played again: the same deal, bots and result
    assert log_totals(again) == log_totals(played.logs_dir / f"{unit_id(g1, SEATINGS[3])}.jsonl")
    mine = {x["id"]: (x["rating"], x["sigma"], x["games"]) for x in lad.leaderboard()}
    theirs = {x["id"]: (x["rating"], x["sigma"], x["games"]) for x in played.leaderboard()}
    assert mine == theirs


def test_old_logs_are_gzipped_and_read_back_byte_for_byte(tmp_path, played):
    copy = LadderFolder(shutil.copytree(played.path, tmp_path / "copy"))
    (copy.logs_dir / f"{copy.games('a@1')[0]['id']}.seat{copy.games('a@1')[0]['seat']}.stderr.log").write_text("hi\n")
    before = {g["id"]: (g["log"], copy.path / g["log"]) for g in copy.games("a@1")}
    sha = {uid: file_sha256(p) for uid, (_, p) in before.items()}
    with connect(copy.db_file) as con:
        assert compress_old(con, copy.path, hours=1) == 0  # not old enough yet
        assert compress_old(con, copy.path, hours=1, now=time.time() + 7200) == 1
    games = copy.games("a@1")
    assert all(g["log"].endswith(".jsonl.gz") for g in games)
    assert not list(copy.logs_dir.glob("*.jsonl")) and not list(copy.logs_dir.glob("*.stderr.log"))
    for g in games:
        plain = copy.readable_log(g["log"])
        assert file_sha256(plain) == sha[g["id"]]
        assert check_unit_log(plain, seats=[*g["seats"]]) is None
        assert validate_file(plain, verify=str(played.public_key)).ok  # sealed and signed as it was written
    assert [p.name.endswith(".gz") for p in copy.stderr_files("a@1")] == [True]


def test_a_faulting_version_is_suspended_and_its_stderr_kept(tmp_path):
    (tmp_path / "bot").mkdir()
    bot = tmp_path / "bot" / "crasher.py"  # a folder of its own: the bot's fingerprint covers its script's folder
    bot.write_text("import os, sys\nsys.stderr.write('crasher: giving up\\n')\nsys.stderr.flush()\n"
                   f"os.execv(sys.executable, [sys.executable, {str(FAULTY)!r}, 'die', '2'])\n")
    lad = LadderFolder.init(tmp_path / "l", groups_per_table=1,
                            suspend={"fault_rate": 0.5, "window": 6, "min_partie": 6})
    for n, cmd in (("a", "random"), ("b", "robot"), ("c", "random")):
        lad.add(n, cmd, check=False)
    lad.add("crash", f"{sys.executable} {bot}", check=False)  # it would fail its check: entered unchecked here
    r = run_ladder(lad.path, workers=1, groups=3)  # one worker: a table is drawn once the last one's partie are in
    assert r.rated == 3
    row = {v["id"]: v for v in lad.versions()}["crash@1"]
    assert row["status"] == "suspended" and "faults per partie" in row["reason"]
    played = [g["group"] for g in lad.games("crash@1")]
    assert len(played) == 6 and len(set(played)) == 1  # one group, then the tables were drawn without it
    kept = lad.stderr_files("crash@1")
    assert kept and all("crasher: giving up" in p.read_text() for p in kept)
    assert {v["id"] for v in lad.leaderboard() if v["faults"]} == {"crash@1"}


def test_a_dask_cluster_plays_the_groups_the_local_pool_plays_even_when_a_worker_dies(tmp_path, played):
    """Same secret seed, same versions: the group played on a LocalCluster of two worker processes
    (127.0.0.1 only), one of them killed once a partie is in, gives the ratings the local pool gave:
    the lost worker's chain is run again, nothing lost, nothing counted twice."""
    distributed = pytest.importorskip("distributed")
    lad = LadderFolder.init(tmp_path / "l", seed_file=played.path / "seed.secret", groups_per_table=1)
    for v in played.versions():
        lad.add(v["name"], v["command"], check=False)
    cl = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40)
    client = distributed.Client(cl, set_as_default=False)
    try:
        with a_busy_worker_killed(client, lambda: lad.counts()["partie"] >= 1) as killed:
            r = run_ladder(lad.path, cluster=cl.scheduler_address, groups=1)
    finally:
        client.close()
        cl.close()
    assert killed, "the group ended before a worker could be killed"
    assert (r.rated, r.played, r.failed) == (1, 6, [])
    check_books(lad)
    mine = {x["id"]: (x["rating"], x["sigma"], x["games"]) for x in lad.leaderboard()}
    assert mine == {x["id"]: (x["rating"], x["sigma"], x["games"]) for x in played.leaderboard()}


def test_a_version_whose_files_changed_is_suspended_before_it_is_seated(tmp_path):
    (tmp_path / "bot").mkdir()
    bot = tmp_path / "bot" / "mine.py"
    bot.write_text("import os, sys\nos.execv(sys.executable, [sys.executable, '-m', 'referee.cli', 'bot', 'random'])\n")
    lad = LadderFolder.init(tmp_path / "l", groups_per_table=1)
    mine = lad.add("mine", f"{sys.executable} {bot}", check=False)  # the neediest by id: seated first
    for n in ("x", "y", "z"):
        lad.add(n, "random", check=False)
    bot.write_text(bot.read_text() + "# changed after it was entered\n")
    r = run_ladder(lad.path, workers=2, groups=1)
    assert r.rated == 1
    row = {v["id"]: v for v in lad.versions()}[mine]
    assert row["status"] == "suspended" and "files changed since it was added" in row["reason"]
    assert lad.games(mine) == [] and all(len(lad.games(v)) == 6 for v in ("x@1", "y@1", "z@1"))


def test_a_version_suspended_mid_table_leaves_its_unplayed_groups_void(tmp_path):
    (tmp_path / "bot").mkdir()
    bot = tmp_path / "bot" / "crasher.py"
    bot.write_text(f"import os, sys\nos.execv(sys.executable, [sys.executable, {str(FAULTY)!r}, 'die', '2'])\n")
    lad = LadderFolder.init(tmp_path / "l", groups_per_table=3,
                            suspend={"fault_rate": 0.5, "window": 6, "min_partie": 6})
    lad.add("aaa", f"{sys.executable} {bot}", check=False)  # the neediest by id: seated at the first table
    for n in ("b", "c", "d"):
        lad.add(n, "random", check=False)
    # one worker: the table's six chains (one per seating, three groups' decks each) one after the other;
    # after two chains (6 partie) the crasher is suspended and the other four are not played
    r = run_ladder(lad.path, workers=1, groups=3)
    assert r.rated == 0 and r.played == 6
    assert lad.counts() == {"rated": 0, "void": 3, "playing": 0, "partie": 6}
    assert {v["id"]: v["status"] for v in lad.versions()}["aaa@1"] == "suspended"
    assert {g["group_status"] for g in lad.games("aaa@1")} == {"void"}  # played, never rated
    check_books(lad)


def test_sigterm_stops_a_run_cleanly_and_the_next_run_goes_on(tmp_path):
    lad = LadderFolder.init(tmp_path / "l", groups_per_table=2)
    for n, cmd in (("a", "random"), ("b", "robot"), ("c", "random")):
        lad.add(n, cmd, check=False)
    run = subprocess.Popen([sys.executable, "-m", "referee.cli", "ladder", "run", str(lad.path), "-j", "2", "-q"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for("a partie", lambda: lad.counts()["partie"] >= 1, run)
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert run.returncode == 130 and "stopped" in out, err
    assert lad.counts()["playing"] >= 1  # the groups it was playing wait for the next run
    check_books(lad)  # nothing left of the partie it abandoned
    r = run_ladder(lad.path, workers=2, groups=0)
    assert r.failed == [] and lad.counts()["playing"] == 0 and lad.counts()["rated"] == 2
    check_books(lad)
