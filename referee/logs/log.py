"""Game logs: one JSON Lines file per match (see protocol/LOGS.md).

A log is a sequence of complete JSON objects, one per line:

``header``        once, first: format, versions, the seed's SHA-256, the bots, limits,
                  fault policy;
``partie_start``  per partie: where its first deck comes from (the seed or a deck book);
``deal``          per deal, one complete line written when the deal is over: the deck
                  before the deal, the cut, every decision, the tricks, hlášky, laid
                  cards, faults and the settlement;
``forfeit``       after the deal in which a bot reached its last allowed fault (R12.3);
``partie_end``    per partie: totals and places (R9.7);
``footer``        once, last: the match totals, the seed, ``"complete": true``.

No card and no seed is written before its deal is over: the seed (from which every
deck and cut follows) is revealed in the footer, the header holds only its SHA-256.

Every line ends with a ``chain`` field, the hash chain of the seal (see
:func:`seal_line`); the footer's is the final hash and may be signed (Ed25519).

Every line is written whole and the file is flushed and fsynced after each
deal, so a match killed mid-deal leaves a log whose finished deals are valid;
its missing ``partie_end``/``footer`` (or a half line) marks it incomplete.
Log files are created exclusively (never overwritten), mode 0600, in folders
created 0700.  While it writes, a :class:`LogWriter` holds an exclusive ``flock`` on its
file, from before the header until the footer (or until it stops, or its process dies): a
reader that must not see a match in progress (``marias serve``) opens the log with
:func:`open_log`, which refuses a log so held (:class:`BeingWritten`) without waiting.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import stat
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

from ..rules.cards import SUIT_CODES
from ..rules.partie import Partie, partie_seed, places, seed_sha256
from . import files
from .seal import GENESIS, load_signing_key, make_private_dir, public_key_text, seal_line

if TYPE_CHECKING:
    from protocol.sdk import Bot

    from ..rules.deal import Deal

FORMAT = "marias-log"
FORMAT_VERSION = 2
#: The rulebook these logs follow: the date it was fixed and the start of the
#: sha256 of RULES.md (R1–R12) at that time; tests/test_log.py checks it still matches.
RULES_VERSION = "2026-12-01 sha256:4078bc8b3f96"
DEALS_PER_PARTIE = 12
BLOCKS = (7, 5, 5, 5, 5, 5)

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

# ------------------------------------------------------------------ the seal (referee/logs/seal.py)

def sealed_lines(records, signer=None) -> list[str]:
    """Lines (without newlines) for ``records`` as :class:`LogWriter` writes them, each
    record's own ``chain``/``signature`` fields dropped first; ``signer`` signs the last."""
    out, prev = [], GENESIS
    for i, rec in enumerate(records):
        rec = {k: v for k, v in rec.items() if k not in ("chain", "signature")}
        line, prev = seal_line(prev, _dumps(rec), signer if i == len(records) - 1 else None)
        out.append(line)
    return out


# ------------------------------------------------------------------ files: private, exclusive, safe names

def safe_name(text, max_len: int = 40) -> str:
    """``text`` made safe inside a file name: letters, digits, ``_ . -`` kept, everything
    else (``/``, spaces, control characters) replaced by ``_``; at most ``max_len`` characters."""
    out = re.sub(r"[^A-Za-z0-9_.-]", "_", str(text))[:max_len]
    return out.replace("..", "__") or "_"


