"""The head-to-head SPRT (referee/tournaments/sprt.py) tested as a statistic: its LLR by hand, its bounds,
and its error rates by simulation from known distributions of group means."""

import math
import random

import pytest
from hypothesis import given, strategies as st

from referee.tournaments.sprt import H0, H1, SPRT, TRUNCATED, simulate


def test_bounds_are_walds():
    t = SPRT(h0=0, h1=10, alpha=0.05, beta=0.05)
    assert t.upper == pytest.approx(math.log(19)) and t.lower == pytest.approx(-math.log(19))
    t = SPRT(alpha=0.01, beta=0.2)
    assert t.upper == pytest.approx(math.log(0.8 / 0.01)) and t.lower == pytest.approx(math.log(0.2 / 0.99))


def test_llr_by_hand():
    # samples 4, 12, 8 with h0 0, h1 10: mean 8, s^2 = 16; chi-square with 2 df is exponential with
    # mean 2, so its 0.10 quantile is -2 ln 0.9; sigma^2 = 2 * 16 / (-2 ln 0.9)
    # LLR = sum[(x - 0)^2 - (x - 10)^2] / (2 sigma^2) = (224 - 44) / (2 sigma^2)
    sigma2 = 2 * 16 / (-2 * math.log(0.9))
    state = SPRT(h0=0, h1=10).run([4, 12, 8])
    assert state.llr == pytest.approx(180 / (2 * sigma2))
    assert state.n == 3 and state.estimate.mean == 8


@given(st.lists(st.floats(-200, 200), min_size=3, max_size=3), st.floats(-20, 20), st.floats(1, 30))
def test_llr_is_the_normal_likelihood_ratio(xs, h0, d):
    # the log of prod N(x; h1, sigma) / N(x; h0, sigma) written out, sigma^2 the bound above (n = 3)
    h1 = h0 + d
    m = sum(xs) / 3
    s2 = sum((x - m) ** 2 for x in xs) / 2
    if s2 < 1e-3:
        return
    sigma2 = 2 * s2 / (-2 * math.log(0.9))
    want = sum(-(x - h1) ** 2 / (2 * sigma2) + (x - h0) ** 2 / (2 * sigma2) for x in xs)
    got = SPRT(h0=h0, h1=h1).llr(3, sum(xs), sum(x * x for x in xs))
    assert got == pytest.approx(want, rel=1e-6, abs=1e-6)


def test_one_group_says_nothing_and_identical_groups_decide():
    t = SPRT()
    assert t.run([50.0]).llr == 0.0 and not t.run([50.0]).done
    assert t.run([0.0, 0.0]).decision == H0  # no spread at h0: S(h0) = 0
    assert t.run([10.0, 10.0]).decision == H1


def test_stops_at_the_first_crossing_and_reads_no_further():
    t = SPRT()
    s = t.run([60.0, 70.0, 65.0, 62.0, -500.0, -500.0])
    assert s.decision == H1 and s.n <= 4
    assert -500.0 not in s.samples
    with pytest.raises(ValueError):
        s.add(1.0)


def test_max_groups_truncates():
    s = SPRT(max_groups=3).run([5.0, 4.0, 6.0, 5.0])
    assert s.n == 3 and s.decision == TRUNCATED


@pytest.mark.parametrize("kw", [dict(h0=10, h1=10), dict(h0=5, h1=0), dict(alpha=0), dict(beta=0.5),
                                dict(alpha=float("nan")), dict(max_groups=0)])
def test_bad_designs(kw):
    with pytest.raises(ValueError):
        SPRT(**kw)


# ------------------------------------------------------------------ error rates by simulation

RUNS = 2000  # per hypothesis and distribution
#: The observed rate of a wrong decision is a binomial proportion over RUNS independent runs: its
#: standard error at the nominal rate p is sqrt(p (1 - p) / RUNS) (0.0049 at p = 0.05). A design
#: that keeps its promise shows at most p + 3 standard errors (a false alarm 0.13% of the time for a
#: test exactly at p; Wald's bounds usually make the true rate a little lower than p).
SIGMAS = 3


