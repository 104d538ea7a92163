"""The ``marias`` command: a thin shell over the library."""

from __future__ import annotations

import json
import sys
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
):
    """Play one partie (12 deals) of built-in bots in-process and print it deal by deal."""
    import bots as builtin
    from .selfplay import play_partie
    from .tables import deal_rows, partie_summary

    names = _three(bot or ["random", "random", "random"])
    players = [builtin.make(n, seed=f"{seed}:{i}") for i, n in enumerate(names)]
    partie = play_partie(players, seed=seed)
    typer.echo(tabulate(deal_rows(partie), headers="keys", tablefmt="simple"))
    typer.echo("")
    typer.echo(tabulate(partie_summary(partie, names), headers="keys", tablefmt="simple"))


def _three(items: List[str]) -> List[str]:
    if len(items) != 3:
        raise typer.BadParameter(f"give exactly three bots (one per seat), got {len(items)}", param_hint="--bot")
    return list(items)


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


def _print_bench(result: dict, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        typer.echo(tabulate([(k, v) for k, v in result.items()], tablefmt="plain"))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
