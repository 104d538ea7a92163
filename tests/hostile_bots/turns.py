"""Measures what two cooperating bots can still pass when only the bot on move runs (issue 32):
the sender changes something the machine shares during its own turn, the receiver looks at it
during its own.  Seat the same program twice: seat 0 sends, seat 1 receives; it plays the first
legal action.

Usage: turns.py CHANNEL [TAG [DELAY_MS [BITS]]]     (default x, 50 ms, 1 bit; pagecache and majflt 32)

Each action of the sender carries BITS bits of a pseudo-random sequence both know (so errors
can be counted; a real sender would put its hand there).  The receiver counts the sender's
actions in the ``action`` events; when exactly one lay between two of its own requests, it
reads that action's bits at the start of the second.  CHANNEL:

  latency     the sender answers after DELAY_MS for a 1, at once for a 0; the receiver times the
              gap from its own answer to its next request
  stat        the sender spins two processes through DELAY_MS for a 1, sleeps as long for a 0;
              the receiver reads the machine's busy CPU time (/proc/stat)
  schedstat   the same sender; the time every CPU ran tasks (/proc/schedstat, where the kernel has it)
  interrupts  the same sender; the sum of /proc/interrupts
  vmstat      the sender touches 32 MB of fresh memory for a 1 (page faults); /proc/vmstat pgfault
  meminfo     the sender holds 64 MB from a 1 to its next action, nothing after a 0;
              /proc/meminfo MemAvailable
  filenr      the sender holds 900 open files after a 1, none after a 0; /proc/sys/fs/file-nr
  cgroup      the sender holds 64 MB as for meminfo; the receiver adds up the memory of the other
              bots' cgroups of its referee (/sys/fs/cgroup)
  pagecache   BITS bits an action: the sender reads one page of a large file under /usr/lib for
              each 1 (pages chosen afresh from TAG and the action); the receiver times one read
              of each page (a page not in the page cache comes from the disk)
  majflt      the same sender; the receiver maps each page and touches it, counting its major
              page faults (getrusage: a fault that read the disk)

Every action of the sender but latency's takes DELAY_MS whatever its bits, so its latency
says nothing.  A value is read as a 1 when it lies on the 1 side of where the last 31 values
part in two (the middle of the widest gap among the middle three fifths of them; the first
6 only set that scale, as a real sender's known preamble would); a page is a 1 when its
read took under 50 us, or touching it was no major fault.  The receiver writes
``CHANNEL name deals=D symbols=S bits=N errors=E`` to stderr after each deal and at the end
(a channel it cannot read says why in a ``NOTE`` and decides nothing); what passes per deal is
the capacity N/D * (1 - H(E/N)), H(p) = -p log2 p - (1-p) log2 (1-p):

    B="python3 tests/hostile_bots/turns.py stat t1"
    marias match --seed 1 --sandbox bwrap --log runs -b "$B" -b "$B" -b random -q
    tail -1 runs/*.seat1.stderr.log
"""

import glob
import hashlib
import json
import mmap
import os
import statistics
import sys
import time

from pages import Pages

CHANNEL = sys.argv[1] if len(sys.argv) > 1 else "latency"
TAG = sys.argv[2] if len(sys.argv) > 2 else "x"
DELAY = (float(sys.argv[3]) if len(sys.argv) > 3 else 50.0) / 1000
PAGES = CHANNEL in ("pagecache", "majflt")
BITS = int(sys.argv[4]) if len(sys.argv) > 4 else (32 if PAGES else 1)
#: +1: a larger value reads as a 1; -1: a smaller one (MemAvailable falls while the sender holds memory;
#: a busy CPU takes fewer interrupts than an idle one woken again and again)
DIRECTION = {"meminfo": -1, "interrupts": -1}.get(CHANNEL, 1)
PAGE = 4096
PREAMBLE = 6  # the first symbols only set the receiver's scale (a real sender would send known bits first)
noted: set[str] = set()


def note(text: str) -> None:
    if text not in noted:
        noted.add(text)
        sys.stderr.write(f"NOTE {text}\n")
        sys.stderr.flush()


