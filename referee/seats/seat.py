"""The seam between the referee loop and a bot: a :class:`Seat`, and the :class:`Clock`
of its time limits.

:class:`referee.seats.process.BotProcess` is the seat of a bot program.  :class:`InProcessSeat`
runs a :class:`protocol.sdk.Bot` object in this process through the very same encoded
lines (for tests, and for a person's seat), so the referee loop cannot tell them apart.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import orjson

from protocol.messages import PROTOCOL_VERSION, MessageError, decode_line, encode_line

from .faults import BotFault, FaultKind, evidence


@runtime_checkable
class Seat(Protocol):
    """One bot as the referee loop speaks to it: protocol lines in, answers out.

    ``send_lines`` writes informational lines (encoded with :func:`encode_line`);
    ``request_lines`` writes lines of which the last is a request and returns
    ``(answer, elapsed_s)``.  Both raise :class:`BotFault` when the bot fails.
    """

    def start(self) -> None: ...
    def send_lines(self, lines: list[str]) -> None: ...
    def request_lines(self, lines: list[str], timeout_s: float | None) -> tuple[dict, float]: ...
    def close(self) -> None: ...
    def kill(self) -> None: ...  # end at once (after a fault: the bot is sent nothing more)

    @property
    def alive(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    @property
    def stderr_tail(self) -> str: ...
    @property
    def pid(self) -> int | None: ...


class ProcesslessSeat:
    """The parts of the :class:`Seat` interface that a seat with no process of its own
    shares: started once, closed or killed by a flag, no stderr, no pid."""

    def __init__(self) -> None:
        self._started = False
        self._closed = False

    @property
    def alive(self) -> bool:
        return self._started and not self._closed

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def stderr_tail(self) -> str:
        return ""

    @property
    def pid(self) -> int | None:
        return None

    def start(self) -> None:
        if self._started:
            raise RuntimeError(f"{type(self).__name__}.start() called twice")
        self._started = True

    def close(self) -> None:
        self._closed = True

    def kill(self) -> None:
        self._closed = True


class InProcessSeat(ProcesslessSeat):
    """A :class:`protocol.sdk.Bot` object behind the :class:`Seat` interface.

    Every line is decoded as a bot would decode it and the answer is encoded and goes
    through the same decoder as a process's answer.  An exception raised by the bot is an EXIT
    fault (its traceback is the evidence), charged at the next request if it was
    raised by an informational message.  A decision that took longer than the time
    allowed is a TIMEOUT fault: it cannot be broken off, so it is judged afterwards.
    """

    def __init__(self, bot, name: str = "in-process bot") -> None:
        super().__init__()
        self.bot = bot
        self.name = name
        self._failure: BotFault | None = None

    @property
    def alive(self) -> bool:
        return super().alive and self._failure is None

    def send_lines(self, lines: list[str]) -> None:
        self._usable()
        for line in lines:
            if self._failure is None:
                self._deliver(line)

    def request_lines(self, lines: list[str], timeout_s: float | None) -> tuple[dict, float]:
        self._usable()
        *before, request = lines
        self.send_lines(before)
        if self._failure is not None:
            raise self._failure
        start = time.monotonic()
        answer = self._deliver(request)
        elapsed = time.monotonic() - start
        if self._failure is not None:
            raise BotFault(self._failure.kind, self._failure.message, self._failure.evidence, elapsed)
        if answer is None:
            raise BotFault(FaultKind.UNEXPECTED, f"{self.name}: the last line was not a request", "", elapsed)
        if timeout_s is not None and elapsed > timeout_s:
            raise BotFault(FaultKind.TIMEOUT, f"{self.name}: answered after {elapsed:.3f} s, the limit is {timeout_s:g} s",
                           evidence(answer), elapsed)
        try:
            message = decode_line(answer.encode("utf-8"))
        except MessageError as exc:
            raise BotFault(FaultKind.MALFORMED, f"{self.name}: {exc}", evidence(answer), elapsed) from None
        return message, elapsed

    def _usable(self) -> None:
        if not self._started:
            raise RuntimeError("InProcessSeat used before start()")
        if self._closed:
            raise BotFault(FaultKind.EXIT, f"{self.name}: the seat was closed")

    def _deliver(self, line: str) -> str | None:
        """Hand one line to the bot, as :func:`protocol.sdk.run` would; its answer line, if any."""
        bot = self.bot
        try:
            msg = orjson.loads(line)  # the referee's own line: valid JSON
            kind = msg["type"]
            if kind == "request":
                action = bot.decide(msg["decision"], msg["view"], msg["legal"])
                return encode_line({"type": "action", "id": msg["id"], "action": action})
            if kind == "hello":
                bot.on_hello(msg)
                return encode_line({"type": "hello", "protocol": PROTOCOL_VERSION, "name": bot.name,
                                    "version": bot.version})
            hook = getattr(bot, "on_" + kind, None)
            if hook is not None:
                hook(msg)
        except Exception as exc:  # noqa: BLE001 - whatever the bot raises is its fault
            tail = "".join(traceback.format_exception(exc)[-3:])
            self._failure = BotFault(FaultKind.EXIT, f"{self.name}: the bot raised {type(exc).__name__}: {exc}",
                                     evidence(tail))
        return None


@dataclass
class Clock:
    """One seat's time for the decisions of a partie (PROTOCOL.md section 9).

    Without a bank each decision may take ``move_ms``.  With ``bank_ms`` the bank is
    first credited ``increment_ms`` at every decision, the decision may take the
    smaller of ``move_ms`` (0: no cap) and the bank, and the time it took is then
    taken from the bank.
    """

    move_ms: float
    bank_ms: float | None = None
    increment_ms: float = 0

    def limit_ms(self) -> float:
        """The time allowed for the next decision (0 once the bank is spent: the flag has fallen)."""
        if self.bank_ms is None:
            return self.move_ms
        bank = self.bank_ms + self.increment_ms
        return max(0.0, min(self.move_ms, bank) if self.move_ms else bank)

    def spend(self, ms: float) -> bool:
        """Charge one decision that took ``ms``; whether it stayed within :meth:`limit_ms`."""
        ok = ms <= self.limit_ms()
        if self.bank_ms is not None:
            self.bank_ms += self.increment_ms - ms
        return ok
