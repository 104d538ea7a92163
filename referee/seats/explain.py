"""Fault messages that explain themselves (for bot authors).

A fault (R12.1) is recorded in the log with its kind and evidence; this module
turns one into the text a person reads on the console and in the tables: who
(the bot's name and seat), where (partie and deal), what (the kind and the
offending line, shortened), the last lines of the bot's stderr and where the
whole of it is kept, and a hint for the usual cause.  Pure functions over plain
values, so the referee, ``marias check`` and ``marias replay`` say the same.
"""

from __future__ import annotations

import difflib
import unicodedata
from dataclasses import dataclass, field

#: How much of an offending line a message shows.
EVIDENCE_CHARS = 160
#: How many stderr lines a message shows.
STDERR_LINES = 5

_FLUSH = ("answer not flushed: flush stdout after every line "
          "(Python: print(..., flush=True); C: fflush(stdout); Java: System.out.flush(); Perl: $| = 1; "
          "Node: process.stdout.write is fine, console.log too)")


@dataclass(frozen=True)
class FaultContext:
    """Everything a fault message may mention; only ``kind`` and ``message`` are required."""

    kind: str
    message: str
    bot: str = ""
    seat: int | None = None
    partie: int | None = None
    deal: int | None = None
    evidence: str = ""
    elapsed_s: float | None = None
    limit_ms: float | None = None
    #: ``"startup"`` while the bot is starting and answering ``hello``, else ``"move"``.
    phase: str = "move"
    #: The rule the answer breaks, as the engine explains it (``"R7.2: must follow suit …"``).
    rule: str | None = None
    legal: tuple[str, ...] = field(default_factory=tuple)
    stderr_tail: str = ""
    stderr_path: str | None = None


def shorten(text: str, limit: int = EVIDENCE_CHARS) -> str:
    """``text`` on one line with control characters escaped, cut to ``limit`` characters."""
    text = printable(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text)} chars)"


