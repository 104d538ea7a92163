"""A protocol bot with one habit a bot author gets wrong, for ``marias check`` and the
fault messages (issue 12).  It plays the first legal action.

Usage: author_bot.py HABIT
Habits: good (no fault), noflush (never flushes stdout: the answers wait in a buffer
until it exits), debug (writes a debug line on stdout before its 3rd answer), late
(its 3rd answer comes 1.5 s after the limit), unknown-id (answers the 3rd request
with an id it was never sent), crash-unknown (ends on a message type it does not
know), ignore-bye (keeps reading after bye, and ends only when stdin closes),
never-exit (ignores bye and the end of stdin; sleeps), dobra (answers 'dobrá'
where 'dobra' is legal), wrong-card (in play, a card of its hand that may not be
played now, whenever there is one).
"""

import json
import os
import sys
import time

habit = sys.argv[1] if len(sys.argv) > 1 else "good"
# a block-buffered stdout whatever PYTHONUNBUFFERED says, so that "noflush" really does not flush
out = open(1, "w", buffering=1 << 16, encoding="utf-8", closefd=False)
KNOWN = {"hello", "partie_start", "deal_start", "request", "event", "deal_end", "partie_end", "bye"}


def send(obj):
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    if habit != "noflush":
        out.flush()


n = 0
for line in sys.stdin:
    msg = json.loads(line)
    t = msg["type"]
    if t not in KNOWN and habit == "crash-unknown":
        raise SystemExit(f"unknown message type {t!r}")
    if t == "hello":
        send({"type": "hello", "protocol": 1, "name": f"author-{habit}", "version": "1"})
    elif t == "bye":
        if habit in ("ignore-bye", "never-exit"):
            continue
        break
    elif t == "request":
        n += 1
        answer = {"type": "action", "id": msg["id"], "action": msg["legal"][0]}
        if n == 3:
            if habit == "debug":
                out.write(f"thinking about {msg['decision']}...\n")
            elif habit == "late":
                time.sleep(msg["time_ms"] / 1000 + 1.5)
            elif habit == "unknown-id":
                answer["id"] = msg["id"] + 777
        if habit == "dobra" and "dobra" in msg["legal"]:
            answer["action"] = "dobrá"
        if habit == "wrong-card" and msg["decision"] == "play":
            wrong = [f"play:{c}" for c in msg["view"]["hand"] if f"play:{c}" not in msg["legal"]]
            if wrong:
                answer["action"] = wrong[0]
        send(answer)
print("input closed", file=sys.stderr)
if habit == "never-exit":
    time.sleep(3600)
out.flush()