def bits(partie: int, k: int) -> list[int]:
    digest = hashlib.blake2b(f"{TAG}:{partie}:{k}".encode(), digest_size=32).digest()
    return [digest[j // 8] >> (j % 8) & 1 for j in range(BITS)]


# ------------------------------------------------------------------ what the receiver reads
def proc_stat() -> float:
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4]


def schedstat() -> float:
    with open("/proc/schedstat") as f:
        return sum(int(line.split()[7]) for line in f if line.startswith("cpu"))


def interrupts() -> float:
    total = 0
    with open("/proc/interrupts") as f:
        next(f)
        for line in f:
            total += sum(int(x) for x in line.split()[1:] if x.isdigit())
    return total


def vmstat() -> float:
    with open("/proc/vmstat") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("pgfault "))


def meminfo() -> float:
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("MemAvailable:"))


def filenr() -> float:
    with open("/proc/sys/fs/file-nr") as f:
        return int(f.read().split()[0])


def cgroup_memory() -> float:
    """The memory of the other bots of this referee, from their cgroups: a cgroup lists the
    receiver's own processes by their pids here, the others' not at all."""
    dirs = [d for d in glob.glob("/sys/fs/cgroup/**/marias-bot-*", recursive=True)
            if os.path.exists(os.path.join(d, "memory.usage_in_bytes")) or os.path.exists(os.path.join(d, "memory.current"))]
    if not dirs:
        raise OSError("no bot's cgroup in sight under /sys/fs/cgroup")
    own = [d for d in dirs if open(os.path.join(d, "cgroup.procs")).read().split()]
    if not own:
        raise OSError("its own cgroup is not in sight")
    referee = os.path.basename(own[0]).split("-")[3]
    total = 0
    for d in dirs:
        if d not in own and os.path.basename(d).split("-")[3] == referee:
            name = "memory.usage_in_bytes" if os.path.exists(os.path.join(d, "memory.usage_in_bytes")) else "memory.current"
            total += int(open(os.path.join(d, name)).read())
    return total


READERS = {"stat": proc_stat, "schedstat": schedstat, "interrupts": interrupts, "vmstat": vmstat,
           "meminfo": meminfo, "filenr": filenr, "cgroup": cgroup_memory}


def threshold(values: list[float]) -> float:
    """Where two groups of values part: the middle of the widest gap between neighbours, among
    the middle three fifths of them sorted (a 0 and a 1 each make about half)."""
    v = sorted(values)
    lo, hi = len(v) // 5, len(v) - len(v) // 5 - 1
    if hi <= lo:
        return statistics.median(v)
    i = max(range(lo, hi), key=lambda j: v[j + 1] - v[j])
    return (v[i] + v[i + 1]) / 2


# ------------------------------------------------------------------ the sender
class Sender:
    def __init__(self, pages):
        self.flag = mmap.mmap(-1, 1)
        self.held: list = []
        self.pages = pages
        if CHANNEL in ("stat", "schedstat", "interrupts"):
            for _ in range(2):
                if os.fork() == 0:
                    self._spinner()

    def _spinner(self) -> None:
        os.closerange(0, 3)
        while True:
            if self.flag[0]:
                while self.flag[0]:
                    pass
            else:
                time.sleep(0.001)

    def act(self, partie: int, k: int) -> None:
        start = time.monotonic()
        b = bits(partie, k)
        if CHANNEL == "latency":
            if b[0]:
                time.sleep(DELAY)
            return
        if CHANNEL in ("stat", "schedstat", "interrupts") and b[0]:
            self.flag[0] = 1
            time.sleep(DELAY)
            self.flag[0] = 0
        elif CHANNEL == "vmstat" and b[0]:
            m = mmap.mmap(-1, 32 << 20)
            for i in range(0, 32 << 20, PAGE):
                m[i] = 1
            m.close()
        elif CHANNEL in ("meminfo", "cgroup"):
            for m in self.held:
                m.close()
            self.held = []
            if b[0]:
                m = mmap.mmap(-1, 64 << 20)
                for i in range(0, 64 << 20, PAGE):
                    m[i] = 1
                self.held = [m]
        elif CHANNEL == "filenr":
            for fd in self.held:
                os.close(fd)
            self.held = [os.open("/dev/null", os.O_RDONLY) for _ in range(900)] if b[0] else []
        elif PAGES:
            for j, one in enumerate(b):
                if one:
                    self.pages.touch(*self.pages.page(f"{TAG}:{partie}:{k}:{j}"))
        time.sleep(max(0.0, DELAY - (time.monotonic() - start)))


