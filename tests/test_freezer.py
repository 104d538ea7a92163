"""Issue 32: only the bot on move runs (referee/seats/freezer.py).

A real bot process with a spinning thread and a spinning child is asked, answers, and
is then frozen: neither its CPU time nor its child's moves while it waits, and it runs
again when asked.  Each way of freezing is forced in turn (``MARIAS_FREEZER``): the
cgroup v2 freezer, the cgroup v1 freezer, SIGSTOP with the bot's cgroups to find its
processes and SIGSTOP with none (its process tree).  A frozen bot that is killed dies
(on cgroup v1 only once thawed), one that is closed reads the end of its input and
exits by itself, warm bots wait frozen between matches, and the cgroups of a tournament
worker killed while its bots were frozen are swept."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from referee.seats import freezer, resources
from referee.seats.process import BotCommand, BotProcess
from referee.seats.sandbox import SandboxConfig

TICK = os.sysconf("SC_CLK_TCK")

#: Spins in a thread and in a child from the start; at each request it waits until the child
#: has run (its CPU time moved) and answers with the child's pid.
SPINNER = textwrap.dedent("""\
    import json, os, sys, threading
    child = os.fork()
    if child == 0:
        os.closerange(0, 3)
        while True:
            pass
    def spin():
        while True:
            pass
    threading.Thread(target=spin, daemon=True).start()
    def ticks(pid):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("type") == "request":
            start = ticks(child)
            while ticks(child) == start:  # the child runs while its parent is asked
                pass
            print(json.dumps({"type": "action", "id": msg["id"], "action": str(child)}), flush=True)
""")

WAYS = {"v2": "frozen (cgroup v2 freezer)", "v1": "frozen (cgroup v1 freezer)",
        "sigstop": "stopped (SIGSTOP to each of its processes; no writable freezer cgroup)",
        "sigstop-tree": "stopped (SIGSTOP to each of its processes; no writable freezer cgroup)"}


@pytest.fixture
def way(request, monkeypatch):
    """Force one way of freezing for the bots started in this test (and forget it after)."""
    name = request.param
    monkeypatch.setenv(freezer.FREEZER_VARIABLE, name.split("-")[0])
    cached = resources.hierarchies
    cached.cache_clear()
    if name == "sigstop-tree":  # no cgroup at all: SIGSTOP holds the bot's process tree
        monkeypatch.setattr(resources, "hierarchies", lambda: {})
    elif name in ("v1", "v2"):
        h = resources.hierarchies().get("freezer")
        if h is None or h.version != int(name[1]):
            pytest.skip(f"no writable cgroup {name} freezer on this machine")
    yield name
    cached.cache_clear()


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def gone(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` is gone or a zombie within ``within`` seconds (a guard, not a timing)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except OSError:
            return True
        time.sleep(0.02)
    return False


def frozen_now(pid: int) -> bool:
    """Whether the kernel holds ``pid`` frozen: its freezer cgroup says so, or it is stopped."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "marias-bot-" not in path:
            continue
        for base, name, done in (("/sys/fs/cgroup/unified", "cgroup.events", "frozen 1"),
                                 ("/sys/fs/cgroup", "cgroup.events", "frozen 1"),
                                 ("/sys/fs/cgroup/freezer", "freezer.state", "FROZEN")):
            if (controllers == "" or "freezer" in controllers.split(",")) and Path(base + path, name).exists():
                if done in Path(base + path, name).read_text():
                    return True
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


def start_spinner(mode: str = "bwrap") -> tuple[BotProcess, list[int]]:
    """The spinning bot, asked once; its processes as the machine numbers them (under bubblewrap:
    the two below bwrap and its pid 1 in the sandbox), the bot's main process first."""
    from referee.seats.groups import children

    bot = BotProcess(BotCommand([sys.executable, "-c", SPINNER], sandbox=SandboxConfig(mode=mode)))
    bot.start()
    bot.request({"type": "request", "id": 1}, 60)
    main = children(children(bot.pid)[0])[0] if mode == "bwrap" else bot.pid
    return bot, [main, *children(main)]


@pytest.mark.parametrize("way", list(WAYS), indirect=True)
def test_a_bot_that_answered_does_not_run_until_it_is_asked_again(way):
    bot, procs = start_spinner()
    try:
        assert len(procs) == 2 and freezer.settle(10.0)  # the kernel says it is frozen (a guard: 10 s)
        assert all(frozen_now(p) for p in procs)
        before = [cpu_ticks(p) for p in procs]
        time.sleep(0.3)  # two spinners: 60 ticks of CPU if they ran
        assert [cpu_ticks(p) for p in procs] == before
        # asked again, it runs: its answer comes only once its child's CPU time has moved
        bot.request({"type": "request", "id": 2}, 60)
        assert resources.limits_report()["waiting"] == WAYS[way]
    finally:
        bot.kill()
    assert all(gone(p) for p in procs)  # killed while frozen: it dies (cgroup v1: it is thawed to)


