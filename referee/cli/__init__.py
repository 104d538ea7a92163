"""The ``marias`` command: a thin shell over the library (the ``bench`` sub-commands in :mod:`referee.cli.bench`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from tabulate import tabulate

from bots import SEARCH_MS

from ..matches.bounds import (MAX_BANK_MS, MAX_CONCURRENCY, MAX_FAULTS, MAX_INCREMENT_MS, MAX_MOVE_MS, MAX_PARTIE,
                     MAX_SEED_CHARS, MAX_SERIES, MAX_STARTUP_MS)

app = typer.Typer(
    add_completion=True,  # marias --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    no_args_is_help=True,
    help="marias: a match referee for volený mariáš (three-player Czech card game) between bot programs.",
)
def _version(value: bool) -> None:
    if value:
        from .. import __version__
        from protocol.messages import PROTOCOL_VERSION

        from ..seats.sandbox import find_bwrap

        typer.echo(f"marias {__version__} (protocol {PROTOCOL_VERSION})")
        search = find_bwrap()
        typer.echo(f"bwrap: {search.found.describe()}" if search.found else f"bwrap: none works here: {search.why}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version of marias and of its protocol, the bwrap the bots' sandbox uses, and exit.")):
    """marias: a match referee for volený mariáš (three-player Czech card game) between bot programs."""




# ------------------------------------------------------------------ selfplay
@app.command()
def selfplay(
    bot: List[str] = typer.Option(None, "--bot", "-b", help="Bot per seat, three times (default robot, robot, random): a built-in (played in-process), a command line or NAME=COMMAND; with any command the partie is played through the referee, every bot a program."),
    seed: int = typer.Option(1, help="Seed of the shuffle before deal 1 (and of the cuts). Default 1: public, the same partie every run."),
    log: Optional[Path] = typer.Option(None, "--log", file_okay=False, help="Also write the game log (JSON Lines, protocol/LOGS.md) into this folder as selfplay-sSEED.jsonl (selfplay-sSEED-2.jsonl, ... if taken)."),
):
    """Play one partie (12 deals) and print it deal by deal: built-in bots in-process, any other bot as a program through the referee."""
    import bots as builtin
    from ..rules.selfplay import play_partie
    from ..tools.strength import is_builtin, parse_entry
    from ..logs.tables import deal_rows, partie_summary

    from ..rules.partie import partie_seed

    names = _three(bot or ["robot", "robot", "random"])
    entries = [parse_entry(n) for n in names]
    _check_entries(names)
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
    from ..matches.match import BotSpec, MatchConfig, run_match
    from ..logs.tables import deal_rows, fault_rows, partie_summary

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


def _check_entries(names: List[str]) -> None:
    """Each --bot a built-in, a command line whose program exists, or NAME=COMMAND; else exit 2."""
    from ..tools.strength import command_problem, parse_entry

    for b in names:
        why = command_problem(parse_entry(b)[1])
        if why:
            raise typer.BadParameter(why, param_hint="--bot")


def _three(items: List[str]) -> List[str]:
    if len(items) != 3:
        raise typer.BadParameter(f"give exactly three bots (one per seat), got {len(items)}", param_hint="--bot")
    return list(items)


# ------------------------------------------------------------------ sandbox options
_SANDBOX_HELP = ("Bot sandbox (protocol/PROTOCOL.md section 16): auto (or bwrap, required) = bubblewrap, "
                 "or refuse to start (exit 2) with the reason where it cannot work; none = bots run unisolated, "
                 "said loudly and marked in logs and tables. MARIAS_BWRAP=/path names the bwrap to use.")


def _decks(deck: Optional[Path], partie: int):
    """The starting decks of ``--deck`` (one per partie), or None; a clear error (exit 2) otherwise."""
    from ..matches.match import load_decks

    if deck is None:
        return None
    try:
        decks = load_decks(deck)
    except (OSError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    if len(decks) < partie:
        typer.echo(f"error: {deck} holds {len(decks)} deck(s) but --partie is {partie}", err=True)
        raise typer.Exit(2)
    return decks


def _exit_on_failed_units(failed: list[tuple[str, str]]) -> None:
    """Name every unit that failed (it is not counted) and exit 1; nothing when none failed."""
    if not failed:
        return
    from ..tournaments.failures import lines

    for line in lines(failed):  # one line per cause (a dead scheduler fails every unit alike)
        typer.echo(line, err=True)
    typer.echo(f"{len(failed)} partie failed and are not counted; run the same command again to retry them.", err=True)
    raise typer.Exit(1)


def sandbox_mode(mode: str) -> str:
    """The sandbox mode to run with ("bwrap" or "none"); ``none`` is said loudly at start; exits 2 with the
    reason and the way out where a sandbox is wanted (``auto`` too) but no bwrap works."""
    from ..seats.sandbox import MODES, UNSANDBOXED_WARNING, SandboxUnavailable, limits_report, resolve_mode

    if mode not in MODES:
        raise typer.BadParameter(f"one of {', '.join(MODES)}, got {mode!r}", param_hint="--sandbox")
    try:
        resolved = resolve_mode(mode)
    except SandboxUnavailable as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    if resolved == "none":
        typer.secho(f"marias: {UNSANDBOXED_WARNING}", err=True, fg="red", bold=True)
    weak = {k: v for k, v in limits_report().items() if v.startswith(("RLIMIT_AS", "RLIMIT_NPROC", "not enforced"))}
    if weak:
        typer.secho("marias: note: no writable cgroup here, so bot limits fall back to: "
                    + ", ".join(f"{k} {v}" for k, v in weak.items()), err=True, fg="yellow")
    return resolved


def _bot_limits(memory_mb, processes, cpu_s, file_mb, disk_mb=None, cpus=None):
    from ..seats.sandbox import SandboxLimits

    return SandboxLimits().merged(memory_mb=memory_mb, processes=processes, cpu_s=cpu_s, file_mb=file_mb,
                                  disk_mb=disk_mb, cpus=cpus)


_DISK_HELP = ("All a bot may write in its /tmp and working folder together, in MB (default 256; a tmpfs under the "
              "sandbox, counted in its memory too; a kept workdir: checked at each start).")
_CPUS_HELP = ("CPUs a bot may use at once while it is asked (a cgroup quota; default: no quota; a bot that waits for "
              "its turn does not run at all: it is frozen).")


# ------------------------------------------------------------------ match
@app.command()
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
    sandbox: str = typer.Option("auto", "--sandbox", help=_SANDBOX_HELP),
    bot_memory_mb: Optional[int] = typer.Option(None, "--bot-memory-mb", min=1, help="Memory per bot in MB (default 1024)."),
    bot_processes: Optional[int] = typer.Option(None, "--bot-processes", min=1, help="Processes and threads per bot at once (default 128)."),
    bot_cpu_s: Optional[int] = typer.Option(None, "--bot-cpu-s", min=1, help="CPU seconds per bot process (default 1800)."),
    bot_file_mb: Optional[int] = typer.Option(None, "--bot-file-mb", min=1, help="Largest file a bot may write, in MB (default 64)."),
    bot_disk_mb: Optional[int] = typer.Option(None, "--bot-disk-mb", min=1, help=_DISK_HELP),
    bot_cpus: Optional[int] = typer.Option(None, "--bot-cpus", min=1, help=_CPUS_HELP),
):
    """Play a match between three bots and print groše per seat per partie and in total.

    Before the first deal every bot is checked: its program and the files its command names exist,
    and it starts and answers hello within the start-up limit; otherwise nothing is played (exit 2)."""
    from datetime import datetime, timezone

    from ..seats.identity import IdentityError
    from ..logs.log import reserve_log_path, safe_name
    from ..matches.match import BotSpec, FaultPolicy, Limits, MatchConfig, run_match
    from ..rules.partie import new_seed, seed_sha256
    from ..matches.preflight import check_bots_apart

    from ..matches.secrecy import PUBLIC, SECRET, hide_paths

    if seed is not None and len(seed) > MAX_SEED_CHARS:
        raise typer.BadParameter(f"a seed is at most {MAX_SEED_CHARS} characters, got {len(seed)}", param_hint="--seed")
    if seed is not None and seed_file is not None:
        raise typer.BadParameter("give --seed (public) or --seed-file (secret), not both", param_hint="--seed-file")
    secret = seed is None
    if seed_file is not None:
        seed = _read_seed_file(seed_file)
    elif secret:
        seed = new_seed()
    elif not seed.strip():
        raise typer.BadParameter("an empty seed", param_hint="--seed")
    kind = SECRET if secret else PUBLIC
    if seed_file is not None or not secret:
        _warn_seed(seed, kind, f"--seed-file {seed_file}" if seed_file is not None else "--seed")
    sign_key = _signing_key(sign, log) if sign is not None else None
    specs = []
    for i, b in enumerate(_three(bot)):
        try:
            specs.append(BotSpec.parse_named(b, seed=f"{seed}:{i}"))
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--bot")
    limits = Limits(startup_ms=startup_time, move_ms=move_time, bank_ms=bank, increment_ms=increment)
    from ..seats.sandbox import SandboxConfig

    mode = sandbox_mode(sandbox)
    bot_limits = _bot_limits(bot_memory_mb, bot_processes, bot_cpu_s, bot_file_mb, bot_disk_mb, bot_cpus)
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
    decks = _decks(deck, partie)
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
    progress = None if quiet or as_json else _match_progress(partie)
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


def _signing_key(path: Path, output: Optional[Path] = None):
    """The Ed25519 private key of --sign, read now (before any bot starts), or a clear error.
    A key inside the output folder would be published with the logs: refused."""
    from ..logs.seal import load_signing_key
    from ..matches.secrecy import inside, readable_by_others

    if output is not None and path.exists() and inside(path, output):
        typer.echo(f"error: --sign {path}: the key lies inside the output folder {output}, which is published with "
                   f"the logs; keep it elsewhere (outside every folder a bot is shown, too)", err=True)
        raise typer.Exit(2)
    try:
        key = load_signing_key(path)
    except (OSError, ValueError) as e:
        typer.echo(f"error: --sign {path}: {getattr(e, 'strerror', None) or e}", err=True)
        raise typer.Exit(2)
    if readable_by_others(path):
        typer.echo(f"warning: --sign {path}: other users may read this key (chmod 600 {path})", err=True)
    return key


def _read_seed_file(path: Path) -> str:
    """The seed of --seed-file, or exit 2 naming the file."""
    from ..matches.secrecy import SeedFileError, read_seed_file

    try:
        return read_seed_file(path)
    except SeedFileError as e:
        typer.echo(f"error: --seed-file: {e}", err=True)
        raise typer.Exit(2)


def _warn_seed(seed: str, kind: str, where: str) -> None:
    from ..matches.secrecy import seed_warnings

    for w in seed_warnings(seed, kind, where):
        typer.echo(f"warning: {w}", err=True)


@app.command()
def keygen(
    path: Path = typer.Argument(..., dir_okay=False, help="Where to write the private key (PEM, mode 0600); the public key goes to PATH.pub."),
):
    """Write a new Ed25519 key pair for signing logs (match/tournament --sign PATH, validate --verify PATH.pub)."""
    from ..seats.sandbox import mark_private_file
    from ..logs.seal import generate_key_pair

    if path.exists():
        typer.echo(f"error: {path} exists; a key is never overwritten", err=True)
        raise typer.Exit(2)
    try:
        private, public, text = generate_key_pair(path)
        mark_private_file(private)  # no bot is shown it (referee/seats/sandbox.py)
    except (OSError, ValueError) as e:
        typer.echo(f"error: {getattr(e, 'strerror', None) or e}", err=True)
        raise typer.Exit(2)
    typer.echo(f"private key: {private} (mode 0600; keep it secret; sign with --sign {private})")
    typer.echo("  keep it outside every folder a bot is shown (a tournament file's folder, a bot's cwd or workdir) and "
               "outside the output folder (it is published with the logs); marias hides the --sign file from the "
               "bots, but no copy of it elsewhere")
    typer.echo(f"public key:  {public} (verify with marias validate --verify {public})")
    typer.echo(f"public key:  {text}")


# ------------------------------------------------------------------ check
@app.command()
def check(
    command: str = typer.Argument(..., help="The bot: a command line (quoted, e.g. \"python mybot.py\") or a built-in (random, robot)."),
    move_time: int = typer.Option(2000, "--move-time", min=1, help="Time limit per decision, in ms (as in match)."),
    startup_time: int = typer.Option(10000, "--startup-time", min=1, help="Time limit to start and answer hello, in ms (as in match)."),
    cwd: Optional[Path] = typer.Option(None, "--cwd", exists=True, file_okay=False, help="Run the bot in this folder."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON (for CI)."),
    sandbox: str = typer.Option("auto", "--sandbox", help=_SANDBOX_HELP),
    bot_memory_mb: Optional[int] = typer.Option(None, "--bot-memory-mb", min=1, help="Memory per bot in MB (default 1024)."),
    bot_processes: Optional[int] = typer.Option(None, "--bot-processes", min=1, help="Processes and threads per bot at once (default 128)."),
    bot_cpu_s: Optional[int] = typer.Option(None, "--bot-cpu-s", min=1, help="CPU seconds per bot process (default 1800)."),
    bot_file_mb: Optional[int] = typer.Option(None, "--bot-file-mb", min=1, help="Largest file a bot may write, in MB (default 64)."),
    bot_disk_mb: Optional[int] = typer.Option(None, "--bot-disk-mb", min=1, help=_DISK_HELP),
    bot_cpus: Optional[int] = typer.Option(None, "--bot-cpus", min=1, help=_CPUS_HELP),
):
    """Conformance check of a bot before any match: three partie (one per seat) against scripted opponents that steer towards every kind of decision, an unknown message type, a request with unknown fields, then bye and the end of input. Each check is reported PASS or FAIL with the fix; exit status 0 only when every check passes."""
    from ..tools.check import run_check

    try:
        report = run_check(command, move_ms=move_time, startup_ms=startup_time, cwd=str(cwd) if cwd else None,
                           sandbox=sandbox_mode(sandbox),
                           sandbox_limits=_bot_limits(bot_memory_mb, bot_processes, bot_cpu_s, bot_file_mb, bot_disk_mb,
                                                      bot_cpus))
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="COMMAND")
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        typer.echo("\n".join(report.lines()))
    raise typer.Exit(0 if report.ok else 1)


# ------------------------------------------------------------------ replay
@app.command()
def replay(
    log: Path = typer.Argument(..., exists=True, dir_okay=False, help="A match log (.jsonl)."),
    partie: int = typer.Option(1, "--partie", "-p", min=1, help="The partie of the deal."),
    deal: int = typer.Option(..., "--deal", "-d", min=1, help="The deal (1-12)."),
    seat: int = typer.Option(..., "--seat", "-s", min=0, max=2, help="The seat whose requests are sent to the bot."),
    bot: str = typer.Option(..., "--bot", "-b", help="The bot to ask: a command line or a built-in (random, robot)."),
    move_time: Optional[int] = typer.Option(None, "--move-time", min=1, help="Time per request in ms (default: the time_ms each logged request gave)."),
    lines: bool = typer.Option(False, "--lines", help="Also print every line sent to the bot."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    sandbox: str = typer.Option("auto", "--sandbox", help=_SANDBOX_HELP),
):
    """Send one seat's requests of one logged deal, exactly as logged, to a bot and print its answers beside the logged ones, with any fault it would have committed. Exit status 1 if it would have faulted."""
    from ..tools.replay_bot import ReplayError, replay as replay_deal, report_lines, seat_script

    try:
        script = seat_script(log, partie, deal, seat)
    except ReplayError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    try:
        steps = replay_deal(script, bot, move_ms=move_time, sandbox=sandbox_mode(sandbox))
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--bot")
    faulted = any(s.fault for s in steps)
    if as_json:
        typer.echo(json.dumps({"partie": partie, "deal": deal, "seat": seat, "faulted": faulted,
                               "requests": [{"id": s.request["id"], "decision": s.request["decision"], "logged": s.logged, "logged_fault": s.logged_fault,
                                             "answer": s.answer, "same": s.same, "fault": s.fault}
                                            for s in steps if s.request is not None],
                               "faults": [s.fault for s in steps if s.fault]}, indent=2, ensure_ascii=False))
    else:
        if lines:
            for s in steps:
                typer.echo(f"> {s.line}")
        typer.echo("\n".join(report_lines(script, steps)))
    raise typer.Exit(1 if faulted else 0)


