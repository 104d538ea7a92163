"""The index's lists: the served events, each with its state and leader, and the logs outside
them, each with its bots, whether it is complete and each bot's groše.

An event's state and leader come from the cached tables (:func:`referee.web.tournament_data.index_entry`):
the index never waits for tables to be computed.  A log's facts come from its first and last
lines (:func:`referee.web.log_data.log_summary`, kept per version of the file), read as a regular
file inside its served folder; a log that cannot be read is listed with a note.
"""

from __future__ import annotations

from ..logs import files
from ..logs.log import BeingWritten
from .folders import Roots
from .ladder import leaderboard_data
from .log_data import LogError, log_summary
from .tournament_data import TableCache, index_entry


def _signed(x: int) -> str:
    return f"{x:+d}"


def ladder_entry(folder) -> dict:
    """A ladder's line on the index: the partie played and its leader (best first by the low end of
    the rating's interval, as the leaderboard ranks), read from its database."""
    data = leaderboard_data(folder)
    top = next((r for r in data["leaderboard"] if r["status"] == "active"), None)
    return {"state": "ladder", "done": data["counts"]["partie"], "total": None,
            "leader": f"{top['id']} {top['rating']:.1f} ± {top['pm']:.1f}" if top else None, "as_of": None}


def index_lists(roots: Roots, cache: TableCache, bot: str | None = None) -> dict:
    """The index's events and logs (the logs of ``bot`` only, when one is named), the names of the
    bots in the logs listed (for the filter), and notes on what was left out."""
    items, notes = roots.items()
    events, logs = [], []
    names: set[str] = set()
    for it in items:
        if it.kind != "log":
            entry = {"item": it, "state": None, "done": None, "total": None, "leader": None, "as_of": None}
            if not it.note:
                try:
                    folder = roots.resolve(it.root, it.rel, want="dir")
                    entry.update(ladder_entry(folder) if it.kind == "ladder" else index_entry(folder, cache))
                except Exception as e:  # noqa: BLE001 - the event's page says why; the index goes on
                    entry["note"] = f"{type(e).__name__}: {e}"
            events.append(entry)
            continue
        entry = {"item": it, "bots": [], "totals": None, "complete": None, "note": it.note}
        if not it.note:
            try:
                with files.confined(roots.folders[it.root]):
                    s = log_summary(roots.resolve(it.root, it.rel, want="file"))
                entry.update(bots=s["bots"], totals=s["totals"], complete=s["complete"])
            except BeingWritten:
                continue  # its match began since the folder was walked: not listed until it ends
            except LogError as e:
                entry["note"] = str(e).split(": ", 1)[-1]
            except Exception as e:  # noqa: BLE001 - refused, unreadable, too large: a note, not an error page
                entry["note"] = getattr(e, "strerror", None) or getattr(e, "message", None) or str(e)
        names.update(entry["bots"])
        if bot and bot not in entry["bots"]:
            continue
        if entry["totals"] is not None and len(entry["totals"]) == len(entry["bots"]):
            ranked = sorted(zip(entry["bots"], entry["totals"]), key=lambda bg: -bg[1])
            entry["result"] = " · ".join(f"{b} {_signed(g)}" for b, g in ranked)
        logs.append(entry)
    return {"events": events, "logs": logs, "notes": notes, "bot": bot, "log_bots": sorted(names)}
