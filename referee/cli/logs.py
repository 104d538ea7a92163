"""``marias keygen``, ``validate``, ``show`` and ``replay``: logs as evidence, read back, and one logged deal
asked of a bot again."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from .options import SANDBOX_HELP, sandbox_mode


def keygen(
    path: Path = typer.Argument(..., dir_okay=False, help="Where to write the private key (PEM, mode 0600); the public key goes to PATH.pub."),
):
    """Write a new Ed25519 key pair for signing logs (match/tournament --sign PATH, validate --verify PATH.pub)."""
    from ..logs.seal import generate_key_pair
    from ..seats.sandbox import mark_private_file

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

# ------------------------------------------------------------------ validate, show
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


def show(
    log: Path = typer.Argument(..., help="A log file (.jsonl)."),
    deal: Optional[int] = typer.Option(None, "--deal", "-d", min=1, help="Only this deal (of each partie, or of --partie)."),
    partie: Optional[int] = typer.Option(None, "--partie", "-p", min=1, help="Only this partie."),
    seat: Optional[int] = typer.Option(None, "--seat", "-s", min=0, max=2, help="Show only what this seat saw."),
    bot: Optional[str] = typer.Option(None, "--bot", "-b", help="Show only what this bot saw: its name (as announced in hello) or its label/command in the log's header."),
):
    """Print deal sheets: hands, trump choice, talon, bidding in the game's words, tricks with hlášky and points, laid cards, settlement per component and per seat."""
    from ..logs.show import ShowError
    from ..logs.show import show as show_log

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

# ------------------------------------------------------------------ replay
def replay(
    log: Path = typer.Argument(..., exists=True, dir_okay=False, help="A match log (.jsonl)."),
    partie: int = typer.Option(1, "--partie", "-p", min=1, help="The partie of the deal."),
    deal: int = typer.Option(..., "--deal", "-d", min=1, help="The deal (1-12)."),
    seat: int = typer.Option(..., "--seat", "-s", min=0, max=2, help="The seat whose requests are sent to the bot."),
    bot: str = typer.Option(..., "--bot", "-b", help="The bot to ask: a command line or a built-in (random, robot)."),
    move_time: Optional[int] = typer.Option(None, "--move-time", min=1, help="Time per request in ms (default: the time_ms each logged request gave)."),
    lines: bool = typer.Option(False, "--lines", help="Also print every line sent to the bot."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    sandbox: str = typer.Option("auto", "--sandbox", help=SANDBOX_HELP),
):
    """Send one seat's requests of one logged deal, exactly as logged, to a bot and print its answers beside the logged ones, with any fault it would have committed. Exit status 1 if it would have faulted."""
    from ..tools.replay_bot import ReplayError, report_lines, seat_script
    from ..tools.replay_bot import replay as replay_deal

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
