"""The shared statistics (referee/tournaments/stats.py): Student's t against published table values,
closed forms and a numerical integral; intervals and likelihood of superiority."""

import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from referee.tournaments import stats as S

# Two-sided table values of Student's t (p = 0.975 unless noted), as printed in standard
# tables (e.g. the NIST/SEMATECH e-Handbook, table 1.3.6.7.2), to the digits printed there.
TABLE = [
    (0.975, 1, 12.706), (0.975, 2, 4.303), (0.975, 3, 3.182), (0.975, 5, 2.571),
    (0.975, 10, 2.228), (0.975, 20, 2.086), (0.975, 30, 2.042), (0.975, 31, 2.040),
    (0.975, 40, 2.021), (0.975, 60, 2.000), (0.975, 100, 1.984), (0.975, 1000, 1.962),
    (0.95, 1, 6.314), (0.95, 10, 1.812), (0.95, 100, 1.660),
    (0.995, 1, 63.657), (0.995, 10, 3.169), (0.995, 100, 2.626),
    (0.9995, 1, 636.619), (0.9995, 5, 6.869),
]


@pytest.mark.parametrize("p,df,value", TABLE)
def test_quantile_matches_the_printed_table(p, df, value):
    assert S.t_quantile(p, df) == pytest.approx(value, abs=6e-4)
    assert S.t_quantile(1 - p, df) == pytest.approx(-value, abs=6e-4)


@given(st.floats(0.001, 0.999))
def test_closed_forms_at_one_and_two_df(p):
    # df 1 is the Cauchy distribution; df 2 has the quantile (2p-1) / sqrt(2p(1-p))
    assert S.t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9, abs=1e-12)
    assert S.t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9, abs=1e-12)


def test_the_cdf_is_the_integral_of_the_density():
    # Simpson's rule on the textbook density, written out here independently
    def density(x, v):
        return math.gamma((v + 1) / 2) / (math.sqrt(v * math.pi) * math.gamma(v / 2)) * (1 + x * x / v) ** (-(v + 1) / 2)

    for v in (1, 3, 7.5, 31, 120):
        for t in (0.3, 1.0, 2.04, 4.0):
            n = 2000
            h = t / n
            s = density(0, v) + density(t, v) + sum((4 if i % 2 else 2) * density(i * h, v) for i in range(1, n))
            assert S.t_cdf(t, v) == pytest.approx(0.5 + s * h / 3, abs=1e-9)


def test_large_df_tends_to_the_normal():
    z = 1.959963984540054
    assert S.t_quantile(0.975, math.inf) == pytest.approx(z, abs=1e-12)
    assert S.t_quantile(0.975, 10 ** 7) == pytest.approx(z, abs=1e-6)
    # Cornish-Fisher: t ~ z + (z^3 + z) / (4 df) + (5z^5 + 16z^3 + 3z) / (96 df^2) for large df
    v = 5000
    cf = z + (z ** 3 + z) / (4 * v) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * v ** 2)
    assert S.t_quantile(0.975, v) == pytest.approx(cf, abs=1e-9)


@settings(max_examples=200)
@given(st.floats(0.0005, 0.9995), st.floats(0.5, 1e4))
def test_quantile_inverts_the_cdf(p, df):
    assert S.t_cdf(S.t_quantile(p, df), df) == pytest.approx(p, abs=1e-11)


@given(st.integers(1, 400))
def test_wider_with_fewer_df(df):
    assert S.t_quantile(0.975, df) > S.t_quantile(0.975, df + 1) > 1.959963984540054


def test_bad_arguments():
    for p in (0, 1, -0.1, 1.5):
        with pytest.raises(ValueError):
            S.t_quantile(p, 5)
    with pytest.raises(ValueError):
        S.t_quantile(0.9, 0)
    with pytest.raises(ValueError):
        S.t975(0)


