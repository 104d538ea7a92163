"""A unit of a tournament or duel, and its log in the event's folder.

A *unit* is one partie at one table in one seat arrangement; its log is
``<folder>/logs/<unit id>.jsonl``, written by the worker that plays it.  Here: the unit
itself, where its log lies, and the checks of that log that the coordinator, a resume and
a duel's scan all make (the full check replays every deal; the quick one reads only the
ends of a log its worker validated, and its seal).  Shared by the tournament runner and
the head-to-head test, so that neither imports the other for them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..logs import files
from ..seats.identity import file_sha256
from .folder import LOGS_DIR


@dataclass(frozen=True)
class Unit:
    """One partie at one table in one seat arrangement."""

    id: str
    table: int  # 1-based, in plan order
    table_bots: tuple[str, str, str]  # the table's bots in configuration order
    arrangement: tuple[int, int, int]  # index into table_bots for seats 0, 1, 2
    partie: int  # 1-based index of the partie at the table
    match_seed: str  # MatchConfig.seed; the log holds one partie, seeded f"{match_seed}:1"
    deck_slot: int  # the deal-book line (0-based) or the seed slot

    @property
    def seats(self) -> tuple[str, str, str]:
        return tuple(self.table_bots[i] for i in self.arrangement)  # type: ignore[return-value]

    @property
    def partie_seed(self) -> str:
        return f"{self.match_seed}:1"


def unit_log(out: Path, unit: Unit) -> Path:
    return out / LOGS_DIR / f"{unit.id}.jsonl"


def check_unit_log(path: Path, unit: Unit | None = None, *, seats: list[str] | None = None) -> str | None:
    """None when ``path`` is a complete, valid log (of ``unit``'s seats); otherwise why not.
    The full check: every deal replayed (:func:`referee.logs.validate.validate_file`)."""
    from ..logs.validate import validate_file

    if not path.exists():
        return "no log"
    report = validate_file(path)
    if not report.complete:
        return "incomplete (no footer)"
    if not report.ok:
        return report.lines()[0]
    want = list(unit.seats) if unit is not None else seats
    if want is not None:
        labels = log_ends(path)[0]
        if labels != list(want):
            return f"the log seats {labels}, the plan {list(want)}"
    return None


def check_chain(path: Path) -> str | None:
    """The parent's check of a log's seal (issue 10's hash chain), the hook for it: None when the
    log carries no chain or the chain holds, else the first problem (``line N: ...``).

    It uses ``referee.logs.seal.chain_problems(lines, ends_with_newline) -> [(line, problem)]`` where
    that module exists (one SHA-256 per line: cheap enough for the parent); a log whose last line
    carries no ``"chain"`` field is not sealed and passes."""
    try:
        from ..logs.seal import chain_problems  # type: ignore[import-not-found]
    except ImportError:
        return None
    data = path.read_bytes()
    ends = data.endswith(b"\n")
    lines = data.split(b"\n")
    if ends:
        lines.pop()
    if not lines or b'"chain":"' not in lines[-1]:
        return None
    problems = chain_problems(lines, ends)
    return f"line {problems[0][0]}: {problems[0][1]}" if problems else None


def quick_check_unit_log(path: Path, unit: Unit, result: dict | None = None) -> str | None:
    """The parent's cheap check of a log its worker validated: it exists, is complete, seats the
    plan's bots, has the content the worker hashed and the totals it reported, and its chain holds."""
    if not path.exists():
        return "no log"
    labels, footer = log_ends(path)
    if footer is None:
        return "incomplete (no footer)"
    if labels != list(unit.seats):
        return f"the log seats {labels}, the plan {list(unit.seats)}"
    if result is not None:
        if result.get("sha256") and file_sha256(path) != result["sha256"]:
            return "the log changed after its worker validated it"
        if list(footer.get("totals") or []) != list(result.get("totals") or []):
            return f"the log's totals {footer.get('totals')} are not the worker's {result.get('totals')}"
    return check_chain(path)


def log_ends(path: Path) -> tuple[list, dict | None]:
    """The header's bot labels and the footer (None when the last line is not one), reading only the ends."""
    with files.open_regular(path) as f:  # a regular file only: never a FIFO or a device
        first = f.readline()
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 65536))
        tail = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    try:
        header = json.loads(first)
    except ValueError:
        header = {}
    try:
        footer = json.loads(tail)
    except ValueError:
        footer = None
    if not isinstance(footer, dict) or footer.get("type") != "footer":
        footer = None
    bots = header.get("bots", []) if isinstance(header, dict) else []
    return [b.get("label") for b in bots if isinstance(b, dict)], footer


def remove_unit_files(out: Path, unit: Unit) -> None:
    """The unit's log and its bots' stderr/transcript files."""
    for p in (out / LOGS_DIR).glob(f"{unit.id}.*"):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def log_totals(path: Path) -> tuple[list[str], list[int]] | None:
    labels, footer = log_ends(path)
    if footer is None:
        return None
    return labels, list(footer.get("totals", []))
