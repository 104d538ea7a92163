"""A seat played in-process by a :class:`protocol.sdk.Bot` (a person at the terminal, for one).

:class:`InProcessSeat` stands where the referee's :class:`~referee.match.Player`
would keep a :class:`~referee.process.BotProcess`: it takes the same encoded
protocol lines, decodes each one and calls the bot's hooks exactly as
:func:`protocol.sdk.run` would in a separate process, and hands back the bot's
answer as the dict the referee checks.  So an in-process seat is a protocol
player like any other: it sees the same messages, its answers are checked and
timed the same way, and a bad answer is the same fault.
"""

from __future__ import annotations

import time

from protocol import messages as M

from .process import BotFault, FaultKind, encode_line


class InProcessSeat:
    """The process API the referee's Player uses, played by a Bot object."""

    pid = None
    stderr_tail = ""

    def __init__(self, bot, name: str = "in-process seat"):
        self.bot = bot
        self.name = name
        self._started = False
        self._closed = False

    # ---------------------------------------------------------------- state
    @property
    def alive(self) -> bool:
        return self._started and not self._closed

    @property
    def closed(self) -> bool:
        return self._closed

    async def start(self) -> None:
        self._started = True

    async def close(self, grace: float = 0.5) -> None:
        self._closed = True

    def kill(self) -> None:
        self._closed = True

    # ---------------------------------------------------------------- messages
    async def send(self, message: dict, timeout: float | None = None) -> None:
        await self.send_lines([encode_line(message)], timeout)

    async def send_lines(self, lines: list[str], timeout: float | None = None) -> None:
        for line in lines:
            self._deliver(line)

    async def request(self, message: dict, timeout: float | None, preceding=()) -> tuple[dict, float]:
        return await self.request_lines([*map(encode_line, preceding), encode_line(message)], timeout)

    async def request_lines(self, lines: list[str], timeout: float | None) -> tuple[dict, float]:
        """Deliver ``lines``; the last one asks for an answer.  Returns the
        answer (decoded from the encoded line the bot would have written) and
        the seconds it took; a late answer is a timeout fault, a bot that
        raises is an exit fault."""
        start = time.perf_counter()
        if self._closed:
            raise BotFault(FaultKind.EXIT, f"{self.name}: the seat is closed")
        for line in lines[:-1]:
            self._deliver(line)
        answer = self._deliver(lines[-1])
        elapsed = time.perf_counter() - start
        if answer is None:
            raise BotFault(FaultKind.UNEXPECTED, f"{self.name}: the last line asked for no answer", lines[-1][:300], elapsed)
        if timeout is not None and elapsed > timeout:
            raise BotFault(FaultKind.TIMEOUT, f"{self.name}: no answer within {timeout:g} s", "", elapsed)
        return answer, elapsed

    def _deliver(self, line: str) -> dict | None:
        """One line to the bot, as :func:`protocol.sdk.run` would pass it; the answer if it asks for one."""
        if self._closed:
            return None
        msg = M.decode(line)
        t = msg.get("type")
        bot = self.bot
        try:
            if t == "hello":
                bot.on_hello(msg)
                reply = {"type": "hello", "protocol": M.PROTOCOL_VERSION, "name": bot.name, "version": bot.version}
            elif t == "request":
                reply = {"type": "action", "id": msg["id"], "action": bot.decide(msg["decision"], msg["view"], msg["legal"])}
            elif t == "bye":
                self._closed = True
                return None
            else:
                hook = getattr(bot, "on_" + str(t), None)
                if hook is not None:
                    hook(msg)
                return None
        except Exception as e:  # a bot that raises is a bot that died (KeyboardInterrupt passes through)
            self._closed = True
            raise BotFault(FaultKind.EXIT, f"{self.name}: the bot raised {e!r}") from e
        try:
            return M.decode(encode_line(reply))  # exactly what a process would have written and been read
        except (TypeError, ValueError) as e:
            raise BotFault(FaultKind.MALFORMED, f"{self.name}: the answer is not JSON ({e})", repr(reply)[:300]) from e

