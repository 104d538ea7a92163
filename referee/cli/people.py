"""``marias play``, ``serve`` and ``report``: a person at the table, in the terminal or the browser, and the
web pages of the folders marias writes."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..analysis.deals import WORLDS
from ..matches.bounds import MAX_SEED_CHARS
from .options import deck_file


# ------------------------------------------------------------------ play
def play(
    bot: List[str] = typer.Option(..., "--bot", "-b", help="Twice: the bots in the other seats, in seat order (random, robot, random:SEED or a command line)."),
    seat: int = typer.Option(0, "--seat", "-s", min=0, max=2, help="Your seat (0 is the forhont of deal 1)."),
    partie: int = typer.Option(1, "--partie", "-n", min=1, help="How many partie (12 deals each) to play."),
    seed: Optional[str] = typer.Option(None, help="Match seed: partie N shuffles with SEED:N (and draws its cuts from it); a seed you give deals the same cards every time (public). Default: a fresh secret seed, revealed in the log's footer and at the end."),
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
    from ..people.play import run_play

    if len(bot) != 2:
        raise typer.BadParameter(f"give exactly two bots (the other seats), got {len(bot)}", param_hint="--bot")
    decks = deck_file(deck, partie)
    from ..rules.partie import new_seed

    secret = seed is None
    if secret:
        seed = new_seed()  # fresh cards each game; told only at the end (it deals every hand)
    elif len(seed) > MAX_SEED_CHARS or not seed.strip():
        raise typer.BadParameter(f"a seed is 1 to {MAX_SEED_CHARS} characters", param_hint="--seed")
    try:
        outcome = run_play(list(bot), seat=seat, partie=partie, seed=seed, secret=secret, decks=decks, log_dir=log,
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
    if secret:
        typer.echo(f"the cards were dealt from the secret seed {seed} (--seed {seed} deals them again)")

# ------------------------------------------------------------------ web: serve, report
def serve(
    folders: List[Path] = typer.Argument(None, help="Folders of tournaments, duels, ladders and match logs (default: the current folder)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on; anything but loopback is reachable by others (a warning says so)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    play_dir: Optional[Path] = typer.Option(None, "--play-dir", file_okay=False, help="Where the play page writes its games' logs (default: FOLDER/plays of the first folder)."),
    bot: List[str] = typer.Option([], "--bot", "-b", help="NAME=COMMAND: a bot the play page may seat, besides the built-ins (repeatable)."),
    max_file_mb: float = typer.Option(64.0, "--max-file-mb", min=0.001, help="Larger files are not read for a page (413)."),
    table_idle_minutes: float = typer.Option(10.0, "--table-idle-minutes", min=0.01, help="A play table ends (its bots stopped, its log kept incomplete) when the person it waits for, to sit down or to answer, has had no page of the table open and given no answer for this long."),
    analysis_worlds: int = typer.Option(WORLDS, "--analysis-worlds", min=0, help="Worlds per card decision of the replayer's analysis from the seat's view (as marias analyze --worlds; its cache is shared); 0: double-dummy only, much faster."),
):
    """A local web application over the folders marias writes: tournaments and duels (live), ladders (the leaderboard live, each version's history and games; authors with a token upload bots and read their own stderr, protocol/LADDER.md), logs with a replayer of every deal and its analysis (marias analyze, computed in the background), and card tables where people play with bots and each other (invite links). Prints its URL; exits 2 when the port is taken."""
    from ..web.serve import serve as run_serve

    extra = {}
    for b in bot:
        name, sep, command = b.partition("=")
        if not sep or not name or not command:
            raise typer.BadParameter(f"{b!r}: give NAME=COMMAND", param_hint="--bot")
        extra[name] = command
    raise typer.Exit(run_serve(list(folders or [Path(".")]), host, port, play_dir=play_dir, extra_bots=extra, max_mb=max_file_mb,
                               table_idle_minutes=table_idle_minutes, analysis_worlds=analysis_worlds))


def report(
    folder: Path = typer.Argument(..., help="A tournament or duel folder."),
    out: Path = typer.Option(Path("report.html"), "--out", "-o", dir_okay=False, help="The HTML file to write."),
    max_logs: Optional[int] = typer.Option(None, "--max-logs", min=0, help="Put only the first N logs' replays in the file (default: every log; compressed, about 1.4 KB per deal); the others are listed as not in the report."),
):
    """The tournament page, every log and the replayer of every deal as one self-contained HTML file that opens offline."""
    from ..web.report import write

    if not folder.is_dir():
        typer.echo(f"error: {folder}: not a folder", err=True)
        raise typer.Exit(2)
    try:
        size = write(folder, out, max_logs=max_logs)
    except (OSError, ValueError) as e:
        typer.echo(f"error: {folder}: {e}", err=True)
        raise typer.Exit(2)
    typer.echo(f"{out}: {size / 1024:.0f} KB")
