"""Tables from match logs alone: standings, play statistics, the cross table, a series (R10), ratings.

Everything here reads validated logs (:mod:`referee.logs.log` format) and nothing else,
so any table can be rebuilt and checked by anyone who holds the logs
(``marias table PATH...``); the tournament prints its tables through the same code.
Definitions are in protocol/TOURNAMENT.md ("Tables").

A *bot* is identified by its identity (:mod:`referee.seats.identity`): the header's
label (the tournament's bot name, or the ``NAME=`` of ``marias match --bot``),
else its announced name, together with its fingerprint.  One label with two
fingerprints (a bot changed between runs) becomes two bots, ``NAME@FINGERPR``;
two seats of one log with the same label and fingerprint are one bot in two seats (a duel's
A A B: one row, its seats' groše together per partie); with different fingerprints they are
told apart as ``NAME#SEAT``.

An event folder (or its ``logs/``) counts only the logs its units name
(:class:`referee.tournaments.event.EventFolder`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean, stdev
from typing import Iterable

from tabulate import tabulate

from .head_to_head import render as render_head_to_head
from .event import EventFolder, gather, load, log_paths, read_logs  # which logs count; callers may reach these as standings.X too
from .records import (  # partie records; callers may reach these as standings.X too
    PartieRecord, bot_fingerprints, bot_keys, match_key, name_identities, not_recorded_note, pair_flows,
    records_from_log,
)
from .stats import elo_estimate, estimate, t975

CONTRACT_KINDS = ("hra", "sedma", "sto", "betl", "durch", "proti")
TABLE_NAMES = ("standings", "pairs", "play", "cross", "series", "rating")
FORMATS = ("text", "md", "csv", "json")

# ------------------------------------------------------------------ statistics

@dataclass
class BotStats:
    name: str
    partie: int = 0
    groše: int = 0
    partie_totals: list[int] = field(default_factory=list)
    actor_wins_by_partie: list[int] = field(default_factory=list)
    groups: dict[tuple, list[int]] = field(default_factory=dict)
    place_credit: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    place_sum: float = 0.0
    deals: int = 0
    actor: int = 0
    actor_won: int = 0
    contracts: dict[str, list[int]] = field(default_factory=lambda: {k: [0, 0] for k in CONTRACT_KINDS})
    fleks_given: int = 0
    fleks_won: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    decisions: int = 0
    ms_sum: float = 0.0
    ms_max: float = 0.0
    fingerprint: str | None = None
    forfeited_from: list[int] = field(default_factory=list)  # R12.3: the first forfeited deal, per forfeit
    forfeited_deals: int = 0

    @property
    def mean(self) -> float:
        return self.groše / self.partie if self.partie else 0.0

    @property
    def ci95(self) -> float | None:
        """Half-width of the 95% interval of the mean per partie, duplicate groups as the sampling unit."""
        means = [fmean(v) for v in self.groups.values()]
        if len(means) < 2:
            return None
        return t975(len(means) - 1) * stdev(means) / math.sqrt(len(means))

    @property
    def mean_ms(self) -> float | None:
        return self.ms_sum / self.decisions if self.decisions else None


def place_credit(totals: list[int]) -> list[list[float]]:
    """R9.7 shared places, as credit: seats with equal totals split the places they occupy equally.

    Returns per seat the credit for 1st, 2nd and 3rd place (each row sums to 1).
    """
    order = sorted(range(3), key=lambda s: -totals[s])
    credit = [[0.0, 0.0, 0.0] for _ in range(3)]
    i = 0
    while i < 3:
        j = i
        while j + 1 < 3 and totals[order[j + 1]] == totals[order[i]]:
            j += 1
        share = 1.0 / (j - i + 1)
        for s in order[i:j + 1]:
            for pos in range(i, j + 1):
                credit[s][pos] += share
        i = j + 1
    return credit


def competition_ranks(totals: list[int]) -> list[int]:
    """1 + the number of seats with more groše (equal totals share the rank)."""
    return [1 + sum(1 for u in totals if u > t) for t in totals]


@dataclass
class Tournament:
    """Every statistic of a set of partie."""

    bots: dict[str, BotStats]
    cross: dict[str, dict[str, int]]  # cross[a][b]: groše a won from b
    met: dict[str, dict[str, int]]  # partie a and b played at one table
    parties: list  # Played, in order (the pairs and rating tables)
    head_to_head: list[dict] = field(default_factory=list)  # results of head-to-head folders (referee.tournaments.duel)
    rejected: list[str] = field(default_factory=list)  # logs left out: not the ones the journal recorded


@dataclass(slots=True)
class Played:
    """What the pairs and rating tables keep of each partie: its bots (each once, a bot in two seats
    with its seats' groše together), their totals, the group."""

    source: str
    partie: int
    bots: tuple
    totals: list
    group: tuple


def compute(parties: Iterable, fps_of: dict[str, set] | None = None) -> Tournament:
    """Every statistic of ``parties``: :class:`PartieRecord` (summarized here, deal by deal) or
    :class:`referee.tournaments.results.PartieSummary` (from the results database), read once in order.

    ``fps_of`` (label -> fingerprints seen): rename each bot ``label@fingerprint`` where a label
    stands for more than one fingerprint (as :func:`name_identities` does to loaded records), so
    that a stream of summaries is aggregated without holding it."""
    from ..seats.identity import short
    from .results import PartieSummary, summarize

    bots: dict[str, BotStats] = {}
    cross: dict[str, dict[str, int]] = {}
    met: dict[str, dict[str, int]] = {}
    played: list[Played] = []
    names_cache: dict[tuple, tuple] = {}
    group_cache: dict[tuple, tuple] = {}
    for p in parties:
        s = p if isinstance(p, PartieSummary) else summarize(p)
        names = s.bots
        if fps_of is not None:
            key = (s.bots, s.fingerprints)
            names = names_cache.get(key)
            if names is None:
                names = names_cache[key] = tuple(f"{n}@{short(fp)}" if len(fps_of.get(n, ())) > 1 else n
                                                 for n, fp in zip(s.bots, s.fingerprints))
        # one bot may hold two seats (a duel's A A B): it is one entry of the partie, its seats together
        uniq = tuple(dict.fromkeys(names))
        seats_of = [[i for i in range(3) if names[i] == n] for n in uniq]
        merged = [sum(s.totals[i] for i in ix) for ix in seats_of]
        st = [bots.get(n) or bots.setdefault(n, BotStats(n)) for n in uniq]
        for b, ix in zip(st, seats_of):
            b.fingerprint = b.fingerprint or s.fingerprints[ix[0]]
        for i in range(3):
            for j in range(3):
                if names[i] != names[j]:
                    row = cross.setdefault(names[i], {})
                    row[names[j]] = row.get(names[j], 0) + s.won_from(i, j)
        for a in uniq:
            for b2 in uniq:
                if a != b2:
                    m = met.setdefault(a, {})
                    m[b2] = m.get(b2, 0) + 1
        credit = place_credit(s.totals)
        gkey = (tuple(sorted(uniq)), s.deck)  # the same bots on the same deck, whoever holds two seats
        group = group_cache.get(gkey) or group_cache.setdefault(gkey, gkey)
        for b, ix, total in zip(st, seats_of, merged):
            actor_won = 0
            for i in ix:
                x = s.seats[i]
                b.deals += s.deals
                b.actor += x.actor
                b.actor_won += x.actor_won
                actor_won += x.actor_won
                for k, (w, l) in x.contracts.items():
                    c = b.contracts[k]
                    c[0] += w
                    c[1] += l
                b.fleks_given += x.fleks_given
                b.fleks_won += x.fleks_won
                for k, v in x.faults.items():
                    b.faults[k] = b.faults.get(k, 0) + v
                b.decisions += x.decisions
                b.ms_sum += x.ms_sum
                if x.decisions:
                    b.ms_max = max(b.ms_max, x.ms_max)
                for from_deal, deals in x.forfeits:
                    b.forfeited_from.append(from_deal)
                    b.forfeited_deals += deals
            b.partie += 1
            b.groše += total
            b.partie_totals.append(total)
            b.actor_wins_by_partie.append(actor_won)
            b.groups.setdefault(group, []).append(total)
            for k in range(3):  # a bot in two seats: the mean of its seats' places
                b.place_credit[k] += sum(credit[i][k] for i in ix) / len(ix)
            b.place_sum += sum((k + 1) * credit[i][k] for i in ix for k in range(3)) / len(ix)
        played.append(Played(s.source, s.partie, uniq, merged, group))
    return Tournament(bots, cross, met, played)


# ------------------------------------------------------------------ tables (rows for tabulate)

def _r(x: float | None, nd: int = 2):
    return None if x is None else round(x, nd)


def _num(x: float):
    """A count that may be fractional (shared places): an int when whole."""
    return int(x) if abs(x - round(x)) < 1e-9 else round(x, 2)


def _place_labels(keys: list[tuple]) -> list[str]:
    """Places for sorted ``keys``: equal keys share a place, written '2='."""
    labels = []
    for i, k in enumerate(keys):
        first = next(j for j in range(len(keys)) if keys[j] == k)
        shared = keys.count(k) > 1
        labels.append(f"{first + 1}{'=' if shared else ''}")
    return labels


def standings_rows(t: Tournament) -> list[dict]:
    """Ranked by mean groše per partie, then total groše; each bot with its fingerprint (short)."""
    from ..seats.identity import short

    order = sorted(t.bots.values(), key=lambda b: (-b.mean, -b.groše, b.name))
    places = _place_labels([(round(b.mean, 9), b.groše) for b in order])
    rows = []
    for pl, b in zip(places, order):
        rows.append({
            "#": pl,
            "bot": b.name,
            "fingerprint": short(b.fingerprint),
            "partie": b.partie,
            "groše": b.groše,
            "mean": _r(b.mean),
            "±95%": _r(b.ci95),
            "1st": _num(b.place_credit[0]),
            "2nd": _num(b.place_credit[1]),
            "3rd": _num(b.place_credit[2]),
            "mean place": _r(b.place_sum / b.partie if b.partie else None),
        })
    return rows


def pairwise_rows(t: Tournament) -> list[dict]:
    """Each pair of bots that met: the mean of (row bot's groše − the other's) over the partie where both
    sat, its 95% interval and the likelihood of superiority, duplicate groups as the sampling unit.

    The row bot is the one ahead (a difference ≥ 0); pairs are listed by their difference, largest first.
    """
    diffs: dict[tuple[str, str], dict[tuple, list[int]]] = {}
    for p in t.parties:
        for i in range(len(p.bots)):
            for j in range(len(p.bots)):
                a, b = p.bots[i], p.bots[j]
                if a < b:
                    diffs.setdefault((a, b), {}).setdefault(p.group, []).append(p.totals[i] - p.totals[j])
    rows = []
    for (a, b), groups in diffs.items():
        means = [fmean(v) for v in groups.values()]
        e = estimate(means)
        partie = sum(len(v) for v in groups.values())
        mean = fmean([d for v in groups.values() for d in v])  # over the partie (groups may differ in size)
        flip = mean < 0 or (mean == 0 and e.mean < 0)
        if flip:
            a, b, mean, means = b, a, -mean, [-m for m in means]
            e = estimate(means)
        # the row bot's score against the other per partie (more groše 1, equal ½, fewer 0), per group
        scores = [fmean((d < 0) + 0.5 * (d == 0) if flip else (d > 0) + 0.5 * (d == 0) for d in v)
                  for v in groups.values()]
        el = elo_estimate(scores)
        rows.append({"bot": a, "vs": b, "partie": partie, "groups": e.n, "diff": _r(mean), "±95%": _r(e.half),
                     "LOS": None if e.los is None else round(e.los, 3), "score": _r(el.score, 3),
                     "Elo": _r(el.elo, 1), "±Elo": _r(el.half, 1)})
    rows.sort(key=lambda r: (-(r["diff"] or 0), r["bot"], r["vs"]))
    return rows


def play_rows(t: Tournament, split: bool = False) -> list[dict]:
    """Deals as actor, contracts won/lost, fleks, faults and decision times, per bot."""
    rows = []
    for b in sorted(t.bots.values(), key=lambda b: b.name):
        row = {"bot": b.name, "deals": b.deals, "actor": b.actor, "won as actor": b.actor_won}
        for k in CONTRACT_KINDS:
            w, l = b.contracts[k]
            if split:
                row[f"{k} won"] = w
                row[f"{k} lost"] = l
            else:
                row[k] = f"{w}:{l}"
        row["fleks given"] = b.fleks_given
        row["fleks won"] = b.fleks_won
        if split:
            for k, v in sorted(b.faults.items()):
                row[f"faults {k}"] = v
            row["faults"] = sum(b.faults.values())
        else:
            row["faults"] = ", ".join(f"{k} {v}" for k, v in sorted(b.faults.items())) or "-"
        row["forfeits"] = len(b.forfeited_from)
        row["forfeited"] = forfeit_text(b.forfeited_from)
        row["mean ms"] = _r(b.mean_ms)
        row["max ms"] = _r(b.ms_max if b.decisions else None, 1)
        rows.append(row)
    if split:  # every row gets every fault column
        kinds = sorted({k for r in rows for k in r if k.startswith("faults ")})
        for r in rows:
            for k in kinds:
                r.setdefault(k, 0)
        rows = [{k: r[k] for k in _ordered_keys(r, kinds)} for r in rows]
    return rows


def forfeit_text(from_deals: list[int]) -> str:
    """R12.3 forfeits as the tables show them: 'from deal 7', 'from deals 7, 10' (in log order)."""
    if not from_deals:
        return "-"
    shown = ", ".join(str(d) for d in from_deals[:8]) + (", …" if len(from_deals) > 8 else "")
    return f"from deal{'s' if len(from_deals) > 1 else ''} {shown}"


def _ordered_keys(row: dict, fault_kinds: list[str]) -> list[str]:
    tail = ("mean ms", "max ms", "forfeits", "forfeited")
    head = [k for k in row if not k.startswith("faults") and k not in tail]
    return head + fault_kinds + ["faults", "forfeits", "forfeited", "mean ms", "max ms"]


def cross_rows(t: Tournament) -> list[dict]:
    """Row bot's groše won from the column bot at the tables they shared (pairwise flows of each deal)."""
    names = sorted(t.bots)
    rows = []
    for a in names:
        row = {"bot": a}
        for b in names:
            row[b] = None if a == b or b not in t.cross.get(a, {}) else t.cross[a][b]
        row["total"] = sum(t.cross.get(a, {}).values())
        rows.append(row)
    return rows


def series_rows(t: Tournament, n: int) -> list[dict]:
    """R10: the sum of each bot's ``n`` best partie (missing ones count 0); ties by partie played,
    then deals won as actor in the counted partie; equal on all three share the place."""
    if n < 1:
        raise ValueError("a series counts at least one partie")
    entries = []
    for b in t.bots.values():
        best = sorted(zip(b.partie_totals, b.actor_wins_by_partie), key=lambda x: (-x[0], -x[1]))[:n]
        score = sum(g for g, _ in best)
        wins = sum(w for _, w in best)
        entries.append((b, score, wins, [g for g, _ in best]))
    entries.sort(key=lambda e: (-e[1], -e[0].partie, -e[2], e[0].name))
    places = _place_labels([(e[1], e[0].partie, e[2]) for e in entries])
    return [{"#": pl, "bot": b.name, f"best {n}": score, "partie": b.partie, "counted": len(best),
             "won as actor (counted)": wins, "counted partie": " ".join(f"{g:+d}" for g in best)}
            for pl, (b, score, wins, best) in zip(places, entries)]


def rating_rows(t: Tournament) -> list[dict]:
    """openskill Plackett–Luce, each partie rated by its places (in log order); ordered by mu − 3σ."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in sorted(t.bots)}
    counts = {name: 0 for name in ratings}
    for p in t.parties:
        teams = [[ratings[n]] for n in p.bots]
        new = model.rate(teams, ranks=competition_ranks(p.totals))
        for n, team in zip(p.bots, new):
            ratings[n] = team[0]
            counts[n] += 1
    field = field_elo(t)
    order = sorted(ratings, key=lambda n: (-ratings[n].ordinal(), n))
    return [{"#": i, "bot": n, "mu": _r(ratings[n].mu), "sigma": _r(ratings[n].sigma),
             "mu-3sigma": _r(ratings[n].ordinal()), "partie": counts[n],
             "Elo": _r(field[n].elo, 1) if n in field else None, "±Elo": _r(field[n].half, 1) if n in field else None}
            for i, n in enumerate(order, 1)]


def field_elo(t: Tournament) -> dict:
    """Each bot's Elo against the field it met, with its 95% interval (:func:`referee.tournaments.stats.elo_estimate`):
    in every partie the bot scores against each other bot at the table (more groše 1, equal ½, fewer 0);
    its mean score per duplicate group is one sample, as for the standings' interval."""
    per: dict[str, dict[tuple, list[float]]] = {}
    for p in t.parties:
        for i, a in enumerate(p.bots):
            for j, b in enumerate(p.bots):
                if i != j:
                    d = p.totals[i] - p.totals[j]
                    per.setdefault(a, {}).setdefault(p.group, []).append((d > 0) + 0.5 * (d == 0))
    return {n: elo_estimate([fmean(v) for v in groups.values()]) for n, groups in per.items()}


TITLES = {
    "standings": "Standings (groše; mean per partie with 95% interval; places shared per R9.7)",
    "pairs": ("Pairs (groše per partie the row bot won more than the other over the partie where both sat; "
              "95% interval over duplicate groups; LOS: likelihood that the row bot is better; score: its share of the "
              "partie won against the other, in Elo with ± its 95% interval)"),
    "play": "Play (deals as actor; contracts won:lost by the actor, proti by its announcer; fleks; faults; "
            "forfeits of a partie's rest, R12.3; ms per decision)",
    "cross": "Cross table (groše the row bot won from the column bot)",
    "series": "Series (R10)",
    "rating": ("Rating (openskill Plackett-Luce; Elo against the field met, from per-partie scores over duplicate "
               "groups, ± its 95% interval)"),
}


def build(t: Tournament, *, series: int | None = None, which: Iterable[str] | None = None,
          split: bool = False) -> dict[str, list[dict]]:
    """The tables by name (standings, play, cross, rating, and series when ``series`` is given)."""
    which = list(which or [n for n in TABLE_NAMES if n != "series" or series])
    out = {}
    for name in which:
        if name == "standings":
            out[name] = standings_rows(t)
        elif name == "pairs":
            out[name] = pairwise_rows(t)
        elif name == "play":
            out[name] = play_rows(t, split=split)
        elif name == "cross":
            out[name] = cross_rows(t)
        elif name == "series":
            if not series:
                raise ValueError("the series table needs --series N")
            out[name] = series_rows(t, series)
        elif name == "rating":
            out[name] = rating_rows(t)
        else:
            raise ValueError(f"unknown table {name!r} (tables: {', '.join(TABLE_NAMES)})")
    return out


def render(tables: dict[str, list[dict]], fmt: str = "text", *, series: int | None = None,
           footer: str | None = None, titles: dict[str, str] | None = None) -> str:
    """Tables as text, Markdown (md), CSV (each table after a '# name' line) or JSON; ``titles``
    names tables other than these (the analysis's, referee/analysis/summary.py)."""
    if fmt == "json":
        body = {name: rows for name, rows in tables.items()}
        return json.dumps(body, indent=2, ensure_ascii=False)
    parts = []
    for name, rows in tables.items():
        title = (titles or TITLES)[name] + (f": the best {series} partie" if name == "series" and series else "")
        if fmt == "csv":
            buf = io.StringIO()
            buf.write(f"# {name}\n")
            if rows:
                w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
                w.writeheader()
                for r in rows:
                    w.writerow({k: "" if v is None else v for k, v in r.items()})
            parts.append(buf.getvalue())
        elif fmt == "md":
            parts.append(f"## {title}\n\n" + (tabulate(rows, headers="keys", tablefmt="github", missingval="")
                                             if rows else "(no partie)") + "\n")
        elif fmt == "text":
            parts.append(f"{title}\n\n" + (tabulate(rows, headers="keys", tablefmt="simple", missingval="·")
                                           if rows else "(no partie)") + "\n")
        else:
            raise ValueError(f"unknown format {fmt!r} (formats: {', '.join(FORMATS)})")
    text = "\n".join(parts)
    if footer and fmt in ("text", "md"):
        text += "\n" + footer + "\n"
    return text


def report(paths: Iterable, *, fmt: str = "text", series: int | None = None,
           which: Iterable[str] | None = None) -> tuple[str, list[str], Tournament]:
    """Load the logs under ``paths`` and render their tables: (text, notes on skipped files, statistics).

    A head-to-head folder (its tournament.json says ``format: head-to-head``) gets the head-to-head
    section instead (:meth:`EventFolder.head_to_head`: the SPRT's decision, LLR and groups from its logs),
    and its other tables count the groups the test counts, no group finished after its decision.
    """
    paths = list(paths)
    duels: list[EventFolder] = []  # head-to-head folders named (or their logs/): the test's result, then the tables
    read: list = []  # what the tables are computed from: a duel folder gives the logs of the groups its test counts
    for p in paths:
        ev = EventFolder.at(p)
        if ev is None or not ev.is_duel:
            read.append(Path(p))
        elif ev.path.resolve() not in {d.path.resolve() for d in duels}:
            duels.append(ev)
    results = []
    for ev in duels:
        r, counted = ev.head_to_head()
        results.append(r)
        read.extend(counted)
    sections = [render_head_to_head(r, fmt) for r in results]
    if not paths:
        t = compute([])
        t.head_to_head = results
        if fmt == "json" and len(results) > 1:
            return json.dumps({"head-to-head": results}, indent=2, ensure_ascii=False), [], t
        return "\n".join(sections), [], t
    src = gather(read)
    try:
        t = compute(src.summaries, src.fps_of)
    finally:
        src.close()
    skipped = src.notes
    t.head_to_head = results
    t.rejected = list(src.rejected)
    tables = build(t, series=series, which=which, split=fmt in ("csv", "json"))
    footer = f"{src.partie} partie from {src.logs} log(s), {src.deals} deals"
    footer += f"; sandbox: {', '.join(src.sandboxes) or '-'}"
    if src.rejected:
        footer += f"; {len(src.rejected)} log(s) LEFT OUT: not the ones the tournament recorded (see stderr)"
    text = render(tables, fmt, series=series, footer=footer)
    if sections and fmt == "json":
        body = json.loads(text)
        body["head-to-head"] = results[0] if len(results) == 1 else results  # as `marias table DUEL` alone gives it
        text = json.dumps(body, indent=2, ensure_ascii=False)
    elif sections:
        text = "\n".join(sections + [text])
    return text, skipped, t
