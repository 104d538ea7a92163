"""The ``marias`` command: a thin shell over the library, one module per group of commands.

This file only assembles the typer app; the commands live by what they are about:

=====================  ==========================================================
:mod:`.matches`        ``selfplay``, ``match``: one game of three bots
:mod:`.logs`           ``keygen``, ``validate``, ``show``, ``replay``: logs as evidence
:mod:`.tools`          ``check``, ``strength``, ``bot``: a bot author's tools
:mod:`.people`         ``play``, ``serve``, ``report``: people and the web pages
:mod:`.events`         ``tournament``, ``duel``, ``table``: events and their tables
:mod:`.analysis`       ``analyze``: every decision of a log valued
:mod:`.ladder`         ``ladder …``: a season that runs itself
:mod:`.bench`          ``bench …``: benchmarks
:mod:`.options`        what several commands share (sandbox and limit options, checks of input, progress)
=====================  ==========================================================

The order of registration is the order ``marias --help`` lists the commands in.
"""

from __future__ import annotations

import typer

from . import analysis, events, logs, matches, people, tools
from .bench import bench_app
from .ladder import ladder_app

app = typer.Typer(
    add_completion=True,  # marias --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    no_args_is_help=True,
    help="marias: a match referee for volený mariáš (three-player Czech card game) between bot programs.",
)


def _version(value: bool) -> None:
    if value:
        from protocol.messages import PROTOCOL_VERSION

        from .. import __version__
        from ..seats.sandbox import find_bwrap

        typer.echo(f"marias {__version__} (protocol {PROTOCOL_VERSION})")
        search = find_bwrap()
        typer.echo(f"bwrap: {search.found.describe()}" if search.found else f"bwrap: none works here: {search.why}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version of marias and of its protocol, the bwrap the bots' sandbox uses, and exit.")):
    """marias: a match referee for volený mariáš (three-player Czech card game) between bot programs."""


app.command()(matches.selfplay)
app.command()(matches.match)
app.command()(logs.keygen)
app.command()(tools.check)
app.command()(logs.replay)
app.command()(people.play)
app.command()(tools.strength)
app.command("bot")(tools.bot_cmd)
app.command()(logs.validate)
app.command()(logs.show)
app.command()(people.serve)
app.command()(people.report)
app.command()(events.tournament)
app.command()(events.duel)
app.command("table")(events.table_cmd)
app.command()(analysis.analyze)
app.add_typer(ladder_app, name="ladder")
app.add_typer(bench_app, name="bench")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
