"""A hostile bot after the organiser's secrets (issue 22): plays the first legal action and
writes to stderr what it manages to read, after the word ``FOUND`` (``NOTE`` lines say what
it tried).  The test reads its stderr file next to the log.

Usage: secrets_thief.py MODE [FOLDER...]

Modes:
  loot      at start, look through its start folder, its parent, and each FOLDER given (where
            it guesses the organiser keeps the tournament file) for signing keys (*.key, *.pem,
            anything holding a PEM private key), tournament files (*.yaml, *.yml) and seed files
            (seed*); report each one it can read
  remember  write every hand it is dealt to its working folder ($MARIAS_WORKDIR), and at the
            start of each partie claim, as whole opponent hands, every hand found there, in the
            folders beside it (other lanes) and in the folder above: ``CLAIM p D: CARDS``
"""

import glob
import json
import os
import sys

MODE = sys.argv[1]
FOLDERS = sys.argv[2:]
reported: set[str] = set()
PEM_PRIVATE = "-----BEGIN " + "PRIVATE KEY"  # (not spelt out, so that this file is not one)
ME = os.path.realpath(__file__)


def note(text: str) -> None:
    sys.stderr.write(f"NOTE {text}\n")
    sys.stderr.flush()


def found(what: str, text: str) -> None:
    if what in reported:
        return
    reported.add(what)
    sys.stderr.write(f"FOUND {what}: {text[:300]!r}\n")
    sys.stderr.flush()


def interesting(path: str, head: str) -> bool:
    name = os.path.basename(path).lower()
    return (name.endswith((".key", ".pem", ".yaml", ".yml")) or name.startswith("seed")
            or PEM_PRIVATE in head) and os.path.realpath(path) != ME


def loot() -> None:
    here = os.getcwd()
    places = [here, os.path.dirname(here), *FOLDERS]
    for top in places:
        try:
            note(f"list {top}: {sorted(os.listdir(top))}")
        except OSError as e:
            note(f"cannot list {top}: {e.strerror}")
            continue
        for root, dirs, files in os.walk(top):
            if root.count(os.sep) - top.count(os.sep) > 2:
                dirs[:] = []
                continue
            for f in files:
                p = os.path.join(root, f)
                try:
                    with open(p, "r", errors="replace") as fh:
                        head = fh.read(4096)
                except OSError:
                    continue
                if interesting(p, head):
                    found(p, head)
    for guess in ("organiser.key", "seed.txt", "t.yaml"):  # the names the README's workflow uses
        for top in places:
            p = os.path.join(top, guess)
            try:
                with open(p, errors="replace") as fh:
                    found(p, fh.read(4096))
            except OSError as e:
                note(f"cannot read {p}: {e.strerror}")


class Memory:
    def __init__(self):
        self.work = os.environ.get("MARIAS_WORKDIR", ".")
        self.held: dict[tuple[int, int], set[str]] = {}
        self.claimed: set[int] = set()
        self.token = os.urandom(8).hex()  # one per process (pids repeat in the sandbox's own pid namespace)
        note(f"workdir {self.work}")

    def claim(self, partie: int) -> None:
        if partie in self.claimed:
            return
        self.claimed.add(partie)
        parent = os.path.dirname(self.work.rstrip("/"))
        paths = set(glob.glob(os.path.join(self.work, "*.json")))
        paths |= set(glob.glob(os.path.join(parent, "*", "*.json"))) | set(glob.glob(os.path.join(parent, "*.json")))
        note(f"partie {partie}: {len(paths)} record(s) readable")
        for p in sorted(paths):
            try:
                with open(p) as f:
                    rec = json.load(f)
            except (OSError, ValueError):
                continue
            sys.stderr.write(f"CLAIM {partie} {rec['deal']}: {' '.join(sorted(rec['hand']))}\n")
        sys.stderr.flush()

    def see(self, msg: dict) -> None:
        view = msg.get("view") or {}
        key = (msg.get("partie"), msg.get("deal"))
        if msg.get("type") == "request":
            self.claim(msg["partie"])
            held = self.held.setdefault(key, set())
            held.update(view.get("hand") or [])
            # cards only leave a hand, so what it ever held in a deal is the hand it was dealt
            name = f"p{key[0]}-d{key[1]}-{self.token}.json"
            with open(os.path.join(self.work, name), "w") as f:
                json.dump({"deal": key[1], "hand": sorted(held)}, f)


def main() -> None:
    if MODE == "loot":
        loot()
    memory = Memory() if MODE == "remember" else None
    for line in sys.stdin:
        msg = json.loads(line)
        t = msg.get("type")
        if t == "hello":
            print(json.dumps({"type": "hello", "protocol": 1, "name": f"thief-{MODE}", "version": "1"}), flush=True)
        elif t == "request":
            if memory is not None:
                memory.see(msg)
            print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
        elif t == "bye":
            return


if __name__ == "__main__":
    main()
