"""What several commands share: the sandbox and bot-limit options, the checks of --bot, --deck,
--seed-file and --sign, and progress with an ETA on stderr."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer


def check_entries(names: List[str]) -> None:
    """Each --bot a built-in, a command line whose program exists, or NAME=COMMAND; else exit 2."""
    from ..tools.strength import command_problem, parse_entry

    for b in names:
        why = command_problem(parse_entry(b)[1])
        if why:
            raise typer.BadParameter(why, param_hint="--bot")


def three(items: List[str]) -> List[str]:
    if len(items) != 3:
        raise typer.BadParameter(f"give exactly three bots (one per seat), got {len(items)}", param_hint="--bot")
    return list(items)


# ------------------------------------------------------------------ sandbox options
SANDBOX_HELP = ("Bot sandbox (protocol/PROTOCOL.md section 16): auto (or bwrap, required) = bubblewrap, "
                "or refuse to start (exit 2) with the reason where it cannot work; none = bots run unisolated, "
                "said loudly and marked in logs and tables. MARIAS_BWRAP=/path names the bwrap to use.")


def deck_file(deck: Optional[Path], partie: int):
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


def exit_on_failed_units(failed: list[tuple[str, str]]) -> None:
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
    from ..seats.sandbox import (
        MODES,
        UNSANDBOXED_WARNING,
        SandboxUnavailable,
        limits_report,
        resolve_mode,
    )

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


def bot_limits_of(memory_mb, processes, cpu_s, file_mb, disk_mb=None, cpus=None):
    from ..seats.sandbox import SandboxLimits

    return SandboxLimits().merged(memory_mb=memory_mb, processes=processes, cpu_s=cpu_s, file_mb=file_mb,
                                  disk_mb=disk_mb, cpus=cpus)


DISK_HELP = ("All a bot may write in its /tmp and working folder together, in MB (default 256; a tmpfs under the "
             "sandbox, counted in its memory too; a kept workdir: checked at each start).")
CPUS_HELP = ("CPUs a bot may use at once while it is asked (a cgroup quota; default: no quota; a bot that waits for "
             "its turn does not run at all: it is frozen).")

def signing_key(path: Path, output: Optional[Path] = None):
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


def seed_file_text(path: Path) -> str:
    """The seed of --seed-file, or exit 2 naming the file."""
    from ..matches.secrecy import SeedFileError, read_seed_file

    try:
        return read_seed_file(path)
    except SeedFileError as e:
        typer.echo(f"error: --seed-file: {e}", err=True)
        raise typer.Exit(2)


def warn_seed(seed: str, kind: str, where: str) -> None:
    from ..matches.secrecy import seed_warnings

    for w in seed_warnings(seed, kind, where):
        typer.echo(f"warning: {w}", err=True)

# ------------------------------------------------------------------ progress
def match_progress(partie: int):
    """The referee's progress lines on stderr, each partie's with the count and an ETA."""
    import re

    eta = Eta("partie", partie)

    def show(line: str) -> None:
        m = re.match(r"partie (\d+): \[", line)
        if m:
            done = int(m.group(1))
            line = f"{line}  ({eta.text(done)})"
        typer.echo(line, err=True)

    return show


class Eta:
    """Progress with an estimate of the time left, on stderr: ``what done/total, elapsed, ETA``."""

    def __init__(self, what: str, total: int):
        import time

        self.what, self.total, self.t0, self.clock = what, total, time.monotonic(), time.monotonic
        self.tty = sys.stderr.isatty()
        self.shown = -1.0

    def text(self, done: int) -> str:
        elapsed = self.clock() - self.t0
        left = elapsed / done * (self.total - done) if done else float("nan")
        eta = "?" if left != left else duration(left)
        return f"{self.what} {done}/{self.total}, {duration(elapsed)} elapsed, ETA {eta}"

    def __call__(self, done: int, total: int | None = None) -> None:
        if total is not None:  # a caller that learns the total as it goes (marias analyze)
            self.total = total
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


def duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


# The limits of each bot, shared by match, tournament, duel and check (protocol/PROTOCOL.md section 16).
BOT_MEMORY_MB = typer.Option(None, "--bot-memory-mb", min=1, help="Memory per bot in MB (default 1024).")
BOT_PROCESSES = typer.Option(None, "--bot-processes", min=1, help="Processes and threads per bot at once (default 128).")
BOT_CPU_S = typer.Option(None, "--bot-cpu-s", min=1, help="CPU seconds per bot process (default 1800).")
BOT_FILE_MB = typer.Option(None, "--bot-file-mb", min=1, help="Largest file a bot may write, in MB (default 64).")
BOT_DISK_MB = typer.Option(None, "--bot-disk-mb", min=1, help=DISK_HELP)
BOT_CPUS = typer.Option(None, "--bot-cpus", min=1, help=CPUS_HELP)
