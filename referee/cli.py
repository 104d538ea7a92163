"""The ``marias`` command: a thin shell over the library."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from tabulate import tabulate

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="marias: a match referee for volený mariáš (three-player Czech card game) between bot programs.",
)
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: speed measured in one run, printed as figures.")
app.add_typer(bench_app, name="bench")


# ------------------------------------------------------------------ selfplay
@app.command()
def selfplay(
    bot: List[str] = typer.Option(None, "--bot", "-b", help="Built-in bot per seat (three times; default robot, robot, random)."),
    seed: int = typer.Option(1, help="Seed of the shuffle before deal 1 (and of the cuts)."),
    log: Optional[Path] = typer.Option(None, "--log", file_okay=False, help="Also write the game log (JSON Lines, protocol/LOGS.md) into this folder as selfplay-sSEED.jsonl."),
):
    """Play one partie (12 deals) of built-in bots in-process and print it deal by deal."""
    import bots as builtin
    from .selfplay import play_partie
    from .tables import deal_rows, partie_summary

    names = _three(bot or ["robot", "robot", "random"])
    players = [builtin.make(n, seed=f"{seed}:{i}") for i, n in enumerate(names)]
    log_path = None
    if log is None:
        partie = play_partie(players, seed=seed)
    else:
        from .log import selfplay_log
        log_path = log / f"selfplay-s{seed}.jsonl"
        partie = selfplay_log(log_path, players, seed=seed, commands=[f"builtin:{n}" for n in names])
    typer.echo(tabulate(deal_rows(partie), headers="keys", tablefmt="simple"))
    typer.echo("")
    typer.echo(tabulate(partie_summary(partie, names), headers="keys", tablefmt="simple"))
    if log_path is not None:
        typer.echo(f"\nlog: {log_path}")


def _three(items: List[str]) -> List[str]:
    if len(items) != 3:
        raise typer.BadParameter(f"give exactly three bots (one per seat), got {len(items)}", param_hint="--bot")
    return list(items)


# ------------------------------------------------------------------ match
@app.command()
def match(
    bot: List[str] = typer.Option(..., "--bot", "-b", help="Three times, seats 0, 1, 2: a built-in bot (random, robot, random:SEED) or a command line, e.g. \"node examples/js/bot.js\"."),
    partie: int = typer.Option(1, "--partie", "-n", min=1, help="How many partie (12 deals each) to play."),
    seed: str = typer.Option("1", help="Match seed: partie N shuffles with SEED:N (and draws its cuts from it)."),
    deck: Optional[Path] = typer.Option(None, exists=True, dir_okay=False, help="File of starting decks, one per line (32 card codes); partie N uses line N."),
    move_time: int = typer.Option(2000, "--move-time", min=1, help="Time limit per decision, in ms."),
    startup_time: int = typer.Option(10000, "--startup-time", min=1, help="Time limit for a bot to start and answer hello, in ms."),
    bank: Optional[int] = typer.Option(None, "--bank", min=1, help="Optional per-partie time bank in ms (a decision may use at most min(move time, bank))."),
    increment: int = typer.Option(0, "--increment", min=0, help="Added to the bank at each decision, in ms."),
    max_faults: int = typer.Option(3, "--max-faults", min=1, help="Faults in a partie before a bot is replaced by the built-in robot (R12.3)."),
    log: Optional[Path] = typer.Option(None, "--log", file_okay=False, help="Folder for the match log (JSON Lines), bots' stderr and transcripts."),
    transcript: bool = typer.Option(False, "--transcript", help="Keep every line sent to and received from each seat (next to the log)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr."),
):
    """Play a match between three bots and print groše per seat per partie and in total."""
    from datetime import datetime, timezone

    from .match import BotSpec, FaultPolicy, Limits, MatchConfig, load_decks, run_match

    specs = []
    for i, b in enumerate(_three(bot)):
        try:
            specs.append(BotSpec.parse(b, seed=f"{seed}:{i}"))
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--bot")
    decks = None
    if deck is not None:
        try:
            decks = load_decks(deck)
        except (OSError, ValueError) as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2)
        if len(decks) < partie:
            typer.echo(f"error: {deck} holds {len(decks)} deck(s) but --partie is {partie}", err=True)
            raise typer.Exit(2)
    log_path = None
    if log is not None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        log_path = log / f"match-{stamp}-s{seed}.jsonl"
    config = MatchConfig(
        bots=specs, partie=partie, seed=seed, decks=decks,
        limits=Limits(startup_ms=startup_time, move_ms=move_time, bank_ms=bank, increment_ms=increment),
        policy=FaultPolicy(max_faults=max_faults), log_path=log_path, transcript=transcript,
    )
    progress = None if quiet or as_json else (lambda line: typer.echo(line, err=True))
    result = run_match(config, progress)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return
    from .tables import match_rows, seat_rows

    typer.echo(tabulate(match_rows(result), headers="keys", tablefmt="simple"))
    typer.echo("")
    typer.echo(tabulate(seat_rows(result), headers="keys", tablefmt="simple"))
    if log_path is not None:
        typer.echo(f"\nlog: {log_path}")


# ------------------------------------------------------------------ play
@app.command()
def play(
    bot: List[str] = typer.Option(..., "--bot", "-b", help="Twice: the bots in the other seats, in seat order (random, robot, random:SEED or a command line)."),
    seat: int = typer.Option(0, "--seat", "-s", min=0, max=2, help="Your seat (0 is the forhont of deal 1)."),
    partie: int = typer.Option(1, "--partie", "-n", min=1, help="How many partie (12 deals each) to play."),
    seed: str = typer.Option("1", help="Match seed: partie N shuffles with SEED:N (and draws its cuts from it)."),
    deck: Optional[Path] = typer.Option(None, exists=True, dir_okay=False, help="File of starting decks, one per line (32 card codes); partie N uses line N."),
    log: Optional[Path] = typer.Option(None, "--log", file_okay=False, help="Folder for the game log (JSON Lines) and the bots' stderr; review it with marias show LOG --seat S."),
    move_time: Optional[int] = typer.Option(None, "--move-time", min=1, help="Your time per decision in ms (default: no limit)."),
    bot_time: int = typer.Option(2000, "--bot-time", min=1, help="The bots' time per decision in ms."),
    plain: bool = typer.Option(False, "--plain", help="No colours (the default when the output is not a terminal)."),
):
    """Play a seat yourself, in the terminal, against two bots: the same referee, rules, log and validation as marias match.

    Choose by number, or type a card (Kh), a word (dobra, spatna, flek, betl 7h 8h) or the
    protocol's action text; ? shows the position again; quit or Ctrl-C stops (the log is then
    incomplete, never a result)."""
    from .match import load_decks
    from .play import run_play

    if len(bot) != 2:
        raise typer.BadParameter(f"give exactly two bots (the other seats), got {len(bot)}", param_hint="--bot")
    decks = None
    if deck is not None:
        try:
            decks = load_decks(deck)
        except (OSError, ValueError) as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2)
        if len(decks) < partie:
            typer.echo(f"error: {deck} holds {len(decks)} deck(s) but --partie is {partie}", err=True)
            raise typer.Exit(2)
    try:
        outcome = run_play(list(bot), seat=seat, partie=partie, seed=seed, decks=decks, log_dir=log,
                           move_ms=move_time, bot_move_ms=bot_time, plain=plain)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--bot")
    path = outcome.log_path
    if outcome.interrupted:
        if path is not None and path.exists():
            note = f"; the log {path} is incomplete (marias validate says so; marias show {path} --seat {seat} shows the finished deals)"
        else:
            note = "; no log was written (stopped before the game began)" if path is not None else ""
        typer.echo(f"\nstopped before the end: no result{note}", err=True)
        raise typer.Exit(130)
    where = f"; log: {path} (review: marias show {path} --seat {seat})" if path else ""
    totals = outcome.result.totals
    typer.echo(f"\nyou (seat {seat}) {totals[seat]:+d} groše in {partie} partie{where}")


# ------------------------------------------------------------------ strength
@app.command()
def strength(
    bot: List[str] = typer.Option(..., "--bot", "-b", help="Three times: built-in bots (random, robot), e.g. --bot robot --bot robot --bot random."),
    partie: int = typer.Option(30, "--partie", "-n", min=1, help="Partie to play (rounded up to whole decks: every deck is played in every seating)."),
    seed: str = typer.Option("1", help="Seed of the decks (deck D shuffles with strength:SEED:D)."),
    permutations: bool = typer.Option(False, "--permutations", help="Play all 6 seat permutations per deck instead of the 3 rotations."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Relative strength of built-in bots: the same decks with the seats rotated, groše per partie with a 95% confidence interval (per-deck means as samples), places and speed."""
    from . import strength as strength_mod

    names = _three(bot)
    try:
        report = strength_mod.run(names, partie=partie, seed=seed, permutations=permutations)
    except KeyError as e:
        raise typer.BadParameter(str(e.args[0]), param_hint="--bot")
    if as_json:
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    typer.echo(f"{report['partie']} partie: {report['decks']} decks x {report['seatings']}, seed {report['seed']}")
    typer.echo(tabulate(strength_mod.table_rows(report), headers="keys", tablefmt="simple"))


