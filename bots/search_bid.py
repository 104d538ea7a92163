"""Bidding and raising of the ``search`` bot, by sampling and playing out.

A bidding decision is a choice among a few candidate actions (the robot's own
choice always among them).  For each, the bot samples deals consistent with its
view (the unseen cards dealt to the other hands and the unknown talon,
:func:`bidding_constraints`), rebuilds the deal up to the decision in the
engine (:func:`replay`), applies the candidate and plays the deal out with the
robot's policy for every seat — the robot's raising is exact (R11) and its play
is a good model of a table — and scores it on the engine's settlement.  The
same worlds serve every candidate (so the comparison is paired), and a
candidate replaces the robot's choice only when its mean groše beat it by more
than the noise (:data:`MARGIN` standard errors and :data:`MIN_GAIN` groše).

A world must also explain what the other seats said: their talon kind,
answers, contract and raises are replayed through the robot's policy in that
world and a world where the robot would have said otherwise is drawn again
(rejection sampling, :func:`replay` with ``model``).  An announced sedma, a
re or a sto proti thus come with the strong hands that make them; without this
the defence judged them against random hands and raised them into heavy losses.
A candidate needs :data:`MIN_SWITCH` worlds at least to overrule the robot.

Candidates: the talon — the robot's choice, its best Barva discard, the best
betl and durch discards; answers — dobrá, špatná/durch (only with a hand that
could make a betl or durch); the contract — every legal one; a raise — the
robot's answer, dobrá, and each single raise or game against.

Decisions not rebuilt (a deal with a takeover after špatná or durch, where the
earlier talons are hidden; the trump card from seven cards) keep the robot's
heuristics (:mod:`bots.robot_bid`, R11 in :mod:`bots.robot_raise`).  The
card play's worlds are conditioned on the bids the same way
(:func:`explains_bids`: the hands taken back to the bidding and replayed).
"""

from __future__ import annotations

import math
import random
import time

from referee.rules.actions import parse_action
from referee.rules.cards import CARDS, SEVEN, SUIT_MASKS
from referee.rules.deal import Deal
from referee.rules.partie import deck_from_hands

from . import robot_bid as rbid
from .robot import Robot
from .robot_info import AX_MASK, BSTR, CODE, NAME, SUIT_CODE, cards_of, mask_of_codes
from .search_settle import nb_settle
from .search_solve import Budget, Game, OutOfNodes, Solver, game_of_deal, position_of_deal
from .search_worlds import TALON, Constraints, sample

#: a candidate must beat the robot's choice by this many standard errors ...
MARGIN = 1.0
#: ... and by this many groše (each defender's payment scale) on average
MIN_GAIN = 0.25
#: share of the bot's ``ms`` a bidding decision may spend (the mean stays low:
#: most decisions in a deal are card plays, and the first tricks are cheap)
BID_SHARE = 1.0
#: share of ``ms`` of the trump choice (once a deal, by the forhont)
TRUMP_SHARE = 0.85
#: solver nodes one play-out is counted as, for a budget given in nodes
ROLLOUT_NODES = 1500
#: the most nodes one exact solve of a betl or durch in a bidding world may take
NB_SOLVE_NODES = 60_000
#: fewer worlds than this never overrule the robot
MIN_SWITCH = 4
#: worlds whose hands do not explain the others' bids are drawn again, up to this many in a decision
MAX_REJECT = 200
#: an answer is played out only when the hand's betl or durch chance reaches these
ANSWER_BETL = 0.2
ANSWER_DURCH = 0.4
MAX_WORLDS = 100

_ROBOT = Robot()
#: the games settled as won or lost by one side's tricks (R7.11): solved exactly when bidding
NB_GAMES = ("betl", "durch")


