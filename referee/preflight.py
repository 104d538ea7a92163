"""The pre-flight check: before the first deal, every bot must exist, start and answer hello.

A bot whose program is missing would otherwise "play" a whole match of faults
(and, before R12.3's forfeit, be credited with the robot's groše).  So
``marias match`` and ``marias tournament`` first check each bot:

1. the program and every file its arguments name exist (:func:`referee.identity.missing_paths`;
   a missing working folder too);
2. it starts and answers ``hello`` (protocol/PROTOCOL.md) within its start-up limit.

Each problem names the bot, its command and the tail of what it wrote to stderr.
The check starts the bot the way the referee does (its own session, the given
working folder and environment, stdin/stdout pipes) and ends its whole process
group afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import time
from typing import TYPE_CHECKING

from .identity import missing_paths

if TYPE_CHECKING:
    from .match import BotSpec, Limits
    from .sandbox import SandboxConfig

STDERR_TAIL = 1200  # characters of the bot's stderr quoted in a problem
MAX_ANSWER = 64 * 1024  # a hello answer longer than this is refused


class PreflightError(RuntimeError):
    """One or more bots cannot play; ``problems`` holds one message per bot."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def printable(text: str) -> str:
    """Bot-supplied text made safe for a terminal, its line breaks kept (:func:`referee.explain.printable`)."""
    from .explain import printable as escaped

    return escaped(text, keep_lines=True)


def command_text(spec: "BotSpec") -> str:
    return f"builtin:{spec.builtin}" if spec.builtin else shlex.join(spec.argv)


def static_problems(spec: "BotSpec") -> list[str]:
    """What is missing before the bot can even be started."""
    if spec.cwd and not os.path.isdir(spec.cwd):
        return [f"the working folder {spec.cwd!r} does not exist"]
    if spec.builtin:
        return []
    return missing_paths(spec.argv, spec.cwd)


def bot_sandbox(spec: "BotSpec", sandbox: "SandboxConfig | None") -> "SandboxConfig | None":
    """The sandbox of ``spec`` under the match's ``sandbox``: its own limits over the match's, its
    working folder, and (for a built-in) its package folders shown read-only, as the referee does."""
    if sandbox is None:
        return None
    from dataclasses import replace

    from .match import shown_folders

    limits = sandbox.limits.merged(memory_mb=spec.memory_mb, processes=spec.processes, cpu_s=spec.cpu_s,
                                   file_mb=spec.file_mb)
    workdir = os.path.abspath(os.path.join(spec.cwd or ".", spec.workdir)) if spec.workdir else None
    return replace(sandbox, limits=limits, workdir=workdir, show=shown_folders(spec))


def launch(spec: "BotSpec", stderr, sandbox: "SandboxConfig | None" = None):
    """Start ``spec`` for the check as the referee starts a bot: its own session, its working folder
    and environment, stdin/stdout pipes, ``stderr`` to the given file, inside its sandbox
    (:func:`referee.sandbox.launch`).  Returns the process and what to call once it has ended."""
    env = None
    if spec.env:
        env = dict(os.environ)
        env.update(spec.env)
    config = bot_sandbox(spec, sandbox)
    if config is None:
        proc = subprocess.Popen(spec.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                cwd=spec.cwd, env=env, start_new_session=True, close_fds=True, bufsize=0)
        return proc, (lambda: None)
    from .sandbox import launch as sandbox_launch

    how = sandbox_launch(spec.argv, spec.cwd, env, config)
    try:
        proc = subprocess.Popen(how.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                cwd=how.cwd, env=how.env, preexec_fn=how.preexec_fn, pass_fds=how.pass_fds,
                                start_new_session=True, close_fds=True, bufsize=0)
    except BaseException:
        how.cleanup()
        raise
    return proc, how.cleanup


