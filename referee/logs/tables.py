"""Tables: deal-by-deal sheets, partie results, and (later) tournament standings.

Functions here return rows (lists of dicts) for :mod:`tabulate`; the CLI prints them.
"""

from __future__ import annotations

from ..rules.actions import LEVEL_NAMES
from ..rules.partie import Partie, places
from ..rules.settle import Settlement


def component_text(c: dict) -> str:
    level = f" {LEVEL_NAMES[c['level']]}" if c["level"] else ""
    outcome = "won" if c["won"] else "lost"
    who = "" if c["owner"] == "actor" else " (defence)"
    return f"{c['name']}{level}{who} {outcome} {c['amount']}"


def game_text(deal) -> str:
    """Short description of what was played: 'sedma (červené)', 'betl', 'hra conceded'."""
    if deal.game is None:
        return "-"
    if deal.game == "barva":
        from ..rules.cards import SUIT_NAMES
        suit = SUIT_NAMES[deal.trump_card >> 3] if deal.trump_card is not None else "?"
        name = deal.contract or "barva"
        proti = "".join(f" +{p} proti" for p in deal.proti)
        return f"{name} ({suit}){proti}"
    return deal.game


def result_text(result: Settlement | dict) -> str:
    r = result.to_dict() if isinstance(result, Settlement) else result
    if r["kind"] == "fault" and not r["components"]:
        return "; ".join(r["notes"])
    parts = [component_text(c) for c in r["components"]]
    text = ", ".join(parts) if parts else "-"
    if r["kind"] in ("conceded", "not-played"):
        text += f" [{r['kind']}]"
    if r["kind"] == "fault":
        text += " [" + "; ".join(r["notes"]) + "]"
    return text


def deal_rows(partie: Partie) -> list[dict]:
    rows = []
    running = [0, 0, 0]
    for i, d in enumerate(partie.deals, 1):
        pay = d.result.payments if d.result else (0, 0, 0)
        running = [running[s] + pay[s] for s in range(3)]
        rows.append({
            "deal": i,
            "forhont": d.forhont,
            "cut": partie.cuts[i - 1] if partie.cuts[i - 1] is not None else "-",
            "actor": d.actor if d.actor is not None else "-",
            "game": game_text(d),
            "result": result_text(d.result) if d.result else "unfinished",
            "seat 0": pay[0],
            "seat 1": pay[1],
            "seat 2": pay[2],
            "total": " ".join(f"{x:+d}" for x in running),
        })
    return rows


def partie_summary(partie: Partie, names: list[str]) -> list[dict]:
    totals = partie.totals()
    pl = places(totals)
    return [{"seat": s, "bot": names[s], "groše": totals[s], "place": _place(pl[s])} for s in range(3)]


def _place(p: float) -> str:
    return str(int(p)) if p == int(p) else f"{p:g}"


def match_rows(result) -> list[dict]:
    """Groše per seat per partie and in total (a :class:`referee.matches.match.MatchResult`)."""
    rows = []
    for i, t in enumerate(result.partie_totals, 1):
        rows.append({"partie": i, **{f"seat {s}: {result.names[s]}": t[s] for s in range(3)}})
    rows.append({"partie": "total", **{f"seat {s}: {result.names[s]}": result.totals[s] for s in range(3)}})
    return rows


def seat_rows(result) -> list[dict]:
    rows = []
    for s in range(3):
        st = result.stats[s]
        faults = ", ".join(f"{k} {v}" for k, v in sorted(st.faults.items())) or "-"
        rows.append({
            "seat": s,
            "bot": result.names[s],
            "groše": result.totals[s],
            "decisions": st.decisions,
            "mean ms": round(st.total_ms / st.decisions, 2) if st.decisions else 0,
            "max ms": round(st.max_ms, 1),
            "faults": faults,
            "forfeited (R12.3)": _forfeits(st),
        })
    return rows


def _forfeits(st) -> str:
    """'partie 2 from deal 7, ...' from a seat's R12.3 forfeits (``SeatStats.forfeited``: dicts with
    partie and from_deal)."""
    return ", ".join(f"partie {f['partie']} from deal {f['from_deal']}" for f in st.forfeited) or "-"


def fault_rows(result) -> list[dict]:
    """One row per fault of a :class:`referee.matches.match.MatchResult`: where, who, what and the hint
    (the first line of the hint of :func:`referee.seats.explain.describe`)."""
    rows = []
    for f in result.faults:
        hint = next((line.strip()[len("hint: "):] for line in f.get("text", "").splitlines()
                     if line.strip().startswith("hint: ")), "")
        rows.append({"partie": f["partie"], "deal": f["deal"], "seat": f["seat"], "bot": f.get("bot", ""),
                     "kind": f["kind"], "hint": hint[:100] + ("…" if len(hint) > 100 else "")})
    return rows
