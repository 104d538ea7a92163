"""One deal of the engine driven by the action indices of :mod:`protocol.observation`.

Shared by the PettingZoo environment and the OpenSpiel game: it keeps the talon steps
chosen so far (``pending``), opens the indices that :func:`protocol.observation.legal_indices`
gives for the request's ``legal`` list (computed from the engine's legal actions directly,
which is faster and is tested to agree), and observes a seat through its view
(``Deal.view``, what the referee sends), so training sees what a bot is sent.
"""

from __future__ import annotations

from protocol import observation as O

from ..rules import actions as A
from ..rules.deal import Deal

#: index -> the engine's action (None for the talon steps, which are made of three indices).
ENGINE_ACTIONS: tuple[A.Action | None, ...] = tuple(
    None if O.TALON_GAME <= i < O.DISCARD + 32 else A.parse_action(t) for i, t in enumerate(O.ACTIONS))


_TALON_GAME_INDEX = {g: O.TALON_GAME + i for i, g in enumerate(O.GAMES)}


class IllegalIndex(ValueError):
    """An index that is not open now (its mask is 0)."""


class Stepper:
    """``deal`` advanced one index at a time."""

    __slots__ = ("deal", "pending", "_legal", "_open", "_seen")

    def __init__(self, deal: Deal):
        self.deal = deal
        self.pending: tuple[int, ...] = ()
        self._legal: list[str] | None = None
        self._open: list[int] | None = None
        self._seen: tuple[int, dict] | None = None  # (seat, view) since the last action (the talon's steps share it)

    def legal_texts(self) -> list[str]:
        """The legal actions as the request's ``legal`` lists them."""
        if self._legal is None:
            self._legal = [a.code for a in self.deal.legal_actions()]
        return self._legal

    def open_indices(self) -> list[int]:
        """The indices open to the seat to move now, ascending."""
        if self._open is None:
            deal = self.deal
            if deal.done:
                self._open = []
            elif deal.phase == "talon":  # O.legal_indices of the legal texts, step by step
                legal = deal.legal_actions()
                pending = self.pending
                if not pending:
                    self._open = sorted({_TALON_GAME_INDEX[a.kind] for a in legal})
                elif len(pending) == 1:
                    kind = O.GAMES[pending[0] - O.TALON_GAME]
                    self._open = sorted({O.DISCARD + a.cards[0] for a in legal if a.kind == kind})
                else:
                    kind = O.GAMES[pending[0] - O.TALON_GAME]
                    first = pending[1] - O.DISCARD
                    self._open = sorted([O.DISCARD + a.cards[1] for a in legal if a.kind == kind and a.cards[0] == first])
            else:  # O.legal_indices of the legal texts, without making the list of them
                index = O.ACTION_INDEX
                self._open = sorted([index[a.code] for a in deal.legal_actions()])
        return self._open

    def mask_bytes(self) -> bytearray:
        """The mask of :meth:`open_indices` as N_ACTIONS bytes of 0/1."""
        buf = bytearray(O.N_ACTIONS)
        for i in self.open_indices():
            buf[i] = 1
        return buf

    def view(self, seat: int) -> dict:
        return self.deal.view(seat)

    def observation(self, seat: int):
        seen = self._seen
        if seen is not None and seen[0] == seat:
            view = seen[1]
        else:
            view = self.deal.view(seat)
            self._seen = (seat, view)
        return O.observation(view, self.pending if seat == self.deal.to_move else ())

    def information_string(self, seat: int) -> str:
        pending = self.pending if seat == self.deal.to_move else ()
        return O.information_string(self.deal.view(seat), pending)

    def step(self, index: int) -> str | None:
        """Take one index for the seat to move; the protocol action applied, or None when
        only a talon step was taken.  An index not open raises :class:`IllegalIndex`."""
        index = int(index)
        if index not in self.open_indices():
            raise IllegalIndex(f"index {index} ({O.ACTIONS[index] if 0 <= index < O.N_ACTIONS else '?'}) "
                               f"is not open to seat {self.deal.to_move} now")
        self._open = None
        action = ENGINE_ACTIONS[index]
        if action is None:
            self.pending += (index,)
            if len(self.pending) < 3:
                return None
            g, a, b = self.pending
            action = A.game(O.GAMES[g - O.TALON_GAME], a - O.DISCARD, b - O.DISCARD)
            self.pending = ()
        self._legal = None
        self._seen = None
        self.deal.apply(action)
        return action.code
