"""``marias ladder …``: a season that runs itself (protocol/TOURNAMENT.md, "Ladder"); a thin shell over
:mod:`referee.ladder`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from ..matches.bounds import MAX_CONCURRENCY
from .options import sandbox_mode, signing_key

ladder_app = typer.Typer(no_args_is_help=True, help="A ladder: bot versions entered at any time, duplicate groups played continuously, each version rated with its uncertainty (protocol/TOURNAMENT.md, 'Ladder').")

FOLDER_HELP = "The ladder's folder (made by marias ladder init)."


def _fail(e: Exception, code: int = 2):
    typer.echo(f"error: {e}", err=True)
    raise typer.Exit(code)


@ladder_app.command("init")
def init(
    folder: Path = typer.Argument(..., file_okay=False, help="A new or empty folder for the ladder."),
    seed_file: Optional[Path] = typer.Option(None, "--seed-file", dir_okay=False, exists=True, help="Take the secret seed from this file (kept where it is, hidden from every bot). Default: a fresh 128-bit seed in FOLDER/seed.secret (mode 600)."),
    move_time: int = typer.Option(2000, "--move-time", min=1, help="Time per decision in ms."),
    startup_time: int = typer.Option(10_000, "--startup-time", min=1, help="Time to start and answer hello in ms."),
    max_faults: int = typer.Option(3, "--max-faults", min=1, help="Faults in a partie after which a bot forfeits the rest of it (R12.3)."),
    groups_per_table: int = typer.Option(4, "--groups-per-table", min=1, max=50, help="Duplicate groups (decks) a table of three versions plays before the next is drawn; each bot process plays that many partie warm."),
    sandbox: str = typer.Option("auto", "--sandbox", help="The bots' sandbox: auto, bwrap, required or none (referee/seats/sandbox.py)."),
    fault_rate: float = typer.Option(1.0, "--suspend-fault-rate", min=0.0, help="A version with more faults per partie than this over its last 24 partie (12 at least) is suspended, its stderr kept."),
    compress_after_hours: float = typer.Option(24.0, "--compress-after-hours", min=0.0, help="A group's logs and stderr are gzipped once it has been rated this long."),
):
    """Make a ladder: its configuration (ladder.json, editable), its database and its secret seed."""
    from ..ladder.folder import LadderError, LadderFolder

    try:
        lad = LadderFolder.init(folder, seed_file=seed_file, time={"move_ms": move_time, "startup_ms": startup_time},
                                max_faults=max_faults, groups_per_table=groups_per_table,
                                sandbox=sandbox_mode(sandbox), suspend={"fault_rate": fault_rate},
                                compress_after_hours=compress_after_hours)
    except (LadderError, OSError) as e:
        _fail(e)
    typer.echo(f"ladder made in {lad.path}; add bots with `marias ladder add {lad.path} NAME COMMAND`, "
               f"then `marias ladder run {lad.path}`")


@ladder_app.command("add")
def add(
    folder: Path = typer.Argument(..., file_okay=False, help=FOLDER_HELP),
    name: str = typer.Argument(..., help="The bot's name; a name already there gets its next version (name@2, ...), rated on its own."),
    command: str = typer.Argument(..., help="How to start it: a built-in (random, robot) or a command line."),
    cwd: Optional[Path] = typer.Option(None, "--cwd", file_okay=False, exists=True, help="The folder it starts in (its files are fingerprinted from there)."),
    author: Optional[str] = typer.Option(None, "--author", help="Who sent it (shown on the leaderboard; an author sees their own bots' stderr)."),
):
    """Enter a bot version: marias check runs first (a bot that fails it is refused, with the report), then its files are fingerprinted and it plays from the next table on, even while marias ladder run is running."""
    from ..ladder.folder import LadderError, LadderFolder, Refused

    try:
        vid = LadderFolder.open(folder).add(name, command, cwd=cwd, author=author)
    except Refused as e:
        typer.echo(e.report, err=True)
        _fail(e, 1)
    except LadderError as e:
        _fail(e)
    typer.echo(vid)


@ladder_app.command("retire")
def retire(
    folder: Path = typer.Argument(..., file_okay=False, help=FOLDER_HELP),
    version: str = typer.Argument(..., help="The version to retire, e.g. name@1."),
):
    """Take a version out of play (a running ladder stops seating it at its next table; its rating and games stay)."""
    from ..ladder.folder import LadderError, LadderFolder

    try:
        LadderFolder.open(folder).retire(version)
    except LadderError as e:
        _fail(e)
    typer.echo(f"{version}: retired")


@ladder_app.command("run")
def run(
    folder: Path = typer.Argument(..., file_okay=False, help=FOLDER_HELP),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-j", min=1, max=MAX_CONCURRENCY, help="Partie played at once (default: the number of CPUs)."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="Play on a Dask cluster: its scheduler's address (tcp://HOST:8786). Bots must exist at the same path on every worker; the cluster must be private (TOURNAMENT.md)."),
    until: Optional[str] = typer.Option(None, "--until", help="Stop planning new tables after a duration (90s, 30m, 12h, 7d) or at a time (2026-12-24T18:00, UTC); the groups in play are finished."),
    groups: Optional[int] = typer.Option(None, "--groups", min=0, help="Stop after planning and playing this many more groups (0: only finish the groups a stopped run left in play)."),
    warm: bool = typer.Option(True, "--warm/--cold", help="--warm (default): a worker keeps its bots running over a table's decks, never two seatings of one deck in one process. --cold: fresh bots every partie."),
    sign: Optional[Path] = typer.Option(None, "--sign", dir_okay=False, help="Sign every log with this Ed25519 private key (from marias keygen), hidden from the bots; keep it outside the ladder's folder."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
):
    """Play the ladder until stopped (Ctrl-C, SIGTERM), --until or --groups: tables drawn where the ratings are least certain, each a few duplicate groups; restartable at any moment (kill -9 loses no finished partie and counts none twice)."""
    from ..ladder.folder import LadderError
    from ..ladder.run import parse_until, run_ladder
    from ..tournaments.cluster import ClusterError
    from ..tournaments.tournament_config import CLUSTER_RE

    if concurrency is not None and cluster:
        raise typer.BadParameter("either --concurrency (local) or --cluster", param_hint="--cluster")
    if cluster and not CLUSTER_RE.match(cluster):
        raise typer.BadParameter(f"{cluster!r}: a scheduler address such as tcp://HOST:8786", param_hint="--cluster")
    try:
        stop = parse_until(until) if until else None
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--until")
    key = signing_key(sign, folder) if sign is not None else None
    try:
        r = run_ladder(folder, workers=concurrency, cluster=cluster, warm=warm, sign_key=key, sign_path=sign,
                       stream=None if quiet else sys.stderr, groups=groups, until=stop)
    except (LadderError, ClusterError) as e:
        _fail(e)
    typer.echo(f"{r.rated} groups rated, {r.played} partie played in {r.seconds:.0f} s"
               + (f"; {len(r.failed)} partie failed (their groups are void)" if r.failed else "")
               + ("; stopped" if r.interrupted else ""))
    if r.interrupted:
        raise typer.Exit(130)


@ladder_app.command("table")
def table(
    folder: Path = typer.Argument(..., file_okay=False, help=FOLDER_HELP),
    fmt: str = typer.Option("text", "--format", "-t", help="text, md (Markdown), csv or json."),
    active: bool = typer.Option(False, "--active", help="Only the active versions."),
):
    """The leaderboard (rating ± 95% interval, groups, partie, faults, last played, status) and each pair's difference with its interval; readable while the ladder runs."""
    from ..ladder.folder import LadderError, LadderFolder
    from ..ladder.table import FORMATS, render

    if fmt not in FORMATS:
        raise typer.BadParameter(f"one of {', '.join(FORMATS)}", param_hint="--format")
    try:
        typer.echo(render(LadderFolder.open(folder), fmt, active_only=active), nl=False)
    except LadderError as e:
        _fail(e)


