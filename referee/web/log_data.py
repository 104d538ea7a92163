"""What the log page and its replayer show, read from a match log and replayed by the engine.

The replayer's data for one deal comes from the deal record replayed through the rules
engine (:func:`referee.logs.replay.replay_record`): at every step the three seats' views
are :meth:`Deal.view` — the very redaction the referee sends in its requests — and the
events each seat was told after each action are the referee's own
:func:`referee.matches.tell.deal_events`.  So a seat's view on the page is exactly what that
seat knew; the all-seeing view adds what the engine holds (every hand, the trump card, the
talon, the unredacted bidding).  No second redaction exists here.

Views (and the all-seeing facts) are sent as deltas (each step: the keys that changed since the
step before), which the page applies in order; a deal of 40 decisions weighs a few kilobytes.
"""

from __future__ import annotations

import json
import re
import shlex
import threading
from collections import OrderedDict

import orjson
from pathlib import Path

from protocol import messages as M

from ..logs.replay import replay_record
from ..logs.validate import parse_deck
from ..matches.tell import deal_events
from ..rules.actions import ActionError, parse_action
from ..rules.deal import Deal, IllegalAction


class LogError(ValueError):
    """The file is not a log, or holds no such deal."""


_CACHE: "OrderedDict[tuple, tuple[list[dict], list[str]]]" = OrderedDict()
_CACHE_LOCK = threading.Lock()
CACHED_LOGS = 6  # logs kept parsed (stepping from deal to deal reads one log again and again)
CACHED_MAX_BYTES = 8 * 2**20  # larger logs are parsed each time (their objects would weigh too much)


def forget_logs() -> None:
    """Drop every parsed log kept for the pages (the next page reads its log again)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _parse(path: Path) -> tuple[list[dict], list[str]]:
    """The log's records for showing (orjson: a page is not the validator, ``marias validate`` is;
    the deals are replayed through the engine all the same), and its unreadable lines."""
    records, problems = [], []
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            raw = raw.strip()
            if not raw:
                continue
            try:
                r = orjson.loads(raw)
            except orjson.JSONDecodeError:
                problems.append(f"line {n}: not JSON (cut short?)")
                continue
            if isinstance(r, dict):
                records.append(r)
            else:
                problems.append(f"line {n}: not a JSON object")
    return records, problems


def _read(path: Path) -> tuple[list[dict], list[str]]:
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    got = _parse(path)
    if st.st_size <= CACHED_MAX_BYTES:
        with _CACHE_LOCK:
            _CACHE[key] = got
            while len(_CACHE) > CACHED_LOGS:
                _CACHE.popitem(last=False)
    return got


def _records(path: Path) -> tuple[list[dict], list[str]]:
    records, problems = _read(path)
    if not records or records[0].get("type") != "header":
        raise LogError(f"{path.name}: not a marias log" + (f" ({problems[0]})" if problems else ""))
    return records, problems


def bot_labels(header: dict) -> list[str]:
    out = []
    for i, b in enumerate(header.get("bots") or []):
        out.append(str(b.get("label") or b.get("name") or f"seat {i}"))
    return out


def command_text(bot: dict) -> str:
    """A header bot's command as a ``--bot`` argument: a built-in by its name, else the argv quoted."""
    cmd = bot.get("command")
    if isinstance(cmd, list):
        return shlex.join(str(x) for x in cmd)
    cmd = str(cmd or "")
    return cmd.split(":", 1)[1] if cmd.startswith("builtin:") else cmd


def log_data(path: Path, rel: str) -> dict:
    """The log's header facts, its partie and deals (contract, actor, result, faults), no replay."""
    records, problems = _records(path)
    header = records[0]
    labels = bot_labels(header)
    parties: list[dict] = []
    current = None
    footer = None
    for r in records[1:]:
        t = r.get("type")
        if t == "partie_start":
            seating = r.get("seating") or [0, 1, 2]
            current = {"partie": r.get("partie"), "players": [labels[i] if i < len(labels) else f"seat {i}" for i in seating],
                       "deals": [], "totals": None, "places": None, "forfeit": None}
            parties.append(current)
        elif t == "deal" and current is not None:
            res = r.get("result") or {}
            current["deals"].append({
                "deal": r.get("deal"), "forhont": r.get("forhont"), "game": r.get("game"),
                "contract": r.get("contract"), "actor": r.get("actor"), "trump": r.get("trump"),
                "levels": r.get("levels") or {}, "kind": res.get("kind"), "payments": res.get("payments"),
                "faults": [{"seat": f.get("seat"), "kind": f.get("kind"), "message": f.get("message")}
                           for f in (r.get("faults") or []) if isinstance(f, dict)],
            })
        elif t == "forfeit" and current is not None:
            current["forfeit"] = {"seat": r.get("seat"), "from_deal": r.get("from_deal")}
        elif t == "partie_end" and current is not None:
            current["totals"], current["places"] = r.get("totals"), r.get("places")
        elif t == "footer":
            footer = r
    return {"path": rel, "name": path.name, "labels": labels, "bots": header.get("bots") or [],
            "created": header.get("created"), "referee_version": header.get("referee_version"),
            "rules_version": header.get("rules_version"), "sandbox": header.get("sandbox", "none"),
            "limits": header.get("limits") or {}, "complete": footer is not None,
            "seed": (footer or {}).get("seed"), "totals": (footer or {}).get("totals"),
            "problems": problems[:5], "parties": parties}


