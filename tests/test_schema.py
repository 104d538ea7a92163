"""The protocol's JSON Schemas (protocol/schema/) and PROTOCOL.md against the referee.

Three sources of truth are checked against each other:

* messages built with ``protocol.messages`` from real engine states over many
  random deals (every decision kind, every action form, every event kind,
  every result kind) validate against the schemas;
* every line a real ``marias match`` writes to and reads from its bots (its
  transcripts) validates too, a faulting bot included;
* PROTOCOL.md names every decision kind, action form, component, level, view
  field, message type, event kind and fault kind the code knows, and every
  JSON example in it validates.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from protocol import messages as M
from protocol.sdk import DECISIONS
from referee.rules import actions as A
from referee.rules.deal import Deal
from referee.matches.match import BotSpec, FaultPolicy, Limits, MatchConfig, run_match
from referee.matches.tell import deal_events
from referee.rules.partie import Partie, shuffled_deck
from referee.seats.process import FaultKind

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "protocol" / "schema"
PROTOCOL_MD = ROOT / "protocol" / "PROTOCOL.md"
MESSAGE_SCHEMAS = ("hello", "partie_start", "deal_start", "request", "event", "deal_end", "partie_end", "bye", "action")


def _load() -> tuple[dict[str, dict], Registry]:
    schemas = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in SCHEMA_DIR.glob("*.json")
               if p.name != "log.schema.json"}
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return schemas, registry


SCHEMAS, REGISTRY = _load()
VALIDATORS = {name: Draft202012Validator(s, registry=REGISTRY) for name, s in SCHEMAS.items()}


def errors(message: dict, schema: str | None = None) -> list[str]:
    name = schema or message["type"]
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATORS[name].iter_errors(message)]


def assert_valid(message: dict, schema: str | None = None) -> None:
    errs = errors(message, schema)
    assert not errs, f"{json.dumps(message, ensure_ascii=False)[:400]}\n" + "\n".join(errs[:5])


# ------------------------------------------------------------------ the schemas themselves

def test_one_schema_per_message_type_plus_view():
    assert set(SCHEMAS) == set(MESSAGE_SCHEMAS) | {"view"}
    assert set(M.TO_BOT) | set(M.FROM_BOT) <= set(MESSAGE_SCHEMAS)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_is_valid_draft_2020_12(name):
    schema = SCHEMAS[name]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"{name}.json"
    Draft202012Validator.check_schema(schema)


# ------------------------------------------------------------------ in-process messages

_event_bodies = deal_events  # the referee's own event builder


MODES = ("random", "quiet", "not-played", "raise", "proti", "ambitious")


def _pick(deal: Deal, legal: list[str], rng: random.Random, mode: str) -> str:
    """Random legal play, tilted per deal towards a branch that pure chance rarely reaches:
    ``quiet`` (nobody raises: a hra is conceded, R6.1), ``not-played`` (sedma with only the
    hra fleked, R6.2), ``raise`` (long flek chains), ``proti`` (games against),
    ``ambitious`` (the biggest contract); laying down is taken often in every mode."""
    d = deal.decision
    if "lay" in legal and rng.random() < 0.7:
        return "lay"
    trump_game = mode in ("not-played", "proti", "ambitious")
    if trump_game and d == "trump" and mode != "proti":
        sevens = [a for a in legal if a.startswith("trump:7")]  # the trump seven allows sedma
        return sevens[0] if sevens else rng.choice(legal)
    if trump_game and d == "talon":
        barva = [a for a in legal if a.startswith("barva:")]
        return rng.choice(barva or legal)
    if (trump_game or mode == "quiet") and d == "answer":
        return "dobra"
    if d == "contract":
        if mode == "not-played":
            return "contract:sedma" if "contract:sedma" in legal else legal[0]
        if mode == "proti":
            return "contract:hra"
        if mode == "ambitious" or rng.random() < 0.5:
            return legal[-1]
    if d == "flek":
        if mode == "not-played":
            return "flek:hra" if "flek:hra" in legal and deal.to_move != deal.actor else "dobra"
        if mode == "proti":
            proti = [a for a in legal if "proti:" in a]
            if proti:
                return rng.choice(proti)
        rate = {"quiet": 0.0, "raise": 0.8}.get(mode, 0.3)
        if len(legal) > 1 and rng.random() < rate:
            return rng.choice(legal[1:])
        return "dobra"
    return rng.choice(legal)


FAULT_KINDS = [k.value for k in FaultKind]


class Checker:
    """Validates messages, each distinct informational message once (they repeat a lot)."""

    def __init__(self) -> None:
        self.coverage: Counter = Counter()
        self.seen: set[str] = set()
        self.rid = 0

    def once(self, msg: dict) -> None:
        key = json.dumps(msg, sort_keys=True)
        if key not in self.seen:
            self.seen.add(key)
            assert_valid(msg)

    def deal(self, deal: Deal, rng: random.Random, n: int = 1, cut: int | None = None, mode: str = "random") -> None:
        """Play one deal; validate every message the referee would send about it."""
        cov = self.coverage
        for s in range(3):
            self.once(M.deal_start(1, n, s, deal.forhont, deal.dealer, cut))
        fault_at = rng.randrange(60) if rng.random() < 0.15 else None
        step = 0
        while not deal.done:
            seat = deal.to_move
            legal = [str(a) for a in deal.legal_actions()]
            decision = deal.decision
            if step == fault_at:
                kind = rng.choice(FAULT_KINDS)
                deal.fault(seat, kind, f"seat {seat}: a {kind} fault", "evidence", 0.5)
                self.once(M.event(1, n, {"kind": "fault", "seat": seat, "fault": kind,
                                         "message": deal.fault_info.message}))
                cov["event fault"] += 1
                break
            step += 1
            self.rid += 1
            req = M.request(self.rid, 1, n, decision, deal.view(seat), legal, rng.choice([2000, 150, 0]))
            assert_valid(req)
            cov["decision " + decision] += 1
            choice = _pick(deal, legal, rng, mode)
            self.once({"type": "action", "id": 1, "action": choice})
            cov["action " + _form(A.parse_action(choice))] += 1
            before_tricks, before_hl = len(deal.tricks), len(deal.hlasky)
            deal.apply(choice)
            for v in range(3):
                for body in _event_bodies(deal, decision, before_tricks, before_hl, v):
                    self.once(M.event(1, n, body))
                    cov["event " + body["kind"]] += 1
        result = deal.result.to_dict()
        cov["result " + result["kind"]] += 1
        for s in range(3):
            assert_valid(M.deal_end(1, n, s, deal.view(s), result))

    def partie(self, seed: int) -> None:
        rng = random.Random(seed)
        partie = Partie(seed=seed)
        for s in range(3):
            self.once(M.partie_start(1, s, partie.n_deals, ["a", "b", "c"]))
        for deal in partie.iter_deals():
            n = len(partie.deals)
            self.deal(deal, rng, n, partie.cuts[-1], MODES[(seed + n) % len(MODES)])
        assert_valid(M.partie_end(1, partie.totals(), partie.places()))


def _form(action: A.Action) -> str:
    """The action form as PROTOCOL.md's table lists it."""
    k = action.kind
    if k == "trump":
        return "trump:zlidu" if not action.cards else "trump:card"
    if k in ("barva", "betl", "durch") and action.cards:
        return k + ":pair"
    if k == "contract":
        return "contract:" + action.words[0]
    if k == "flek":
        return " ".join(p for p, on in (("flek:", action.words), ("proti:", action.proti)) if on)
    if k == "play":
        return "play:card"
    return k  # dobra spatna durch lay


