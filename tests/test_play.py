"""`marias play`: a person's seat in the terminal (referee/people/human.py, referee/people/play.py, referee/seats/seat.py).

The end-to-end tests drive the real command through a pseudo-terminal (pexpect) and play
whole deals, reading the screen as a person would.  What the screen offered is checked
against the rules engine replaying the log (the menu holds exactly the legal actions, the
lay-down option exactly when R8 offers it), what it showed against what that seat may know
(no card of another hand), and the log against `marias validate`.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules.cards import CARDS, Card, format_cards
from referee.rules.deal import Deal
from referee.people.human import Human, PersonLeft, _norm
from referee.people.play import run_play
from referee.seats.seat import BotFault, FaultKind, InProcessSeat

ROOT = Path(__file__).resolve().parents[1]
SCRIPTED = Path(__file__).parent / "play_bots" / "scripted.py"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CARD_RE = re.compile(r"(?<![A-Za-z0-9])[789XUOKA][hlba](?![A-Za-z0-9])")
TITLE_RE = re.compile(r"── (.+?) ──")
DEAL_RE = re.compile(r"━━ partie (\d+) · deal (\d+) ━━")


def scripted(mode: str) -> str:
    return f"{sys.executable} {SCRIPTED} {mode}"


def deck_file(tmp_path: Path, cards: str) -> Path:
    path = tmp_path / "deck.txt"
    path.write_text(cards + "\n")
    return path


def validate(log: Path) -> dict:
    r = subprocess.run([sys.executable, "-m", "referee.cli", "validate", "--json", str(log)],
                       capture_output=True, text=True, timeout=300)
    return json.loads(r.stdout)["files"][0]


def read_log(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


# ------------------------------------------------------------------ driving the terminal
class Decision:
    def __init__(self, deal: int, title: str, menu: list[str], hand: list[str]):
        self.deal, self.title, self.menu, self.hand = deal, title, menu, hand


def parse_menu(chunk: str) -> list[str]:
    items: list[str] = []
    for line in chunk.splitlines():
        if re.match(r"^  \d+\) ", line):
            items += [label.strip() for _n, label in re.findall(r"(\d+)\) (.*?)(?=   \d+\) |$)", line)]
    return items


def parse_hand(chunk: str) -> list[str]:
    cards: list[str] = []
    on = False
    for line in chunk.splitlines():
        if line.startswith("hand    "):
            on = True
        elif not line.startswith("        "):
            on = False
        if on:
            cards += CARD_RE.findall(line)
    return cards


class Terminal:
    """`marias play ARGS` in a pseudo-terminal; ``policy(decision, prompt_example)`` answers each prompt."""

    def __init__(self, args: list[str], cwd: Path):
        env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
        self.child = pexpect.spawn(sys.executable, ["-m", "referee.cli", "play", *args], cwd=str(cwd), env=env,
                                   encoding="utf-8", timeout=120, dimensions=(50, 220))
        self.raw = ""
        self.screen = ""  # everything shown, colours removed, "\r\n" as "\n"
        self.decisions: list[Decision] = []
        self.deal = 0

    def _take(self, text: str) -> str:
        self.raw += text
        clean = ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "")
        self.screen += clean
        for m in DEAL_RE.finditer(clean):
            self.deal = int(m.group(2))
        return clean

    def play(self, policy, stop=None) -> int | None:
        """Answer prompts until the program ends (its exit status) or ``stop(decision)`` is true (None)."""
        while True:
            i = self.child.expect([r"your choice> ", r"\(e\.g\. ([^;]+); back for the choices\)> ", pexpect.EOF])
            chunk = self._take(self.child.before + (self.child.after if i < 2 else ""))
            if i == 2:
                self.child.close()
                return self.child.exitstatus
            titles = TITLE_RE.findall(chunk)
            if titles:
                self.decisions.append(Decision(self.deal, titles[-1], parse_menu(chunk), parse_hand(chunk)))
            d = self.decisions[-1]
            if stop is not None and i == 0 and titles and stop(d):
                return None
            example = self.child.match.group(1) if i == 1 else None
            self.child.sendline(policy(d, example))

    def interrupt(self) -> int:
        self.child.sendintr()
        self.child.expect(pexpect.EOF)
        self._take(self.child.before)
        self.child.close()
        return self.child.exitstatus


def number_of(d: Decision, predicate) -> str:
    for i, label in enumerate(d.menu, 1):
        if predicate(label):
            return str(i)
    raise AssertionError(f"no such choice in {d.menu}")


def generic(d: Decision, example: str | None) -> str:
    """A person who takes the first choice, the suggested discards, and lays down when offered."""
    if example:
        return example
    if any(label.startswith("lay the cards down") for label in d.menu):
        return number_of(d, lambda label: label.startswith("lay the cards down"))
    return "1"


# ------------------------------------------------------------------ what the screen must agree with
def seat_knows(rec: dict, seat: int) -> set[str]:
    """The cards ``seat`` may have seen in a logged deal, from the record alone: its own hand,
    every card played (a trick cut short by laying down included) or laid, the talons it discarded or took, the trump card if it chose it
    or it was shown with the contract."""
    known = set(rec["hands"][seat])
    known |= {d["action"][5:] for d in rec["decisions"] if d["action"].startswith("play:")}  # on the table, seen by all
    if rec.get("laid"):
        known |= set(rec["laid"]["cards"])
    talons = rec.get("talons") or []
    for i, t in enumerate(talons):
        took = i + 1 < len(talons) and talons[i + 1]["seat"] == seat
        if t["seat"] == seat or took:
            known |= set(t["cards"])
    if rec.get("trump_card") and (seat == rec["forhont"] or (rec["game"] == "barva" and rec.get("contract"))):
        known.add(rec["trump_card"])
    return known


def legal_per_decision(rec: dict, seat: int) -> list[tuple[str, list[str]]]:
    """The engine's legal actions at each of ``seat``'s decisions, replaying the logged deal."""
    d = Deal([Card.parse(c) for c in rec["deck"]], rec["forhont"])
    out = []
    for dec in rec["decisions"]:
        if dec["seat"] == seat:
            out.append((d.decision, [a.code for a in d.legal_actions()]))
        d.apply(dec["action"])
    return out


def offered(decision: str, d: Decision) -> set[str]:
    """The actions the screen's menu stands for."""
    out = set()
    for label in d.menu:
        if label.startswith("lay the cards down"):
            out.add("lay")
        elif label.startswith("z lidu"):
            out.add("trump:zlidu")
        elif decision in ("play", "trump") and CARD_RE.fullmatch(label):
            out.add(f"{decision}:{label}")
        elif decision == "talon":
            out.add(label.split("—")[0].strip().strip("„“?").lower())
        else:
            out.add(label)
    return out