class _Probe:
    """One bot started for the check."""

    def __init__(self, spec: "BotSpec", limits: dict, sandbox: "SandboxConfig | None" = None):
        self.spec = spec
        self.limits = limits
        self.sandbox = sandbox
        self.cleanup = lambda: None
        self.err = tempfile.TemporaryFile()
        self.proc: subprocess.Popen | None = None
        self.buf = b""
        self.answer: dict | None = None
        self.problem: str | None = None
        self.deadline = 0.0

    def start(self) -> None:
        from protocol import messages as M

        from . import __version__

        from .sandbox import SandboxUnavailable

        try:
            self.proc, self.cleanup = launch(self.spec, self.err, self.sandbox)
        except (OSError, ValueError, SandboxUnavailable) as e:
            self.problem = f"cannot start: {getattr(e, 'strerror', None) or e}"
            return
        self.deadline = time.monotonic() + self.limits["startup_ms"] / 1000
        line = json.dumps(M.hello(__version__, self.limits), separators=(",", ":"), ensure_ascii=False) + "\n"
        with contextlib.suppress(OSError):  # it died already: seen as no answer below
            os.write(self.proc.stdin.fileno(), line.encode())  # os.write: a pool worker notes who is starting
        os.set_blocking(self.proc.stdout.fileno(), False)

    def on_readable(self) -> bool:
        """Read what is there; True when this probe is finished."""
        try:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            try:
                rc = self.proc.wait(0.5)  # stdout closed: its exit status follows at once, if it exited
            except subprocess.TimeoutExpired:
                rc = None
            self.problem = "it ended before answering hello" + (f" (exit status {rc})" if rc is not None else
                                                                " (it closed its stdout)")
            return True
        self.buf += chunk
        if b"\n" not in self.buf:
            if len(self.buf) > MAX_ANSWER:
                self.problem = f"its hello answer is longer than {MAX_ANSWER} bytes"
                return True
            return False
        line = self.buf.split(b"\n", 1)[0]
        try:
            msg = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self.problem = f"its answer to hello is not JSON: {printable(line[:200].decode('utf-8', 'replace'))!r}"
            return True
        from protocol import messages as M

        if not isinstance(msg, dict) or msg.get("type") != "hello":
            kind = msg.get("type") if isinstance(msg, dict) else type(msg).__name__
            self.problem = f"it answered hello with {printable(str(kind))!r}, not a hello"
        elif msg.get("protocol") != M.PROTOCOL_VERSION:
            self.problem = f"it speaks protocol {printable(repr(msg.get('protocol')))}, the referee {M.PROTOCOL_VERSION}"
        else:
            self.answer = msg
        return True

    def timed_out(self) -> None:
        self.problem = f"no hello answer within the start-up limit ({self.limits['startup_ms']} ms)"

    def end(self) -> None:
        if self.proc is None:
            self.err.close()
            return
        with contextlib.suppress(OSError):
            if self.answer is not None:
                self.proc.stdin.write(b'{"type":"bye"}\n')
        for f in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                f.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(0.5 if self.answer is not None else 0)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # the whole group: whatever the bot started
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        self.cleanup()  # the sandbox's leftovers: whatever the bot started, its cgroup and folder

    def stderr_tail(self) -> str:
        try:
            self.err.seek(0, os.SEEK_END)
            size = self.err.tell()
            self.err.seek(max(0, size - 4 * STDERR_TAIL))
            text = self.err.read().decode("utf-8", "replace")
        except OSError:
            return ""
        finally:
            self.err.close()
        return printable(text[-STDERR_TAIL:].strip())


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
    """Start one bot, tell it hello and wait for its answer: (the problem or None, its stderr tail)."""
    p = _Probe(spec, limits, sandbox)
    sel = selectors.DefaultSelector()
    try:
        p.start()
        if p.problem is None:
            sel.register(p.proc.stdout, selectors.EVENT_READ)
            while True:
                left = p.deadline - time.monotonic()
                if left <= 0:
                    p.timed_out()
                    break
                if sel.select(left) and p.on_readable():
                    break
    finally:
        sel.close()
        p.end()
    tail = p.stderr_tail()
    return p.problem, tail


def check_bots_apart(specs: list["BotSpec"], limits: "Limits", sandbox: "SandboxConfig | None" = None) -> list[str]:
    """:func:`check_bots` in a worker process of its own (:mod:`referee.pool`): a bot that kills or
    stops the process that started it ends that worker, not the referee, and is named."""
    from .pool import Pool, Task

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