def test_betainc_against_a_numerical_integral():
    # the arcsine law: I_x(1/2, 1/2) = (2/pi) asin(sqrt(x)) (a singular integrand, checked in closed form)
    assert S.betainc(0.5, 0.5, 0.3) == pytest.approx(2 / math.pi * math.asin(math.sqrt(0.3)), rel=1e-12)
    for a, b, x in ((2.0, 3.0, 0.7), (15.5, 0.5, 0.9), (1.0, 1.0, 0.42)):
        n = 20000  # midpoint rule on B(a,b) * I_x(a,b) = int_0^x u^(a-1) (1-u)^(b-1) du
        num = sum(((i + 0.5) * x / n) ** (a - 1) * (1 - (i + 0.5) * x / n) ** (b - 1) for i in range(n)) * x / n
        den = math.gamma(a) * math.gamma(b) / math.gamma(a + b)
        assert S.betainc(a, b, x) == pytest.approx(num / den, rel=2e-3)
    assert S.betainc(1.0, 1.0, 0.42) == pytest.approx(0.42, abs=1e-14)


def test_estimate_by_hand():
    # samples 1, 2, 3, 4: mean 2.5, s = sqrt(5/3), se = s/2, 3 df
    e = S.estimate([1, 2, 3, 4])
    assert e.mean == 2.5
    assert e.se == pytest.approx(math.sqrt(5 / 3) / 2)
    assert e.half == pytest.approx(3.182446305 * math.sqrt(5 / 3) / 2, rel=1e-8)
    assert e.low < 2.5 < e.high
    assert S.estimate([7]).half is None and S.estimate([7]).los is None
    assert S.ci95_half([1.0]) is None


def test_interval_covers_the_mean_95_percent_of_the_time():
    # 2000 seeded samples of 4 normals: coverage 0.95, binomial se 0.0049; a normal-quantile
    # interval (1.96) would cover only about 0.86 at 3 df, outside the tolerance.
    rng = random.Random(13)
    hits = 0
    for _ in range(2000):
        e = S.estimate([rng.gauss(3.0, 2.0) for _ in range(4)])
        hits += e.low <= 3.0 <= e.high
    assert abs(hits / 2000 - 0.95) < 4 * math.sqrt(0.95 * 0.05 / 2000)


def test_likelihood_of_superiority():
    assert S.los(0.0, 1.0) == pytest.approx(0.5)
    assert S.los(1.959963984540054, 1.0) == pytest.approx(0.975, abs=1e-12)
    assert S.los(2.228138851986, 1.0, 10) == pytest.approx(0.975, abs=1e-9)
    assert S.los(-3, 0) == 0.0 and S.los(3, 0) == 1.0 and S.los(0, 0) == 0.5
    assert S.estimate([1, 2, 3, 4]).los == pytest.approx(S.t_cdf(2.5 / (math.sqrt(5 / 3) / 2), 3))


@given(st.floats(0.001, 0.999))
def test_chi_square_with_two_df_is_exponential(p):
    assert S.chi2_quantile(p, 2) == pytest.approx(-2 * math.log(1 - p), rel=1e-9)
    assert S.chi2_cdf(-2 * math.log(1 - p), 2) == pytest.approx(p, abs=1e-12)


@pytest.mark.parametrize("p,df,value", [(0.10, 1, 0.0158), (0.05, 10, 3.940), (0.10, 29, 19.768),
                                        (0.975, 30, 46.979), (0.95, 100, 124.342), (0.5, 1, 0.455)])
def test_chi_square_quantile_matches_the_printed_table(p, df, value):
    assert S.chi2_quantile(p, df) == pytest.approx(value, abs=6e-4)


def test_chi_square_with_one_df_is_a_squared_normal():
    for x in (0.01, 0.5, 2.0, 9.0):
        assert S.chi2_cdf(x, 1) == pytest.approx(2 * S.NormalDist().cdf(math.sqrt(x)) - 1, abs=1e-12)


# ------------------------------------------------------------------ the pairs table (referee/tournaments/standings.py)

