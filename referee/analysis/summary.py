"""Per-bot figures and the listings of an analysis (rows for :func:`referee.tournaments.standings.render`).

Per bot, over its card decisions that offered a choice (more than one legal action): the mean
loss double-dummy and from its view (groše of its own payment per decision), blunders and
blunders per 100 decisions; the games it declared and how many were made double-dummy; the
betls and durches it passed by and how many were makeable; its raises and what they gained
double-dummy (referee/analysis/bidding.py).
"""

from __future__ import annotations

from typing import Iterable

TITLES = {
    "analysis": ("Analysis per bot (card decisions with a choice; loss: groše of the bot's own payment given up "
                 "against the best action, double-dummy (dd) and from its own view; blunder: a loss from its view "
                 "of at least the threshold; declared games made and betl/durch passed by that were makeable, "
                 "double-dummy; raises and their double-dummy gain)"),
    "decisions": "Card decisions (loss: groše given up against the best action; !! blunder)",
    "bidding": "Bidding, double-dummy",
}


def _r(x: float | None, nd: int = 3):
    if x is None:
        return None
    r = round(x, nd)
    return int(r) if r == int(r) else r


def bot_rows(deals: Iterable[dict], only: str | None = None) -> list[dict]:
    """One row per bot over the analysed deals (``only``: that bot's row alone)."""
    acc: dict[str, dict] = {}

    def row(bot: str) -> dict:
        if bot not in acc:
            acc[bot] = {"bot": bot, "decisions": 0, "loss_dd": 0.0, "viewed": 0, "loss_view": 0.0, "blunders": 0,
                        "declared": 0, "made": 0, "betl_passed": 0, "betl_makeable": 0, "durch_passed": 0,
                        "durch_makeable": 0, "raises": 0, "raise_gain_dd": 0.0}
        return acc[bot]

    for d in deals:
        for dec in d["decisions"]:
            if dec["forced"] or dec["loss_dd"] is None:
                continue
            r = row(dec["bot"])
            r["decisions"] += 1
            r["loss_dd"] += dec["loss_dd"]
            if dec["loss_view"] is not None:
                r["viewed"] += 1
                r["loss_view"] += dec["loss_view"]
                r["blunders"] += bool(dec["blunder"])
        b = d.get("bidding") or {}
        if b.get("declared"):
            r = row(b["declared"]["bot"])
            r["declared"] += 1
            r["made"] += bool(b["declared"]["made"])
        for p in b.get("passed") or []:
            r = row(p["bot"])
            r[p["game"] + "_passed"] += 1
            r[p["game"] + "_makeable"] += bool(p["makeable"])
        for ev in b.get("raises") or []:
            for bot in ev["bots"]:
                r = row(bot)
                r["raises"] += 1
                r["raise_gain_dd"] += ev["gain_dd"]
    out = []
    for bot in sorted(acc):
        if only is not None and bot != only:
            continue
        a = acc[bot]
        n, v = a["decisions"], a["viewed"]
        out.append({
            "bot": bot, "decisions": n,
            "loss_dd": _r(a["loss_dd"] / n) if n else None,
            "loss_view": _r(a["loss_view"] / v) if v else None,
            "blunders": a["blunders"] if v else None,
            "blunders_per_100": _r(100 * a["blunders"] / v, 2) if v else None,
            "declared": a["declared"], "made_dd": a["made"],
            "betl_passed": a["betl_passed"], "betl_makeable": a["betl_makeable"],
            "durch_passed": a["durch_passed"], "durch_makeable": a["durch_makeable"],
            "raises": a["raises"], "raise_gain_dd": _r(a["raise_gain_dd"]),
        })
    return out


def _where(log: dict, d: dict, many: bool) -> dict:
    out = {"log": log["log"].rsplit("/", 1)[-1]} if many else {}
    out.update({"partie": d["partie"], "deal": d["deal"],
                "game": d["contract"] if d["game"] == "barva" else d["game"]})
    return out


def _short(action: str) -> str:
    return action[5:] if action.startswith("play:") else action


def decision_rows(logs: list[dict], which: str = "loss", only: str | None = None) -> list[dict]:
    """The card decisions of the listing: ``which`` is ``all`` (every decision with a choice),
    ``loss`` (those that gave up something, double-dummy or from the view) or ``blunders``."""
    many = len(logs) > 1
    out = []
    for log in logs:
        for d in log["deals"]:
            for dec in d["decisions"]:
                if dec["forced"] or (only is not None and dec["bot"] != only):
                    continue
                lost = (dec["loss_dd"] or 0) > 0 or (dec["loss_view"] or 0) > 0
                if which == "loss" and not lost or which == "blunders" and not dec["blunder"]:
                    continue
                row = _where(log, d, many)
                row.update({"step": dec["step"], "trick": dec["trick"], "seat": dec["seat"], "bot": dec["bot"],
                            "chosen": _short(dec["chosen"]), "best_dd": " ".join(_short(a) for a in dec["best_dd"]),
                            "loss_dd": dec["loss_dd"],
                            "best_view": " ".join(_short(a) for a in dec["best_view"]) if dec["best_view"] else None,
                            "loss_view": dec["loss_view"], "blunder": "!!" if dec["blunder"] else ""})
                out.append(row)
    return out


def bidding_rows(logs: list[dict], which: str = "loss", only: str | None = None) -> list[dict]:
    """The bidding findings of the listing: declared games, betls and durches passed by, raises.
    With ``which`` other than ``all``: only what cost the bot (a declared game not made, a
    makeable game passed by, a raise that lost double-dummy)."""
    many = len(logs) > 1
    out = []
    for log in logs:
        for d in log["deals"]:
            b = d.get("bidding") or {}
            items = []
            dec = b.get("declared")
            if dec:
                what = dec["contract"] if dec["game"] == "barva" else dec["game"]
                items.append((dec["bot"], dec["seat"], None, f"declared {what}",
                              ("made" if dec["made"] else "not made") + f", {dec['dd']['grose']:+} groše dd",
                              not dec["made"]))
            for p in b.get("passed") or []:
                items.append((p["bot"], p["seat"], p["step"], f"passed by {p['game']}",
                              f"makeable ({p['way']})" if p["makeable"] else "not makeable", p["makeable"]))
            for ev in b.get("raises") or []:
                what = (f"announced {ev['component']}" if ev["kind"] == "proti"
                        else f"raised {ev['component']} {ev['from']}->{ev['to']}")
                for bot, seat, step in zip(ev["bots"], ev["seats"], ev["steps"]):
                    items.append((bot, seat, step, what, f"{ev['gain_dd']:+} groše dd", ev["gain_dd"] < 0))
            for bot, seat, step, what, verdict, bad in items:
                if only is not None and bot != only or which != "all" and not bad:
                    continue
                row = _where(log, d, many)
                row.update({"step": step, "seat": seat, "bot": bot, "what": what, "double-dummy": verdict})
                out.append(row)
    return out
