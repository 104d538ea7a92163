"""The robot's bidding heuristics: trump card, talon and game, answers, contract.

R11 fixes only the raising; everything here is a documented heuristic of the
kind a mariáš player uses.  All functions take masks (see :mod:`bots.robot_info`)
and are deterministic.

Hand judgement
--------------
* :func:`betl_win_chance` / :func:`durch_win_chance` — per suit, every split
  of the outside cards between the two defenders is tried under the
  follow-and-beat rule (R7.3), assuming the defence plays it perfectly
  (:func:`betl_lost_splits`, :func:`durch_lost_splits`, looked up in a table
  shipped with the package); the suits multiply.
* :func:`trump_estimate` — expected card points of the actor in a trump game:
  the top run of trumps and long trumps, side aces, tens behind their ace, a
  little for the cards the others must add to won tricks, and the last trick.
"""

from __future__ import annotations

import zlib
from importlib import resources
from itertools import combinations

from referee.rules.cards import ACE, KING, OBER, SEVEN, SUIT_MASKS, TEN

from .robot_info import AX_MASK, BSTR, TSTR, cards_of, count

TRUMP_DESC = (ACE, TEN, KING, OBER, 4, 2, 1, 0)  # A X K O U 9 8 7 (rank codes)


# ------------------------------------------------------------------ judging hands
def _ranks(m8: int) -> list[int]:
    return [r for r in range(8) if m8 >> r & 1]


def betl_lost_splits(mine: int, outside: int) -> int:
    """In how many of the splits the defence can make the betl actor take a trick in one suit.

    ``mine`` and ``outside`` are 8-bit rank masks (betl order, bit 0 = the seven):
    the actor's cards and the cards still out (in the defenders' hands).  Every
    split of the outside cards between the two defenders is tried; the split is
    lost when some defender X can lead a card x under one of the actor's cards
    (R7.3: the actor must then beat it, with his lowest card b above x) and either
    the defender Y playing after the actor holds nothing above b, or Y playing
    between them must beat x with a card the actor can still beat (or cannot beat
    x at all).  Perfect defence is assumed, so this errs on the safe side.
    """
    if not mine or not outside:
        return 0
    hs = _ranks(mine)
    outs = _ranks(outside)
    u = len(outs)
    lost = 0
    for split in range(1 << u):
        d1 = [outs[i] for i in range(u) if split >> i & 1]
        d2 = [outs[i] for i in range(u) if not split >> i & 1]
        forced = False
        for xs, ys in ((d1, d2), (d2, d1)):
            for x in xs:
                above = [h for h in hs if h > x]
                if not above:
                    continue
                b = above[0]
                if not any(y > b for y in ys):
                    forced = True  # X leads x, the actor must take it with b, Y cannot beat b
                    break
                ys_above = [y for y in ys if y > x]
                if not ys_above or any(any(h > y for h in hs) for y in ys_above):
                    forced = True  # Y must go over x with a card the actor must beat
                    break
            if forced:
                break
        lost += forced
    return lost


def durch_lost_splits(mine: int, outside: int) -> int:
    """In how many of the splits the durch actor loses a trick in one suit, leading it from the top.

    Every split of the outside cards between the defenders is tried; the
    defenders keep their highest cards and follow with the lowest while they
    cannot beat.
    """
    if not mine or not outside:
        return 0
    hs = sorted(_ranks(mine), reverse=True)
    outs = _ranks(outside)
    u = len(outs)
    lost = 0
    for split in range(1 << u):
        d1 = sorted(outs[i] for i in range(u) if split >> i & 1)
        d2 = sorted(outs[i] for i in range(u) if not split >> i & 1)
        for c in hs:
            if (d1 and d1[-1] > c) or (d2 and d2[-1] > c):
                lost += 1
                break
            if d1:
                d1.pop(0)
            if d2:
                d2.pop(0)
            if not d1 and not d2:
                break
    return lost


# Both counts for every pair of disjoint rank masks (3^8 pairs) cost about a second to compute, and a
# bot process would pay for them again at each start, so they are computed once and shipped with the
# package: ``robot_risk.bin`` holds them (zlib), a byte per ``mine << 8 | outside``, the betl's 64 KiB
# then the durch's. tests/test_robot_risk.py recomputes every entry; ``python -m bots.robot_bid``
# writes the file again after a change to the two functions above.
RISK_FILE = "robot_risk.bin"


