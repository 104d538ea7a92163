"""Who a bot is and whether it can play (issue 10): fingerprints (referee/seats/identity.py), the
pre-flight check (referee/matches/preflight.py) run by `marias match` and `marias tournament`, built-in
bots that a local `bots/` folder cannot replace, one identity across match and tournament logs,
and a maximum for every number."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from referee.seats import identity as I
from referee.matches.match import BotSpec, Limits
from referee.matches.preflight import check_bots, printable

REPO = Path(__file__).resolve().parents[1]
FAULTY = REPO / "tests" / "fault_bots" / "faulty.py"


def marias(*args, cwd=None, timeout=300):
    # -I: as the installed `marias` command runs, the folder it is run from is not on the module path
    return subprocess.run([sys.executable, "-I", "-m", "referee.cli", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, timeout=timeout)


# ------------------------------------------------------------------ fingerprints

def make_bot(folder: Path, body: str = "print('x')\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(body)
    lib = folder / "lib"
    lib.mkdir(exist_ok=True)
    (lib / "a.txt").write_text("weights 1\n")
    (lib / "sub").mkdir(exist_ok=True)
    (lib / "sub" / "b.txt").write_text("weights 2\n")
    return folder


def fp(folder: Path, *extra: str) -> str:
    return I.fingerprint([sys.executable, "bot.py", "--data", "lib", *extra], str(folder))


def test_fingerprint_follows_the_bots_files_not_its_folder(tmp_path):
    a = fp(make_bot(tmp_path / "a"))
    assert a == fp(make_bot(tmp_path / "b"))  # the same files elsewhere: the same bot
    assert len(a) == 64 and a == fp(tmp_path / "a")  # deterministic
    # pycache and hidden files are no part of the bot
    (tmp_path / "a" / "lib" / "__pycache__").mkdir()
    (tmp_path / "a" / "lib" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (tmp_path / "a" / "lib" / ".cache").write_text("?")
    assert fp(tmp_path / "a") == a
    # one byte of the script, of a file in a named folder, or a new file there: another bot
    (tmp_path / "b" / "bot.py").write_text("print('y')\n")
    assert fp(tmp_path / "b") != a
    (tmp_path / "c").mkdir()
    make_bot(tmp_path / "c")
    (tmp_path / "c" / "lib" / "sub" / "b.txt").write_text("weights 3\n")
    assert fp(tmp_path / "c") != a
    make_bot(tmp_path / "d")
    (tmp_path / "d" / "lib" / "new.txt").write_text("")
    assert fp(tmp_path / "d") != a
    # a renamed file inside the folder is a change too (its relative path is hashed)
    make_bot(tmp_path / "e")
    (tmp_path / "e" / "lib" / "a.txt").rename(tmp_path / "e" / "lib" / "z.txt")
    assert fp(tmp_path / "e") != a


def test_class_path_folders_are_hashed_and_code_arguments_are_not_files(tmp_path):
    make_bot(tmp_path)
    cp = I.fingerprint(["java", "-cp", f"lib{':'}bot.py", "Main"], str(tmp_path)) if shutil.which("java") else None
    named = [n.given for n in I.named_paths(["java", "-cp", "lib:extra.jar", "Main"], str(tmp_path))]
    assert named == ["java", "lib", "extra.jar"]
    names = [n.given for n in I.named_paths([sys.executable, "-c", "import x/y.py", "-m", "mod.py", "./run.py"])]
    assert names == [sys.executable, "./run.py"]
    if cp is not None:
        (tmp_path / "lib" / "a.txt").write_text("weights 9\n")
        assert I.fingerprint(["java", "-cp", "lib:bot.py", "Main"], str(tmp_path)) != cp


def test_builtin_fingerprint_is_the_installed_package(tmp_path):
    robot = BotSpec.parse("robot").identity()["fingerprint"]
    assert robot == BotSpec.parse_named("robot").identity()["fingerprint"]
    assert BotSpec.parse("random:1").identity()["fingerprint"] == BotSpec.parse("random:2").identity()["fingerprint"]
    listing = I.listing([], builtin="robot")
    assert listing[0] == "builtin robot" and any(line.startswith("pkg bots robot.py ") for line in listing)


def test_names_from_name_equals_command():
    assert BotSpec.parse_named("js=node examples/js/bot.js").label == "js"
    assert BotSpec.parse_named("node examples/js/bot.js").label == "bot"
    assert BotSpec.parse_named("random:5").label == "random-5"
    assert BotSpec.parse_named("python3 bot.py --x=1").argv == ["python3", "bot.py", "--x=1"]  # not a NAME=


# ------------------------------------------------------------------ pre-flight

def test_preflight_names_the_bot_its_command_and_stderr(tmp_path):
    spaced = tmp_path / "my bot.py"
    spaced.write_text("import sys\nsys.stderr.write('loading\\x1b[31m weights\\n')\nsys.exit(4)\n")
    specs = [BotSpec.parse_named(f"nope={sys.executable} ./nope.py"),
             BotSpec.parse_named(f"spaces={sys.executable} {tmp_path}/my bot.py"),
             BotSpec.parse_named(f"quoted={sys.executable} '{spaced}'"),
             BotSpec.parse_named(f"silent={sys.executable} -c 'import time; time.sleep(30)'"),
             BotSpec.parse_named(f"start={sys.executable} {FAULTY} exit-at-start"),
             BotSpec.parse_named("robot")]
    specs[0].cwd = str(tmp_path)
    problems = check_bots(specs, Limits(startup_ms=1500))
    assert len(problems) == 5, problems
    assert problems[0].startswith("bot 'nope' (") and "file './nope.py' not found (from " in problems[0]
    assert "file 'bot.py' not found (from the current folder)" in problems[1]
    assert f"a path with spaces must be quoted: '{tmp_path}/my bot.py'" in problems[1]
    assert problems[2].startswith("bot 'quoted'") and "ended before answering hello (exit status 4)" in problems[2]
    assert "loading\\x1b[31m weights" in problems[2]  # its stderr, the escape sequence made harmless
    assert "\x1b" not in "".join(problems)
    assert problems[3].startswith("bot 'silent'") and "no hello answer within the start-up limit (1500 ms)" in problems[3]
    assert problems[4].startswith("bot 'start'") and "exit status 3" in problems[4]


def test_printable_escapes_control_characters():
    assert printable("a\x1b]0;x\x07b\nc\td\x9b") == "a\\x1b]0;x\\x07b\nc\td\\x9b"


def test_match_refuses_missing_bots_before_playing(tmp_path):
    r = marias("match", "-b", "./nope", "-b", "robot", "-b", "random", "--log", str(tmp_path / "logs"))
    assert r.returncode == 2 and "error: bot 'nope' (./nope): program './nope' not found" in r.stderr
    assert not (tmp_path / "logs").exists()  # nothing was played
    r = marias("match", "-b", f"x={sys.executable} {FAULTY} exit-at-start", "-b", "robot", "-b", "random")
    assert r.returncode == 2 and "bot 'x'" in r.stderr and "ended before answering hello (exit status 3)" in r.stderr


def test_tournament_refuses_a_yaml_command_naming_a_missing_file(tmp_path):
    (tmp_path / "t.yaml").write_text(textwrap.dedent("""\
        seed: 1
        bots:
          - {name: a, command: random}
          - {name: b, command: random}
          - name: c
            command: python3 ./nope.py
        """))
    r = marias("tournament", str(tmp_path / "t.yaml"), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert f"error: {tmp_path}/t.yaml:6: bots[2].command: file './nope.py' not found (from {tmp_path})" in r.stderr
    assert not (tmp_path / "out" / "logs").exists()


def test_a_local_bots_folder_does_not_replace_the_builtins(tmp_path):
    evil = tmp_path / "bots"
    evil.mkdir()
    (evil / "__init__.py").write_text("")
    (evil / "__main__.py").write_text("print('{\"type\":\"hello\",\"protocol\":1,\"name\":\"impostor\"}')\n"
                                     "import sys; [print('{\"type\":\"action\",\"id\":0,\"action\":\"x\"}') for l in sys.stdin]\n")
    assert BotSpec.parse("robot").argv[1:4] == ["-I", "-m", "bots"]
    r = marias("match", "-b", "robot", "-b", "random", "-b", "random", "--json", "--log", str(tmp_path / "logs"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["names"] == ["robot", "random", "random"] and not any(s["faults"] for s in out["seats"])


# ------------------------------------------------------------------ one identity over match and tournament logs

def test_one_bot_is_one_row_over_match_and_tournament_logs(tmp_path):
    m = marias("match", "-b", "robot", "-b", "r1=random:1", "-b", "r2=random:2", "--seed", "4", "--log", str(tmp_path / "m"))
    assert m.returncode == 0, m.stderr
    header = json.loads(next((tmp_path / "m").glob("*.jsonl")).read_text().splitlines()[0])
    robot_fp = BotSpec.parse("robot").identity()["fingerprint"]
    assert [b["label"] for b in header["bots"]] == ["robot", "r1", "r2"]
    assert header["bots"][0]["fingerprint"] == robot_fp
    t = marias("tournament", "-b", "robot", "-b", "r1=random:1", "-b", "r3=random:3", "--arrangements", "fixed",
               "--seed", "4", "--out", str(tmp_path / "t"), "--quiet")
    assert t.returncode == 0, t.stderr
    table = json.loads(marias("table", str(tmp_path / "m"), str(tmp_path / "t"), "--format", "json").stdout)
    rows = {r["bot"]: r for r in table["standings"]}
    assert set(rows) == {"robot", "r1", "r2", "r3"}
    assert rows["robot"]["partie"] == 2 and rows["robot"]["fingerprint"] == robot_fp[:I.SHORT]


def test_changed_bot_is_refused_on_resume_and_allowed_on_request(tmp_path):
    bot = tmp_path / "bot.py"
    bot.write_text("import runpy, sys\nsys.argv = ['bots', 'random']\nrunpy.run_module('bots', run_name='__main__')\n")
    args = ["tournament", "-b", f"ext={sys.executable} {bot}", "-b", "a=random", "-b", "b=random", "--seed", "c",
            "--arrangements", "rotations", "--out", str(tmp_path / "out"), "--quiet", "--concurrency", "1"]
    first = marias(*args)
    assert first.returncode == 0, first.stderr
    old = I.fingerprint([sys.executable, str(bot)])
    logs = sorted((tmp_path / "out" / "logs").glob("*.jsonl"))
    logs[0].unlink()  # one unit to play again
    bot.write_text(bot.read_text() + "# version 2\n")
    new = I.fingerprint([sys.executable, str(bot)])
    refused = marias(*args)
    assert refused.returncode == 2
    assert f'fingerprints.ext: "{old}" -> "{new}"' in refused.stderr and "--allow-changed-bots" in refused.stderr
    allowed = marias(*args, "--allow-changed-bots")
    assert allowed.returncode == 0, allowed.stderr
    table = json.loads(marias("table", str(tmp_path / "out"), "--format", "json").stdout)
    rows = {r["bot"]: r["partie"] for r in table["standings"]}
    assert rows == {f"ext@{old[:I.SHORT]}": 2, f"ext@{new[:I.SHORT]}": 1, "a": 3, "b": 3}
    state = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert state["config"]["fingerprints"]["ext"] == new and state["bot_changes"]


# ------------------------------------------------------------------ numbers

@pytest.mark.parametrize("args, message", [
    (["match", "-b", "random", "-b", "random", "-b", "random", "--partie", "1e20"],
     "Invalid value for '--partie' / '-n': Input should be a valid integer"),
    (["match", "-b", "random", "-b", "random", "-b", "random", "--partie", "100001"],
     "Invalid value for '--partie' / '-n': Input should be less than or equal to 100000"),
    (["match", "-b", "random", "-b", "random", "-b", "random", "--move-time", "99999999999999999999"],
     "Invalid value for '--move-time': Input should be less than or equal to 600000"),
    (["tournament", "-b", "random", "-b", "robot", "-b", "random:2", "--partie", "99999999999999"],
     "partie: must be at most 100000, got 99999999999999"),
    (["tournament", "-b", "random", "-b", "robot", "-b", "random:2", "--move-time", "99999999999999999999"],
     "time.move_ms: must be at most 600000, got 99999999999999999999"),
])
def test_every_number_has_a_maximum(args, message):
    r = marias(*args)
    text = " ".join(re.sub("[│╭╮╰╯─]", " ", r.stderr).split())  # the message, out of its box
    assert r.returncode == 2 and message in text, r.stderr


def test_yaml_numbers_have_a_maximum(tmp_path):
    from referee.tournaments import tournament as T

    (tmp_path / "t.yaml").write_text("time:\n  move_ms: 99999999999999999999\nfaults:\n  max_faults: 1000\n"
                                     "bots:\n  - {name: a, command: random, startup_ms: 700000}\n")
    with pytest.raises(T.ConfigError) as e:
        T.load_config(tmp_path / "t.yaml")
    ps = [p.replace(f"{tmp_path}/", "") for p in e.value.problems]
    assert "t.yaml:2: time.move_ms: must be at most 600000, got 99999999999999999999" in ps
    assert "t.yaml:4: faults.max_faults: must be at most 100, got 1000" in ps
    assert "t.yaml:6: bots[0].startup_ms: must be at most 600000, got 700000" in ps


# ------------------------------------------------------------------ issue 22, item 4: the fingerprint follows the code

BOT_IMPORTING = "import fph\nimport runpy, sys\nsys.argv = ['bots', 'random']\nrunpy.run_module('bots', run_name='__main__')\n"


def make_importing_bot(root: Path) -> Path:
    (root / "fp2").mkdir(parents=True, exist_ok=True)
    (root / "fp2" / "bot.py").write_text(BOT_IMPORTING)
    (root / "fp2" / "fph.py").write_text("HELPER = 1\n")
    return root


def test_the_fingerprint_covers_the_folder_of_the_bots_script(tmp_path):
    a = make_importing_bot(tmp_path / "a")
    argv = ["python3", "fp2/bot.py"]
    first = I.fingerprint(argv, str(a))
    assert first == I.fingerprint(argv, str(make_importing_bot(tmp_path / "b")))  # the same files elsewhere
    assert "folder fph.py " + I.file_sha256(a / "fp2" / "fph.py") in I.listing(argv, str(a))
    # what changes without the bot changing is no part of it: caches, version control, marias's output
    (a / "fp2" / "__pycache__").mkdir()
    (a / "fp2" / "__pycache__" / "fph.cpython-311.pyc").write_bytes(b"\0")
    (a / "fp2" / ".git").mkdir()
    (a / "fp2" / ".git" / "HEAD").write_text("ref: x\n")
    (a / "fp2" / "out").mkdir()
    (a / "fp2" / "out" / "tournament.json").write_text("{}")
    (a / "fp2" / "out" / "standings.txt").write_text("x")
    (a / "fp2" / "runs").mkdir()
    (a / "fp2" / "runs" / "match-1.jsonl").write_text('{"type":"header","format":"marias-log","chain":"0"}\n')
    (a / "fp2" / "runs" / "match-1.seat0.stderr.log").write_text("noise")
    (a / "fp2" / "runs" / "match-1.seat0.transcript.jsonl").write_text("{}\n")
    (a / "fp2" / "work").mkdir()
    (a / "fp2" / "work" / "memory.bin").write_bytes(b"learned")
    spec = BotSpec(label="fp", argv=argv, cwd=str(a), workdir=str(a / "fp2" / "work"))
    assert spec.identity()["fingerprint"] == first
    # a changed imported module, a new one, a data file beside the script: another bot
    (a / "fp2" / "fph.py").write_text("HELPER = 2\n")
    second = I.fingerprint(argv, str(a))
    assert second != first
    (a / "fp2" / "fph.py").write_text("HELPER = 1\n")
    (a / "fp2" / "book.json").write_text("{}")
    assert I.fingerprint(argv, str(a)) not in (first, second)
    now = I.listing(argv, str(a), skip=(str(a / "fp2" / "work"),))
    assert I.listing_changes(I.listing(argv, str(make_importing_bot(tmp_path / "c"))), now, argv) \
        == ["the script's folder: book.json added"]


def test_the_fingerprint_covers_the_interpreter_of_a_program_run_by_its_hash_bang(tmp_path):
    fake = tmp_path / "interp"
    fake.mkdir()
    (fake / "python-x").write_text("#!/bin/sh\necho 1\n")
    (fake / "python-x").chmod(0o755)
    bot = tmp_path / "botdir" / "bot"
    bot.parent.mkdir()
    bot.write_text(f"#!{fake / 'python-x'}\nprint('x')\n")
    bot.chmod(0o755)
    lines = I.listing(["./bot"], str(bot.parent))
    assert lines[:2] == [f"exe {I.file_sha256(bot)}", f"interp {I.file_sha256(fake / 'python-x')}"]
    assert any(line.startswith("folder bot ") for line in lines)  # a program given as a path: its folder too
    before = I.fingerprint(["./bot"], str(bot.parent))
    (fake / "python-x").write_text("#!/bin/sh\necho 2\n")
    I._CACHE.clear()
    assert I.fingerprint(["./bot"], str(bot.parent)) != before


def test_a_folder_too_large_asks_for_a_fingerprint_list_and_the_list_replaces_it(tmp_path, monkeypatch):
    root = make_importing_bot(tmp_path)
    monkeypatch.setattr(I, "FOLDER_MAX_FILES", 3)
    for k in range(4):
        (root / "fp2" / f"data{k}.txt").write_text(str(k))
    with pytest.raises(I.IdentityError) as e:
        I.fingerprint(["python3", "fp2/bot.py"], str(root))
    assert "holds more than 3 files" in str(e.value) and "'fingerprint:' list" in str(e.value)
    # the bot names what it loads: those paths, not the whole folder
    lines = I.listing(["python3", "fp2/bot.py"], str(root), paths=["fp2/fph.py"])
    assert not any(line.startswith("folder ") for line in lines)
    assert f"path 0 file {I.file_sha256(root / 'fp2' / 'fph.py')}" in lines
    spec = BotSpec(label="fp", argv=["python3", "fp2/bot.py"], cwd=str(root), fingerprint_paths=["fp2/fph.py"])
    fp = spec.identity()["fingerprint"]
    (root / "fp2" / "fph.py").write_text("HELPER = 3\n")
    assert BotSpec(label="fp", argv=["python3", "fp2/bot.py"], cwd=str(root),
                   fingerprint_paths=["fp2/fph.py"]).identity()["fingerprint"] != fp


def test_a_changed_imported_module_refuses_a_resume_naming_the_bot_and_the_file(tmp_path):
    root = make_importing_bot(tmp_path)
    (root / "t.yaml").write_text(textwrap.dedent("""\
        seed: fp
        arrangements: rotations
        bots:
          - {name: fp, command: python3 fp2/bot.py}
          - {name: a, command: random}
          - {name: b, command: random}
        """))
    args = ["tournament", str(root / "t.yaml"), "--out", str(root / "out"), "--quiet", "--concurrency", "1"]
    first = marias(*args)
    assert first.returncode == 0, first.stderr
    state = json.loads((root / "out" / "tournament.json").read_text())
    assert any(line.startswith("folder fph.py ") for line in state["fingerprint_listings"]["fp"])
    sorted((root / "out" / "logs").glob("*.jsonl"))[0].unlink()  # one unit left to play
    (root / "fp2" / "fph.py").write_text("HELPER = 2  # the bot plays otherwise now\n")
    refused = marias(*args)
    assert refused.returncode == 2
    assert "fingerprints.fp: " in refused.stderr
    assert "bot 'fp' (python3 fp2/bot.py): the script's folder: fph.py changed" in refused.stderr
    assert "--allow-changed-bots" in refused.stderr
    assert len(list((root / "out" / "logs").glob("*.jsonl"))) == 2  # nothing was played
    # the YAML names a missing extra path: refused before anything runs
    (root / "t2.yaml").write_text((root / "t.yaml").read_text().replace(
        "command: python3 fp2/bot.py}", "command: python3 fp2/bot.py, fingerprint: [fp2/fph.py, weights.bin]}"))
    r = marias("tournament", str(root / "t2.yaml"), "--out", str(root / "out2"), "--quiet")
    assert r.returncode == 2 and "t2.yaml:4: bots[0].fingerprint: 'weights.bin' not found" in r.stderr, r.stderr
