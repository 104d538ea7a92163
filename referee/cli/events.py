"""``marias tournament``, ``duel`` and ``table``: events of many partie, and their tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..matches.bounds import MAX_CONCURRENCY, MAX_SERIES
from .options import (
    BOT_CPU_S,
    BOT_CPUS,
    BOT_DISK_MB,
    BOT_FILE_MB,
    BOT_MEMORY_MB,
    BOT_PROCESSES,
    SANDBOX_HELP,
    exit_on_failed_units,
    sandbox_mode,
    signing_key,
    warn_seed,
)

# ------------------------------------------------------------------ tournament, table
TABLE_FORMAT_HELP = "Output of the tables: text, md (Markdown), csv or json."


def tournament(
    config: Optional[Path] = typer.Argument(None, exists=True, dir_okay=False, help="Tournament YAML file (protocol/TOURNAMENT.md). Or define it with --bot and the flags below."),
    bot: List[str] = typer.Option(None, "--bot", "-b", help="NAME=COMMAND (a built-in random, random:SEED, robot, or a command line); at least three. Only without CONFIG."),
    format_: Optional[str] = typer.Option(None, "--format", help="round-robin (every group of three) or gauntlet (--gauntlet NAME against every pair)."),
    gauntlet: Optional[str] = typer.Option(None, "--gauntlet", help="The bot that meets every pair of the others (format gauntlet)."),
    partie: Optional[int] = typer.Option(None, "--partie", "-n", help="Partie per table and seat arrangement (default 1). A larger one on an existing --out continues the tournament, keeping the partie played."),
    arrangements: Optional[str] = typer.Option(None, "--arrangements", help="all (6, default), rotations (3) or fixed (1)."),
    seed: Optional[str] = typer.Option(None, help="Tournament seed. One you give makes the decks reproducible, so public (logs and tables say decks: public seed); a short one a bot can find by trying values. Default: a fresh secret 128-bit seed, stored in the output folder, so a resume goes on with it."),
    seed_file: Optional[Path] = typer.Option(None, "--seed-file", dir_okay=False, help="Read the tournament seed from this file (one line; hidden from the bots, like the deal book): a seed you choose that stays secret."),
    deal_book: Optional[Path] = typer.Option(None, "--deal-book", help="File of starting decks, one per line of 32 card codes."),
    deck_scope: Optional[str] = typer.Option(None, "--deck-scope", help="table (default: each table its own decks) or tournament (every table the same decks)."),
    move_time: Optional[int] = typer.Option(None, "--move-time", help="Time per decision in ms (default 2000)."),
    startup_time: Optional[int] = typer.Option(None, "--startup-time", help="Time to start and answer hello in ms (default 10000)."),
    bank: Optional[int] = typer.Option(None, "--bank", help="Per-partie time bank in ms."),
    increment: Optional[int] = typer.Option(None, "--increment", help="Added to the bank at each decision, in ms."),
    max_faults: Optional[int] = typer.Option(None, "--max-faults", help="Faults in a partie after which a bot forfeits the rest of it (R12.3; default 3)."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-j", min=1, max=MAX_CONCURRENCY, help="Partie played at once (default: the configuration's, else the number of CPUs)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", file_okay=False, help="Output folder (overrides the configuration's output)."),
    resume: bool = typer.Option(False, "--resume", help="Finish a stopped tournament (running the same command again does the same, but --resume insists that it exists)."),
    allow_changed_bots: bool = typer.Option(False, "--allow-changed-bots", help="Resume even though a bot's files changed (its fingerprint); the tables then show the two versions apart."),
    table_format: str = typer.Option("text", "--table-format", "-t", help=TABLE_FORMAT_HELP),
    sign: Optional[Path] = typer.Option(None, "--sign", dir_okay=False, help="Sign every unit's log with this Ed25519 private key (from marias keygen), read before any bot starts and hidden from them; keep it outside every folder a bot is shown and outside the output folder. Check with marias validate --verify KEY.pub."),
    commit: bool = typer.Option(False, "--commit", help="Print the SHA-256 of the tournament seed before play (to publish it), and the seed only at the end (YAML: commit: true)."),
    series: Optional[int] = typer.Option(None, "--series", min=1, max=MAX_SERIES, help="Add the series table (R10): each bot's N best partie."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
    sandbox: Optional[str] = typer.Option(None, "--sandbox", help=SANDBOX_HELP + " Default: the configuration's sandbox: (auto)."),
    bot_memory_mb: Optional[int] = BOT_MEMORY_MB,
    bot_processes: Optional[int] = BOT_PROCESSES,
    bot_cpu_s: Optional[int] = BOT_CPU_S,
    bot_file_mb: Optional[int] = BOT_FILE_MB,
    bot_disk_mb: Optional[int] = BOT_DISK_MB,
    bot_cpus: Optional[int] = BOT_CPUS,
    cluster: Optional[str] = typer.Option(None, "--cluster", help="Play on a Dask cluster: its scheduler's address, e.g. tcp://HOST:8786 (default: the configuration's cluster:, else the local pool). Bots must exist at the same path on every worker; the cluster must be private (TOURNAMENT.md, 'Running on a cluster')."),
    warm: Optional[bool] = typer.Option(None, "--warm/--cold", help="--warm (default; YAML warm:): a worker keeps its bots running from one partie to the next, never two arrangements of one deck in one process. --cold: fresh bots for every partie."),
):
    """Run a tournament (round robin or gauntlet, duplicate seat arrangements) in parallel, locally or on a Dask cluster (--cluster); resumable; prints the tables."""
    from ..tournaments import standings
    from ..tournaments.cluster import ClusterError
    from ..tournaments.tournament import (
        ConfigError,
        TournamentError,
        config_from_options,
        load_config,
        run_tournament,
    )

    if table_format not in standings.FORMATS:
        raise typer.BadParameter(f"one of {', '.join(standings.FORMATS)}", param_hint="--table-format")
    flags = {"format": format_, "gauntlet": gauntlet, "partie": partie, "arrangements": arrangements, "seed": seed,
             "seed_file": seed_file, "deal_book": deal_book, "deck_scope": deck_scope, "move_ms": move_time, "startup_ms": startup_time,
             "bank_ms": bank, "increment_ms": increment, "max_faults": max_faults,
             "memory_mb": bot_memory_mb, "processes": bot_processes, "cpu_s": bot_cpu_s, "file_mb": bot_file_mb,
             "disk_mb": bot_disk_mb, "cpus": bot_cpus}
    try:
        if config is not None:
            given = sorted(k for k, v in flags.items() if v is not None) + (["bot"] if bot else [])
            if given:
                typer.echo(f"error: with a configuration file, change {', '.join(given)} in the file "
                           f"(only --concurrency, --out, --sandbox, --cluster, --warm/--cold, --sign, --commit and --allow-changed-bots "
                           f"may be given with it)", err=True)
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
    if cluster is not None:
        from ..tournaments.tournament import CLUSTER_RE
        if not CLUSTER_RE.match(cluster.strip()):
            raise typer.BadParameter("a Dask scheduler's address such as tcp://HOST:8786", param_hint="--cluster")
        cfg.cluster = cluster.strip()
    cfg.allow_changed_bots = allow_changed_bots
    if warm is not None:
        cfg.warm = warm
    cfg.sandbox = sandbox_mode(sandbox or cfg.sandbox)  # resolved once here: the workers neither probe nor warn
    cfg.commit = cfg.commit or commit
    sign_key = _event_setup(cfg, sign)
    if cfg.format == "head-to-head":  # a file with format: head-to-head is a duel
        if cfg.cluster:
            typer.echo("error: a head-to-head test decides as its groups come in and runs on the local pool; "
                       "leave out --cluster / cluster:", err=True)
            raise typer.Exit(2)
        _run_duel(cfg, resume=resume, table_format=table_format, quiet=quiet, sign_key=sign_key)
        return
    try:
        run = run_tournament(cfg, resume=resume, stream=None if quiet else sys.stderr,
                             sign_key=sign_key)
    except ConfigError as e:
        typer.echo("\n".join(f"error: {p}" for p in e.problems), err=True)
        raise typer.Exit(2)
    except (TournamentError, ClusterError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    if run.interrupted:
        typer.echo(f"stopped: {run.done} of {run.units} partie played; run the same command (or add --resume) to finish.", err=True)
        raise typer.Exit(130)
    if cfg.commit:
        typer.echo(f"seed: {cfg.seed} (its SHA-256 was published before play)", err=True)
    elif quiet and cfg.seed_drawn:
        typer.echo(f"seed {cfg.seed} (drawn at random; kept in {cfg.output / 'tournament.json'})", err=True)
    text, skipped, t = standings.report([cfg.output], fmt=table_format, series=series)
    typer.echo(_with_decks_line(text, [cfg.output], table_format))
    for note in skipped:
        typer.echo(f"note: {note}", err=True)
    for line in t.rejected:  # a log changed under the running tournament: left out, and said so
        typer.echo(f"error: {line}", err=True)
    if t.rejected:
        raise typer.Exit(1)
    exit_on_failed_units(run.failed)
    if not quiet:
        typer.echo(f"{run.units} partie ({run.played} played now) in {cfg.output}; logs in {run.logs}", err=True)


def duel(
    a: str = typer.Argument(..., help="Bot A: a built-in (random, random:SEED, robot) or NAME=COMMAND, e.g. new=\"python mybot.py\"."),
    b: str = typer.Argument(..., help="Bot B, the same way. The test asks whether A is better than B."),
    h0: Optional[float] = typer.Option(None, "--h0", help="H0: A's advantage in groše per partie (default 0)."),
    h1: Optional[float] = typer.Option(None, "--h1", help="H1: A's advantage in groše per partie, above h0 (default 10)."),
    alpha: Optional[float] = typer.Option(None, "--alpha", help="Chance of accepting H1 when H0 holds (default 0.05)."),
    beta: Optional[float] = typer.Option(None, "--beta", help="Chance of accepting H0 when H1 holds (default 0.05)."),
    max_groups: Optional[int] = typer.Option(None, "--max-groups", help="Stop without a decision after this many groups of six partie (default 1000). A larger one on an existing --out continues the test, keeping the groups played."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-j", min=1, help="Partie played at once (default: the number of CPUs)."),
    seed: Optional[str] = typer.Option(None, help="Seed of the decks: group K is shuffled from SEED:gK. One you give makes the decks reproducible, so public; a short one a bot can find by trying values. Default: a fresh secret 128-bit seed, stored in the output folder."),
    seed_file: Optional[Path] = typer.Option(None, "--seed-file", dir_okay=False, help="Read the seed from this file (one line; hidden from the bots): a seed you choose that stays secret."),
    commit: bool = typer.Option(False, "--commit", help="Print the seed's SHA-256 before play (to publish it), and the seed only at the end."),
    sign: Optional[Path] = typer.Option(None, "--sign", dir_okay=False, help="Sign every partie's log with this Ed25519 private key (from marias keygen), read before any bot starts and hidden from them; keep it outside every folder a bot is shown and outside --out."),
    deal_book: Optional[Path] = typer.Option(None, "--deal-book", help="File of starting decks, one per line; group K plays line K (needs max-groups lines)."),
    move_time: Optional[int] = typer.Option(None, "--move-time", help="Time per decision in ms (default 2000)."),
    startup_time: Optional[int] = typer.Option(None, "--startup-time", help="Time to start and answer hello in ms (default 10000)."),
    max_faults: Optional[int] = typer.Option(None, "--max-faults", help="Faults in a partie after which a bot forfeits the rest of it (R12.3; default 3)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", file_okay=False, help="Output folder (default duel-A-B); the same command continues a stopped test there, also with a larger --max-groups or other --h0/--h1/--alpha/--beta (other bots, limits or seed are refused)."),
    resume: bool = typer.Option(False, "--resume", help="Insist on continuing a test already in --out."),
    table_format: str = typer.Option("text", "--format", "-f", help="Output of the result: text, md, csv or json."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
    warm: Optional[bool] = typer.Option(None, "--warm/--cold", help="--warm (default): a worker keeps its bots running through a chain of one seating over several groups' decks, never two seatings of one deck in one process. --cold: fresh bots for every partie. The test's result is the same either way."),
):
    """Head-to-head test: is A better than B? Each deck is played in the six seatings with two seats of one bot and one of the other (AAB ABA BAA BBA BAB ABB); a sequential test (SPRT) stops as soon as it can accept H0 or H1. Resumable; `marias table OUT` prints the same result from the logs."""
    from ..tournaments.duel import config as duel_config
    from ..tournaments.tournament import ConfigError

    try:
        cfg = duel_config(a, b, h0=h0, h1=h1, alpha=alpha, beta=beta, max_groups=max_groups, seed=seed,
                          seed_file=seed_file, commit=commit or None, deal_book=deal_book, move_ms=move_time, startup_ms=startup_time, max_faults=max_faults,
                          concurrency=concurrency, output=str(out) if out is not None else None)
    except ConfigError as e:
        typer.echo("\n".join(f"error: {p.replace('command line: --bot ', 'bot ').replace('command line: ', '')}" for p in e.problems), err=True)
        raise typer.Exit(2)
    if warm is not None:
        cfg.warm = warm
    sign_key = _event_setup(cfg, sign)
    _run_duel(cfg, resume=resume, table_format=table_format, quiet=quiet, sign_key=sign_key)


def _event_setup(cfg, sign: Optional[Path]):
    """Before a tournament or duel starts: warnings about the seed, and the signing key read now
    (refused inside the output folder) and added to what no bot may see."""
    from ..matches.secrecy import PUBLIC, hide_paths

    if cfg.seed is not None and (cfg.seed_kind == PUBLIC or cfg.seed_file is not None):
        where = (f"the seed file {cfg.seed_file}" if cfg.seed_file is not None
                 else "seed" if cfg.source == "command line" else f"{cfg.where('seed')}")
        warn_seed(cfg.seed, cfg.seed_kind, where)
    if sign is None:
        return None
    key = signing_key(sign, cfg.output)
    cfg.private_paths = tuple(cfg.private_paths) + hide_paths(sign)
    return key


def _with_decks_line(text: str, paths, fmt: str) -> str:
    """A table's text with the line saying whether its decks were public (referee/matches/secrecy.py)."""
    from ..matches.secrecy import decks_line, decks_summary, table_logs

    if fmt == "json":  # a key of the object
        summary = decks_summary(table_logs(paths))
        try:
            body = json.loads(text)
        except ValueError:
            return text
        if summary is None or not isinstance(body, dict):
            return text
        return json.dumps({**body, "decks": summary}, indent=2, ensure_ascii=False)
    line = decks_line(paths, fmt)
    return text if line is None else f"{text.rstrip()}\n\n{line}\n" if fmt != "csv" else f"{text.rstrip()}\n{line}\n"