#: Every form the engine can produce; the coverage test below insists each one was validated.
ALL_FORMS = {"trump:card", "trump:zlidu", "barva:pair", "betl:pair", "durch:pair", "dobra", "spatna", "durch",
             "contract:hra", "contract:sedma", "contract:sto", "contract:sto-sedma", "flek:", "proti:",
             "flek: proti:", "play:card", "lay"}


def test_messages_from_many_random_deals_validate():
    check = Checker()
    for seed in range(12):
        check.partie(seed)
    cov = check.coverage
    assert {"decision " + d for d in DECISIONS} <= set(cov), cov
    assert {"action " + f for f in ALL_FORMS} <= set(cov), sorted(cov)
    assert {"event " + k for k in ("action", "trick", "hlaska", "laid", "fault")} <= set(cov), sorted(cov)
    assert {"result " + k for k in ("played", "conceded", "not-played", "fault")} <= set(cov), sorted(cov)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(0, 2), st.sampled_from(MODES))
def test_messages_validate_for_any_deal(seed, forhont, mode):
    Checker().deal(Deal(shuffled_deck(seed), forhont), random.Random(seed), mode=mode)


def test_hello_both_directions_and_bye():
    assert_valid(M.hello("0.1.0", Limits().to_dict()))
    assert_valid(M.hello("0.1.0", Limits(bank_ms=60_000, increment_ms=100).to_dict()))
    assert_valid({"type": "hello", "protocol": 1, "name": "lowcard", "version": "1.0"})
    assert_valid(M.BYE)
    for bad in ({"type": "hello", "protocol": 2, "name": "x", "version": "1"},
                {"type": "hello", "protocol": 1, "name": "", "version": "1"},
                {"type": "hello", "protocol": 1, "version": "1"},
                {"type": "hello", "protocol": "1", "name": "x", "version": "1"}):
        assert errors(bad), bad


