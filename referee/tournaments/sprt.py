"""A sequential probability ratio test over group means (the head-to-head test, protocol/TOURNAMENT.md).

The samples x_1 … x_N are independent group means (bot A's mean groše per partie
over one head-to-head group).  H0: their mean is ``h0``; H1: it is ``h1`` (groše per
partie).  A generalized SPRT in the normal approximation, as fishtest and fastchess
run it on pentanomial game pairs (M. Van den Bergh's notes): the samples are taken
as normal with the variance estimated from them, and the log-likelihood ratio of the
two hypotheses is

    LLR = N · (h1 − h0) · (2·x̄ − h0 − h1) / (2·σ̂²)

(the normal log-likelihood ratio Σ[(x − h0)² − (x − h1)²] / (2σ²) with σ² replaced by
its estimate).  Wald's bounds: accept H1 when LLR ≥ ln((1 − β)/α), H0 when
LLR ≤ ln(β/(1 − α)), continue otherwise.

Chess tests reach a decision after thousands of game pairs, where the sample variance
s² is exact enough.  A duel decides in a few groups, and there s² is too small too
often: a test stopping on the plain s² accepts the wrong hypothesis 11-18% of the time
for nominal 5% (simulated, groups of sd 1-4 times h1 − h0).  So σ̂² is the upper 90%
confidence bound of the variance,

    σ̂² = (N − 1) · s² / χ²(0.10; N − 1),

which tends to s² for many groups (the factor is 1.47 at 30 groups, 1.12 at 300) and
is large for few (63 at 2 groups, 9.5 at 3).  With it the simulated error rates are within the
nominal ones (tests/test_sprt.py).  One group says nothing (LLR 0).

The model's limit: the group means should be roughly symmetric.  A strongly skewed
distribution (exponential) makes the wrong H0 too likely at few groups.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from .stats import Estimate, chi2_quantile, estimate

#: the variance of the group means enters the LLR as this upper confidence bound (1 - this level)
VARIANCE_BOUND_P = 0.10
_BOUND_FACTOR: dict[int, float] = {}


def variance_bound(s2: float, n: int) -> float:
    """The upper 90% confidence bound of the variance from ``n`` samples of sample variance ``s2``."""
    f = _BOUND_FACTOR.get(n)
    if f is None:
        f = _BOUND_FACTOR[n] = (n - 1) / chi2_quantile(VARIANCE_BOUND_P, n - 1)
    return s2 * f

H0, H1, CONTINUE, TRUNCATED = "H0", "H1", "continue", "no decision"


@dataclass(frozen=True)
class SPRT:
    """The test's design: hypotheses in groše per partie, error rates, and a cap on the groups."""

    h0: float = 0.0
    h1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    max_groups: int | None = None  # None: no cap

    def __post_init__(self):
        for name in ("h0", "h1", "alpha", "beta"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise ValueError(f"{name} is a finite number, got {v!r}")
        if not self.h1 > self.h0:
            raise ValueError(f"h1 must be greater than h0 (got h0 {self.h0}, h1 {self.h1})")
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not 0.0 < v < 0.5:
                raise ValueError(f"{name} is an error rate between 0 and 0.5 (exclusive), got {v}")
        if self.max_groups is not None and self.max_groups < 1:
            raise ValueError(f"max_groups is at least 1, got {self.max_groups}")

    @property
    def lower(self) -> float:
        """ln(β / (1 − α)): at or below it H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """ln((1 − β) / α): at or above it H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, n: int, total: float, squares: float) -> float:
        """The LLR of ``n`` samples from their sum and sum of squares (see the module's formula)."""
        if n < 2:
            return 0.0
        mean = total / n
        s2 = max(0.0, squares - n * mean * mean) / (n - 1)
        drift = n * (self.h1 - self.h0) * (2.0 * mean - self.h0 - self.h1)
        if s2 <= 1e-12 * max(1.0, mean * mean):  # every group the same: certain on the side it lies
            return 0.0 if drift == 0 else math.copysign(math.inf, drift)
        return drift / (2.0 * variance_bound(s2, n))

    def decide(self, llr: float, n: int) -> str:
        if llr >= self.upper:
            return H1
        if llr <= self.lower:
            return H0
        if self.max_groups is not None and n >= self.max_groups:
            return TRUNCATED
        return CONTINUE

    def run(self, samples: Iterable[float]) -> "SPRTState":
        """Feed samples in order and stop at the first decision: the state at that point.

        Samples after the decision are not read (the test stopped there).
        """
        state = SPRTState(self)
        for x in samples:
            if state.done:
                break
            state = state.add(x)
        return state


@dataclass(frozen=True)
class SPRTState:
    """The test after ``n`` samples: running sums, the LLR and the decision."""

    test: SPRT
    n: int = 0
    total: float = 0.0
    squares: float = 0.0
    samples: tuple[float, ...] = ()

    def add(self, x: float) -> "SPRTState":
        if self.done:
            raise ValueError(f"the test has already decided ({self.decision}) after {self.n} groups")
        return SPRTState(self.test, self.n + 1, self.total + x, self.squares + x * x, self.samples + (float(x),))

    @property
    def llr(self) -> float:
        return self.test.llr(self.n, self.total, self.squares)

    @property
    def decision(self) -> str:
        return self.test.decide(self.llr, self.n)

    @property
    def done(self) -> bool:
        return self.decision != CONTINUE

    @property
    def estimate(self) -> Estimate | None:
        """The mean of the samples with its 95% interval (Student's t, n − 1 df)."""
        return estimate(self.samples) if self.samples else None


def simulate(test: SPRT, draw, runs: int, cap: int = 100_000) -> dict:
    """Run the test ``runs`` times on samples from ``draw()``: how often each decision, and the groups used.

    ``cap`` bounds each run (one that reaches it counts as undecided); used by the tests
    and by anyone who wants the error rates of a design before playing it.
    """
    counts = {H0: 0, H1: 0, TRUNCATED: 0}
    lengths: list[int] = []
    for _ in range(runs):
        n, total, squares = 0, 0.0, 0.0
        decision = CONTINUE
        while decision == CONTINUE and n < cap:
            x = draw()
            n += 1
            total += x
            squares += x * x
            decision = test.decide(test.llr(n, total, squares), n)
        counts[decision if decision != CONTINUE else TRUNCATED] += 1
        lengths.append(n)
    return {"runs": runs, "H0": counts[H0] / runs, "H1": counts[H1] / runs, "undecided": counts[TRUNCATED] / runs,
            "mean_groups": sum(lengths) / runs, "max_groups": max(lengths)}


def summary(state: SPRTState) -> str:
    """One line: groups, LLR against its bounds, the estimate with its interval."""
    t = state.test
    e = state.estimate
    est = "-" if e is None else (f"{e.mean:+.1f}" + (f" ±{e.half:.1f}" if e.half is not None else ""))
    return (f"groups {state.n}  LLR {state.llr:+.2f} [{t.lower:+.2f}, {t.upper:+.2f}]  "
            f"estimate {est} groše/partie (95%)")