def reserve_log_path(folder, stem: str, suffix: str = ".jsonl") -> Path:
    """A fresh log file ``folder/STEM.jsonl`` (or ``STEM-2.jsonl``, ``-3``, ... when taken),
    created empty, exclusively and mode 0600, so that two matches never share a file.
    ``stem`` must already be a safe name (:func:`safe_name`)."""
    folder = make_private_dir(folder)
    if "/" in stem or stem in ("", ".", ".."):
        raise ValueError(f"unsafe log file name {stem!r}")
    for k in range(1, 10_000):
        path = folder / (f"{stem}{suffix}" if k == 1 else f"{stem}-{k}{suffix}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        os.close(fd)
        return path
    raise FileExistsError(f"no free log file name for {stem!r} in {folder}")


def _open_exclusive(path: Path) -> int:
    """Open a new log file for writing: created exclusively (mode 0600), or an empty
    file reserved by :func:`reserve_log_path`; an existing log is never overwritten."""
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_size == 0 and st.st_uid == os.getuid():
            os.fchmod(fd, 0o600)
            return fd
        os.close(fd)
        raise FileExistsError(f"{path} exists; a log is never overwritten (choose another name)") from None


def _hold(fd: int) -> None:
    """Take the writer's exclusive lock on a new log (released when the file is closed, or when the
    process dies).  A reader holds its shared lock only while it reads a log no writer holds (a
    new one is empty, so that is an instant): the wait is short.  On a file system without
    ``flock`` the log is written all the same, unmarked."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        pass


class BeingWritten(OSError):
    """A log a :class:`LogWriter` is writing now (its match is still being played)."""

    def __init__(self, path):
        super().__init__(errno.EBUSY, "its match is still being played: the log is shown when it ends", str(path))


def open_log(path, *, max_bytes: int | None = None):
    """A log opened for reading (binary) when no :class:`LogWriter` of any process is writing it:
    a regular file (:func:`referee.logs.files.open_regular`) on which a shared lock is taken
    without waiting and kept until the file is closed, so no writer starts on it meanwhile.
    :class:`BeingWritten` when a writer holds it (a log whose writer died is not held: it is read,
    and shows as incomplete)."""
    f = files.open_regular(path, max_bytes=max_bytes)
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        raise BeingWritten(path) from None
    except OSError:
        pass  # no flock here: nothing is marked
    return f


def being_written(path) -> bool:
    """Whether a :class:`LogWriter` of any process is writing the log ``path`` now (never waits)."""
    try:
        open_log(path).close()
    except BeingWritten:
        return True
    except OSError:
        pass
    return False


def referee_version() -> str:
    try:
        from importlib.metadata import version
        return version("marias")
    except Exception:  # not installed as a distribution
        return "0.1.0"


def dealt_hands(deck: Sequence, forhont: int) -> list[list]:
    """R2.6: the three hands dealt from ``deck`` (top first) in blocks 7-5-5-5-5-5."""
    order = (forhont, (forhont + 1) % 3, (forhont + 2) % 3)
    hands: list[list] = [[], [], []]
    pos = 0
    for block, size in enumerate(BLOCKS):
        hands[order[block % 3]].extend(deck[pos:pos + size])
        pos += size
    return hands


def decision_kinds(history) -> list[str]:
    """The decision each recorded action answered (trump, talon, answer, contract, flek, play).

    Derived from the action kinds alone: ``dobra`` is an answer while a Barva or a
    betl is being answered (two answers after each such discard), a raise otherwise.
    """
    kinds = []
    answers_left = 0
    for _seat, a in history:
        k = a.kind
        if k == "trump":
            kind = "trump"
        elif k in ("barva", "betl", "durch") and a.cards:
            kind = "talon"
            answers_left = 2 if k in ("barva", "betl") else 0
        elif k == "spatna" or (k == "durch" and not a.cards):
            kind = "answer"
            answers_left = 0
        elif k == "dobra":
            if answers_left:
                kind = "answer"
                answers_left -= 1
            else:
                kind = "flek"
        elif k == "contract":
            kind = "contract"
        elif k == "flek":
            kind = "flek"
        else:  # play, lay
            kind = "play"
        kinds.append(kind)
    return kinds


def _codes(cards) -> list[str]:
    return [str(c) for c in cards]


def deal_record(partie: int, index: int, deal: "Deal", cut: int | None, deck: list,
                times_ms: list[float] | None = None) -> dict:
    """The complete ``deal`` line for a finished deal (see protocol/LOGS.md)."""
    if not deal.done:
        raise ValueError("only a finished deal (played, settled or ended by a fault) is logged")
    if times_ms is not None and len(times_ms) != len(deal.history):
        raise ValueError(f"times_ms has {len(times_ms)} entries for {len(deal.history)} decisions")
    kinds = decision_kinds(deal.history)
    decisions = []
    for i, ((seat, action), kind) in enumerate(zip(deal.history, kinds)):
        ms = None if times_ms is None or times_ms[i] is None else round(float(times_ms[i]), 3)
        decisions.append({"seat": seat, "decision": kind, "action": str(action), "ms": ms})
    return {
        "type": "deal",
        "partie": partie,
        "deal": index,
        "forhont": deal.forhont,
        "dealer": deal.dealer,
        "cut": cut,
        "deck": _codes(deck),
        "hands": [_codes(h) for h in dealt_hands(list(deck), deal.forhont)],
        "decisions": decisions,
        "trump_card": str(deal.trump_card) if deal.trump_card is not None else None,
        "zlidu": deal.zlidu,
        "talons": [{"seat": s, "cards": _codes(cards)} for s, cards, _knowers in deal.talons],
        "talon": _codes(deal.talon),
        "talon_owner": deal.talon_owner,
        "game": deal.game,
        "actor": deal.actor,
        "contract": deal.contract,
        "trump": record_trump(deal),
        "levels": dict(deal.levels),
        "proti": dict(deal.proti),
        "tricks": [{"leader": l, "cards": _codes(cs), "winner": w} for l, cs, w in deal.tricks],
        "hlasky": [h.to_dict() for h in deal.hlasky],
        "points": list(deal.points),
        "laid": {"seat": deal.laid[0], "cards": _codes(deal.laid[1])} if deal.laid else None,
        "faults": [deal.fault_info.to_dict()] if deal.fault_info is not None else [],
        "result": deal.result.to_dict(),
    }


def record_trump(deal: "Deal") -> str | None:
    """The ``trump`` of a deal record: the trump suit of a trump game once its contract is set
    (R5.1: the forhont shows the trump card as he announces it).  A deal ended by a fault before
    the contract has ``null`` here, even after both defenders said dobrá (the engine then knows the
    suit, but no contract was set: R12.2 settles it as a fault before a contract); the trump card
    itself is in ``trump_card``."""
    if deal.trump is None or deal.contract is None:
        return None
    return SUIT_CODES[deal.trump]


#: CPU seconds this process spent writing logs (building, sealing and writing each line, the flush
#: and fsync after it): read by ``marias bench tournament`` to show logging apart from the referee.
LOG_CPU = {"total": 0.0}


def _cpu_counted(method):
    """Count the CPU of a :class:`LogWriter` method in :data:`LOG_CPU` (two clock reads per call)."""
    import functools

    @functools.wraps(method)
    def counted(*args, **kw):
        c0 = time.process_time()
        try:
            return method(*args, **kw)
        finally:
            LOG_CPU["total"] += time.process_time() - c0

    return counted


class LogWriter:
    """Writes one match log, line by line, each line complete, durable and sealed.

    ``header`` supplies the match fields (seed, bots, limits, fault_policy, ...);
    ``type``, ``format``, ``format_version``, ``referee_version``,
    ``rules_version`` and ``created`` are filled in unless given.  The ``seed`` is
    not written in the header: the header holds ``seed_sha256`` (the commitment)
    and the footer reveals the seed.  ``sign_key`` (a PEM file of ``marias
    keygen``, raw 32 bytes or an Ed25519 private key) signs the footer's final
    hash.  ``fsync=False`` (benchmarks only) skips the fsync after each deal.
    The file is created exclusively (mode 0600; see :func:`reserve_log_path`).
    """

    @_cpu_counted
    def __init__(self, path, header: dict, *, fsync: bool = True, sign_key=None):
        self.path = Path(path)
        self.fsync = fsync
        self._signer = load_signing_key(sign_key) if sign_key is not None else None
        make_private_dir(self.path.parent)
        fd = _open_exclusive(self.path)
        _hold(fd)
        self._f = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        self._chain = GENESIS
        h = {
            "type": "header",
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "referee_version": referee_version(),
            "rules_version": RULES_VERSION,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "deals_per_partie": DEALS_PER_PARTIE,
            "bots": [],
            "limits": {},
            "fault_policy": {},
        }
        h.update(header)
        self.seed = h.pop("seed", None)
        h["seed_sha256"] = seed_sha256(self.seed) if self.seed is not None else None
        h["type"] = "header"
        h["format"] = FORMAT
        h["format_version"] = FORMAT_VERSION
        self.header = h
        self._n_bots = max(3, len(h.get("bots") or []))
        self._totals = [0] * self._n_bots
        self._parties = 0
        self._seating: list[int] = [0, 1, 2]
        self.closed = False
        self._write(h)
        self._sync()

    # -- writing
    def _write(self, obj: dict, signer=None) -> None:
        line, self._chain = seal_line(self._chain, _dumps(obj), signer)
        self._f.write(line + "\n")

    def _sync(self) -> None:
        self._f.flush()
        if self.fsync:
            os.fsync(self._f.fileno())

    @_cpu_counted
    def partie_start(self, partie: int, *, deck_book: bool = False, seating: list[int] | None = None) -> None:
        """A new partie.  Its first deck is the shuffle of its seed (``partie_seed(seed, partie)``)
        unless ``deck_book`` (then it was given; the cuts still follow from the seed).
        No card is written here: every deck is in its deal's record, written when the deal ends.

        ``seating[s]`` is the index in the header's ``bots`` of the bot at seat
        ``s`` in this partie (default: bot ``s`` sits at seat ``s``).
        """
        rec = {"type": "partie_start", "partie": partie, "shuffle": "deck-book" if deck_book else "seed"}
        self._seating = [0, 1, 2]
        if seating is not None:
            self._seating = [int(x) for x in seating]
            rec["seating"] = list(self._seating)
        self._write(rec)
        self._sync()

    @_cpu_counted
    def deal(self, partie: int, index: int, deal: "Deal", cut: int | None, deck: list,
             times_ms: list[float] | None = None) -> None:
        self._write(deal_record(partie, index, deal, cut, deck, times_ms))
        self._sync()

    @_cpu_counted
    def forfeit(self, partie: int, seat: int, from_deal: int, payments: list[int],
                deals_per_partie: int = DEALS_PER_PARTIE) -> None:
        """R12.3: the bot at ``seat`` forfeits deals ``from_deal``..12 of the partie (right
        after the deal record of its last allowed fault); ``payments`` for all of them."""
        self._write(forfeit_record(partie, seat, from_deal, payments, deals_per_partie))
        self._sync()

    @_cpu_counted
    def partie_end(self, partie: int, totals: list[int], places: list[float]) -> None:
        self._write({"type": "partie_end", "partie": partie, "totals": list(totals), "places": list(places)})
        self._parties += 1
        for s in range(3):
            self._totals[self._seating[s]] += totals[s]
        self._sync()

    @_cpu_counted
    def close(self, footer: dict | None = None) -> None:
        """Write the footer (the match totals unless given; the seed; the signer) and close the file."""
        if self.closed:
            return
        rec = {"type": "footer", "partie": self._parties, "totals": list(self._totals),
               "places": places(list(self._totals)), "complete": True, "seed": self.seed}
        if footer:
            rec.update(footer)
            rec["type"] = "footer"
        rec.pop("chain", None)
        rec.pop("signature", None)
        if self._signer is not None:
            rec["signer"] = public_key_text(self._signer)
        self._write(rec, self._signer)
        self._sync()
        self._f.close()
        self.closed = True

    @property
    def chain(self) -> str:
        """The chain value of the last line written (the final hash after :meth:`close`)."""
        return self._chain

    def abort(self) -> None:
        """Close without a footer: the log stays marked incomplete."""
        if not self.closed:
            self._sync()
            self._f.close()
            self.closed = True

    def __enter__(self) -> "LogWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def forfeit_payments(seat: int, deals: int) -> list[int]:
    """R12.3 with R12.2: ``deals`` deals settled as a fault before a contract by ``seat``
    (it pays each other player 10 groše per deal)."""
    return [-20 * deals if s == seat else 10 * deals for s in range(3)]


def forfeit_record(partie: int, seat: int, from_deal: int, payments: list[int],
                   deals_per_partie: int = DEALS_PER_PARTIE) -> dict:
    """The ``forfeit`` line (see protocol/LOGS.md)."""
    return {"type": "forfeit", "partie": partie, "seat": seat, "from_deal": from_deal,
            "deals": deals_per_partie - from_deal + 1, "payments": list(payments), "rule": "R12.3"}


# ------------------------------------------------------------------ reading

def split_lines(path) -> tuple[list, bool]:
    """The file's lines (str, or bytes if it is not UTF-8) and whether it ends with a newline."""
    with files.open_regular(path) as f:  # never a FIFO or a device
        data = f.read()
    try:  # one decode of the whole file is cheaper than one per line
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    ends_with_newline = data.endswith(b"\n")
    if not data.strip():
        return [], ends_with_newline
    lines = text.split("\n") if text is not None else data.split(b"\n")
    if ends_with_newline:
        lines.pop()
    return lines, ends_with_newline


class DuplicateKey(ValueError):
    """A JSON object names one key twice (readers would disagree on its value)."""


def _no_duplicates(pairs: list) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set = set()
        key = next(k for k, _v in pairs if k in seen or seen.add(k))
        raise DuplicateKey(f"duplicate key {key!r} in one JSON object")
    return d


_strict_loads = json.JSONDecoder(object_pairs_hook=_no_duplicates).decode


def loads_strict(text) -> object:
    """``json.loads`` that refuses an object naming a key twice (:class:`DuplicateKey`)."""
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")
    return _strict_loads(text)


def parse_line(n: int, raw, is_last: bool, ends_with_newline: bool) -> tuple[int, dict | None, str | None]:
    """Parse one line (str or bytes, without its newline): see :func:`iter_lines`."""
    try:
        obj = loads_strict(raw)
    except DuplicateKey as e:
        return n, None, str(e)
    except RecursionError:
        return n, None, "not JSON (nested too deep)"
    except (ValueError, UnicodeDecodeError) as e:
        if not raw.strip():
            return n, None, "blank line"
        if is_last and not ends_with_newline:
            return n, None, f"truncated last line ({len(raw)} bytes, not complete JSON): the match stopped while writing"
        return n, None, f"not JSON ({e.__class__.__name__}: {str(e)[:80]})"
    if type(obj) is not dict:
        return n, None, f"a log line is a JSON object, got {type(obj).__name__}"
    return n, obj, None


def parse_lines(lines: list, ends_with_newline: bool, start: int = 0, stop: int | None = None
                ) -> Iterator[tuple[int, dict | None, str | None]]:
    """Parse ``lines[start:stop]``: see :func:`iter_lines`."""
    last = len(lines)
    stop = last if stop is None else stop
    for n in range(start + 1, stop + 1):
        yield parse_line(n, lines[n - 1], n == last, ends_with_newline)


def stream_lines(path) -> Iterator[tuple[int, object, bool, bool]]:
    """(line number, line, is_last, ends_with_newline) of a file read line by line (memory flat
    whatever its size): the line as str where it is UTF-8, else bytes, without its newline.
    Nothing for a file with no content but white space (as :func:`split_lines` gives no lines)."""
    with files.open_regular(path) as f:  # never a FIFO or a device
        prev = f.readline()
        if not prev:
            return
        n = 0
        blank = not prev.strip()
        pending_blank: list = []  # a run of blank lines held until it is known not to be all the file
        while prev:
            nxt = f.readline()
            ends = prev.endswith(b"\n")
            raw = prev[:-1] if ends else prev
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                line = raw
            n += 1
            item = (n, line, not nxt, ends)
            if blank and not raw.strip():
                pending_blank.append(item)
            else:
                blank = False
                yield from pending_blank
                pending_blank = []
                yield item
            prev = nxt


def iter_lines(path) -> Iterator[tuple[int, dict | None, str | None]]:
    """(line number, record, None) for each JSON object line, (line number, None, problem) otherwise.

    A last line that does not parse (no newline at the end) is reported as
    truncated; any other unparsable line as not JSON (an object naming a key twice
    too); an empty file once.
    Never raises on content (only ``OSError`` if the file cannot be read).
    """
    lines, ends = split_lines(path)
    if not lines:
        yield 1, None, "empty file: no header, not a marias log"
        return
    yield from parse_lines(lines, ends)


def read_lines(path) -> tuple[list[tuple[int, dict]], list[tuple[int, str]]]:
    """Records with their 1-based line numbers, and (line, problem) for lines that are not records."""
    records: list[tuple[int, dict]] = []
    problems: list[tuple[int, str]] = []
    for n, obj, problem in iter_lines(path):
        if obj is None:
            problems.append((n, problem))
        else:
            records.append((n, obj))
    return records, problems


def read_log(path) -> tuple[list[dict], list[str]]:
    """All records of a log, and a message for each truncated or garbage line."""
    records, problems = read_lines(path)
    return [r for _n, r in records], [f"line {n}: {msg}" for n, msg in problems]


# ------------------------------------------------------------------ in-process self-play, logged

class _Timed:
    """Wraps an in-process bot: same answers, each decision's time recorded in ms."""

    def __init__(self, bot: "Bot", times: list[float]):
        self.bot = bot
        self.name = getattr(bot, "name", "bot")
        self.version = getattr(bot, "version", "")
        self.times = times

    def decide(self, decision: str, view: dict, legal: list[str]) -> str:
        t0 = time.perf_counter()
        choice = self.bot.decide(decision, view, legal)
        self.times.append((time.perf_counter() - t0) * 1000.0)
        return choice

    def __getattr__(self, name):
        return getattr(self.bot, name)


def bot_entry(seat: int, command, bot: "Bot | None" = None, exe_sha256: str | None = None) -> dict:
    """A header ``bots`` entry.  ``command`` is an argv list or ``"builtin:NAME"``."""
    return {
        "seat": seat,
        "command": command,
        "name": getattr(bot, "name", None),
        "version": getattr(bot, "version", None),
        "exe_sha256": exe_sha256,
    }


def selfplay_log(path, bots: Sequence["Bot"], *, seed=0, commands: Sequence | None = None,
                 deals: int = DEALS_PER_PARTIE, fsync: bool = True) -> Partie:
    """Play one partie of in-process bots (as :func:`referee.rules.selfplay.play_partie`) and log it.

    ``commands[i]`` names bot ``i`` in the header (default ``"builtin:" + name``).
    Returns the played :class:`Partie`.
    """
    from ..rules.selfplay import play_deal

    if commands is None:
        commands = [f"builtin:{getattr(b, 'name', 'bot')}" for b in bots]
    header = {
        "seed": seed,
        "deals_per_partie": deals,
        "bots": [bot_entry(i, commands[i], b) for i, b in enumerate(bots)],
        "limits": {"in_process": True},
        "fault_policy": {"in_process": True, "note": "in-process bots are called directly; none can fault"},
    }
    times: list[float] = []
    timed = [_Timed(b, times) for b in bots]
    partie = Partie(seed=partie_seed(seed, 1), deals=deals)
    with LogWriter(path, header, fsync=fsync) as w:
        w.partie_start(1)
        for s, b in enumerate(bots):
            b.on_partie_start({"type": "partie_start", "partie": 1, "seat": s, "deals": deals})
        for deal in partie.iter_deals():
            n = len(partie.deals)
            for s, b in enumerate(bots):
                b.on_deal_start({"type": "deal_start", "partie": 1, "deal": n, "seat": s,
                                 "forhont": deal.forhont, "dealer": deal.dealer, "cut": partie.cuts[-1]})
            times.clear()
            play_deal(deal, timed)
            w.deal(1, n, deal, partie.cuts[-1], deal.deck, list(times))
            for s, b in enumerate(bots):
                b.on_deal_end({"type": "deal_end", "partie": 1, "deal": n, "seat": s,
                               "view": deal.view(s), "result": deal.result.to_dict()})
        w.partie_end(1, partie.totals(), partie.places())
    return partie
