"""Settlement in groše: pure functions from a deal's outcome to payments (R9, R6, R12.2).

Each component is settled separately (R9.5).  A :class:`Component` carries the
*amount* each defender pays or receives; the actor receives or pays twice that,
so every deal sums to zero at the table.  ``owner`` is whose undertaking the
component is: ``"actor"`` for the actor's contract and the silent scores of his
side, ``"defence"`` for games against (*hry proti*) and the defence's silent
scores.  *Tichá sedma* / *tiché sto* are the "silent" seven and hundred that
score without being announced (R7.9, R7.10).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: R9.1 base stakes.
BASE = {
    "hra": 1,
    "sedma": 2,
    "sto": 4,
    "betl": 5,
    "durch": 10,
    "sedma-proti": 2,
    "sto-proti": 4,
    "ticha-sedma": 1,
    "tiche-sto": 2,
}
TRUMP_GAME_COMPONENTS = {"hra", "sedma", "sto", "sedma-proti", "sto-proti", "ticha-sedma", "tiche-sto"}
FAULT_BEFORE_CONTRACT = 10  # R12.2: the durch stake, paid to each other player


@dataclass(frozen=True)
class Component:
    """One settled component of a deal."""

    name: str
    owner: str  # "actor" or "defence"
    won: bool  # won by its owner
    level: int
    amount: int  # what each defender pays or receives (> 0)
    detail: str = ""

    @property
    def value(self) -> int:
        """Signed amount each defender pays the actor (negative: the actor pays)."""
        return self.amount if (self.owner == "actor") == self.won else -self.amount

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "owner": self.owner,
            "won": self.won,
            "level": self.level,
            "amount": self.amount,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Settlement:
    """The settled deal: components and the payment to each seat (sums to zero)."""

    kind: str  # "played", "conceded", "not-played", "fault"
    actor: int | None
    components: tuple[Component, ...]
    payments: tuple[int, int, int]
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "actor": self.actor,
            "components": [c.to_dict() for c in self.components],
            "payments": list(self.payments),
            "notes": list(self.notes),
        }


def _mult(level: int, cervene: bool) -> int:
    return (1 << level) * (2 if cervene else 1)


def _suffix(level: int, cervene: bool) -> str:
    s = f" ×{1 << level}" if level else ""
    return s + (" ×2 červené" if cervene else "")


def simple(name: str, owner: str, won: bool, level: int, cervene: bool) -> Component:
    """hra, sedma, betl, durch, sedma proti: base × 2^level (× 2 in červené for trump games)."""
    red = cervene and name in TRUMP_GAME_COMPONENTS
    amount = BASE[name] * _mult(level, red)
    return Component(name, owner, won, level, amount, f"{BASE[name]}{_suffix(level, red)}")


def ticha_sedma(owner: str, won: bool, cervene: bool) -> Component:
    """R7.9/R9.3: 1 groš, never raised, doubled in červené."""
    amount = BASE["ticha-sedma"] * (2 if cervene else 1)
    return Component("ticha-sedma", owner, won, 0, amount, "1" + (" ×2 červené" if cervene else ""))


def tiche_sto(owner: str, points: int, hra_level: int, cervene: bool) -> Component:
    """R9.1/R9.3: tiché sto replaces a won hra: (2 + 2 per ten over 100) × the hra's raises."""
    tens = (points - 100) // 10
    base = 2 + 2 * tens
    amount = base * _mult(hra_level, cervene)
    return Component(
        "tiche-sto", owner, True, hra_level, amount,
        f"{points} points: (2 + {tens}×2){_suffix(hra_level, cervene)}",
    )


def hra(owner_points: int, other_points: int, level: int, cervene: bool, *, tiche_sto_allowed: tuple[bool, bool] = (True, True)) -> Component:
    """The actor's hra (R7.6), turned into tiché sto for a winner with 100 or more (R7.10).

    ``owner_points``/``other_points`` are the actor's and the defence's points,
    every hláška counted.  ``tiche_sto_allowed`` says for (actor, defence) whether
    a tiché sto may replace the hra (the defence's is replaced by an announced
    sto proti).
    """
    actor_wins = owner_points > other_points
    winner_points = owner_points if actor_wins else other_points
    if winner_points >= 100 and tiche_sto_allowed[0 if actor_wins else 1]:
        return tiche_sto("actor" if actor_wins else "defence", winner_points, level, cervene)
    c = simple("hra", "actor", actor_wins, level, cervene)
    return Component(c.name, c.owner, c.won, c.level, c.amount, f"{owner_points}:{other_points}, {c.detail}")


def sto(name: str, owner: str, decisive: int, total: int, opponents_hlasky: int, level: int, cervene: bool) -> Component:
    """Sto or sto proti (R7.7, R9.2).

    ``decisive``: the side's cards + last trick + its first declared hláška;
    ``total``: the same with every hláška of the side (for the tens over 100);
    ``opponents_hlasky``: the other side's hlášky, which add to a lost sto.
    """
    mult = _mult(level, cervene)
    if decisive >= 100:
        tens = (total - 100) // 10
        base = 4 + 4 * tens
        return Component(name, owner, True, level, base * mult,
                         f"{decisive} (all hlášky {total}): (4 + {tens}×4){_suffix(level, cervene)}")
    lack = (100 - decisive + 9) // 10
    extra = opponents_hlasky // 10
    base = 4 * lack + 4 * extra
    detail = f"{decisive}: {lack}×4" + (f" + hlášky {opponents_hlasky}: {extra}×4" if extra else "")
    return Component(name, owner, False, level, base * mult, detail + _suffix(level, cervene))


def fault_component(name: str, owner: str, won: bool, level: int, cervene: bool) -> Component:
    """R12.2: a component decided against the faulting side at its base stake (sto 4, no tens)."""
    base = BASE[name]
    red = cervene and name in TRUMP_GAME_COMPONENTS
    return Component(name, owner, won, level, base * _mult(level, red), f"R12.2: {base}{_suffix(level, red)}")


def payments(actor: int, components: tuple[Component, ...] | list[Component], faulting_defender: int | None = None) -> tuple[int, int, int]:
    """Each defender pays ``value``, the actor receives twice that (R9.5).

    With ``faulting_defender`` (R12.2) that defender alone pays the actor twice
    the amount and his partner pays nothing.
    """
    total = sum(c.value for c in components)
    pay = [0, 0, 0]
    pay[actor] = 2 * total
    for s in range(3):
        if s == actor:
            continue
        if faulting_defender is None:
            pay[s] = -total
        else:
            pay[s] = -2 * total if s == faulting_defender else 0
    return (pay[0], pay[1], pay[2])


def fault_before_contract(faulting: int) -> tuple[int, int, int]:
    """R12.2: before a contract is set the faulting player pays each other player 10."""
    pay = [FAULT_BEFORE_CONTRACT] * 3
    pay[faulting] = -2 * FAULT_BEFORE_CONTRACT
    return (pay[0], pay[1], pay[2])
