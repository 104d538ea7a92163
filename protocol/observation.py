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
    return talon_indices([TALON_ACTIONS[t] for t in legal], pending)


def talon_indices(parts: list[tuple[int, int, int]], pending: tuple[int, ...] = ()) -> list[int]:
    """The open indices of a talon step, from the legal talon actions as (game index, first
    card, second card) triples (:data:`TALON_ACTIONS`)."""
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


_BIT = {c: 1 << i for i, c in enumerate(CARD_CODES)}
#: 8 bits -> 8 bytes of 0/1 (a 32-card mask becomes a 32-byte block in four lookups)
_BYTES = tuple(bytes((v >> k) & 1 for k in range(8)) for v in range(256))


def _block(mask: int) -> bytes:
    b = _BYTES
    return b[mask & 255] + b[(mask >> 8) & 255] + b[(mask >> 16) & 255] + b[mask >> 24]


def _tricks(tricks: list, me: int, start: int = 0, played=(0, 0, 0), won=(0, 0, 0), voids=()) -> tuple:
    """From the finished tricks (from ``start`` on, added to what the earlier ones gave): the
    cards each relative seat played (masks), the tricks each won, the indices of the voids shown."""
    bit = _BIT
    played = list(played)
    won = list(won)
    voids = list(voids)
    for t in tricks[start:]:
        cards = t["cards"]
        r = (t["leader"] - me) % 3
        played[r] |= bit[cards[0]]
        led = cards[0][1]
        for c in (cards[1], cards[2]):
            r = (r + 1) % 3
            played[r] |= bit[c]
            if r and c[1] != led:
                voids.append(_VOID + 4 * r + SUIT_INDEX[led])
        won[(t["winner"] - me) % 3] += 1
    return played, won, voids


def _bids(bids: list, me: int) -> tuple[list[int], list[int], int]:
    """From the bids: the indices of the answers given, the raising answers of each relative
    seat, and the discards this seat knows (a mask)."""
    bit = _BIT
    answers = []
    raises = [0, 0, 0]
    talon = 0
    for b in bids:
        d = b["decision"]
        if d == "flek":
            if b["action"] != "dobra":
                raises[(b["seat"] - me) % 3] += 1
        elif d == "answer":
            answers.append(_ANSWERS + 3 * ((b["seat"] - me) % 3) + _ANSWER_I[b["action"]])
        elif d == "talon":
            a = b["action"]
            if ":" in a:  # discards this seat knows
                talon |= bit[a[-5:-3]] | bit[a[-2:]]
    return answers, raises, talon


#: seat -> (the last bid's dict, how many, what _bids made of them): as _TRICKS_SEEN, for the
#: bids, which the engine's views also share until the next bid.
_BIDS_SEEN: dict[int, tuple] = {}

#: seat -> (the last finished trick's dict, how many, what _tricks made of them).  The engine's
#: views share those dicts from one call to the next, so a list that only grew is read from
#: where it was left.  A reference is kept, so the identity cannot pass to another dict; a
#: view decoded from JSON never matches, and is read whole.
_TRICKS_SEEN: dict[int, tuple] = {}
_NO_TRICKS = ((0, 0, 0), (0, 0, 0), ())