def _delta(prev: dict | None, view: dict) -> dict:
    """The keys of ``view`` that changed since ``prev``; a list that only grew is sent as
    ``{"+": the new items}`` (the bids, the tricks, the hlášky)."""
    if prev is None:
        return view
    out = {}
    for k, v in view.items():
        old = prev.get(k)
        if old == v:
            continue
        if type(v) is list and type(old) is list and old and len(v) > len(old) and v[:len(old)] == old:
            out[k] = {"+": v[len(old):]}
        else:
            out[k] = v
    return out


def _fault_rule(rec: dict, deck, fault: dict) -> dict:
    """The rule a faulty answer broke: the engine's verdict on the action in its evidence, where it
    holds one; else R12.1 (a breach of the protocol: a timeout, a crash, a malformed line)."""
    out = {"rule": "R12.1", "detail": None}
    try:
        answer = json.loads(fault.get("evidence") or "")
        text = answer.get("action") if isinstance(answer, dict) else None
    except ValueError:
        text = None
    if not isinstance(text, str):
        return out
    d = Deal(deck, rec["forhont"])
    for dec in rec.get("decisions") or []:
        d.apply(parse_action(dec["action"]))
    try:
        d.verify(parse_action(text))
    except IllegalAction as e:
        out = {"rule": e.rule, "detail": e.detail}
    except ActionError as e:  # its message names the rule first ("R1.2: malformed card ...")
        m = re.match(r"(R\d+(?:\.\d+)*): (.*)", str(e), re.S)
        out = {"rule": m.group(1), "detail": f"not an action: {m.group(2)}"} if m else {"rule": "R12.1", "detail": f"not an action: {e}"}
    return out


def replay_data(path: Path, rel: str, partie: int, deal: int) -> dict:
    """One deal, step by step: the views of the three seats (deltas), the events each was told,
    the decisions, and the all-seeing facts; with the fault's evidence, rule and replay command."""
    records, _ = _records(path)
    header = records[0]
    rec = next((r for r in records if r.get("type") == "deal" and r.get("partie") == partie and r.get("deal") == deal), None)
    if rec is None:
        raise LogError(f"{path.name}: no deal {deal} in partie {partie}")
    seating = next((r.get("seating") for r in records if r.get("type") == "partie_start" and r.get("partie") == partie), None)
    labels = bot_labels(header)
    seating = seating or [0, 1, 2]
    players = [labels[i] if i < len(labels) else f"seat {i}" for i in seating]
    deck, why = parse_deck(rec.get("deck"))
    if why:
        raise LogError(f"deal {deal}: cannot replay: {why}")
    decisions = rec.get("decisions") or []
    steps: list[dict] = []
    prev: list[dict | None] = [None, None, None, None]  # the three seats' views, and the all-seeing facts
    marks = {"tricks": 0, "hlasky": 0}

    def on_step(d: Deal, i: int) -> None:
        events = [[], [], []]
        if i > 0:
            last = decisions[i - 1]
            events = [deal_events(d, last["decision"], marks["tricks"], marks["hlasky"], s) for s in range(3)]
        if d.fault_info is not None:
            fe = M.fault_event(d.fault_info.seat, d.fault_info.kind)
            for s in range(3):
                if s != d.fault_info.seat:  # the faulting bot is not told (its process was stopped)
                    events[s].append(fe)
        views = []
        for s in range(3):
            v = d.view(s)
            views.append(_delta(prev[s], v))
            prev[s] = v
        nxt = decisions[i] if i < len(decisions) else None
        everything = {"talon": [str(c) for c in d.talon], "trump_card": str(d.trump_card) if d.trump_card is not None else None,
                      "hands": [[str(c) for c in h] for h in d.hands]}
        events = [events[0]] + [None if e == events[0] else e for e in events[1:]]  # null: as seat 0's
        steps.append({"views": views, "events": events, "all": _delta(prev[3], everything),
                      "next": None if nxt is None else {k: nxt.get(k) for k in ("seat", "decision", "action", "ms")}})
        prev[3] = everything
        marks["tricks"], marks["hlasky"] = len(d.tricks), len(d.hlasky)

    rp = replay_record(rec, deck, on_step=on_step)
    fault = None
    faults = rec.get("faults") or []
    if faults:
        f = faults[0]
        seat = f.get("seat")
        bot = (header.get("bots") or [{}] * 3)[seating[seat]] if seat in (0, 1, 2) else {}
        fault = {**{k: f.get(k) for k in ("seat", "kind", "message", "evidence", "elapsed")},
                 **_fault_rule(rec, deck, f), "settlement": "R12.2",
                 "command": f"marias replay {shlex.quote(str(path))} --partie {partie} --deal {deal} --seat {seat} "
                            f"--bot {shlex.quote(command_text(bot) or 'BOT')}"}
    return {"path": rel, "partie": partie, "deal": deal, "players": players, "forhont": rec.get("forhont"),
            "dealer": rec.get("dealer"), "cut": rec.get("cut"), "hands": rec.get("hands"),
            "decisions": decisions, "trump_card": rec.get("trump_card"), "zlidu": rec.get("zlidu"),
            "talons": rec.get("talons"), "game": rec.get("game"), "contract": rec.get("contract"),
            "result": rec.get("result"), "fault": fault, "steps": steps,
            "problems": [f"{r}: {m}" for r, m in rp.problems]}
