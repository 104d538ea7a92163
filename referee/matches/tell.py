"""What the referee tells each seat during a deal, as encoded lines (PROTOCOL.md sections 4-7).

A request carries the mover's whole view; after each action every seat gets the
``event`` lines it may see (a hidden discard or trump card is redacted per seat by
:func:`public_action`, the same rule as the view's bids); at the end each seat gets
its ``deal_end``.  Each distinct line is encoded once (orjson; the bytes are exactly
plain JSON encoding's, ``tests/test_match_encoding.py``).  Reusing the encoded JSON of
the view's unchanged parts was measured and is slower: orjson encodes those small
lists faster than Python can look them up.
"""

from __future__ import annotations

from protocol import messages as M

from ..rules.deal import Deal
from ..seats.process import encode_line

def public_action(deal: Deal, index: int, viewer: int) -> str:
    """The text of ``deal.history[index]`` as ``viewer`` may see it (the same rules as Deal.view bids)."""
    seat, action = deal.history[index]
    if viewer == seat:
        return str(action)
    if action.kind == "trump":
        return str(action) if not action.cards or deal.trump_shown else "trump"
    if action.kind in ("barva", "betl", "durch") and action.cards:
        return action.kind
    return str(action)


def deal_events(deal: Deal, decision: str, before_tricks: int, before_hl: int, viewer: int) -> list[dict]:
    """The event bodies ``viewer`` is told after the last action of ``deal``
    (``before_*``: how many tricks and hlášky there were before it)."""
    text = public_action(deal, len(deal.history) - 1, viewer)
    return [_action_event(deal, decision, text), *_shared_events(deal, before_tricks, before_hl)]


def _action_event(deal: Deal, decision: str, text: str) -> dict:
    """The event of the last action, shown as ``text`` (its :func:`public_action`
    for the viewer: the only part of the events that depends on the viewer)."""
    seat, action = deal.history[-1]
    shown = str(deal.trump_card) if action.kind == "contract" else None
    return M.action_event(seat, decision, text, shown)


def _shared_events(deal: Deal, before_tricks: int, before_hl: int) -> list[dict]:
    """The event bodies after the last action that every seat is told alike."""
    out = [M.hlaska_event(hl.to_dict()) for hl in deal.hlasky[before_hl:]]
    out += [M.trick_event(leader, [str(c) for c in cards], winner) for leader, cards, winner in deal.tricks[before_tricks:]]
    if deal.history[-1][1].kind == "lay" and deal.laid:
        out.append(M.laid_event(deal.laid[0], [str(c) for c in deal.laid[1]]))
    return out


_HIDDEN = frozenset(("trump", "barva", "betl", "durch"))  # the only actions whose text may differ by viewer
_NOT_PLAIN = _HIDDEN | {"contract", "lay"}  # ... or whose event says more (the trump card shown, the cards laid)


def event_lines(n: int, index: int, deal: Deal, decision: str, before_tricks: int, before_hl: int) -> list[list[str]]:
    """For each seat, the encoded ``event`` messages of :func:`deal_events`, each distinct
    line encoded once (only a hidden discard or trump card makes the action event differ)."""
    seat, action = deal.history[-1]
    if action.kind not in _NOT_PLAIN and len(deal.tricks) == before_tricks and len(deal.hlasky) == before_hl:
        lines = [encode_line(M.event(n, index, M.action_event(seat, decision, action.code)))]  # the common case
        return [lines, lines, lines]
    shared = [encode_line(M.event(n, index, body)) for body in _shared_events(deal, before_tricks, before_hl)]
    if action.kind not in _HIDDEN:
        lines = [encode_line(M.event(n, index, _action_event(deal, decision, str(action)))), *shared]
        return [lines, lines, lines]
    h = len(deal.history) - 1
    by_text: dict[str, str] = {}  # public text of the action -> its encoded event
    out = []
    for viewer in range(3):
        text = public_action(deal, h, viewer)
        line = by_text.get(text)
        if line is None:
            line = by_text[text] = encode_line(M.event(n, index, _action_event(deal, decision, text)))
        out.append([line, *shared])
    return out


def request_line(rid: int, n: int, index: int, decision: str, view: dict, texts: list[str], time_ms: int,
                 totals: list[int] | None = None) -> str:
    """``encode_line(M.request(...))``: the encoded request line."""
    return encode_line(M.request(rid, n, index, decision, view, texts, time_ms, totals))