def observation(view: dict, pending: tuple[int, ...] = ()) -> np.ndarray:
    """The encoding of one seat's ``view`` (a request's or deal_end's ``view``, PROTOCOL.md
    section 7) with the talon steps already chosen (``pending``, see :func:`legal_indices`)."""
    bit = _BIT
    me = view["seat"]
    buf = bytearray(OBS_SIZE)
    buf[_BIAS] = 1
    vals: list[tuple[int, float]] = []
    hand = 0
    for c in view["hand"]:
        hand |= bit[c]
    tricks = view["tricks"]
    n = len(tricks)
    memo = _TRICKS_SEEN.get(me)
    if not n:
        played, won, voids = _NO_TRICKS
    elif memo is not None and 0 < memo[1] <= n and tricks[memo[1] - 1] is memo[0]:
        if memo[1] == n:
            played, won, voids = memo[2]
        else:
            played, won, voids = _tricks(tricks, me, memo[1], *memo[2])
            _TRICKS_SEEN[me] = (tricks[-1], n, (played, won, voids))
    else:
        played, won, voids = _tricks(tricks, me)
        if tricks:
            _TRICKS_SEEN[me] = (tricks[-1], n, (played, won, voids))
    for i in voids:
        buf[i] = 1
    known = hand | played[0] | played[1] | played[2]
    trick = view["trick"]
    if trick:
        led = trick[0]["card"][1]
        buf[_LEADER + (trick[0]["seat"] - me) % 3] = 1
        on_table = [0, 0, 0]
        for e in trick:
            r = (e["seat"] - me) % 3
            c = e["card"]
            on_table[r] |= bit[c]
            if r and c[1] != led:
                buf[_VOID + 4 * r + SUIT_INDEX[led]] = 1
        for r in (0, 1, 2):
            if on_table[r]:
                buf[_TRICK + 32 * r:_TRICK + 32 * r + 32] = _block(on_table[r])
                known |= on_table[r]
    for r in (0, 1, 2):
        if won[r]:
            vals.append((_WON + r, won[r] / 10))
        if played[r]:
            buf[_PLAYED + 32 * r:_PLAYED + 32 * r + 32] = _block(played[r])
    if view["to_move"] is not None:
        buf[_TOMOVE + (view["to_move"] - me) % 3] = 1
    points = view["points"]
    if points[0] or points[1] or points[2]:
        for s, p in enumerate(points):
            if p:
                vals.append((_POINTS + (s - me) % 3, min(p, 100) / 100))
    if view["talon"]:
        buf[_TALON_MINE] = 1
    bids = view["bids"]
    memo = _BIDS_SEEN.get(me)
    if memo is not None and bids and memo[0] is bids[-1] and memo[1] == len(bids):
        answers, raises, talon = memo[2]
    else:
        answers, raises, talon = _bids(bids, me)
        if bids:
            _BIDS_SEEN[me] = (bids[-1], len(bids), (answers, raises, talon))
    for i in answers:
        buf[i] = 1
    if talon:
        buf[_TALON:_TALON + 32] = _block(talon)
        known |= talon
    for r in (0, 1, 2):
        if raises[r]:
            vals.append((_RAISES + r, min(raises[r], 4) / 4))
    tc = view["trump_card"]
    if tc is not None:
        buf[_TRUMP_CARD + CARD_INDEX[tc]] = 1
    if view["trump"] is not None:
        buf[_TRUMP + SUIT_INDEX[view["trump"]]] = 1
    z = view["zlidu"]
    if z is not None:
        buf[_ZLIDU + (1 if z else 0)] = 1
    buf[_PHASE + _PHASE_I[view["phase"]]] = 1
    if pending:
        buf[_PGAME + pending[0] - TALON_GAME] = 1
        if len(pending) > 1:
            buf[_PDISCARD + pending[1] - DISCARD] = 1
    g = view["game"]
    if g is not None:
        buf[_GAME + _GAME_I[g]] = 1
    if view["actor"] is not None:
        buf[_ACTOR + (view["actor"] - me) % 3] = 1
    buf[_FORHONT + (view["forhont"] - me) % 3] = 1
    if view["contract"] is not None:
        buf[_CONTRACT + _CONTRACT_I[view["contract"]]] = 1
    for comp, lv in view["levels"].items():
        buf[_LEVELS + 5 * _COMP_I[comp] + lv] = 1
    for p, s in view["proti"].items():
        buf[_PROTI + 3 * _PROTI_I[p] + (s - me) % 3] = 1
    for h in view["hlasky"]:
        buf[_HLASKY + 4 * ((h["seat"] - me) % 3) + SUIT_INDEX[h["suit"]]] = 1
    if view["lay_offered"]:
        buf[_LAY_OFFERED] = 1
    if view["laid"] is not None:
        buf[_LAID] = 1
        for c in view["laid"]["cards"]:
            known |= bit[c]
    if hand:
        buf[_HAND:_HAND + 32] = _block(hand)
    buf[_UNSEEN:_UNSEEN + 32] = _block(_ALL & ~known)
    obs = np.frombuffer(buf, np.uint8).astype(np.float32)
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
