"""One encoding of a seat's view for learning, the same in training and in play (protocol/RL.md).

A protocol bot receives ``view`` and ``legal`` in each request (PROTOCOL.md sections 5-7);
the environments of :mod:`referee.rl` compute their observations with the very functions
below from the very view the referee sends, so a policy trained there runs unchanged as a
protocol bot (:func:`decide`).  This module reads only the protocol's dicts and strings:
it knows nothing of the referee.  It needs numpy (the ``rl`` extra).

**The action space** is :data:`ACTIONS`: a fixed list of :data:`N_ACTIONS` tokens, one per
index.  Every protocol action string is one index, except a ``talon`` action, which is
made in three steps so that the space stays small (3 x 32 x 31 discards would be 2976
indices): the game (``talon:barva``, ``talon:betl``, ``talon:durch``), then the first
discard (``discard:7h``), then the second (``discard:8h``) -- together ``barva:7h,8h``.
:func:`action_indices` maps a protocol string to its one or three indices and
:func:`action_text` maps them back.  The indices, in order:

====================  =====  ==========================================================
tokens                count  protocol action
====================  =====  ==========================================================
``trump:7h`` ...       32    the same string; cards in the order 7h 8h ... Ah 7l ... Aa
``trump:zlidu``         1    the same string
``talon:<game>``        3    first step of ``<game>:<card>,<card>`` (barva, betl, durch)
``discard:<card>``     32    second and third steps: the first and second discard
``dobra`` ``spatna``    3    the same strings (``dobra`` answers both ``answer`` and
``durch``                    ``flek``; ``durch`` here is the answer on a betl)
``contract:...``        4    the same strings (hra, sedma, sto, sto-sedma)
``flek:...``/``proti:`` 25   every raise and game against that any deal can offer
``play:7h`` ...        32    the same strings
``lay``                 1    the same string
====================  =====  ==========================================================

**The observation** is a float32 vector of :data:`OBS_SIZE` values in [0, 1], laid out as
:data:`LAYOUT` (name, size) says.  Seats are relative to the observer: 0 is the observer,
1 the next seat clockwise, 2 the one after.  It holds the hand, the cards each seat played
in finished tricks, the trick on the table and who led it, the suits each other seat has
shown void in, tricks won and card points, the talon cards the seat knows, the trump card
and suit when known, whether the trump was taken z lidu, the phase and the pending talon
steps, the game, actor and forhont, the contract, each component's level, the games
against and who announced them, each seat's answers and raises, the hlášky, the laying
down, the cards not yet seen, and a constant 1.
"""

from __future__ import annotations

import json

import numpy as np

RANKS = "789XUOKA"
SUITS = "hlba"
#: Card codes in index order: index = suit * 8 + rank (the referee's card order, R1.2).
CARD_CODES = tuple(r + s for s in SUITS for r in RANKS)
CARD_INDEX = {c: i for i, c in enumerate(CARD_CODES)}
SUIT_INDEX = {s: i for i, s in enumerate(SUITS)}

GAMES = ("barva", "betl", "durch")
COMPONENTS = ("hra", "sedma", "sto", "betl", "durch", "sedma-proti", "sto-proti")
PROTI = ("sedma", "sto")
CONTRACTS = {"hra": ("hra",), "sedma": ("hra", "sedma"), "sto": ("sto",), "sto-sedma": ("sto", "sedma")}
PHASES = ("trump", "talon", "answer", "contract", "flek", "play", "done")
ANSWERS = ("dobra", "spatna", "durch")


def _subsets(items):
    out = [()]
    for it in items:
        out += [s + (it,) for s in out]
    return out


def _flek_text(words, proti) -> str:
    parts = []
    if words:
        parts.append("flek:" + ",".join(sorted(words, key=COMPONENTS.index)))
    if proti:
        parts.append("proti:" + ",".join(sorted(proti, key=PROTI.index)))
    return " ".join(parts)


def _flek_texts() -> list[str]:
    """Every raise a deal can offer (R5.2-R5.4): in round 1 of a trump game, a subset of the
    contract's components with a subset of the games against open to it; later, any subset of
    the components that can exist beside that contract; in betl and durch, the one component."""
    out: list[str] = []
    for contract, comps in CONTRACTS.items():
        opts = tuple(p for p in PROTI if p not in comps)
        family = tuple(c for c in COMPONENTS if c in comps or (c.endswith("-proti") and c[:-6] in opts))
        pairs = [(w, ()) for w in _subsets(family)] + [(w, p) for w in _subsets(comps) for p in _subsets(opts)]
        for words, proti in pairs:
            text = _flek_text(words, proti)
            if text and text not in out:
                out.append(text)
    return out + ["flek:betl", "flek:durch"]


