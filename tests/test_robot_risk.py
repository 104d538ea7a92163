"""The robot's betl and durch risks (R7.3: follow and beat): the table shipped with the package
equals the exhaustive count over the splits for every pair of rank masks, and hand-worked cases
of that count."""

from __future__ import annotations

import zlib
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bots import robot_bid as B


def masks(ranks: str) -> int:
    """A rank mask in betl order from rank letters, bit 0 = the seven (7 8 9 X U O K A)."""
    return sum(1 << "789XUOKA".index(r) for r in ranks)


def test_the_shipped_table_is_the_count_of_lost_splits_for_every_pair():
    shipped = zlib.decompress(resources.files("bots").joinpath(B.RISK_FILE).read_bytes())
    betl, durch = B.risk_tables()
    assert shipped == betl + durch, "bots/robot_risk.bin is stale: write it with python -m bots.robot_bid"


@given(st.integers(0, 255), st.integers(0, 255))
def test_the_risks_are_the_shares_of_lost_splits(mine, outside):
    outside &= ~mine
    splits = 1 << bin(outside).count("1")
    assert B.suit_betl_risk(mine, outside) == B.betl_lost_splits(mine, outside) / splits
    assert B.suit_durch_risk(mine, outside) == B.durch_lost_splits(mine, outside) / splits


@pytest.mark.parametrize("mine, outside, betl, durch", [
    # betl: a lead of the eight is above the seven, so the seven is never forced over it (0 of 2);
    # durch: the seven led loses to the eight, wherever it lies (2 of 2)
    ("7", "8", 0, 2),
    # betl: the seven led, the eight must go over it (R7.3) in either hand (2 of 2);
    # durch: the eight led, nothing above it is out (0 of 2)
    ("8", "7", 2, 0),
    # betl: with 7 and 9 in one hand, that defender leads the seven and the actor must take it with the
    # eight (2 of 4); split, the nine beats the eight whether it plays before or after the actor.
    # durch: the nine is out and beats the eight in every split (4 of 4)
    ("8", "79", 2, 4),
    # betl: the eight led, the actor must go over it with the ace (2 of 2);
    # durch: the ace led draws the only card out; the seven is then safe (0 of 2)
    ("7A", "8", 2, 0),
    # betl: either card led forces the ace (4 of 4);
    # durch: split, the ace draws both; in one hand, the nine is kept and beats the seven (2 of 4)
    ("7A", "89", 4, 2),
])
def test_hand_worked_counts(mine, outside, betl, durch):
    m, o = masks(mine), masks(outside)
    assert B.betl_lost_splits(m, o) == betl
    assert B.durch_lost_splits(m, o) == durch