# ------------------------------------------------------------------ bot
@app.command("bot")
def bot_cmd(
    name: str = typer.Argument(..., help="Built-in bot: random or robot."),
    seed: str = typer.Option("0", help="Seed of the bot's own random choices (random only)."),
):
    """Run a built-in bot as a protocol process on stdin/stdout (see protocol/PROTOCOL.md)."""
    import bots as builtin
    from protocol.sdk import run

    try:
        b = builtin.make(name, seed=seed)
    except KeyError as e:
        typer.echo(f"error: {e.args[0]}", err=True)
        raise typer.Exit(2)
    raise typer.Exit(run(b))


# ------------------------------------------------------------------ validate, show
@app.command()
def validate(
    paths: List[Path] = typer.Argument(..., help="Log files (.jsonl) or folders searched for them."),
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable report."),
    transcript: Optional[Path] = typer.Option(None, "--transcript", file_okay=False, help="Folder of the seats' transcripts (<logstem>.seatN.transcript.jsonl): check that no message showed a seat a card it could not know."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=0, help="Processes: several files at once, or the partie of one large log split between them (0: one per CPU)."),
):
    """Replay every deal of the logs with the rules engine and check every recorded fact.

    Prints each problem as FILE:LINE: RULE: message. Exit status 0 when every log holds, 1 otherwise."""
    import os

    from .validate import log_files, validate_files

    files = log_files(paths)
    if not files:
        typer.echo("error: no .jsonl log found in " + ", ".join(str(p) for p in paths), err=True)
        raise typer.Exit(1)
    reports = validate_files(files, transcripts=transcript, jobs=jobs or os.cpu_count() or 1)
    ok = all(r.ok for r in reports)
    if as_json:
        typer.echo(json.dumps({"ok": ok, "files": [r.to_dict() for r in reports]}, indent=2, ensure_ascii=False))
    else:
        for r in reports:
            for line in r.lines():
                typer.echo(line)
            typer.echo(r.summary())
    raise typer.Exit(0 if ok else 1)


