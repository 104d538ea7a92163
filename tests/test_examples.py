"""The example bots in examples/ (Node.js, C, Rust): built, driven message by message,
and run under the referee for a whole partie.

Each example implements the same small rule (PROTOCOL.md section 14); ``reference``
below restates it in Python, so every answer of every example is checked for
being legal *and* for being the rule's answer.  A missing toolchain skips its
bot with the reason.
"""

from __future__ import annotations

import json
import os
import random
import selectors
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from protocol import messages as M
from referee.matches.tell import deal_events
from referee.rules.partie import Partie

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
#: A guard against a hung bot, far above any real answer time; not a speed check.
HANG_GUARD_S = 60


# ------------------------------------------------------------------ building

@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("example-bots")


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed, so its example bot cannot be built or run")
    return path


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, f"{' '.join(argv)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module", params=["js", "c", "rust"])
def bot(request, build_dir) -> list[str]:
    """The argv that runs one example bot (built first where needed)."""
    kind = request.param
    if kind == "js":
        return [_need("node"), str(EXAMPLES / "js" / "bot.js")]
    if kind == "c":
        gcc = _need("gcc")
        exe = build_dir / "c-bot"
        _run([gcc, "-O2", "-Wall", "-Wextra", "-Werror", "-std=c99", "-o", str(exe), str(EXAMPLES / "c" / "bot.c")])
        return [str(exe)]
    cargo = _need("cargo")
    target = build_dir / "rust-target"
    env = {**os.environ, "CARGO_TARGET_DIR": str(target)}
    _run([cargo, "build", "--release", "--offline", "--quiet", "--manifest-path", str(EXAMPLES / "rust" / "Cargo.toml")], env=env)
    return [str(target / "release" / "marias-example-bot")]


def test_rust_json_reader_unit_tests(build_dir):
    cargo = _need("cargo")
    env = {**os.environ, "CARGO_TARGET_DIR": str(build_dir / "rust-test-target")}
    proc = _run([cargo, "test", "--offline", "--quiet", "--manifest-path", str(EXAMPLES / "rust" / "Cargo.toml")], env=env)
    assert "4 passed" in proc.stdout


# ------------------------------------------------------------------ the rule, restated

TRUMP_ORDER = "789UOKXA"
BETL_ORDER = "789XUOKA"


def _strength(card: str, order: str) -> int:
    return order.index(card[0])


def _first_best(items: list[str], score) -> str:
    best = items[0]
    for it in items[1:]:
        if score(it) > score(best):
            best = it
    return best


def _wins(card: str, trick: list[dict], trump: str | None, order: str) -> bool:
    if not trick:
        return True
    win = trick[0]["card"]
    for t in trick[1:]:
        c = t["card"]
        if c[1] == win[1]:
            if _strength(c, order) > _strength(win, order):
                win = c
        elif trump is not None and c[1] == trump:
            win = c
    if card[1] == win[1]:
        return _strength(card, order) > _strength(win, order)
    return trump is not None and card[1] == trump


def reference(decision: str, view: dict, legal: list[str]) -> str:
    """PROTOCOL.md section 14's rule: lay; dobra; the highest card of the longest suit as trump;
    Barva with the two weakest cards outside trumps (else betl throwing the highest); in play a
    winning ace (not in betl), else the lowest legal card.  Ties go to the first in ``legal``."""
    if "lay" in legal:
        return "lay"
    if decision == "trump":
        counts = {s: sum(c[1] == s for c in view["hand"]) for s in "hlba"}
        cards = [a for a in legal if a != "trump:zlidu"]
        return _first_best(cards, lambda a: 10 * counts[a[7]] + _strength(a[6:], TRUMP_ORDER))
    if decision == "talon":
        pair = lambda a: a.split(":")[1].split(",")  # noqa: E731
        for prefix, score in (
            ("barva:", lambda a: -sum(_strength(c, TRUMP_ORDER) + (100 if c[1] == view["trump"] else 0) for c in pair(a))),
            ("betl:", lambda a: sum(_strength(c, BETL_ORDER) for c in pair(a))),
            ("durch:", lambda a: -sum(_strength(c, BETL_ORDER) for c in pair(a))),
        ):
            options = [a for a in legal if a.startswith(prefix)]
            if options:
                return _first_best(options, score)
        return legal[0]
    if decision in ("answer", "flek"):
        return "dobra" if "dobra" in legal else legal[0]
    if decision == "contract":
        return "contract:hra" if "contract:hra" in legal else legal[0]
    if decision == "play":
        barva = view["game"] == "barva"
        trump = view["trump"] if barva else None
        order = TRUMP_ORDER if barva else BETL_ORDER
        cards = [a[5:] for a in legal if a.startswith("play:")]
        if view["game"] != "betl":
            for c in cards:
                if c[0] == "A" and _wins(c, view["trick"], trump, order):
                    return "play:" + c
        return "play:" + _first_best(cards, lambda c: -_strength(c, order))
    return legal[0]