def printable(text: str, *, keep_lines: bool = False) -> str:
    """Control characters (escape sequences, newlines) shown as ``\\x1b``, ``\\n``, …, never sent raw.

    ``keep_lines``: newlines and tabs stay (a multi-line stderr tail), everything else is escaped.
    The one place bot-supplied text is made safe for a terminal."""
    out = []
    for ch in text:
        if keep_lines and ch in "\n\t":
            out.append(ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif unicodedata.category(ch) in ("Cc", "Cf") or ch in "\u2028\u2029":
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def _fold(text: str) -> str:
    """Lower case without diacritics: ``dobrá`` and ``Dobra`` both give ``dobra``."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower().strip()


def near_miss(answer: str, legal: tuple[str, ...] | list[str]) -> str | None:
    """The legal action the author probably meant, or None.

    Exact matches after folding case and diacritics come first (``dobrá`` →
    ``dobra``, ``PLAY:KH`` → ``play:Kh``), then the same card in another notation
    (``Kh`` → ``play:Kh``, ``play:10h`` → ``play:Xh``, ``play:A♥`` → ``play:Ah``; a
    talon's two cards in the other order), then — for word actions only — the closest
    spelling.  A card action is never guessed by its spelling: ``play:Ah`` is not a
    misspelt ``play:Xa`` but another card, which the rule and the legal list explain.
    """
    if not answer or not legal:
        return None
    folded = _fold(answer)
    by_fold = {_fold(a): a for a in legal}
    if folded in by_fold and by_fold[folded] != answer:
        return by_fold[folded]
    cards = _card_form(answer)
    if cards is not None:
        kind, codes = cards
        same = [a for a in legal if (f := _card_form(a)) is not None and sorted(f[1]) == sorted(codes)
                and (kind is None or f[0] == kind)]
        same.sort(key=lambda a: _card_form(a)[1] != codes)  # the same order first
        return same[0] if same and same[0] != answer else None
    words = [a for a in legal if _card_form(a) is None]
    close = difflib.get_close_matches(folded, [_fold(a) for a in words], n=1, cutoff=0.75)
    if close and by_fold[close[0]] != answer:
        return by_fold[close[0]]
    return None


#: Card codes as written in the protocol and as people write them: ``Xh``/``10h``, ``A♥`` (the
#: terminal's symbols for the German suits: ♥ červené, ♠ zelené, ♦ kule, ♣ žaludy).
_SUIT_OF = {"h": "h", "l": "l", "b": "b", "a": "a", "♥": "h", "♠": "l", "♦": "b", "♣": "a"}
_RANK_OF = {"7": "7", "8": "8", "9": "9", "10": "X", "x": "X", "u": "U", "o": "O", "k": "K", "a": "A"}


def _card(token: str) -> str | None:
    """``token`` (folded) as a protocol card code, or None when it is no card."""
    token = token.strip()
    if len(token) < 2 or token[-1] not in _SUIT_OF or token[:-1] not in _RANK_OF:
        return None
    return _RANK_OF[token[:-1]] + _SUIT_OF[token[-1]]


def _card_form(text: str) -> tuple[str | None, tuple[str, ...]] | None:
    """An action that names cards, as (its kind or None, its cards as protocol codes): ``play:10h``
    → ``("play", ("Xh",))``, ``Ah`` → ``(None, ("Ah",))``; None for an action of words."""
    kind, sep, rest = _fold(text).rpartition(":") if ":" in text else ("", "", _fold(text))
    codes = tuple(_card(t) for t in rest.split(",")) if rest else ()
    if not codes or None in codes:
        return None
    return (kind or None) if sep else None, codes


def _answer_text(evidence: str) -> str | None:
    """The ``action`` field of a logged answer, when the evidence is one."""
    import json

    try:
        obj = json.loads(evidence)
    except (ValueError, TypeError):
        return None
    if isinstance(obj, dict) and isinstance(obj.get("action"), str):
        return obj["action"]
    return None


def hint(ctx: FaultContext) -> str | None:
    """The usual cause of this kind of fault and what to change, or None."""
    kind = ctx.kind
    limit = f"{ctx.limit_ms:g} ms" if ctx.limit_ms is not None else "the limit"
    if kind == "timeout":
        which = "start-up limit" if ctx.phase == "startup" else "move limit"
        option = "--startup-time" if ctx.phase == "startup" else "--move-time"
        what = "hello answer" if ctx.phase == "startup" else "complete line"
        if ctx.evidence:  # bytes arrived, but no newline: the line was never ended (or its end never flushed)
            return (f"part of an answer arrived within the {which} ({limit}, {option}) but no newline: end every "
                    f"answer with a newline and then flush; {_FLUSH}")
        slow = ("the bot starts more slowly than the limit (raise --startup-time)" if ctx.phase == "startup"
                else "the bot thinks too long (answer sooner, or give it a larger --move-time)")
        return (f"no {what} within the {which} ({limit}, {option}) and nothing of one arrived on the pipe: "
                f"{slow}; if it never answers at all, an unflushed stdout is the usual cause: {_FLUSH}")
    if kind == "malformed":
        return "every line on stdout must be one JSON object: debug output belongs on stderr"
    if kind == "line-too-long":
        return "the answer line is longer than the referee accepts: answer with one short JSON object"
    if kind == "wrong-id":
        return "answer each request exactly once, with the request's own id (an integer), and never before the request"
    if kind == "unexpected":
        return "answer a request with {\"type\": \"action\", \"id\": …, \"action\": …} and hello with a hello answer"
    if kind == "illegal":
        offered = ", ".join(ctx.legal[:12]) + (f", … ({len(ctx.legal)} in all)" if len(ctx.legal) > 12 else "")
        text = f"answer one of the legal actions offered: {offered}" if ctx.legal else "answer one of the legal actions in the request"
        meant = near_miss(_answer_text(ctx.evidence) or "", ctx.legal)
        if meant:
            text = f"did you mean {meant!r}? " + text
        return text
    if kind == "exit":
        return "the bot ended: its stderr above usually says why (an exception, a missing file or library)"
    if kind == "closed":
        return "the bot closed its stdout but kept running: keep stdout open until bye"
    if kind == "start":
        return "the program could not be started: check the command, its path and that it is executable"
    return None


def _stderr_lines(tail: str, n: int = STDERR_LINES) -> list[str]:
    lines = [line for line in tail.splitlines() if line.strip()]
    return [shorten(line, 200) for line in lines[-n:]]


def describe(ctx: FaultContext) -> str:
    """A fault as a few lines of text: headline, evidence, rule, stderr tail, hint.

    >>> print(describe(FaultContext("malformed", "line is not valid JSON", bot="mybot", seat=1,
    ...                             partie=1, deal=3, evidence="thinking...")))
    fault: mybot (seat 1), partie 1 deal 3: malformed: line is not valid JSON
      line: thinking...
      hint: every line on stdout must be one JSON object: debug output belongs on stderr
    """
    who = ctx.bot or "bot"
    if ctx.seat is not None:
        who += f" (seat {ctx.seat})"
    where = ""
    if ctx.partie is not None:
        where = f", partie {ctx.partie}" + (f" deal {ctx.deal}" if ctx.deal is not None else "")
    head = f"fault: {printable(who)}{where}: {ctx.kind}: {printable(ctx.message)}"
    lines = [head]
    if ctx.evidence:
        lines.append(f"  line: {shorten(ctx.evidence)}")
    if ctx.rule:
        lines.append(f"  rule: {printable(ctx.rule)}")
    stderr = _stderr_lines(ctx.stderr_tail)
    if stderr:
        lines.append("  stderr (last lines):")
        lines += [f"    {line}" for line in stderr]
    if ctx.stderr_path:
        lines.append(f"  full stderr: {ctx.stderr_path}")
    h = hint(ctx)
    if h:
        lines.append(f"  hint: {h}")
    return "\n".join(lines)
