"""The pre-flight check: before the first deal, every bot must exist, start and answer hello.

A bot whose program is missing would otherwise "play" a whole match of faults
(and, before R12.3's forfeit, be credited with the robot's groše).  So
``marias match`` and ``marias tournament`` first check each bot:

1. the program and every file its arguments name exist (:func:`referee.seats.identity.missing_paths`;
   a missing working folder too);
2. it starts and answers ``hello`` (protocol/PROTOCOL.md) within its start-up limit.

Each problem names the bot, its command and the tail of what it wrote to stderr.
The check starts the bot the way the referee does, with the referee's own
:class:`referee.seats.process.BotProcess` (its own session, the given working folder and
environment, its sandbox) and ends its whole process group afterwards.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import time
from typing import TYPE_CHECKING

from ..seats.identity import missing_paths

if TYPE_CHECKING:
    from .match import BotSpec, Limits
    from ..seats.sandbox import SandboxConfig

STDERR_TAIL = 1200  # characters of the bot's stderr quoted in a problem
MAX_ANSWER = 64 * 1024  # a hello answer longer than this is refused


def printable(text: str) -> str:
    """Bot-supplied text made safe for a terminal, its line breaks kept (:func:`referee.seats.explain.printable`)."""
    from ..seats.explain import printable as escaped

    return escaped(text, keep_lines=True)


def command_text(spec: "BotSpec") -> str:
    return f"builtin:{spec.builtin}" if spec.builtin else shlex.join(spec.argv)


def static_problems(spec: "BotSpec") -> list[str]:
    """What is missing before the bot can even be started."""
    if spec.cwd and not os.path.isdir(spec.cwd):
        return [f"the working folder {spec.cwd!r} does not exist"]
    if spec.builtin:
        return []
    problems = missing_paths(spec.argv, spec.cwd)
    if problems and len(spec.argv) == 1 and os.sep not in spec.argv[0]:
        import difflib

        from .match import BUILTIN_BOTS

        close = difflib.get_close_matches(spec.argv[0], BUILTIN_BOTS, n=1, cutoff=0.6)
        if close:
            problems[0] += f"; did you mean the built-in bot {close[0]!r}?"
    return problems


def bot_sandbox(spec: "BotSpec", sandbox: "SandboxConfig | None") -> "SandboxConfig | None":
    """The sandbox of ``spec`` under the match's ``sandbox``: its own limits over the match's, its
    working folder, and (for a built-in) its package folders shown read-only, as the referee does."""
    if sandbox is None:
        return None
    from dataclasses import replace

    from .match import shown_folders

    from ..seats.resources import LIMIT_KEYS

    limits = sandbox.limits.merged(**{k: getattr(spec, k) for k in LIMIT_KEYS})
    workdir = os.path.abspath(os.path.join(spec.cwd or ".", spec.workdir)) if spec.workdir else None
    return replace(sandbox, limits=limits, workdir=workdir, show=shown_folders(spec))


def check_bots(specs: list["BotSpec"], limits: "Limits", *, start: bool = True,
               sandbox: "SandboxConfig | None" = None) -> list[str]:
    """Problems with ``specs`` (empty when every bot is ready), each naming the bot, its command
    and its stderr tail.  The bots are started one at a time (so that a bot that attacks the
    checking process is known), in the match's ``sandbox`` as they will play, and each is ended
    after its answer."""
    problems: list[str] = []
    for spec in specs:
        static = static_problems(spec)
        if static:
            problems.append(_message(spec, "; ".join(static), ""))
        elif start:
            from .match import bot_limits

            problem, tail = _probe(spec, bot_limits(spec, limits), sandbox)
            if problem is not None:
                problems.append(_message(spec, problem, tail))
    return problems


def _probe(spec: "BotSpec", limits: dict, sandbox: "SandboxConfig | None" = None) -> tuple[str | None, str]:
    """Start one bot as the referee starts it (a :class:`~referee.seats.process.BotProcess` in its
    sandbox), tell it hello and wait for its answer within its start-up limit, counted from the
    start; then bye and close (its whole process group).  Returns (the problem or None, its stderr tail)."""
    from protocol import messages as M

    from .. import __version__
    from ..seats.faults import BotFault
    from ..seats.process import BotCommand, BotProcess, encode_line

    bot = BotProcess(BotCommand(list(spec.argv), spec.cwd, spec.env or None, bot_sandbox(spec, sandbox)),
                     name=spec.label, max_line=MAX_ANSWER, stderr_cap=0)
    problem = None
    t0 = time.monotonic()
    try:
        bot.start()
        left = max(0.0, limits["startup_ms"] / 1000 - (time.monotonic() - t0))
        answer, _ = bot.request_lines([encode_line(M.hello(__version__, limits))], left)
        if answer.get("type") != "hello":
            problem = f"it answered hello with {printable(str(answer.get('type')))!r}, not a hello"
        elif answer.get("protocol") != M.PROTOCOL_VERSION:
            problem = f"it speaks protocol {printable(repr(answer.get('protocol')))}, the referee {M.PROTOCOL_VERSION}"
        else:
            with contextlib.suppress(BotFault):
                bot.send_lines([encode_line(M.BYE)])
    except BotFault as f:
        problem = _problem(f, bot, limits)
    finally:
        bot.close(grace=0.5 if problem is None else 0)
    return problem, printable(bot.stderr_tail[-STDERR_TAIL:].strip())


def _problem(f, bot, limits: dict) -> str:
    """What a fault at start-up or hello means, said for a bot author."""
    from ..seats.faults import FaultKind

    kind = f.kind
    if kind is FaultKind.START:
        return f.message.split(": ", 1)[-1]
    if kind is FaultKind.TIMEOUT:
        return f"no hello answer within the start-up limit ({limits['startup_ms']} ms)"
    if kind in (FaultKind.EXIT, FaultKind.CLOSED):
        rc = bot.returncode
        how = (" (it closed its stdout)" if kind is FaultKind.CLOSED else
               f" (exit status {rc})" if rc is not None and rc >= 0 else
               f" (killed by signal {-rc})" if rc is not None else "")
        return "it ended before answering hello" + how
    if kind is FaultKind.LINE_TOO_LONG:
        return f"its hello answer is longer than {MAX_ANSWER} bytes"
    if kind is FaultKind.MALFORMED:
        return f"its answer to hello is not JSON: {printable(f.evidence[:200])!r}"
    return f"{kind.value}: {printable(f.message)}"


def check_bots_apart(specs: list["BotSpec"], limits: "Limits", sandbox: "SandboxConfig | None" = None) -> list[str]:
    """:func:`check_bots` in a worker process of its own (:mod:`referee.seats.pool`): a bot that kills or
    stops the process that started it ends that worker, not the referee, and is named."""
    from ..seats.pool import Pool, Task

    startup = max((s.startup_ms or limits.startup_ms) for s in specs) if specs else limits.startup_ms
    task = Task("pre-flight", (specs, limits, sandbox), wall_s=startup / 1000 + 30,
                seats=tuple(s.label for s in specs), argvs=tuple(tuple(s.argv) for s in specs))
    outcomes = []
    Pool(lambda job: check_bots(job[0], job[1], sandbox=job[2]), 1, retries=0).run([task], outcomes.append)
    o = outcomes[0]
    if o.ok:
        return o.result
    if o.culprit:
        return [f"bot {printable(o.culprit)}: the pre-flight check {o.describe()}"]
    return [f"the pre-flight check of the bots failed: {o.describe()}"]


def _message(spec: "BotSpec", problem: str, tail: str) -> str:
    where = f" in {spec.cwd}" if spec.cwd else ""
    text = f"bot {printable(spec.label)!r} ({command_text(spec)}{where}): {problem}"
    if tail:
        text += "\n    its stderr ends with:\n    " + tail.replace("\n", "\n    ")
    return text
