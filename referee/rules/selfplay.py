"""In-process play: bots called directly, no processes, no protocol.

Used by the README's first command, the benchmarks and the strength reports.
The bots get exactly what the protocol would give them: their seat's view and
the legal actions as text.
"""

from __future__ import annotations

from typing import Sequence

from protocol.sdk import Bot

from .deal import Deal
from .partie import Partie


def play_deal(deal: Deal, bots: Sequence[Bot]) -> Deal:
    while not deal.done:
        seat = deal.to_move
        legal = deal.legal_actions()
        texts = [str(a) for a in legal]
        choice = bots[seat].decide(deal.decision, deal.view(seat), texts)
        deal.apply(legal[texts.index(choice)] if choice in texts else choice)
    return deal


def play_partie(bots: Sequence[Bot], *, seed: int | str | None = 0, deck: list[int] | None = None,
                partie_index: int = 1, deals: int = 12) -> Partie:
    """Play one partie of in-process bots (seat i is ``bots[i]``)."""
    partie = Partie(deck, seed=seed, deals=deals)
    for bot_seat, bot in enumerate(bots):
        bot.on_partie_start({"type": "partie_start", "partie": partie_index, "seat": bot_seat, "deals": deals})
    for deal in partie.iter_deals():
        n = len(partie.deals)
        for s, bot in enumerate(bots):
            bot.on_deal_start({"type": "deal_start", "partie": partie_index, "deal": n, "seat": s,
                               "forhont": deal.forhont, "dealer": deal.dealer, "cut": partie.cuts[-1]})
        play_deal(deal, bots)
        for s, bot in enumerate(bots):
            bot.on_deal_end({"type": "deal_end", "partie": partie_index, "deal": n, "seat": s,
                             "view": deal.view(s), "result": deal.result.to_dict()})
    return partie
