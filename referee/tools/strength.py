"""Strength reports (``marias strength``): built-in bots played in-process over
the same decks with the seats rotated, so that the luck of the cards cancels.

For each starting deck the bots are seated in every rotation (3) or every
permutation (6) of the seats and play one partie (12 deals, R2) per seating,
all from the same shuffled deck and the same cuts.  Per bot entry the report
gives the partie played, the groše won in total, the mean per partie with a 95 %
confidence interval, the mean place (R9.7: shared places averaged), the partie
won outright, and the time the bot spent per decision.

Entries are built-in names (played in-process, fast) or any bot command, as
``match`` takes them (``NAME=COMMAND`` too).  When any entry is a command, every
entry -- built-ins as ``python -m bots NAME`` -- is played as a program through the
referee (:func:`referee.matches.match.run_match`, one partie per deck and seating, the deck
and cuts of a deck shared by its seatings), so that all three bear the same costs,
and faults are counted per entry.  This is not a tournament: no output folder to
resume, only the report.

The confidence interval treats the per-deck means (a bot's mean over the
seatings of one deck) as the independent samples: the seatings of one deck are
correlated through the cards, different decks are not.  The factor is Student's t
quantile at decks - 1 degrees of freedom (:mod:`referee.tournaments.stats`), at every df.
"""

from __future__ import annotations

import itertools
import math
import statistics
import time
from typing import Sequence

from protocol.sdk import Bot

from ..rules.actions import CONTRACTS
from ..rules.partie import partie_seed
from ..rules.selfplay import play_partie
from ..tournaments.stats import t975

def t95(df: int) -> float:
    """The two-sided 95% factor t(0.975, df) (:func:`referee.tournaments.stats.t975`); nan without df."""
    if df <= 0:
        return float("nan")
    return t975(df)


class _Timed(Bot):
    """Wraps a bot to count its decisions and the time spent in them."""

    def __init__(self, inner: Bot):
        self.inner = inner
        self.name = inner.name
        self.decisions = 0
        self.seconds = 0.0
        self.longest = 0.0

    def decide(self, decision: str, view: dict, legal: list[str]) -> str:
        t0 = time.perf_counter()
        out = self.inner.decide(decision, view, legal)
        took = time.perf_counter() - t0
        self.seconds += took
        self.longest = max(self.longest, took)
        self.decisions += 1
        return out

    def on_hello(self, message: dict) -> None:
        self.inner.on_hello(message)

    def on_partie_start(self, message: dict) -> None:
        self.inner.on_partie_start(message)

    def on_deal_start(self, message: dict) -> None:
        self.inner.on_deal_start(message)

    def on_event(self, message: dict) -> None:
        self.inner.on_event(message)

    def on_deal_end(self, message: dict) -> None:
        self.inner.on_deal_end(message)

    def on_partie_end(self, message: dict) -> None:
        self.inner.on_partie_end(message)


def seatings(permutations: bool) -> list[tuple[int, int, int]]:
    """Which entry sits on seats 0, 1, 2: the 3 rotations or the 6 permutations."""
    if permutations:
        return list(itertools.permutations(range(3)))
    return [(0, 1, 2), (1, 2, 0), (2, 0, 1)]


def labels(names: Sequence[str]) -> list[str]:
    """Entry labels; a name given more than once is numbered: robot#1, robot#2."""
    out = []
    for i, n in enumerate(names):
        if names.count(n) > 1:
            out.append(f"{n}#{names[:i + 1].count(n)}")
        else:
            out.append(n)
    return out


def parse_entry(value: str) -> tuple[str, str]:
    """``(label, command)`` of an entry: ``robot``, ``random:3``, ``NAME=COMMAND`` or a command line."""
    from ..seats.identity import split_named

    name, command = split_named(value)
    return (name, command) if name is not None else (value, value)


def command_problem(command: str) -> str | None:
    """Why ``command`` cannot be a bot (not a built-in, and its program is not found), or None."""
    import os
    import shutil

    from ..matches.match import BotSpec

    if is_builtin(command):
        return None
    try:
        argv = BotSpec.parse(command).argv
    except ValueError as e:
        return str(e)
    if os.sep in argv[0] or argv[0].startswith("."):
        return None if os.access(argv[0], os.X_OK) else f"{command!r}: {argv[0]} is not an executable file"
    return None if shutil.which(argv[0]) else f"{command!r}: program {argv[0]!r} not found (built-ins: random, robot)"


def is_builtin(command: str) -> bool:
    import bots

    return command in bots.BUILTIN


