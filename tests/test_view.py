"""The view kept between calls (``Deal.view``) equals the view built from scratch
(``Deal.view_from_scratch``, and the view of a fresh deal replayed to the same
moment) at every decision of random partie, whichever seats ask and how often."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.deal import Deal
from referee.rules.partie import Partie
from tests.test_properties import STYLES, choose


def replayed(d: Deal) -> Deal:
    """A fresh deal from the same deck with the same actions (and fault), asked nothing before."""
    fresh = Deal(d.deck, d.forhont)
    for _seat, action in d.history:
        fresh.apply(action)
    if d.fault_info is not None:
        f = d.fault_info
        fresh.fault(f.seat, f.kind, f.message, f.evidence, f.elapsed)
    return fresh


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), style=STYLES, ask=st.sampled_from([0.15, 0.5, 1.0]),
       fault_rate=st.sampled_from([0.0, 0.02]))
def test_the_kept_view_equals_the_view_from_scratch(seed, style, ask, fault_rate):
    rng = random.Random(seed)
    partie = Partie(seed=seed)
    for d in partie.iter_deals():
        while True:
            for s in range(3):
                if rng.random() < ask or d.done:
                    v = d.view(s)
                    assert v == d.view_from_scratch(s), (s, d.phase)
                    v["bids"].append("junk")  # the top-level lists are the caller's own
                    v["tricks"].clear()
                    v["hlasky"].append("junk")
            if rng.random() < 0.05:
                fresh = replayed(d)
                for s in range(3):
                    assert d.view(s) == fresh.view(s) == fresh.view_from_scratch(s)
            if d.done:
                break
            if rng.random() < fault_rate:
                d.fault(d.to_move, "test", "injected by the property test")
                continue
            if rng.random() < 0.1:  # a copy's views are its own
                c = d.copy()
                before = [d.view(s) for s in range(3)]
                assert [c.view(s) for s in range(3)] == before
                while not c.done:
                    c.apply(choose(rng, c, style))
                    c.view(c.to_move if c.to_move is not None else 0)
                assert [d.view(s) for s in range(3)] == before
            d.apply(choose(rng, d, style))
