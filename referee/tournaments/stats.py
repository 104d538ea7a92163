"""The statistics every table and test shares: Student's t, means with intervals, likelihood of superiority.

One quantile function serves every interval in ``marias`` (standings, strength,
the pairwise table, the head-to-head test), accurate at every number of degrees
of freedom: Student's t distribution function is computed from the regularized
incomplete beta function (a continued fraction, evaluated by the modified Lentz
method), and its quantile by Newton's method on that function, safeguarded by
bisection.  No table and no switch to the normal quantile at some df.

    P(T <= t) = 1 - I_x(df/2, 1/2) / 2   for t >= 0, where x = df / (df + t^2)
              = 1/2 + I_(1-x)(1/2, df/2) / 2   (the same, used near the centre)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist, fmean, stdev
from typing import Sequence

_NORMAL = NormalDist()


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz), for x < (a+1)/(a+b+2)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            return h
    raise ArithmeticError(f"incomplete beta: no convergence for a={a}, b={b}, x={x}")


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if a <= 0 or b <= 0:
        raise ValueError("betainc needs a > 0 and b > 0")
    if not 0.0 <= x <= 1.0:
        raise ValueError("betainc needs 0 <= x <= 1")
    if x == 0.0 or x == 1.0:
        return x
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` > 0 degrees of freedom (``math.inf``: the normal)."""
    if df <= 0 or math.isnan(df):
        raise ValueError(f"Student's t needs df > 0, got {df}")
    if math.isinf(df):
        return _NORMAL.cdf(t)
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    t2 = t * t
    if t2 < df:  # near the centre: P(|T| < |t|) = I_y(1/2, df/2), y = t^2 / (df + t^2), without cancellation
        inner = 0.5 * betainc(0.5, df / 2.0, t2 / (df + t2))
        return 0.5 + inner if t >= 0 else 0.5 - inner
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t2))  # P(T > |t|)
    return 1.0 - tail if t >= 0 else tail