def run(names: Sequence[str], partie: int = 30, seed: int | str = 1, permutations: bool = False,
        make=None, move_ms: int = 2000, startup_ms: int = 10_000, *, jobs: int = 1,
        ms: float | None = None, nodes: int | None = None, progress=None) -> dict:
    """Play about ``partie`` partie (rounded up to whole decks) and summarise per entry.

    ``names`` are three entries (:func:`parse_entry`); ``make(name, seed)`` builds an
    in-process bot (default :func:`bots.make` with the search bot's ``ms``/``nodes``) when
    all three are built-in names.  ``jobs`` processes play the partie (``make`` given: one);
    the report is the same for every ``jobs``, each partie's result being a function of its
    deck, seating and seed alone.  ``progress(done, total)`` is called after each partie.
    On KeyboardInterrupt the report of the whole decks played so far is returned with
    ``partial: True`` (and ``partie_planned``); with no whole deck the interrupt propagates.
    """
    if len(names) != 3:
        raise ValueError(f"a table needs exactly three bots, got {len(names)}")
    if ms is None:
        from bots import SEARCH_MS as ms
    entries = [parse_entry(n) for n in names]
    programs = make is None and not all(is_builtin(c) for _, c in entries)
    if programs:
        job = ("programs", entries, move_ms, startup_ms)
    else:
        job = ("builtins", list(names), ms, nodes)
    report, faults = _tally(list(names) if not programs else [label for label, _ in entries], partie, seed,
                            permutations, job, make, jobs, progress)
    if programs:
        report["programs"] = True
        for row, n in zip(report["results"], faults):
            row["faults"] = n
    return report


def _play_one(job, make, match_seed: str, seating, bot_seed: str):
    """One partie: its totals, places and per seat (decisions, seconds, faults)."""
    if job[0] == "builtins":
        _, names, ms, nodes = job
        if make is None:
            import bots

            def make(name, s):
                return bots.make(name, s, ms=ms, nodes=nodes)
        # seating[seat] = entry sitting there
        timed = [_Timed(make(names[e], f"{bot_seed}:{e}")) for e in seating]
        p = play_partie(timed, seed=partie_seed(match_seed, 1))  # the deck and cuts a match of that seed plays
        return p.totals(), p.places(), [(t.decisions, t.seconds, 0, t.longest) for t in timed], declarations(p)
    from ..matches.match import BotSpec, Limits, MatchConfig, run_match

    _, entries, move_ms, startup_ms = job
    specs = []
    for e in seating:
        spec = BotSpec.parse(entries[e][1], seed=f"{bot_seed}:{e}")
        spec.label = entries[e][0]
        specs.append(spec)
    result = run_match(MatchConfig(bots=specs, partie=1, seed=match_seed, keep_partie=True,
                                   limits=Limits(move_ms=move_ms, startup_ms=startup_ms)))
    stats = [(st.decisions, st.total_ms / 1000, sum(st.faults.values()), st.max_ms / 1000) for st in result.stats]
    return result.partie_totals[0], result.partie_places[0], stats, declarations(result.parties[0])


def declarations(partie) -> list[tuple[int, str, bool, int]]:
    """Each deal's declaration: (the actor's seat, the game — the contract of a trump
    game such as ``hra`` or ``sedma``, else ``betl`` or ``durch`` —, won, the groše the
    actor received).  Won: the actor's net payment is positive.  Deals ended by a
    fault are left out (their settlement is R12's, not the game's)."""
    out = []
    for d in partie.deals:
        if d.result is None or d.actor is None or d.fault_info is not None:
            continue
        game = d.contract if d.game == "barva" else d.game
        pay = d.result.payments[d.actor]
        out.append((d.actor, game, pay > 0, pay))
    return out