# ---------------------------------------------------------------- decisions
def choose_trump(bot, view, legal):
    """The trump card by play-outs from the first seven: the robot's card, z lidu
    and the lowest card of each other suit of two or more, each played out (the
    rest of the deal by the robot's policy) over the same sampled deals — the
    forhont's other five cards and the others' hands dealt from the 25 unseen."""
    prior = bot.robot.choose_trump(view, legal)
    first7 = [CODE[c] for c in view["hand"]]
    hand = mask_of_codes(view["hand"])
    cands = [prior, "trump:zlidu"]
    for st in range(4):
        m = hand & SUIT_MASKS[st]
        if m.bit_count() >= 2:
            low = min(cards_of(m), key=lambda c: (BSTR[c], c))
            cands.append("trump:" + NAME[low])
    cands = [c for i, c in enumerate(cands) if c in legal and c not in cands[:i]]
    if len(cands) <= 1:
        return prior
    rng = bot.rng(view, "trump")
    me = view["seat"]
    unseen = [c for c in range(32) if not hand >> c & 1]
    budget = bot.budget(TRUMP_SHARE)
    outcome = Outcomes(bot, budget)
    scores: dict[str, list[int]] = {c: [] for c in cands}
    worlds = 0
    while worlds < MAX_WORLDS and not budget.exhausted():
        rng.shuffle(unseen)
        hands = {me: [CARDS[c] for c in first7 + unseen[:5]],
                 (me + 1) % 3: [CARDS[c] for c in unseen[5:15]],
                 (me + 2) % 3: [CARDS[c] for c in unseen[15:]]}
        deck = deck_from_hands(hands, me)
        for c in cands:
            d = Deal(deck, me)
            d.apply(c)
            scores[c].append(outcome(d, me))
        worlds += 1
    bot.stats["trump_worlds"] = bot.stats.get("trump_worlds", 0) + worlds
    if worlds < MIN_SWITCH:
        return prior
    best = best_of_scores(scores, prior, cands, scale=2.0)
    if best != prior:
        bot.stats["trump_changed"] = bot.stats.get("trump_changed", 0) + 1
    return best


def choose_talon(bot, view, legal):
    prior = bot.robot.choose_talon(view, legal)
    cands = [prior]
    hand = mask_of_codes(view["hand"])
    kinds = {t.split(":")[0] for t in legal}
    if view.get("trump_card") and "barva" in kinds and _no_takeover(view):
        tc = CODE[view["trump_card"]]
        a, b = rbid.barva_discard(hand, tc, tc >> 3)
        cands.append(f"barva:{NAME[a]},{NAME[b]}")
        for kind in ("betl", "durch"):
            if kind in kinds:
                _p, (a, b) = rbid.best_nb_discard(hand, 1 << tc, kind)
                cands.append(f"{kind}:{NAME[a]},{NAME[b]}")
    return _by_rollouts(bot, view, legal, prior, cands)


def choose_answer(bot, view, legal):
    """Špatná or durch is judged by play-outs only with a hand that could make a
    betl or durch at all (the robot's own chance estimates); otherwise dobrá."""
    prior = bot.robot.choose_answer(view, legal)
    hand = mask_of_codes(view["hand"])
    if prior == "dobra" and rbid.betl_win_chance(hand) < ANSWER_BETL and rbid.durch_win_chance(hand) < ANSWER_DURCH:
        return prior
    return _by_rollouts(bot, view, legal, prior, list(legal))


def choose_contract(bot, view, legal):
    prior = bot.robot.choose_contract(view, legal)
    return _by_rollouts(bot, view, legal, prior, list(legal))


def choose_flek(bot, view, legal):
    prior = bot.robot.choose_flek(view, legal)
    cands = [prior, "dobra"]
    for t in legal:
        a = parse_action(t)
        if len(a.words) + len(a.proti) == 1:
            cands.append(t)
    return _by_rollouts(bot, view, legal, prior, cands)


