"""Head-to-head tests (referee/tournaments/duel.py, `marias duel`): the six seatings, the configuration, and whole
duels played by the real referee: robot against random accepts H1 in a few groups, robot against
robot does not, and a duel killed with SIGKILL continues to the same decision without losing or
double-counting a group. The decision, LLR and groups come back from the logs alone (`marias table`)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from referee.tournaments import duel as D
from referee.tournaments import tournament as T
from referee.tournaments.sprt import SPRT
from tests.files import written_records

REPO = Path(__file__).resolve().parents[1]


def marias(*args, **kw):
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True,
                          cwd=kw.pop("cwd", REPO), timeout=kw.pop("timeout", 300), **kw)


# ------------------------------------------------------------------ the plan

def test_a_group_is_the_six_two_and_one_seatings_on_one_deck():
    plan = D.Plan("A", "B", "7", SPRT(max_groups=50))
    units = plan.group(3)
    seatings = [u.seats for u in units]
    # every way to seat two of one bot and one of the other, each once
    want = {s for s in ((x, y, z) for x in "AB" for y in "AB" for z in "AB") if len(set(s)) == 2}
    assert set(seatings) == want and len(seatings) == 6
    for seat in range(3):  # every seat holds A three times and B three times
        assert Counter(s[seat] for s in seatings) == {"A": 3, "B": 3}
    assert {u.match_seed for u in units} == {"7:g3"} and {u.deck_slot for u in units} == {2}
    assert len({u.id for u in units}) == 6 and all(u.id.startswith("g0003-s") for u in units)
    assert not {u.id for u in units} & {u.id for u in plan.group(4)}


def test_only_complete_groups_count_and_only_in_order():
    plan = D.Plan("A", "B", "1", SPRT(h0=0, h1=10, max_groups=9))
    sc = D.Scan(plan)

    def fill(k, groše_of_a):  # A's groše in each of the group's six partie
        for u, g in zip(plan.group(k), groše_of_a):
            sc.units[u.id] = g
        sc.groups_seen = max(sc.groups_seen, k)

    fill(1, [60, 120, 0, 30, 90, 60])  # mean 60
    fill(3, [70] * 6)
    assert sc.state().n == 1 and sc.state().samples == (60.0,)  # group 2 missing: group 3 waits
    fill(2, [40, 50, 60, 70, 80, 0])  # mean 50
    sc.units.pop(plan.group(2)[5].id)  # one partie of group 2 not (yet) valid
    assert sc.state().n == 1
    fill(2, [40, 50, 60, 70, 80, 0])
    st = sc.state()
    assert st.samples == (60.0, 50.0, 70.0)
    # the decision is the first crossing: later complete groups are listed, not counted
    for k in range(4, 10):
        fill(k, [70] * 5 + [40])
    st = sc.state()
    assert st.decision == "H1"
    assert 3 < st.n < 9 and st.samples == tuple([60.0, 50.0, 70.0] + [65.0] * (st.n - 3))
    assert sc.ignored_groups(st.n) == list(range(st.n + 1, 10))
    assert SPRT(h0=0, h1=10, max_groups=9).run([60, 50, 70] + [65] * 6).n == st.n


# ------------------------------------------------------------------ configuration

def test_yaml_head_to_head(tmp_path):
    p = tmp_path / "d.yaml"
    p.write_text(textwrap.dedent("""\
        format: head-to-head
        seed: 3
        sprt: {h0: 0, h1: 25, alpha: 0.1, beta: 0.05, max_groups: 40}
        bots:
          - {name: new, command: robot}
          - {name: old, command: random}
        """))
    cfg = T.load_config(p)
    plan = D.plan_of(cfg)
    assert (plan.a, plan.b, plan.seed) == ("new", "old", "3")
    assert plan.test == SPRT(h0=0, h1=25, alpha=0.1, beta=0.05, max_groups=40)
    assert T.canonical(cfg)["sprt"] == {"h0": 0.0, "h1": 25.0, "alpha": 0.1, "beta": 0.05, "max_groups": 40}
    assert "sprt" not in T.canonical(T.config_from_options(["robot", "random", "r2=random:2"]))


@pytest.mark.parametrize("text,expected", [
    ("format: head-to-head\nbots: [{name: a, command: robot}, {name: b, command: robot}, {name: c, command: robot}]\n",
     "d.yaml:2: bots: format head-to-head compares two bots: list exactly two, got 3"),
    ("format: head-to-head\npartie: 2\nbots: [{name: a, command: robot}, {name: b, command: robot}]\n",
     "d.yaml:2: partie: format head-to-head plays each deck once in each of its six seatings"),
    ("sprt: {h1: 5}\nbots: [{name: a, command: robot}, {name: b, command: robot}, {name: c, command: robot}]\n",
     "d.yaml:1: sprt: 'sprt' only goes with format: head-to-head"),
    ("format: head-to-head\nsprt: {h0: 5, h1: 5}\nbots: [{name: a, command: robot}, {name: b, command: robot}]\n",
     "d.yaml:2: sprt: h1 must be greater than h0"),
    ("format: head-to-head\nsprt: {alpha: high}\nbots: [{name: a, command: robot}, {name: b, command: robot}]\n",
     "d.yaml:2: sprt.alpha: a number is needed"),
    ("format: head-to-head\nsprt: {max_group: 1}\nbots: [{name: a, command: robot}, {name: b, command: robot}]\n",
     "d.yaml:2: sprt.max_group: unknown key; did you mean 'max_groups'?"),
])
def test_config_errors_name_line_and_key(tmp_path, text, expected):
    p = tmp_path / "d.yaml"
    p.write_text(text)
    with pytest.raises(T.ConfigError) as e:
        T.load_config(p)
    got = [m.replace(f"{tmp_path}{os.sep}", "") for m in e.value.problems]
    assert any(m.startswith(expected) for m in got), got


def test_cli_refuses_bad_input(tmp_path):
    r = marias("duel", "robot", "random", "--h0", "10", "--h1", "5", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "h1 must be greater than h0" in r.stderr
    r = marias("duel", "robot", "nosuchbot", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "give NAME=COMMAND" in r.stderr
    r = marias("duel", "robot", "x=./no/such/program", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "not found" in r.stderr


# ------------------------------------------------------------------ whole duels (processes)

def group_means_from_logs(out: Path, a: str) -> dict[int, float]:
    """Independently of the runner: A's groše per partie in each group with six complete logs."""
    per: dict[int, list[int]] = {}
    for p in sorted((out / "logs").glob("g*-s*.jsonl")):
        lines = written_records(p)  # a log still being written may end in a line cut short
        if not lines or lines[-1].get("type") != "footer":
            continue
        labels = [b["label"] for b in lines[0]["bots"]]
        k = int(p.name[1:].split("-")[0])
        per.setdefault(k, []).append(sum(t for n, t in zip(labels, lines[-1]["totals"]) if n == a))
    return {k: sum(v) / 6 for k, v in per.items() if len(v) == 6}


