"""Settlement at the leaves of the ``search`` bot's solver.

The engine settles a played trump game in ``Deal._finish_trump_game`` from the
deal's state; the solver reaches its leaves with numbers only (each side's card
points, the hlášky in declaration order, where the trump seven fell), so
:func:`trump_settle` builds the same components from them with the engine's
pure functions (:mod:`referee.rules.settle`): no formula is restated here.  The hláška
state the solver carries through its search is one packed ``int``
(:func:`hl_add`, :func:`hl_unpack`).
"""

from __future__ import annotations

from referee.rules import settle


def trump_settle(game, a_cards: int, d_cards: int, a_hl: tuple[int, ...], d_hl: tuple[int, ...],
                 seven_in_last: tuple[int, bool] | None, lost_early: frozenset = frozenset()) -> int:
    """What each defender pays the actor for a played trump game (the engine's
    ``Deal._finish_trump_game``, from numbers): ``a_hl``/``d_hl`` the sides'
    hlášky in declaration order, ``seven_in_last`` (holder, took the trick)."""
    lv = game.level
    red = game.cervene
    actor = game.actor
    a_all = a_cards + sum(a_hl)
    d_all = d_cards + sum(d_hl)
    comps = []
    if "hra" in lv:
        comps.append(settle.hra(a_all, d_all, lv["hra"], red, tiche_sto_allowed=(True, "sto-proti" not in lv)))
    if "sto" in lv:
        comps.append(settle.sto("sto", "actor", a_cards + (a_hl[0] if a_hl else 0), a_all, d_all - d_cards, lv["sto"], red))
    if "sedma" in lv:
        won = "sedma" not in lost_early and seven_in_last == (actor, True)
        comps.append(settle.simple("sedma", "actor", won, lv["sedma"], red))
    if "sedma-proti" in lv:
        won = "sedma-proti" not in lost_early and seven_in_last == (game.sedma_proti, True)
        comps.append(settle.simple("sedma-proti", "defence", won, lv["sedma-proti"], red))
    if "sto-proti" in lv:
        comps.append(settle.sto("sto-proti", "defence", d_cards + (d_hl[0] if d_hl else 0), d_all, a_all - a_cards,
                                lv["sto-proti"], red))
    if "sedma" not in lv and "sedma-proti" not in lv and seven_in_last is not None:
        holder, won = seven_in_last
        comps.append(settle.ticha_sedma("actor" if holder == actor else "defence", won, red))
    return sum(c.value for c in comps)


def nb_settle(game, won: bool) -> int:
    """Betl or durch: what each defender pays the actor."""
    return settle.simple(game.kind, "actor", won, game.level[game.kind], False).value


# hláška state packed in one int: first hláška of each side (0, 1 = 20, 2 = 40),
# the sum of each side's hlášky in twenties, and the early-seven flags
def hl_unpack(hs: int) -> tuple[tuple[int, ...], tuple[int, ...], frozenset]:
    af, at, df, dt = hs & 3, (hs >> 2) & 7, (hs >> 5) & 3, (hs >> 7) & 7
    lost = set()
    if hs >> 10 & 1:
        lost.add("sedma")
    if hs >> 11 & 1:
        lost.add("sedma-proti")
    a = (20 * af, 20 * (at - af)) if af else ()
    d = (20 * df, 20 * (dt - df)) if df else ()
    return a, d, frozenset(lost)


def hl_add(hs: int, actor_side: bool, value: int) -> int:
    v = value // 20
    if actor_side:
        if not hs & 3:
            hs |= v
        return hs + (v << 2)
    if not (hs >> 5) & 3:
        hs |= v << 5
    return hs + (v << 7)
