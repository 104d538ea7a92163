"""A bot that plays random legal actions and misbehaves on purpose.

Usage: faulty.py MODE [AT [MARKER]]  — misbehave at the AT-th request (default 5);
MARKER is only carried on the command lines (its own and its child's) so a test
can find exactly its processes.
Modes: exit-at-start, die, hang, late, garbage, wrong-id, illegal, huge-line,
stderr-flood, close-stdout, child-keeps-pipe, unexpected, ok, early (writes, with an
answer, the answer to the next request before it is asked: the id guessed right when
it is on move again), float-id (the id as 11.0), huge-illegal (a 900 KB action), contract (answers barva at the talon and dobra
when it may, and an illegal contract at its first contract decision, whatever AT: three
of it fault at the contract decision of deal 1, after both defenders said dobra).
FAULTY_NAME in the environment replaces the name it announces in hello.
With FAULTY_ONCE=PATH in the environment it misbehaves only if PATH does not
exist yet (and creates it), so a restarted bot plays cleanly.
"""

import json
import os
import random
import subprocess
import sys
import time

mode = sys.argv[1]
at = int(sys.argv[2]) if len(sys.argv) > 2 else 5
marker = sys.argv[3] if len(sys.argv) > 3 else ""
rng = random.Random(7)
out = sys.stdout
once = os.environ.get("FAULTY_ONCE")
if once:
    if os.path.exists(once):
        mode = "ok"
    else:
        open(once, "w").close()


def send(obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()


if mode == "exit-at-start":
    sys.exit(3)

n = 0
for line in sys.stdin:
    msg = json.loads(line)
    t = msg.get("type")
    if t == "hello":
        send({"type": "hello", "protocol": 1, "name": os.environ.get("FAULTY_NAME", f"faulty-{mode}"), "version": "1"})
        continue
    if t == "bye":
        break
    if t != "request":
        continue
    n += 1
    legal = msg["legal"]
    answer = {"type": "action", "id": msg["id"], "action": rng.choice(legal)}
    if mode == "contract":
        if msg["decision"] == "contract":
            answer["action"] = "contract:nonsense"
        else:
            liked = [a for a in legal if a.startswith("barva:") or a == "dobra"]
            answer["action"] = liked[0] if liked else answer["action"]
    if n == at:
        if mode == "die":
            os._exit(1)
        if mode == "hang":
            time.sleep(3600)
        if mode == "late":
            time.sleep(msg["time_ms"] / 1000 + 0.3)
        if mode == "garbage":
            out.write("this is not json\n")
            out.flush()
            continue
        if mode == "wrong-id":
            answer["id"] = msg["id"] + 1000
        if mode == "illegal":
            answer["action"] = "play:Zz" if msg["decision"] == "play" else "contract:durch"
        if mode == "float-id":
            out.write(json.dumps(answer).replace(f'"id": {msg["id"]}', f'"id": {msg["id"]}.0') + "\n")
            out.flush()
            continue
        if mode == "huge-illegal":
            answer["action"] = "x" * 900_000
        if mode == "early":
            guess = {"type": "action", "id": msg["id"] + 1, "action": legal[0]}
            out.write(json.dumps(answer) + "\n" + json.dumps(guess) + "\n")
            out.flush()
            continue
        if mode == "unexpected":
            answer = {"type": "hello", "protocol": 1}
        if mode == "huge-line":
            chunk = "x" * (1 << 20)
            for _ in range(50):
                out.write(chunk)
            out.flush()
            time.sleep(3600)
        if mode == "close-stdout":
            out.close()
            os.close(1)
            time.sleep(3600)
        if mode == "child-keeps-pipe":
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", marker])
            os._exit(0)
    if mode == "stderr-flood" and n == at:
        block = "e" * 65536 + "\n"
        for _ in range(320):  # 20 MB
            sys.stderr.write(block)
        sys.stderr.flush()
    send(answer)