def test_reference_rule_on_hand_worked_cases():
    """The rule itself, on small cases worked by hand."""
    view = {"hand": ["7h", "Kh", "Ab", "Xh", "9a", "Ol", "8h"], "trump": None, "game": None, "trick": []}
    legal = [f"trump:{c}" for c in view["hand"]] + ["trump:zlidu"]
    assert reference("trump", view, legal) == "trump:Xh"  # four hearts; X is the highest of them in trump order
    talon = {"trump": "h", "game": None, "trick": [], "hand": []}
    assert reference("talon", talon, ["barva:7h,8h", "barva:9a,8l", "barva:8l,9a", "betl:7h,8h"]) == "barva:9a,8l"
    assert reference("talon", talon, ["betl:7h,8h", "betl:Ah,Kl", "durch:Ah,Kl"]) == "betl:Ah,Kl"
    play = {"game": "barva", "trump": "l", "trick": [{"seat": 1, "card": "Kb"}], "hand": []}
    assert reference("play", play, ["play:9b", "play:Ab", "play:Xb"]) == "play:Ab"
    trumped = {"game": "barva", "trump": "l", "trick": [{"seat": 1, "card": "Kb"}, {"seat": 2, "card": "7l"}], "hand": []}
    assert reference("play", trumped, ["play:9b", "play:Ab", "play:Xb"]) == "play:9b"
    betl = {"game": "betl", "trump": None, "trick": [], "hand": []}
    assert reference("play", betl, ["play:Ab", "play:Xb", "play:9a"]) == "play:9a"
    durch = {"game": "durch", "trump": None, "trick": [], "hand": []}
    assert reference("play", durch, ["play:Kb", "play:Ab", "play:Xa"]) == "play:Ab"
    assert reference("play", durch, ["play:Kb", "play:Ab", "lay"]) == "lay"
    assert reference("flek", play, ["dobra", "flek:hra"]) == "dobra"
    assert reference("answer", play, ["dobra", "spatna"]) == "dobra"


# ------------------------------------------------------------------ driving a bot directly