def _run_duel(cfg, *, resume: bool, table_format: str, quiet: bool, sign_key=None) -> None:
    from ..tournaments import duel as duel_mod
    from ..tournaments import standings
    from ..tournaments.tournament import ConfigError, TournamentError

    if table_format not in standings.FORMATS:
        raise typer.BadParameter(f"one of {', '.join(standings.FORMATS)}", param_hint="--format")
    try:
        run = duel_mod.run_duel(cfg, resume=resume, stream=None if quiet else sys.stderr, sign_key=sign_key)
    except ConfigError as e:
        typer.echo("\n".join(f"error: {p}" for p in e.problems), err=True)
        raise typer.Exit(2)
    except TournamentError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    if run.interrupted:
        typer.echo(f"stopped: {run.test.n} group(s) counted; run the same command (or add --resume) to continue the test.", err=True)
        raise typer.Exit(130)
    typer.echo(duel_mod.render(run.result, table_format))
    if cfg.commit:
        typer.echo(f"seed: {cfg.seed} (its SHA-256 was published before play)", err=True)
    exit_on_failed_units(run.failed)
    if not quiet:
        typer.echo(f"{run.test.n} group(s) ({run.played} partie played now) in {cfg.output}; "
                   f"`marias table {cfg.output}` prints this again from the logs", err=True)