def check_screen_against_log(term: Terminal, log: Path, seat: int) -> list[dict]:
    """Per finished deal: the menus were exactly the legal actions, and no unknown card was shown."""
    deals = [r for r in read_log(log) if r["type"] == "deal"]
    assert deals, "no deal was finished"
    sections = DEAL_RE.split(term.screen)
    # sections: [before, partie, deal, text, partie, deal, text, ...]
    text_of = {int(sections[i + 1]): sections[i + 2] for i in range(1, len(sections) - 2, 3)}
    for rec in deals:
        shown = set(CARD_RE.findall(text_of[rec["deal"]]))
        unknown = shown - seat_knows(rec, seat)
        assert not unknown, f"deal {rec['deal']}: the screen showed {sorted(unknown)}, which seat {seat} could not know"
        mine = [d for d in term.decisions if d.deal == rec["deal"]]
        legal = legal_per_decision(rec, seat)
        assert len(mine) == len(legal), f"deal {rec['deal']}: {len(mine)} choices shown, {len(legal)} decisions logged"
        for d, (decision, actions) in zip(mine, legal):
            if decision in ("play", "trump"):
                assert offered(decision, d) == set(actions), (rec["deal"], d.title, d.menu, actions)
            elif decision == "talon":
                assert offered(decision, d) == {a.split(":")[0] for a in actions}
            else:
                assert len(d.menu) == len(actions), (d.menu, actions)
    return deals


def assert_settlement_shown(rec: dict, screen: str) -> None:
    """Every settled component of the logged deal, and its payments, appear after the deal."""
    part = screen.split(f"━━ partie {rec['partie']} · deal {rec['deal']} ━━")[1].split("━━ partie")[0]
    for c in rec["result"]["components"]:
        level = " " + ["", "flek", "re", "tutti", "boty"][c["level"]] if c["level"] else ""
        line = rf"{re.escape(c['name'] + level)}\s+{c['owner']}\s+{'won' if c['won'] else 'lost'}\s+{c['amount']} groše each"
        assert re.search(line, part), (line, part[-1500:])
    pay = rec["result"]["payments"]
    assert re.search("this deal: " + " · ".join(rf".*{re.escape(f'{x:+d}')}" for x in pay), part)


# ------------------------------------------------------------------ end to end, in a pseudo-terminal
# Deal 1 dealt from the top in blocks 7-5-5-5-5-5 (R2.6): seat 0 gets Kh Oh 7h Ah Xh Al Xl, then 9h 8h Aa Xa 8l.
DECK_A = ("Kh Oh 7h Ah Xh Al Xl  Kb Ob Ub 9b 8b  Ka Oa Ua 9a 8a  9h 8h Aa Xa 8l  7b Ab Xb Kl Ol  7a Uh Ul 9l 7l")


