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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tournaments.stats import Estimate

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
    over those groups (each group's difference is its six partie's, divided by six), with its Student t
    95% interval and likelihood of superiority (:class:`referee.tournaments.stats.Estimate`, whose ``n``
    is the number of groups; no interval with fewer than two)."""

    a: str
    b: str
    estimate: "Estimate"


def pair_difference(a: str, b: str, n: int, total: float, squares: float) -> PairDifference:
    """From the running sums the database keeps per pair (``n`` groups, the sum of the per-group
    differences and of their squares)."""
    from ..tournaments.stats import Estimate, t975

    if n <= 0:
        return PairDifference(a, b, Estimate(0, 0.0, None, None))
    mean = total / n
    if n < 2:
        return PairDifference(a, b, Estimate(n, mean, None, None))
    se = math.sqrt(max(0.0, (squares - n * mean * mean) / (n - 1)) / n)
    return PairDifference(a, b, Estimate(n, mean, se, t975(n - 1) * se))