FLEKS = tuple(_flek_texts())

#: Index -> token (see the module docstring).
ACTIONS: tuple[str, ...] = (
    tuple("trump:" + c for c in CARD_CODES) + ("trump:zlidu",)
    + tuple("talon:" + g for g in GAMES)
    + tuple("discard:" + c for c in CARD_CODES)
    + ANSWERS
    + tuple("contract:" + c for c in CONTRACTS)
    + FLEKS
    + tuple("play:" + c for c in CARD_CODES)
    + ("lay",)
)
N_ACTIONS = len(ACTIONS)
ACTION_INDEX = {a: i for i, a in enumerate(ACTIONS)}
TALON_GAME = ACTION_INDEX["talon:barva"]  # talon:barva, talon:betl, talon:durch
DISCARD = ACTION_INDEX["discard:7h"]  # discard:<card> = DISCARD + card index
#: Every talon action string -> (game index, first card, second card); made once.
TALON_ACTIONS = {f"{g}:{CARD_CODES[a]},{CARD_CODES[b]}": (gi, a, b)
                 for gi, g in enumerate(GAMES) for a in range(32) for b in range(32) if a != b}


def action_indices(text: str) -> tuple[int, ...]:
    """The index (or, for a talon action, the three indices) of a protocol action string."""
    t = TALON_ACTIONS.get(text)
    if t is not None:
        return (TALON_GAME + t[0], DISCARD + t[1], DISCARD + t[2])
    i = ACTION_INDEX.get(text)
    if i is None or TALON_GAME <= i < DISCARD + 32:
        raise ValueError(f"not a protocol action: {text!r}")
    return (i,)


def action_text(indices) -> str:
    """The protocol action string of one index, or of the three indices of a talon action."""
    idx = [int(i) for i in (indices if hasattr(indices, "__len__") else (indices,))]
    if len(idx) == 3 and TALON_GAME <= idx[0] < TALON_GAME + 3 and all(DISCARD <= i < DISCARD + 32 for i in idx[1:]):
        a, b = idx[1] - DISCARD, idx[2] - DISCARD
        if a != b:
            return f"{GAMES[idx[0] - TALON_GAME]}:{CARD_CODES[a]},{CARD_CODES[b]}"
    if len(idx) == 1 and not TALON_GAME <= idx[0] < DISCARD + 32:
        return ACTIONS[idx[0]]
    raise ValueError(f"no protocol action has the indices {idx}")


def is_talon(legal: list[str]) -> bool:
    """Is this a ``talon`` decision (answered in three steps)?"""
    return bool(legal) and legal[0] in TALON_ACTIONS


def legal_indices(legal: list[str], pending: tuple[int, ...] = ()) -> list[int]:
    """The indices open now: of every legal string, or, in a talon decision, of the step
    after ``pending`` (the indices already chosen in it: none, the game, or the game and
    the first discard)."""
    if not is_talon(legal):
        return sorted(ACTION_INDEX[t] for t in legal)
    parts = [TALON_ACTIONS[t] for t in legal]
    if not pending:
        return sorted({TALON_GAME + g for g, _a, _b in parts})
    g = pending[0] - TALON_GAME
    if len(pending) == 1:
        return sorted({DISCARD + a for gg, a, _b in parts if gg == g})
    first = pending[1] - DISCARD
    return sorted(DISCARD + b for gg, a, b in parts if gg == g and a == first)


def action_mask(legal: list[str], pending: tuple[int, ...] = ()) -> np.ndarray:
    """``N_ACTIONS`` int8 values: 1 where :func:`legal_indices` has the index."""
    mask = np.zeros(N_ACTIONS, np.int8)
    mask[legal_indices(legal, pending)] = 1
    return mask


# ------------------------------------------------------------------ the observation

