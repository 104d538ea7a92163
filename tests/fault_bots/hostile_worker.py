"""A bot that attacks the referee process that started it (its tournament worker), issue 9.4.

Usage: hostile_worker.py MODE SEAT [MARKER [COUNTER [always]]] — plays random legal actions, and at its
first request of a partie in which it sits at SEAT it attacks its parent process:
  kill   os.kill(os.getppid(), SIGKILL)
  walk   finds its parent by walking /proc (/proc/self/stat) and kills that process's group
  stop   os.kill(os.getppid(), SIGSTOP): the worker is frozen, not dead
Mode hello (argv: hello SEAT MARKER COUNTER [always]) kills its parent when it is told hello,
from its second start on (counted in the file COUNTER), or from the first with ``always``.
Then it lingers (ignoring its closed stdin) until it is killed.  In any other seat it plays honestly.  MARKER only marks its command line for the test.
"""

import json
import os
import random
import signal
import sys
import time

mode, attack_seat = sys.argv[1], int(sys.argv[2])
counter = sys.argv[4] if len(sys.argv) > 4 else ""  # mode hello: a file counting its starts
counter_all = len(sys.argv) > 5 and sys.argv[5] == "always"  # mode hello: from the first start on
rng = random.Random(11)
seat = None


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def parent_from_proc() -> int:
    with open("/proc/self/stat") as f:
        data = f.read()
    return int(data[data.rindex(")") + 2:].split()[1])


for line in sys.stdin:
    msg = json.loads(line)
    t = msg.get("type")
    if t == "hello":
        if mode == "hello":
            # the first start (the pre-flight check) is honest; every later one kills its parent at hello
            with open(counter, "a+") as f:
                f.write("x")
                f.seek(0)
                starts = len(f.read())
            if starts >= 2 or counter_all:
                os.kill(os.getppid(), signal.SIGKILL)
                time.sleep(600)
        send({"type": "hello", "name": "hostile", "version": "1", "protocol": msg.get("protocol", 1)})
    elif t == "partie_start":
        seat = msg.get("seat")
    elif t == "request":
        if seat == attack_seat:
            if mode == "kill":
                os.kill(os.getppid(), signal.SIGKILL)
            elif mode == "walk":
                os.killpg(os.getpgid(parent_from_proc()), signal.SIGKILL)
            elif mode == "stop":
                os.kill(os.getppid(), signal.SIGSTOP)
            time.sleep(600)  # and stays, whether or not its stdin closes: the referee must end it
        send({"type": "action", "id": msg["id"], "action": rng.choice(msg["legal"])})
    elif t == "bye":
        break
