"""``marias analyze``: every card decision of logs valued, the bidding judged (referee/analysis)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List, Optional

import typer

from ..analysis.deals import BLUNDER_GROSE, WORLDS
from .options import Eta

LISTS = ("loss", "all", "blunders", "none")


def analyze(
    paths: List[Path] = typer.Argument(..., help="Log files, a match's log folder, a tournament or a duel folder (a duel: the logs of the groups its test counts, as marias table counts them)."),
    bot: Optional[str] = typer.Option(None, "--bot", "-b", help="Only this bot (its name in the tables): its decisions listed, valued from its view, its row."),
    worlds: int = typer.Option(WORLDS, "--worlds", "-w", min=0, max=1000, help="Worlds sampled per card decision for the value from the seat's view (0: double-dummy only, no blunders)."),
    seed: str = typer.Option("0", "--seed", help="Seed of the worlds' sampling: the same seed gives the same numbers, whatever -j."),
    blunder: float = typer.Option(BLUNDER_GROSE, "--blunder", min=0.001, help="Blunder threshold: a loss from the seat's own view of at least this many groše of its own payment."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole analysis as JSON (every deal, decision and legal card; protocol/LOGS.md, Analysis)."),
    table_format: str = typer.Option("text", "--format", "-f", help="Output of the listings and the per-bot table: text, md (Markdown), csv or json."),
    listing: str = typer.Option("loss", "--list", help="Which decisions to list: loss (those that gave up groše, double-dummy or from the view; with the bidding that cost), all, blunders, none (the per-bot table alone)."),
    bidding: bool = typer.Option(True, "--bidding/--no-bidding", help="Judge the bidding: the declared game made, betls and durches passed by makeable, raises."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=0, max=256, help="Processes analysing deals at once (0: one per CPU)."),
    cache: bool = typer.Option(False, "--cache", help="Keep each log's analysis beside it in .marias-analysis/ (hidden from every bot like the logs) and reuse it when the log and the settings are the same."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
):
    """Why did my bot lose? Every card decision of the logs valued: each legal card double-dummy (every hand known, best play of both sides after it) and from the seat's view (the mean over --worlds deals consistent with what the referee had told the seat, sampled with --seed: a rerun gives the same numbers); the chosen card's loss against the best; blunders; and the bidding judged double-dummy.

    Values are groše of the seat's own payment under the deal's settlement (R6-R9): the actor's count twice what each defender pays, so a card that gives away a hra of 1 groš costs the actor 2 and a defender 1. Betl and durch are won or lost (their stake); in trump games every component counts (hra or tiché sto, sto with its tens, sedma, tichá sedma, games against, hlášky where the rules count them), and card points break ties between lines of equal groše. A loss is the best legal action's value less the chosen one's (never negative), double-dummy and from the view. A blunder: a loss from the seat's own view of at least --blunder groše (default 1, the stake of a hra): what the seat knew already showed the card gave that up, on average over the worlds it could not tell apart.

    Prints the card decisions that lost and the bidding that cost (--list), then one row per bot: decisions with a choice, mean loss double-dummy and from its view, blunders (and per 100 decisions), games declared and made double-dummy, betls and durches passed by and makeable, raises and their double-dummy gain. A duel folder counts the groups its test counts, a tournament folder the logs its manifest names. Progress on stderr; Ctrl-C prints what is done, marked partial (exit 130); a path that is not a log: exit 2."""
    from ..analysis import cache as cache_mod
    from ..analysis.deals import Settings
    from ..analysis.run import AnalysisError, Run, analyze_read, event_logs, read
    from ..analysis.summary import TITLES, bidding_rows, bot_rows, decision_rows
    from ..tournaments.standings import FORMATS, render

    if table_format not in FORMATS:
        raise typer.BadParameter(f"one of {', '.join(FORMATS)}", param_hint="--format")
    if listing not in LISTS:
        raise typer.BadParameter(f"one of {', '.join(LISTS)}", param_hint="--list")
    try:
        files, notes = event_logs(paths)
        for note in notes:
            typer.echo(f"note: {note}", err=True)
        if not files:
            typer.echo("error: no log found in " + ", ".join(str(p) for p in paths), err=True)
            raise typer.Exit(2)
        read_logs = [read(f) for f in files]
        known = sorted({b for lg in read_logs for _rec, players in lg.deals for b in players})
    except AnalysisError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    if bot is not None and bot not in known:
        typer.echo(f"error: no bot {bot!r} in these logs; their bots: {', '.join(known) or 'none'}", err=True)
        raise typer.Exit(2)
    settings = Settings(worlds=worlds, seed=seed, blunder=blunder, bidding=bidding, only=bot)
    logs: dict[int, dict] = {}
    todo = list(range(len(files)))
    if cache:
        for i in list(todo):
            hit = cache_mod.load(files[i], settings)
            if hit is not None:
                logs[i] = hit
                todo.remove(i)
    progress = None if quiet else Eta("deals", 0)
    run: Run = analyze_read([read_logs[i] for i in todo], settings, jobs=jobs or os.cpu_count() or 1, progress=progress)
    if run.interrupted and progress:
        progress.end_line()
    for i, result in zip(todo, run.logs):
        logs[i] = result
        if cache and not run.interrupted:
            cache_mod.store(files[i], result, settings)
    ordered = [logs[i] for i in sorted(logs)]
    every = [d for lg in ordered for d in lg["deals"]]
    for lg in ordered:
        for p in lg.get("problems") or []:
            typer.echo(f"note: {p}", err=True)
        for d in lg["deals"]:
            for p in d["problems"]:
                typer.echo(f"note: {lg['log']}: partie {d['partie']} deal {d['deal']}: {p}", err=True)
    partial = run.interrupted
    if partial:
        typer.echo(f"PARTIAL (stopped): {run.deals_done} of {run.deals_total} deals analysed", err=True)
    if as_json:
        typer.echo(json.dumps({"settings": settings.to_dict(), "partial": partial, "logs": ordered,
                               "summary": bot_rows(every, bot)}, indent=1, ensure_ascii=False))
    else:
        tables = {}
        if listing != "none":
            rows = decision_rows(ordered, listing, bot)
            if rows:
                tables["decisions"] = rows
            rows = bidding_rows(ordered, listing, bot)
            if rows:
                tables["bidding"] = rows
        rows = bot_rows(every, bot)
        if not rows:
            typer.echo("no deal analysed", err=True)
        else:
            tables["analysis"] = rows
        footer = (f"{len(every)} deals of {len(ordered)} log(s); worlds {worlds} a decision (seed {seed}); "
                  f"blunder: a loss from the seat's view of at least {blunder:g} groše")
        if tables:
            typer.echo(render(tables, table_format, footer=footer, titles=TITLES))
    if partial:
        raise typer.Exit(130)