def test_action_answer_validates_and_malformed_ones_do_not():
    good = [{"type": "action", "id": 5, "action": a} for a in
            ("dobra", "spatna", "durch", "lay", "play:Ah", "trump:zlidu", "trump:7l", "barva:7h,8h", "betl:Ab,Xa",
             "durch:Ub,Ob", "contract:sto-sedma", "flek:hra", "flek:hra,sedma", "flek:sedma-proti",
             "proti:sedma", "proti:sedma,sto", "flek:hra proti:sto")]
    for msg in good:
        assert_valid(msg)
    bad = [
        {"type": "action", "id": 5},                                  # no action
        {"type": "action", "action": "dobra"},                        # no id
        {"type": "action", "id": "5", "action": "dobra"},             # id as a string
        {"type": "action", "id": 5.5, "action": "dobra"},             # not an integer
        {"type": "answer", "id": 5, "action": "dobra"},               # wrong type
        {"type": "action", "id": 5, "action": "dobrá"},               # not the ASCII word
        {"type": "action", "id": 5, "action": "play:Zh"},             # no such card
        {"type": "action", "id": 5, "action": "play:ah"},             # rank then suit, case matters
        {"type": "action", "id": 5, "action": "play:Ah "},            # trailing space
        {"type": "action", "id": 5, "action": "barva:7h"},            # one discard
        {"type": "action", "id": 5, "action": "barva:7h, 8h"},        # space in the list
        {"type": "action", "id": 5, "action": "contract:betl"},       # not a contract
        {"type": "action", "id": 5, "action": "flek:"},               # nothing raised
        {"type": "action", "id": 5, "action": "flek:hra  proti:sto"}, # two spaces
        {"type": "action", "id": 5, "action": "proti:hra"},           # not a game against
        {"type": "action", "id": 5, "action": ["dobra"]},             # not a string
        {"type": "action", "id": 5, "action": "dobra", "extra": 1},   # unknown field
    ]
    for msg in bad:
        assert errors(msg, "action"), msg


def test_schema_rejects_broken_views():
    d = Deal(shuffled_deck(3), 0)
    req = M.request(1, 1, 1, d.decision, d.view(0), [str(a) for a in d.legal_actions()], 2000)
    assert_valid(req)
    for mutate in (lambda r: r["view"].__setitem__("hand", ["Zz"]),
                   lambda r: r["view"].__setitem__("seat", 3),
                   lambda r: r["view"].__setitem__("phase", "bidding"),
                   lambda r: r["view"].pop("trump_card"),
                   lambda r: r["view"]["levels"].__setitem__("hra", 5),
                   lambda r: r.__setitem__("legal", []),
                   lambda r: r.__setitem__("decision", "bid")):
        broken = json.loads(json.dumps(req))
        mutate(broken)
        assert errors(broken), broken


# ------------------------------------------------------------------ a real match, every line

def test_every_line_of_a_real_match_validates(tmp_path):
    """Run the referee with a bot that faults once (restarted afterwards) and validate its transcripts."""
    faulty = ROOT / "tests" / "fault_bots" / "faulty.py"
    spec = BotSpec(label="faulty-illegal", argv=[sys.executable, str(faulty), "illegal", "7"],
                   env={"FAULTY_ONCE": str(tmp_path / "bot" / "once")},
                   workdir=str(tmp_path / "bot"))  # its flag file in its own folder: the sandbox lets it write only there
    config = MatchConfig(
        bots=[spec, BotSpec.parse("random", seed="x"), BotSpec.parse("robot")],
        partie=1, seed="schema", limits=Limits(startup_ms=10_000, move_ms=5_000),
        policy=FaultPolicy(max_faults=3), transcript=True, work_dir=tmp_path,
    )
    result = run_match(config)
    assert [f["kind"] for f in result.faults] == ["illegal"]
    seen: Counter = Counter()
    rejected = []
    for seat in range(3):
        lines = (tmp_path / f"marias.seat{seat}.transcript.jsonl").read_text(encoding="utf-8").splitlines()
        assert lines
        for raw in lines:
            rec = json.loads(raw)
            msg = json.loads(rec["line"])
            if rec["dir"] == "send":
                assert msg["type"] in M.TO_BOT
                assert_valid(msg)
            else:
                assert msg["type"] in M.FROM_BOT
                if errors(msg):
                    rejected.append((seat, msg))
            seen[msg["type"]] += 1
            if msg["type"] == "event":
                seen["event " + msg["event"]["kind"]] += 1
                seen[f"seat {seat} event {msg['event']['kind']}"] += 1
    assert set(M.TO_BOT) | set(M.FROM_BOT) <= set(seen)
    # the one answer the schema refuses is the one the referee refused
    assert [(seat, m["action"]) for seat, m in rejected] == [(0, "play:Zz")]
    # the other seats are told; the faulting bot's process is stopped at once (PROTOCOL.md section 10)
    assert (seen["seat 0 event fault"], seen["seat 1 event fault"], seen["seat 2 event fault"]) == (0, 1, 1)
    assert seen["hello"] >= 2 * 4  # three handshakes, and the faulting bot's restart


