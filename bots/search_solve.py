"""The exact solver of the ``search`` bot: one deal with every hand known.

Given the three hands (32-bit masks, as in :mod:`referee.rules.cards`), the trick in
progress and what the deal has scored so far, :class:`Solver` finds the value of
the deal under perfect play by both sides: what each defender pays the actor in
groše (negative: the actor pays), on the real settlement of R6–R9.  The actor
maximises it, the defenders minimise it.

* Trump games: hra (tiché sto for a winner with 100), sto with the *first*
  declared hláška (R7.7), sedma and sedma proti (R7.4's early seven loses),
  tichá sedma (R7.9), sto proti, levels and červené.  The leaves are settled by
  the engine's pure functions (:mod:`referee.rules.settle`), memoised.
* Betl and durch: the deal ends at the deciding trick (R7.11).

Speed: alpha-beta over bitmask hands with a transposition table at trick starts
(keyed by the hands, the leader and the score so far), the table's best move
tried first, cheap move ordering, and equivalent cards merged (two cards of one
hand that no other remaining card separates in their suit, with equal points and
no hláška or trump-seven role, are one move).  The search is written for pure
Python (issue 28): one function per place in the trick with the legal cards and
the ordering written out, per-card tables, the ordered classes of a suit
memoised.  The transposition table is keyed by the position's shape: in a
trump game each suit as the owners and classes (no points, ten or ace, king or
ober with its partner, trump seven) of its cards still out, the plain suits
sorted; in betl and durch each suit as the owners of its cards still out, all
suits sorted; so positions that differ only in cards nothing can tell apart
share an entry.  Betl and durch are won/lost searches, and the actor's cards that
would decide the trick against him are not searched; :func:`nb_wins` answers
"does the actor win" from a trick start, stopping at the first winning card.

A solve may be cut short by a budget in nodes or time (:class:`Budget`); a solve
that finishes is exact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from referee.rules.cards import ACE, BETL_ORDER, HIGHER_BETL, HIGHER_TRUMP, KING, OBER, SEVEN, SUIT_MASKS, TEN, TRUMP_ORDER

from .robot_info import cards_of
from .search_settle import hl_add, hl_unpack, nb_settle, trump_settle

POINTS = tuple(10 if (c & 7) in (TEN, ACE) else 0 for c in range(32))
INF = 1 << 20


class OutOfNodes(Exception):
    """The node budget ran out before the solve finished."""


@dataclass
class Budget:
    """What the solves of one decision may spend: ``nodes`` (``None``: unlimited),
    a ``deadline`` on ``clock`` (default :func:`time.process_time`, the CPU time
    of this process, so that a busy machine does not make the bot weaker) and a
    ``wall`` deadline on :func:`time.perf_counter` that stops a decision even when
    the machine gives it little CPU.  A budget in nodes alone makes the result
    reproducible."""

    nodes: int | None = None
    deadline: float | None = None
    used: int = 0
    wall: float | None = None
    clock: Callable[[], float] = time.process_time

    def left(self) -> int | None:
        return None if self.nodes is None else self.nodes - self.used

    def exhausted(self) -> bool:
        if self.nodes is not None and self.used >= self.nodes:
            return True
        return self.timed_out()

    def timed_out(self) -> bool:
        if self.deadline is not None and self.clock() >= self.deadline:
            return True
        return self.wall is not None and time.perf_counter() >= self.wall

    def part(self, nodes: int | None) -> "Budget":
        """A budget for one solve: at most ``nodes`` more, the same deadlines."""
        return Budget(nodes=nodes, deadline=self.deadline, wall=self.wall, clock=self.clock)


@dataclass(frozen=True)
class Game:
    """What is being played: the settlement's parameters (fixed once play starts).

    ``kind`` is ``barva``, ``betl`` or ``durch``; ``levels`` the components and
    their levels as in a view (``{"hra": 1, "sedma": 0}``); ``sedma_proti`` the
    seat that announced sedma proti (or ``None``).
    """

    kind: str
    actor: int
    trump: int | None = None
    levels: tuple[tuple[str, int], ...] = ()
    sedma_proti: int | None = None

    @classmethod
    def make(cls, kind: str, actor: int, trump: int | None, levels: dict, proti: dict | None = None) -> "Game":
        proti = proti or {}
        return cls(kind, actor, trump if kind == "barva" else None, tuple(sorted(levels.items())),
                   proti.get("sedma") if "sedma-proti" in levels else None)

    @property
    def level(self) -> dict:
        return dict(self.levels)

    @property
    def cervene(self) -> bool:
        return self.trump == 0

    def bound_seven_seat(self) -> tuple[int, ...]:
        """Seats whose trump seven is announced (R7.4)."""
        lv = self.level
        out = []
        if "sedma" in lv:
            out.append(self.actor)
        if self.sedma_proti is not None:
            out.append(self.sedma_proti)
        return tuple(out)


@dataclass
class Position:
    """A position with every hand known: what the solver starts from.

    ``hands`` the three hands (masks); ``trick`` the cards on the table as
    (seat, card) in play order; ``leader`` who leads the trick in progress (or
    the next one); ``tricks_done`` completed tricks; ``a_cards``/``d_cards`` the
    card points each side has taken; ``a_hl``/``d_hl`` the hlášky declared, in
    order; ``lost_early`` the announced sevens already lost (R7.4).
    """

    hands: list[int]
    leader: int
    trick: list[tuple[int, int]] = field(default_factory=list)
    tricks_done: int = 0
    a_cards: int = 0
    d_cards: int = 0
    a_hl: tuple[int, ...] = ()
    d_hl: tuple[int, ...] = ()
    lost_early: frozenset = frozenset()

    @property
    def to_move(self) -> int:
        return (self.leader + len(self.trick)) % 3


#: per card: the mask of the game's kings and obers (a hláška is a king and an ober of one suit)
KINGS = sum(1 << (s * 8 + KING) for s in range(4))
OBERS = sum(1 << (s * 8 + OBER) for s in range(4))
#: equivalent-card classes of one suit, memoised for every solver: (betl order, trump order)
_MOVES_CACHE: tuple[dict, dict] = ({}, {})
#: ordered classes of a follower's and of a leader's cards, by (game kind, trump suit)
_ORDER_CACHE: dict = {}
#: leads' ordering keys in betl (low first) and durch (high first), the card in the low 6 bits
_NB_LEAD_KEYS = (tuple((c & 7) * 64 + c for c in range(32)),
                 tuple((-(50 if HIGHER_BETL[c] == 0 else 0) - (c & 7)) * 64 + c for c in range(32)))
#: _BELOW[c]: the cards of c's suit below it (the betl order is the order of the ranks)
_BELOW = tuple(SUIT_MASKS[c >> 3] & ((1 << c) - 1) for c in range(32))
#: per-card tables of the search by (betl or durch, trump suit): who beats whom, hlášky, ordering keys
_TABLES: dict = {}
#: a suit's shape in a trump game, (trump suit, other suits), by its cards in the three hands
_TRUMP_SHAPE: tuple[dict, dict] = ({}, {})
#: the ranks in the trump games' order, low to high
_TRUMP_RANKS = tuple(sorted(range(8), key=lambda r: TRUMP_ORDER[r]))


def _trump_suit_shape(k: int, trump_suit: bool) -> int:
    """A suit's cards still out in a trump game, low to high, as base-16 digits of
    owner × 5 + class (1: no points, 2: ten or ace, 3: king or ober with its partner
    in the same hand, 4: the trump seven); ``k`` holds the suit's 8 bits of hand 0,
    1 and 2 at bits 0, 8 and 16."""
    p = 0
    i = 0
    for r in _TRUMP_RANKS:
        for seat in range(3):
            if k >> (8 * seat + r) & 1:
                if trump_suit and r == SEVEN:
                    cls = 4
                elif r == TEN or r == ACE:
                    cls = 2
                elif (r == KING or r == OBER) and k >> (8 * seat + (r ^ 3)) & 1:
                    cls = 3
                else:
                    cls = 1
                p |= (seat * 5 + cls) << (4 * i)
                i += 1
    return p


#: a suit's shape in betl and durch by its cards in the three hands (see Solver._build)
_SUIT_SHAPE: dict = {}


def _suit_shape(k: int) -> int:
    """The owners (1-3) of a suit's cards still out, low to high, as base-4 digits:
    ``k`` holds the suit's 8 bits of hand 0, 1 and 2 at bits 0, 8 and 16."""
    p = 0
    i = 0
    for r in range(8):
        for seat in range(3):
            if k >> (8 * seat + r) & 1:
                p |= (seat + 1) << (2 * i)
                i += 1
    return p


