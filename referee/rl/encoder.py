"""The observation of :mod:`protocol.observation` computed from the engine's state directly.

:func:`protocol.observation.observation` reads a protocol view (the dict the referee sends);
building that view (``Deal.view``) and reading it back cost more than the game's own step.
:class:`Encoder` writes the same vector from the :class:`~referee.rules.deal.Deal` itself: the
finished tricks and the bids are read once each, as they come, and the rest from the engine's
masks and fields, redacted by the same rules as the view (R3.1: the forhont's first seven
cards only before the trump choice; a talon's discards only to the seats that know them; the
trump card only once shown, or to the forhont).  The result is the encoding of the view, bit
for bit: ``tests/test_rl_env.py`` compares the two at every decision of many deals, against
views built from scratch.
"""

from __future__ import annotations

import numpy as np

from protocol import observation as O

from ..rules.deal import DONE, Deal

_OFF = O.OFFSET
_HAND, _PLAYED, _TRICK, _LEADER, _TOMOVE, _VOID = (_OFF[k] for k in ("hand", "played", "trick", "trick_leader", "to_move", "void"))
_WON, _POINTS, _TALON, _TALON_MINE, _TRUMP_CARD, _TRUMP = (_OFF[k] for k in ("tricks_won", "points", "talon_known", "talon_mine", "trump_card", "trump"))
_ZLIDU, _PHASE, _PGAME, _PDISCARD, _GAME, _ACTOR, _FORHONT = (_OFF[k] for k in ("zlidu", "phase", "pending_game", "pending_discard", "game", "actor", "forhont"))
_CONTRACT, _LEVELS, _PROTI, _ANSWERS, _RAISES, _HLASKY = (_OFF[k] for k in ("contract", "levels", "proti", "answers", "raises", "hlasky"))
_LAY_OFFERED, _LAID, _UNSEEN, _BIAS = (_OFF[k] for k in ("lay_offered", "laid", "unseen", "bias"))
_PHASE_I = {p: i for i, p in enumerate(O.PHASES)}
_GAME_I = {g: _GAME + i for i, g in enumerate(O.GAMES)}
_CONTRACT_I = {c: _CONTRACT + i for i, c in enumerate(O.CONTRACTS)}
_LEVEL_I = {c: _LEVELS + 5 * i for i, c in enumerate(O.COMPONENTS)}
_PROTI_I = {p: _PROTI + 3 * i for i, p in enumerate(O.PROTI)}
_ANSWER_I = {a: i for i, a in enumerate(O.ANSWERS)}
_ALL = (1 << 32) - 1
_BYTES = tuple(bytes((v >> k) & 1 for k in range(8)) for v in range(256))
_FIRST7 = 7
_BIDDING = frozenset(("trump", "talon", "answer", "contract", "flek"))  # no card played yet
_REL = tuple(tuple((s - seat) % 3 for s in range(3)) for seat in range(3))  # [seat][other] -> relative seat


def card_bytes(mask: int) -> bytes:
    """A 32-card mask as 32 bytes of 0/1, card 0 first."""
    b = _BYTES
    return b[mask & 255] + b[(mask >> 8) & 255] + b[(mask >> 16) & 255] + b[mask >> 24]


