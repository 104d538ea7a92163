"""Replaying one deal record with the engine, and comparing the record with the replay.

:func:`replay_record` applies a record's decisions (and its fault) to a fresh
:class:`~referee.rules.deal.Deal`: each must be the decision the engine asks for, and
:meth:`Deal.apply` verifies each action, naming the rule an illegal one breaks.
:func:`compare` lists every recorded outcome (tricks, hlášky, laid cards,
components, payments) that differs from the replay's.  Problems are
``(rule, message)`` pairs; :mod:`referee.logs.validate` adds the line numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..rules.actions import Action, ActionError, parse_action
from ..rules.cards import CARDS, SUIT_CODES, Card
from ..rules.deal import DONE, Deal, IllegalAction
from .log import record_trump

PHASE_RULE = {"trump": "R3.1", "talon": "R3.2", "answer": "R4.1", "contract": "R5.1", "flek": "R5.3", "play": "R7.1"}
OUTCOME_RULE = {"hra": "R7.6", "sto": "R7.7", "sto-proti": "R7.7", "sedma": "R7.8", "sedma-proti": "R7.8",
                "ticha-sedma": "R7.9", "tiche-sto": "R7.10", "betl": "R7.11", "durch": "R7.11"}
AMOUNT_RULE = {"sto": "R9.2", "sto-proti": "R9.2"}  # every other component: R9.1 (× R9.3, R9.4)
RESULT_KIND_RULE = {"conceded": "R6.1", "not-played": "R6.2", "fault": "R12.2", "played": "R6.3"}
CODE = tuple(str(c) for c in CARDS)  # card -> its code, without a method call


# ------------------------------------------------------------------ replay of one deal record

_ACTION_CACHE: dict[str, Action] = {}


def _action(text) -> Action:
    a = _ACTION_CACHE.get(text)
    if a is None:
        a = parse_action(text)
        if len(_ACTION_CACHE) < 100_000:
            _ACTION_CACHE[text] = a
    return a


@dataclass
class Replay:
    """A deal record replayed by the engine."""

    deal: Deal | None
    problems: list[tuple[str, str]]
    complete: bool  # every decision applied (and the fault, if any) and the deal over


def _seat_rule(deal: Deal) -> str:
    if deal.phase == "play":
        return "R7.1" if not deal.trick else "R1.5"
    if deal.phase == "talon" and deal.talons:
        return "R4.2"
    return PHASE_RULE.get(deal.phase, "R1.5")


def replay_record(rec: dict, deck: list[Card], on_step=None) -> Replay:
    """Replay ``rec``'s decisions (and fault) on a fresh deal from ``deck`` with the engine.

    Each recorded decision must be the one the engine asks for (seat and kind) and
    its action must pass :meth:`Deal.apply` (which verifies it, naming the rule it
    breaks).  ``on_step(deal, i)`` is called before decision ``i`` and once more,
    with ``i == len(decisions)``, when the deal is over.
    """
    problems: list[tuple[str, str]] = []
    forhont = rec.get("forhont")
    if forhont not in (0, 1, 2):
        return Replay(None, [("format", f"forhont {forhont!r} is not a seat 0..2")], False)
    d = Deal(deck, forhont)
    decisions = rec.get("decisions")
    if not isinstance(decisions, list):
        return Replay(d, [("format", "the deal has no list of decisions")], False)
    apply = d.apply
    cache = _ACTION_CACHE
    for i, dec in enumerate(decisions):
        if on_step is not None:
            on_step(d, i)
        phase = d.phase
        try:
            seat = dec["seat"]
            text = dec["action"]
            bad = seat != d.to_move or dec["decision"] != phase or phase == DONE
        except (KeyError, TypeError):
            bad = True
        if bad:
            problems.append(_decision_problem(d, dec, i + 1))
            return Replay(d, problems, False)
        action = cache.get(text) if type(text) is str else None
        if action is None:
            try:
                action = _action(text)
            except (ActionError, TypeError) as e:
                problems.append((PHASE_RULE[phase], f"decision {i + 1} (seat {seat}): malformed action {text!r}: {e}"))
                return Replay(d, problems, False)
        try:
            apply(action)
        except IllegalAction as e:
            problems.append(_illegal(e, i + 1, seat, text))
            return Replay(d, problems, False)
    faults = rec.get("faults") or []
    if faults:
        if not isinstance(faults, list) or len(faults) != 1 or not isinstance(faults[0], dict):
            problems.append(("format", "faults is a list of at most one fault (a fault ends the deal, R12.1)"))
            return Replay(d, problems, False)
        f = faults[0]
        if d.phase == DONE:
            problems.append(("R12.1", f"a fault of seat {f.get('seat')} is recorded after the deal was over"))
            return Replay(d, problems, False)
        if f.get("seat") not in (0, 1, 2):
            problems.append(("format", f"the fault's seat {f.get('seat')!r} is not a seat 0..2"))
            return Replay(d, problems, False)
        d.fault(f["seat"], str(f.get("kind", "")), str(f.get("message", "")), str(f.get("evidence", "")),
                f.get("elapsed") if isinstance(f.get("elapsed"), (int, float)) else None)
    if d.phase != DONE:
        problems.append(("R12.1", f"the {len(decisions)} recorded decisions stop before the deal is over "
                                  f"(seat {d.to_move} still has a {d.phase} decision) and no fault is recorded"))
        return Replay(d, problems, False)
    if on_step is not None:
        on_step(d, len(decisions))
    return Replay(d, problems, True)


def _illegal(e: IllegalAction, n: int, seat: int, text: str) -> tuple[str, str]:
    return e.rule, f"decision {n} (seat {seat}, {text}) is illegal: {e.detail}"


def _decision_problem(d: Deal, dec, n: int) -> tuple[str, str]:
    """Why decision ``n`` cannot be the next one: the deal is over, the seat or the decision kind is wrong."""
    if d.phase == DONE:
        return "R7.11", f"decision {n} ({_dec_text(dec)}) comes after the deal was over"
    if type(dec) is not dict or not {"seat", "decision", "action"} <= dec.keys():
        return "format", f"decision {n} is not an object with seat, decision and action"
    seat = dec["seat"]
    if seat != d.to_move:
        return _seat_rule(d), f"decision {n} ({_dec_text(dec)}) is recorded for seat {seat}, but it is seat {d.to_move}'s turn ({d.phase})"
    return PHASE_RULE[d.phase], f"decision {n} is recorded as a {dec['decision']!r} decision; seat {seat} faced a {d.phase} decision"


def _dec_text(dec) -> str:
    if isinstance(dec, dict):
        return f"{dec.get('decision')} {dec.get('action')}"
    return repr(dec)


# ------------------------------------------------------------------ comparing a replay with its record

def _component_rule(kind: str, name: str, default: str) -> str:
    if kind == "fault":
        return "R12.2"
    if kind == "conceded":
        return "R6.1"
    if kind == "not-played":
        return "R6.2"
    return default


def compare(rec: dict, d: Deal, out: list[tuple[str, str]], notes: list[str] | None = None) -> None:
    """Append (rule, message) for every recorded outcome that differs from the replay ``d``;
    ``notes`` gets what is tolerated but not as LOGS.md says (a slip of older referees)."""
    game = d.game
    betl_durch = game in ("betl", "durch")

    def diff(key, expected, rule, what):
        if key in rec and rec[key] != expected:
            out.append((rule, f"{what}: the replay gives {short_json(expected)}, the log says {short_json(rec[key])}"))

    diff("trump_card", CODE[d.trump_card] if d.trump_card is not None else None, "R3.1", "trump card")
    diff("zlidu", d.zlidu, "R3.1", "z lidu")
    diff("talons", [{"seat": s, "cards": [CODE[a], CODE[b]]} for s, (a, b), _k in d.talons], "R3.3", "discards (talons)")
    diff("talon", [CODE[c] for c in d.talon], "R3.3", "final talon")
    diff("talon_owner", d.talon_owner, "R3.3", "talon owner")
    diff("game", game, "R3.2", "game")
    diff("actor", d.actor, "R1.6", "actor")
    diff("contract", d.contract, "R5.1", "contract")
    trump = record_trump(d)
    if trump is None and d.trump is not None and rec.get("trump") == SUIT_CODES[d.trump] and rec.get("contract") is None:
        # referees before this check wrote the suit once both defenders said dobrá, also when a fault
        # at the contract decision ended the deal: the same fact as trump_card's suit, kept readable
        if notes is not None:
            notes.append(f"trump {rec['trump']!r} recorded though no contract was set (a fault at the contract "
                         "decision); LOGS.md says null (an older referee's slip, tolerated)")
    else:
        diff("trump", trump, "R3.1", "trump suit (null until the contract is set, R5.1)")
    diff("levels", d.levels, "R5.4" if betl_durch else "R5.3", "levels")
    diff("proti", d.proti, "R5.2", "games against")
    diff("points", d.points, "R1.4", "card points per seat")
    if d.hlasky or rec.get("hlasky"):
        diff("hlasky", [{"seat": h.seat, "suit": SUIT_CODES[h.suit], "points": h.points} for h in d.hlasky], "R7.5", "hlášky")
    diff("laid", {"seat": d.laid[0], "cards": [CODE[c] for c in d.laid[1]]} if d.laid else None, "R8.4", "laid cards")

    rt = rec.get("tricks")
    same = isinstance(rt, list) and len(rt) == len(d.tricks)
    if same:
        for (l, cs, w), t in zip(d.tricks, rt):
            if (type(t) is not dict or t.get("leader") != l or t.get("winner") != w
                    or t.get("cards") != [CODE[cs[0]], CODE[cs[1]], CODE[cs[2]]]):
                same = False
                break
    if not same:
        tricks = [{"leader": l, "cards": [CODE[c] for c in cs], "winner": w} for l, cs, w in d.tricks]
        if not isinstance(rt, list):
            out.append(("format", "tricks is not a list"))
        else:
            if len(rt) != len(tricks):
                out.append(("R7.11" if betl_durch else "R7.12",
                            f"the replay has {len(tricks)} tricks, the log {len(rt)}"))
            play_rule = "R7.3" if betl_durch else "R7.2"
            for i, (a, b) in enumerate(zip(tricks, rt), 1):
                if not isinstance(b, dict):
                    out.append(("format", f"trick {i} is not an object"))
                    continue
                if a["leader"] != b.get("leader"):
                    out.append(("R7.1", f"trick {i} is led by seat {a['leader']}, the log says seat {b.get('leader')}"))
                if a["cards"] != b.get("cards"):
                    out.append((play_rule, f"trick {i} is {' '.join(a['cards'])}, the log says {short_json(b.get('cards'))}"))
                if a["winner"] != b.get("winner"):
                    out.append(("R1.3", f"trick {i} ({' '.join(a['cards'])}) is won by seat {a['winner']}, the log says seat {b.get('winner')}"))

    res = rec.get("result")
    r = d.result
    if not isinstance(res, dict):
        out.append(("format", "the deal has no result object"))
        return
    kind = r.kind
    if res.get("kind") != kind:
        rule = RESULT_KIND_RULE.get(res.get("kind")) if res.get("kind") != "played" else None
        rule = rule or RESULT_KIND_RULE[kind]
        out.append((rule, f"result: the deal is {kind}, the log says {res.get('kind')!r}"))
    if res.get("actor") != r.actor:
        out.append(("R1.6", f"result: the actor is {r.actor}, the log says {res.get('actor')!r}"))
    comps = res.get("components")
    if not isinstance(comps, list):
        out.append(("format", "result.components is not a list"))
        comps = []
    names = [c.name for c in r.components]
    rnames = [c.get("name") if isinstance(c, dict) else None for c in comps]
    if names != rnames:
        odd = [n for n in rnames if n not in names] + [n for n in names if n not in rnames]
        odd_rule = OUTCOME_RULE.get(odd[0], "R5.1") if odd else "R9.5"
        if odd and odd[0] in ("sedma-proti", "sto-proti"):
            odd_rule = "R5.2"
        out.append((_component_rule(kind, "", odd_rule),
                    f"result components: the replay settles {names}, the log lists {rnames}"))
    for c, rc in zip(r.components, comps):
        if not isinstance(rc, dict) or rc.get("name") != c.name:
            continue
        nm = c.name
        if rc.get("owner") != c.owner:
            out.append((_component_rule(kind, nm, "R1.6"), f"{nm}: owner is {c.owner}, the log says {rc.get('owner')!r}"))
        if rc.get("level") != c.level:
            lrule = "R5.4" if nm in ("betl", "durch") else ("R9.3" if nm == "tiche-sto" else "R5.3")
            out.append((lrule if kind != "fault" else "R12.2",
                        f"{nm}: level {c.level}, the log says {rc.get('level')!r}"))
        if rc.get("won") != c.won:
            out.append((_component_rule(kind, nm, OUTCOME_RULE.get(nm, "R7.6")),
                        f"{nm}: {'won' if c.won else 'lost'} by its owner ({c.owner}), the log says {'won' if rc.get('won') else 'lost'}"))
        if rc.get("amount") != c.amount:
            out.append((_component_rule(kind, nm, AMOUNT_RULE.get(nm, "R9.1")),
                        f"{nm}: amount {c.amount} ({c.detail}), the log says {rc.get('amount')!r}"))
    pay = res.get("payments")
    if not (isinstance(pay, list) and len(pay) == 3 and all(type(x) is int for x in pay)):
        out.append(("format", f"result.payments must be three integers, got {short_json(pay)}"))
        return
    if sum(pay) != 0:
        out.append(("R9.5", f"payments {pay} sum to {sum(pay):+d}, not zero"))
    if pay != list(r.payments):
        out.append(("R12.2" if kind == "fault" else ("R6.1" if kind == "conceded" else "R9.5"),
                    f"payments: the replay gives {list(r.payments)}, the log says {pay}"))
    # the payments must follow from the recorded components themselves (R9.5, R12.2)
    if names == rnames and kind != "fault" and r.actor is not None:
        expected = _payments_from(res, r.actor, None)
        if expected is not None and expected != pay and pay == list(r.payments):
            out.append(("R9.5", f"payments {pay} do not follow from the recorded components ({expected})"))


def _payments_from(res: dict, actor: int, faulting_defender: int | None) -> list[int] | None:
    """R9.5: each defender pays a component's amount, the actor receives twice that."""
    total = 0
    for c in res.get("components", []):
        amount = c.get("amount") if isinstance(c, dict) else None
        if type(amount) is not int or c.get("owner") not in ("actor", "defence"):
            return None
        total += amount if (c.get("owner") == "actor") == bool(c.get("won")) else -amount
    pay = [-total, -total, -total]
    pay[actor] = 2 * total
    return pay


def short_json(v) -> str:
    """``v`` as JSON for a message, cut to 160 characters."""
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 160 else s[:157] + "..."