class Solver:
    """Alpha-beta over one game's deals (the transposition table is kept between
    solves of the same :class:`Game`).

    The search itself is a set of closures made once per solver (:meth:`_build`):
    one function per place in the trick (lead, second, third card) with the legal
    cards, the move ordering and the play of a card written out in each, the trick
    in progress passed as ints, per-card tables for who beats whom and the ordering
    keys.  Betl and durch are searched as the win/lose games they are (any winning
    card of the actor, any losing card of a defender ends a node), with a table of
    won and lost trick starts keyed by the hands and the leader alone."""

    def __init__(self, game: Game, max_table: int = 400_000, settle: Callable | None = None):
        self.game = game
        # the leaves' settlement of a trump game: groše each defender pays the actor (the analysis of logs
        # passes one that also orders the lines of equal groše by card points, referee/analysis/values.py)
        self.settle = settle or trump_settle
        self.max_table = max_table
        self.table: dict = {}
        self.leaf_memo: dict = {}
        nb = game.kind != "barva"
        self.nb = nb
        self.trump = game.trump
        self.higher = HIGHER_BETL if nb else HIGHER_TRUMP
        order = BETL_ORDER if nb else TRUMP_ORDER
        self.order_lists = [sorted(range(s * 8, s * 8 + 8), key=lambda c: order[c & 7]) for s in range(4)]
        self.pts = (0,) * 32 if nb else POINTS
        self.seven = -1 if nb else game.trump * 8 + SEVEN
        self.bound = game.bound_seven_seat() if not nb else ()
        self.actor = game.actor
        self.guess = 0  # MTD(f)'s first guess: the last value found
        self.stake = nb_settle(game, True) if nb else 0
        self._mcache = _MOVES_CACHE[0 if nb else 1]
        # trump games are searched to the last trick: tiché sto and tichá sedma keep every trick relevant
        self._build()

    @property
    def nodes(self) -> int:
        """Cards played by the search so far (over every solve of this solver)."""
        return self._count()

    # ------------------------------------------------------------ legal moves
    def legal(self, hand: int, seat: int, trick_cards: list[int], win: int, tricks_done: int) -> int:
        if trick_cards:
            ls = trick_cards[0] >> 3
            same = hand & SUIT_MASKS[ls]
            higher = self.higher
            if same:
                if win >> 3 == ls:
                    mask = (same & higher[win]) or same
                else:
                    mask = same
            elif self.trump is not None and hand & SUIT_MASKS[self.trump]:
                trumps = hand & SUIT_MASKS[self.trump]
                mask = ((trumps & higher[win]) or trumps) if win >> 3 == self.trump else trumps
            else:
                mask = hand
        else:
            mask = hand
        if self.bound and tricks_done < 9 and seat in self.bound:
            sb = 1 << self.seven
            if mask & sb and mask != sb:
                mask &= ~sb
        return mask

    def beats(self, a: int, b: int) -> bool:
        if a >> 3 == b >> 3:
            return bool(self.higher[b] >> a & 1)
        return self.trump is not None and a >> 3 == self.trump

    def moves(self, legal: int, hand: int, present: int) -> list[int]:
        """One card per class of equivalent legal cards (see the module docstring):
        by suit, and in a suit from the lowest card up in the game's order."""
        if not legal & (legal - 1):
            return [legal.bit_length() - 1]
        if self.nb:
            special = 0
        else:
            pk = hand & KINGS & ((hand & OBERS) << 1)
            special = legal & (pk | pk >> 1 | (1 << self.seven))
        cache = self._mcache
        out: list[int] = []
        rest = legal
        while rest:
            sh = ((rest & -rest).bit_length() - 1) & 24
            m = rest >> sh & 255
            rest ^= m << sh
            if not m & (m - 1):
                out.append(sh + m.bit_length() - 1)
                continue
            key = m | (present >> sh & 255) << 8 | (special >> sh & 255) << 16 | sh << 21
            r = cache.get(key)
            if r is None:
                r = cache[key] = self._suit_moves(sh >> 3, m << sh, special, present)
            out.extend(r)
        return out

    def _suit_moves(self, s: int, m: int, special_mask: int, present: int) -> tuple[int, ...]:
        """The classes of one suit's legal cards ``m`` (the old loop, memoised by :meth:`moves`)."""
        out = []
        pts = self.pts
        open_group = False
        gp = -1
        for c in self.order_lists[s]:
            bit = 1 << c
            if m & bit:
                special = bool(special_mask & bit)
                if open_group and pts[c] == gp and not special:
                    continue
                out.append(c)
                open_group = not special
                gp = pts[c]
            elif present & bit:
                open_group = False
        return tuple(out)

    # ------------------------------------------------------------ solving
    def solve(self, pos: Position, budget: Budget | None = None) -> dict[int, int]:
        """The value of each legal card for the player to move: ``{card: value}``
        (what each defender pays the actor after it, under perfect play).

        Raises :class:`OutOfNodes` when ``budget`` runs out.
        """
        if len(self.table) > self.max_table:
            self.table.clear()
        start = self._count()
        left = budget.left() if budget is not None else None
        self._arm(INF * INF if left is None else start + max(0, left), _timer(budget))
        hands = list(pos.hands)
        seat = pos.to_move
        trick_cards = [c for _s, c in pos.trick]
        win, win_seat = -1, -1
        if pos.trick:
            win, win_seat = pos.trick[0][1], pos.trick[0][0]
            for s, c in pos.trick[1:]:
                if self.beats(c, win):
                    win, win_seat = c, s
        hs = 0
        for v in pos.a_hl:
            hs = hl_add(hs, True, v)
        for v in pos.d_hl:
            hs = hl_add(hs, False, v)
        if "sedma" in pos.lost_early:
            hs |= 1 << 10
        if "sedma-proti" in pos.lost_early:
            hs |= 1 << 11
        hand = hands[seat]
        legal = self.legal(hand, seat, trick_cards, win, pos.tricks_done)
        present = hands[0] | hands[1] | hands[2]
        for c in trick_cards:
            present |= 1 << c
        reps = self.moves(legal, hand, present)
        maximise = seat == self.actor
        values: dict[int, int] = {}
        t = trick_cards + [-1, -1]
        try:
            if self.nb:
                stake = self.stake
                for c in reps:
                    hands[seat] = hand & ~(1 << c)
                    won = self._nb_play(hands, seat, c, len(trick_cards), t[0], t[1], win, win_seat, pos.leader,
                                        pos.tricks_done)
                    hands[seat] = hand
                    values[c] = stake if won else -stake
            else:
                guess = self.guess
                for c in reps:
                    # MTD(f): null-window tests around a guess converge on the exact value
                    lo, hi, g = -INF, INF, guess
                    while lo < hi:
                        beta = g + 1 if g == lo else g
                        g = self._play(hands, seat, c, len(trick_cards), t[0], t[1], win, win_seat, pos.leader,
                                       pos.tricks_done, pos.a_cards, pos.d_cards, hs, beta - 1, beta)
                        if g < beta:
                            hi = g
                        else:
                            lo = g
                    values[c] = g
                    guess = g
                self.guess = max(values.values()) if maximise else min(values.values())
        finally:
            if budget is not None:
                budget.used += self._count() - start
        # every card takes the value of its representative
        out = {}
        for c in cards_of(legal):
            out[c] = values[self._rep_of(c, reps, legal, hand, present)]
        return out

    def nb_wins(self, hands, leader: int, budget: Budget | None = None) -> bool:
        """Betl or durch at a trick start: does the actor win, every hand known and
        both sides playing perfectly?  ``hands`` the three hands (masks), ``leader``
        who leads the trick.  Raises :class:`OutOfNodes` when ``budget`` runs out."""
        if not self.nb:
            raise ValueError("nb_wins is for betl and durch")
        if len(self.table) > self.max_table:
            self.table.clear()
        start = self._count()
        left = budget.left() if budget is not None else None
        self._arm(INF * INF if left is None else start + max(0, left), _timer(budget))
        hands = list(hands)
        done = 10 - (hands[0] | hands[1] | hands[2]).bit_count() // 3
        try:
            if done >= 10:
                return True
            return self._nb_trick(hands, leader, done)
        finally:
            if budget is not None:
                budget.used += self._count() - start

    def _rep_of(self, c: int, reps: list[int], legal: int, hand: int, present: int) -> int:
        if c in reps:
            return c
        # the representative is the nearest lower card of the same class (moves() keeps the lowest)
        s = c >> 3
        best = None
        for d in self.order_lists[s]:
            if d == c:
                return best
            if d in reps:
                best = d
            elif present >> d & 1 and not (legal >> d & 1):
                best = None
        return best

    # ------------------------------------------------------------ the search
    def _build(self) -> None:
        """Make the search functions: closures over the game's constants and tables."""
        actor = self.actor
        trump = self.trump
        higher = self.higher
        pts = self.pts
        seven = self.seven
        table = self.table
        leaf_memo = self.leaf_memo
        settle = self.settle
        moves = self.moves
        # a follower's ordered classes (see second()) and a leader's, shared by the solvers of one trump suit
        fcache, lcache = _ORDER_CACHE.setdefault((self.game.kind, trump), ({}, {}))
        if len(fcache) > 1_000_000:
            fcache.clear()
        if len(lcache) > 1_000_000:
            lcache.clear()
        game = self.game
        suit = SUIT_MASKS
        NEXT = (1, 2, 0)
        trump_mask = SUIT_MASKS[trump] if trump is not None else 0
        bound_seat = tuple(s in self.bound for s in range(3))
        sbit = (1 << seven) if seven >= 0 else 0
        SEVENFLAG = tuple(1 << (10 if s == actor else 11) for s in range(3))
        tables = _TABLES.get((self.nb, trump))
        if tables is None:
            TO = TRUMP_ORDER
            tables = _TABLES[(self.nb, trump)] = (
                # BEAT[w]: the cards that beat w (higher in its suit; in a trump game every trump beats a plain card)
                tuple(higher[w] | (trump_mask if trump is not None and w >> 3 != trump else 0) for w in range(32)),
                tuple((40 if c >> 3 == trump else 20) if not self.nb and (c & 7) in (KING, OBER) else 0
                      for c in range(32)),
                # ordering keys, card in the low 6 bits: sorting the keys sorts by (key, card) as the old _order did
                tuple((-(50 if higher[c] == 0 else 0) - pts[c] - (c & 7)) * 64 + c for c in range(32)),
                tuple((-pts[c] * 3 + TO[c & 7]) * 64 + c for c in range(32)),  # takes the trick
                tuple((-pts[c] * 3) * 64 + c for c in range(32)),  # under the own side's winning card
                tuple((100 + pts[c] * 3 + TO[c & 7]) * 64 + c for c in range(32)),  # under the other side's
            )
        BEAT, HLV, LK, TK, OWNK, OPPK = tables
        nodes = 0
        limit = INF
        cap = INF
        timer = None  # the budget whose deadlines the current solve checks

        def count():
            return nodes

        def arm(new_cap, new_timer):
            nonlocal cap, timer, limit
            cap, timer = new_cap, new_timer
            limit = min(cap, nodes + 512)

        def tick():
            """Every 512 nodes: stop when the nodes or the time of the budget are spent."""
            nonlocal limit
            if nodes >= cap or (timer is not None and timer.timed_out()):
                raise OutOfNodes()
            limit = min(cap, nodes + 512)

        self._count, self._arm = count, arm

        # ---------------------------------------------------------- trump games
        def leaf(ap, dp, hs, sil):
            key = (ap, dp, hs, sil)
            v = leaf_memo.get(key)
            if v is None:
                a_hl, d_hl, lost = hl_unpack(hs)
                v = leaf_memo[key] = settle(game, ap, dp, a_hl, d_hl, sil, lost)
            return v

        # The transposition table of trump games is keyed by the position's shape: each suit
        # as the sequence of its cards still out, low to high, each card as its owner and its
        # class (no points, ten or ace, king or ober whose partner is in the same hand, the
        # trump seven); the trump suit first, the others sorted (they differ in nothing).
        # Cards are relabelled only where nothing can tell them apart: the order, the points,
        # the hlášky still possible and the seven are kept.  With the leader, both sides' card
        # points (the defence's are in the key too: with cards relabelled they no longer follow
        # from the hands) and the hláška state.
        tsh = (trump or 0) * 8
        psh0, psh1, psh2 = tuple(s * 8 for s in range(4) if s * 8 != tsh)
        tshape, pshape = _TRUMP_SHAPE

        def tkey(hands, leader, ap, dp, hs):
            # the three plain suits are written out, not looped over: this runs at every trick start
            h0, h1, h2 = hands
            k = (h0 >> tsh & 255) | (h1 >> tsh & 255) << 8 | (h2 >> tsh & 255) << 16
            t = tshape.get(k)
            if t is None:
                t = tshape[k] = _trump_suit_shape(k, True)
            k = (h0 >> psh0 & 255) | (h1 >> psh0 & 255) << 8 | (h2 >> psh0 & 255) << 16
            a = pshape.get(k)
            if a is None:
                a = pshape[k] = _trump_suit_shape(k, False)
            k = (h0 >> psh1 & 255) | (h1 >> psh1 & 255) << 8 | (h2 >> psh1 & 255) << 16
            b = pshape.get(k)
            if b is None:
                b = pshape[k] = _trump_suit_shape(k, False)
            k = (h0 >> psh2 & 255) | (h1 >> psh2 & 255) << 8 | (h2 >> psh2 & 255) << 16
            c = pshape.get(k)
            if c is None:
                c = pshape[k] = _trump_suit_shape(k, False)
            if a > b:
                a, b = b, a
            if b > c:
                b, c = c, b
                if a > b:
                    a, b = b, a
            return (leader, ap, dp, hs, t, a, b, c)

        def trick(hands, leader, done, ap, dp, hs, alpha, beta):
            """A trick start: the transposition table is consulted and filled here."""
            key = tkey(hands, leader, ap, dp, hs)
            entry = table.get(key)
            first = -1
            if entry is not None:
                lo, hi, first = entry
                if lo >= beta:
                    return lo
                if hi <= alpha:
                    return hi
                if lo > alpha:
                    alpha = lo
                if hi < beta:
                    beta = hi
                if lo == hi:
                    return lo
            a0, b0 = alpha, beta
            v, move = lead(hands, leader, done, ap, dp, hs, alpha, beta, first)
            if v <= a0:
                table[key] = ((entry[0] if entry else -INF), v, move)
            elif v >= b0:
                table[key] = (v, (entry[1] if entry else INF), move)
            else:
                table[key] = (v, v, move)
            return v

        def lead(hands, seat, done, ap, dp, hs, alpha, beta, first):
            nonlocal nodes
            hand = hands[seat]
            legal = hand
            if bound_seat[seat] and done < 9 and legal & sbit and legal != sbit:
                legal ^= sbit
            if legal & (legal - 1):
                present = hands[0] | hands[1] | hands[2]
                key = legal | present << 32
                reps = lcache.get(key)
                if reps is None:
                    reps = moves(legal, hand, present)
                    if len(reps) > 1:
                        ks = [LK[c] for c in reps]
                        ks.sort()
                        reps = [k & 63 for k in ks]
                    reps = lcache[key] = tuple(reps)
                if first >= 0 and reps[0] != first and first in reps:
                    reps = [first] + [c for c in reps if c != first]
            else:
                reps = (legal.bit_length() - 1,)
            nxt = NEXT[seat]
            mine = seat == actor
            best = -INF if mine else INF
            best_c = reps[0]
            for c in reps:
                if nodes >= limit:
                    tick()
                nodes += 1
                h = hs
                if HLV[c] and hand >> (c ^ 3) & 1:
                    h = hl_add(h, mine, HLV[c])
                if c == seven and done < 9 and bound_seat[seat]:
                    h |= SEVENFLAG[seat]
                hands[seat] = hand ^ (1 << c)
                v = second(hands, nxt, c, c, seat, seat, done, ap, dp, h, alpha, beta)
                hands[seat] = hand
                if mine:
                    if v > best:
                        best, best_c = v, c
                        if v > alpha:
                            alpha = v
                            if alpha >= beta:
                                break
                elif v < best:
                    best, best_c = v, c
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            break
            return best, best_c

        def order_follow(reps, win, own):
            """A follower's classes, ordered: cards that take the trick for his side first, high points first."""
            if len(reps) < 2:
                return tuple(reps)
            bm = BEAT[win]
            duck = OWNK if own else OPPK
            ks = [TK[c] if bm >> c & 1 else duck[c] for c in reps]
            ks.sort()
            return tuple([k & 63 for k in ks])

        # the legal cards of a follower and their ordered classes are written out in second() and third()
        # (a call per node costs as much as the work)
        def second(hands, seat, t0, win, ws, leader, done, ap, dp, hs, alpha, beta):
            nonlocal nodes
            hand = hands[seat]
            mine = seat == actor
            ls = t0 >> 3
            same = hand & suit[ls]
            if same:
                legal = ((same & higher[win]) or same) if win >> 3 == ls else same
            elif hand & trump_mask:
                tr = hand & trump_mask
                legal = ((tr & higher[win]) or tr) if win >> 3 == trump else tr
            else:
                legal = hand
            if bound_seat[seat] and done < 9 and legal & sbit and legal != sbit:
                legal ^= sbit
            if legal & (legal - 1):
                present = hands[0] | hands[1] | hands[2] | (1 << t0)
                own = (ws == actor) == mine
                sh = ((legal & -legal).bit_length() - 1) & 24
                m = legal >> sh
                if m < 256:
                    # one suit: the ordered classes memoised by the suit's legal and present cards,
                    # the hláška and seven cards among them, and the trick's winning card
                    pk = hand & KINGS & ((hand & OBERS) << 1)
                    key = (m | (present >> sh & 255) << 8 | ((legal & (pk | pk >> 1 | sbit)) >> sh) << 16
                           | sh << 21 | win << 26 | own << 31)
                    reps = fcache.get(key)
                    if reps is None:
                        reps = fcache[key] = order_follow(moves(legal, hand, present), win, own)
                else:
                    reps = order_follow(moves(legal, hand, present), win, own)
            else:
                reps = (legal.bit_length() - 1,)
            nxt = NEXT[seat]
            best = -INF if mine else INF
            bm = BEAT[win]
            for c in reps:
                if nodes >= limit:
                    tick()
                nodes += 1
                h = hs
                if HLV[c] and hand >> (c ^ 3) & 1:
                    h = hl_add(h, mine, HLV[c])
                if c == seven and done < 9 and bound_seat[seat]:
                    h |= SEVENFLAG[seat]
                hands[seat] = hand ^ (1 << c)
                if bm >> c & 1:
                    v = third(hands, nxt, t0, c, c, seat, leader, done, ap, dp, h, alpha, beta)
                else:
                    v = third(hands, nxt, t0, c, win, ws, leader, done, ap, dp, h, alpha, beta)
                hands[seat] = hand
                if mine:
                    if v > best:
                        best = v
                        if v > alpha:
                            alpha = v
                            if alpha >= beta:
                                break
                elif v < best:
                    best = v
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            break
            return best

        def third(hands, seat, t0, t1, win, ws, leader, done, ap, dp, hs, alpha, beta):
            nonlocal nodes
            hand = hands[seat]
            mine = seat == actor
            ls = t0 >> 3
            same = hand & suit[ls]
            if same:
                legal = ((same & higher[win]) or same) if win >> 3 == ls else same
            elif hand & trump_mask:
                tr = hand & trump_mask
                legal = ((tr & higher[win]) or tr) if win >> 3 == trump else tr
            else:
                legal = hand
            if bound_seat[seat] and done < 9 and legal & sbit and legal != sbit:
                legal ^= sbit
            if legal & (legal - 1):
                present = hands[0] | hands[1] | hands[2] | (1 << t0) | (1 << t1)
                own = (ws == actor) == mine
                sh = ((legal & -legal).bit_length() - 1) & 24
                m = legal >> sh
                if m < 256:
                    # one suit: the ordered classes memoised by the suit's legal and present cards,
                    # the hláška and seven cards among them, and the trick's winning card
                    pk = hand & KINGS & ((hand & OBERS) << 1)
                    key = (m | (present >> sh & 255) << 8 | ((legal & (pk | pk >> 1 | sbit)) >> sh) << 16
                           | sh << 21 | win << 26 | own << 31)
                    reps = fcache.get(key)
                    if reps is None:
                        reps = fcache[key] = order_follow(moves(legal, hand, present), win, own)
                else:
                    reps = order_follow(moves(legal, hand, present), win, own)
            else:
                reps = (legal.bit_length() - 1,)
            best = -INF if mine else INF
            bm = BEAT[win]
            done1 = done + 1
            tp0 = pts[t0] + pts[t1]
            for c in reps:
                if nodes >= limit:
                    tick()
                nodes += 1
                h = hs
                if HLV[c] and hand >> (c ^ 3) & 1:
                    h = hl_add(h, mine, HLV[c])
                if c == seven and done < 9 and bound_seat[seat]:
                    h |= SEVENFLAG[seat]
                # the trick is complete
                if bm >> c & 1:
                    nw, nws = c, seat
                else:
                    nw, nws = win, ws
                tp = tp0 + pts[c]
                if done1 == 10:
                    tp += 10
                    if nws == actor:
                        a2, d2 = ap + tp, dp
                    else:
                        a2, d2 = ap, dp + tp
                    sil = None
                    if c == seven or t0 == seven or t1 == seven:
                        holder = seat if c == seven else (leader if t0 == seven else NEXT[leader])
                        sil = (holder, nw == seven)
                    key = (a2, d2, h, sil)
                    v = leaf_memo.get(key)
                    if v is None:
                        v = leaf(a2, d2, h, sil)
                else:
                    hands[seat] = hand ^ (1 << c)
                    if nws == actor:
                        a2, d2 = ap + tp, dp
                    else:
                        a2, d2 = ap, dp + tp
                    # a trick start: the transposition table is consulted and filled here (trick(), written out)
                    key = tkey(hands, nws, a2, d2, h)
                    entry = table.get(key)
                    if entry is None:
                        v, move = lead(hands, nws, done1, a2, d2, h, alpha, beta, -1)
                        if v <= alpha:
                            table[key] = (-INF, v, move)
                        elif v >= beta:
                            table[key] = (v, INF, move)
                        else:
                            table[key] = (v, v, move)
                    else:
                        lo, hi, first = entry
                        if lo >= beta:
                            v = lo
                        elif hi <= alpha:
                            v = hi
                        elif lo == hi:
                            v = lo
                        else:
                            a1 = lo if lo > alpha else alpha
                            b1 = hi if hi < beta else beta
                            v, move = lead(hands, nws, done1, a2, d2, h, a1, b1, first)
                            if v <= a1:
                                table[key] = (lo, v, move)
                            elif v >= b1:
                                table[key] = (v, hi, move)
                            else:
                                table[key] = (v, v, move)
                    hands[seat] = hand
                if mine:
                    if v > best:
                        best = v
                        if v > alpha:
                            alpha = v
                            if alpha >= beta:
                                break
                elif v < best:
                    best = v
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            break
            return best

        def play(hands, seat, c, n, t0, t1, win, ws, leader, done, ap, dp, hs, alpha, beta):
            """Play card ``c`` for ``seat`` (``n`` cards on the table) and return the value (the root's step)."""
            nonlocal nodes
            if nodes >= limit:
                tick()
            nodes += 1
            hand = hands[seat]
            if HLV[c] and hand >> (c ^ 3) & 1:
                hs = hl_add(hs, seat == actor, HLV[c])
            if c == seven and done < 9 and bound_seat[seat]:
                hs |= SEVENFLAG[seat]
            hands[seat] = hand & ~(1 << c)
            try:
                if n == 0:
                    return second(hands, NEXT[seat], c, c, seat, seat, done, ap, dp, hs, alpha, beta)
                if BEAT[win] >> c & 1:
                    win, ws = c, seat
                if n == 1:
                    return third(hands, NEXT[seat], t0, c, win, ws, leader, done, ap, dp, hs, alpha, beta)
                tp = pts[t0] + pts[t1] + pts[c]
                done1 = done + 1
                if done1 == 10:
                    tp += 10
                if ws == actor:
                    ap += tp
                else:
                    dp += tp
                if done1 == 10:
                    sil = None
                    if c == seven or t0 == seven or t1 == seven:
                        holder = seat if c == seven else (leader if t0 == seven else NEXT[leader])
                        sil = (holder, win == seven)
                    return leaf(ap, dp, hs, sil)
                return trick(hands, ws, done1, ap, dp, hs, alpha, beta)
            finally:
                hands[seat] = hand

        self._play = play

        # ---------------------------------------------------------- betl and durch: won or lost
        if not self.nb:
            return
        durch = game.kind == "durch"

        def settled(hands, leader):
            """Won whatever is played from here (R8.1's condition, with every hand
            known): betl — each of the actor's cards is below every other card of its
            suit still out, and on lead each suit he holds is still held by someone
            else; durch — on lead, each of his cards beats every other of its suit."""
            mine = hands[actor]
            others = hands[NEXT[actor]] | hands[NEXT[NEXT[actor]]]
            m = mine
            if durch:
                if leader != actor:
                    return False
                while m:
                    low = m & -m
                    if others & higher[low.bit_length() - 1]:
                        return False
                    m ^= low
                return True
            while m:
                low = m & -m
                c = low.bit_length() - 1
                if others & suit[c >> 3] & ~higher[c]:
                    return False
                m ^= low
            if leader == actor:
                for sm in suit:
                    if mine & sm and not others & sm:
                        return False
            return True

        # The table of betl/durch trick starts is keyed by the position's shape: without points,
        # trumps or hlášky only the order of the cards still out matters, and no suit differs
        # from another; so each suit is the sequence of the owners of its cards still out, low
        # to high (a base-4 number), and the key is the leader and the sorted suits.
        shape = _SUIT_SHAPE

        def nb_key(hands, leader):
            h0, h1, h2 = hands
            k = (h0 & 255) | (h1 & 255) << 8 | (h2 & 255) << 16
            a = shape.get(k)
            if a is None:
                a = shape[k] = _suit_shape(k)
            k = (h0 >> 8 & 255) | (h1 >> 8 & 255) << 8 | (h2 >> 8 & 255) << 16
            b = shape.get(k)
            if b is None:
                b = shape[k] = _suit_shape(k)
            k = (h0 >> 16 & 255) | (h1 >> 16 & 255) << 8 | (h2 >> 16 & 255) << 16
            c = shape.get(k)
            if c is None:
                c = shape[k] = _suit_shape(k)
            k = (h0 >> 24) | (h1 >> 24) << 8 | (h2 >> 24) << 16
            d = shape.get(k)
            if d is None:
                d = shape[k] = _suit_shape(k)
            ps = [a, b, c, d]
            ps.sort()
            return leader | ps[0] << 2 | ps[1] << 18 | ps[2] << 34 | ps[3] << 50

        def nb_trick(hands, leader, done):
            key = nb_key(hands, leader)
            r = table.get(key)
            if r is None:
                r = table[key] = settled(hands, leader) or nb_lead(hands, leader, done)
            return r

        # move ordering as the valued search had it: betl leads low, durch high; a
        # follower's card that would do what its side wants first
        NLK = _NB_LEAD_KEYS[durch]
        BELOW = _BELOW

        def nb_lead(hands, seat, done):
            nonlocal nodes
            hand = hands[seat]
            legal = hand
            mine = seat == actor
            if mine:
                # the actor leads only cards that lose the trick (betl) or win it (durch):
                # a defender holding a higher card of the suit must play one
                others = hands[NEXT[seat]] | hands[NEXT[NEXT[seat]]]
                legal = 0
                for sm in suit:
                    m = hand & sm
                    if m:
                        o = others & sm
                        under = BELOW[o.bit_length() - 1] if o else 0
                        legal |= (m & under) if not durch else (m & ~under)
                if not legal:
                    return False
            if legal & (legal - 1):
                present = hands[0] | hands[1] | hands[2]
                key = legal | present << 32
                reps = lcache.get(key)
                if reps is None:
                    reps = moves(legal, hand, present)
                    if len(reps) > 1:
                        ks = [NLK[c] for c in reps]
                        ks.sort()
                        reps = [k & 63 for k in ks]
                    reps = lcache[key] = tuple(reps)
            else:
                reps = (legal.bit_length() - 1,)
            nxt = NEXT[seat]
            for c in reps:
                if nodes >= limit:
                    tick()
                nodes += 1
                hands[seat] = hand ^ (1 << c)
                r = nb_second(hands, nxt, c, seat, done)
                hands[seat] = hand
                if r == mine:
                    return r
            return not mine

        def order_nb(reps, win, want):
            """A follower's classes, ordered: durch — the actor takes, the defence ducks
            under him (``want``: take); betl — under the winning card high first once the
            actor is in the trick (``want``), low first before him; taking last."""
            if len(reps) < 2:
                return tuple(reps)
            hi = higher[win]
            if durch:
                ks = [((0 if want else 100) - (c & 7) if hi >> c & 1 else (100 if want else 0) + (c & 7)) * 64 + c
                      for c in reps]
            else:
                ks = [(100 + (c & 7) if hi >> c & 1 else (-(c & 7) if want else (c & 7))) * 64 + c for c in reps]
            ks.sort()
            return tuple([k & 63 for k in ks])

        def nb_second(hands, seat, t0, ws, done):
            """The second card of a trick led with ``t0`` by ``ws``."""
            nonlocal nodes
            hand = hands[seat]
            nxt = NEXT[seat]
            sm = suit[t0 >> 3]
            same = hand & sm
            hi = higher[t0]
            legal = ((same & hi) or same) if same else hand
            mine = seat == actor
            if mine:
                # the actor's cards that decide the trick against him are not searched: above the
                # third player's best card of the suit he takes it
                o = hands[nxt] & sm
                under = BELOW[o.bit_length() - 1] if o else 0
                legal &= (hi & ~under) if durch else (~hi | under)
                if not legal:
                    return False
            if legal & (legal - 1):
                present = hands[0] | hands[1] | hands[2] | (1 << t0)
                want = mine if durch else (mine or ws == actor)
                sh = ((legal & -legal).bit_length() - 1) & 24
                m = legal >> sh
                if m < 256:
                    key = m | (present >> sh & 255) << 8 | sh << 21 | t0 << 26 | want << 31
                    reps = fcache.get(key)
                    if reps is None:
                        reps = fcache[key] = order_nb(moves(legal, hand, present), t0, want)
                else:
                    reps = order_nb(moves(legal, hand, present), t0, want)
            else:
                reps = (legal.bit_length() - 1,)
            for c in reps:
                if nodes >= limit:
                    tick()
                nodes += 1
                hands[seat] = hand ^ (1 << c)
                if hi >> c & 1:
                    r = nb_third(hands, nxt, t0, c, c, seat, done)
                else:
                    r = nb_third(hands, nxt, t0, c, t0, ws, done)
                hands[seat] = hand
                if r == mine:
                    return r
            return not mine

        def nb_third(hands, seat, t0, t1, win, ws, done):
            """The last card of a trick: the trick's outcome, then the next trick start (table written out)."""
            nonlocal nodes
            hand = hands[seat]
            same = hand & suit[t0 >> 3]
            hi = higher[win]
            legal = ((same & hi) or same) if same else hand
            mine = seat == actor
            if mine:
                legal &= hi if durch else ~hi
                if not legal:
                    return False
            if legal & (legal - 1):
                present = hands[0] | hands[1] | hands[2] | (1 << t0) | (1 << t1)
                want = mine if durch else True
                sh = ((legal & -legal).bit_length() - 1) & 24
                m = legal >> sh
                if m < 256:
                    key = m | (present >> sh & 255) << 8 | sh << 21 | win << 26 | want << 31
                    reps = fcache.get(key)
                    if reps is None:
                        reps = fcache[key] = order_nb(moves(legal, hand, present), win, want)
                else:
                    reps = order_nb(moves(legal, hand, present), win, want)
            else:
                reps = (legal.bit_length() - 1,)
            last = done == 9
            for c in reps:
                if nodes >= limit:
                    tick()
                nodes += 1
                taker = seat if hi >> c & 1 else ws
                if (taker == actor) != durch:
                    r = False  # betl: the actor took a trick; durch: he lost one
                elif last:
                    r = True
                else:
                    hands[seat] = hand ^ (1 << c)
                    key = nb_key(hands, taker)
                    r = table.get(key)
                    if r is None:
                        r = table[key] = settled(hands, taker) or nb_lead(hands, taker, done + 1)
                    hands[seat] = hand
                if r == mine:
                    return r
            return not mine

        def nb_play(hands, seat, c, n, t0, t1, win, ws, leader, done):
            """The root's step: card ``c`` already taken from ``hands[seat]``; does the actor win?"""
            nonlocal nodes
            if nodes >= limit:
                tick()
            nodes += 1
            if n == 0:
                return nb_second(hands, NEXT[seat], c, seat, done)
            if higher[win] >> c & 1:
                win, ws = c, seat
            if n == 1:
                return nb_third(hands, NEXT[seat], t0, c, win, ws, done)
            if (ws == actor) != durch:
                return False
            if done == 9:
                return True
            return nb_trick(hands, ws, done + 1)

        self._nb_play = nb_play
        self._nb_trick = nb_trick


