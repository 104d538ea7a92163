"""Failed units, grouped by cause: one line per cause, not one (or a traceback) per unit.

When a Dask scheduler dies mid-run every unit still on the cluster fails with the same
error, and a bot that crashes at start fails every unit it sits in the same way.  The
cause of a failure is its text with what names the unit taken out (unit ids, Dask task
keys, process ids, attempt numbers) and only its first line kept (an exception's text may
carry a whole traceback); failures with the same cause are printed as one line naming how
many partie and the first few of them.
"""

from __future__ import annotations

import re
from typing import Iterable

_UNIT = re.compile(r"\bt\d+-p\d+-s\d{3}\b|\bg\d+-s[ab]{3}\b")
_KEY = re.compile(r"marias-group-[\w.-]+")
_NUM = re.compile(r"\b(pid|attempt|attempts)\s+\d+")
SHOWN = 4  # unit ids named per cause


def cause(why: str) -> str:
    """What a failure says once the unit it happened to is taken out (its first line only)."""
    first = str(why).strip().splitlines()[0] if str(why).strip() else "unknown"
    first = _KEY.sub("marias-group-…", first)
    first = _UNIT.sub("…", first)
    return _NUM.sub(lambda m: f"{m.group(1)} …", first).strip()


def grouped(failed: Iterable[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """(cause, unit ids) per cause, in the order each cause first failed."""
    by: dict[str, list[str]] = {}
    for uid, why in failed:
        by.setdefault(cause(why), []).append(uid)
    return list(by.items())


def lines(failed: Iterable[tuple[str, str]]) -> list[str]:
    """One line per cause: ``failed: N partie (ID, ID, … and K more): CAUSE``."""
    out = []
    for why, ids in grouped(failed):
        named = ", ".join(ids[:SHOWN]) + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")
        out.append(f"failed: {named}: {why}" if len(ids) == 1 else f"failed: {len(ids)} partie ({named}): {why}")
    return out