class Encoder:
    """The observations of one deal's seats, kept up with the deal as it is played.

    ``observation(seat, pending)`` equals ``protocol.observation.observation(deal.view(seat),
    pending)``.  The deal may only move forward between calls (actions applied); after
    anything else (``Deal.redeal``) make a new encoder.
    """

    __slots__ = ("deal", "_tricks", "_played", "_won", "_void", "_history", "_answers", "_raises", "_setup", "_setup_kept", "_played_bytes",
                 "_played_all")

    def __init__(self, deal: Deal):
        self.deal = deal
        self._tricks = 0  # finished tricks read
        self._played = [0, 0, 0]  # cards each seat played in them
        self._won = [0, 0, 0]
        self._void = [0, 0, 0]  # suits (4 bits) each seat did not follow in them
        self._played_bytes: list[bytes | None] = [None, None, None]  # card_bytes of _played
        self._played_all = 0
        self._history = 0  # history entries read
        self._answers: list[tuple[int, int]] = []  # (seat, answer index)
        self._raises = [0, 0, 0]  # raising answers other than dobra
        self._setup = 0  # bids read but the raising answers
        self._setup_kept: list[tuple | None] = [None, None, None]  # per seat: ((setup, bidding), *_setup_part(...))

    def _catch_up(self) -> None:
        """Read the actions applied since the last call: the finished tricks and the bids."""
        d = self.deal
        history = d.history
        if self._history == len(history):
            return
        tricks = d.tricks
        if self._tricks < len(tricks):
            played, won, void = self._played, self._won, self._void
            for leader, cards, winner in tricks[self._tricks:]:
                led = cards[0] >> 3
                played[leader] |= 1 << cards[0]
                s = leader
                for c in cards[1:]:
                    s = (s + 1) % 3
                    played[s] |= 1 << c
                    if c >> 3 != led:
                        void[s] |= 1 << led
                won[winner] += 1
            self._tricks = len(tricks)
            self._played_bytes = [card_bytes(m) if m else None for m in played]
            self._played_all = played[0] | played[1] | played[2]
        decisions = d.decisions
        for k in range(self._history, len(history)):
            seat, a = history[k]
            kind = a.kind
            if kind == "play":
                continue
            decision = decisions[k]
            if decision == "flek":
                if kind != "dobra":
                    self._raises[seat] += 1
                continue
            self._setup += 1
            if decision == "answer":
                self._answers.append((seat, _ANSWER_I[a.code]))
        self._history = len(history)

    def _setup_part(self, seat: int, bidding: bool) -> tuple[bytes, int]:
        """What changes only with a bid other than a raise (the trump, a talon, an answer, the
        contract, laying the cards): the bytes (with the bias), and the cards they show the
        seat (the talons it knows, laid cards).  While ``bidding`` (no card played yet), the
        hand and the unseen cards too: only those bids change the hands then."""
        d = self.deal
        buf = bytearray(O.OBS_SIZE)
        buf[_BIAS] = 1
        known = 0
        for _discarder, cards, knowers in d.talons:
            if seat in knowers:
                known |= (1 << cards[0]) | (1 << cards[1])
        if known:
            buf[_TALON:_TALON + 32] = card_bytes(known)
        if d.talon and seat in d.talons[-1][2]:
            buf[_TALON_MINE] = 1
        tc = d.trump_card
        if tc is not None and (d.trump_shown or seat == d.forhont):
            buf[_TRUMP_CARD + tc] = 1
            if d.game is None or d.game == "barva":
                buf[_TRUMP + (tc >> 3)] = 1
        if d.zlidu is not None:
            buf[_ZLIDU + (1 if d.zlidu else 0)] = 1
        if d.game is not None:
            buf[_GAME_I[d.game]] = 1
        if d.actor is not None:
            buf[_ACTOR + (d.actor - seat) % 3] = 1
        buf[_FORHONT + (d.forhont - seat) % 3] = 1
        if d.contract is not None:
            buf[_CONTRACT_I[d.contract]] = 1
        for s, i in self._answers:
            buf[_ANSWERS + 3 * ((s - seat) % 3) + i] = 1
        if d.laid is not None:
            buf[_LAID] = 1
            for c in d.laid[1]:
                known |= 1 << c
        if bidding:
            hand = self._hand(seat)
            buf[_HAND:_HAND + 32] = card_bytes(hand)
            buf[_UNSEEN:_UNSEEN + 32] = card_bytes(_ALL & ~(known | hand))
        return bytes(buf), known

    def _hand(self, seat: int) -> int:
        d = self.deal
        if seat == d.forhont and d.zlidu is None:  # R3.1: before the trump choice he saw seven cards
            hand = 0
            for c in d.hands[seat][:_FIRST7]:
                hand |= 1 << c
            return hand
        return d.masks[seat]

    def observation(self, seat: int, pending: tuple[int, ...] = ()) -> np.ndarray:
        """The encoding of ``seat``'s view now, with the talon steps ``pending`` (see
        :func:`protocol.observation.observation`)."""
        d = self.deal
        if self._history != len(d.history):
            self._catch_up()
        phase = d.phase
        # no card played yet (a deal may also end so: conceded, R6, or by a fault): the hands
        # are what the bids counted in _setup made them
        bidding = phase in _BIDDING or (phase == DONE and not d.played_mask and d.laid is None and not d.lay_offered)
        key = (self._setup, bidding)
        kept = self._setup_kept[seat]
        if kept is None or kept[0] != key:
            kept = self._setup_kept[seat] = (key, *self._setup_part(seat, bidding))
        buf = bytearray(kept[1])
        rel = _REL[seat]
        buf[_PHASE + _PHASE_I[phase]] = 1
        for comp, lv in d.levels.items():
            buf[_LEVEL_I[comp] + lv] = 1
        for p, s in d.proti.items():
            buf[_PROTI_I[p] + rel[s]] = 1
        vals = []
        raises = self._raises
        if raises[0] or raises[1] or raises[2]:
            for s in (0, 1, 2):
                if raises[s]:
                    vals.append((_RAISES + rel[s], min(raises[s], 4) / 4))
        if d.to_move is not None:
            buf[_TOMOVE + rel[d.to_move]] = 1
        if pending:
            buf[_PGAME + pending[0] - O.TALON_GAME] = 1
            if len(pending) > 1:
                buf[_PDISCARD + pending[1] - O.DISCARD] = 1
        if not bidding:
            self._play_part(seat, rel, buf, kept[2], vals)
        obs = np.frombuffer(buf, np.uint8).astype(np.float32)
        for i, v in vals:
            obs[i] = v
        return obs

    def _play_part(self, seat: int, rel: tuple[int, ...], buf: bytearray, known: int, vals: list) -> None:
        """Into ``buf``: what the card play shows (the cards played, the trick, the voids,
        tricks won, points, hlášky, laying down), the hand and the unseen cards."""
        d = self.deal
        if self._tricks:
            known |= self._played_all
            played_bytes, won, void = self._played_bytes, self._won, self._void
            for s in (0, 1, 2):
                r = rel[s]
                if played_bytes[s] is not None:
                    buf[_PLAYED + 32 * r:_PLAYED + 32 * r + 32] = played_bytes[s]
                if r and void[s]:
                    buf[_VOID + 4 * r:_VOID + 4 * r + 4] = _BYTES[void[s]][:4]
                if won[s]:
                    vals.append((_WON + r, won[s] / 10))
        points = d.points
        if points[0] or points[1] or points[2]:  # (laid cards score without a trick too)
            for s in (0, 1, 2):
                if points[s]:
                    vals.append((_POINTS + rel[s], min(points[s], 100) / 100))
        for h in d.hlasky:
            buf[_HLASKY + 4 * rel[h.seat] + h.suit] = 1
        hand = self._hand(seat)
        if hand:
            buf[_HAND:_HAND + 32] = card_bytes(hand)
            known |= hand
        trick = d.trick
        if trick:
            seats = d.trick_seats
            led = trick[0] >> 3
            buf[_LEADER + rel[seats[0]]] = 1
            for s, c in zip(seats, trick):
                r = rel[s]
                buf[_TRICK + 32 * r + c] = 1
                known |= 1 << c
                if r and c >> 3 != led:
                    buf[_VOID + 4 * r + led] = 1
        if d.lay_offered and seat == d.actor:
            buf[_LAY_OFFERED] = 1
        buf[_UNSEEN:_UNSEEN + 32] = card_bytes(_ALL & ~known)
