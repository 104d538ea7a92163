"""``marias ladder table``: the leaderboard and the pairs' differences, as text, Markdown, CSV or JSON
(rendered as the tournament tables are, :func:`referee.tournaments.standings.render`)."""

from __future__ import annotations

from .folder import LadderFolder

FORMATS = ("text", "md", "csv", "json")
TITLES = {
    "leaderboard": "Leaderboard (openskill Plackett-Luce over duplicate groups; rating ± its 95% interval; "
                   "ordered by the interval's low end)",
    "pairs": "Pairs (groše per partie the first won over the second in the groups where both sat; "
             "± the 95% t interval over those groups; LOS: likelihood the first is the better)",
}


def _r(x, nd: int = 2):
    return None if x is None else round(x, nd)


def leaderboard_rows(ladder: LadderFolder, everyone: bool = True) -> list[dict]:
    rows = []
    for i, r in enumerate(ladder.leaderboard(), 1):
        if not everyone and r["status"] != "active":
            continue
        rows.append({"#": i, "version": r["id"], "author": r["author"], "rating": _r(r["rating"]),
                     "±95%": _r(r["rating"] - r["low"]), "low": _r(r["low"]), "groups": r["groups"],
                     "partie": r["games"], "groše/partie": _r(r["groše"], 1), "faults": r["faults"],
                     "last played": r["last_played"], "status": r["status"]})
    return rows


def pair_rows(ladder: LadderFolder, active_only: bool = False) -> list[dict]:
    """The row version is the one ahead (a difference >= 0); largest difference first."""
    rows = []
    for p in ladder.pairs(active_only=active_only):
        e = p.estimate
        a, b, mean, los = p.a, p.b, e.mean, e.los
        if mean < 0:
            a, b, mean, los = b, a, -mean, None if los is None else 1 - los
        rows.append({"version": a, "vs": b, "groups": e.n, "diff": _r(mean), "±95%": _r(e.half),
                     "LOS": None if los is None else round(los, 3)})
    rows.sort(key=lambda r: (-(r["diff"] or 0), r["version"], r["vs"]))
    return rows


def render(ladder: LadderFolder, fmt: str = "text", *, active_only: bool = False) -> str:
    from ..tournaments.standings import render as render_tables

    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (formats: {', '.join(FORMATS)})")
    tables = {"leaderboard": leaderboard_rows(ladder, not active_only), "pairs": pair_rows(ladder, active_only)}
    c = ladder.counts()
    footer = (f"{c['rated']} groups rated ({c['partie']} partie), {c['void']} void, {c['playing']} being played; "
              f"the logs are in {ladder.logs_dir}")
    return render_tables(tables, fmt, footer=footer, titles=TITLES)
