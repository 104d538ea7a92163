"""One deal record analysed: every card decision valued, the bidding judged.

The record is replayed by the engine (:func:`referee.logs.replay.replay_record`); at each
decision the deal's state is the one the seat faced, so its view (:meth:`Deal.view`) is
what the referee sent it.  Steps are numbered as the replayer numbers them
(:func:`referee.web.log_data.replay_data`): step ``i`` is the state before decision ``i``
of the record (from 0).

A card decision's **loss** is what the chosen action gave up against the best one, in the
seat's groše (:mod:`referee.analysis.values`): double-dummy (the best action's value less
the chosen one's, every hand known) and from the seat's view (the same with the means over
the sampled worlds).  Losses are never negative.  The same measure serves the actor and a
defender (each in its own payment: an actor's card that loses a hra of 1 groš costs him 2,
a defender's costs him 1), betl and durch (won or lost: the stake, 5 or 10 × 2^level, to
each defender) and every component of a trump game (hra, tiché sto, sto with its tens,
sedma, tichá sedma, the games against, the hlášky counted where the rules count them):
the solver's leaves are the engine's settlement.

A decision is a **blunder** when its loss from the seat's view reaches
:data:`BLUNDER_GROSE`: what the seat knew already showed that the card gave up, on average
over the worlds it thought possible, at least that much.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Collection

from ..logs.replay import replay_record
from ..logs.validate import parse_deck
from ..rules.deal import Deal
from . import bidding
from .values import Valuer, Value, dd_values, start_position, view_values

#: the blunder threshold: a loss from the seat's view of at least one groš of the seat's own
#: payment, the base stake of the cheapest game (a hra, R9.1).  A defender's card that turns a
#: won hra into a lost one in half the worlds it could not tell apart costs 1 (the hra swings by 2
#: groše for each defender); an actor's in a quarter of them (he pays or receives twice); a betl's
#: card in a tenth of them (a swing of 10)
BLUNDER_GROSE = 1.0
#: worlds sampled per decision for the value from the seat's view
WORLDS = 16


@dataclass(frozen=True)
class Settings:
    """How a log is analysed: ``worlds`` per card decision for the seat's view (0: double-dummy
    only), ``seed`` of the worlds' sampling (each decision's generator is seeded by it and the
    decision's place, so a rerun, or a run with other ``-j``, gives the same numbers),
    ``blunder`` the threshold in groše, ``bidding`` whether the bidding is judged, ``only`` the
    one bot whose decisions are valued from its view (``None``: every bot's)."""

    worlds: int = WORLDS
    seed: str = "0"
    blunder: float = BLUNDER_GROSE
    bidding: bool = True
    only: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def decision_rng(settings: Settings, partie, deal, step: int) -> random.Random:
    return random.Random(f"marias-analyze:{settings.seed}:{partie}:{deal}:{step}")


def analyze_deal(rec: dict, players: list[str], settings: Settings = Settings(),
                 steps: Collection[int] | None = None) -> dict:
    """The analysis of one deal record (JSON-ready; protocol/LOGS.md, "Analysis"); ``steps``: only
    the card decisions at these steps are valued (one step of the replayer; None: every one)."""
    res = rec.get("result") or {}
    out: dict = {"partie": rec.get("partie"), "deal": rec.get("deal"), "forhont": rec.get("forhont"),
                 "game": rec.get("game"), "contract": rec.get("contract"), "actor": rec.get("actor"),
                 "players": list(players), "kind": res.get("kind"), "payments": res.get("payments"),
                 "decisions": [], "bidding": None, "problems": []}
    deck, why = parse_deck(rec.get("deck"))
    if why:
        out["problems"].append(f"cannot replay: {why}")
        return out
    decisions = rec.get("decisions") or []
    valuer = Valuer()
    found = {"passed": [], "fleks": [], "start": None}
    plays: list[tuple[Deal, int, str]] = []  # the card decisions' states, valued after the replay

    def on_step(d: Deal, i: int) -> None:
        if i >= len(decisions):
            return
        chosen = decisions[i].get("action")
        if d.phase == "play":
            if found["start"] is None and not d.tricks and not d.trick:
                found["start"] = d.copy()
            if steps is None or i in steps:
                plays.append((d.copy(), i, chosen))
        elif settings.bidding and d.phase in ("talon", "answer"):
            for g in bidding.passed_games(d, chosen):
                way = bidding.makeable(d, g, valuer)
                found["passed"].append({"step": i, "seat": d.to_move, "bot": players[d.to_move], "game": g,
                                        "makeable": way is not None, "way": way})
        elif d.phase == "flek":
            found["fleks"].append((i, d.to_move, chosen))

    rp = replay_record(rec, deck, on_step)
    # the last decision first: its solves fill the transposition table with the positions the earlier
    # decisions' searches reach along the deal (about 8% less CPU than in play order, same values)
    valued = {i: _card_decision(st, i, chosen, players, settings, valuer, rec) for st, i, chosen in reversed(plays)}
    out["decisions"] = [valued[i] for _st, i, _c in plays]
    out["problems"] += [f"{rule}: {msg}" for rule, msg in rp.problems]
    if settings.bidding:
        out["bidding"] = _bidding(rp.deal, found, valuer, players)
    out["nodes"] = valuer.nodes
    return out


def _card_decision(d: Deal, step: int, chosen: str, players: list[str], settings: Settings, valuer: Valuer,
                   rec: dict) -> dict:
    seat = d.to_move
    order = [str(a) for a in d.legal_actions()]
    dd = dd_values(d, valuer)
    forced = len(order) == 1
    view: dict[str, Value] = {}
    worlds = 0
    if not forced and settings.worlds > 0 and settings.only in (None, players[seat]):
        view, worlds = view_values(d, settings.worlds, decision_rng(settings, rec.get("partie"), rec.get("deal"), step),
                                   valuer)
    best_dd = max(v.grose for v in dd.values())
    chosen_dd = dd[chosen].grose if chosen in dd else None
    entry = {
        "step": step, "trick": len(d.tricks) + 1, "seat": seat, "bot": players[seat], "chosen": chosen,
        "forced": forced,
        "legal": [{"action": a, "dd": dd[a].to_dict(), **({"view": view[a].to_dict()} if a in view else {})}
                  for a in order],
        "best_dd": [a for a in order if dd[a].grose == best_dd],
        "loss_dd": _round(best_dd - chosen_dd) if chosen_dd is not None else None,
        "actor_dd": _round(best_dd if seat == d.actor else -2 * best_dd),
        "worlds": worlds,
    }
    if view and chosen in view:
        best_view = max(v.grose for v in view.values())
        loss = best_view - view[chosen].grose
        entry["best_view"] = [a for a in order if view[a].grose >= best_view - 1e-9]
        entry["loss_view"] = _round(loss)
        entry["blunder"] = loss >= settings.blunder - 1e-9
    else:
        entry["best_view"] = None
        entry["loss_view"] = None
        entry["blunder"] = False
    return entry


def _round(x: float):
    r = round(float(x), 3)
    return int(r) if r == int(r) else r


def _bidding(d: Deal | None, found: dict, valuer: Valuer, players: list[str]) -> dict:
    out = {"declared": None, "passed": found["passed"], "raises": []}
    if d is None or d.actor is None:
        return out
    start = found["start"]
    result = d.result
    if start is not None:
        pos = start_position(start)
        dec = bidding.declared(start, pos, valuer, start)
        base = start
    elif result is not None and result.kind in ("conceded", "not-played"):
        pos = start_position(d)
        dec = bidding.declared(d, pos, valuer, None)
        base = d
    else:
        return out  # a fault before the first lead: no game was set to be played
    dec["bot"] = players[d.actor]
    out["declared"] = dec
    out["raises"] = bidding.raises(base, found["fleks"], pos, valuer, dec.get("line"))
    for r in out["raises"]:
        r["bots"] = [players[s] for s in r["seats"]]
    return out