LAYOUT: tuple[tuple[str, int], ...] = (
    ("hand", 32),            # my cards
    ("played", 3 * 32),      # cards each seat played in finished tricks (relative seat x card)
    ("trick", 3 * 32),       # the trick on the table, by relative seat
    ("trick_leader", 3),     # who led the trick on the table
    ("to_move", 3),          # whose decision it is
    ("void", 3 * 4),         # suits a seat has shown it lacks (did not follow)
    ("tricks_won", 3),       # tricks won / 10
    ("points", 3),           # card points / 100
    ("talon_known", 32),     # discards I know (mine, or a talon I took)
    ("talon_mine", 1),       # the talon lying aside is mine
    ("trump_card", 32),      # the trump card, when I may know it
    ("trump", 4),            # the trump suit, when known
    ("zlidu", 2),            # trump taken z lidu: no, yes
    ("phase", 7),            # trump talon answer contract flek play done
    ("pending_game", 3),     # talon steps already chosen: the game ...
    ("pending_discard", 32),  # ... and the first discard
    ("game", 3),             # barva betl durch
    ("actor", 3),            # the actor, relative seat
    ("forhont", 3),          # the forhont, relative seat
    ("contract", 4),         # hra sedma sto sto-sedma
    ("levels", 7 * 5),       # component x level (0..4), for the components in play
    ("proti", 2 * 3),        # sedma/sto proti x who announced it
    ("answers", 3 * 3),      # relative seat x dobra/spatna/durch answered
    ("raises", 3),           # raising answers other than dobra, per seat / 4
    ("hlasky", 3 * 4),       # relative seat x suit of each declared hláška
    ("lay_offered", 1),
    ("laid", 1),
    ("unseen", 32),          # cards neither in my hand, nor played, nor a talon I know
    ("bias", 1),             # always 1
)
OFFSET: dict[str, int] = {}
_o = 0
for _name, _size in LAYOUT:
    OFFSET[_name] = _o
    _o += _size
OBS_SIZE = _o
del _o, _name, _size

_HAND, _PLAYED, _TRICK, _LEADER, _TOMOVE, _VOID = (OFFSET[k] for k in ("hand", "played", "trick", "trick_leader", "to_move", "void"))
_WON, _POINTS, _TALON, _TALON_MINE, _TRUMP_CARD, _TRUMP = (OFFSET[k] for k in ("tricks_won", "points", "talon_known", "talon_mine", "trump_card", "trump"))
_ZLIDU, _PHASE, _PGAME, _PDISCARD, _GAME, _ACTOR, _FORHONT = (OFFSET[k] for k in ("zlidu", "phase", "pending_game", "pending_discard", "game", "actor", "forhont"))
_CONTRACT, _LEVELS, _PROTI, _ANSWERS, _RAISES, _HLASKY = (OFFSET[k] for k in ("contract", "levels", "proti", "answers", "raises", "hlasky"))
_LAY_OFFERED, _LAID, _UNSEEN, _BIAS = (OFFSET[k] for k in ("lay_offered", "laid", "unseen", "bias"))
_PHASE_I = {p: i for i, p in enumerate(PHASES)}
_GAME_I = {g: i for i, g in enumerate(GAMES)}
_CONTRACT_I = {c: i for i, c in enumerate(CONTRACTS)}
_COMP_I = {c: i for i, c in enumerate(COMPONENTS)}
_PROTI_I = {p: i for i, p in enumerate(PROTI)}
_ANSWER_I = {a: i for i, a in enumerate(ANSWERS)}
_SUIT_OF = tuple(i >> 3 for i in range(32))
_ALL = (1 << 32) - 1


