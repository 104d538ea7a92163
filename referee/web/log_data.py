"""What the log page and its replayer show, read from a match log and replayed by the engine.

The replayer's data for one deal comes from the deal record replayed through the rules
engine (:func:`referee.logs.replay.replay_record`): at every step the three seats' views
are :meth:`Deal.view` — the very redaction the referee sends in its requests — and the
events each seat was told after each action are the referee's own
:func:`referee.matches.tell.deal_events`.  So a seat's view on the page is exactly what that
seat knew; the all-seeing view adds what the engine holds (every hand, the trump card, the
talon, the unredacted bidding).  No second redaction exists here.

Views (and the all-seeing facts) are sent as deltas (each step: the keys that changed since the
step before), which the page applies in order; a deal of 40 decisions weighs a few kilobytes.
A deal that ends by a fault or by cards laid down (R8) ends with the engine's cards collected
(a fault returns the trick's cards to the hands, R2.3; laying clears them); its last step also
holds the table as it was when the deal ended (``end``: every hand and the trick on the table),
so that the page can show the fault, or the laid cards, where they happened.  At a fault the page
also shows the end of that bot's stderr file (:func:`stderr_tail`: the file beside the log,
read as a regular file inside the served folder, at most :data:`STDERR_TAIL_BYTES`, sent as text).

The lists of logs name each log's bots, whether it is complete and each bot's groše, from its
first and last lines only (:func:`log_summary`, kept per version of the file).

Memory and time stay bounded whatever the log (``marias serve`` serves files up to 64 MB): the
log page's data are *streamed* (:func:`log_chunks`: the log read line by line, each deal's
summary written out as it is read, nothing of the log kept), and a replay reads only three
lines, the header, its partie's start and its deal, found by an index of line offsets made once
per version of the file (:class:`LogIndex`, kept for the last few logs; the log page's stream
makes it on the way).  A line longer than :data:`MAX_LINE_BYTES` is skipped in bounded pieces,
with a problem.  A log that a :class:`referee.logs.log.LogWriter` of any process is writing is
not read at all (:func:`referee.logs.log.open_log`): a match in progress shows nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Iterator

import orjson
from pathlib import Path

from protocol import messages as M

from ..logs import files
from ..logs.log import open_log
from ..logs.replay import replay_record
from ..logs.validate import parse_deck
from ..matches.tell import deal_events
from ..rules.actions import ActionError, parse_action
from ..rules.deal import Deal, IllegalAction

#: A log line longer than this is not read (a deal record weighs a few KB; the referee's own lines
#: are far shorter): skipped in bounded pieces, with a problem.
MAX_LINE_BYTES = 1 << 20
CHUNK_BYTES = 1 << 16  # the log page's data are sent in pieces of about this size
PROBLEMS_SHOWN = 5
CACHED_INDEXES = 8
#: The end of a bot's stderr file shown at a fault.
STDERR_TAIL_BYTES = 4096
#: The log summaries kept (one per version of a file) for the lists of logs.
CACHED_SUMMARIES = 20_000
#: A list reads at most this much of a log's start (its header) and of its end (its footer).
SUMMARY_HEAD_BYTES = 1 << 18
SUMMARY_TAIL_BYTES = 1 << 14


class LogError(ValueError):
    """The file is not a log, or holds no such deal."""


def _lines(f: BinaryIO) -> Iterator[tuple[int, int, bytes | None]]:
    """(line number, offset, the line without its newline) of an open file, read line by line; the
    line is None when it is longer than :data:`MAX_LINE_BYTES` (its bytes are skipped, never kept)."""
    n = offset = 0
    while True:
        raw = f.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        n += 1
        start, offset = offset, offset + len(raw)
        if len(raw) > MAX_LINE_BYTES:
            while not raw.endswith(b"\n"):
                raw = f.readline(CHUNK_BYTES)
                if not raw:
                    break
                offset += len(raw)
            yield n, start, None
            continue
        yield n, start, raw.rstrip(b"\r\n")


def _parse(raw: bytes | None, n: int) -> tuple[dict | None, str | None]:
    """A line's record (orjson: a page is not the validator, ``marias validate`` is; the deals are
    replayed through the engine all the same), or why not."""
    if raw is None:
        return None, f"line {n}: longer than {MAX_LINE_BYTES // 2**20} MB: not read"
    try:
        r = orjson.loads(raw)
    except orjson.JSONDecodeError:  # malformed, cut short, or nested too deep
        return None, f"line {n}: not JSON (cut short?)"
    if not isinstance(r, dict):
        return None, f"line {n}: not a JSON object"
    return r, None


def _int(v) -> int | None:
    return v if type(v) is int else None


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v) -> list:
    return v if isinstance(v, list) else []


# ------------------------------------------------------------------ the index of a log's lines


@dataclass
class LogIndex:
    """Where a log's records start: its header, each partie's start, each deal (the first of each)."""

    header: int | None = None
    starts: dict[int, int] = field(default_factory=dict)
    deals: dict[tuple[int, int], int] = field(default_factory=dict)

    def add(self, offset: int, rec: dict) -> None:
        t = rec.get("type")
        p = _int(rec.get("partie"))
        if t == "header" and self.header is None:
            self.header = offset
        elif t == "partie_start" and p is not None:
            self.starts.setdefault(p, offset)
        elif t == "deal" and p is not None and _int(rec.get("deal")) is not None:
            self.deals.setdefault((p, rec["deal"]), offset)


_FAST = re.compile(rb'\{"type":"(deal|partie_start)","partie":(\d{1,9}),(?:"deal":(\d{1,9}),)?')
_INDEXES: "OrderedDict[tuple, LogIndex]" = OrderedDict()
_INDEX_LOCK = threading.Lock()


def _version(f: BinaryIO) -> tuple:
    st = os.fstat(f.fileno())
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _remember(key: tuple, index: LogIndex) -> None:
    with _INDEX_LOCK:
        _INDEXES[key] = index
        _INDEXES.move_to_end(key)
        while len(_INDEXES) > CACHED_INDEXES:
            _INDEXES.popitem(last=False)


def _index(f: BinaryIO) -> LogIndex:
    """The index of an open log (made by one pass over its lines, kept per version of the file)."""
    key = _version(f)
    with _INDEX_LOCK:
        hit = _INDEXES.get(key)
        if hit is not None:
            _INDEXES.move_to_end(key)
            return hit
    index = LogIndex()
    f.seek(0)
    for n, offset, raw in _lines(f):
        if raw is not None and not raw.strip():
            continue
        m = _FAST.match(raw) if raw is not None else None
        if m is not None:  # the referee writes these keys first: no need to parse the rest of the line
            if m.group(1) == b"deal":
                if m.group(3) is not None:
                    index.deals.setdefault((int(m.group(2)), int(m.group(3))), offset)
            else:
                index.starts.setdefault(int(m.group(2)), offset)
            continue
        rec, _ = _parse(raw, n)
        if rec is not None:
            index.add(offset, rec)
    _remember(key, index)
    return index


def forget_logs() -> None:
    """Drop every log index and summary kept for the pages (the next replay reads its log's lines again)."""
    with _INDEX_LOCK:
        _INDEXES.clear()
        _SUMMARIES.clear()


def _record_at(f: BinaryIO, offset: int | None) -> dict | None:
    if offset is None:
        return None
    f.seek(offset)
    raw = f.readline(MAX_LINE_BYTES + 1)
    rec, _ = _parse(raw.rstrip(b"\r\n") if len(raw) <= MAX_LINE_BYTES else None, 0)
    return rec


def _open(path: Path) -> tuple[BinaryIO, dict]:
    """The log open for reading (no writer holds it: :func:`referee.logs.log.open_log`) and its header."""
    f = open_log(path)
    try:
        first = next(_lines(f), None)
        rec, problem = _parse(first[2], 1) if first is not None else (None, "empty file")
        if rec is None or rec.get("type") != "header":
            raise LogError(f"{path.name}: not a marias log" + (f" ({problem})" if problem else ""))
    except BaseException:
        f.close()
        raise
    return f, rec


def bot_labels(header: dict) -> list[str]:
    out = []
    for i, b in enumerate(_list(header.get("bots"))):
        b = _dict(b)
        out.append(str(b.get("label") or b.get("name") or f"seat {i}"))
    return out


def command_text(bot: dict) -> str:
    """A header bot's command as a ``--bot`` argument: a built-in by its name, else the argv quoted."""
    cmd = bot.get("command")
    if isinstance(cmd, list):
        return shlex.join(str(x) for x in cmd)
    cmd = str(cmd or "")
    return cmd.split(":", 1)[1] if cmd.startswith("builtin:") else cmd


def _players(labels: list[str], seating) -> list[str]:
    seating = seating if isinstance(seating, list) and len(seating) == 3 else [0, 1, 2]
    return [labels[i] if type(i) is int and 0 <= i < len(labels) else f"seat {i}" for i in seating]


# ------------------------------------------------------------------ a log in a list

_SUMMARIES: "OrderedDict[tuple, dict]" = OrderedDict()


def log_summary(path: Path) -> dict:
    """What a list of logs shows of one: its bots (by header seat), whether it is complete, and each
    bot's groše over the log (the footer's totals; None when it has no footer yet).  Only its first
    line and the end of the file are read, once per version of the file (:data:`CACHED_SUMMARIES`
    kept).  :class:`referee.logs.log.BeingWritten` while a match writes it; ``OSError`` when it
    cannot be read; :class:`LogError` when it is no marias log."""
    with open_log(path) as f:
        key = _version(f)
        with _INDEX_LOCK:
            hit = _SUMMARIES.get(key)
            if hit is not None:
                _SUMMARIES.move_to_end(key)
                return hit
        raw = f.readline(SUMMARY_HEAD_BYTES + 1)
        header, _ = _parse(raw.rstrip(b"\r\n") if len(raw) <= SUMMARY_HEAD_BYTES else None, 1)
        if header is None or header.get("type") != "header":
            raise LogError(f"{Path(path).name}: not a marias log")
        size = key[2]
        f.seek(max(0, size - SUMMARY_TAIL_BYTES))
        last = f.read(SUMMARY_TAIL_BYTES).rstrip(b"\r\n").rsplit(b"\n", 1)[-1]
    footer, _ = _parse(last, 0)
    complete = footer is not None and footer.get("type") == "footer"
    totals = footer.get("totals") if complete else None
    out = {"bots": bot_labels(header), "complete": complete,
           "partie": footer.get("partie") if complete else None,
           "totals": totals if isinstance(totals, list) and all(type(x) is int for x in totals) else None}
    with _INDEX_LOCK:
        _SUMMARIES[key] = out
        while len(_SUMMARIES) > CACHED_SUMMARIES:
            _SUMMARIES.popitem(last=False)
    return out


# ------------------------------------------------------------------ the log page's data


def _deal_summary(r: dict) -> dict:
    res = _dict(r.get("result"))
    return {"deal": r.get("deal"), "forhont": r.get("forhont"), "game": r.get("game"),
            "contract": r.get("contract"), "actor": r.get("actor"), "trump": r.get("trump"),
            "levels": r.get("levels") or {}, "kind": res.get("kind"), "payments": res.get("payments"),
            "faults": [{"seat": f.get("seat"), "kind": f.get("kind"), "message": f.get("message")}
                       for f in _list(r.get("faults")) if isinstance(f, dict)]}


def _dumps(v) -> bytes:
    return orjson.dumps(v, option=orjson.OPT_NON_STR_KEYS)


def open_log_data(path: Path, rel: str, scrub: Callable[[bytes], bytes] = lambda b: b) -> Iterator[bytes]:
    """The log page's data (JSON, in pieces): the log's header facts, its partie and deals (contract,
    actor, result, faults), no replay.  The log is opened and its header checked now (:class:`LogError`,
    :class:`referee.logs.log.BeingWritten`, ``OSError``); the pieces are read as they are sent.
    ``scrub`` is applied to each piece (the server takes its own paths out)."""
    f, header = _open(Path(path))
    return _log_chunks(f, header, Path(path), rel, scrub)


def _log_chunks(f: BinaryIO, header: dict, path: Path, rel: str, scrub) -> Iterator[bytes]:
    labels = bot_labels(header)
    buf: list[bytes] = []
    size = 0
    problems: list[str] = []
    footer: dict | None = None
    index = LogIndex(header=0)
    try:
        key = _version(f)
        head = {"path": rel, "name": path.name, "labels": labels, "bots": _list(header.get("bots")),
                "created": header.get("created"), "referee_version": header.get("referee_version"),
                "rules_version": header.get("rules_version"), "sandbox": header.get("sandbox", "none"),
                "limits": header.get("limits") or {}}
        buf.append(scrub(_dumps(head)[:-1] + b',"parties":['))
        partie: dict | None = None  # the partie being written: its totals come after its deals
        first_partie = True
        f.seek(0)
        for n, offset, raw in _lines(f):
            if n == 1 or (raw is not None and not raw.strip()):
                continue
            rec, problem = _parse(raw, n)
            if rec is None:
                if len(problems) < PROBLEMS_SHOWN:
                    problems.append(problem)
                continue
            index.add(offset, rec)
            t = rec.get("type")
            piece = b""
            if t == "partie_start":
                if partie is not None:
                    piece = _partie_end(partie)
                partie = {"totals": None, "places": None, "forfeit": None, "first_deal": True}
                opening = {"partie": rec.get("partie"), "players": _players(labels, rec.get("seating"))}
                piece += (b"" if first_partie else b",") + _dumps(opening)[:-1] + b',"deals":['
                first_partie = False
            elif t == "deal" and partie is not None:
                piece = (b"" if partie["first_deal"] else b",") + _dumps(_deal_summary(rec))
                partie["first_deal"] = False
            elif t == "forfeit" and partie is not None:
                partie["forfeit"] = {"seat": rec.get("seat"), "from_deal": rec.get("from_deal")}
            elif t == "partie_end" and partie is not None:
                partie["totals"], partie["places"] = rec.get("totals"), rec.get("places")
            elif t == "footer":
                footer = rec
            if piece:
                piece = scrub(piece)
                buf.append(piece)
                size += len(piece)
                if size >= CHUNK_BYTES:
                    yield b"".join(buf)
                    buf, size = [], 0
        if partie is not None:
            buf.append(scrub(_partie_end(partie)))
        tail = {"complete": footer is not None, "seed": (footer or {}).get("seed"),
                "totals": (footer or {}).get("totals"), "problems": problems}
        buf.append(b"]," + scrub(_dumps(tail)[1:]))
        yield b"".join(buf)
        _remember(key, index)  # read whole: the replays of its deals need not read it again
    finally:
        f.close()


def _partie_end(partie: dict) -> bytes:
    return b"]," + _dumps({k: partie[k] for k in ("totals", "places", "forfeit")})[1:]


def log_data(path: Path, rel: str) -> dict:
    """The log page's data as one dict (:func:`open_log_data` joined): for the report."""
    return orjson.loads(b"".join(open_log_data(path, rel)))


def _delta(prev: dict | None, view: dict) -> dict:
    """The keys of ``view`` that changed since ``prev``; a list that only grew is sent as
    ``{"+": the new items}`` (the bids, the tricks, the hlášky)."""
    if prev is None:
        return view
    out = {}
    for k, v in view.items():
        old = prev.get(k)
        if old == v:
            continue
        if type(v) is list and type(old) is list and old and len(v) > len(old) and v[:len(old)] == old:
            out[k] = {"+": v[len(old):]}
        else:
            out[k] = v
    return out


def _fault_rule(rec: dict, deck, fault: dict) -> dict:
    """The rule a faulty answer broke: the engine's verdict on the action in its evidence, where it
    holds one; else R12.1 (a breach of the protocol: a timeout, a crash, a malformed line)."""
    out = {"rule": "R12.1", "detail": None}
    try:
        answer = files.loads(fault.get("evidence") or "")
        text = answer.get("action") if isinstance(answer, dict) else None
    except (TypeError, ValueError):
        text = None
    if not isinstance(text, str):
        return out
    d = Deal(deck, rec["forhont"])
    for dec in rec.get("decisions") or []:
        d.apply(parse_action(dec["action"]))
    try:
        d.verify(parse_action(text))
    except IllegalAction as e:
        out = {"rule": e.rule, "detail": e.detail}
    except ActionError as e:  # its message names the rule first ("R1.2: malformed card ...")
        m = re.match(r"(R\d+(?:\.\d+)*): (.*)", str(e), re.S)
        out = {"rule": m.group(1), "detail": f"not an action: {m.group(2)}"} if m else {"rule": "R12.1", "detail": f"not an action: {e}"}
    return out


def stderr_tail(log: Path, bot: int) -> dict | None:
    """The end of the stderr file of the log's header bot ``bot`` (``LOG.seatN.stderr.log`` beside the
    log, protocol/PROTOCOL.md section 11): its name, its size and its last :data:`STDERR_TAIL_BYTES`
    (from a line's start when cut), as text; None when there is none.  Read as a regular file only
    (inside the folder a caller confines reads to: :func:`referee.logs.files.confined`); one that
    cannot be read is said to be so.  The file spans the whole match (a bot that faulted is started
    afresh and writes on), so its end may come from after the fault."""
    log = Path(log)
    name = f"{log.name[:-len('.jsonl')] if log.name.endswith('.jsonl') else log.name}.seat{bot}.stderr.log"
    path = log.with_name(name)
    try:
        f = files.open_regular(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return {"file": name, "size": None, "tail": "", "cut": False, "note": e.strerror or str(e)}
    with f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - STDERR_TAIL_BYTES))
        raw = f.read(STDERR_TAIL_BYTES)
    cut = size > len(raw)
    if cut and b"\n" in raw[:-1]:
        raw = raw[raw.index(b"\n") + 1:]
    return {"file": name, "size": size, "tail": raw.decode("utf-8", "replace"), "cut": cut}