def risk_tables() -> tuple[bytes, bytes]:
    """The lost-split counts of :func:`betl_lost_splits` and :func:`durch_lost_splits`, indexed by
    ``mine << 8 | outside`` (0 where the masks share a card)."""
    tables = []
    for count_lost in (betl_lost_splits, durch_lost_splits):
        t = bytearray(1 << 16)
        for mine in range(256):
            rest = 0xFF & ~mine
            outside = rest
            while True:  # every subset of the ranks not held
                t[mine << 8 | outside] = count_lost(mine, outside)
                if not outside:
                    break
                outside = (outside - 1) & rest
        tables.append(bytes(t))
    return tables[0], tables[1]


def _load_risk_tables() -> tuple[bytes, bytes]:
    raw = zlib.decompress(resources.files(__package__).joinpath(RISK_FILE).read_bytes())
    if len(raw) != 2 << 16:
        raise RuntimeError(f"bots/{RISK_FILE} is damaged ({len(raw)} bytes unpacked, not {2 << 16}): "
                           f"write it again with python -m bots.robot_bid")
    return raw[: 1 << 16], raw[1 << 16:]


try:
    _BETL_LOST, _DURCH_LOST = _load_risk_tables()
except FileNotFoundError:
    if __name__ != "__main__":  # (run as python -m bots.robot_bid, it is about to write the file)
        raise


def suit_betl_risk(mine: int, outside: int) -> float:
    """Chance that the defence can make the betl actor take a trick in one suit: the share of
    the splits of :func:`betl_lost_splits`."""
    return _BETL_LOST[mine << 8 | outside] / (1 << outside.bit_count())


def suit_durch_risk(mine: int, outside: int) -> float:
    """Chance that the durch actor loses a trick in one suit: the share of the splits of
    :func:`durch_lost_splits`."""
    return _DURCH_LOST[mine << 8 | outside] / (1 << outside.bit_count())


def _suit_bits(mask: int, s: int) -> int:
    return (mask >> (8 * s)) & 0xFF


def _win_chance(hand: int, out: int, suit_risk) -> float:
    """The product over the suits of the chance that ``suit_risk`` does not strike."""
    p = 1.0
    for s in range(4):
        mine = _suit_bits(hand, s)
        outside = 0xFF & ~mine & ~_suit_bits(out, s)
        p *= 1.0 - suit_risk(mine, outside)
    return p


def betl_win_chance(hand: int, out: int = 0) -> float:
    """Chance of making a betl with ``hand`` (cards in ``out`` are out of play)."""
    return _win_chance(hand, out, suit_betl_risk)


def durch_win_chance(hand: int, out: int = 0) -> float:
    """Chance of making a durch with ``hand`` (cards in ``out`` are out of play)."""
    return _win_chance(hand, out, suit_durch_risk)


def best_nb_discard(hand: int, keep: int, kind: str) -> tuple[float, tuple[int, int]]:
    """The two discards (never a card of ``keep``) that give the best chance of
    making the betl or durch.  Returns (chance, (first, second)); the higher card
    is discarded first for betl, the lower first for durch."""
    judge = betl_win_chance if kind == "betl" else durch_win_chance
    cands = cards_of(hand & ~keep)
    best = None
    for a, b in combinations(cands, 2):
        out = (1 << a) | (1 << b)
        chance = judge(hand & ~out, out)
        # ties: betl throws high cards, durch low cards
        rank_sum = (BSTR[a] + BSTR[b]) if kind == "betl" else -(BSTR[a] + BSTR[b])
        key = (chance, rank_sum, -a, -b)
        if best is None or key > best[0]:
            hi, lo = (a, b) if BSTR[a] >= BSTR[b] else (b, a)
            best = (key, (hi, lo) if kind == "betl" else (lo, hi))
    assert best is not None
    return best[0][0], best[1]


