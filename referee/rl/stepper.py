"""One deal of the engine driven by the action indices of :mod:`protocol.observation`.

Shared by the environments and the OpenSpiel game: it keeps the talon steps chosen so far
(``pending``), opens the indices that :func:`protocol.observation.legal_indices` gives for
the request's ``legal`` list, and observes a seat as :func:`protocol.observation.observation`
of the view the referee would send it, so training sees what a bot is sent.  Both are
computed from the engine's state directly (tests check them against the request's lists
and views): the mask from the engine's bitmasks of the cards it may play or discard
(``Deal.play_mask``, ``Deal.discard_mask``), the observation by :class:`.encoder.Encoder`.
"""

from __future__ import annotations

import numpy as np

from protocol import observation as O

from ..rules import actions as A
from ..rules.deal import PLAY, TALON, Deal
from .encoder import Encoder, card_bytes

#: index -> the engine's action (None for the talon steps, which are made of three indices).
ENGINE_ACTIONS: tuple[A.Action | None, ...] = tuple(
    None if O.TALON_GAME <= i < O.DISCARD + 32 else A.parse_action(t) for i, t in enumerate(O.ACTIONS))
_PLAY = O.ACTION_INDEX["play:7h"]
_LAY = O.ACTION_INDEX["lay"]


class IllegalIndex(ValueError):
    """An index that is not open now (its mask is 0)."""


class Stepper:
    """``deal`` advanced one index at a time."""

    __slots__ = ("deal", "pending", "encoder", "_legal", "_mask")

    def __init__(self, deal: Deal):
        self.deal = deal
        self.pending: tuple[int, ...] = ()
        self.encoder = Encoder(deal)
        self._legal: list[str] | None = None
        self._mask: bytearray | None = None

    def legal_texts(self) -> list[str]:
        """The legal actions as the request's ``legal`` lists them."""
        if self._legal is None:
            self._legal = [a.code for a in self.deal.legal_actions()]
        return self._legal

    def mask_bytes(self) -> bytearray:
        """The open indices for the seat to move, as N_ACTIONS bytes of 0/1 (kept: do not change it)."""
        if self._mask is None:
            deal = self.deal
            buf = bytearray(O.N_ACTIONS)
            ph = deal.phase
            if ph == PLAY:
                buf[_PLAY:_PLAY + 32] = card_bytes(deal.play_mask())
                if deal.lay_offered and deal.to_move == deal.actor:
                    buf[_LAY] = 1
            elif ph == TALON:  # the game, then the first discard, then the second
                pending = self.pending
                if not pending:
                    for g, kind in enumerate(O.GAMES):
                        if deal.discard_mask(kind):
                            buf[O.TALON_GAME + g] = 1
                else:
                    m = deal.discard_mask(O.GAMES[pending[0] - O.TALON_GAME])
                    if len(pending) == 2:
                        m &= ~(1 << (pending[1] - O.DISCARD))
                    buf[O.DISCARD:O.DISCARD + 32] = card_bytes(m)
            else:  # a few actions: the trump card, an answer, the contract, a raise
                index = O.ACTION_INDEX
                for a in deal.legal_actions():
                    buf[index[a.code]] = 1
            self._mask = buf
        return self._mask

    def open_indices(self) -> list[int]:
        """The indices open to the seat to move now, ascending."""
        return np.flatnonzero(np.frombuffer(self.mask_bytes(), np.uint8)).tolist()

    def view(self, seat: int) -> dict:
        return self.deal.view(seat)

    def observation(self, seat: int):
        return self.encoder.observation(seat, self.pending if seat == self.deal.to_move else ())

    def information_string(self, seat: int) -> str:
        pending = self.pending if seat == self.deal.to_move else ()
        return O.information_string(self.deal.view(seat), pending)

    def forget(self) -> None:
        """Drop what was computed from the cards (after ``Deal.redeal`` changed them)."""
        self._legal = None
        self._mask = None
        self.encoder = Encoder(self.deal)

    def step(self, index: int) -> str | None:
        """Take one index for the seat to move; the protocol action applied, or None when
        only a talon step was taken.  An index not open raises :class:`IllegalIndex`."""
        index = int(index)
        if not (0 <= index < O.N_ACTIONS and self.mask_bytes()[index]):
            raise IllegalIndex(f"index {index} ({O.ACTIONS[index] if 0 <= index < O.N_ACTIONS else '?'}) "
                               f"is not open to seat {self.deal.to_move} now")
        self._mask = None
        action = ENGINE_ACTIONS[index]
        if action is None:
            self.pending += (index,)
            if len(self.pending) < 3:
                return None
            g, a, b = self.pending
            action = A.game(O.GAMES[g - O.TALON_GAME], a - O.DISCARD, b - O.DISCARD)
            self.pending = ()
        self._legal = None
        self.deal.apply(action)
        return action.code