def replay_data(path: Path, rel: str, partie: int, deal: int, shown: str | None = None,
                folder: Path | None = None) -> dict:
    """One deal, step by step: the views of the three seats (deltas), the events each was told,
    the decisions, and the all-seeing facts; with the fault's evidence, rule, replay command
    (naming the log as ``shown``: its path relative to the served folder) and the end of the bot's
    stderr file (read only inside ``folder``, when given).  Only the log's header, the partie's
    start and the deal are read (:class:`LogIndex`)."""
    path = Path(path)
    f, header = _open(path)
    try:
        index = _index(f)
        rec = _record_at(f, index.deals.get((partie, deal)))
        start = _record_at(f, index.starts.get(partie))
    finally:
        f.close()
    if start is not None and (start.get("type") != "partie_start" or start.get("partie") != partie):
        start = None
    if rec is None or rec.get("type") != "deal" or rec.get("partie") != partie or rec.get("deal") != deal:
        raise LogError(f"{path.name}: no deal {deal} in partie {partie}")
    try:
        data = _replay(rec, header, start, rel, shown or rel, partie, deal)
    except LogError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:  # a record the referee never wrote
        raise LogError(f"deal {deal}: cannot replay: the record is malformed ({type(e).__name__}: {e})") from None
    if data["fault"] is not None and data["fault"].get("bot") is not None:
        with files.confined(folder) if folder is not None else contextlib.nullcontext():
            data["fault"]["stderr"] = stderr_tail(path, data["fault"]["bot"])
    return data