def t_pdf(t: float, df: float) -> float:
    """The density of Student's t with ``df`` degrees of freedom."""
    if math.isinf(df):
        return _NORMAL.pdf(t)
    lg = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(lg - (df + 1) / 2 * math.log1p(t * t / df))


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` > 0 degrees of freedom (``math.inf``: the normal).

    ``t_quantile(0.975, df)`` is the factor of a two-sided 95% interval.  Accurate to
    about 1e-10 relative at every df (Newton's method on :func:`t_cdf`, bisection when
    a step would leave the bracket).
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1, got {p}")
    if df <= 0 or math.isnan(df):
        raise ValueError(f"Student's t needs df > 0, got {df}")
    if math.isinf(df):
        return _NORMAL.inv_cdf(p)
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    # bracket [lo, hi] with cdf(lo) < p <= cdf(hi); start from the normal quantile (t is wider)
    lo, hi = 0.0, max(1.0, _NORMAL.inv_cdf(p))
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    x = 0.5 * (lo + hi)
    for _ in range(200):
        f = t_cdf(x, df) - p
        if f < 0:
            lo = x
        else:
            hi = x
        dens = t_pdf(x, df)
        step = f / dens if dens > 0 else math.inf
        nxt = x - step
        if not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        if abs(nxt - x) <= 1e-13 * max(1.0, abs(x)):
            return nxt
        x = nxt
    return x


def gammainc(a: float, x: float) -> float:
    """The regularized lower incomplete gamma function P(a, x), for a > 0 and x >= 0."""
    if a <= 0 or x < 0:
        raise ValueError("gammainc needs a > 0 and x >= 0")
    if x == 0:
        return 0.0
    front = math.exp(a * math.log(x) - x - math.lgamma(a))
    if x < a + 1.0:  # the series  sum x^n / (a (a+1) ... (a+n))
        term = total = 1.0 / a
        k = a
        for _ in range(10_000):
            k += 1.0
            term *= x / k
            total += term
            if abs(term) < abs(total) * 1e-16:
                return front * total
        raise ArithmeticError(f"gammainc: no convergence for a={a}, x={x}")
    # the continued fraction of the upper function Q (modified Lentz)
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            return 1.0 - front * h
    raise ArithmeticError(f"gammainc: no convergence for a={a}, x={x}")


def chi2_cdf(x: float, df: float) -> float:
    """P(X <= x) for the chi-square distribution with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"chi-square needs df > 0, got {df}")
    return 0.0 if x <= 0 else gammainc(df / 2.0, x / 2.0)


def chi2_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of the chi-square distribution with ``df`` > 0 degrees of freedom (bisection)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1, got {p}")
    if df <= 0:
        raise ValueError(f"chi-square needs df > 0, got {df}")
    lo, hi = 0.0, max(1.0, 2.0 * df)
    while chi2_cdf(hi, df) < p:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if chi2_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1e-300, hi):
            break
    return 0.5 * (lo + hi)


def t975(df: float) -> float:
    """The factor of a two-sided 95% interval with ``df`` degrees of freedom: t(0.975, df)."""
    if df < 1:
        raise ValueError("t needs at least one degree of freedom")
    return t_quantile(0.975, df)


@dataclass(frozen=True)
class Estimate:
    """A mean of independent samples with its standard error and two-sided 95% interval."""

    n: int
    mean: float
    se: float | None  # None with fewer than two samples
    half: float | None  # half-width of the 95% interval: t(0.975, n-1) * se

    @property
    def low(self) -> float | None:
        return None if self.half is None else self.mean - self.half

    @property
    def high(self) -> float | None:
        return None if self.half is None else self.mean + self.half

    @property
    def los(self) -> float | None:
        """Likelihood of superiority: see :func:`los`."""
        return None if self.se is None else los(self.mean, self.se, self.n - 1)


def estimate(samples: Sequence[float], level: float = 0.95) -> Estimate:
    """Mean, standard error and the two-sided ``level`` interval (Student's t, n-1 df)."""
    n = len(samples)
    if n == 0:
        raise ValueError("an estimate needs at least one sample")
    m = fmean(samples)
    if n < 2:
        return Estimate(n, m, None, None)
    se = stdev(samples) / math.sqrt(n)
    return Estimate(n, m, se, t_quantile(0.5 + level / 2, n - 1) * se)


def ci95_half(samples: Sequence[float]) -> float | None:
    """Half-width of the 95% interval of the mean of ``samples``; None with fewer than two."""
    return estimate(samples).half if len(samples) >= 2 else None


def los(mean: float, se: float, df: float = math.inf) -> float:
    """Likelihood of superiority: the probability that the true mean difference is above zero.

    With a flat prior on the mean, the posterior of the mean of normal samples is
    Student's t with n-1 df, centred on the sample mean and scaled by its standard
    error, so LOS = T_df(mean / se) (the normal Φ(mean / se) for many samples, as
    chess testers compute it).  A zero standard error gives 1, 0 or ½.
    """
    if se <= 0:
        return 1.0 if mean > 0 else 0.0 if mean < 0 else 0.5
    return t_cdf(mean / se, df)


# ------------------------------------------------------------------ Elo units (as fastchess, cutechess and Ordo print them)

def elo(score: float) -> float | None:
    """The Elo difference of a score (the share of points, a win 1, a draw ½) under the logistic model
    chess uses: −400 · log10(1/score − 1).  None for a score of 0 or 1 (no finite difference)."""
    if not 0.0 < score < 1.0:
        return None
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True)
class EloEstimate:
    score: float  # the mean score
    elo: float | None  # its Elo difference
    low: float | None  # the 95% interval's ends, the score's ends in Elo
    high: float | None

    @property
    def half(self) -> float | None:
        """The ± of fastchess and Ordo: half the width of the interval in Elo."""
        return None if self.low is None or self.high is None else (self.high - self.low) / 2.0


def elo_estimate(group_scores: Sequence[float]) -> EloEstimate:
    """Elo with its 95% interval from the mean scores of independent samples (duplicate groups): the
    score's interval, t(0.975, n − 1) · s / √n as for groše, taken through the logistic.  The ends
    are None where the interval reaches a score of 0 or 1, and with one sample."""
    e = estimate(group_scores)
    lo = hi = None
    if e.half is not None:
        lo, hi = elo(e.mean - e.half), elo(e.mean + e.half)
        if lo is None or hi is None:
            lo = hi = None
    return EloEstimate(e.mean, elo(e.mean), lo, hi)
