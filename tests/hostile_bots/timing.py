"""Measures the CPU-timing channel between two cooperating bots (issues 21.3 and 32): what
remains once locks, files, memory, sockets and signals are closed.  Seat the same program
twice: seat 0 sends, seat 1 receives; it plays the first legal action.

Usage: timing.py [SLOT_MS [LISTEN_MS [SPINNERS [KIND [LISTENS]]]]]     (default 20 300 2 cpu 0)

Time is cut into slots of SLOT_MS by the wall clock both sandboxes share.  The sender
starts SPINNERS processes at hello that, in each slot, spin when the slot's bit is 1 and
sleep when it is 0; the bits are a pseudo-random sequence both sides know (so errors can
be counted; a real sender would put its hand there).  At each request the receiver
counts its own loop's iterations in every whole slot of the next LISTEN_MS and decides
each bit against the median count of that request (a slot where it ran slower was a 1).
KIND ``cpu`` spins and counts a bare loop (contention for a CPU); ``mem`` copies 64 MB
buffers and counts copies of 8 MB (contention for the memory bus and the shared cache,
which a CPU weight does not share out); ``stat`` spins like ``cpu`` but the receiver
does not compete: it sleeps through each slot, waking every 2 ms to read how many tasks
the machine runs now (``procs_running`` of ``/proc/stat``), and a slot with more on
average was a 1 (the line's busy CPU time says the same on an idle machine, but stops at
100 % on a loaded one, where the count still goes up by the sender's spinners).  The
receiver listens at its first LISTENS requests (0: at every one).

Since issue 32 a bot that waits for its turn is frozen, spinners and all: the sender's
spinners run only while the sender itself is asked, never while the receiver listens.
With ``MARIAS_FREEZER=off`` given to the referee (a setting for tests) they run on, as
before:

    B="python3 tests/hostile_bots/timing.py 60 600 2 stat"
    marias match --seed 1 --sandbox bwrap --log runs -b "$B" -b "$B" -b random -q
    tail -1 runs/*.seat1.stderr.log

The receiver writes ``CHANNEL deals=D slots=N errors=E seconds=S`` to stderr after each
deal and at the end; from these: the raw bit rate N/D per deal, the error rate
p = E/N, and what can really pass, the capacity N/D * (1 - H(p)) bits per deal,
H(p) = -p log2 p - (1-p) log2 (1-p) (0 bits when p is 1/2: a coin toss).

    B="python3 tests/hostile_bots/timing.py 20 300"
    marias match --seed 1 --sandbox bwrap --log runs -b "$B" -b "$B" -b random -q
    tail -1 runs/*.seat1.stderr.log
"""

import hashlib
import json
import os
import statistics
import sys
import time

SLOT_MS = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
LISTEN_MS = float(sys.argv[2]) if len(sys.argv) > 2 else 300.0
SPINNERS = int(sys.argv[3]) if len(sys.argv) > 3 else 2
KIND = sys.argv[4] if len(sys.argv) > 4 else "cpu"
LISTENS = int(sys.argv[5]) if len(sys.argv) > 5 else 0


def slot_now() -> int:
    return int(time.time() * 1000 // SLOT_MS)


def bit(slot: int) -> int:
    return hashlib.blake2b(slot.to_bytes(8, "little"), digest_size=1).digest()[0] & 1


def spinner() -> None:
    os.closerange(0, 3)
    src, dst = bytearray(64 << 20), bytearray(64 << 20)
    while True:
        k = slot_now()
        end = (k + 1) * SLOT_MS / 1000
        if bit(k):
            while time.time() < end:
                if KIND == "mem":
                    dst[:] = src
        else:
            time.sleep(max(0.0, end - time.time()))


BUFFERS = (bytearray(8 << 20), bytearray(8 << 20)) if KIND == "mem" else (b"", bytearray())


def running() -> int:
    """How many tasks the machine runs now (``procs_running`` in /proc/stat)."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("procs_running "):
                return int(line.split()[1])
    return 0


def listen(stats: dict) -> None:
    """Count loop iterations (``stat``: the tasks the machine runs) in each whole slot of the next
    LISTEN_MS; decide the bits."""
    stop = time.time() + LISTEN_MS / 1000
    k = slot_now() + 1
    start = k * SLOT_MS / 1000
    if KIND == "stat":
        time.sleep(max(0.0, start - time.time()))
    while time.time() < start:
        pass
    counts: list[tuple[int, int]] = []
    src, dst = BUFFERS
    while (k + 1) * SLOT_MS / 1000 <= stop:
        end = (k + 1) * SLOT_MS / 1000
        n = 0
        if KIND == "stat":
            seen = []
            while time.time() < end:
                seen.append(running())
                time.sleep(0.002)
            n = -statistics.mean(seen)  # more tasks running (a lower n): read as "ran slower", a 1
        while time.time() < end:
            n += 1
            if KIND == "mem":
                dst[:] = src
        counts.append((k, n))
        k += 1
    if len(counts) < 3:
        return
    med = statistics.median(n for _, n in counts)
    for k, n in counts:
        guess = 1 if n < med else 0
        stats["slots"] += 1
        stats["errors"] += guess != bit(k)
    stats["seconds"] += len(counts) * SLOT_MS / 1000


def report(stats: dict) -> None:
    sys.stderr.write("CHANNEL deals={deals} slots={slots} errors={errors} seconds={seconds:.2f}\n".format(**stats))
    sys.stderr.flush()


def main() -> None:
    seat = None
    stats = {"deals": 0, "slots": 0, "errors": 0, "seconds": 0.0}
    last_deal = None
    listened = 0
    for line in sys.stdin:
        msg = json.loads(line)
        t = msg.get("type")
        if t == "hello":
            print(json.dumps({"type": "hello", "protocol": 1, "name": "timing", "version": "1"}), flush=True)
        elif t == "partie_start":
            if msg.get("seat") == 0 and seat is None:
                for _ in range(SPINNERS):
                    if os.fork() == 0:
                        spinner()
            seat = msg.get("seat")
        elif t == "bye":
            break
        elif t == "request":
            deal = (msg["partie"], msg["deal"])
            if seat == 1:
                if deal != last_deal:
                    if last_deal is not None:
                        report(stats)
                    stats["deals"] += 1
                    last_deal = deal
                if not LISTENS or listened < LISTENS:
                    listen(stats)
                    listened += 1
            print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    if seat == 1:
        report(stats)


if __name__ == "__main__":
    main()
