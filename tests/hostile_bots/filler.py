"""A bot that tries to fill the disk (issue 21.5): at its first request it writes 8 MB files
into its working folder and /tmp, by turns, until a write fails or it has written MB_WANTED
(default 1500), then plays the first legal action as usual.

Usage: filler.py [MB_WANTED]

It reports ``NOTE wrote N MB`` and ``NOTE error: <strerror>`` (the write that failed), and
for its working folder and /tmp the file system they are on: ``NOTE fs <name>: <type>
<size in MB> <device>`` (from /proc/self/mountinfo and statvfs).
"""

import json
import os
import sys

WANT = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
CHUNK = 1 << 20


def note(text: str) -> None:
    sys.stderr.write(f"NOTE {text}\n")
    sys.stderr.flush()


def fs_of(path: str) -> str:
    """The file system type of the mount ``path`` lies on (the longest mount point above it)."""
    best, kind = "", "?"
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            point = left.split()[4]
            if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
                best, kind = point, right.split()[0]
    return kind


def fill() -> None:
    work = os.environ["MARIAS_WORKDIR"]
    for name, folder in (("workdir", work), ("tmp", "/tmp")):
        st = os.statvfs(folder)
        note(f"fs {name}: {fs_of(folder)} {st.f_blocks * st.f_frsize >> 20} {os.stat(folder).st_dev}")
    written, n = 0, 0
    block = b"x" * CHUNK
    try:
        while written < WANT << 20:
            folder = (work, "/tmp")[n % 2]
            with open(os.path.join(folder, f"fill-{n}"), "wb") as f:
                for _ in range(8):
                    f.write(block)
                    f.flush()
                    written += CHUNK
            n += 1
    except OSError as e:
        note(f"error: {e.strerror}")
    note(f"wrote {written >> 20} MB")


requests = 0
for line in sys.stdin:
    msg = json.loads(line)
    t = msg.get("type")
    if t == "hello":
        print(json.dumps({"type": "hello", "protocol": 1, "name": "filler", "version": "1"}), flush=True)
    elif t == "bye":
        break
    elif t == "request":
        requests += 1
        if requests == 1:
            fill()
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