def _replay(rec: dict, header: dict, start: dict | None, rel: str, shown: str, partie: int, deal: int) -> dict:
    labels = bot_labels(header)
    seating = (start or {}).get("seating") or [0, 1, 2]
    players = _players(labels, seating)
    deck, why = parse_deck(rec.get("deck"))
    if why:
        raise LogError(f"deal {deal}: cannot replay: {why}")
    decisions = rec.get("decisions") or []
    steps: list[dict] = []
    prev: list[dict | None] = [None, None, None, None]  # the three seats' views, and the all-seeing facts
    marks = {"tricks": 0, "hlasky": 0}
    n = len(decisions)
    # a deal ended by a fault or by laying the cards: the table as it was then (the engine collects it)
    cut_short = bool(rec.get("faults")) or (n > 0 and isinstance(decisions[-1], dict) and decisions[-1].get("action") == "lay")
    table: dict[str, Deal] = {}

    def on_step(d: Deal, i: int) -> None:
        if cut_short and i == n - 1:
            ended = d.copy()
            if decisions[i].get("action") != "lay":  # a fault follows this decision: the table after it
                ended.apply(parse_action(decisions[i]["action"]))
            table["end"] = ended
        events = [[], [], []]
        if i > 0:
            last = decisions[i - 1]
            events = [deal_events(d, last["decision"], marks["tricks"], marks["hlasky"], s) for s in range(3)]
        if d.fault_info is not None:
            fe = M.fault_event(d.fault_info.seat, d.fault_info.kind)
            for s in range(3):
                if s != d.fault_info.seat:  # the faulting bot is not told (its process was stopped)
                    events[s].append(fe)
        views = []
        for s in range(3):
            v = d.view(s)
            views.append(_delta(prev[s], v))
            prev[s] = v
        nxt = decisions[i] if i < n else None
        everything = {"talon": [str(c) for c in d.talon], "trump_card": str(d.trump_card) if d.trump_card is not None else None,
                      "hands": [[str(c) for c in h] for h in d.hands]}
        if cut_short and i == n and d.phase == "done":
            e = table.get("end", d)  # no decision at all: nothing was on the table
            everything["end"] = {"how": "fault" if d.fault_info is not None else "laid",
                                 "hands": [[str(c) for c in h] for h in e.hands],
                                 "trick": [{"seat": s, "card": str(c)} for s, c in zip(e.trick_seats, e.trick)]}
        events = [events[0]] + [None if e == events[0] else e for e in events[1:]]  # null: as seat 0's
        steps.append({"views": views, "events": events, "all": _delta(prev[3], everything),
                      "next": None if nxt is None else {k: nxt.get(k) for k in ("seat", "decision", "action", "ms")}})
        prev[3] = everything
        marks["tricks"], marks["hlasky"] = len(d.tricks), len(d.hlasky)

    rp = replay_record(rec, deck, on_step=on_step)
    fault = None
    faults = rec.get("faults") or []
    if faults:
        f = faults[0]
        seat = f.get("seat")
        bot_index = seating[seat] if seat in (0, 1, 2) and type(seating[seat]) is int else None
        bots = header.get("bots") or []
        bot = bots[bot_index] if bot_index is not None and 0 <= bot_index < len(bots) else {}
        fault = {**{k: f.get(k) for k in ("seat", "kind", "message", "evidence", "elapsed")},
                 **_fault_rule(rec, deck, f), "settlement": "R12.2", "bot": bot_index,
                 "command": f"marias replay {shlex.quote(shown)} --partie {partie} --deal {deal} --seat {seat} "
                            f"--bot {shlex.quote(command_text(bot) or 'BOT')}"}
    return {"path": rel, "partie": partie, "deal": deal, "players": players, "forhont": rec.get("forhont"),
            "dealer": rec.get("dealer"), "cut": rec.get("cut"), "hands": rec.get("hands"),
            "decisions": decisions, "trump_card": rec.get("trump_card"), "zlidu": rec.get("zlidu"),
            "talons": rec.get("talons"), "game": rec.get("game"), "contract": rec.get("contract"),
            "result": rec.get("result"), "fault": fault, "steps": steps,
            "problems": [f"{r}: {m}" for r, m in rp.problems]}