# ---------------------------------------------------------------- rollouts
def _by_rollouts(bot, view, legal, prior, cands):
    cands = [c for i, c in enumerate(cands) if c in legal and c not in cands[:i]]
    if len(cands) <= 1 or not _no_takeover(view):
        return prior
    k = bidding_constraints(view)
    if k is None:
        return prior
    rng = bot.rng(view, view["phase"])
    me = view["seat"]
    budget = bot.budget(BID_SHARE)
    outcome = Outcomes(bot, budget)
    scores: dict[str, list[int]] = {c: [] for c in cands}
    worlds = rejected = 0
    while worlds < MAX_WORLDS and not budget.exhausted():
        world = sample(k, rng)
        if world is None:
            break
        seed = rng.randrange(1 << 30)
        check = replay(view, world, random.Random(seed), model=True)
        if check is INCONSISTENT:
            rejected += 1
            if rejected > MAX_REJECT:
                break
            continue
        got = []
        for c in cands:
            d = replay(view, world, random.Random(seed))
            if d is None:
                break
            d.apply(c)
            got.append(outcome(d, me))
        if len(got) < len(cands):
            break
        for c, v in zip(cands, got):
            scores[c].append(v)
        worlds += 1
    bot.stats["bid_worlds"] = bot.stats.get("bid_worlds", 0) + worlds
    bot.stats["bids"] = bot.stats.get("bids", 0) + 1
    bot.stats["bid_rejected"] = bot.stats.get("bid_rejected", 0) + rejected
    if worlds < MIN_SWITCH:
        return prior
    best = best_of_scores(scores, prior, cands, scale=lambda c: 2.0 if me == _actor_after(view, c) else 1.0)
    if best != prior:
        bot.stats["bid_changed"] = bot.stats.get("bid_changed", 0) + 1
    return best


def best_of_scores(scores: dict[str, list[int]], prior: str, cands: list[str], scale) -> str:
    """The candidate whose paired mean gain over ``prior`` is largest among those
    that beat it by :data:`MARGIN` standard errors and :data:`MIN_GAIN` groše on
    the defender's scale (``scale``: 2 for a candidate after which this seat is
    the actor, whose payments are doubled; a number or a function of the candidate)."""
    best, best_gain = prior, 0.0
    base_scores = scores[prior]
    for c in cands:
        if c == prior:
            continue
        diffs = [x - y for x, y in zip(scores[c], base_scores)]
        n = len(diffs)
        mean = sum(diffs) / n
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        se = math.sqrt(var / n)
        k = scale(c) if callable(scale) else scale
        if mean > MARGIN * se and mean / k > MIN_GAIN and mean > best_gain:
            best, best_gain = c, mean
    return best


def _actor_after(view, cand):
    if view.get("actor") is not None:
        return view["actor"]
    if view["phase"] == "talon":
        return view["seat"]
    return view["forhont"]


def robot_play_out(d: Deal, me: int) -> int:
    """Play ``d`` to its end with the robot's policy at every seat; the groše of seat ``me``."""
    while not d.done:
        robot_step(d)
    return d.result.payments[me]


def robot_step(d: Deal) -> None:
    """Apply the robot's action for the seat to move in ``d``."""
    legal = d.legal_actions()
    if len(legal) == 1:
        d.apply(legal[0])
        return
    texts = [a.code for a in legal]
    d.apply(legal[texts.index(_ROBOT.decide(d.decision, d.view(d.to_move), texts))])


class Outcomes:
    """The groše a bidding candidate brings in one world: ``outcome(deal, me)``.

    The rest of the bidding is played with the robot's policy (its raising is
    exact, R11).  A betl or durch reached is then *solved* with every hand known
    (:mod:`bots.search_solve`): a robot's defence lets too many betls through, so
    play-outs overrated them (the declarer won a third of the betls it chose that
    way); the exact solve gives the defence its best play, which is close to
    what a table does once the declarer's cards show.  A trump game is played
    out with the robot's policy.  The solves share ``budget``; a solve cut short
    by it falls back to the play-out for that world (counted in the bot's
    ``stats["nb_unsolved"]``).  In a node budget a play-out counts as
    :data:`ROLLOUT_NODES` nodes and a solve as the nodes it took.
    """

    def __init__(self, bot, budget: Budget):
        self.bot = bot
        self.budget = budget
        self.solvers: dict[Game, Solver] = {}

    def __call__(self, d: Deal, me: int) -> int:
        while d.phase != "play" and not d.done:
            robot_step(d)
        if not d.done and d.game in NB_GAMES:
            value = self.solve(d)
            if value is not None:
                return 2 * value if me == d.actor else -value
        if self.bot.nodes is not None:
            self.budget.used += ROLLOUT_NODES
        return robot_play_out(d, me)

    def solve(self, d: Deal) -> int | None:
        """What each defender pays the actor in ``d`` (a betl or durch about to be
        played) under perfect play, or ``None`` when the budget ran out first."""
        game = game_of_deal(d)
        solver = self.solvers.get(game)
        if solver is None:
            solver = self.solvers[game] = Solver(game)
        left = self.budget.left()
        cap = NB_SOLVE_NODES if left is None else max(0, min(NB_SOLVE_NODES, left))
        sub = self.budget.part(cap)
        stats = self.bot.stats
        try:
            won = solver.nb_wins(d.masks, position_of_deal(d).leader, sub)
        except OutOfNodes:
            stats["nb_unsolved"] = stats.get("nb_unsolved", 0) + 1
            return None
        finally:
            self.budget.used += sub.used
        stats["nb_solved"] = stats.get("nb_solved", 0) + 1
        return nb_settle(game, won)  # R9.1's stake with the raises (R9.3)


