"""Who plays next on a ladder: the rule that draws each table of three versions (protocol/TOURNAMENT.md,
"Ladder", where it is written for authors).  A pure function of the active versions and how often
each pair has met, so that it is tested on its own and costs microseconds.

1. A version's *need* is, in order: fewer groups already planned for it and not yet rated (so
   that parallel tables spread over the field), larger rating uncertainty ``sigma``, fewer groups
   rated, then its id.  A new version has openskill's largest ``sigma``, so it plays at once and
   more often at first, until its rating settles like the others'.
2. An ordinary table seats the version with the greatest need; then, of the others, the one it
   has met least (ties: greatest need); then the one the first two have met least in sum (ties:
   greatest need).
3. Every ``cover_every``-th table is a *cover* table: it seats the pair of active versions that has
   met least (ties: the pair whose members have the greatest need, then by id) and the version of
   greatest need beside them.  Each cover table raises the count of a least-met pair, so within
   ``cover_every`` x N(N-1)/2 tables every pair of N active versions meets, and then again, for as
   long as the ladder runs: every active version meets every other over time.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Candidate:
    """An active version as the pairing sees it."""

    id: str
    sigma: float
    groups: int = 0  # groups rated
    inflight: int = 0  # groups planned and not yet rated

    @property
    def need(self) -> tuple:
        """Smaller is needier (rule 1)."""
        return (self.inflight, -self.sigma, self.groups, self.id)


def meeting_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def pair(candidates: list[Candidate], meetings: dict[tuple[str, str], int], table: int,
         cover_every: int = 4) -> tuple[str, str, str] | None:
    """The three versions of table number ``table`` (1-based), or None with fewer than three.
    ``meetings[(a, b)]`` (a < b) counts the groups where a and b sat together, planned or rated."""
    if len(candidates) < 3:
        return None

    def met(a: str, b: str) -> int:
        return meetings.get(meeting_key(a, b), 0)

    if cover_every and table % cover_every == 0:
        best = None
        for i, x in enumerate(candidates):
            for y in candidates[i + 1:]:
                a, b = (x, y) if x.need <= y.need else (y, x)
                key = (met(a.id, b.id), a.need, b.need)
                if best is None or key < best[0]:
                    best = (key, a, b)
        _, a, b = best  # type: ignore[misc]
        third = min((c for c in candidates if c.id not in (a.id, b.id)), key=lambda c: c.need)
        return (a.id, b.id, third.id)
    first = min(candidates, key=lambda c: c.need)
    rest = [c for c in candidates if c.id != first.id]
    second = min(rest, key=lambda c: (met(first.id, c.id), c.need))
    third = min((c for c in rest if c.id != second.id),
                key=lambda c: (met(first.id, c.id) + met(second.id, c.id), c.need))
    return (first.id, second.id, third.id)
