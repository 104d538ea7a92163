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
    bot: List[str] = typer.Option(None, "--bot", "-b", help="Built-in bot per seat (three times; default random, random, random until the robot lands)."),
    seed: int = typer.Option(1, help="Seed of the shuffle before deal 1 (and of the cuts)."),
    log: Optional[Path] = typer.Option(None, "--log", file_okay=False, help="Also write the game log (JSON Lines, protocol/LOGS.md) into this folder as selfplay-sSEED.jsonl."),
):
    """Play one partie (12 deals) of built-in bots in-process and print it deal by deal."""
    import bots as builtin
    from .selfplay import play_partie
    from .tables import deal_rows, partie_summary

    names = _three(bot or ["random", "random", "random"])
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


# ------------------------------------------------------------------ strength
@app.command()
def strength(
    bot: List[str] = typer.Option(..., "--bot", "-b", help="Three times: built-in bots (random, robot), e.g. --bot robot --bot robot --bot random."),
    partie: int = typer.Option(30, "--partie", "-n", min=1, help="Partie to play (rounded up to whole decks: every deck is played in every seating)."),
    seed: str = typer.Option("1", help="Seed of the decks (deck D shuffles with strength:SEED:D)."),
    permutations: bool = typer.Option(False, "--permutations", help="Play all 6 seat permutations per deck instead of the 3 rotations."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Relative strength of built-in bots: the same decks with the seats rotated, groše per
    partie with a 95% confidence interval (per-deck means as samples), places and speed."""
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
):
    """Replay every deal of the logs with the rules engine and check every recorded fact.

    Prints each problem as FILE:LINE: RULE: message. Exit status 0 when every log holds, 1 otherwise."""
    from .validate import log_files, validate_file

    files = log_files(paths)
    if not files:
        typer.echo("error: no .jsonl log found in " + ", ".join(str(p) for p in paths), err=True)
        raise typer.Exit(1)
    reports = [validate_file(f, transcripts=transcript if transcript is not None else None) for f in files]
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
    """Print deal sheets: hands, trump choice, talon, bidding in the game's words, tricks
    with hlášky and points, laid cards, settlement per component and per seat."""
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
    """Deals per second with three external random bots, and the cost per decision as a
    ratio to a raw round trip through a trivial echo process, measured in the same run."""
    from . import bench

    _print_bench(bench.referee(partie=partie), as_json)


@bench_app.command("validate")
def bench_validate(
    deals: int = typer.Option(3000, help="Deals in the generated log (random legal play)."),
    log: Optional[Path] = typer.Option(None, "--log", dir_okay=False, exists=True, help="Validate this log instead of a generated one."),
    repeats: int = typer.Option(3, help="Repeats; the median is reported."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Validated deals per second on one large log, and the engine's self-play speed
    (bench engine) measured in the same run."""
    from . import bench

    _print_bench(bench.validate(deals=deals, log=log, repeats=repeats), as_json)


def _print_bench(result: dict, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        typer.echo(tabulate([(k, v) for k, v in result.items()], tablefmt="plain"))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