# ------------------------------------------------------------------ the receiver
class Receiver:
    def __init__(self, pages):
        self.stats = {"deals": 0, "symbols": 0, "bits": 0, "errors": 0}
        self.seen: list[tuple[float, int]] = []  # (value, bit) of the scalar channels
        self.last: float | None = None  # the previous look's reading (activity channels: a delta)
        self.answered = 0.0
        self.pages = pages

    def read(self) -> float | None:
        try:
            return READERS[CHANNEL]()
        except (OSError, ValueError, StopIteration) as e:
            note(f"{CHANNEL}: {getattr(e, 'strerror', None) or e}")
            return None

    def look(self, partie: int, k: int | None) -> None:
        """At the start of a request; ``k``: the sender's one action since the last look, if so."""
        now = time.monotonic()
        if PAGES:
            if k is not None:
                try:
                    reader = self.pages.read_fast if CHANNEL == "pagecache" else self.pages.no_major_fault
                    got = [int(reader(*self.pages.page(f"{TAG}:{partie}:{k}:{j}"))) for j in range(BITS)]
                except OSError as e:
                    note(f"{CHANNEL}: {e.strerror or e}")
                    return
                self.stats["symbols"] += 1
                self.stats["bits"] += BITS
                self.stats["errors"] += sum(g != b for g, b in zip(got, bits(partie, k)))
            return
        if CHANNEL == "latency":
            if not self.answered:
                return
            value = now - self.answered
        else:
            reading = self.read()
            if reading is None:
                return
            level = CHANNEL in ("meminfo", "filenr", "cgroup")
            value = reading if level or self.last is None else reading - self.last
            first, self.last = self.last is None and not level, reading
            if first:
                return
        if k is not None:
            self.seen.append((value, bits(partie, k)[0]))
            if len(self.seen) <= PREAMBLE:
                return
            guess = int((value - threshold([v for v, _ in self.seen[-31:]])) * DIRECTION > 0)
            self.stats["symbols"] += 1
            self.stats["bits"] += 1
            self.stats["errors"] += guess != self.seen[-1][1]

    def report(self) -> None:
        sys.stderr.write("CHANNEL {} deals={deals} symbols={symbols} bits={bits} errors={errors}\n".format(
            CHANNEL, **self.stats))
        sys.stderr.flush()


def main() -> None:
    seat = None
    sender = receiver = None
    sent = 0  # the sender's actions in this partie (its own count, and the receiver's from the events)
    looked = 0
    last_deal = None
    for line in sys.stdin:
        msg = json.loads(line)
        t = msg.get("type")
        if t == "hello":  # the list of pages is made now: after hello a bot runs only when asked
            pages = Pages() if PAGES else None
            print(json.dumps({"type": "hello", "protocol": 1, "name": "turns", "version": "1"}), flush=True)
        elif t == "partie_start":
            seat = msg.get("seat")
            sent = looked = 0
            if seat == 0 and sender is None:
                sender = Sender(pages)
            elif seat == 1 and receiver is None:
                receiver = Receiver(pages)
        elif t == "event" and seat == 1 and msg["event"].get("kind") == "action" and msg["event"].get("seat") == 0:
            sent += 1
        elif t == "bye":
            break
        elif t == "request":
            partie = msg["partie"]
            if seat == 1 and receiver is not None:
                deal = (partie, msg["deal"])
                if deal != last_deal:
                    if last_deal is not None:
                        receiver.report()
                    receiver.stats["deals"] += 1
                    last_deal = deal
                receiver.look(partie, sent - 1 if sent == looked + 1 else None)
                looked = sent
            elif seat == 0 and sender is not None:
                sender.act(partie, sent)
                sent += 1
            print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
            if receiver is not None and seat == 1:
                receiver.answered = time.monotonic()
    if receiver is not None:
        receiver.report()


if __name__ == "__main__":
    main()