@ladder_app.command("token")
def token(
    folder: Path = typer.Argument(..., file_okay=False, help=FOLDER_HELP),
    author: str = typer.Argument(..., help="The author the token is for: their uploads enter under this name, and they see their own bots' stderr."),
):
    """Make an upload token for AUTHOR (printed once; marias serve accepts their uploads with it)."""
    from ..ladder.folder import LadderError, LadderFolder

    from ..ladder.submissions import make_token

    try:
        typer.echo(make_token(LadderFolder.open(folder), author))
    except LadderError as e:
        _fail(e)


@ladder_app.command("tokens")
def tokens(folder: Path = typer.Argument(..., file_okay=False, help=FOLDER_HELP)):
    """List the upload tokens made: id, author, when made, and whether revoked (never a token itself)."""
    from ..ladder.folder import LadderError, LadderFolder
    from ..ladder.submissions import tokens as made

    try:
        rows = made(LadderFolder.open(folder))
    except (LadderError, ValueError) as e:
        _fail(e)
    if not rows:
        typer.echo("no tokens (make one with `marias ladder token FOLDER AUTHOR`)")
    for t in rows:
        typer.echo(f"{t['id']}  {t['author']}  made {t['made']}  " + (f"revoked {t['revoked']}" if t["revoked"] else "valid"))


@ladder_app.command("revoke")
def revoke(
    folder: Path = typer.Argument(..., file_okay=False, help=FOLDER_HELP),
    token_id: Optional[str] = typer.Argument(None, help="The id of the token to revoke (as `marias ladder tokens` lists it; at least 6 characters)."),
    author: Optional[str] = typer.Option(None, "--author", help="Revoke every token of this author instead."),
):
    """Revoke an upload token (by its id) or all of an author's: uploads with it are refused from then on."""
    from ..ladder.folder import LadderError, LadderFolder
    from ..ladder.submissions import revoke as do_revoke

    try:
        n = do_revoke(LadderFolder.open(folder), token_id=token_id, author=author)
    except (LadderError, ValueError) as e:
        _fail(e)
    if n == 0:
        _fail(ValueError("no valid token matched (see `marias ladder tokens`)"), 1)
    typer.echo(f"revoked {n} token{'s' if n != 1 else ''}")