def _timer(budget: Budget | None) -> Budget | None:
    """The budget whose deadlines a solve checks (``None``: it has none)."""
    return budget if budget is not None and (budget.deadline is not None or budget.wall is not None) else None


def nb_wins(game: Game, hands, leader: int, budget: Budget | None = None) -> bool:
    """Betl or durch at a trick start with every hand known: does the actor win
    under perfect play of both sides?  (A :class:`Solver` per game is kept, with
    its table of won and lost trick starts.)"""
    solver = _NB_SOLVERS.get(game)
    if solver is None:
        if len(_NB_SOLVERS) > 8:
            _NB_SOLVERS.clear()
        solver = _NB_SOLVERS[game] = Solver(game)
    return solver.nb_wins(hands, leader, budget)


_NB_SOLVERS: dict = {}


def game_of_deal(deal) -> Game:
    """The :class:`Game` of an engine deal in play (for tests and benchmarks)."""
    return Game.make(deal.game, deal.actor, deal.trump, deal.levels, deal.proti)


def position_of_deal(deal) -> Position:
    """The full-information :class:`Position` of an engine deal in play (for tests
    and benchmarks; the bot itself only ever solves sampled worlds)."""
    actor = deal.actor
    leader = deal.trick_seats[0] if deal.trick else deal.to_move
    a_cards = deal.points[actor]
    return Position(
        hands=list(deal.masks), leader=leader,
        trick=list(zip(deal.trick_seats, deal.trick)), tricks_done=len(deal.tricks),
        a_cards=a_cards, d_cards=sum(deal.points) - a_cards,
        a_hl=tuple(h.points for h in deal.hlasky if h.seat == actor),
        d_hl=tuple(h.points for h in deal.hlasky if h.seat != actor),
        lost_early=frozenset(deal.sedma_lost_early),
    )