def table_cmd(
    paths: List[Path] = typer.Argument(..., exists=True, help="Log files or folders (searched for *.jsonl)."),
    table_format: str = typer.Option("text", "--format", "-f", help=TABLE_FORMAT_HELP),
    series: Optional[int] = typer.Option(None, "--series", min=1, max=MAX_SERIES, help="Add the series table (R10): each bot's N best partie."),
    only: List[str] = typer.Option(None, "--table", help="Only these tables: standings, pairs, play, cross, series, rating (repeatable)."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Recreate each tournament folder's results database (results.sqlite) from its logs, validating every one, then print the tables from it."),
):
    """Every table (standings, pairs, play, cross, series, rating) from complete, valid logs: of a tournament folder, a duel folder (its test's decision, LLR and groups first), the logs/ of either, a match's log folder, or log files. One row per bot: a bot holding two seats of a partie (a duel's A A B) is one entry with its seats together.

    A tournament folder with a results database (results.sqlite, written as each unit's log is
    accepted) is read from the database, not its logs; --rebuild recreates it from the logs.
    A tournament's log counts only while its SHA-256 is the one units.journal recorded when the
    unit was accepted: a changed or replaced log is named on stderr and left out, and the tables
    of the others are printed with exit status 1. Copies of one match (the same seed commitment
    and final hash) count once."""
    from ..tournaments import standings
    from ..tournaments.event import EventFolder, tournament_folder

    if table_format not in standings.FORMATS:
        raise typer.BadParameter(f"one of {', '.join(standings.FORMATS)}", param_hint="--format")
    for name in only or []:
        if name not in standings.TABLE_NAMES:
            raise typer.BadParameter(f"{name!r} is not one of {', '.join(standings.TABLE_NAMES)}", param_hint="--table")
    if only and "series" in only and not series:
        raise typer.BadParameter("the series table needs --series N", param_hint="--table")
    if rebuild:
        folders = [tournament_folder(p) for p in paths]
        if not any(folders):
            raise typer.BadParameter("--rebuild works on tournament folders (holding manifest.json)", param_hint="--rebuild")
        from ..tournaments.tournament import TournamentError
        for folder in dict.fromkeys(f for f in folders if f is not None):
            ev = EventFolder(folder)
            try:
                n_logs, n_partie, notes = ev.rebuild_db(rejected := [])
            except TournamentError as e:
                typer.echo(f"error: {e}; --rebuild waits until it ends", err=True)
                raise typer.Exit(2)
            for note in notes:
                typer.echo(f"note: {note}", err=True)
            typer.echo(f"{ev.db_file}: rebuilt from {n_logs} valid log(s) on record, {n_partie} partie"
                       + (f"; {len(rejected)} log(s) left out, not the ones on record (named below)" if rejected else ""),
                       err=True)
    text, skipped, t = standings.report(paths, fmt=table_format, series=series, which=only or None)
    for note in skipped:
        typer.echo(f"note: {note}", err=True)
    if not t.parties and not t.head_to_head:
        for line in t.rejected:
            typer.echo(f"error: {line}", err=True)
        typer.echo("error: no complete, valid log found", err=True)
        raise typer.Exit(1)
    typer.echo(text if t.head_to_head and not t.parties else _with_decks_line(text, paths, table_format))
    if t.rejected:  # the tables of the logs on record are printed; what was left out, loudly, and exit 1
        for line in t.rejected:
            typer.echo(f"error: {line}", err=True)
        typer.echo(f"error: {len(t.rejected)} log(s) left out of these tables: not the ones the tournament recorded "
                   f"in units.journal when it accepted them", err=True)
        raise typer.Exit(1)