# ------------------------------------------------------------------ PROTOCOL.md does not drift

DOC = PROTOCOL_MD.read_text(encoding="utf-8")


def _code_spans(text: str) -> set[str]:
    return set(re.findall(r"`([^`\n]+)`", text))


SPANS = _code_spans(DOC)


def test_protocol_md_names_every_decision_kind():
    for d in DECISIONS:
        assert d in SPANS, f"decision {d!r} is not documented"
    assert "done" in SPANS


def test_protocol_md_names_every_action_form_of_actions_py():
    # every word the parser accepts on its own, every prefix, every contract
    forms = {"dobra", "spatna", "durch", "lay", "trump:zlidu", "trump:Ah", "barva:7h,8h", "betl:7h,8h",
             "durch:7h,8h", "play:Ah", "flek:hra", "flek:hra,sedma", "proti:sedma", "proti:sto",
             "flek:hra proti:sedma"}
    forms |= {f"contract:{c}" for c in A.CONTRACTS}
    for f in forms:
        A.parse_action(f)  # each is a real action form
        assert f in SPANS, f"action form {f!r} is not in PROTOCOL.md"
    for comp in A.COMPONENTS:
        assert comp in SPANS, f"component {comp!r} is not documented"
    for level, name in enumerate(A.LEVEL_NAMES[1:], 1):
        assert f"*{name}*" in DOC, f"level {level} ({name}) is not documented"
    for g in A.GAME_KINDS:
        assert g in SPANS


def test_protocol_md_documents_every_view_field_and_message():
    d = Deal(shuffled_deck(5), 0)
    for field in d.view(0):
        assert f"| `{field}` |" in DOC, f"view field {field!r} has no row in PROTOCOL.md"
    for t in set(M.TO_BOT) | set(M.FROM_BOT):
        assert t in SPANS, f"message type {t!r} is not documented"
    for kind in ("action", "trick", "hlaska", "laid", "fault"):
        assert f"**`{kind}`**" in DOC, f"event kind {kind!r} has no paragraph"
    for kind in FaultKind:
        assert f"| `{kind.value}` |" in DOC, f"fault kind {kind.value!r} is not in the fault table"
    for key in Limits().to_dict():
        assert f"limits.{key}" in DOC, f"hello limit {key!r} is not documented"
    for kind in ("played", "conceded", "not-played", "fault"):
        assert f"`{kind}`" in DOC
    for name in MESSAGE_SCHEMAS + ("view",):
        assert f"`{name}.json`" in DOC


def _json_blocks(text: str) -> list[dict]:
    out = []
    for block in re.findall(r"```json\n(.*?)```", text, flags=re.S):
        out.append(json.loads(block))
    return out


def test_every_json_example_in_protocol_md_validates():
    blocks = _json_blocks(DOC)
    assert len(blocks) >= 20
    types = Counter()
    for msg in blocks:
        if "type" in msg:
            assert_valid(msg)
            types[msg["type"]] += 1
            if msg["type"] == "request":
                assert msg["decision"] == msg["view"]["phase"]
                assert msg["view"]["to_move"] == msg["view"]["seat"]
                for a in msg["legal"]:
                    A.parse_action(a)
        else:  # the settlement example
            assert_valid({**_result_holder(), "result": msg}, "deal_end")
            types["result"] += 1
    assert set(M.TO_BOT) | set(M.FROM_BOT) <= set(types)
    decisions = {m["decision"] for m in blocks if m.get("type") == "request"}
    assert decisions == set(DECISIONS)


def _result_holder() -> dict:
    d = Deal(shuffled_deck(9), 0)
    d.fault(0, "timeout")
    return {"type": "deal_end", "partie": 1, "deal": 1, "seat": 0, "view": d.view(0)}


def test_minimal_bot_in_protocol_md_is_the_one_that_runs(tmp_path):
    """The ~15-line bot of section 12 plays a whole partie without a fault."""
    code = re.search(r"```python\n(import json\nimport sys\n.*?)```", DOC, flags=re.S).group(1)
    assert len(code.strip().splitlines()) <= 16
    path = tmp_path / "first.py"
    path.write_text(code, encoding="utf-8")
    config = MatchConfig(bots=[BotSpec(label="first", argv=[sys.executable, str(path)]),
                               BotSpec.parse("random", seed="1"), BotSpec.parse("random", seed="2")],
                         partie=1, seed="doc", limits=Limits(startup_ms=10_000, move_ms=5_000),
                         keep_partie=True, work_dir=tmp_path)
    result = run_match(config)
    assert result.faults == []
    assert len(result.parties[0].deals) == 12
    assert result.names[0] == "first"
