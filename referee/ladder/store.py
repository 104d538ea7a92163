"""What ``marias ladder run`` writes in the ladder's database (:mod:`referee.ladder.folder`), each
call one transaction: a group planned, a partie accepted (and with a group's sixth, its rating), a
group made void, a version suspended.

A group is rated exactly once: its status goes from ``playing`` to ``rated`` in the same
transaction that writes the three new ratings, their history, the pair sums and the versions'
counts; a partie is accepted once (its unit id is the key).  So a runner killed at any moment and
started again counts every finished partie and group once.
"""

from __future__ import annotations

import sqlite3

from .folder import SEATINGS, Planned, now, unit_id
from .rating import Rating, rate


def plan_group(con: sqlite3.Connection, table: int, versions: tuple[str, str, str]) -> Planned:
    """A new group of ``versions`` at ``table``, status ``playing``."""
    with con:
        cur = con.execute("INSERT INTO groups (tbl, v0, v1, v2, status, planned) VALUES (?,?,?,?,?,?)",
                          (table, *versions, "playing", now()))
    return Planned(int(cur.lastrowid), table, tuple(versions))  # type: ignore[arg-type]


def next_table(con: sqlite3.Connection) -> int:
    return int(con.execute("SELECT COALESCE(MAX(tbl), 0) + 1 FROM groups").fetchone()[0])


def playing_groups(con: sqlite3.Connection) -> list[Planned]:
    """The groups planned and not yet rated or void, with their units accepted so far."""
    out = []
    for n, tbl, v0, v1, v2 in con.execute("SELECT n, tbl, v0, v1, v2 FROM groups WHERE status='playing' ORDER BY n"):
        done = dict(con.execute("SELECT id, log FROM units WHERE grp=?", (n,)).fetchall())
        out.append(Planned(n, tbl, (v0, v1, v2), done))
    return out