def observation(view: dict, pending: tuple[int, ...] = ()) -> np.ndarray:
    """The encoding of one seat's ``view`` (a request's or deal_end's ``view``, PROTOCOL.md
    section 7) with the talon steps already chosen (``pending``, see :func:`legal_indices`)."""
    ci = CARD_INDEX
    me = view["seat"]
    ones: list[int] = [_BIAS]
    vals: list[tuple[int, float]] = []
    known = 0  # cards whose place I know: my hand, played, on the table, known talons
    for c in view["hand"]:
        i = ci[c]
        ones.append(_HAND + i)
        known |= 1 << i
    won = [0, 0, 0]
    for t in view["tricks"]:
        leader = t["leader"]
        cards = t["cards"]
        led = cards[0][1]
        for k, c in enumerate(cards):
            r = (leader + k - me) % 3
            i = ci[c]
            ones.append(_PLAYED + 32 * r + i)
            known |= 1 << i
            if k and c[1] != led and r:
                ones.append(_VOID + 4 * r + SUIT_INDEX[led])
        won[(t["winner"] - me) % 3] += 1
    for r in (0, 1, 2):
        if won[r]:
            vals.append((_WON + r, won[r] / 10))
    trick = view["trick"]
    if trick:
        led = trick[0]["card"][1]
        ones.append(_LEADER + (trick[0]["seat"] - me) % 3)
        for e in trick:
            r = (e["seat"] - me) % 3
            i = ci[e["card"]]
            ones.append(_TRICK + 32 * r + i)
            known |= 1 << i
            if r and e["card"][1] != led:
                ones.append(_VOID + 4 * r + SUIT_INDEX[led])
    if view["to_move"] is not None:
        ones.append(_TOMOVE + (view["to_move"] - me) % 3)
    for s, p in enumerate(view["points"]):
        if p:
            vals.append((_POINTS + (s - me) % 3, min(p, 100) / 100))
    talon = view["talon"]
    if talon:
        ones.append(_TALON_MINE)
    raises = [0, 0, 0]
    for b in view["bids"]:
        d = b["decision"]
        a = b["action"]
        if d == "talon":
            if ":" in a:  # discards this seat knows
                for c in a.partition(":")[2].split(","):
                    i = ci[c]
                    ones.append(_TALON + i)
                    known |= 1 << i
        elif d == "answer":
            ones.append(_ANSWERS + 3 * ((b["seat"] - me) % 3) + _ANSWER_I[a])
        elif d == "flek" and a != "dobra":
            raises[(b["seat"] - me) % 3] += 1
    for r in (0, 1, 2):
        if raises[r]:
            vals.append((_RAISES + r, min(raises[r], 4) / 4))
    tc = view["trump_card"]
    if tc is not None:
        ones.append(_TRUMP_CARD + ci[tc])
    if view["trump"] is not None:
        ones.append(_TRUMP + SUIT_INDEX[view["trump"]])
    z = view["zlidu"]
    if z is not None:
        ones.append(_ZLIDU + (1 if z else 0))
    ones.append(_PHASE + _PHASE_I[view["phase"]])
    if pending:
        ones.append(_PGAME + pending[0] - TALON_GAME)
        if len(pending) > 1:
            ones.append(_PDISCARD + pending[1] - DISCARD)
    g = view["game"]
    if g is not None:
        ones.append(_GAME + _GAME_I[g])
    if view["actor"] is not None:
        ones.append(_ACTOR + (view["actor"] - me) % 3)
    ones.append(_FORHONT + (view["forhont"] - me) % 3)
    if view["contract"] is not None:
        ones.append(_CONTRACT + _CONTRACT_I[view["contract"]])
    for comp, lv in view["levels"].items():
        ones.append(_LEVELS + 5 * _COMP_I[comp] + lv)
    for p, s in view["proti"].items():
        ones.append(_PROTI + 3 * _PROTI_I[p] + (s - me) % 3)
    for h in view["hlasky"]:
        ones.append(_HLASKY + 4 * ((h["seat"] - me) % 3) + SUIT_INDEX[h["suit"]])
    if view["lay_offered"]:
        ones.append(_LAY_OFFERED)
    if view["laid"] is not None:
        ones.append(_LAID)
        for c in view["laid"]["cards"]:
            known |= 1 << ci[c]
    unseen = _ALL & ~known
    while unseen:
        low = unseen & -unseen
        ones.append(_UNSEEN + low.bit_length() - 1)
        unseen ^= low
    obs = np.zeros(OBS_SIZE, np.float32)
    obs[ones] = 1.0
    for i, v in vals:
        obs[i] = v
    return obs


def information_string(view: dict, pending: tuple[int, ...] = ()) -> str:
    """The whole view (and the pending talon steps) as one canonical string: two decisions
    of a seat share it exactly when that seat cannot tell them apart."""
    text = json.dumps(view, sort_keys=True, separators=(",", ":"))
    return text + ("|" + ",".join(ACTIONS[i] for i in pending) if pending else "")


def decide(view: dict, legal: list[str], policy) -> str:
    """Answer one request with ``policy(observation, mask) -> index`` (an index whose mask is 1),
    taking the talon's three steps when it is a talon decision: the protocol action string."""
    pending: tuple[int, ...] = ()
    while True:
        mask = action_mask(legal, pending)
        i = int(policy(observation(view, pending), mask))
        if not mask[i]:
            raise ValueError(f"the policy chose index {i} ({ACTIONS[i]}), which is not open now")
        if not is_talon(legal):
            return ACTIONS[i]
        pending += (i,)
        if len(pending) == 3:
            return action_text(pending)