def _partie(bots, totals, deck, n=1):
    from referee.tournaments import standings as St
    assert sum(totals) == 0
    deal = {"type": "deal", "result": {"kind": "played", "actor": None, "components": [], "payments": list(totals),
                                       "notes": []}, "decisions": [], "faults": []}
    return St.PartieRecord("hand.jsonl", n, tuple(bots), list(totals), [], [deal], (deck,))


def test_pairs_by_hand():
    from referee.tournaments import standings as St
    # deck g1: A B C (30, -10, -20) and B A C (0, 10, -10) -> A - B: 40, 10 -> group mean 25
    # deck g2: A B C (-6, 0, 6)                           -> A - B: -6        -> group mean -6
    # deck g3: A C D (5, -5, 0): B absent, not counted for A-B
    parts = [_partie("ABC", (30, -10, -20), "g1"), _partie("BAC", (0, 10, -10), "g1", 2),
             _partie("ABC", (-6, 0, 6), "g2", 3), _partie("ACD", (5, -5, 0), "g3", 4)]
    rows = {(r["bot"], r["vs"]): r for r in St.pairwise_rows(St.compute(parts))}
    ab = rows[("A", "B")]
    assert ab["partie"] == 3 and ab["groups"] == 2
    assert ab["diff"] == pytest.approx((40 + 10 - 6) / 3, abs=0.005)
    # two group means 25 and -6: mean 9.5, s = 31 / sqrt 2, se = 15.5, t(0.975, 1) = 12.7062
    assert ab["±95%"] == pytest.approx(12.7062 * 15.5, abs=0.01)
    assert ab["LOS"] == pytest.approx(0.5 + math.atan(9.5 / 15.5) / math.pi, abs=1e-3)  # Cauchy cdf
    assert ("A", "D") in rows and rows[("A", "D")]["groups"] == 1 and rows[("A", "D")]["±95%"] is None
    assert ("B", "D") not in rows and ("D", "B") not in rows  # never met


@given(st.lists(st.tuples(st.permutations("ABC"), st.integers(-50, 50), st.integers(-50, 50), st.integers(0, 3)),
                min_size=1, max_size=12))
def test_pairs_agree_with_a_brute_force(games):
    from referee.tournaments import standings as St
    parts = [_partie(bots, (x, y, -x - y), f"d{d}", i) for i, (bots, x, y, d) in enumerate(games)]
    rows = St.pairwise_rows(St.compute(parts))
    assert len(rows) == 3  # every pair of A, B, C met in every partie
    for r in rows:
        diffs = [p.totals[p.bots.index(r["bot"])] - p.totals[p.bots.index(r["vs"])] for p in parts]
        assert r["diff"] == pytest.approx(sum(diffs) / len(diffs), abs=0.006) and r["diff"] >= 0
        assert r["partie"] == len(parts) and r["groups"] == len({p.deck for p in parts})


# ------------------------------------------------------------------ Elo units (issue 25 point 9)

def test_elo_of_a_score_is_the_logistic_chess_uses():
    from referee.tournaments.stats import elo, elo_estimate

    assert elo(0.5) == 0.0
    assert abs(elo(0.75) - 190.848501887865) < 1e-9  # 400 · log10(3)
    assert abs(elo(0.25) + elo(0.75)) < 1e-12
    assert elo(0.0) is None and elo(1.0) is None
    e = elo_estimate([0.5, 0.75, 0.25, 0.5, 2 / 3, 1 / 3])
    assert e.score == 0.5 and e.elo == 0.0
    # the interval is the score's t interval taken through the logistic: symmetric here
    from referee.tournaments.stats import estimate

    s = estimate([0.5, 0.75, 0.25, 0.5, 2 / 3, 1 / 3])
    assert abs(e.high - elo(0.5 + s.half)) < 1e-9 and abs(e.low + e.high) < 1e-9 and e.half == e.high
    assert elo_estimate([0.9]).half is None  # one group: no interval
    assert elo_estimate([1.0, 0.9, 1.0]).half is None  # the interval reaches a score of 1: no finite end
