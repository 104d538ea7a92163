"""The reference solver of the tests: the ``search`` bot's exact solver as it was
before issue 28's speed-up (main at 3227b55), kept verbatim (imports made absolute) so that
the property tests can check the faster :mod:`bots.search_solve` value for value, and
``marias bench search --baseline`` can time both on the same positions.

The exact solver of the ``search`` bot: one deal with every hand known.

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
no hláška or trump-seven role, are one move).

A solve may be cut short by a budget in nodes or time (:class:`Budget`); a solve
that finishes is exact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from referee.rules.cards import ACE, BETL_ORDER, HIGHER_BETL, HIGHER_TRUMP, KING, OBER, SEVEN, SUIT_MASKS, TEN, TRUMP_ORDER

from bots.robot_info import cards_of
from bots.search_settle import hl_add, hl_unpack, nb_settle, trump_settle

POINTS = tuple(10 if (c & 7) in (TEN, ACE) else 0 for c in range(32))
INF = 1 << 20


class OutOfNodes(Exception):
    """The node budget ran out before the solve finished."""


@dataclass
class Budget:
    """What the solves of one decision may spend: ``nodes`` (``None``: unlimited)
    and a ``deadline`` on :func:`time.perf_counter` (``None``: none).  A budget in
    nodes alone makes the result reproducible."""

    nodes: int | None = None
    deadline: float | None = None
    used: int = 0

    def left(self) -> int | None:
        return None if self.nodes is None else self.nodes - self.used

    def exhausted(self) -> bool:
        if self.nodes is not None and self.used >= self.nodes:
            return True
        return self.deadline is not None and time.perf_counter() >= self.deadline


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


class Solver:
    """Alpha-beta over one game's deals (the transposition table is kept between
    solves of the same :class:`Game`)."""

    def __init__(self, game: Game, max_table: int = 400_000):
        self.game = game
        self.max_table = max_table
        self.table: dict = {}
        self.leaf_memo: dict = {}
        self.nodes = 0
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
        self.limit = INF  # node count of the next budget check
        self.cap = INF  # node count at which the current solve stops
        self.deadline: float | None = None
        if nb:
            self.stake = nb_settle(game, True)
        # trump games are searched to the last trick: tiché sto and tichá sedma keep every trick relevant

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
        """One card per class of equivalent legal cards (see the module docstring)."""
        if not legal & (legal - 1):
            return [legal.bit_length() - 1]
        out = []
        pts = self.pts
        nb = self.nb
        for s in range(4):
            m = legal & SUIT_MASKS[s]
            if not m:
                continue
            if not m & (m - 1):
                out.append(m.bit_length() - 1)
                continue
            open_group = False
            gp = -1
            for c in self.order_lists[s]:
                bit = 1 << c
                if m & bit:
                    special = False
                    if not nb:
                        r = c & 7
                        if c == self.seven or ((r == KING or r == OBER) and hand >> (c ^ 3) & 1):
                            special = True
                    if open_group and pts[c] == gp and not special:
                        continue
                    out.append(c)
                    open_group = not special
                    gp = pts[c]
                elif present & bit:
                    open_group = False
        return out

    # ------------------------------------------------------------ solving
    def solve(self, pos: Position, budget: Budget | None = None) -> dict[int, int]:
        """The value of each legal card for the player to move: ``{card: value}``
        (what each defender pays the actor after it, under perfect play).

        Raises :class:`OutOfNodes` when ``budget`` runs out.
        """
        if len(self.table) > self.max_table:
            self.table.clear()
        start = self.nodes
        left = budget.left() if budget is not None else None
        self.cap = INF * INF if left is None else self.nodes + max(0, left)
        self.deadline = budget.deadline if budget is not None else None
        self.limit = min(self.cap, self.nodes + 512)
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
        try:
            guess = self.guess
            for c in reps:
                # MTD(f): null-window tests around a guess converge on the exact value
                lo, hi, g = -INF, INF, guess
                while lo < hi:
                    beta = g + 1 if g == lo else g
                    g = self._play(hands, seat, c, trick_cards, win, win_seat, pos.leader, pos.tricks_done,
                                   pos.a_cards, pos.d_cards, hs, beta - 1, beta)
                    if g < beta:
                        hi = g
                    else:
                        lo = g
                values[c] = g
                guess = g
            self.guess = max(values.values()) if maximise else min(values.values())
        finally:
            if budget is not None:
                budget.used += self.nodes - start
        # every card takes the value of its representative
        out = {}
        for c in cards_of(legal):
            out[c] = values[self._rep_of(c, reps, legal, hand, present)]
        return out

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

    def _play(self, hands, seat, c, trick_cards, win, win_seat, leader, tricks_done, ap, dp, hs, alpha, beta) -> int:
        """Play card ``c`` for ``seat`` and return the value of the resulting position."""
        if self.nodes >= self.limit:
            self._tick()
        self.nodes += 1
        bit = 1 << c
        hand = hands[seat]
        nb = self.nb
        if not nb:
            r = c & 7
            if (r == KING or r == OBER) and hand >> (c ^ 3) & 1:
                hs = hl_add(hs, seat == self.actor, 40 if c >> 3 == self.trump else 20)
            if c == self.seven and tricks_done < 9 and seat in self.bound:
                hs |= 1 << (10 if seat == self.actor else 11)
        hands[seat] = hand & ~bit
        try:
            n = len(trick_cards)
            if n == 0:
                new_win, new_ws = c, seat
            elif self.beats(c, win):
                new_win, new_ws = c, seat
            else:
                new_win, new_ws = win, win_seat
            if n < 2:
                trick_cards.append(c)
                try:
                    return self._node(hands, (seat + 1) % 3, trick_cards, new_win, new_ws, leader, tricks_done,
                                      ap, dp, hs, alpha, beta)
                finally:
                    trick_cards.pop()
            # the trick is complete
            pts = self.pts
            tp = pts[trick_cards[0]] + pts[trick_cards[1]] + pts[c]
            done = tricks_done + 1
            actor_wins = new_ws == self.actor
            if nb:
                if self.game.kind == "betl":
                    if actor_wins:
                        return -self.stake
                elif not actor_wins:
                    return -self.stake
                if done == 10:
                    return self.stake
            if done == 10:
                tp += 10
            if actor_wins:
                ap += tp
            else:
                dp += tp
            if done == 10:
                seven = self.seven
                sil = None
                if c == seven or trick_cards[0] == seven or trick_cards[1] == seven:
                    holder = seat if c == seven else (leader if trick_cards[0] == seven else (leader + 1) % 3)
                    sil = (holder, new_win == seven)
                return self._leaf(ap, dp, hs, sil)
            return self._trick(hands, new_ws, done, ap, dp, hs, alpha, beta)
        finally:
            hands[seat] = hand

    def _tick(self) -> None:
        """Every 512 nodes: stop when the nodes or the time of the budget are spent."""
        if self.nodes >= self.cap or (self.deadline is not None and time.perf_counter() >= self.deadline):
            raise OutOfNodes()
        self.limit = min(self.cap, self.nodes + 512)

    def _leaf(self, ap, dp, hs, sil) -> int:
        key = (ap, dp, hs, sil)
        v = self.leaf_memo.get(key)
        if v is None:
            a_hl, d_hl, lost = hl_unpack(hs)
            v = trump_settle(self.game, ap, dp, a_hl, d_hl, sil, lost)
            self.leaf_memo[key] = v
        return v

    def _trick(self, hands, leader, tricks_done, ap, dp, hs, alpha, beta) -> int:
        """A trick start: the transposition table is consulted and filled here."""
        if self.nb and self._nb_settled(hands, leader):
            return self.stake
        key = (hands[0], hands[1], hands[2], leader, ap, hs)
        entry = self.table.get(key)
        best_move = -1
        if entry is not None:
            lo, hi, best_move = entry
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
        v, move = self._node_moves(hands, leader, [], -1, -1, leader, tricks_done, ap, dp, hs, alpha, beta, best_move)
        if v <= a0:
            lo, hi = (entry[0] if entry else -INF), v
        elif v >= b0:
            lo, hi = v, (entry[1] if entry else INF)
        else:
            lo = hi = v
        self.table[key] = (lo, hi, move)
        return v

    def _nb_settled(self, hands, leader) -> bool:
        """Betl or durch won whatever is played from here (R8.1's condition, with
        every hand known): betl — each of the actor's cards is below every other
        card of its suit still out, and on lead each suit he holds is still held by
        someone else; durch — on lead, each of his cards beats every other of its suit."""
        actor = self.actor
        mine = hands[actor]
        others = hands[(actor + 1) % 3] | hands[(actor + 2) % 3]
        if self.game.kind == "durch":
            if leader != actor:
                return False
            higher = self.higher
            m = mine
            while m:
                low = m & -m
                if others & higher[low.bit_length() - 1]:
                    return False
                m ^= low
            return True
        higher = self.higher
        m = mine
        while m:
            low = m & -m
            c = low.bit_length() - 1
            # every other card of the suit must be above c
            if others & SUIT_MASKS[c >> 3] & ~higher[c]:
                return False
            m ^= low
        if leader == actor:
            for s in range(4):
                if mine & SUIT_MASKS[s] and not others & SUIT_MASKS[s]:
                    return False
        return True

    def _node(self, hands, seat, trick_cards, win, win_seat, leader, tricks_done, ap, dp, hs, alpha, beta) -> int:
        return self._node_moves(hands, seat, trick_cards, win, win_seat, leader, tricks_done, ap, dp, hs, alpha, beta, -1)[0]

    def _node_moves(self, hands, seat, trick_cards, win, win_seat, leader, tricks_done, ap, dp, hs, alpha, beta, first):
        hand = hands[seat]
        legal = self.legal(hand, seat, trick_cards, win, tricks_done)
        present = hands[0] | hands[1] | hands[2]
        for c in trick_cards:
            present |= 1 << c
        reps = self.moves(legal, hand, present)
        if len(reps) > 1:
            reps = self._order(reps, seat, trick_cards, win, win_seat, first, present & ~hand)
        maximise = seat == self.actor
        best = -INF if maximise else INF
        best_c = reps[0]
        for c in reps:
            v = self._play(hands, seat, c, trick_cards, win, win_seat, leader, tricks_done, ap, dp, hs, alpha, beta)
            if maximise:
                if v > best:
                    best, best_c = v, c
                    if v > alpha:
                        alpha = v
                        if alpha >= beta:
                            break
            else:
                if v < best:
                    best, best_c = v, c
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            break
        return best, best_c

    def _order(self, reps, seat, trick_cards, win, win_seat, first, others):
        """Cheap move ordering: the table's move, then cards that take the trick
        for the mover's side, high points first."""
        actor = self.actor
        pts = self.pts
        mine_side = (seat == actor)
        keyed = []
        nb = self.nb
        for c in reps:
            if c == first:
                k = -1000
            elif nb and self.game.kind == "betl":
                if not trick_cards:
                    k = c & 7  # low leads first: the defence forces, the actor stays safe
                elif self.beats(c, win):
                    k = 100 + (c & 7)
                else:
                    actor_in = mine_side or win_seat == actor or len(trick_cards) == 2
                    # under the winning card: the actor and a defender after him throw high, others low
                    k = -(c & 7) if actor_in else (c & 7)
            elif not trick_cards:
                # leads: high cards first
                k = -(self.higher[c] == 0 and 1 or 0) * 50 - pts[c] - (c & 7)
            else:
                takes = self.beats(c, win)
                side_wins = takes or ((win_seat == actor) == mine_side)
                if nb:
                    # betl actor ducks, durch actor takes; the defence the opposite
                    want = (self.game.kind == "durch") == mine_side
                    k = (0 if takes == want else 100) + ((-(c & 7)) if takes else (c & 7))
                elif side_wins:
                    k = -pts[c] * 3 + (TRUMP_ORDER[c & 7] if takes else 0)
                else:
                    k = 100 + pts[c] * 3 + TRUMP_ORDER[c & 7]
            keyed.append((k, c))
        keyed.sort()
        return [c for _k, c in keyed]



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