def _laplace_group(rng, mu, b):
    """The mean of 6 Laplace(0, b) partie results around mu: heavy tails, as big contracts make them."""
    return mu + sum(rng.expovariate(1 / b) * (1 if rng.random() < 0.5 else -1) for _ in range(6)) / 6


DISTRIBUTIONS = {
    # sd of a group mean against h1 - h0 = 10: 1x (decides in about 10 groups), 2x (26), 4x (90)
    "normal sd 10": lambda rng, mu: rng.gauss(mu, 10),
    "normal sd 20": lambda rng, mu: rng.gauss(mu, 20),
    "normal sd 40": lambda rng, mu: rng.gauss(mu, 40),
    "laplace mean of 6, sd 20": lambda rng, mu: _laplace_group(rng, mu, 35),
}


@pytest.mark.parametrize("name", list(DISTRIBUTIONS))
def test_error_rates_within_nominal(name):
    draw = DISTRIBUTIONS[name]
    t = SPRT(h0=0, h1=10, alpha=0.05, beta=0.05)
    rng = random.Random(f"sprt:{name}")
    at_h0 = simulate(t, lambda: draw(rng, 0.0), RUNS, cap=20_000)
    at_h1 = simulate(t, lambda: draw(rng, 10.0), RUNS, cap=20_000)
    se_a = math.sqrt(t.alpha * (1 - t.alpha) / RUNS)
    se_b = math.sqrt(t.beta * (1 - t.beta) / RUNS)
    print(f"{name}: alpha observed {at_h0['H1']:.4f}, beta observed {at_h1['H0']:.4f}, "
          f"mean groups {at_h0['mean_groups']:.1f} / {at_h1['mean_groups']:.1f}")
    assert at_h0["H1"] <= t.alpha + SIGMAS * se_a  # false H1 when H0 is true
    assert at_h1["H0"] <= t.beta + SIGMAS * se_b  # false H0 when H1 is true
    # the test stops: every run decided, far below the cap
    assert at_h0["undecided"] == 0 and at_h1["undecided"] == 0
    assert max(at_h0["max_groups"], at_h1["max_groups"]) < 2_000


def test_a_clear_difference_is_found_fast_and_truth_in_the_middle_is_split():
    t = SPRT()
    rng = random.Random(5)
    # robot against random: group means about 434 with sd 63 (measured over 12 decks). By hand, the
    # LLR at N groups is about N * 10 * 858 / (2 * 63^2 * factor(N)) with factor(N) = (N-1) / chi2(0.1, N-1):
    # 1.08 N / factor(N) passes ln 19 = 2.94 at N = 8 (factor 3.10 at 6, 2.72 at 7, 2.46 at 8) for groups
    # exactly at the mean, earlier or later by chance
    big = simulate(t, lambda: rng.gauss(434, 63), 500)
    assert big["H1"] == 1.0 and big["mean_groups"] < 9 and big["max_groups"] <= 15
    # halfway between the hypotheses the test is indifferent: each decision about half the time
    mid = simulate(t, lambda: rng.gauss(5, 10), 1000)
    assert 0.4 < mid["H1"] < 0.6


def test_the_simulation_sees_a_test_that_breaks_its_promise(monkeypatch):
    # the same test with the plain sample variance (no confidence bound) stops on too small a
    # variance after few groups: its false H1 rate is about 0.17 here, far outside 0.05 + 3 se
    import referee.tournaments.sprt as M

    monkeypatch.setattr(M, "variance_bound", lambda s2, n: s2)
    rng = random.Random("plain")
    at_h0 = simulate(SPRT(), lambda: rng.gauss(0.0, 20), RUNS)
    assert at_h0["H1"] > 0.05 + SIGMAS * math.sqrt(0.05 * 0.95 / RUNS)
