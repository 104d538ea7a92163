"""``robot``: the built-in heuristic player (RULES.md R11 for raising).

The robot decides only from what a protocol bot receives — its seat's view and
the legal action texts — never from the engine's hidden state, and it is
deterministic: the same view gives the same decision, on every seat.

* ``trump``    the lowest card of its longest, strongest suit among the first
               seven; z lidu when those seven are weak (no suit of three)
               — :func:`bots.robot_bid.choose_trump`;
* ``talon``    durch or betl when the twelve cards (after the two best discards)
               make it likely (75 % durch, 45 % betl), else Barva with discards that keep trumps, aces,
               tens and hlášky and make voids; after špatná, betl or durch with
               the safest discards  — :mod:`bots.robot_bid`;
* ``answer``   špatná only with ten cards that already make a betl or durch
               likely; durch on a betl likewise;
* ``contract`` sedma with the trump seven and enough trumps to draw the others,
               sto when the first hláška and the expected card points reach 120
               (R7.7), else hra;
* ``flek``     exactly R11: :mod:`bots.robot_raise` (its docstring lists the
               decisions taken where R11 leaves room);
* ``play``     lays the cards whenever that is offered (R8.4); otherwise counts
               cards and judges each legal card  — :mod:`bots.robot_play`.
"""

from __future__ import annotations

from protocol.sdk import Bot

from . import robot_bid as bid
from .robot_info import CODE, NAME, SUIT_CODE, Info, mask_of_codes
from .robot_play import choose_card
from .robot_raise import raise_decision


def _legal_or(text: str, legal: list[str]) -> str:
    """``text`` if legal, else a safe legal fallback (never reached with a correct engine)."""
    if text in legal:
        return text
    for fallback in ("dobra", "lay"):
        if fallback in legal:
            return fallback
    return legal[0]


class Robot(Bot):
    name = "robot"
    version = "1"

    def choose(self, view: dict, legal: list[str]) -> str:  # pragma: no cover - every decision has its method
        return legal[0]

    # ------------------------------------------------------------ bidding
    def choose_trump(self, view: dict, legal: list[str]) -> str:
        first7 = [CODE[c] for c in view["hand"][:7]]
        card = bid.choose_trump(first7)
        return _legal_or("trump:zlidu" if card is None else "trump:" + NAME[card], legal)

    def choose_talon(self, view: dict, legal: list[str]) -> str:
        hand = mask_of_codes(view["hand"])
        kinds = tuple(k for k in ("barva", "betl", "durch") if any(t.startswith(k + ":") for t in legal))
        if "barva" in kinds and view.get("trump_card"):
            trump_card = CODE[view["trump_card"]]
            kind, (a, b) = bid.forhont_game(hand, trump_card)
        else:
            kind, (a, b) = bid.takeover_game(hand, kinds)
        return _legal_or(f"{kind}:{NAME[a]},{NAME[b]}", legal)

    def choose_answer(self, view: dict, legal: list[str]) -> str:
        hand = mask_of_codes(view["hand"])
        if "spatna" in legal and bid.wants_spatna(hand):
            return "spatna"
        if "durch" in legal and bid.wants_durch_answer(hand):
            return "durch"
        return _legal_or("dobra", legal)

    def choose_contract(self, view: dict, legal: list[str]) -> str:
        hand = mask_of_codes(view["hand"])
        trump = SUIT_CODE[view["trump"]]
        return _legal_or(bid.choose_contract(hand, trump, legal), legal)

    def choose_flek(self, view: dict, legal: list[str]) -> str:
        return raise_decision(view, legal)

    # ------------------------------------------------------------ play
    def choose_play(self, view: dict, legal: list[str]) -> str:
        if "lay" in legal:
            return "lay"  # R8.4: the built-in robots always lay when offered
        cards = [CODE[t[5:]] for t in legal if t.startswith("play:")]
        info = Info(view)
        return _legal_or("play:" + NAME[choose_card(info, cards)], legal)