def table_json(out: Path) -> dict:
    r = marias("table", str(out), "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["head-to-head"]


def test_robot_against_random_accepts_h1_within_a_handful_of_groups(tmp_path):
    out = tmp_path / "d"
    r = marias("duel", "robot", "random", "--h1", "10", "--max-groups", "20", "-j", "2", "--out", str(out),
               "--seed", "e2e", "--format", "json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)["head-to-head"]
    # a gap of ~+360 groše per partie with a group spread of ~100-200: the LLR gains about 0.2-0.5 a
    # group against bounds of +-2.94, so well under 20 groups (the cap) whatever the decks
    assert res["decision"] == "H1" and res["groups"] < 20
    assert res["llr"] >= math.log(19) and res["ci95_low"] > 10 and res["los"] > 0.99
    assert "group 1: LLR" in r.stderr and "bounds -2.94, +2.94" in r.stderr  # progress
    # the samples are the groups' means as the logs hold them, and the LLR is the test's over them
    means = group_means_from_logs(out, "robot")
    assert res["samples"] == pytest.approx([means[k] for k in range(1, res["groups"] + 1)], abs=1e-3)
    assert res["llr"] == pytest.approx(SPRT(h1=10).run(res["samples"]).llr, abs=1e-3)
    assert table_json(out) == res  # `marias table` from the logs alone
    # the same command again: the test is decided, nothing is played
    again = marias("duel", "robot", "random", "--h1", "10", "--max-groups", "20", "-j", "2", "--out", str(out),
                   "--seed", "e2e", "--format", "json")
    assert again.returncode == 0 and json.loads(again.stdout)["head-to-head"] == res
    assert "(0 partie played now)" in again.stderr


def test_robot_against_robot_does_not_accept_h1(tmp_path):
    out = tmp_path / "d"
    r = marias("duel", "robot", "robot", "--max-groups", "3", "-j", "2", "--out", str(out), "--format", "json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)["head-to-head"]
    assert res["decision"] != "H1"
    assert (res["a"], res["b"]) == ("robot.a", "robot.b") and res["groups"] <= 3
    assert table_json(out)["decision"] == res["decision"]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
def test_kill_9_resumes_the_same_test(tmp_path):
    from tests.test_tournament import wait_no_processes

    marker = f"k9duel{uuid.uuid4().hex[:8]}"
    out = tmp_path / "d"
    # the bots as commands (NAME=COMMAND) carrying a marker, so that no leftover process can hide
    args = ["duel", f"rob=python -m bots robot --seed {marker}", f"rnd=python -m bots random --seed {marker}",
            "--max-groups", "40", "-j", "2", "--seed", "k9", "--out", str(out), "--format", "json"]
    # (a fixed deck seed, and a cap far above the ~10-15 groups a +360 groše gap needs: a decision is reached)
    proc = subprocess.Popen([sys.executable, "-m", "referee.cli", *args, "-q"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while not group_means_from_logs(out, "rob"):  # at least group 1 complete, group 2 under way
        assert proc.poll() is None, "the duel ended before it could be stopped"
        assert time.monotonic() < deadline, "no group finished in time"
        time.sleep(0.05)
    proc.kill()  # SIGKILL: no clean-up in the duel process
    proc.wait()
    assert wait_no_processes(marker) == [], "a worker or bot outlived the killed duel"
    before = group_means_from_logs(out, "rob")
    assert 1 <= len(before) and max(before) == len(before)

    r = marias(*args)
    assert r.returncode == 0, r.stderr
    assert "resuming" in r.stderr
    res = json.loads(r.stdout)["head-to-head"]
    assert res["decision"] == "H1"
    means = group_means_from_logs(out, "rob")
    # the groups counted before the kill are unchanged, and each counted group has exactly six logs
    assert {k: means[k] for k in before} == before
    assert res["samples"] == pytest.approx([means[k] for k in range(1, res["groups"] + 1)], abs=1e-3)
    for k in range(1, res["groups"] + 1):
        assert len(list((out / "logs").glob(f"g{k:04d}-s*.jsonl"))) == 6
    assert table_json(out) == res
    assert wait_no_processes(marker) == []


# ------------------------------------------------------------------ a larger budget (issue 25 point 1)

def _hashes(folder: Path) -> dict[str, str]:
    import hashlib

    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((folder / "logs").glob("*.jsonl"))}


def test_a_duel_continues_with_a_larger_max_groups_and_keeps_what_was_played(tmp_path):
    out = tmp_path / "d"
    first = marias("duel", "random", "r7=random:7", "--max-groups", "2", "--seed", "extend-me", "-j", "2",
                   "--out", str(out), "--format", "json")
    assert first.returncode == 0, first.stderr
    r1 = json.loads(first.stdout)["head-to-head"]
    assert r1["decision"] == "no decision" and r1["groups"] == 2
    before = _hashes(out)
    assert sorted(before) == sorted(u.id + ".jsonl" for k in (1, 2) for u in D.plan_of(_cfg_of(out)).group(k))

    # another game is still refused, and the message says duel
    other = marias("duel", "random", "r7=random:7", "--max-groups", "4", "--seed", "extend-me", "--move-time", "100",
                   "--out", str(out))
    assert other.returncode == 2
    assert f"{out} holds a duel with another configuration" in other.stderr and "time.move_ms: 2000 -> 100" in other.stderr
    assert "continue that duel" in other.stderr and "sprt.max_groups may change on a resume" in other.stderr

    more = marias("duel", "random", "r7=random:7", "--max-groups", "4", "--seed", "extend-me", "-j", "2",
                  "--out", str(out), "--format", "json")
    assert more.returncode == 0, more.stderr
    assert "continuing the duel with sprt.max_groups: 2 -> 4" in more.stderr
    r2 = json.loads(more.stdout)["head-to-head"]
    assert r2["samples"][:2] == r1["samples"] and r2["max_groups"] == 4
    assert r2["groups"] == 4 or r2["decision"] in ("H0", "H1")
    after = _hashes(out)
    assert {k: after[k] for k in before} == before  # the first groups' logs, byte for byte
    assert len(after) == 6 * r2["groups"]
    state = json.loads((out / "tournament.json").read_text())
    assert state["config"]["sprt"]["max_groups"] == 4 and state["id_width"] == 4
    assert state["extensions"][0]["changed"] == ["sprt.max_groups: 2 -> 4"]
    again = marias("table", str(out), "--format", "json")  # the folder alone gives the same result
    assert json.loads(again.stdout)["head-to-head"]["samples"] == r2["samples"]


def _cfg_of(out: Path):
    body = json.loads((out / "tournament.json").read_text())
    cfg = T.config_from_options(["random", "r7=random:7"], format=T.HEAD_TO_HEAD, seed=body["config"]["seed"],
                                max_groups=body["config"]["sprt"]["max_groups"], output=str(out))
    return cfg


def test_unit_ids_keep_their_width_when_the_budget_grows():
    narrow = D.Plan("A", "B", "s", SPRT(max_groups=9999), 4)
    wide = D.Plan("A", "B", "s", SPRT(max_groups=20000), 4)  # extended past 9999: the stored width holds
    assert [u.id for u in narrow.group(12)] == [u.id for u in wide.group(12)]
    assert [u.match_seed for u in narrow.group(12)] == [u.match_seed for u in wide.group(12)]
    assert wide.group(12345)[0].id == "g12345-saab"


# ------------------------------------------------------------------ every table of a duel (issue 25 point 2)

def test_marias_table_works_on_a_duel_folder_its_logs_and_its_log_files(tmp_path):
    out = tmp_path / "d"
    run = marias("duel", "random", "r7=random:7", "--max-groups", "2", "--seed", "tables", "-j", "2", "--out", str(out),
                 "--format", "json", "-q")
    assert run.returncode == 0, run.stderr
    h2h = json.loads(run.stdout)["head-to-head"]
    files = sorted(str(p) for p in (out / "logs").glob("*.jsonl"))
    for args in ([str(out)], [str(out / "logs")], files):
        r = marias("table", *args, "--format", "json")
        assert r.returncode == 0, r.stderr
        assert "not a unit" not in r.stderr and "left out" not in r.stderr, r.stderr
        body = json.loads(r.stdout)
        for name in ("standings", "play", "rating", "cross"):  # one row per bot, whatever seats it held
            assert sorted(row["bot"] for row in body[name]) == ["r7", "random"], (args[:1], name, body[name])
        st = {row["bot"]: row for row in body["standings"]}
        assert st["random"]["partie"] == st["r7"]["partie"] == 12  # A and B sit in every partie of the duel
        # the standings' mean and interval of A are the test's: the same group samples
        assert st["random"]["mean"] == round(h2h["mean"], 2)
        assert st["random"]["±95%"] == round(h2h["ci95_high"] - h2h["mean"], 2)
        assert st["random"]["groše"] == -st["r7"]["groše"]
        (pair,) = body["pairs"]
        assert pair["groups"] == 2 and pair["partie"] == 12
        if args != files:  # the folder (or its logs/) also gives the test's result
            assert body["head-to-head"]["samples"] == h2h["samples"]
    text = marias("table", str(out))
    assert text.returncode == 0 and "Head-to-head: random against r7" in text.stdout and "Standings" in text.stdout
    assert "robot#" not in text.stdout and "random#" not in text.stdout


def test_a_match_log_with_one_bot_in_two_seats_is_one_row(tmp_path):
    logs = tmp_path / "m"
    r = marias("match", "--bot", "random", "--bot", "random", "--bot", "robot", "--partie", "1", "--seed", "7",
               "--log", str(logs), "--sandbox", "none")
    assert r.returncode == 0, r.stderr
    body = json.loads(marias("table", str(logs), "--format", "json").stdout)
    rows = {row["bot"]: row for row in body["standings"]}
    assert sorted(rows) == ["random", "robot"]
    assert rows["random"]["partie"] == rows["robot"]["partie"] == 1
    assert rows["random"]["groše"] == -rows["robot"]["groše"]
    assert rows["random"]["1st"] + rows["random"]["2nd"] + rows["random"]["3rd"] == 1
