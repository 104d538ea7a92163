"""What a bot can do wrong: the kinds of fault (PROTOCOL.md section 10) and the
:class:`BotFault` that carries one, with its evidence cut to a bounded size."""

from __future__ import annotations

import enum
import signal

EVIDENCE_CHARS = 300  # evidence is cut to this many characters (at most 1,200 bytes of UTF-8), and says how long it was


class FaultKind(str, enum.Enum):
    """Why a bot failed to give a usable answer."""

    ILLEGAL = "illegal"  # used by the layer above
    MALFORMED = "malformed"  # line is not a JSON object / not UTF-8
    WRONG_ID = "wrong-id"  # used by the layer above
    UNEXPECTED = "unexpected"  # a line nobody asked for, or of the wrong type
    TIMEOUT = "timeout"  # no complete line within the limit
    EXIT = "exit"  # the process ended
    CLOSED = "closed"  # stdout reached EOF while the process still runs
    LINE_TOO_LONG = "line-too-long"
    START = "start"  # the program could not be started

    def __str__(self) -> str:  # "timeout" rather than "FaultKind.TIMEOUT"
        return self.value


def evidence(raw: bytes | bytearray | str | None) -> str:
    """The first 300 characters of ``raw``, with "…(N bytes)" (its whole length) if cut."""
    if not raw:
        return ""
    if isinstance(raw, str):
        if len(raw) <= EVIDENCE_CHARS:
            return raw
        return raw[:EVIDENCE_CHARS] + f"…({len(raw.encode('utf-8', 'replace'))} bytes)"
    head = bytes(raw[: EVIDENCE_CHARS * 4]).decode("utf-8", "replace")
    if len(raw) <= EVIDENCE_CHARS * 4 and len(head) <= EVIDENCE_CHARS:
        return head
    return head[:EVIDENCE_CHARS] + f"…({len(raw)} bytes)"


def tail_evidence(raw: bytes | bytearray) -> str:
    """The last 300 characters of ``raw`` (used for stderr output)."""
    text = bytes(raw).decode("utf-8", "replace")
    if len(text) <= EVIDENCE_CHARS:
        return text
    return f"…(last {EVIDENCE_CHARS} chars) " + text[-EVIDENCE_CHARS:]


class BotFault(Exception):
    """A bot did not produce a usable answer (or could not even run)."""

    def __init__(self, kind: FaultKind, message: str, evidence: str = "", elapsed: float = 0.0) -> None:
        super().__init__(f"{kind.value}: {message}")
        self.kind = FaultKind(kind)
        self.message = message
        self.evidence = evidence
        self.elapsed = elapsed

    def to_dict(self) -> dict:
        return {"kind": self.kind.value, "message": self.message, "evidence": self.evidence,
                "elapsed": round(self.elapsed, 6)}

    def __repr__(self) -> str:
        return (f"BotFault(kind={self.kind.value!r}, message={self.message!r}, "
                f"evidence={self.evidence!r}, elapsed={self.elapsed:.6f})")


def describe_returncode(rc: int | None) -> str:
    """How a bot process ended, from its return code (negative: the signal that killed it)."""
    if rc is None:
        return "bot process exited (status unknown)"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = "unknown"
        return f"bot process was killed by signal {-rc} ({name})"
    return f"bot process exited with return code {rc}"
