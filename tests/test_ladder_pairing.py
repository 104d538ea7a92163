"""The ladder's pairing rule and ratings (referee/ladder/pairing.py, rating.py): properties over random
fields, and hand-worked cases of the rule as TOURNAMENT.md states it."""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.ladder.pairing import Candidate, meeting_key, pair
from referee.ladder.rating import SIGMA0, Rating, pair_difference, rate

ids = [f"v{i:02d}" for i in range(12)]


@st.composite
def fields(draw, min_size=3, max_size=12):
    n = draw(st.integers(min_size, max_size))
    out = []
    for i in range(n):
        out.append(Candidate(ids[i], draw(st.floats(0.5, SIGMA0)), draw(st.integers(0, 50)), draw(st.integers(0, 3))))
    meetings = {}
    for a, b in itertools.combinations(ids[:n], 2):
        k = draw(st.integers(0, 5))
        if k:
            meetings[(a, b)] = k
    return out, meetings


@given(fields(), st.integers(1, 100), st.sampled_from([0, 2, 4]))
def test_a_table_is_three_distinct_active_versions(field, table, cover):
    cands, meetings = field
    t = pair(cands, meetings, table, cover)
    assert t is not None and len(set(t)) == 3 and set(t) <= {c.id for c in cands}


def test_fewer_than_three_versions_make_no_table():
    assert pair([Candidate("a", 1.0), Candidate("b", 1.0)], {}, 1) is None


@given(fields(), st.integers(1, 100))
def test_an_ordinary_table_seats_the_neediest_version(field, table):
    cands, meetings = field
    if table % 4 == 0:
        table += 1
    neediest = min(cands, key=lambda c: (c.inflight, -c.sigma, c.groups, c.id))
    assert pair(cands, meetings, table, 4)[0] == neediest.id


@given(fields(min_size=3, max_size=8), st.integers(0, 3))
def test_a_cover_table_seats_a_least_met_pair(field, first):
    cands, meetings = field
    t = pair(cands, meetings, 4 * (first + 1), 4)
    least = min(meetings.get(meeting_key(a.id, b.id), 0) for a, b in itertools.combinations(cands, 2))
    assert meetings.get(meeting_key(t[0], t[1]), 0) == least


@settings(max_examples=30)
@given(st.integers(3, 9), st.lists(st.floats(0.5, SIGMA0), min_size=9, max_size=9), st.sampled_from([2, 3, 4]))
def test_every_pair_meets_within_cover_every_times_the_pairs_tables(n, sigmas, cover):
    """Even when the uncertainties never change (the worst case for the need rule), every pair of
    versions has sat at a table within cover_every x n(n-1)/2 tables, as TOURNAMENT.md promises."""
    cands = [Candidate(ids[i], sigmas[i]) for i in range(n)]
    meetings: dict = {}
    for table in range(1, cover * math.comb(n, 2) + 1):
        t = pair(cands, meetings, table, cover)
        for a, b in itertools.combinations(t, 2):
            k = meeting_key(a, b)
            meetings[k] = meetings.get(k, 0) + 1
    assert all(meetings.get(meeting_key(a.id, b.id), 0) >= 1 for a, b in itertools.combinations(cands, 2))


def test_a_new_version_plays_at_once_and_more_at_first():
    """Hand-worked: three settled versions (sigma 2) and one new (sigma 8.33): the new one is at each
    ordinary table while nothing of it is in flight; in flight, the others get the next table."""
    old = [Candidate(f"old{i}", 2.0, groups=40) for i in range(3)]
    new = Candidate("new", SIGMA0)
    assert pair(old + [new], {}, 1)[0] == "new"
    busy = Candidate("new", SIGMA0, inflight=1)
    assert "new" != pair(old + [busy], {}, 1)[0]
    # among the settled ones, the one the first met least is seated second
    met = {meeting_key("new", "old0"): 3, meeting_key("new", "old1"): 1, meeting_key("new", "old2"): 2}
    assert pair(old + [new], met, 1)[:2] == ("new", "old1")


@given(st.lists(st.tuples(st.floats(10, 40), st.floats(1, SIGMA0)), min_size=3, max_size=3),
       st.lists(st.integers(-500, 500), min_size=3, max_size=3))
def test_a_group_raises_its_sole_winner_and_narrows_every_rating_but_for_the_drift(ratings, totals):
    before = [Rating(mu, s) for mu, s in ratings]
    after = rate(before, totals)
    tau = SIGMA0 / 100  # openskill's drift: sigma grows by it (in quadrature) before each update, so
    # that a rating never freezes over a season
    assert all(a.sigma <= math.hypot(b.sigma, tau) + 1e-9 for a, b in zip(after, before))
    top = max(range(3), key=lambda i: totals[i])
    if totals.count(totals[top]) == 1:
        assert after[top].mu > before[top].mu


@given(st.floats(10, 40), st.floats(1, SIGMA0), st.lists(st.integers(-500, 500), min_size=3, max_size=3))
def test_from_equal_ratings_a_group_orders_them_as_their_totals(mu, sigma, totals):
    after = rate([Rating(mu, sigma)] * 3, totals)
    for i, j in itertools.permutations(range(3), 2):
        if totals[i] > totals[j]:
            assert after[i].mu > after[j].mu
        elif totals[i] == totals[j]:
            assert math.isclose(after[i].mu, after[j].mu, rel_tol=1e-12)


def test_the_pair_interval_from_running_sums_is_the_t_interval():
    # differences 10, 20, 30 per partie over three groups: mean 20, sd 10, t(0.975, 2) = 4.3027
    p = pair_difference("a", "b", 3, 60.0, 100 + 400 + 900).estimate
    assert p.mean == 20 and abs(p.half - 4.302653 * 10 / math.sqrt(3)) < 1e-4
    t = 20 / (10 / math.sqrt(3))  # Student t with 2 df has the closed form 1/2 + t / (2 sqrt(2 + t^2))
    assert abs(p.los - (0.5 + t / (2 * math.sqrt(2 + t * t)))) < 1e-9
    one = pair_difference("a", "b", 1, 5.0, 25.0).estimate
    assert one.half is None and one.los is None
