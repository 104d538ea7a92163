"""The robot's bidding heuristics: trump card, talon and game, answers, contract.

R11 fixes only the raising; everything here is a documented heuristic of the
kind a mariáš player uses.  All functions take masks (see :mod:`bots.robot_info`)
and are deterministic.

Hand judgement
--------------
* :func:`betl_danger` — a betl hand is safe when, in every suit, the robot's
  i-th lowest card (counting from 0) has at most i cards of that suit below it
  that are still out (not in its hand, not in a talon it knows).  Then whoever
  leads the suit, some outside card can always go under... more precisely a
  defender can always be made to beat it (R7.3: follow and beat if able).  Every
  card breaking the rule is a danger.
* :func:`durch_danger` — a durch suit is safe when the robot's top ``min(n, u)``
  cards (n its cards, u the outside cards of the suit) all beat every outside
  card: led from the top they win, and after ``u`` rounds the outside cards are
  gone even if one player holds them all.
* :func:`trump_estimate` — expected card points of the actor in a trump game:
  the top run of trumps and long trumps, side aces, tens behind their ace, a
  little for the cards the others must add to won tricks, and the last trick.
"""

from __future__ import annotations

from itertools import combinations

from referee.cards import ACE, KING, OBER, SEVEN, SUIT_MASKS, TEN

from .robot_info import AX_MASK, BSTR, TSTR, cards_of, count

TRUMP_DESC = (ACE, TEN, KING, OBER, 4, 2, 1, 0)  # A X K O U 9 8 7 (rank codes)


# ------------------------------------------------------------------ judging hands
def betl_danger(hand: int, out: int = 0) -> int:
    """How many of ``hand``'s cards could be made to win a trick in betl."""
    danger = 0
    for s in range(4):
        mine = hand & SUIT_MASKS[s]
        if not mine:
            continue
        others = SUIT_MASKS[s] & ~hand & ~out
        for i, c in enumerate(sorted(cards_of(mine), key=BSTR.__getitem__)):
            below = others & ((1 << c) - 1) & SUIT_MASKS[s]
            if count(below) > i:
                danger += 1
    return danger


def durch_danger(hand: int, out: int = 0) -> int:
    """How many of ``hand``'s cards could lose a trick in durch."""
    danger = 0
    for s in range(4):
        mine = hand & SUIT_MASKS[s]
        if not mine:
            continue
        others = SUIT_MASKS[s] & ~hand & ~out
        if not others:
            continue
        top_other = others.bit_length() - 1  # betl order is code order
        mine_desc = sorted(cards_of(mine), reverse=True)
        k = min(len(mine_desc), count(others))
        danger += sum(1 for c in mine_desc[:k] if c < top_other)
    return danger


def best_nb_discard(hand: int, keep: int, kind: str) -> tuple[int, tuple[int, int]]:
    """The two discards (never a card of ``keep``) minimising the betl or durch danger.

    Returns (danger, (first, second)); ties go to discarding the more dangerous
    cards first (high cards for betl, low cards for durch).
    """
    judge = betl_danger if kind == "betl" else durch_danger
    cands = [c for c in cards_of(hand & ~keep)]
    best = None
    for a, b in combinations(cands, 2):
        out = (1 << a) | (1 << b)
        d = judge(hand & ~out, out)
        # tie-break: betl prefers throwing high cards, durch low cards
        rank_sum = (BSTR[a] + BSTR[b]) if kind == "betl" else -(BSTR[a] + BSTR[b])
        key = (d, -rank_sum, a, b)
        if best is None or key < best[0]:
            pair = (a, b) if BSTR[a] >= BSTR[b] else (b, a)
            if kind == "durch":
                pair = (pair[1], pair[0])
            best = (key, pair)
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
    hidden until the contract).  With no suit of three and no ace or ten in a pair,
    the seven are weak and the robot takes z lidu.
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
    if n < 3 and not (n == 2 and m & AX_MASK):
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


def forhont_game(hand: int, trump_card: int) -> tuple[str, tuple[int, int]]:
    """The forhont's talon decision with twelve cards: durch, betl or barva, and discards.

    Durch or betl only when the hand (after the two best discards) has no danger
    at all (see :func:`durch_danger`, :func:`betl_danger`); otherwise Barva.
    """
    keep = 1 << trump_card
    d_durch, pair = best_nb_discard(hand, keep, "durch")
    if d_durch == 0:
        return "durch", pair
    d_betl, pair = best_nb_discard(hand, keep, "betl")
    if d_betl == 0:
        return "betl", pair
    return "barva", barva_discard(hand, trump_card, trump_card >> 3)


def takeover_game(hand: int, allowed: tuple[str, ...]) -> tuple[str, tuple[int, int]]:
    """After špatná (betl or durch) or a durch answer: the game and the discards."""
    if "durch" in allowed:
        d, pair = best_nb_discard(hand, 0, "durch")
        if d == 0 or "betl" not in allowed:
            return "durch", pair
    d, pair = best_nb_discard(hand, 0, "betl")
    return "betl", pair


def wants_spatna(hand: int) -> bool:
    """Answer špatná on Barva with a hand already safe for betl or durch.

    The two talon cards are unknown, but they can always be discarded again, so
    ten safe cards stay safe.
    """
    return durch_danger(hand) == 0 or betl_danger(hand) == 0


def wants_durch_answer(hand: int) -> bool:
    return durch_danger(hand) == 0


def choose_contract(hand: int, t: int, legal: list[str]) -> str:
    """hra, sedma, sto or sto a sedma (R5.1).

    Sedma: the trump seven with six trumps, or five with the trump ace — enough to
    draw the others' trumps and keep the seven for the last trick.  Sto: the first
    hláška (the 40 if held, R7.7) plus the estimated card points reach 110.
    """
    tm = hand & SUIT_MASKS[t]
    nt = count(tm)
    has_seven = bool(tm >> (t * 8 + SEVEN) & 1)
    ace = bool(tm >> (t * 8 + ACE) & 1)
    ten = bool(tm >> (t * 8 + TEN) & 1)
    sedma = has_seven and (nt >= 6 or (nt >= 5 and ace) or (nt >= 4 and ace and ten))
    est = trump_estimate(hand, t)
    fh = first_hlaska(hand, t)
    sto = fh > 0 and est + fh >= 110
    if sto and sedma and "contract:sto-sedma" in legal:
        return "contract:sto-sedma"
    if sto and "contract:sto" in legal:
        return "contract:sto"
    if sedma and "contract:sedma" in legal:
        return "contract:sedma"
    return "contract:hra"