def trump_estimate(hand: int, t: int) -> float:
    """Expected card points (of 90, last trick included) the actor takes with trump ``t``."""
    tm = hand & SUIT_MASKS[t]
    nt = count(tm)
    # the unbroken run of top trumps wins for sure; long trumps win once the others' are out
    run = 0
    for r in TRUMP_DESC:
        if tm >> (t * 8 + r) & 1:
            run += 1
        else:
            break
    outside = 8 - nt
    trump_tricks = max(float(run), nt - 0.6 * outside, 0.0)
    if run == 0 and nt >= 2 and tm >> (t * 8 + TEN) & 1:
        trump_tricks = max(trump_tricks, 0.5)
    pts = 0.0
    if tm >> (t * 8 + ACE) & 1:
        pts += 10
    if tm >> (t * 8 + TEN) & 1:
        pts += 10 if tm >> (t * 8 + ACE) & 1 else (6 if nt >= 3 else 3)
    side_tricks = 0.0
    voids = 0
    for s in range(4):
        if s == t:
            continue
        m = hand & SUIT_MASKS[s]
        n = count(m)
        if n == 0:
            voids += 1
            continue
        a = m >> (s * 8 + ACE) & 1
        x = m >> (s * 8 + TEN) & 1
        if a:
            pts += 9
            side_tricks += 0.9
        if x:
            if a:
                pts += 7
                side_tricks += 0.7
            elif n >= 3:
                pts += 4
                side_tricks += 0.4
            else:
                pts += 2
                side_tricks += 0.2
        if n == 1 and not a:
            voids += 0.5
    ruffs = min(voids, max(0.0, nt - 2.5)) * 0.8
    tricks = trump_tricks + side_tricks + ruffs
    pts += 3.5 * tricks  # what the others must add to the tricks won
    pts += 10 * min(1.0, max(0.0, 0.15 * nt - 0.1 + (0.2 if run else 0.0)))
    return min(90.0, pts)


def hlaska_points(hand: int, t: int | None) -> int:
    return sum(40 if s == t else 20 for s in range(4)
               if hand >> (s * 8 + KING) & 1 and hand >> (s * 8 + OBER) & 1)


def first_hlaska(hand: int, t: int) -> int:
    """The hláška the actor will declare first: the 40 if held (R7.7), else a 20, else 0."""
    if hand >> (t * 8 + KING) & 1 and hand >> (t * 8 + OBER) & 1:
        return 40
    return 20 if hlaska_points(hand, t) else 0


def trump_value(hand: int, t: int) -> float:
    """A trump hand's worth for choosing discards: card points, hlášky and voids."""
    v = trump_estimate(hand, t) + 0.5 * hlaska_points(hand, t)
    return v


# ------------------------------------------------------------------ decisions
def choose_trump(first7: list[int]) -> int | None:
    """The trump card from the forhont's first seven, or None for z lidu.

    The suit is the longest, then the strongest (A, X, K, O); the card shown is
    the suit's lowest (it cannot be discarded, and a low card keeps the strong ones
    hidden until the contract).  With no suit of three the seven are weak and the
    robot takes z lidu (measured in self-play: better than a pair with an ace,
    worse than three small cards).
    """
    hand = 0
    for c in first7:
        hand |= 1 << c
    best = None
    for s in range(4):
        m = hand & SUIT_MASKS[s]
        n = count(m)
        if n == 0:
            continue
        score = n * 10 + sum(TSTR[c] for c in cards_of(m)) * 0.5 + (3 if m & AX_MASK else 0)
        if best is None or score > best[0]:
            best = (score, s, n, m)
    assert best is not None
    _score, s, n, m = best
    if n < 3:
        return None
    # the lowest card of the suit, in the hand's order on ties
    return min(cards_of(m), key=lambda c: (BSTR[c], c))


def barva_discard(hand: int, trump_card: int, t: int) -> tuple[int, int]:
    """Two discards for "Barva?": no A/X, not the trump card (R3.2), best remaining hand."""
    allowed = [c for c in cards_of(hand & ~AX_MASK) if c != trump_card]
    best = None
    for a, b in combinations(allowed, 2):
        rest = hand & ~(1 << a) & ~(1 << b)
        v = trump_value(rest, t)
        # prefer throwing non-trumps and low cards
        penalty = 0.01 * (TSTR[a] + TSTR[b]) + (0.5 if a >> 3 == t else 0) + (0.5 if b >> 3 == t else 0)
        key = (v - penalty, -a, -b)
        if best is None or key > best[0]:
            best = (key, (a, b))
    assert best is not None
    a, b = best[1]
    return (a, b) if TSTR[a] >= TSTR[b] else (b, a)