@pytest.mark.parametrize("way", list(WAYS), indirect=True)
def test_a_frozen_bot_that_is_closed_reads_the_end_of_its_input_and_exits_by_itself(way):
    bot, procs = start_spinner()
    assert freezer.settle(10.0) and frozen_now(procs[0])
    bot.close(grace=30.0)  # thawed first: it reads EOF and exits (not killed)
    assert bot.returncode == 0
    assert all(gone(p) for p in procs)  # what it left behind is ended with it


def test_a_bot_asked_again_at_once_is_not_waited_for_and_the_pending_set_empties():
    bot, _ = start_spinner()
    try:
        bot.request({"type": "request", "id": 2}, 60)  # asked again before it was seen frozen
        assert freezer.settle(10.0)
        assert not freezer._PENDING
    finally:
        bot.kill()


def test_the_freezer_cgroup_holds_the_bots_own_processes_and_not_bubblewraps():
    from referee.seats.groups import children

    bot, procs = start_spinner()
    try:
        if resources.hierarchies().get("freezer") is None:
            pytest.skip("no writable freezer cgroup on this machine")
        assert freezer.settle(10.0)
        wrappers = [bot.pid, *children(bot.pid)]  # bwrap and the sandbox's pid 1
        assert all(frozen_now(p) for p in procs) and not any(frozen_now(p) for p in wrappers)
    finally:
        bot.kill()


def test_without_the_sandbox_bots_are_not_frozen():
    """--sandbox none runs trusted bots that share every file anyway: freezing them would cost
    the referee its time and protect nothing."""
    bot, procs = start_spinner(mode="none")
    try:
        before = cpu_ticks(procs[1])
        deadline = time.monotonic() + 10
        while cpu_ticks(procs[1]) == before and time.monotonic() < deadline:
            time.sleep(0.01)
        assert cpu_ticks(procs[1]) != before  # its child spins on while nobody asks it anything
        assert not frozen_now(procs[0])
        assert resources.limits_report(mode="none")["waiting"] == "not frozen (no sandbox)"
    finally:
        bot.kill()


def test_the_forcing_variable_refuses_a_value_it_does_not_know(monkeypatch):
    monkeypatch.setenv(freezer.FREEZER_VARIABLE, "v3")
    with pytest.raises(ValueError, match="MARIAS_FREEZER must be one of v2, v1, sigstop, off"):
        freezer.forced()


def test_warm_bots_wait_frozen_between_matches_and_end_by_themselves(tmp_path):
    from referee.matches.match import BotSpec, MatchConfig, Referee, WarmSeats
    from referee.seats.groups import children

    warm = WarmSeats()
    specs = [BotSpec.parse("random", seed=f"w{i}") for i in range(3)]
    try:
        Referee(MatchConfig(bots=specs, partie=1, seed="warm-frozen:1", work_dir=tmp_path / "a", warm=warm)).run()
        kept = [entry[1] for entry in warm.kept.values()]
        mains = [children(children(io.pid)[0])[0] for io in kept]  # each bot's own process, under bwrap
        assert len(kept) == 3 and freezer.settle(10.0)
        assert all(frozen_now(p) for p in mains)
        result = Referee(MatchConfig(bots=specs, partie=1, seed="warm-frozen:2", work_dir=tmp_path / "b",
                                     warm=warm)).run()
        assert warm.adopted == 3 and not result.faults  # the same processes played on: thawed when asked
        assert [entry[1] for entry in warm.kept.values()] == kept
        assert freezer.settle(10.0) and all(frozen_now(p) for p in mains)
    finally:
        warm.close()
    assert all(io.returncode == 0 for io in kept)  # told bye, thawed, and exited by themselves


def _kill_worker_with_frozen_bot(job):
    """A tournament worker's job: start a bot, ask it once (so it is frozen), write its processes'
    pids, and die at once (no clean-up)."""
    bot, procs = start_spinner()
    assert freezer.settle(10.0) and all(frozen_now(p) for p in procs)
    Path(job).write_text(" ".join(map(str, procs)))
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.parametrize("way", ["v1", "v2"], indirect=True)
def test_the_bots_of_a_worker_killed_while_they_were_frozen_end_and_their_cgroups_go(way, tmp_path):
    from referee.seats.pool import Pool, Task

    outcomes = []
    note = tmp_path / "pids"
    Pool(_kill_worker_with_frozen_bot, 1, retries=0).run([Task("k", str(note), 60.0)], outcomes.append)
    assert outcomes[0].status == "died"
    pids = [int(p) for p in note.read_text().split()]
    assert all(gone(p) for p in pids)
    base, prefix = resources.hierarchies()["freezer"].base, resources.group_prefix()
    # no cgroup left of a referee that is gone (the names hold the referee's pid)
    assert not [d for d in os.listdir(base)
                if d.startswith(prefix) and not os.path.exists(f"/proc/{d[len(prefix):].split('-')[0]}")]
