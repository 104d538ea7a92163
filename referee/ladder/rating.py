"""A ladder's ratings: openskill's Plackett–Luce model over duplicate groups (protocol/TOURNAMENT.md,
"Ladder").

One duplicate group (one secret deck in the six seatings of three versions) is one *game* for the
model: the three versions are ordered by the groše they won over the group's six partie, so that the
luck of the cards has cancelled before anything is rated.  Each version carries ``mu`` (its skill) and
``sigma`` (the uncertainty of it, a standard deviation); the interval shown is ``mu ± 1.96 sigma``.

Why openskill and not a Bradley–Terry fit: a ladder rates one group at a time for weeks, with
versions arriving and leaving; openskill updates three ratings in constant time per group (no refit
over 100,000 partie), it rates a table of three directly (Plackett–Luce is the three-player
generalisation of Bradley–Terry), and its ``sigma`` is the uncertainty the pairing needs to decide
who plays next.  What it gives up: the order of groups matters a little, and the margin of a win
does not (only the order of the three totals); the pair table beside the ratings shows the margins
(mean groše per partie between two versions, with a t interval over the groups they shared).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054  # the two-sided 95% quantile of the normal distribution
MU0 = 25.0  # openskill's defaults: a new version's skill and its uncertainty
SIGMA0 = 25.0 / 3


@dataclass(frozen=True)
class Rating:
    mu: float = MU0
    sigma: float = SIGMA0

    @property
    def low(self) -> float:
        return self.mu - Z95 * self.sigma

    @property
    def high(self) -> float:
        return self.mu + Z95 * self.sigma


_MODEL = None


def _model():
    global _MODEL
    if _MODEL is None:
        from openskill.models import PlackettLuce

        _MODEL = PlackettLuce(mu=MU0, sigma=SIGMA0)
    return _MODEL


def rate(ratings: list[Rating], scores: list[float]) -> list[Rating]:
    """The ratings after one group in which version ``i`` won ``scores[i]`` groše in total (more is
    better; equal totals tie)."""
    if len(ratings) != len(scores) or len(ratings) < 2:
        raise ValueError("a group rates two or more versions, each with its score")
    m = _model()
    teams = [[m.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    out = m.rate(teams, scores=[float(s) for s in scores])
    return [Rating(t[0].mu, t[0].sigma) for t in out]


@dataclass(frozen=True)
class PairDifference:
    """The groše per partie version ``a`` won over version ``b`` in the groups where both sat: the mean
    over those groups (each group's difference is its six partie's, divided by six), with a Student t
    95% interval (None with fewer than two groups)."""

    a: str
    b: str
    groups: int
    mean: float
    half: float | None
    se: float | None = None

    @property
    def los(self) -> float | None:
        """Likelihood that ``a`` is the better (:func:`referee.tournaments.stats.los`)."""
        from ..tournaments.stats import los

        return None if self.se is None else los(self.mean, self.se, self.groups - 1)

    @property
    def low(self) -> float | None:
        return None if self.half is None else self.mean - self.half

    @property
    def high(self) -> float | None:
        return None if self.half is None else self.mean + self.half


def pair_difference(a: str, b: str, n: int, total: float, squares: float) -> PairDifference:
    """From the running sums the database keeps per pair (``n`` groups, the sum of the per-group
    differences and of their squares)."""
    from ..tournaments.stats import t975

    if n <= 0:
        return PairDifference(a, b, 0, 0.0, None)
    mean = total / n
    if n < 2:
        return PairDifference(a, b, n, mean, None)
    var = max(0.0, (squares - n * mean * mean) / (n - 1))
    se = math.sqrt(var / n)
    return PairDifference(a, b, n, mean, t975(n - 1) * se, se)