# ---------------------------------------------------------------- worlds for bidding
def _no_takeover(view) -> bool:
    return not any(b["decision"] == "answer" and b["action"] in ("spatna", "durch") for b in view.get("bids") or [])


def bidding_constraints(view) -> Constraints | None:
    """The cards the other seats and the talon may hold before the play (no
    takeover yet): every card not in this seat's hand or own talon; the others
    hold 10 each; the talon 2 once discarded (no ace, ten or trump card after
    Barva, R3.2); the shown trump card is the forhont's."""
    me = view["seat"]
    if view["phase"] == "trump":
        return None
    hand = mask_of_codes(view["hand"])
    talon = mask_of_codes(view["talon"]) if view.get("talon") else 0
    pool = ((1 << 32) - 1) & ~hand & ~talon
    known = [0, 0, 0, 0]
    possible = [pool, pool, pool, 0]
    size = [10, 10, 10, 0]
    f = view["forhont"]
    discarded = any(b["decision"] == "talon" for b in view.get("bids") or [])
    if discarded and not talon:
        size[TALON] = 2
        ok = pool
        if view.get("game") == "barva":
            ok &= ~AX_MASK
        possible[TALON] = ok
    tc = view.get("trump_card")
    if tc is not None and f != me:
        known[f] = 1 << CODE[tc]
        possible[TALON] &= ~known[f]
    # R5.1/R5.2: a sedma (proti) announcer holds the trump seven, a sto (proti) announcer a hláška
    pairs = []
    t = view.get("trump")
    if view.get("game") == "barva" and t:
        seven = 1 << (SUIT_CODE[t] * 8 + SEVEN)
        contract = view.get("contract") or ""
        proti = view.get("proti") or {}
        holders = ([f] if "sedma" in contract else []) + ([int(proti["sedma"])] if "sedma" in proti else [])
        for p in holders:
            if p != me:
                known[p] |= seven
                possible[TALON] &= ~seven
        for p in ([f] if contract.startswith("sto") else []) + ([int(proti["sto"])] if "sto" in proti else []):
            if p != me:
                pairs.append(p)
    size[me] = 0
    known[me] = 0
    possible[me] = 0
    if not discarded and me != f:
        return None  # the forhont still holds twelve: not a decision of this seat
    return Constraints(me, pool, known, possible, size, tuple(pairs))


#: the other seats' bids a world must explain with the robot's policy (``model``)
MODELLED = ("talon", "answer", "contract", "flek")
INCONSISTENT = "inconsistent"


def _robot_agrees(d: Deal, bid: dict) -> bool:
    """Would the robot, in this world, have made the bid the seat made?  A talon
    decision is compared by its kind only (the discards are hidden)."""
    seat = d.to_move
    legal = [a.code for a in d.legal_actions()]
    said = _ROBOT.decide(d.decision, d.view(seat), legal)
    if bid["decision"] == "talon":
        return said.split(":")[0] == bid["action"].split(":")[0]
    return said == bid["action"]


