"""The robot's raising rule, RULES.md R11 (seed 000, last paragraph), exactly.

Every raise the robot makes in the ``flek`` decision is named here, and nothing
else: each condition is "if and only if".  Counts are "at least" and are taken
over the robot's current hand (the view's ``hand``); *aces-and-tens* counts the
cards that are an A or an X, trumps included; a *hláška* is K and O of one suit.

R11.1  defender, a component at level 0 of the actor's contract (a flek):
       hra (also the hra of a sedma) — a hláška, or 3 trumps, or 3 aces-and-tens;
       sto — 4 trumps or 4 aces-and-tens; sedma — 3 trumps;
       betl — 2 sevens; durch — 2 aces.
R11.2  defender, with its first answer: sedma proti — the trump seven and 5 trumps
       (the seven among them); sto proti — a hláška in trumps and 5 aces-and-tens.
R11.3  defender: tutti (level 2 -> 3) only on the hra, when holding a hláška in
       trumps or two hlášky; never boty.
R11.4  actor, re (level 1 -> 2): hra — 6 trumps, or 5 trumps with the trump A and
       X and 4 aces-and-tens in all; sedma — 6 trumps including the seven;
       betl — 3 sevens and only 7, 8, 9 in hand; never on sto or durch.
R11.5  actor, flek (level 0 -> 1) on a game against: sedma proti — 4 trumps;
       sto proti — 3 aces-and-tens.  Defenders never re it.

Decisions where R11 leaves room (see also the module's tests):

* Each raisable component is judged on its own, and the robot's answer is the set
  of components whose clause holds plus the games against it announces, e.g.
  ``flek:hra,sedma proti:sto``.  Both defenders judge independently (R5.3 makes
  two fleks on one component one level).
* "Fleks once" means level 0 -> 1 only: a defender never raises a component at
  any other level except the hra's tutti of R11.3; the actor never raises beyond
  re (its own components) or flek (games against); nobody says boty.
* R11.3 applies whenever the hra stands at re in the defence's round, whether or
  not this robot fleked it (the seed: "na hru, na kterou forhont dal re").
* The hláška of R11.1 (hra) may be in any suit; R11.2 and R11.3 name trumps
  where they mean trumps ("two hlášky" in R11.3 are any two suits).
* The trump seven counts as a trump; the trump ace and ten count both as trumps
  and as aces-and-tens.
* In betl and durch there are no trumps: only the betl/durch clauses apply.
"""

from __future__ import annotations

from referee.rules.actions import flek as flek_action, parse_action
from referee.rules.cards import ACE, KING, OBER, SEVEN, SUIT_MASKS, TEN

from .robot_info import AX_MASK, ACES, CODE, LOW_MASK, SEVENS, SUIT_CODE


def hand_facts(hand: int, trump: int | None) -> dict:
    """The counts R11 uses, from a hand mask and the trump suit (or None)."""
    pairs = [s for s in range(4) if hand >> (s * 8 + KING) & 1 and hand >> (s * 8 + OBER) & 1]
    tm = SUIT_MASKS[trump] if trump is not None else 0
    return {
        "trumps": (hand & tm).bit_count(),
        "ax": (hand & AX_MASK).bit_count(),
        "hlasky": len(pairs),
        "trump_hlaska": trump is not None and trump in pairs,
        "trump_seven": trump is not None and bool(hand >> (trump * 8 + SEVEN) & 1),
        "trump_ace": trump is not None and bool(hand >> (trump * 8 + ACE) & 1),
        "trump_ten": trump is not None and bool(hand >> (trump * 8 + TEN) & 1),
        "sevens": (hand & SEVENS).bit_count(),
        "aces": (hand & ACES).bit_count(),
        "only_low": hand != 0 and not (hand & ~LOW_MASK),
    }


def defender_flek(component: str, f: dict) -> bool:
    """R11.1: does a defender flek this component (at level 0)?"""
    if component == "hra":
        return f["hlasky"] >= 1 or f["trumps"] >= 3 or f["ax"] >= 3
    if component == "sto":
        return f["trumps"] >= 4 or f["ax"] >= 4
    if component == "sedma":
        return f["trumps"] >= 3
    if component == "betl":
        return f["sevens"] >= 2
    if component == "durch":
        return f["aces"] >= 2
    return False


def defender_tutti(component: str, f: dict) -> bool:
    """R11.3: tutti only on the hra, with a hláška in trumps or two hlášky."""
    return component == "hra" and (f["trump_hlaska"] or f["hlasky"] >= 2)


def announce_proti(game: str, f: dict) -> bool:
    """R11.2: announce sedma proti / sto proti?"""
    if game == "sedma":
        return f["trump_seven"] and f["trumps"] >= 5
    if game == "sto":
        return f["trump_hlaska"] and f["ax"] >= 5
    return False


def actor_re(component: str, f: dict) -> bool:
    """R11.4: does the actor answer a flek on its own component with re?"""
    if component == "hra":
        return f["trumps"] >= 6 or (f["trumps"] >= 5 and f["trump_ace"] and f["trump_ten"] and f["ax"] >= 4)
    if component == "sedma":
        return f["trumps"] >= 6 and f["trump_seven"]
    if component == "betl":
        return f["sevens"] >= 3 and f["only_low"]
    return False  # never on sto or durch


def actor_flek_proti(component: str, f: dict) -> bool:
    """R11.5: does the actor flek a game against announced to it?"""
    if component == "sedma-proti":
        return f["trumps"] >= 4
    if component == "sto-proti":
        return f["ax"] >= 3
    return False


def raise_decision(view: dict, legal: list[str]) -> str:
    """The robot's answer in a ``flek`` decision: exactly R11, as one of ``legal``."""
    me = view["seat"]
    actor = view["actor"]
    levels = view.get("levels") or {}
    hand = 0
    for c in view["hand"]:
        hand |= 1 << CODE[c]
    t = view.get("trump")
    trump = SUIT_CODE[t] if t and view.get("game") == "barva" else None
    f = hand_facts(hand, trump)
    raisable: set[str] = set()
    proti_open: set[str] = set()
    for text in legal:
        a = parse_action(text)
        raisable.update(a.words)
        proti_open.update(a.proti)
    words: list[str] = []
    proti: list[str] = []
    if me != actor:
        for comp in raisable:
            level = levels.get(comp, 0)
            if comp.endswith("-proti"):
                continue  # R11.5: robot defenders never re the actor's flek on a game against
            if level == 0 and defender_flek(comp, f):
                words.append(comp)
            elif level == 2 and defender_tutti(comp, f):
                words.append(comp)
        for game in proti_open:
            if announce_proti(game, f):
                proti.append(game)
    else:
        for comp in raisable:
            level = levels.get(comp, 0)
            if comp.endswith("-proti"):
                if level == 0 and actor_flek_proti(comp, f):
                    words.append(comp)
            elif level == 1 and actor_re(comp, f):
                words.append(comp)
    text = str(flek_action(tuple(words), tuple(proti)))
    if text not in legal:  # cannot happen with the engine's legal sets; stay legal regardless
        return "dobra" if "dobra" in legal else legal[0]
    return text