@app.command()
def show(
    log: Path = typer.Argument(..., help="A log file (.jsonl)."),
    deal: Optional[int] = typer.Option(None, "--deal", "-d", min=1, help="Only this deal (of each partie, or of --partie)."),
    partie: Optional[int] = typer.Option(None, "--partie", "-p", min=1, help="Only this partie."),
    seat: Optional[int] = typer.Option(None, "--seat", "-s", min=0, max=2, help="Show only what this seat saw."),
):
    """Print deal sheets: hands, trump choice, talon, bidding in the game's words, tricks with hlášky and points, laid cards, settlement per component and per seat."""
    from .show import ShowError, show as show_log

    try:
        text = show_log(log, partie=partie, deal=deal, seat=seat, color=sys.stdout.isatty())
    except ShowError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1)
    typer.echo(text)


# ------------------------------------------------------------------ bench
@bench_app.command("engine")
def bench_engine(
    deals: int = typer.Option(3000, help="Deals per repeat."),
    repeats: int = typer.Option(5, help="Repeats; the median is reported."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Random legal self-play in-process: deals per second, microseconds per decision."""
    from . import bench

    r = bench.engine(deals=deals, repeats=repeats)
    _print_bench(r, as_json)


@bench_app.command("referee")
def bench_referee(
    partie: int = typer.Option(10, help="Partie to play with three external random bots."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Deals per second with three external random bots, and the cost per decision as a ratio to a raw round trip through a trivial echo process, measured in the same run."""
    from . import bench

    _print_bench(bench.referee(partie=partie), as_json)


@bench_app.command("validate")
def bench_validate(
    deals: int = typer.Option(3000, help="Deals in the generated log (random legal play)."),
    log: Optional[Path] = typer.Option(None, "--log", dir_okay=False, exists=True, help="Validate this log instead of a generated one."),
    repeats: int = typer.Option(5, help="Repeats; the median is reported."),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0, help="Processes for the parallel figure (0: one per CPU)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Validated deals per second on one large log (one process and --jobs processes), and the engine's self-play speed (bench engine) measured in the same run."""
    from . import bench

    _print_bench(bench.validate(deals=deals, log=log, repeats=repeats, jobs=jobs), as_json)


def _print_bench(result: dict, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        typer.echo(tabulate([(k, v) for k, v in result.items()], tablefmt="plain"))


# ------------------------------------------------------------------ tournament, table
_TABLE_FORMAT_HELP = "Output of the tables: text, md (Markdown), csv or json."


@app.command()
def tournament(
    config: Optional[Path] = typer.Argument(None, exists=True, dir_okay=False, help="Tournament YAML file (protocol/TOURNAMENT.md). Or define it with --bot and the flags below."),
    bot: List[str] = typer.Option(None, "--bot", "-b", help="NAME=COMMAND (a built-in random, random:SEED, robot, or a command line); at least three. Only without CONFIG."),
    format_: Optional[str] = typer.Option(None, "--format", help="round-robin (every group of three) or gauntlet (--gauntlet NAME against every pair)."),
    gauntlet: Optional[str] = typer.Option(None, "--gauntlet", help="The bot that meets every pair of the others (format gauntlet)."),
    partie: Optional[int] = typer.Option(None, "--partie", "-n", help="Partie per table and seat arrangement (default 1)."),
    arrangements: Optional[str] = typer.Option(None, "--arrangements", help="all (6, default), rotations (3) or fixed (1)."),
    seed: Optional[str] = typer.Option(None, help="Tournament seed (default 1)."),
    deal_book: Optional[Path] = typer.Option(None, "--deal-book", help="File of starting decks, one per line of 32 card codes."),
    deck_scope: Optional[str] = typer.Option(None, "--deck-scope", help="table (default: each table its own decks) or tournament (every table the same decks)."),
    move_time: Optional[int] = typer.Option(None, "--move-time", help="Time per decision in ms (default 2000)."),
    startup_time: Optional[int] = typer.Option(None, "--startup-time", help="Time to start and answer hello in ms (default 10000)."),
    bank: Optional[int] = typer.Option(None, "--bank", help="Per-partie time bank in ms."),
    increment: Optional[int] = typer.Option(None, "--increment", help="Added to the bank at each decision, in ms."),
    max_faults: Optional[int] = typer.Option(None, "--max-faults", help="Faults in a partie before a bot is replaced by the robot (default 3)."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-j", min=1, help="Partie played at once (default: the configuration's, else the number of CPUs)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", file_okay=False, help="Output folder (overrides the configuration's output)."),
    resume: bool = typer.Option(False, "--resume", help="Finish a stopped tournament (running the same command again does the same, but --resume insists that it exists)."),
    table_format: str = typer.Option("text", "--table-format", "-t", help=_TABLE_FORMAT_HELP),
    series: Optional[int] = typer.Option(None, "--series", min=1, help="Add the series table (R10): each bot's N best partie."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
):
    """Run a tournament (round robin or gauntlet, duplicate seat arrangements) in parallel; resumable; prints the tables."""
    from . import standings
    from .tournament import ConfigError, TournamentError, config_from_options, load_config, run_tournament

    if table_format not in standings.FORMATS:
        raise typer.BadParameter(f"one of {', '.join(standings.FORMATS)}", param_hint="--table-format")
    flags = {"format": format_, "gauntlet": gauntlet, "partie": partie, "arrangements": arrangements, "seed": seed,
             "deal_book": deal_book, "deck_scope": deck_scope, "move_ms": move_time, "startup_ms": startup_time,
             "bank_ms": bank, "increment_ms": increment, "max_faults": max_faults}
    try:
        if config is not None:
            given = sorted(k for k, v in flags.items() if v is not None) + (["bot"] if bot else [])
            if given:
                typer.echo(f"error: with a configuration file, change {', '.join(given)} in the file "
                           f"(only --concurrency and --out may be given with it)", err=True)
                raise typer.Exit(2)
            cfg = load_config(config)
        else:
            if not bot:
                typer.echo("error: give a configuration file or at least three --bot NAME=COMMAND", err=True)
                raise typer.Exit(2)
            cfg = config_from_options(bot, **flags)
    except ConfigError as e:
        typer.echo("\n".join(f"error: {p}" for p in e.problems), err=True)
        raise typer.Exit(2)
    if concurrency is not None:
        cfg.concurrency = concurrency
    if out is not None:
        cfg.output = out
    try:
        run = run_tournament(cfg, resume=resume, stream=None if quiet else sys.stderr)
    except ConfigError as e:
        typer.echo("\n".join(f"error: {p}" for p in e.problems), err=True)
        raise typer.Exit(2)
    except TournamentError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    if run.interrupted:
        typer.echo(f"stopped: {run.done} of {run.units} partie played; run the same command (or add --resume) to finish.", err=True)
        raise typer.Exit(130)
    text, skipped, _ = standings.report([run.logs], fmt=table_format, series=series)
    typer.echo(text)
    for note in skipped:
        typer.echo(f"note: {note}", err=True)
    if run.failed:
        for uid, why in run.failed:
            typer.echo(f"failed: {uid}: {why}", err=True)
        typer.echo(f"{len(run.failed)} partie failed and are not counted; run the same command again to retry them.", err=True)
        raise typer.Exit(1)
    if not quiet:
        typer.echo(f"{run.units} partie ({run.played} played now) in {cfg.output}; logs in {run.logs}", err=True)


@app.command("table")
def table_cmd(
    paths: List[Path] = typer.Argument(..., exists=True, help="Log files or folders (searched for *.jsonl)."),
    table_format: str = typer.Option("text", "--format", "-f", help=_TABLE_FORMAT_HELP),
    series: Optional[int] = typer.Option(None, "--series", min=1, help="Add the series table (R10): each bot's N best partie."),
    only: List[str] = typer.Option(None, "--table", help="Only these tables: standings, play, cross, series, rating (repeatable)."),
):
    """Rebuild every table (standings, play, cross, series, rating) from complete, valid logs alone."""
    from . import standings

    if table_format not in standings.FORMATS:
        raise typer.BadParameter(f"one of {', '.join(standings.FORMATS)}", param_hint="--format")
    for name in only or []:
        if name not in standings.TABLE_NAMES:
            raise typer.BadParameter(f"{name!r} is not one of {', '.join(standings.TABLE_NAMES)}", param_hint="--table")
    if only and "series" in only and not series:
        raise typer.BadParameter("the series table needs --series N", param_hint="--table")
    text, skipped, t = standings.report(paths, fmt=table_format, series=series, which=only or None)
    for note in skipped:
        typer.echo(f"note: {note}", err=True)
    if not t.parties:
        typer.echo("error: no complete, valid log found", err=True)
        raise typer.Exit(1)
    typer.echo(text)


@bench_app.command("tournament")
def bench_tournament(
    bots: int = typer.Option(4, min=3, help="Bots in the round robin (4: 4 tables x 6 arrangements)."),
    bot: str = typer.Option("random", "--bot", help="The built-in bot that fills the field: random or robot."),
    partie: int = typer.Option(1, min=1, help="Partie per table and arrangement."),
    concurrency: List[int] = typer.Option([1, 2], "--concurrency", "-j", help="Concurrencies to compare (the last against the first)."),
    repeats: int = typer.Option(2, min=1, help="Runs per concurrency, alternated 1,2,2,1,...; the median is reported."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """The same small tournament at concurrency 1 and 2: deals per second and the speed-up (goal 1.7x)."""
    from .tournament import bench

    if bot not in ("random", "robot"):
        raise typer.BadParameter("random or robot", param_hint="--bot")
    _print_bench(bench(bots=bots, partie=partie, concurrency=tuple(concurrency), repeats=repeats, builtin=bot), as_json)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