def explains_bids(view, world, rng: random.Random) -> bool:
    """Does a world of the play phase (the others' hands now and the talon)
    explain the other seats' bids as the robot would have made them?  Each hand
    is taken back to the bidding (what is in it now plus what its seat played)
    and the bidding replayed (:func:`replay` with ``model``).  A deal after a
    takeover is not rebuilt: every world explains it."""
    if not _no_takeover(view):
        return True
    me = view["seat"]
    played = [[], [], []]
    for tr in view.get("tricks") or []:
        for i, c in enumerate(tr["cards"]):
            played[(tr["leader"] + i) % 3].append(c)
    for e in view.get("trick") or []:
        played[e["seat"]].append(e["card"])
    orig = list(world)
    for p in range(3):
        if p != me:
            orig[p] = world[p] | mask_of_codes(played[p])
    bid_view = dict(view, hand=list(view["hand"]) + played[me])
    if replay(bid_view, orig, rng, model=True, check_turn=False) is not INCONSISTENT:
        return True
    bids = view.get("bids") or []
    if not bids or bids[0]["action"] != "trump":
        return False
    # the trump card is hidden and the forhont's later bids depend on it: the world explains them
    # if any card it may have chosen does (not only the one the sampled seven gave)
    talon = mask_of_codes(view["talon"]) if view.get("talon") else orig[TALON]
    return any(replay(bid_view, orig, rng, model=True, check_turn=False, trump_card=c) is not INCONSISTENT
               for c in cards_of(orig[view["forhont"]] & ~talon))


def replay(view, world, rng: random.Random, model: bool = False, check_turn: bool = True,
           trump_card: int | None = None) -> Deal | str | None:
    """The engine's deal at this decision in ``world`` (hands of the other seats
    and the talon), the hidden parts of the bidding filled in consistently.

    With ``model`` the world must also explain every talon kind, answer,
    contract and raise of the other seats as the robot would have made them
    (their bids carry information about their hands); otherwise
    :data:`INCONSISTENT` is returned.  ``trump_card``: the hidden trump card to assume
    (else the robot's choice from a sampled seven)."""
    me = view["seat"]
    f = view["forhont"]
    hands = [mask_of_codes(view["hand"]) if p == me else world[p] for p in range(3)]
    talon = mask_of_codes(view["talon"]) if view.get("talon") else world[TALON]
    bids = view.get("bids") or []
    discarded = any(b["decision"] == "talon" for b in bids)
    f_orig = hands[f] | (talon if discarded else 0)
    f_cards = cards_of(f_orig)
    tb = bids[0]["action"] if bids else None
    zlidu = view.get("zlidu")
    if tb is None:
        return None
    if tb == "trump" and trump_card is not None:
        tc = trump_card
    elif tb == "trump":  # hidden: the robot's choice from a seven of the twelve, or the longest suit
        keep = [c for c in f_cards if not talon >> c & 1]
        seven = rng.sample(f_cards, 7)
        tc = rbid.choose_trump(seven)
        if tc is None or talon >> tc & 1:
            tc = min(keep, key=lambda c: (-(f_orig & SUIT_MASKS[c >> 3]).bit_count(), c & 7, c))
    elif tb == "trump:zlidu":
        tc = CODE[view["trump_card"]] if view.get("trump_card") else rng.choice([c for c in f_cards if not talon >> c & 1])
    else:
        tc = CODE[tb.split(":")[1]]
    if f == me:  # keep the seat's own order (the talon cards after it)
        rest = [CODE[c] for c in view["hand"] if CODE[c] != tc] + ([c for c in cards_of(talon)] if discarded else [])
    else:
        rest = [c for c in f_cards if c != tc]
        rng.shuffle(rest)
    order = rest[:7] + [tc] + rest[7:] if zlidu else [tc] + rest
    seats = {p: [CODE[c] for c in view["hand"]] if p == me else rng.sample(cards_of(hands[p]), 10)
             for p in range(3) if p != f}
    seats[f] = order
    try:
        deck = deck_from_hands({p: [CARDS[c] for c in seats[p]] for p in range(3)}, f)
        d = Deal(deck, f)
        tcards = cards_of(talon)
        for b in bids:
            text = b["action"]
            if text == "trump":
                text = "trump:zlidu" if zlidu else f"trump:{NAME[tc]}"
            elif text in ("barva", "betl", "durch"):
                text = f"{text}:{NAME[tcards[0]]},{NAME[tcards[1]]}"
            if model and b["seat"] != me and b["decision"] in MODELLED and not _robot_agrees(d, b):
                return INCONSISTENT
            d.apply(text)
    except ValueError:
        return None
    if check_turn and (d.phase != view["phase"] or d.to_move != me):
        return None
    return d

