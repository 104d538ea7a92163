"""The bidding judged double-dummy: the declared game, each betl and durch passed by, each raise.

* **declared** — the game as it was set (contract, levels, games against) with the hands
  at the first lead, valued double-dummy for the actor: *made* when the actor's payment
  under best play is positive (R10.2's "won as actor"; in betl and durch: the game won).
  For a deal that was played, the best line's settlement names each component won or lost.
  A hra conceded (R6.1) and a sedma not played (R6.2) are valued as if played.
* **passed** — at each decision where the seat could have announced betl or durch and did
  not (the forhont's talon, R3.2; an answer to "Barva?" — špatná, R4.2; an answer to a betl —
  durch, R4.3; the talon after špatná), whether that game was makeable double-dummy: the
  seat takes the talon where it would have, and some legal discard of two (the engine's list)
  wins the game against the other two hands as they were, the seat leading (R7.1).  Raises
  and a later takeover by another seat are left out.
* **raises** — each raise of a component (a flek, re, tutti or boty; both defenders raising it
  in one round are one raise, R5.3) and each game against announced: what it gained or cost
  the raising side double-dummy, all else as played: the deal's value at the final levels
  with the component at its level after the raise, less the same with the level before it
  (for a game against: without it).  In the raising seat's groše (the actor's counts twice).
"""

from __future__ import annotations

from bots.search_solve import Game, Position, game_of_deal

from ..rules.actions import PROTI
from ..rules.cards import CARDS
from ..rules.deal import Deal
from .values import Valuer, best_line, root_value, seat_value

CODE = tuple(str(c) for c in CARDS)
NB = ("betl", "durch")


def passed_games(deal: Deal, chosen: str) -> list[str]:
    """The games (betl, durch) the seat to move could announce now, directly or by taking the
    talon, and does not by choosing ``chosen``."""
    legal = deal.legal_actions()
    kinds = {a.kind for a in legal}
    head = chosen.split(":", 1)[0]
    if deal.phase == "talon":
        offered = [g for g in NB if g in kinds]
        return [g for g in offered if g != head]
    if deal.phase == "answer" and chosen == "dobra":
        if "spatna" in kinds:
            return list(NB)
        if "durch" in kinds:
            return ["durch"]
    return []


def makeable(deal: Deal, game: str, valuer: Valuer) -> str | None:
    """Could the seat to move win ``game`` (betl or durch) double-dummy by announcing it now?
    The first winning discard (``betl:Ah,Xh``) or ``None``."""
    seat = deal.to_move
    d = deal
    if deal.phase == "answer":
        d = deal.copy()
        d.apply("spatna" if game != "durch" or "spatna" in {a.kind for a in deal.legal_actions()} else "durch")
    pairs: dict[int, object] = {}
    for a in d.legal_actions():
        if a.kind == game and a.cards:
            key = (1 << a.cards[0]) | (1 << a.cards[1])
            pairs.setdefault(key, a)
    g = Game.make(game, seat, None, {game: 0})
    hand = d.masks[seat]
    # likely winners first: betl sheds its high cards, durch its low ones
    rank = (lambda m: -_rank_sum(m)) if game == "betl" else _rank_sum
    for key in sorted(pairs, key=rank):
        hands = [d.masks[p] if p != seat else hand & ~key for p in range(3)]
        if valuer.nb_wins(g, hands, seat):
            return str(pairs[key])
    return None


def _rank_sum(mask: int) -> int:
    return sum((c & 7) for c in range(32) if mask >> c & 1)


