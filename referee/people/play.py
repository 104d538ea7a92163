"""``marias play``: a person plays one seat against two bots, under the match referee.

The person's seat is a :class:`referee.people.human.Human` bot, played in-process
(``BotSpec.bot``): the referee, the rules, the time checks, the log and its
validation are exactly those of ``marias match``.  Stopping early (Ctrl-C,
``quit`` or the end of the input) closes the bots and leaves the log without
its footer, so ``marias validate`` reports it as incomplete, never as a result.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sys
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from ..rules.cards import Card
from .human import Human
from ..matches.match import BotSpec, Limits, MatchConfig, MatchResult, run_match
from ..matches.secrecy import PUBLIC, SECRET
from ..rules.partie import seed_sha256

#: The person's time per decision when ``move_ms`` is not given: a day, i.e. none in practice.
NO_LIMIT_MS = 86_400_000


@dataclass
class PlayResult:
    seat: int
    result: MatchResult | None  # None when the person stopped the match
    log_path: Path | None
    interrupted: bool = False


def _raise_interrupt(signum, frame):  # the default behaviour, as a handler of our own (see run_play)
    raise KeyboardInterrupt


@contextlib.contextmanager
def _interrupt_as_exception():
    """Ctrl-C raises KeyboardInterrupt where the person is reading, whatever SIGINT handler the
    caller had installed (a tournament worker, a test harness)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def run_play(bots: list[str], *, seat: int = 0, partie: int = 1, seed: str | int = "1", secret: bool = False,
             decks: list[list[Card]] | None = None, log_dir: Path | None = None, move_ms: int | None = None,
             bot_move_ms: int = 2000, plain: bool = False, inp: IO[str] | None = None,
             out: IO[str] | None = None, name: str = "person") -> PlayResult:
    """Play ``partie`` partie with the person at ``seat`` and ``bots`` (two: built-in names or
    command lines) in the other seats, in order.  ``move_ms``: the person's time per decision
    (None: no limit).  ``inp``/``out``: the person's streams (default stdin/stdout)."""
    if seat not in (0, 1, 2):
        raise ValueError(f"the seat is 0, 1 or 2, not {seat}")
    if len(bots) != 2:
        raise ValueError(f"give two bots for the other seats, got {len(bots)}")
    out = out or sys.stdout
    human = Human(inp, out, color=False if plain else None, move_ms=move_ms, name=name)
    others = iter(bots)
    specs = []
    for s in range(3):
        if s == seat:
            specs.append(BotSpec(label=name, argv=[], builtin="person", bot=human,
                                 move_ms=move_ms if move_ms is not None else NO_LIMIT_MS))
        else:
            spec = BotSpec.parse(next(others), seed=f"{seed}:{s}")
            program = spec.argv[0]
            if spec.builtin is None and not (shutil.which(program) or os.path.isfile(program)):
                raise ValueError(f"no program {program!r} to run for seat {s} (not a built-in bot: random, robot)")
            specs.append(spec)
    log_path = None
    if log_dir is not None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        # a secret seed is not put in the file name (it deals every hand)
        tag = f"c{seed_sha256(str(seed))[:8]}" if secret else f"s{seed}"
        log_path = Path(log_dir) / f"play-{stamp}-{tag}.jsonl"
    config = MatchConfig(bots=specs, partie=partie, seed=seed, decks=decks,
                         limits=Limits(move_ms=bot_move_ms), log_path=log_path,
                         seed_kind=SECRET if secret else PUBLIC)

    def progress(line: str) -> None:
        if not re.match(r"partie \d+: \[", line):  # the partie totals: the person's seat shows them
            human.say(f"  referee: {line}")

    try:
        with _interrupt_as_exception():
            result = run_match(config, progress)
    except KeyboardInterrupt:
        return PlayResult(seat, None, log_path, interrupted=True)
    return PlayResult(seat, result, log_path)