def _worker_init() -> None:
    """A pool process leaves Ctrl-C to the parent, which stops the pool."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _play_task(args):
    job, key, match_seed, seating, bot_seed = args
    return key, _play_one(job, None, match_seed, seating, bot_seed)


def _tally(names: list[str], partie: int, seed: int | str, permutations: bool, job, make=None, jobs: int = 1,
           progress=None) -> tuple[dict, list[int]]:
    """Every deck (about ``partie`` partie, rounded up to whole decks) in every seating of
    :func:`seatings`, each partie played by :func:`_play_one`.  The report and the faults per entry."""
    seats_list = seatings(permutations)
    k = len(seats_list)
    decks = max(1, math.ceil(partie / k))
    tasks = []
    for d in range(decks):
        match_seed = f"strength:{seed}:{d}"  # one deck and its cuts for every seating
        for r, seating in enumerate(seats_list):
            tasks.append((job, (d, r), match_seed, seating, f"{seed}:{d}:{r}"))
    results: dict[tuple[int, int], tuple] = {}
    interrupted = False
    try:
        if jobs <= 1 or make is not None:
            for t in tasks:
                results[t[1]] = _play_one(t[0], make, *t[2:])
                if progress:
                    progress(len(results), len(tasks))
        else:
            import concurrent.futures as cf
            import multiprocessing

            pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                          initializer=_worker_init)
            try:
                for fut in cf.as_completed([pool.submit(_play_task, t) for t in tasks]):
                    key, value = fut.result()
                    results[key] = value
                    if progress:
                        progress(len(results), len(tasks))
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt:
        interrupted = True
    whole = 0
    while whole < decks and all((whole, r) in results for r in range(k)):
        whole += 1
    if interrupted and whole == 0:
        raise KeyboardInterrupt
    totals = [0, 0, 0]
    per_partie: list[list[int]] = [[], [], []]
    deck_means: list[list[float]] = [[], [], []]
    places: list[list[float]] = [[], [], []]
    firsts = [0, 0, 0]
    decisions = [0, 0, 0]
    seconds = [0.0, 0.0, 0.0]
    longest = [0.0, 0.0, 0.0]
    faults = [0, 0, 0]
    declared: dict[tuple[int, str], list[int]] = {}  # (entry, game) -> [declared, won, groše]
    for d in range(whole):
        deck_scores: list[list[int]] = [[], [], []]
        for r, seating in enumerate(seats_list):
            tot, pl, seat_stats, decl = results[(d, r)]
            for actor, game, won, pay in decl:
                row = declared.setdefault((seating[actor], game), [0, 0, 0])
                row[0] += 1
                row[1] += won
                row[2] += pay
            for seat, e in enumerate(seating):
                totals[e] += tot[seat]
                per_partie[e].append(tot[seat])
                deck_scores[e].append(tot[seat])
                places[e].append(pl[seat])
                if pl[seat] == 1.0:
                    firsts[e] += 1
                n, secs, f, top = seat_stats[seat]
                decisions[e] += n
                seconds[e] += secs
                longest[e] = max(longest[e], top)
                faults[e] += f
        for e in range(3):
            deck_means[e].append(statistics.fmean(deck_scores[e]))
    report = _report(names, seed, whole, permutations, k, totals, per_partie, deck_means, places, firsts,
                     decisions, seconds, longest)
    report["contracts"] = contract_rows(report["results"], declared)
    if interrupted:
        report["partial"] = True
        report["partie_planned"] = decks * k
        report["partie_played"] = len(results)
    return report, faults


def _report(names, seed, decks, permutations, k, totals, per_partie, deck_means, places, firsts, decisions, seconds,
            longest) -> dict:
    rows = []
    for e, label in enumerate(labels(list(names))):
        m = statistics.fmean(per_partie[e])
        if decks > 1:
            half = t95(decks - 1) * statistics.stdev(deck_means[e]) / math.sqrt(decks)
        else:
            half = float("nan")
        rows.append({
            "bot": label,
            "partie": len(per_partie[e]),
            "groše": totals[e],
            "mean": round(m, 2),
            "ci95_low": round(m - half, 2),
            "ci95_high": round(m + half, 2),
            "mean_place": round(statistics.fmean(places[e]), 3),
            "firsts": firsts[e],
            "ms_per_decision": round(1000 * seconds[e] / decisions[e], 4) if decisions[e] else 0.0,
            "ms_max": round(1000 * longest[e], 2),
        })
    return {
        "bots": list(names),
        "seed": seed,
        "decks": decks,
        "seatings": "permutations" if permutations else "rotations",
        "partie": decks * k,
        "results": rows,
    }


#: the order games are listed in: the trump contracts (R5.1), then betl and durch
GAME_ORDER = (*CONTRACTS, "betl", "durch")


def contract_rows(results: list[dict], declared: dict[tuple[int, str], list[int]]) -> list[dict]:
    """Per entry and game: how often it was declared, how often won, and the mean groše
    the declarer received per declaration (from the declarer's seat: twice what each
    defender pays)."""
    rows = []
    for (e, game), (n, won, pay) in sorted(declared.items(), key=lambda kv: (
            kv[0][0], GAME_ORDER.index(kv[0][1]) if kv[0][1] in GAME_ORDER else len(GAME_ORDER), kv[0][1])):
        rows.append({"bot": results[e]["bot"], "game": game, "declared": n, "won": won,
                     "won_share": round(won / n, 3), "mean": round(pay / n, 2)})
    return rows


def contract_table_rows(report: dict) -> list[dict]:
    """Rows for :mod:`tabulate`: declared and won per bot and game."""
    return [{"bot": r["bot"], "game": r["game"], "declared": r["declared"], "won": r["won"],
             "won %": round(100 * r["won_share"]), "groše/declaration": r["mean"]} for r in report["contracts"]]


def table_rows(report: dict) -> list[dict]:
    """Rows for :mod:`tabulate`."""
    out = []
    for r in report["results"]:
        out.append({
            "bot": r["bot"],
            "partie": r["partie"],
            "groše": r["groše"],
            "mean/partie": r["mean"],
            "95% CI": f"[{r['ci95_low']}, {r['ci95_high']}]",
            "mean place": r["mean_place"],
            "firsts": r["firsts"],
            "ms/decision": r["ms_per_decision"],
            "max ms": r["ms_max"],
            **({"faults": r["faults"]} if "faults" in r else {}),
        })
    return out
