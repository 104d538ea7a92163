"""Partie records: what each finished partie of a log says.

Each finished partie becomes a :class:`PartieRecord` (who sat where, its deals, its result), the
input of every table (:mod:`referee.tournaments.standings`) and of the results database
(:mod:`referee.tournaments.results`).  Which logs count (a tournament folder's only as its
journal recorded them; a copy of one match under two names once) is
:mod:`referee.tournaments.event`'s to say.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PartieRecord:
    """One finished partie of a log: who sat where, its deals and its result."""

    source: str  # the log file
    partie: int
    bots: tuple[str, str, str]  # bot identity at seats 0, 1, 2
    totals: list[int]
    places: list[float]
    deals: list[dict]
    deck: tuple[str, ...]  # the starting deck (R2.2)
    forfeits: list[dict] = field(default_factory=list)  # R12.3 forfeit records (LOGS.md)
    fingerprints: tuple = (None, None, None)  # the bots' fingerprints at seats 0, 1, 2 (None: not logged)

    @property
    def group(self) -> tuple:
        """Duplicate group: the same three bots on the same starting deck (any seat arrangement)."""
        return (tuple(sorted(self.bots)), self.deck)


def bot_keys(header: dict) -> list[str]:
    """The identity of each bot of a log header (label, else name, else command).  Seats with the same
    label and the same fingerprint are one bot playing two seats (a duel's A A B): the same key, one
    row in the tables.  The same label with different fingerprints gets ``#seat``, and so does every
    seat when one bot holds them all (selfplay: there is nobody else to compare it with)."""
    keys = []
    bots = header.get("bots") or []
    for i, b in enumerate(bots):
        k = b.get("label") or b.get("name")
        if not k:
            cmd = b.get("command")
            k = " ".join(cmd) if isinstance(cmd, list) else str(cmd or f"seat {i}")
        keys.append(str(k))
    fps = [b.get("fingerprint") for b in bots]
    one_bot = len(set(zip(keys, fps))) == 1  # a bot against itself (selfplay): its seats are told apart
    return [f"{k}#{i}" if one_bot and len(keys) > 1 or len({fps[j] for j in range(len(keys)) if keys[j] == k}) > 1
            else k for i, k in enumerate(keys)]


def bot_fingerprints(header: dict) -> list[str | None]:
    return [b.get("fingerprint") if isinstance(b.get("fingerprint"), str) else None
            for b in header.get("bots") or []]


def records_from_log(path, records: list[dict]) -> list[PartieRecord]:
    """The finished partie of one log's records (those with a partie_end)."""
    if not records or records[0].get("type") != "header":
        raise ValueError(f"{path}: not a marias log (no header)")
    keys = bot_keys(records[0])
    fps = bot_fingerprints(records[0])
    out = []
    current = None
    for r in records[1:]:
        t = r.get("type")
        if t == "partie_start":
            seating = r.get("seating") or [0, 1, 2]
            current = {"partie": r.get("partie"), "bots": tuple(keys[i] for i in seating),
                       "fps": tuple(fps[i] if i < len(fps) else None for i in seating),
                       "deck": tuple(r.get("deck") or ()), "deals": [], "forfeits": []}
        elif t == "deal" and current is not None:
            if not current["deck"] and not current["deals"]:  # decks are logged with their deal (no deck up front)
                current["deck"] = tuple(r.get("deck") or ())
            current["deals"].append(r)
        elif t == "forfeit" and current is not None:
            current["forfeits"].append(r)
        elif t == "partie_end" and current is not None:
            out.append(PartieRecord(str(path), int(r.get("partie") or current["partie"] or 0), current["bots"],
                                    list(r["totals"]), list(r.get("places") or []), current["deals"],
                                    current["deck"], current["forfeits"], current["fps"]))
            current = None
    return out


def name_identities(parties: list[PartieRecord]) -> None:
    """Give each (label, fingerprint) one name: the label, or ``label@fingerprint`` (short) where one
    label stands for bots with different fingerprints.  Changes ``parties`` in place."""
    from ..seats.identity import short

    fps_of: dict[str, set] = {}
    for p in parties:
        for name, fp in zip(p.bots, p.fingerprints):
            fps_of.setdefault(name, set()).add(fp)
    for p in parties:
        if any(len(fps_of[n]) > 1 for n in p.bots):
            p.bots = tuple(f"{n}@{short(fp)}" if len(fps_of[n]) > 1 else n
                           for n, fp in zip(p.bots, p.fingerprints))  # type: ignore[assignment]


def not_recorded_note(path, recorded: str | None, actual: str) -> tuple[str, bool]:
    """Why a tournament's log is left out of the tables, and whether it is an error (the log on disk
    is not the one the tournament accepted) rather than a note (not accepted yet)."""
    from .folder import JOURNAL_FILE

    if recorded is None:
        return (f"{path}: not recorded as done in {JOURNAL_FILE} (the tournament has not accepted it; running "
                f"the tournament again checks it and records it); left out", False)
    return (f"{path}: its SHA-256 is {actual}, but {JOURNAL_FILE} recorded {recorded} when the tournament "
            f"accepted this unit: the log was changed or replaced since; left out of the tables (put the "
            f"original back, or delete it and run the tournament again to play the unit anew)", True)


def match_key(records: list[dict]) -> tuple | None:
    """What makes two log files one match: the header's seed commitment and the final hash (the
    footer's chain value, which covers every byte of the log).  None for a log without them."""
    if not records:
        return None
    commit, final = records[0].get("seed_sha256"), records[-1].get("chain")
    if records[-1].get("type") != "footer" or not isinstance(final, str):
        return None
    return (commit, final)


def pair_flows(payments: list[int]) -> dict[tuple[int, int], int]:
    """How a deal's payments (summing to zero) flow between pairs of seats: ``{(payer, payee): groše}``.

    The seat with the largest absolute payment (the actor in every settled deal,
    the faulting player in a fault before the contract) exchanges with each of the
    other two exactly that seat's payment; the other two never pay each other, as
    in every settlement of R9.5 and R12.2.
    """
    if sum(payments) != 0:
        raise ValueError(f"payments {payments} do not sum to zero")
    hub = max(range(3), key=lambda s: (abs(payments[s]), -s))
    flows = {}
    for s in range(3):
        if s == hub or payments[s] == 0:
            continue
        if payments[s] > 0:
            flows[(hub, s)] = payments[s]
        else:
            flows[(s, hub)] = -payments[s]
    return flows