def test_trump_game_with_a_hlaska_and_fleks_then_the_whole_partie(tmp_path):
    """Deal 1: the person (forhont) names Kh as trump card, asks Barva? with typed discards, plays hra;
    the raiser fleks, the person says re, and so on up to boty; leading Kh while holding Oh is a
    hláška of 40 in trumps.  Then the rest of the partie, to a complete log that validates."""
    deck = deck_file(tmp_path, DECK_A)
    term = Terminal(["-b", scripted("raiser"), "-b", scripted("passive"), "--deck", str(deck), "--log", str(tmp_path / "logs")], tmp_path)
    bad_input_done = []

    def policy(d: Decision, example: str | None) -> str:
        if d.deal != 1:
            return generic(d, example)
        if d.title.startswith("choose the trump card"):
            if not bad_input_done:
                bad_input_done.append(1)
                return "xyz"  # answered with what is allowed, never a fault
            return "Kh"
        if d.title.startswith("discard two"):
            return "barva 8l 8h"
        if d.title.startswith("announce the contract"):
            return "hra"
        if d.title.startswith("raise"):
            return str(len(d.menu))  # the highest raise offered
        if "Kh" in d.menu and "Oh" in d.hand:
            return "kh"
        return generic(d, example)

    status = term.play(policy)
    assert status == 0, term.screen[-2000:]
    screen = term.screen
    assert "„xyz“ is not allowed here." in screen
    assert "you: trump card Kh (červené král) from the first seven" in screen
    assert "you: discards 8l 8h — „Barva?“" in screen
    assert "you: „hra“ — shows the trump card Kh: trumps are ♥ červené" in screen
    # R5.3: flek (defence), re (actor), tutti (defence), boty (actor)
    for line in ("scripted.py raiser (seat 1): „flek na hru“", "you: „re na hru“", "scripted.py raiser (seat 1): „tutti na hru“", "you: „boty na hru“"):
        assert line in screen, line
    assert "hláška: you 40 in ♥ červené" in screen
    assert "\x1b[" in term.raw  # colours on a terminal
    (log,) = (tmp_path / "logs").glob("play-*.jsonl")
    deals = check_screen_against_log(term, log, seat=0)
    first = deals[0]
    assert first["game"] == "barva" and first["contract"] == "hra" and first["levels"]["hra"] == 4
    assert {"seat": 0, "suit": "h", "points": 40} in first["hlasky"]
    assert_settlement_shown(first, term.screen)
    assert len(deals) == 12
    rep = validate(log)
    assert rep["ok"] and rep["complete"], rep
    end = [r for r in read_log(log) if r["type"] == "partie_end"][0]
    assert f"place {int(end['places'][0]) if end['places'][0] == int(end['places'][0]) else end['places'][0]}: you {end['totals'][0]:+d} groše" in screen
    assert f"you (seat 0) {end['totals'][0]:+d} groše in 1 partie" in screen


def test_betl_after_spatna_with_fleks_and_ctrl_c_leaves_an_incomplete_log(tmp_path):
    """The person in seat 1 answers „špatná“ to the forhont's Barva?, takes the talon and plays
    betl; the raiser fleks it and the person re-s.  After deal 1, Ctrl-C in deal 2: the log holds
    deal 1 and `marias validate` calls it incomplete, not a result."""
    term = Terminal(["--seat", "1", "-b", scripted("passive"), "-b", scripted("raiser"), "--seed", "4", "--plain",
                     "--log", str(tmp_path / "logs")], tmp_path)

    def policy(d: Decision, example: str | None) -> str:
        if example:
            return example
        if d.title == "your answer":
            return "špatná"
        if d.title.startswith("discard two"):
            return number_of(d, lambda label: label.startswith("„betl“"))
        if d.title.startswith("raise"):
            return str(len(d.menu))
        if d.title == "your card":
            return str(len(d.menu))  # the lowest card
        return "1"

    assert term.play(policy, stop=lambda d: d.deal == 2) is None
    status = term.interrupt()
    assert status == 130
    screen = term.screen
    assert "\x1b[" not in term.raw  # --plain: no colours
    assert "you: „špatná“ — takes the talon" in screen
    assert re.search(r"you: discards \S\S \S\S — „betl“", screen)
    assert "scripted.py raiser (seat 2): „flek na betla“" in screen
    assert "you: „re na betla“" in screen
    assert "stopped before the end: no result" in screen
    (log,) = (tmp_path / "logs").glob("play-*.jsonl")
    deals = check_screen_against_log(term, log, seat=1)
    assert len(deals) == 1
    rec = deals[0]
    assert rec["game"] == "betl" and rec["actor"] == 1 and rec["levels"]["betl"] >= 2
    assert [c["name"] for c in rec["result"]["components"]] == ["betl"]
    assert_settlement_shown(rec, screen)
    rep = validate(log)
    assert not rep["complete"] and not rep["ok"]
    assert {p["rule"] for p in rep["problems"]} == {"incomplete"}, rep["problems"]