class Pipe:
    """One bot process and a line reader with a hang guard."""

    def __init__(self, argv: list[str], stderr_path: Path):
        self.stderr = open(stderr_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = b""

    def send(self, msg: dict | str) -> None:
        line = msg if isinstance(msg, str) else M.encode(msg)
        self.proc.stdin.write(line.encode("utf-8"))
        self.proc.stdin.flush()

    def line(self) -> bytes:
        while b"\n" not in self.buf:
            assert self.sel.select(HANG_GUARD_S), "the bot wrote no line (hang guard)"
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            assert chunk, f"the bot closed stdout (exit {self.proc.poll()})"
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def recv(self) -> dict:
        return json.loads(self.line().decode("utf-8"))

    def finish(self) -> tuple[int, bytes]:
        """Wait for the exit; the return code and whatever else it wrote."""
        rc = self.proc.wait(timeout=HANG_GUARD_S)
        rest = self.buf + self.proc.stdout.read()
        self.stderr.close()
        return rc, rest


_bodies = deal_events  # the referee's own event builder


def drive_partie(pipe: Pipe, partie_no: int, seat: int, seed: int, counts: dict) -> None:
    """Play one partie with the bot at ``seat`` and random players elsewhere; check every answer."""
    rng = random.Random(seed)
    partie = Partie(seed=seed)
    pipe.send(M.partie_start(partie_no, seat, partie.n_deals, ["example", "random", "random"]))
    rid = 1000 * partie_no
    for deal in partie.iter_deals():
        n = len(partie.deals)
        # noise a bot must shrug off: a blank line, an unknown message type, an unknown event kind
        pipe.send("\n")
        pipe.send({"type": "gossip", "about": [1, {"x": None}], "text": "č\u00e9\u2603"})
        pipe.send(M.event(partie_no, n, {"kind": "rumour", "seat": seat}))
        pipe.send(M.deal_start(partie_no, n, seat, deal.forhont, deal.dealer, partie.cuts[-1]))
        while not deal.done:
            s = deal.to_move
            legal = [str(a) for a in deal.legal_actions()]
            decision = deal.decision
            if s == seat:
                rid += rng.randint(1, 3)  # ids grow but are not consecutive
                view = deal.view(s)
                pipe.send(M.request(rid, partie_no, n, decision, view, legal, 2000))
                answer = pipe.recv()
                assert answer.get("type") == "action" and answer.get("id") == rid, answer
                assert answer["action"] in legal, (decision, answer, legal)
                assert answer["action"] == reference(decision, view, legal), (decision, view, legal, answer)
                choice = answer["action"]
                counts[decision] = counts.get(decision, 0) + 1
            else:
                choice = "lay" if "lay" in legal else rng.choice(legal)
            before_tricks, before_hl = len(deal.tricks), len(deal.hlasky)
            deal.apply(choice)
            for body in _bodies(deal, decision, before_tricks, before_hl, seat):
                pipe.send(M.event(partie_no, n, body))
        pipe.send(M.deal_end(partie_no, n, seat, deal.view(seat), deal.result.to_dict()))
    pipe.send(M.partie_end(partie_no, partie.totals(), partie.places()))


def test_example_bot_plays_every_decision_by_its_rule(bot, tmp_path):
    pipe = Pipe(bot, tmp_path / "stderr.log")
    pipe.send(M.hello("test", {"startup_ms": 10000, "move_ms": 2000, "bank_ms": None, "increment_ms": 0,
                               "max_line": 1_000_000, "stderr_cap": 1_000_000}))
    hello = pipe.recv()
    assert hello["type"] == "hello" and hello["protocol"] == 1 and hello["name"].startswith("example-")
    counts: dict[str, int] = {}
    # two partie, and the seat changes between them
    for partie_no, (seat, seed) in enumerate([(0, 11), (2, 12), (1, 13)], 1):
        drive_partie(pipe, partie_no, seat, seed, counts)
    pipe.send(M.BYE)
    rc, rest = pipe.finish()
    assert rc == 0
    assert rest == b"", f"the bot wrote after its last answer: {rest[:200]!r}"
    assert set(counts) >= {"trump", "talon", "answer", "flek", "play"}, counts


def test_example_bot_exits_at_end_of_input(bot, tmp_path):
    pipe = Pipe(bot, tmp_path / "stderr.log")
    pipe.send(M.hello("test", {}))
    assert pipe.recv()["type"] == "hello"
    pipe.send("this line is not json\n")
    pipe.proc.stdin.close()
    rc, rest = pipe.finish()
    assert rc == 0 and rest == b""


# ------------------------------------------------------------------ under the referee

def test_example_bot_plays_a_partie_under_the_referee(bot, tmp_path):
    cmd = " ".join(shlex.quote(a) for a in bot)
    proc = subprocess.run(
        [sys.executable, "-m", "referee.cli", "match", "--bot", cmd, "--bot", "random", "--bot", "random",
         "--partie", "1", "--seed", "7", "--json", "--log", str(tmp_path / "logs"), "--sandbox", "bwrap"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["sandbox"] == "bwrap"  # the example runs isolated (its program under a temporary folder)
    assert result["names"][0].startswith("example-")
    assert result["seats"][0]["faults"] == {}
    assert result["seats"][0]["forfeited"] == []
    assert result["seats"][0]["decisions"] > 0
    assert result["faults"] == []
    (totals,) = result["partie_totals"]
    assert sum(totals) == 0
    (log,) = [p for p in (tmp_path / "logs").glob("*.jsonl") if ".seat" not in p.name]
    deals = [r for r in map(json.loads, log.read_text(encoding="utf-8").splitlines()) if r["type"] == "deal"]
    assert len(deals) == 12
    assert all(d["faults"] == [] and d["result"]["kind"] != "fault" for d in deals)