def accept_unit(con: sqlite3.Connection, group: Planned, seating: str, log: str, sha256: str,
                totals: list[int], faults: list[int]) -> dict | None:
    """Record one accepted partie of ``group`` (``seating``: seat i holds the group's version
    ``int(seating[i])``); with the group's sixth partie, rate it (:func:`rate_group`).  Returns the
    rating change when the group was rated (else None).  A partie already recorded is left as it is."""
    uid = unit_id(group.n, seating)
    seats = [group.versions[int(c)] for c in seating]
    with con:
        cur = con.execute("INSERT OR IGNORE INTO units VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                          (uid, group.n, seating, log, sha256, now(), *seats, *totals, *faults))
        if cur.rowcount == 0:
            return None
        group.done[uid] = log
        for v, g, f in zip(seats, totals, faults):
            con.execute("UPDATE versions SET games=games+1, faults=faults+?, groše=groše+?, last_played=? WHERE id=?",
                        (f, g, now(), v))
        if con.execute("SELECT COUNT(*) FROM units WHERE grp=?", (group.n,)).fetchone()[0] < len(SEATINGS):
            return None
        return rate_group(con, group)


def group_totals(con: sqlite3.Connection, group: Planned) -> list[int]:
    """Each of the group's three versions' groše over its six partie."""
    out = {v: 0 for v in group.versions}
    for s0, s1, s2, g0, g1, g2 in con.execute(
            "SELECT seat0, seat1, seat2, groše0, groše1, groše2 FROM units WHERE grp=?", (group.n,)):
        for v, g in ((s0, g0), (s1, g1), (s2, g2)):
            out[v] += g
    return [out[v] for v in group.versions]


def rate_group(con: sqlite3.Connection, group: Planned) -> dict | None:
    """Inside the caller's transaction: the group's rating (openskill over the three totals), the
    history rows, the pair sums, the versions' group counts, and the group marked rated."""
    row = con.execute("SELECT status FROM groups WHERE n=?", (group.n,)).fetchone()
    if row is None or row[0] != "playing":
        return None
    totals = group_totals(con, group)
    vs = list(group.versions)
    old = [Rating(*con.execute("SELECT mu, sigma FROM versions WHERE id=?", (v,)).fetchone()) for v in vs]
    new = rate(old, totals)
    t = now()
    for v, r in zip(vs, new):
        con.execute("UPDATE versions SET mu=?, sigma=?, groups=groups+1 WHERE id=?", (r.mu, r.sigma, v))
        groups = con.execute("SELECT groups FROM versions WHERE id=?", (v,)).fetchone()[0]
        con.execute("INSERT OR REPLACE INTO history VALUES (?,?,?,?,?,?)",
                    (v, group.n, t, groups * len(SEATINGS), r.mu, r.sigma))
    for i in range(3):
        for j in range(i + 1, 3):
            a, b, d = vs[i], vs[j], (totals[i] - totals[j]) / len(SEATINGS)
            if a > b:
                a, b, d = b, a, -d
            con.execute("INSERT INTO pairs VALUES (?,?,1,?,?,?) ON CONFLICT (a, b) DO UPDATE SET "
                        "groups=groups+1, total=total+excluded.total, squares=squares+excluded.squares, "
                        "last=excluded.last", (a, b, d, d * d, group.n))
    con.execute("UPDATE groups SET status='rated', finished=? WHERE n=?", (t, group.n))
    return {"group": group.n, "versions": vs, "totals": totals,
            "before": [(r.mu, r.sigma) for r in old], "after": [(r.mu, r.sigma) for r in new]}


def void_group(con: sqlite3.Connection, group: Planned, why: str, culprit: str | None = None) -> None:
    """A group that cannot be completed (a partie failed twice): never rated; its partie stay on
    record; a fault is counted against the version the failure points to."""
    with con:
        con.execute("UPDATE groups SET status='void', finished=?, why=? WHERE n=? AND status='playing'",
                    (now(), why[:2000], group.n))
        if culprit is not None:
            con.execute("UPDATE versions SET faults=faults+1 WHERE id=?", (culprit,))


def recent_fault_rate(con: sqlite3.Connection, version: str, window: int) -> tuple[int, float]:
    """(partie, faults per partie) over the version's last ``window`` partie."""
    rows = con.execute(
        "SELECT CASE WHEN seat0=?1 THEN faults0 WHEN seat1=?1 THEN faults1 ELSE faults2 END FROM units "
        "WHERE seat0=?1 OR seat1=?1 OR seat2=?1 ORDER BY grp DESC LIMIT ?2", (version, int(window))).fetchall()
    if not rows:
        return 0, 0.0
    return len(rows), sum(r[0] for r in rows) / len(rows)


def suspend_if_faulty(con: sqlite3.Connection, version: str, suspend: dict) -> str | None:
    """Suspend ``version`` when its faults per partie over its last ``window`` partie (at least
    ``min_partie`` of them) pass ``fault_rate``: the reason, else None."""
    n, rate_ = recent_fault_rate(con, version, int(suspend["window"]))
    if n < int(suspend["min_partie"]) or rate_ <= float(suspend["fault_rate"]):
        return None
    why = (f"suspended: {rate_:.2f} faults per partie over its last {n} partie (more than "
           f"{float(suspend['fault_rate']):g}); its bots' stderr is kept in logs/")
    with con:
        con.execute("UPDATE versions SET status='suspended', reason=?, changed=? WHERE id=? AND status='active'",
                    (why, now(), version))
    return why


def pairing_input(con: sqlite3.Connection):
    """What :func:`referee.ladder.pairing.pair` needs, read in one go: the active versions as
    candidates (with their groups planned and not rated) and the pairs' meetings (rated groups from
    the pair sums, planned ones from the groups playing)."""
    from .pairing import Candidate, meeting_key

    inflight: dict[str, int] = {}
    meetings: dict[tuple[str, str], int] = {}
    for a, b, n in con.execute("SELECT a, b, groups FROM pairs"):
        meetings[(a, b)] = n
    for vs in con.execute("SELECT v0, v1, v2 FROM groups WHERE status='playing'"):
        for i, v in enumerate(vs):
            inflight[v] = inflight.get(v, 0) + 1
            for w in vs[i + 1:]:
                k = meeting_key(v, w)
                meetings[k] = meetings.get(k, 0) + 1
    cands = [Candidate(i, sg, g, inflight.get(i, 0))
             for i, sg, g in con.execute("SELECT id, sigma, groups FROM versions WHERE status='active' ORDER BY rowid")]
    return cands, meetings
