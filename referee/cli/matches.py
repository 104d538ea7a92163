"""``marias selfplay`` and ``marias match``: one game of three bots, in-process or through the referee."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from tabulate import tabulate

from ..matches.bounds import (
    MAX_BANK_MS,
    MAX_FAULTS,
    MAX_INCREMENT_MS,
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
    bot_limits_of,
    check_entries,
    deck_file,
    match_progress,
    sandbox_mode,
    seed_file_text,
    signing_key,
    three,
    warn_seed,
)


# ------------------------------------------------------------------ selfplay
def selfplay(
    bot: List[str] = typer.Option(None, "--bot", "-b", help="Bot per seat, three times (default robot, robot, random): a built-in (played in-process), a command line or NAME=COMMAND; with any command the partie is played through the referee, every bot a program."),
    seed: int = typer.Option(1, help="Seed of the shuffle before deal 1 (and of the cuts). Default 1: public, the same partie every run."),
    log: Optional[Path] = typer.Option(None, "--log", file_okay=False, help="Also write the game log (JSON Lines, protocol/LOGS.md) into this folder as selfplay-sSEED.jsonl (selfplay-sSEED-2.jsonl, ... if taken)."),
):
    """Play one partie (12 deals) and print it deal by deal: built-in bots in-process, any other bot as a program through the referee."""
    import bots as builtin

    from ..logs.tables import deal_rows, partie_summary
    from ..rules.partie import partie_seed
    from ..rules.selfplay import play_partie
    from ..tools.strength import is_builtin, parse_entry

    names = three(bot or ["robot", "robot", "random"])
    entries = [parse_entry(n) for n in names]
    check_entries(names)
    if seed == 1:
        typer.echo("note: seed 1 (the default) is public: the same partie every run (--seed N to vary it)", err=True)
    if not all(is_builtin(c) for _, c in entries):
        _selfplay_programs(entries, seed, log)
        return
    players = [builtin.make(n, seed=f"{seed}:{i}") for i, n in enumerate(names)]
    log_path = None
    if log is None:
        partie = play_partie(players, seed=partie_seed(seed, 1))  # the partie a log of seed SEED holds
    else:
        from ..logs.log import reserve_log_path, selfplay_log
        log_path = reserve_log_path(log, f"selfplay-s{seed}")  # never overwrites an earlier log
        partie = selfplay_log(log_path, players, seed=seed, commands=[f"builtin:{n}" for n in names])
    typer.echo(tabulate(deal_rows(partie), headers="keys", tablefmt="simple"))
    typer.echo("")
    typer.echo(tabulate(partie_summary(partie, names), headers="keys", tablefmt="simple"))
    if log_path is not None:
        typer.echo(f"\nlog: {log_path}")


def _selfplay_programs(entries, seed: int, log: Optional[Path]) -> None:
    """selfplay with programs: one partie through the referee (the same deck as the in-process path)."""
    from ..logs.log import reserve_log_path
    from ..logs.tables import deal_rows, fault_rows, partie_summary
    from ..matches.match import BotSpec, MatchConfig, run_match

    specs = []
    for i, (label, command) in enumerate(entries):
        try:
            spec = BotSpec.parse(command, seed=f"{seed}:{i}")
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--bot")
        spec.label = label
        specs.append(spec)
    log_path = reserve_log_path(log, f"selfplay-s{seed}") if log is not None else None
    result = run_match(MatchConfig(bots=specs, partie=1, seed=str(seed), log_path=log_path, keep_partie=True),
                       lambda line: typer.echo(line, err=True) if line.startswith("fault") else None)
    partie = result.parties[0]
    typer.echo(tabulate(deal_rows(partie), headers="keys", tablefmt="simple"))
    typer.echo("")
    typer.echo(tabulate(partie_summary(partie, result.names), headers="keys", tablefmt="simple"))
    if result.faults:
        typer.echo("")
        typer.echo(tabulate(fault_rows(result), headers="keys", tablefmt="simple"))
    if log_path is not None:
        typer.echo(f"\nlog: {log_path}")
    typer.echo(f"bots' stderr: {result.stderr_dir}")

# ------------------------------------------------------------------ match
def match(
    bot: List[str] = typer.Option(..., "--bot", "-b", help="Three times, seats 0, 1, 2: NAME=COMMAND or a command alone: a built-in bot (random, robot, random:SEED) or a command line, e.g. js=\"node examples/js/bot.js\". The name (default: the built-in's, or the stem of the bot's file) and the bot's fingerprint identify it in the log and the tables."),
    partie: int = typer.Option(1, "--partie", "-n", min=1, max=MAX_PARTIE, help="How many partie (12 deals each) to play."),
    seed: Optional[str] = typer.Option(None, help="Match seed (any text, at most 200 characters): partie N shuffles and cuts from SEED:N (protocol/LOGS.md, Seeds). A seed you give makes the decks reproducible, so public (the log says decks: public seed); a short one a bot can find by trying values. Default: a fresh secret 128-bit seed from the OS, revealed in the log's footer."),
    seed_file: Optional[Path] = typer.Option(None, "--seed-file", dir_okay=False, help="Read the seed from this file (one line; hidden from the bots): a seed you choose that stays secret until the footer reveals it."),
    commit: bool = typer.Option(False, "--commit", help="Print the seed's SHA-256 before play (to publish) and the seed itself only after it; the log's header always holds the SHA-256."),
    sign: Optional[Path] = typer.Option(None, "--sign", dir_okay=False, help="Sign the log with this Ed25519 private key (from marias keygen), read before any bot starts and hidden from them; keep it outside every folder a bot is shown and outside --log. Check with marias validate --verify KEY.pub."),
    deck: Optional[Path] = typer.Option(None, exists=True, dir_okay=False, help="File of starting decks, one per line (32 card codes); partie N uses line N."),
    move_time: int = typer.Option(2000, "--move-time", min=1, max=MAX_MOVE_MS, help="Time limit per decision, in ms."),
    startup_time: int = typer.Option(10000, "--startup-time", min=1, max=MAX_STARTUP_MS, help="Time limit for a bot to start and answer hello, in ms."),
    bank: Optional[int] = typer.Option(None, "--bank", min=1, max=MAX_BANK_MS, help="Optional per-partie time bank in ms (a decision may use at most min(move time, bank))."),
    increment: int = typer.Option(0, "--increment", min=0, max=MAX_INCREMENT_MS, help="Added to the bank at each decision, in ms."),
    max_faults: int = typer.Option(3, "--max-faults", min=1, max=MAX_FAULTS, help="Faults in a partie after which a bot forfeits the rest of it: each deal left is settled as its fault before a contract (R12.3)."),
    log: Optional[Path] = typer.Option(None, "--log", file_okay=False, help="Folder for the match log (JSON Lines), bots' stderr and transcripts."),
    transcript: bool = typer.Option(False, "--transcript", help="Keep every line sent to and received from each seat (next to the log)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr."),
    sandbox: str = typer.Option("auto", "--sandbox", help=SANDBOX_HELP),
    bot_memory_mb: Optional[int] = BOT_MEMORY_MB,
    bot_processes: Optional[int] = BOT_PROCESSES,
    bot_cpu_s: Optional[int] = BOT_CPU_S,
    bot_file_mb: Optional[int] = BOT_FILE_MB,
    bot_disk_mb: Optional[int] = BOT_DISK_MB,
    bot_cpus: Optional[int] = BOT_CPUS,
):
    """Play a match between three bots and print groše per seat per partie and in total.

    Before the first deal every bot is checked: its program and the files its command names exist,
    and it starts and answers hello within the start-up limit; otherwise nothing is played (exit 2)."""
    from datetime import datetime, timezone

    from ..logs.log import reserve_log_path, safe_name
    from ..matches.match import BotSpec, FaultPolicy, Limits, MatchConfig, run_match
    from ..matches.preflight import check_bots_apart
    from ..matches.secrecy import PUBLIC, SECRET, hide_paths
    from ..rules.partie import new_seed, seed_sha256
    from ..seats.identity import IdentityError

    if seed is not None and len(seed) > MAX_SEED_CHARS:
        raise typer.BadParameter(f"a seed is at most {MAX_SEED_CHARS} characters, got {len(seed)}", param_hint="--seed")
    if seed is not None and seed_file is not None:
        raise typer.BadParameter("give --seed (public) or --seed-file (secret), not both", param_hint="--seed-file")
    secret = seed is None
    if seed_file is not None:
        seed = seed_file_text(seed_file)
    elif secret:
        seed = new_seed()
    elif not seed.strip():
        raise typer.BadParameter("an empty seed", param_hint="--seed")
    kind = SECRET if secret else PUBLIC
    if seed_file is not None or not secret:
        warn_seed(seed, kind, f"--seed-file {seed_file}" if seed_file is not None else "--seed")
    sign_key = signing_key(sign, log) if sign is not None else None
    specs = []
    for i, b in enumerate(three(bot)):
        try:
            specs.append(BotSpec.parse_named(b, seed=f"{seed}:{i}"))
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--bot")
    limits = Limits(startup_ms=startup_time, move_ms=move_time, bank_ms=bank, increment_ms=increment)
    from ..seats.sandbox import SandboxConfig

    mode = sandbox_mode(sandbox)
    bot_limits = bot_limits_of(bot_memory_mb, bot_processes, bot_cpu_s, bot_file_mb, bot_disk_mb, bot_cpus)
    # every hand of the match is in the deck file; the seed file deals them; the key forges logs
    hide = hide_paths(deck, seed_file, sign)
    problems = check_bots_apart(specs, limits, SandboxConfig(mode, bot_limits, hide=hide))  # as they will play
    if problems:
        typer.echo("\n".join(f"error: {p}" for p in problems), err=True)
        raise typer.Exit(2)
    try:
        for s in specs:
            s.identity()
    except IdentityError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    decks = deck_file(deck, partie)
    log_path = None
    commitment = seed_sha256(seed)
    if log is not None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        # a secret seed is not put in the file name (anyone listing the folder would see it)
        tag = f"c{commitment[:8]}" if secret else f"s{safe_name(seed)}"
        try:
            made = not log.exists()
            log_path = reserve_log_path(log, f"match-{stamp}-{tag}")  # a fresh name: never overwrites a log
            if made:  # a folder of output only: hidden from every bot as a whole (referee/seats/sandbox.py)
                from ..seats.sandbox import mark_output
                mark_output(log)
        except OSError as e:
            typer.echo(f"error: cannot create the log in {log}: {e.strerror or e}", err=True)
            raise typer.Exit(2)
    config = MatchConfig(
        bots=specs, partie=partie, seed=seed, decks=decks, limits=limits,
        policy=FaultPolicy(max_faults=max_faults), log_path=log_path, transcript=transcript, sign_key=sign_key,
        sandbox=mode, sandbox_limits=bot_limits, sandbox_hide=hide, seed_kind=kind,
    )
    if commit:
        typer.echo(f"seed sha256: {commitment}")  # before play, to be published
        sys.stdout.flush()
    elif not (quiet or as_json):
        typer.echo(f"seed: {seed}", err=True)
    progress = None if quiet or as_json else match_progress(partie)
    try:
        result = run_match(config, progress)
    except KeyboardInterrupt:
        if log_path is not None and log_path.exists():
            where = (f"the log {log_path} is incomplete: the partie played so far, never a result "
                     f"(marias validate {log_path} says so; marias show {log_path} shows the finished deals)")
        elif log_path is not None:
            where = f"no log was written ({log_path} was not begun)"
        else:
            where = "no log was kept (--log FOLDER keeps one)"
        typer.echo(f"\nstopped before the end: {where}", err=True)
        raise typer.Exit(130)
    if as_json:
        typer.echo(json.dumps({**result.to_dict(), "seed": seed, "seed_sha256": commitment, "decks": kind}, indent=2, ensure_ascii=False))
        return
    from ..logs.tables import fault_rows, match_rows, seat_rows

    typer.echo(tabulate(match_rows(result), headers="keys", tablefmt="simple"))
    typer.echo("")
    typer.echo(tabulate(seat_rows(result), headers="keys", tablefmt="simple"))
    if result.faults:
        typer.echo("")
        typer.echo(tabulate(fault_rows(result), headers="keys", tablefmt="simple"))
    typer.echo(f"\nseed: {seed}\nseed sha256: {commitment}")
    typer.echo(f"decks: {kind}")
    typer.echo(f"\nsandbox: {result.sandbox}")
    if log_path is not None:
        typer.echo(f"log: {log_path}" + (" (signed)" if sign_key is not None else ""))
    typer.echo(f"bots' stderr: {result.stderr_dir}")
