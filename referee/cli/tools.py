"""``marias check``, ``strength`` and ``bot``: a bot author's tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from tabulate import tabulate

from bots import SEARCH_MS

from ..matches.bounds import (
    MAX_CONCURRENCY,
    MAX_MOVE_MS,
    MAX_PARTIE,
    MAX_SEED_CHARS,
    MAX_STARTUP_MS,
)
from .options import (
    BOT_CPU_S,
    BOT_CPUS,
    BOT_DISK_MB,
    BOT_FILE_MB,
    BOT_MEMORY_MB,
    BOT_PROCESSES,
    SANDBOX_HELP,
    Eta,
    bot_limits_of,
    check_entries,
    sandbox_mode,
    three,
)


# ------------------------------------------------------------------ check
def check(
    command: str = typer.Argument(..., help="The bot: a command line (quoted, e.g. \"python mybot.py\") or a built-in (random, robot)."),
    move_time: int = typer.Option(2000, "--move-time", min=1, help="Time limit per decision, in ms (as in match)."),
    startup_time: int = typer.Option(10000, "--startup-time", min=1, help="Time limit to start and answer hello, in ms (as in match)."),
    cwd: Optional[Path] = typer.Option(None, "--cwd", exists=True, file_okay=False, help="Run the bot in this folder."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON (for CI)."),
    sandbox: str = typer.Option("auto", "--sandbox", help=SANDBOX_HELP),
    bot_memory_mb: Optional[int] = BOT_MEMORY_MB,
    bot_processes: Optional[int] = BOT_PROCESSES,
    bot_cpu_s: Optional[int] = BOT_CPU_S,
    bot_file_mb: Optional[int] = BOT_FILE_MB,
    bot_disk_mb: Optional[int] = BOT_DISK_MB,
    bot_cpus: Optional[int] = BOT_CPUS,
):
    """Conformance check of a bot before any match: three partie (one per seat) against scripted opponents that steer towards every kind of decision, an unknown message type, a request with unknown fields, then bye and the end of input. Each check is reported PASS or FAIL with the fix; exit status 0 only when every check passes."""
    from ..tools.check import run_check

    try:
        report = run_check(command, move_ms=move_time, startup_ms=startup_time, cwd=str(cwd) if cwd else None,
                           sandbox=sandbox_mode(sandbox),
                           sandbox_limits=bot_limits_of(bot_memory_mb, bot_processes, bot_cpu_s, bot_file_mb, bot_disk_mb,
                                                      bot_cpus))
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="COMMAND")
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        typer.echo("\n".join(report.lines()))
    raise typer.Exit(0 if report.ok else 1)

def strength(
    bot: List[str] = typer.Option(..., "--bot", "-b", help="Three times: a built-in (random, robot, search: played in-process), a command line or NAME=COMMAND, e.g. --bot mine=\"python mybot.py\" --bot robot --bot robot. With any command every entry is played as a program through the referee."),
    partie: int = typer.Option(30, "--partie", "-n", min=1, max=MAX_PARTIE, help="Partie to play (rounded up to whole decks: every deck is played in every seating)."),
    move_time: int = typer.Option(2000, "--move-time", min=1, max=MAX_MOVE_MS, help="Time per decision in ms (programs only)."),
    startup_time: int = typer.Option(10000, "--startup-time", min=1, max=MAX_STARTUP_MS, help="Time to start and answer hello in ms (programs only)."),
    seed: Optional[str] = typer.Option(None, help="Seed of the decks (deck D shuffles with strength:SEED:D). Default 1: public, the same decks every run (the report is reproducible); give another to vary them."),
    permutations: bool = typer.Option(False, "--permutations", help="Play all 6 seat permutations per deck instead of the 3 rotations."),
    ms: float = typer.Option(SEARCH_MS, "--ms", min=1, help="search: the most CPU time any one decision may take, in ms (card plays take a share of it, bidding up to all; a wall-clock stop at 1.5 times it)."),
    nodes: Optional[int] = typer.Option(None, "--nodes", min=1, help="search: budget per decision in solver nodes instead of time (the report reproduces exactly)."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=0, max=MAX_CONCURRENCY, help="Processes playing partie at once (0: one per CPU); the report is the same as with -j 1 (times per decision aside)."),
    by_contract: bool = typer.Option(False, "--by-contract", help="Also print, per bot and game (hra, sedma, sto, sto-sedma, betl, durch), how often it declared it, how often it won and the mean groše per declaration (always in --json)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Relative strength of three bots: the same decks with the seats rotated, groše per partie with a 95% confidence interval (per-deck means as samples), places and speed (and faults, for programs).

    Progress and an ETA go to stderr (-q: none). Ctrl-C stops and prints the report of the whole decks played so far, marked partial."""
    import os

    from ..tools import strength as strength_mod

    names = three(bot)
    check_entries(names)
    default_seed = seed is None
    seed = "1" if default_seed else seed
    if len(seed) > MAX_SEED_CHARS:
        raise typer.BadParameter(f"a seed is at most {MAX_SEED_CHARS} characters, got {len(seed)}", param_hint="--seed")
    if jobs == 0:
        jobs = os.cpu_count() or 1
    if default_seed and not (quiet or as_json):
        typer.echo("note: the default seed 1 is public: the same decks every run (--seed to vary them)", err=True)
    k = 6 if permutations else 3
    progress = None if quiet or as_json else Eta("partie", -(-partie // k) * k)
    try:
        report = strength_mod.run(names, partie=partie, seed=seed, permutations=permutations,
                                  move_ms=move_time, startup_ms=startup_time, jobs=jobs, ms=ms, nodes=nodes,
                                  progress=progress)
    except KeyError as e:
        raise typer.BadParameter(str(e.args[0]), param_hint="--bot")
    except KeyboardInterrupt:
        if progress:
            progress.end_line()
        typer.echo("\nstopped before a whole deck was played: nothing to report", err=True)
        raise typer.Exit(130)
    partial = report.get("partial", False)
    if partial and progress:
        progress.end_line()
    if as_json:
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        if partial:
            typer.echo(f"PARTIAL (stopped): {report['partie']} of {report['partie_planned']} partie planned, "
                       f"the whole decks played; {report['partie_played']} partie were played in all")
        typer.echo(f"{report['partie']} partie: {report['decks']} decks x {report['seatings']}, seed {report['seed']}"
                   + (" (public default)" if default_seed else ""))
        typer.echo(tabulate(strength_mod.table_rows(report), headers="keys", tablefmt="simple"))
        if by_contract:
            typer.echo("\ndeclarations (won: the declarer's net payment is positive; groše to the declarer)")
            typer.echo(tabulate(strength_mod.contract_table_rows(report), headers="keys", tablefmt="simple"))
    if partial:
        raise typer.Exit(130)

# ------------------------------------------------------------------ bot
def bot_cmd(
    name: str = typer.Argument(..., help="Built-in bot: random, robot or search."),
    seed: str = typer.Option("0", help="Seed of the bot's own random choices (random, search)."),
    ms: float = typer.Option(SEARCH_MS, "--ms", min=1, help="search: the most CPU time any one decision may take, in ms (card plays take a share of it, bidding up to all; a wall-clock stop at 1.5 times it)."),
    nodes: Optional[int] = typer.Option(None, "--nodes", min=1, help="search: budget per decision in solver nodes instead of time (decisions reproduce exactly)."),
):
    """Run a built-in bot as a protocol process on stdin/stdout (see protocol/PROTOCOL.md)."""
    import bots as builtin
    from protocol.sdk import run

    try:
        b = builtin.make(name, seed=seed, ms=ms, nodes=nodes)
    except KeyError as e:
        typer.echo(f"error: {e.args[0]}", err=True)
        raise typer.Exit(2)
    raise typer.Exit(run(b))