# ------------------------------------------------------------------ play
@app.command()
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
    decks = _decks(deck, partie)
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


# ------------------------------------------------------------------ strength
def _match_progress(partie: int):
    """The referee's progress lines on stderr, each partie's with the count and an ETA."""
    import re

    eta = _Eta("partie", partie)

    def show(line: str) -> None:
        m = re.match(r"partie (\d+): \[", line)
        if m:
            done = int(m.group(1))
            line = f"{line}  ({eta.text(done)})"
        typer.echo(line, err=True)

    return show


class _Eta:
    """Progress with an estimate of the time left, on stderr: ``what done/total, elapsed, ETA``."""

    def __init__(self, what: str, total: int):
        import time

        self.what, self.total, self.t0, self.clock = what, total, time.monotonic(), time.monotonic
        self.tty = sys.stderr.isatty()
        self.shown = -1.0

    def text(self, done: int) -> str:
        elapsed = self.clock() - self.t0
        left = elapsed / done * (self.total - done) if done else float("nan")
        eta = "?" if left != left else _duration(left)
        return f"{self.what} {done}/{self.total}, {_duration(elapsed)} elapsed, ETA {eta}"

    def __call__(self, done: int, total: int | None = None) -> None:
        now = self.clock()
        if done < self.total and now - self.shown < (0.2 if self.tty else 5.0):
            return  # a terminal line redrawn, a log line every few seconds
        self.shown = now
        if self.tty:
            sys.stderr.write("\r" + self.text(done) + ("\n" if done >= self.total else ""))
            sys.stderr.flush()
        else:
            typer.echo(self.text(done), err=True)

    def end_line(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


@app.command()
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

    names = _three(bot)
    _check_entries(names)
    default_seed = seed is None
    seed = "1" if default_seed else seed
    if len(seed) > MAX_SEED_CHARS:
        raise typer.BadParameter(f"a seed is at most {MAX_SEED_CHARS} characters, got {len(seed)}", param_hint="--seed")
    if jobs == 0:
        jobs = os.cpu_count() or 1
    if default_seed and not (quiet or as_json):
        typer.echo("note: the default seed 1 is public: the same decks every run (--seed to vary them)", err=True)
    k = 6 if permutations else 3
    progress = None if quiet or as_json else _Eta("partie", -(-partie // k) * k)
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
@app.command("bot")
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


# ------------------------------------------------------------------ validate, show
@app.command()
def validate(
    paths: List[Path] = typer.Argument(..., help="Log files (.jsonl) or folders searched for them."),
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable report."),
    transcript: Optional[Path] = typer.Option(None, "--transcript", file_okay=False, help="Folder of the seats' transcripts (<logstem>.seatN.transcript.jsonl): check that no message showed a seat a card it could not know."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=0, help="Processes: several files at once, or the partie of one large log split between them (0: one per CPU)."),
    verify: Optional[str] = typer.Option(None, "--verify", help="Public key (KEY.pub of marias keygen, or ed25519:HEX): every log must carry a valid signature by it."),
):
    """Replay every deal of the logs with the rules engine and check every recorded fact and the seal.

    Prints each problem as FILE:LINE: RULE: message (RULE "seal": the hash chain or the signature),
    then a summary per log ending with what it proved of who wrote it: "signed, verified" (by the
    --verify key), "signed, not verified (pass --verify KEY.pub)", or "unsigned: rules checked,
    authorship not proven" (anyone can recompute the hash chain; sign logs you publish).
    Exit status 0 when every log holds, 1 otherwise."""
    import os

    from ..logs.seal import load_public_key
    from ..logs.validate import log_files, validate_files

    if verify is not None:
        try:
            verify = load_public_key(verify)
        except ValueError as e:
            typer.echo(f"error: --verify: {e}", err=True)
            raise typer.Exit(2)
    files = log_files(paths)
    if not files:
        typer.echo("error: no .jsonl log found in " + ", ".join(str(p) for p in paths), err=True)
        raise typer.Exit(1)
    reports = validate_files(files, transcripts=transcript, jobs=jobs or os.cpu_count() or 1, verify=verify)
    ok = all(r.ok for r in reports)
    if as_json:
        typer.echo(json.dumps({"ok": ok, "files": [r.to_dict() for r in reports]}, indent=2, ensure_ascii=False))
    else:
        for r in reports:
            for line in r.lines_and_notes():
                typer.echo(line)
            typer.echo(r.summary())
    raise typer.Exit(0 if ok else 1)


@app.command()
def show(
    log: Path = typer.Argument(..., help="A log file (.jsonl)."),
    deal: Optional[int] = typer.Option(None, "--deal", "-d", min=1, help="Only this deal (of each partie, or of --partie)."),
    partie: Optional[int] = typer.Option(None, "--partie", "-p", min=1, help="Only this partie."),
    seat: Optional[int] = typer.Option(None, "--seat", "-s", min=0, max=2, help="Show only what this seat saw."),
    bot: Optional[str] = typer.Option(None, "--bot", "-b", help="Show only what this bot saw: its name (as announced in hello) or its label/command in the log's header."),
):
    """Print deal sheets: hands, trump choice, talon, bidding in the game's words, tricks with hlášky and points, laid cards, settlement per component and per seat."""
    from ..logs.show import ShowError, show as show_log

    if bot is not None:
        if seat is not None:
            raise typer.BadParameter("give --seat or --bot, not both", param_hint="--bot")
        seat = _seat_of_bot(log, bot)
    try:
        text = show_log(log, partie=partie, deal=deal, seat=seat, color=sys.stdout.isatty())
    except ShowError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1)
    typer.echo(text)


def _seat_of_bot(log: Path, name: str) -> int:
    """The seat of the bot called ``name`` in ``log``'s header, or a clear error (exit 2)."""
    from ..logs.log import read_lines

    try:
        records, _ = read_lines(log)
    except OSError as e:
        typer.echo(f"error: {log}: cannot read: {e.strerror or e}", err=True)
        raise typer.Exit(2)
    header = records[0][1] if records and records[0][1].get("type") == "header" else {}
    bots = [b for b in header.get("bots") or [] if isinstance(b, dict)]
    seats = [b.get("seat") for b in bots if name in (b.get("name"), b.get("label"))]
    if len(seats) == 1:
        return seats[0]
    if not seats:
        known = ", ".join(f"{b.get('name')!r} (seat {b.get('seat')})" for b in bots) or "none"
        typer.echo(f"error: no bot {name!r} in {log}; its bots: {known}", err=True)
    else:
        typer.echo(f"error: {name!r} sits in seats {', '.join(map(str, seats))} of {log}: choose one with --seat", err=True)
    raise typer.Exit(2)


# ------------------------------------------------------------------ web: serve, report
@app.command()
def serve(
    folders: List[Path] = typer.Argument(None, help="Folders of tournaments, duels and match logs (default: the current folder)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on; anything but loopback is reachable by others (a warning says so)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    play_dir: Optional[Path] = typer.Option(None, "--play-dir", file_okay=False, help="Where the play page writes its games' logs (default: FOLDER/plays of the first folder)."),
    bot: List[str] = typer.Option([], "--bot", "-b", help="NAME=COMMAND: a bot the play page may seat, besides the built-ins (repeatable)."),
    max_file_mb: float = typer.Option(64.0, "--max-file-mb", min=0.001, help="Larger files are not read for a page (413)."),
):
    """A local web application over the folders marias writes: tournaments and duels (live), logs with a replayer of every deal, and a page to play a seat against bots. Prints its URL."""
    from ..web.serve import serve as run_serve

    extra = {}
    for b in bot:
        name, sep, command = b.partition("=")
        if not sep or not name or not command:
            raise typer.BadParameter(f"{b!r}: give NAME=COMMAND", param_hint="--bot")
        extra[name] = command
    raise typer.Exit(run_serve(list(folders or [Path(".")]), host, port, play_dir=play_dir, extra_bots=extra, max_mb=max_file_mb))


@app.command()
def report(
    folder: Path = typer.Argument(..., help="A tournament or duel folder."),
    out: Path = typer.Option(Path("report.html"), "--out", "-o", dir_okay=False, help="The HTML file to write."),
    max_logs: int = typer.Option(50, "--max-logs", min=0, help="Logs whose deals get a replayer in the file (the file grows about 10 KB per deal)."),
):
    """The tournament page and its replayer as one self-contained HTML file that opens offline."""
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


# ------------------------------------------------------------------ tournament, table
_TABLE_FORMAT_HELP = "Output of the tables: text, md (Markdown), csv or json."


@app.command()
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
    table_format: str = typer.Option("text", "--table-format", "-t", help=_TABLE_FORMAT_HELP),
    sign: Optional[Path] = typer.Option(None, "--sign", dir_okay=False, help="Sign every unit's log with this Ed25519 private key (from marias keygen), read before any bot starts and hidden from them; keep it outside every folder a bot is shown and outside the output folder. Check with marias validate --verify KEY.pub."),
    commit: bool = typer.Option(False, "--commit", help="Print the SHA-256 of the tournament seed before play (to publish it), and the seed only at the end (YAML: commit: true)."),
    series: Optional[int] = typer.Option(None, "--series", min=1, max=MAX_SERIES, help="Add the series table (R10): each bot's N best partie."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
    sandbox: Optional[str] = typer.Option(None, "--sandbox", help=_SANDBOX_HELP + " Default: the configuration's sandbox: (auto)."),
    bot_memory_mb: Optional[int] = typer.Option(None, "--bot-memory-mb", min=1, help="Memory per bot in MB (default 1024)."),
    bot_processes: Optional[int] = typer.Option(None, "--bot-processes", min=1, help="Processes and threads per bot at once (default 128)."),
    bot_cpu_s: Optional[int] = typer.Option(None, "--bot-cpu-s", min=1, help="CPU seconds per bot process (default 1800)."),
    bot_file_mb: Optional[int] = typer.Option(None, "--bot-file-mb", min=1, help="Largest file a bot may write, in MB (default 64)."),
    bot_disk_mb: Optional[int] = typer.Option(None, "--bot-disk-mb", min=1, help=_DISK_HELP),
    bot_cpus: Optional[int] = typer.Option(None, "--bot-cpus", min=1, help=_CPUS_HELP),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="Play on a Dask cluster: its scheduler's address, e.g. tcp://HOST:8786 (default: the configuration's cluster:, else the local pool). Bots must exist at the same path on every worker; the cluster must be private (TOURNAMENT.md, 'Running on a cluster')."),
    warm: Optional[bool] = typer.Option(None, "--warm/--cold", help="--warm (default; YAML warm:): a worker keeps its bots running from one partie to the next, never two arrangements of one deck in one process. --cold: fresh bots for every partie."),
):
    """Run a tournament (round robin or gauntlet, duplicate seat arrangements) in parallel, locally or on a Dask cluster (--cluster); resumable; prints the tables."""
    from ..tournaments import standings
    from ..tournaments.cluster import ClusterError
    from ..tournaments.tournament import ConfigError, TournamentError, config_from_options, load_config, run_tournament

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
    _exit_on_failed_units(run.failed)
    if not quiet:
        typer.echo(f"{run.units} partie ({run.played} played now) in {cfg.output}; logs in {run.logs}", err=True)


@app.command()
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
        _warn_seed(cfg.seed, cfg.seed_kind, where)
    if sign is None:
        return None
    key = _signing_key(sign, cfg.output)
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
    _exit_on_failed_units(run.failed)
    if not quiet:
        typer.echo(f"{run.test.n} group(s) ({run.played} partie played now) in {cfg.output}; "
                   f"`marias table {cfg.output}` prints this again from the logs", err=True)


@app.command("table")
def table_cmd(
    paths: List[Path] = typer.Argument(..., exists=True, help="Log files or folders (searched for *.jsonl)."),
    table_format: str = typer.Option("text", "--format", "-f", help=_TABLE_FORMAT_HELP),
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
    from ..tournaments import results, standings

    if table_format not in standings.FORMATS:
        raise typer.BadParameter(f"one of {', '.join(standings.FORMATS)}", param_hint="--format")
    for name in only or []:
        if name not in standings.TABLE_NAMES:
            raise typer.BadParameter(f"{name!r} is not one of {', '.join(standings.TABLE_NAMES)}", param_hint="--table")
    if only and "series" in only and not series:
        raise typer.BadParameter("the series table needs --series N", param_hint="--table")
    if rebuild:
        folders = [results.tournament_folder(p) for p in paths]
        if not any(folders):
            raise typer.BadParameter("--rebuild works on tournament folders (holding manifest.json)", param_hint="--rebuild")
        from ..tournaments.tournament import TournamentError
        for folder in dict.fromkeys(f for f in folders if f is not None):
            try:
                n_logs, n_partie, notes = results.rebuild(folder, rejected := [])
            except TournamentError as e:
                typer.echo(f"error: {e}; --rebuild waits until it ends", err=True)
                raise typer.Exit(2)
            for note in notes:
                typer.echo(f"note: {note}", err=True)
            typer.echo(f"{folder / results.DB_FILE}: rebuilt from {n_logs} valid log(s) on record, {n_partie} partie"
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


from .bench import bench_app  # noqa: E402  (the bench commands use the helpers above)

app.add_typer(bench_app, name="bench")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
