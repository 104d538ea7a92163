"""Tournaments (referee/tournaments/tournament.py): configuration and its errors, unit planning, the stored
configuration, and whole tournaments stopped (kill -9, Ctrl-C) and resumed to the same tables."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from referee.tournaments import tournament as T
from referee.rules.partie import shuffled_deck
from tests.files import written_lines

GOOD = """\
name: t
seed: 5
format: gauntlet
gauntlet: r1
partie: 2
arrangements: rotations
time:
  move_ms: 500
  bank_ms: 20000
faults:
  max_faults: 2
bots:
  - name: r1
    command: random:1
  - name: r2
    command: random
  - {name: r3, command: robot}
  - name: ext
    command: [python, bot.py]
    cwd: sub
    env: {A: 1, B: yes}
    move_ms: 900
"""


def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(T.ConfigError) as e:
        T.load_config(write(tmp_path, text))
    return [m.replace(f"{tmp_path}{os.sep}", "") for m in e.value.problems]  # messages start with the path given


# ------------------------------------------------------------------ configuration

def test_good_config(tmp_path):
    cfg = T.load_config(write(tmp_path, GOOD))
    assert (cfg.name, cfg.seed, cfg.format, cfg.gauntlet, cfg.partie, cfg.arrangements) == \
        ("t", "5", "gauntlet", "r1", 2, "rotations")
    assert (cfg.limits.move_ms, cfg.limits.bank_ms, cfg.limits.startup_ms, cfg.max_faults) == (500, 20000, 10000, 2)
    assert [b.name for b in cfg.bots] == ["r1", "r2", "r3", "ext"]
    ext = cfg.bot("ext")
    assert ext.command == ["python", "bot.py"] and ext.env == {"A": "1", "B": "true"} and ext.move_ms == 900
    spec = ext.spec(cfg.base_dir, seed="x")
    assert spec.label == "ext" and spec.argv == ["python", "bot.py"] and spec.cwd == str(tmp_path / "sub")
    assert spec.move_ms == 900 and spec.env == {"A": "1", "B": "true"}
    r2 = cfg.bot("r2").spec(cfg.base_dir, seed="s:u:r2")
    # the built-in random bot gets a seed derived one-way from the unit's (protocol/LOGS.md, Seeds)
    derived = hmac.new(b"s:u:r2", b"marias/derive/bot", hashlib.sha256).hexdigest()[:32]
    assert r2.builtin == "random" and r2.argv[-2:] == ["--seed", derived] and r2.cwd is None
    assert cfg.bot("r1").spec(cfg.base_dir, seed="other").argv[-1] == "1"  # its own seed wins
    assert cfg.output == Path("tournament-t")


@pytest.mark.parametrize("text, expected", [
    ("bots: []\npartei: 2\n", "t.yaml:2: partei: unknown key; did you mean 'partie'?"),
    ("partie: two\nbots: []\n", "t.yaml:1: partie: a whole number is needed, got the string 'two'"),
    ("partie: 0\nbots: []\n", "t.yaml:1: partie: must be at least 1, got 0"),
    ("format: round-robn\nbots: []\n", "t.yaml:1: format: 'round-robn' is not one of round-robin, gauntlet, head-to-head (did you mean 'round-robin'?)"),
    ("arrangements: some\nbots: []\n", "t.yaml:1: arrangements: 'some' is not one of all, rotations, fixed"),
    ("time:\n  move_ms: fast\nbots: []\n", "t.yaml:2: time.move_ms: a whole number is needed, got the string 'fast'"),
    ("time:\n  moves: 3\nbots: []\n", "t.yaml:2: time.moves: unknown key; did you mean 'move_ms'?"),
    ("seed: [1]\nbots: []\n", "t.yaml:1: seed: a seed is a whole number or a non-empty string, got a list"),
])
def test_errors_name_line_and_key(tmp_path, text, expected):
    assert expected in problems(tmp_path, text)


def test_bot_errors(tmp_path):
    text = """\
    bots:
      - name: a
        command: random
      - name: a
        command: random
      - name: b
      - name: bad name
        command: random
      - name: c
        command: {x: 1}
        env:
          X: [1, 2]
        colour: red
    """
    ps = problems(tmp_path, text)
    assert "t.yaml:4: bots[1].name: 'a' is already the name of bots[0]; names must be unique" in ps
    assert "t.yaml:6: bots[2]: 'command' is missing: a built-in (random, random:SEED, robot) or a command line" in ps
    assert any(p.startswith("t.yaml:7: bots[3].name: 'bad name': a bot name is") for p in ps)
    assert "t.yaml:10: bots[4].command: a command is a string or a list of strings, got a mapping" in ps
    assert "t.yaml:12: bots[4].env.X: an environment value is a string or a number, got a list" in ps
    assert any(p.startswith("t.yaml:13: bots[4].colour: unknown key") for p in ps)


def test_too_few_bots_and_gauntlet(tmp_path):
    ps = problems(tmp_path, "bots:\n  - {name: a, command: random}\n  - {name: b, command: random}\n")
    assert ps == ["t.yaml:1: bots: a table seats three bots: list at least three, got 2"]
    three = "\n".join(f"  - {{name: {n}, command: random}}" for n in ("alpha", "beta", "gamma"))
    ps = problems(tmp_path, f"format: gauntlet\ngauntlet: alpa\nbots:\n{three}\n")
    assert ps == ["t.yaml:2: gauntlet: 'alpa' is not the name of a bot (did you mean 'alpha'?)"]
    ps = problems(tmp_path, f"format: gauntlet\nbots:\n{three}\n")
    assert ps == ["t.yaml:1: format: format gauntlet needs 'gauntlet: NAME', the bot that meets every pair of the others"]
    ps = problems(tmp_path, f"gauntlet: alpha\nbots:\n{three}\n")
    assert ps == ["t.yaml:1: gauntlet: 'gauntlet' only goes with format: gauntlet"]


def test_yaml_syntax_duplicates_and_empty(tmp_path):
    ps = problems(tmp_path, "bots:\n  - name: a\n    command: [random\nseed: 1\n")
    assert len(ps) == 1 and ps[0].startswith("t.yaml:4: not valid YAML")
    ps = problems(tmp_path, "seed: 1\nbots: []\nseed: 2\n")
    assert ps == ["t.yaml:3: seed: duplicate key (first given on line 1)"]
    assert problems(tmp_path, "") == ["t.yaml:1: (top level): the file is empty; a tournament needs at least 'bots'"]
    assert problems(tmp_path, "- a\n- b\n") == ["t.yaml:1: (top level): the configuration is a mapping of keys (name, bots, format, ...), got a list"]


def test_deal_book(tmp_path):
    decks = [" ".join(str(c) for c in shuffled_deck(f"book:{i}")) for i in range(3)]
    (tmp_path / "book.txt").write_text("# three decks\n" + "\n".join(decks) + "\n")
    bots = "\n".join(f"  - {{name: {n}, command: random}}" for n in "abcd")
    cfg = T.load_config(write(tmp_path, f"seed: 1\npartie: 3\ndecks:\n  book: book.txt\n  scope: tournament\nbots:\n{bots}\n"))
    assert len(cfg.decks) == 3 and T.deck_slots(cfg) == 3
    units = T.plan_units(cfg)
    assert {u.deck_slot for u in units if u.partie == 2} == {1}  # every table plays line 2 in its partie 2
    ps = problems(tmp_path, f"partie: 1\ndecks:\n  book: book.txt\nbots:\n{bots}\n")
    assert ps == ["t.yaml:3: decks.book: the deal book holds 3 deck(s) but this tournament needs 4 (one per table and partie index)"]
    (tmp_path / "bad.txt").write_text(decks[0] + "\n" + decks[1].replace("Ah", "Zz") + "\n")
    ps = problems(tmp_path, f"decks:\n  book: bad.txt\nbots:\n{bots}\n")
    assert len(ps) == 1 and ps[0].startswith("t.yaml:2: decks.book: bad deal book:") and "bad.txt:2" in ps[0]
    ps = problems(tmp_path, f"decks:\n  book: missing.txt\nbots:\n{bots}\n")
    assert len(ps) == 1 and ps[0].startswith("t.yaml:2: decks.book: cannot read the deal book")


def test_config_from_flags():
    cfg = T.config_from_options(["a=random", "b=random:3", "robot", "js=node examples/js/bot.js"],
                                format="gauntlet", gauntlet="js", partie=2, move_ms=300, concurrency=3)
    assert [b.name for b in cfg.bots] == ["a", "b", "robot", "js"]
    assert cfg.bot("js").command == "node examples/js/bot.js" and cfg.limits.move_ms == 300
    assert (cfg.format, cfg.gauntlet, cfg.partie, cfg.concurrency) == ("gauntlet", "js", 2, 3)
    with pytest.raises(T.ConfigError) as e:
        T.config_from_options(["a=random", "b=random", "node bot.js"])
    assert "--bot 'node bot.js': give NAME=COMMAND" in str(e.value)
    with pytest.raises(T.ConfigError) as e:
        T.config_from_options(["a=random", "b=random", "c=random"], arrangements="every")
    assert str(e.value) == "command line: arrangements: 'every' is not one of all, rotations, fixed"


def test_missing_program_is_reported_with_its_line(tmp_path):
    cfg = T.load_config(write(tmp_path, """\
    bots:
      - {name: a, command: random}
      - {name: b, command: random}
      - name: c
        command: no-such-program-here --x
    """))
    assert [m.replace(f"{tmp_path}{os.sep}", "") for m in T.check_commands(cfg)] == ["t.yaml:5: bots[2].command: program 'no-such-program-here' not found on PATH"]


# ------------------------------------------------------------------ planning

def names_cfg(n: int, **options) -> T.TournamentConfig:
    options.setdefault("seed", "1")
    return T.config_from_options([f"b{i}=random" for i in range(1, n + 1)], **options)


def test_round_robin_of_four_is_four_tables_of_six_arrangements():
    cfg = names_cfg(4)
    units = T.plan_units(cfg)
    assert T.tables(cfg) == [("b1", "b2", "b3"), ("b1", "b2", "b4"), ("b1", "b3", "b4"), ("b2", "b3", "b4")]
    assert len(units) == 24 and len({u.id for u in units}) == 24
    for t in range(1, 5):
        at = [u for u in units if u.table == t]
        assert len(at) == 6
        assert {u.seats for u in at} == {tuple(p) for p in __import__("itertools").permutations(at[0].table_bots)}
        assert len({(u.match_seed, u.deck_slot) for u in at}) == 1  # one starting deck per table: duplicate
    assert len({u.match_seed for u in units}) == 4
    for u in units:  # each bot sits in each seat equally often at its table
        assert sorted(u.seats) == sorted(u.table_bots)


def test_gauntlet_and_options():
    cfg = names_cfg(5, format="gauntlet", gauntlet="b3", partie=2, arrangements="rotations")
    tbs = T.tables(cfg)
    assert len(tbs) == 6 and all(t[0] == "b3" for t in tbs)
    assert {frozenset(t[1:]) for t in tbs} == {frozenset(p) for p in __import__("itertools").combinations(["b1", "b2", "b4", "b5"], 2)}
    units = T.plan_units(cfg)
    assert len(units) == 6 * 3 * 2
    assert [u.partie for u in units[:18]] == [1] * 18  # partie index first
    assert {u.arrangement for u in units} == {(0, 1, 2), (1, 2, 0), (2, 0, 1)}
    assert T.deck_slots(cfg) == 12 and len({u.deck_slot for u in units}) == 12
    fixed = T.plan_units(names_cfg(3, arrangements="fixed", deck_scope="tournament", partie=3))
    assert [u.seats for u in fixed] == [("b1", "b2", "b3")] * 3 and [u.deck_slot for u in fixed] == [0, 1, 2]


def test_stored_configuration_refuses_changes(tmp_path):
    cfg = names_cfg(3, output=str(tmp_path / "out"))
    assert T.prepare_output(cfg) == "new"
    state = json.loads((tmp_path / "out" / T.STATE_FILE).read_text())
    assert state["units"] == 6 and state["config"] == T.canonical(cfg)
    same = names_cfg(3, output=str(tmp_path / "out"), concurrency=7)  # how it runs is not what it plays
    assert T.prepare_output(same, resume=True) == "resume"
    changed = T.config_from_options(["b1=random", "b2=random:9", "b3=random"], output=str(tmp_path / "out"), move_ms=50)
    with pytest.raises(T.TournamentError) as e:
        T.prepare_output(changed)
    msg = str(e.value)
    assert 'bots[1].command: "random" -> "random:9"' in msg and "time.move_ms: 2000 -> 50" in msg
    assert "bots[0]" not in msg
    with pytest.raises(T.TournamentError, match="nothing to resume"):
        T.prepare_output(names_cfg(3, output=str(tmp_path / "none")), resume=True)


def test_diff_config_added_and_removed():
    a = T.canonical(names_cfg(3))
    b = T.canonical(names_cfg(4))
    assert T.diff_config(a, b) == ['bots[3].command: added ("random")', "bots[3].cwd: added (null)",
                                   "bots[3].env: added ({})", "bots[3].move_ms: added (null)", 'bots[3].name: added ("b4")',
                                   "bots[3].startup_ms: added (null)",
                                   f'fingerprints.b4: added ("{b["fingerprints"]["b1"]}")']  # one program: one fingerprint


# ------------------------------------------------------------------ whole tournaments (processes)

REPO = Path(__file__).resolve().parents[1]


def marias(*args, **kw):
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True,
                          cwd=kw.pop("cwd", REPO), timeout=kw.pop("timeout", 300), **kw)


def tournament_args(seed: str, out: Path, *extra) -> list[str]:
    # three random bots seeded from the tournament seed: 1 table x 6 arrangements = 6 partie
    return ["tournament", "-b", "r1=random", "-b", "r2=random", "-b", "r3=random", "--seed", seed,
            "--out", str(out), "--concurrency", "2", *extra]


def complete_logs(out: Path) -> list[Path]:
    done = []
    for p in sorted((out / "logs").glob("*.jsonl")):
        lines = written_lines(p)  # a footer still being written is not there yet
        if lines and lines[-1].startswith('{"type":"footer"'):
            done.append(p)
    return done


def processes_with(marker: str) -> list[str]:
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in cmd:
                found.append(f"{d}: {cmd}")
    return found


def wait_no_processes(marker: str, timeout: float = 20.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = processes_with(marker)
        if not left:
            return []
        time.sleep(0.2)
    return processes_with(marker)


def bot_markers(seed: str) -> list[str]:
    """What the command lines of tournament_args' bots hold: their --seed, a hash of the tournament
    seed (the workers' command lines hold the seed itself)."""
    cfg = T.config_from_options(["r1=random", "r2=random", "r3=random"], seed=seed)
    return [T.unit_seed(cfg, u, n) for u in T.plan_units(cfg) for n in u.seats]


def wait_no_bots(seed: str, timeout: float = 20.0) -> list[str]:
    deadline = time.monotonic() + timeout
    markers = [seed, *bot_markers(seed)]
    while True:
        left = [p for m in markers for p in processes_with(m)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def wait_for_logs(proc, out: Path, n: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while len(complete_logs(out)) < n:
        assert proc.poll() is None, "the tournament ended before it could be stopped"
        assert time.monotonic() < deadline, "no partie finished in time"
        time.sleep(0.05)


def comparable_tables(path: Path) -> str:
    r = marias("table", str(path), "--table", "standings", "--table", "cross", "--table", "rating")
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
def test_kill_9_resume_gives_the_uninterrupted_totals(tmp_path):
    seed = f"k9-{uuid.uuid4().hex[:8]}"
    whole = marias(*tournament_args(seed, tmp_path / "whole"))
    assert whole.returncode == 0, whole.stderr
    assert len(complete_logs(tmp_path / "whole")) == 6

    out = tmp_path / "cut"
    proc = subprocess.Popen([sys.executable, "-m", "referee.cli", *tournament_args(seed, out), "--quiet"],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for_logs(proc, out, 2)
    proc.kill()  # kill -9: no clean-up at all in the tournament process
    proc.wait()
    assert wait_no_bots(seed) == [], "a worker or bot outlived the killed tournament"
    done = complete_logs(out)
    assert 2 <= len(done) < 6
    # damage two finished partie: one log cut short (as by a crash while writing), one deleted
    lines = done[0].read_text().splitlines(keepends=True)
    done[0].write_text("".join(lines[:-2]) + lines[-2][:25])
    done[1].unlink()

    resumed = marias(*tournament_args(seed, out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr and "playing it again" in resumed.stderr
    assert len(complete_logs(out)) == 6 and not list((out / "logs").glob("*.invalid"))
    assert comparable_tables(out) == comparable_tables(tmp_path / "whole")
    # the tables printed at the end are exactly what `marias table` rebuilds from the logs
    table = marias("table", str(out))
    assert table.returncode == 0 and table.stdout == resumed.stdout
    body = json.loads(marias("table", str(out), "--format", "json").stdout)
    assert {r["bot"]: r["partie"] for r in body["standings"]} == {"r1": 6, "r2": 6, "r3": 6}
    assert sum(r["groše"] for r in body["standings"]) == 0
    # duplicate: the six arrangements started from one deck
    decks = {json.loads(p.read_text().splitlines()[2])["deck"].__str__() for p in complete_logs(out)}  # deal 1
    assert len(decks) == 1
    # running it again changes nothing; a changed configuration is refused, saying what changed
    again = marias(*tournament_args(seed, out))
    assert again.returncode == 0 and again.stdout == resumed.stdout
    other = marias(*tournament_args(seed + "x", out))
    assert other.returncode == 2 and f'seed: "{seed}" -> "{seed}x"' in other.stderr


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
def test_ctrl_c_stops_cleanly(tmp_path):
    seed = f"int-{uuid.uuid4().hex[:8]}"
    out = tmp_path / "t"
    # a terminal's Ctrl-C reaches the whole foreground process group: the tournament and its workers
    proc = subprocess.Popen([sys.executable, "-m", "referee.cli", *tournament_args(seed, out)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_for_logs(proc, out, 1)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "stopped:" in stderr and "run the same command" in stderr
    assert stdout == ""
    assert wait_no_bots(seed) == []
    finished = complete_logs(out)
    logs = sorted((out / "logs").glob("*.jsonl"))
    assert logs == finished  # partial logs are not left to be counted
    leftovers = {p.name.split(".")[0] for p in (out / "logs").iterdir()}
    assert leftovers == {p.name.split(".")[0] for p in finished}  # nor their bots' stderr files


# ------------------------------------------------------------------ the pool survives its jobs

def _job(kind):
    if kind == "ok":
        return 42
    if kind == "raise":
        raise RuntimeError("broken on purpose")
    if kind == "exit":
        os._exit(3)
    if kind == "sleep":
        time.sleep(600)
    if kind == "request-then-die":  # as if the bot at seat 1 killed its worker while on move
        r, w = os.pipe()
        os.write(w, b'{"type":"event"}\n{"type":"request","id":3,"view":{"seat":1,"hand":[]}}\n')
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "writev-then-die":  # the same, written with writev: seat 2
        r, w = os.pipe()
        os.writev(w, [b'{"type":"event"}\n', b'{"type":"request","id":4,"view":{"seat":2}}\n'])
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(600)
    raise AssertionError(kind)


def test_pool_outcomes_and_one_retry():
    from referee.seats.pool import Pool, Task

    kinds = ["ok", "raise", "exit", "sleep", "request-then-die", "stop", "ok", "writev-then-die"]
    tasks = [Task(f"{i}-{k}", k, wall_s=600 if k != "sleep" else 0.5, seats=("x", "y", "z")) for i, k in enumerate(kinds)]
    outcomes, retried = {}, []
    Pool(_job, 3).run(tasks, lambda o: outcomes.__setitem__(o.key, o), retried.append)
    assert set(outcomes) == {t.key for t in tasks}
    assert not [o for o in retried if o.key.endswith("-ok")], retried
    got = {k: (o.status, o.attempts, o.culprit) for k, o in outcomes.items()}
    assert got["0-ok"] == ("ok", 1, None) and outcomes["0-ok"].result == 42 and got["6-ok"] == ("ok", 1, None)
    assert got["1-raise"] == ("error", 2, None) and "RuntimeError: broken on purpose" in outcomes["1-raise"].why
    assert got["2-exit"] == ("died", 2, None) and "exit status 3" in outcomes["2-exit"].why
    assert got["3-sleep"] == ("timeout", 2, None)
    assert got["4-request-then-die"] == ("died", 2, "y (seat 1, on move)")
    assert "SIGKILL" in outcomes["4-request-then-die"].why
    assert got["5-stop"] == ("stopped", 2, None)
    assert got["7-writev-then-die"] == ("died", 2, "z (seat 2, on move)")
    assert sorted(o.key for o in retried) == sorted(k for k in got if not k.endswith("-ok"))  # each failure once more


HOSTILE = REPO / "tests" / "fault_bots" / "hostile_worker.py"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
@pytest.mark.parametrize("mode, status", [("kill", "died"), ("walk", "died"), ("stop", "stopped")])
def test_a_bot_that_breaks_its_worker_costs_one_unit(tmp_path, mode, status):
    """Run with the sandbox off: the hostile bot must see its worker to attack it."""
    marker = f"hw-{mode}-{uuid.uuid4().hex[:8]}"
    out = tmp_path / "t"
    args = ["tournament", "-b", "a=random", "-b", "b=random", "-b", f"h={sys.executable} {HOSTILE} {mode} 0 {marker}",
            "--arrangements", "rotations", "--seed", "hw", "--out", str(out), "--concurrency", "2", "--sandbox", "none"]
    r = marias(*args)
    assert r.returncode == 1, r.stderr
    # the table (a, b, h) in rotation (2, 0, 1) is the one unit with h at seat 0, where it attacks
    bad = "t01-p01-s201"
    failed = [line for line in r.stderr.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 1 and failed[0].startswith(f"failed: {bad}: {status}:"), r.stderr
    assert "most likely responsible: h (seat 0, on move)" in failed[0] and "(attempt" in failed[0]
    assert f"{bad}: {status}:" in r.stderr and "trying it once more" in r.stderr
    assert wait_no_processes(marker) == [], "a bot of the broken unit outlived it"
    # the other two units are intact and are all the tables count
    assert [p.name for p in complete_logs(out)] == ["t01-p01-s012.jsonl", "t01-p01-s120.jsonl"]
    assert marias("validate", str(out / "logs")).returncode == 0
    tbl = marias("table", str(out), "--format", "json")
    table = json.loads(tbl.stdout)
    assert {row["bot"]: row["partie"] for row in table["standings"]} == {"a": 2, "b": 2, "h": 2}
    assert tbl.stderr.splitlines() == [f"note: {out}: 1 of the 3 units in its manifest have no log (not played yet)"]
    entries = [json.loads(line) for line in (out / T.JOURNAL_FILE).read_text().splitlines()]
    assert [(e["id"], e["status"], e["culprit"], e["attempts"]) for e in entries if e["status"] == "failed"] == \
        [(bad, "failed", "h (seat 0, on move)", 2)]  # tried twice (stderr groups failures by cause, without the count)
    # a resume retries the failed unit (and only it)
    again = marias(*args)
    assert again.returncode == 1
    assert f"{bad}: failed last time" in again.stderr and "1 partie failed" in again.stderr
    assert wait_no_processes(marker) == []


# ------------------------------------------------------------------ secret seed, validation in the worker

def test_without_a_seed_a_secret_one_is_drawn_printed_and_kept(tmp_path):
    import re

    out = tmp_path / "t"
    args = ["tournament", "-b", "r1=random", "-b", "r2=random", "-b", "r3=random", "--arrangements", "fixed",
            "--out", str(out)]
    first = marias(*args)
    assert first.returncode == 0, first.stderr
    m = re.search(r"^seed ([0-9a-f]{32}) \(drawn at random; kept in ", first.stderr, re.M)
    assert m, first.stderr
    seed = m.group(1)
    state = json.loads((out / T.STATE_FILE).read_text())
    assert state["config"]["seed"] == seed and state["seed_drawn"] is True
    log = next((out / "logs").glob("*.jsonl"))
    before = log.read_text().splitlines()
    assert json.loads(before[-1])["seed"].startswith(seed)  # revealed in the footer (LOGS.md, Seeds)
    assert seed not in before[0]  # the header holds only the commitment
    assert all(seed not in json.dumps(b["command"]) for b in json.loads(before[0])["bots"])
    log.unlink()
    again = marias(*args)  # no seed given: the stored one, so the same partie again
    assert again.returncode == 0, again.stderr
    assert f"seed {seed} (stored;" in again.stderr
    after = log.read_text().splitlines()
    assert [json.loads(x).get("deck") for x in after[1:-1]] == [json.loads(x).get("deck") for x in before[1:-1]]
    assert json.loads(after[-1])["totals"] == json.loads(before[-1])["totals"]
    other = T.config_from_options(["r1=random", "r2=random", "r3=random"], output=str(tmp_path / "u"))
    T.prepare_output(other)
    assert other.seed != seed and re.fullmatch(r"[0-9a-f]{32}", other.seed)
    assert all(other.seed not in T.unit_seed(other, u, "r1") for u in T.plan_units(other))


def test_the_worker_validates_and_the_parent_checks_cheaply(tmp_path):
    cfg = names_cfg(3, arrangements="fixed", output=str(tmp_path / "t"), move_ms=1000)
    T.prepare_output(cfg)
    (unit,) = T.plan_units(cfg)
    (tmp_path / "t" / "logs").mkdir()
    res = T.play_unit(T.unit_job(cfg, unit, tmp_path / "t" / "logs"))
    path = T.unit_log(cfg.output, unit)
    assert res["valid"] is None and res["sha256"] == T.file_sha256(path) and sum(res["totals"]) == 0
    assert T.quick_check_unit_log(path, unit, res) is None
    lines = path.read_text().splitlines(keepends=True)
    deal = json.loads(lines[2])
    deal["result"]["payments"] = [p * 2 for p in deal["result"]["payments"]]
    path.write_text("".join(lines[:2]) + json.dumps(deal) + "\n" + "".join(lines[3:]))
    assert T.quick_check_unit_log(path, unit, res) == "the log changed after its worker validated it"
    assert T.check_unit_log(path, unit) is not None  # the full check finds what was changed
    path.write_text("".join(lines[:-1]))
    assert T.quick_check_unit_log(path, unit, res) == "incomplete (no footer)"
    assert T.unit_wall_seconds(cfg, unit) == (3 * 4 * 10_000 + 12 * T.MAX_DECISIONS_PER_DEAL * 1000) / 1000 + T.UNIT_MARGIN_S


def test_the_seal_hook_passes_the_log_lines_to_the_chain_check(tmp_path, monkeypatch):
    import types

    seen = []

    def chain_problems(lines, ends_with_newline=True):
        seen.append((list(lines), ends_with_newline))
        return [(n, "broken") for n, line in enumerate(lines, 1) if b"bad" in line]

    monkeypatch.setitem(sys.modules, "referee.logs.seal", types.SimpleNamespace(chain_problems=chain_problems))
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"type":"header"}\n{"type":"footer"}\n')
    assert T.check_chain(plain) is None and seen == []  # not sealed: nothing to check
    sealed = tmp_path / "sealed.jsonl"
    sealed.write_text('{"type":"header","chain":"a"}\n{"type":"bad","chain":"b"}\n{"type":"footer","chain":"c"}\n')
    assert T.check_chain(sealed) == "line 2: broken"
    assert seen == [([b'{"type":"header","chain":"a"}', b'{"type":"bad","chain":"b"}',
                      b'{"type":"footer","chain":"c"}'], True)]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
def test_a_bot_that_kills_its_worker_while_starting_is_named(tmp_path):
    marker = f"hw-hello-{uuid.uuid4().hex[:8]}"
    h = f"h={sys.executable} {HOSTILE} hello 0 {marker} {tmp_path / 'starts'}"
    # the sandbox off: in its own pid namespace the bot could not even see its worker
    base = ["-b", "a=random", "-b", "b=random", "-b", h, "--arrangements", "fixed", "--seed", "hw", "--concurrency", "1",
            "--sandbox", "none"]
    # the pre-flight check passes (its first start is honest); both attempts at the unit fail at h's hello
    r = marias("tournament", *base, "--out", str(tmp_path / "t"))
    assert r.returncode == 1, r.stderr
    failed = [line for line in r.stderr.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 1 and failed[0].startswith("failed: t01-p01-s012: died: its worker died (killed by SIGKILL)")
    assert "most likely responsible: h (seat 2, starting)" in failed[0]
    assert wait_no_processes(marker) == []
    # killing its parent in the pre-flight check ends only the check's worker, and names it
    always = h + " always"
    r = marias("tournament", *base[:4], "-b", always, *base[6:], "--out", str(tmp_path / "u"))
    assert r.returncode == 2
    assert "error: bot h (seat 2, starting): the pre-flight check died: its worker died (killed by SIGKILL)" in r.stderr
    assert not (tmp_path / "u" / "logs").exists()
    m = subprocess.run([sys.executable, "-m", "referee.cli", "match", "-b", "random", "-b", always, "-b", "robot",
                        "--sandbox", "none"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert m.returncode == 2 and "error: bot h (seat 1, starting): the pre-flight check died" in m.stderr
    assert wait_no_processes(marker) == []