#: the chance of making it that the robot asks before announcing betl or durch
BETL_MIN = 0.45
DURCH_MIN = 0.75


def forhont_game(hand: int, trump_card: int) -> tuple[str, tuple[int, int]]:
    """The forhont's talon decision with twelve cards: durch, betl or barva, and discards.

    Durch when the best two discards leave a durch made with chance
    :data:`DURCH_MIN`, betl likewise with :data:`BETL_MIN` unless the trump
    hand is good enough for sedma or sto; otherwise Barva.
    """
    keep = 1 << trump_card
    p_durch, pair = best_nb_discard(hand, keep, "durch")
    if p_durch >= DURCH_MIN:
        return "durch", pair
    p_betl, pair = best_nb_discard(hand, keep, "betl")
    t = trump_card >> 3
    if p_betl >= BETL_MIN:
        barva_pair = barva_discard(hand, trump_card, t)
        rest = hand & ~(1 << barva_pair[0]) & ~(1 << barva_pair[1])
        if choose_contract(rest, t, ["contract:hra", "contract:sedma", "contract:sto", "contract:sto-sedma"]) == "contract:hra":
            return "betl", pair
        return "barva", barva_pair
    return "barva", barva_discard(hand, trump_card, t)


def takeover_game(hand: int, allowed: tuple[str, ...]) -> tuple[str, tuple[int, int]]:
    """After špatná (betl or durch) or a durch answer: the game with the better chance."""
    best = None
    for kind in ("durch", "betl"):
        if kind not in allowed:
            continue
        chance, pair = best_nb_discard(hand, 0, kind)
        # durch pays twice the betl: prefer it at the same expected return
        score = chance * (2 if kind == "durch" else 1) - (0.5 if kind == "durch" else 0)
        if best is None or score > best[0]:
            best = (score, kind, pair)
    assert best is not None
    return best[1], best[2]


def wants_spatna(hand: int) -> bool:
    """Answer špatná on Barva when the ten cards already make a betl or durch likely.

    The two talon cards are unknown (counted as out with the defenders, which is
    the cautious view); the robot can always discard them again.
    """
    return durch_win_chance(hand) >= DURCH_MIN or betl_win_chance(hand) >= BETL_MIN


def wants_durch_answer(hand: int) -> bool:
    return durch_win_chance(hand) >= DURCH_MIN


def choose_contract(hand: int, t: int, legal: list[str]) -> str:
    """hra, sedma, sto or sto a sedma (R5.1).

    Sedma: the trump seven with six trumps, or five with the trump ace — enough to
    draw the others' trumps and keep the seven for the last trick.  Sto: the first
    hláška (the 40 if held, R7.7) plus the estimated card points reach 120 (the
    estimate is generous; 120 measured better than 100 or 110 in self-play).
    """
    tm = hand & SUIT_MASKS[t]
    nt = count(tm)
    has_seven = bool(tm >> (t * 8 + SEVEN) & 1)
    ace = bool(tm >> (t * 8 + ACE) & 1)
    ten = bool(tm >> (t * 8 + TEN) & 1)
    sedma = has_seven and (nt >= 6 or (nt >= 5 and ace) or (nt >= 4 and ace and ten))
    est = trump_estimate(hand, t)
    fh = first_hlaska(hand, t)
    sto = fh > 0 and est + fh >= 120
    if sto and sedma and "contract:sto-sedma" in legal:
        return "contract:sto-sedma"
    if sto and "contract:sto" in legal:
        return "contract:sto"
    if sedma and "contract:sedma" in legal:
        return "contract:sedma"
    return "contract:hra"


if __name__ == "__main__":  # python -m bots.robot_bid: write the risk tables after a change to the rules above
    betl, durch = risk_tables()
    target = resources.files(__package__).joinpath(RISK_FILE)
    with resources.as_file(target) as path:
        path.write_bytes(zlib.compress(betl + durch, 9))
        print(f"{path}: {path.stat().st_size} bytes")