def test_a_whole_partie_against_the_robot(tmp_path):
    """From the README: `marias play --bot robot --bot robot`; typos and unplayable cards are
    answered, never faulted; the log is complete and valid."""
    term = Terminal(["-b", "robot", "-b", "robot", "--seed", "11", "--log", str(tmp_path / "logs")], tmp_path)
    tried = set()

    def policy(d: Decision, example: str | None) -> str:
        if d.title == "your card" and "unplayable" not in tried:
            playable = {label for label in d.menu if CARD_RE.fullmatch(label)}
            other = [c for c in d.hand if c not in playable]
            if other:
                tried.add("unplayable")
                return other[0]
        if d.title.startswith("raise") and "word" not in tried:
            tried.add("word")
            return "dobrá"
        return generic(d, example)

    assert term.play(policy) == 0
    assert "may not be played now (R7" in term.screen
    (log,) = (tmp_path / "logs").glob("play-*.jsonl")
    deals = check_screen_against_log(term, log, seat=0)
    assert len(deals) == 12
    assert not any(r["faults"] for r in deals)
    rep = validate(log)
    assert rep["ok"] and rep["complete"], rep
    assert "══ partie 1 is over ══" in term.screen


def test_bad_options_are_refused(tmp_path):
    r = subprocess.run([sys.executable, "-m", "referee.cli", "play", "-b", "robot"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "exactly two bots" in r.stderr
    r = subprocess.run([sys.executable, "-m", "referee.cli", "play", "-b", "robot", "-b", "nosuchprogram-xyz", "--seat", "3"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--seat" in r.stderr
    r = subprocess.run([sys.executable, "-m", "referee.cli", "play", "-b", "robot", "-b", "nosuchprogram-xyz"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no program 'nosuchprogram-xyz' to run for seat 2" in r.stderr


# ------------------------------------------------------------------ the seat, with injected streams
class AutoPerson(io.StringIO):
    """An input stream that answers by looking at what the Human wrote last (like generic())."""

    def __init__(self, out: io.StringIO, limit: int = 5000):
        super().__init__()
        self.screen = out
        self.asked = 0
        self.limit = limit

    def readline(self, *args) -> str:
        self.asked += 1
        if self.asked > self.limit:
            return ""
        text = self.screen.getvalue()
        tail = text[text.rfind("──"):]
        m = re.search(r"\(e\.g\. ([^;]+); back for the choices\)> $", tail)
        if m:
            return m.group(1) + "\n"
        lay = re.search(r"(\d+)\) lay the cards down", tail)
        return (lay.group(1) if lay else "1") + "\n"


def test_run_play_in_process_plays_a_partie_and_its_log_validates(tmp_path):
    out = io.StringIO()
    outcome = run_play(["random", "robot"], seat=2, seed="3", log_dir=tmp_path, inp=AutoPerson(out), out=out, plain=True)
    assert not outcome.interrupted
    assert sum(outcome.result.totals) == 0
    assert outcome.result.stats[2].decisions > 0 and not outcome.result.stats[2].faults
    rep = validate(outcome.log_path)
    assert rep["ok"] and rep["complete"], rep
    header = read_log(outcome.log_path)[0]
    assert header["bots"][2]["command"] == "builtin:person"
    screen = out.getvalue()
    for rec in (r for r in read_log(outcome.log_path) if r["type"] == "deal"):
        part = screen.split(f"━━ partie 1 · deal {rec['deal']} ━━")[1].split("━━ partie 1 · deal")[0]
        assert set(CARD_RE.findall(part)) <= seat_knows(rec, 2)


def test_end_of_input_stops_the_match_with_an_incomplete_log(tmp_path):
    out = io.StringIO()
    outcome = run_play(["robot", "robot"], seed="2", log_dir=tmp_path, inp=AutoPerson(out, limit=40), out=out)
    assert outcome.interrupted and outcome.result is None
    rep = validate(outcome.log_path)
    assert not rep["complete"] and {p["rule"] for p in rep["problems"]} == {"incomplete"}


def view(**kw) -> dict:
    v = {"seat": 0, "forhont": 0, "dealer": 2, "phase": "play", "to_move": 0, "hand": [], "zlidu": False,
         "trump_card": None, "trump": None, "talon": None, "game": "barva", "actor": 0, "contract": "hra",
         "levels": {"hra": 0}, "proti": {}, "bids": [], "tricks": [], "trick": [], "hlasky": [], "points": [0, 0, 0],
         "laid": None, "lay_offered": False, "result": None}
    v.update(kw)
    return v


def person(lines: str = "", **kw) -> tuple[Human, io.StringIO]:
    out = io.StringIO()
    return Human(io.StringIO(lines), out, color=False, **kw), out


def test_inputs_a_person_types_for_a_card():
    v = view(hand=["Kh", "Xh", "7l", "Ab"])
    legal = ["play:Kh", "play:Xh", "play:7l", "play:Ab"]
    for typed, want in [("1", "play:Xh"), ("kh", "play:Kh"), ("10h", "play:Xh"), ("K♥", "play:Kh"),
                        ("  ab ", "play:Ab"), ("play:7l", "play:7l")]:
        h, _ = person(typed + "\n")
        assert h.choose(v, legal) == want, typed


def test_anything_else_is_answered_with_what_is_allowed():
    v = view(hand=["Kh", "Xh", "7l"])
    h, out = person("9\nhello\nXh\n")
    assert h.choose(v, ["play:Kh", "play:Xh"]) == "play:Xh"
    text = out.getvalue()
    assert "there is no choice 9: choose 1–2" in text
    assert "„hello“ is not allowed here." in text
    h, out = person("7l\nquit\n")
    with pytest.raises(PersonLeft):
        h.choose(v, ["play:Kh", "play:Xh"])
    assert "7l may not be played now" in out.getvalue()
    h, _ = person("")
    with pytest.raises(KeyboardInterrupt):  # end of input stops the match
        h.choose(v, ["play:Kh"])


def test_words_for_answers_raises_and_contracts():
    h, _ = person("špatná\n")
    assert h.choose(view(phase="answer", contract=None, levels={}), ["dobra", "spatna"]) == "spatna"
    h, _ = person("Dobrá\n")
    assert h.choose(view(phase="answer", contract=None, levels={}), ["dobra", "spatna"]) == "dobra"
    h, _ = person("sto a sedma\n")
    assert h.choose(view(phase="contract", contract=None, levels={}), ["contract:hra", "contract:sto-sedma"]) == "contract:sto-sedma"
    fv = view(phase="flek", levels={"hra": 1, "sedma": 0})
    legal = ["dobra", "flek:hra", "flek:sedma", "flek:hra,sedma"]
    h, out = person("flek\nre\n")  # "flek" alone means only flek:sedma (hra stands at flek already: raising it is re)
    assert h.choose(fv, legal) == "flek:sedma"
    h, out = person("re na hru\n")
    assert h.choose(fv, legal) == "flek:hra"
    h, out = person("sedma proti\n")
    assert h.choose(view(phase="flek", seat=1, levels={"hra": 0}), ["dobra", "flek:hra", "proti:sedma", "flek:hra proti:sedma"]) == "proti:sedma"
    fv2 = view(phase="flek", levels={"hra": 0, "sedma": 0})
    h, out = person("flek\n2\n")
    assert h.choose(fv2, ["dobra", "flek:hra", "flek:sedma", "flek:hra,sedma"]) == "flek:hra"
    assert "could mean" in out.getvalue()


def test_talon_in_one_line_or_in_two_steps_and_refused_discards_are_explained():
    hand = ["Ah", "Kh", "7h", "8l", "9l", "Xb", "Ob", "7b", "Aa", "Xa", "Ua", "8a"]
    legal = [f"{k}:{a},{b}" for k in ("barva", "betl") for a in hand for b in hand if a != b
             and (k == "betl" or not ({a, b} & {"Ah", "Xb", "Aa", "Xa", "Kh"}))]
    v = view(phase="talon", hand=hand, trump_card="Kh", trump="h", game=None, actor=None, contract=None, levels={})
    h, _ = person("betl Ah Aa\n")
    assert h.choose(v, legal) == "betl:Ah,Aa"
    h, out = person("1\nAh 7h\n7h 8l\n")
    assert h.choose(v, legal) == "barva:7h,8l"
    assert "Ah may not be discarded for „Barva?“" in out.getvalue()
    h, out = person("barva Kh 7h\nback\n2\n9l 8a\n")
    assert h.choose(v, legal) == "betl:9l,8a"
    assert "Kh may not be discarded" in out.getvalue()


@settings(max_examples=60, deadline=None)
@given(st.sets(st.sampled_from(CARDS), min_size=1, max_size=10), st.booleans())
def test_lay_down_is_offered_exactly_when_it_is_legal(cards, lay):
    legal = [f"play:{c}" for c in cards] + (["lay"] if lay else [])
    h, _ = person()
    menu = h.menu("play", view(hand=[str(c) for c in cards]), legal)
    assert any(o.action == "lay" for o in menu) == lay
    assert sorted(o.action for o in menu) == sorted(legal)  # every legal action is a numbered choice


def test_raises_in_events_follow_the_rounds_of_r5_3():
    """Both defenders raising hra in one round is one flek; the actor's answer is re; the next defence round tutti."""
    h, out = person()
    h.on_partie_start({"partie": 1, "seat": 1, "deals": 12, "players": ["a", "me", "b"]})
    h.on_deal_start({"deal": 1, "forhont": 0, "dealer": 2, "cut": None, "totals": [0, 0, 0]})
    events = [(0, "trump", "trump"), (0, "talon", "barva"), (1, "answer", "dobra"), (2, "answer", "dobra"),
              (0, "contract", "contract:sedma"), (1, "flek", "flek:hra"), (2, "flek", "flek:hra,sedma"),
              (0, "flek", "flek:hra"), (1, "flek", "flek:hra"), (2, "flek", "dobra")]
    for seat, decision, action in events:
        h.on_event({"event": {"kind": "action", "seat": seat, "decision": decision, "action": action,
                              **({"trump_card": "Ul"} if decision == "contract" else {})}})
    lines = out.getvalue().splitlines()
    assert "  a (seat 0): „sedma“ — shows the trump card Ul: trumps are ♠ zelené" in lines
    assert "  you: „flek na hru“ (raising round 1)" in lines
    assert "  b (seat 2): „flek na obojí“ (raising round 1)" in lines
    assert "  a (seat 0): „re na hru“ (raising round 2)" in lines
    assert "  you: „tutti na hru“ (raising round 3)" in lines
    assert "  b (seat 2): „dobrá“ (raising round 3)" in lines


def test_the_position_shows_the_hand_by_suit_and_the_table():
    h, out = person()
    h.on_partie_start({"partie": 1, "seat": 0, "deals": 12, "players": ["me", "robot", "random"]})
    v = view(hand=["7b", "Ah", "Ul", "Xh", "9h"], trump_card="Ul", trump="l",
             trick=[{"seat": 1, "card": "Kh"}], hlasky=[{"seat": 2, "suit": "a", "points": 20}], points=[10, 0, 20])
    text = "\n".join(h.screen.position("play", v))
    assert "hand    ♥ červené Ah Xh 9h" in text  # trump-game order: the ten below the ace
    assert "♠ zelené  Ul" in text and "♦ kule    7b" in text
    assert "table   robot (seat 1) Kh" in text
    assert "hlášky  random (seat 2) 20 ♣ žaludy" in text
    assert "trump   Ul (zelené spodek)" in text
    betl = "\n".join(h.screen.position("play", view(hand=["Xh", "Uh", "Ah"], game="betl", contract=None, levels={"betl": 0})))
    assert "♥ červené Ah Uh Xh" in betl  # betl order: the ten between nine and spodek


def test_norm():
    assert _norm(" Špatná! ") == "spatna" and _norm("10♦") == "xb" and _norm("betl 7h,8h") == "betl 7h 8h"


# ------------------------------------------------------------------ the in-process seat adapter
class _Answers:
    name, version = "fixed", "2"

    def __init__(self, answer):
        self.answer = answer
        self.seen: list[str] = []

    def on_hello(self, m): self.seen.append("hello")
    def on_deal_start(self, m): self.seen.append("deal_start")

    def decide(self, decision, view, legal):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def encode_line(message: dict) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def _run(result):
    """The adapter's methods may be coroutines (an asyncio referee) or plain calls (a synchronous one)."""
    import asyncio
    import inspect
    return asyncio.run(result) if inspect.isawaitable(result) else result


def test_in_process_seat_speaks_the_protocol_lines():
    bot = _Answers("play:Kh")
    seat = InProcessSeat(bot)
    _run(seat.start())
    hello, _ = _run(seat.request_lines([encode_line({"type": "hello", "protocol": 1, "referee": "marias", "limits": {}})], 1.0))
    assert hello == {"type": "hello", "protocol": 1, "name": "fixed", "version": "2"}
    req = {"type": "request", "id": 7, "partie": 1, "deal": 1, "decision": "play", "time_ms": 100, "totals": [0, 0, 0],
           "view": view(), "legal": ["play:Kh"]}
    answer, elapsed = _run(seat.request_lines([encode_line({"type": "deal_start"}), encode_line(req)], None))
    assert answer == {"type": "action", "id": 7, "action": "play:Kh"} and elapsed >= 0
    assert bot.seen == ["hello", "deal_start"]
    assert seat.alive and not seat.closed
    _run(seat.close())
    assert seat.closed and not seat.alive


def test_in_process_seat_faults_like_a_process():
    req = encode_line({"type": "request", "id": 1, "decision": "play", "view": view(), "legal": ["play:Kh"]})
    seat = InProcessSeat(_Answers(RuntimeError("boom")))
    _run(seat.start())
    with pytest.raises(BotFault):  # a bot that raises is a bot that died
        _run(seat.request_lines([req], None))
    seat = InProcessSeat(_Answers(object()))  # an answer that is no JSON
    _run(seat.start())
    with pytest.raises(BotFault):
        _run(seat.request_lines([req], None))


def test_a_person_who_does_not_answer_in_time_is_charged_a_timeout(tmp_path):
    """--move-time: nobody types (a pipe that stays empty), the limit passes, the referee charges a timeout fault."""
    r, w = os.pipe()
    try:
        inp = os.fdopen(r, "r")
        out = io.StringIO()
        h = Human(inp, out, color=False, move_ms=30)
        seat = InProcessSeat(h)
        _run(seat.start())
        req = encode_line({"type": "request", "id": 1, "decision": "play", "view": view(hand=["Kh"]), "legal": ["play:Kh"]})
        with pytest.raises(BotFault) as e:
            _run(seat.request_lines([req], 0.03))
        assert e.value.kind == FaultKind.TIMEOUT
        assert "time is up" in out.getvalue()
    finally:
        os.close(w)


def test_deck_a_is_a_deck():
    assert sorted(DECK_A.split()) == sorted(format_cards(CARDS).split())


def test_move_time_makes_a_silent_person_fault_like_a_bot_and_the_log_still_validates(tmp_path):
    """--move-time 30: nobody types; each deal's first request to the person times out (R12.1),
    the seat starts afresh, and after 3 faults R12.3 takes over for the rest of the partie."""
    r, w = os.pipe()
    try:
        out = io.StringIO()
        outcome = run_play(["robot", "robot"], seat=0, seed="6", log_dir=tmp_path, move_ms=30, inp=os.fdopen(r, "r"), out=out)
    finally:
        os.close(w)
    assert not outcome.interrupted
    assert outcome.result.stats[0].faults == {"timeout": 3}
    assert out.getvalue().count("time is up (--move-time)") == 3
    assert "after the fault your seat starts afresh" in out.getvalue()
    rep = validate(outcome.log_path)
    assert rep["ok"] and rep["complete"], rep


def test_question_mark_shows_the_whole_bidding_and_the_tricks_as_this_seat_saw_them():
    h, out = person("?\n1\n")
    h.on_partie_start({"partie": 1, "seat": 1, "deals": 12, "players": ["a", "me", "b"]})
    bids = [{"seat": 0, "decision": "trump", "action": "trump"}, {"seat": 0, "decision": "talon", "action": "barva"},
            {"seat": 1, "decision": "answer", "action": "dobra"}, {"seat": 2, "decision": "answer", "action": "dobra"},
            {"seat": 0, "decision": "contract", "action": "contract:hra"}, {"seat": 1, "decision": "flek", "action": "flek:hra"},
            {"seat": 2, "decision": "flek", "action": "dobra"}, {"seat": 0, "decision": "flek", "action": "flek:hra"},
            {"seat": 1, "decision": "flek", "action": "dobra"}, {"seat": 2, "decision": "flek", "action": "dobra"}]
    v = view(seat=1, hand=["7h", "8h"], trump_card="Xb", trump="b", bids=bids, levels={"hra": 2},
             tricks=[{"leader": 0, "cards": ["Ab", "9b", "Kb"], "winner": 0}])
    assert h.choose(v, ["play:7h", "play:8h"]) == "play:8h"
    text = out.getvalue()
    assert "bidding a (seat 0): chooses a trump card from his first seven" in text
    assert "        a (seat 0): discards two cards — „Barva?“" in text
    assert "        a (seat 0): „hra“ — shows the trump card Xb: trumps are ♦ kule" in text
    assert "        you: „flek na hru“" in text and "        a (seat 0): „re na hru“" in text
    assert "trick 1  a (seat 0) Ab · you 9b · b (seat 2) Kb  → a (seat 0)" in text


def test_refused_input_at_the_discard_prompt_is_explained():
    """Issue 25 point 5: a lone ``1`` (or any one word) at the discard prompt says what is wanted."""
    hand = ["Ah", "Kh", "7h", "8l", "9l", "Xb", "Ob", "7b", "Aa", "Xa", "Ua", "8a"]
    legal = [f"{k}:{a},{b}" for k in ("barva", "betl") for a in hand for b in hand if a != b
             and (k == "betl" or not ({a, b} & {"Ah", "Xb", "Aa", "Xa", "Kh"}))]
    v = view(phase="talon", hand=hand, trump_card="Kh", trump="h", game=None, actor=None, contract=None, levels={})
    h, out = person("1\n1\nhello\n7h 8l\n")
    assert h.choose(v, legal) == "barva:7h,8l"
    text = out.getvalue()
    assert "„1“ („Barva?“ is chosen already): name two cards to discard for „Barva?“, such as" in text
    assert "„hello“: name two cards to discard" in text
    h, out = person("1\n2\n9l 8a\n")  # a number of another game still switches to it
    assert h.choose(v, legal) == "betl:9l,8a"


def test_an_illegal_card_names_the_exact_rule_as_the_engine_says_it():
    """Issue 25 point 5: the person is told what a bot is told (R7.2: must follow suit …)."""
    v = view(hand=["Kh", "7a", "9b"], trick=[{"seat": 1, "card": "Xa"}], game="barva", trump="h", actor=1,
             levels={"hra": 0}, proti={}, tricks=[])
    h, out = person("9b\nquit\n")
    with pytest.raises(PersonLeft):
        h.choose(v, ["play:7a"])
    assert "9b may not be played now (R7.2: must follow suit with a žaludy card)." in out.getvalue()
    v2 = dict(v, hand=["Kh", "9b"])
    h, out = person("9b\nquit\n")
    with pytest.raises(PersonLeft):
        h.choose(v2, ["play:Kh"])
    assert "R7.2: void in žaludy: must play a trump (červené)" in out.getvalue()


def test_play_draws_a_secret_seed_unless_one_is_given(monkeypatch, tmp_path):
    """Issue 25 point 5: ``marias play`` deals fresh cards each time (a match's secret seed)."""
    from typer.testing import CliRunner

    import referee.people.play as play_mod
    from referee.cli import app

    seen = []

    def fake_run_play(bots, **kw):
        seen.append((kw["seed"], kw["secret"]))
        return play_mod.PlayResult(kw["seat"], None, None, interrupted=True)

    monkeypatch.setattr(play_mod, "run_play", fake_run_play)
    for args in ([], [], ["--seed", "7"]):
        CliRunner().invoke(app, ["play", "-b", "robot", "-b", "robot", *args])
    (a, sa), (b, sb), (c, sc) = seen
    assert sa and sb and a != b and len(a) >= 32
    assert (c, sc) == ("7", False)
    out = io.StringIO()
    outcome = run_play(["robot", "robot"], seed="f" * 32, secret=True, log_dir=tmp_path,
                       inp=AutoPerson(out, limit=5), out=out)
    assert "f" * 32 not in outcome.log_path.name
    assert json.loads(outcome.log_path.read_text().splitlines()[0])["decks"] == "secret seed"


def test_after_spatna_the_taken_talon_the_new_actor_and_the_round_of_each_answer_are_shown():
    """Issue 25 point 5: the talon cards taken, no stale actor, answers and raises with their round."""
    from referee.people.screen import Screen

    out = io.StringIO()
    sc = Screen(out, False)
    sc.seat, sc.labels = 1, ["a", "you", "c"]
    bids = [{"seat": 0, "decision": "trump", "action": "trump"},
            {"seat": 0, "decision": "talon", "action": "barva:7h,Ul"},
            {"seat": 1, "decision": "answer", "action": "spatna"}]
    v = view(phase="talon", seat=1, hand=["Ah", "7h", "Ul", "9l"], game="barva", actor=0, contract=None,
             bids=bids, levels={})
    text = "\n".join(sc.position("talon", v))
    assert "talon   7h Ul — taken from the talon (a (seat 0)'s discards)" in text
    assert "you are the actor now" in text and "actor a (seat 0)" not in text
    lines = []
    for seat, decision, action in [(0, "talon", "barva:7h,Ul"), (1, "answer", "dobra"), (2, "answer", "dobra"),
                                   (1, "talon", "betl:Ah,9l"), (2, "answer", "dobra"), (0, "answer", "dobra"),
                                   (2, "flek", "flek:betl"), (0, "flek", "dobra"), (1, "flek", "dobra")]:
        lines += sc.event_lines({"kind": "action", "seat": seat, "decision": decision, "action": action})
    assert "you: „dobrá“ (answer to „Barva?“)" in lines
    assert "a (seat 0): „dobrá“ (answer to „betl“)" in lines
    assert "a (seat 0): „dobrá“ (raising round 1)" in lines
    assert "you: „dobrá“ (raising round 2)" in lines
