"""Benchmarks (``marias bench ...``).  Speed is measured here, never asserted in tests."""

from __future__ import annotations

import random
import statistics
import time

from .partie import Partie


def engine(deals: int = 3000, repeats: int = 5, seed: int = 1) -> dict:
    """Random legal self-play in-process: deals per second and microseconds per decision.

    Each repeat plays ``deals`` deals (whole partie of 12) choosing uniformly among
    the legal actions; the figures are the median over the repeats.
    """
    rates, per_decision = [], []
    for r in range(repeats):
        rng = random.Random(seed * 1000 + r)
        n_deals = n_dec = 0
        t0 = time.perf_counter()
        p = 0
        while n_deals < deals:
            partie = Partie(seed=f"bench:{seed}:{r}:{p}")
            p += 1
            for deal in partie.iter_deals():
                while not deal.done:
                    legal = deal.legal_actions()
                    deal.apply(legal[rng.randrange(len(legal))])
                    n_dec += 1
                n_deals += 1
                if n_deals >= deals:
                    break
        el = time.perf_counter() - t0
        rates.append(n_deals / el)
        per_decision.append(el / n_dec * 1e6)
    return {
        "benchmark": "engine",
        "deals": deals,
        "repeats": repeats,
        "deals_per_second": round(statistics.median(rates), 1),
        "us_per_decision": round(statistics.median(per_decision), 2),
        "all_deals_per_second": [round(x, 1) for x in rates],
    }