def declared(deal: Deal, pos: Position, valuer: Valuer, played: Deal | None) -> dict:
    """The declared game at its first lead (``deal`` in its play phase, or settled unplayed by
    R6 with ``pos`` its hands), double-dummy; ``played``: the deal at its first lead when it
    was played (its best line is then given component by component)."""
    game = game_of_deal(deal)
    v, pts = root_value(game, pos, valuer)
    actor = deal.actor
    value = seat_value(actor, actor, v, pts)
    out = {"seat": actor, "game": deal.game, "contract": deal.contract, "levels": dict(deal.levels),
           "proti": dict(deal.proti), "made": value.won, "dd": value.to_dict()}
    if played is not None:
        line = best_line(played, valuer)
        out["line"] = [c.to_dict() for c in line.result.components]
    return out


def raises(deal: Deal, steps: list[tuple[int, int, str]], pos: Position, valuer: Valuer,
           line: list[dict] | None) -> list[dict]:
    """Each raise and game against of ``steps`` (step index, seat, action text of the flek
    decisions, in order), valued double-dummy (module docstring); ``line`` the components of
    the best line's settlement (``None``: the deal was not played, R6.2)."""
    actor = deal.actor
    final = dict(deal.levels)
    out = []
    for ev in _raise_events(actor, steps):
        name = ev["component"]
        seat = ev["seats"][0]
        if line is not None:
            comp = _component(line, name)
            if comp is None:
                continue  # settled without it (a hra that became tiché sto is found under its name)
            # the stake the raise added: the component's amount at the level it was raised from (a game
            # against: its amount unraised); amounts double with each level (R9.3)
            stake = comp["amount"] >> (comp["level"] - (ev["from"] or 0))
            raiser_wins = (comp["owner"] == ev["side"]) == comp["won"]
            per_defender = stake if raiser_wins == (ev["side"] == "actor") else -stake
        else:
            after = dict(final, **{name: ev["to"]})
            before = dict(after)
            if ev["kind"] == "proti":
                del before[name]
            else:
                before[name] = ev["from"]
            per_defender = _value(deal, after, pos, valuer) - _value(deal, before, pos, valuer)
        ev["gain_dd"] = seat_value(seat, actor, per_defender, None).grose
        out.append(ev)
    return out


def _component(line: list[dict], name: str) -> dict | None:
    for c in line:
        if c["name"] == name or (name == "hra" and c["name"] == "tiche-sto"):
            return c
    return None


def _value(deal: Deal, levels: dict, pos: Position, valuer: Valuer) -> int:
    g = Game.make(deal.game, deal.actor, deal.trump, levels, dict(deal.proti))
    return root_value(g, pos, valuer)[0]


def _raise_events(actor: int, steps: list[tuple[int, int, str]]) -> list[dict]:
    """The raises of the flek decisions: one per component and round (R5.3: both defenders
    raising it in one round raise it one level), and one per game against announced."""
    events: list[dict] = []
    level: dict[str, int] = {}
    round_side = None
    current: dict[str, dict] = {}

    def close_round():
        for name, ev in current.items():
            if not ev["proti"]:
                level[name] = level.get(name, 0) + 1
            events.append(ev)
        current.clear()

    for step, seat, text in steps:
        side = "actor" if seat == actor else "defence"
        if side != round_side:
            close_round()
            round_side = side
        words, against = _flek_words(text)
        for name in words:
            ev = current.setdefault(name, {"component": name, "kind": "flek", "from": level.get(name, 0),
                                           "to": level.get(name, 0) + 1, "side": side, "seats": [], "steps": [],
                                           "proti": False})
            ev["steps"].append(step)
            ev["seats"].append(seat)
        for p in against:
            name = p + "-proti"
            level[name] = 0
            current[name] = {"component": name, "kind": "proti", "from": None, "to": 0, "side": side,
                             "seats": [seat], "steps": [step], "proti": True}
    close_round()
    for ev in events:
        del ev["proti"]
    return events


def _flek_words(text: str) -> tuple[list[str], list[str]]:
    words: list[str] = []
    against: list[str] = []
    for part in text.split():
        head, _, rest = part.partition(":")
        if head == "flek":
            words = rest.split(",")
        elif head == "proti":
            against = [p for p in rest.split(",") if p in PROTI]
    return words, against

