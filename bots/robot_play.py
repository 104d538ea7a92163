"""The robot's card play: counts the cards and judges each legal card.

Trump games (R7.2)
------------------
Leads follow a player's priorities:

* actor: with sto and the trump K+O still undeclared, lead one of them at once
  (R7.7: the first hláška declared is the one that counts, so the 40 goes before
  any 20); draw the others' trumps with a top trump when it pays (sedma, more
  trumps than are out, or a single one out); cash side winners (unless an
  opponent is 40 % likely to ruff them);
  with a trump majority and no top trump, lead a small trump to knock out the
  higher ones; otherwise the cheapest lead by the trick judgement below.
* defender: cash a side winner the actor cannot ruff; lead into a suit the partner
  is void in when the actor plays before him (he must ruff, R7.2, and sees the
  actor's card first); against a sedma, lead a suit the actor is void
  in so that he must spend trumps; otherwise the cheapest lead.

Following (and the remaining leads) use one judgement per legal card: the chance
``P`` that the robot's side takes the trick (from the cards each later player may
still hold and the must-follow-and-beat rule), the points ``T`` on the trick, and
the worth of keeping the card for later (a sure winner is worth its points and
what it will collect; a trump more, a ten whose ace is still out little):
``value = (2P - 1) * T - keep``.  So the robot smears aces and tens onto a trick
its partner surely wins, does not throw points on a trick the opponent wins, does
not waste high cards, keeps a trump seven for the last trick only when nobody
else can hold a trump then (tichá sedma, R7.9: a beaten seven costs), and
with sto keeps the 20 back while the 40 is not yet declared.

Betl and durch (R7.3)
---------------------
* betl actor: lead the card least likely to win (some defender must beat it),
  getting rid of high cards first; follow under the winning card with the highest
  card that stays under; when void, throw the most dangerous card.
* betl defence: lead a low card the actor must beat; keep the winning card low
  while the actor is still to play; never beat the actor's card when it can be
  helped; when void, throw high cards and keep the low ones for leads.
* durch actor: lead sure winners, longest safe suit first; durch defence: beat the
  actor whenever possible, otherwise throw the lowest card of the longest suit.
"""

from __future__ import annotations

from referee.rules.cards import KING, OBER, SEVEN, SUIT_MASKS

from .robot_info import BSTR, POINTS, TSTR, Info, cards_of, count

_TRUMP_FUTURE = (0.95, 0.7, 0.5, 0.35, 0.25, 0.2, 0.15, 0.1, 0.1)
_SIDE_FUTURE = (0.85, 0.35, 0.12, 0.05, 0.03, 0.02, 0.02, 0.02)


def choose_card(info: Info, legal: list[int]) -> int:
    if len(legal) == 1:
        return legal[0]
    if info.game == "barva":
        if not info.table:
            return _trump_lead(info, legal)
        return _best_by_value(info, legal)
    if info.game == "betl":
        return _betl(info, legal)
    return _durch(info, legal)


# ====================================================================== trump games
def _side_hlaska_declared(info: Info, actor_side: bool) -> bool:
    return any((h["seat"] == info.actor) == actor_side for h in info.hlasky)


def _sto_stake(info: Info) -> bool:
    """Is the robot's side playing for sto with no hláška declared yet (R7.7)?"""
    if info.me == info.actor:
        return "sto" in info.levels and not _side_hlaska_declared(info, True)
    return "sto-proti" in info.levels and not _side_hlaska_declared(info, False)


def _has_trump_pair(info: Info) -> bool:
    t = info.trump
    return bool(info.hand >> (t * 8 + KING) & 1 and info.hand >> (t * 8 + OBER) & 1)


def _ruff_risk(info: Info, suit: int) -> float:
    """Chance that an opponent is void in ``suit`` and can trump it."""
    t = info.trump
    if suit == t:
        return 0.0
    risk = 0.0
    for o in info.opponents():
        r = info.prob_void(o, suit) * info.prob_has_any(o, SUIT_MASKS[t])
        risk = max(risk, r)
    return risk


def _keep(info: Info, c: int) -> float:
    """What keeping card ``c`` for later is worth (in card points, roughly)."""
    t = info.trump
    s = c >> 3
    h = count(info.unseen & info.higher[c])
    if s == t:
        v = _TRUMP_FUTURE[h] * (POINTS[c] + 6) + 2.0
        if (c & 7) == SEVEN:
            v += _seven_outlook(info)
        if info.me != info.actor and "sedma" in info.levels:
            v += 3.0  # a trump kept to beat the actor's seven in the last trick
    else:
        v = _SIDE_FUTURE[h] * (POINTS[c] + 5) * (1.0 - 0.8 * _ruff_risk(info, s))
        if info.me == info.actor and count(info.hand & SUIT_MASKS[s]) == 1 and info.hand & SUIT_MASKS[t]:
            v -= 1.5  # the last card of a side suit: a void to ruff into later
    if (c & 7) in (KING, OBER) and _sto_stake(info):
        pair_other = c ^ (KING ^ OBER)
        if info.hand >> pair_other & 1:
            if s == t:
                v -= 8.0  # declare the 40 now
            elif _has_trump_pair(info):
                v += 40.0  # a 20 before the 40 would count instead of it
    return v


def _seven_outlook(info: Info) -> float:
    """Keeping the trump seven to the last trick (tichá sedma, R7.9): worth it when
    nobody else can hold a trump any more; a liability near the end when someone
    can (partner included: whoever beats it, the holder's side pays)."""
    others = info.unseen & SUIT_MASKS[info.trump]
    if info.me != info.actor and not info.talon_known:
        # trumps may lie in the talon: count only those a player may hold
        others &= info.possible[info.actor] | info.possible[info.partner]
    if not others:
        return 6.0
    left = 10 - info.tricks_done
    return -4.0 if left <= 3 else 0.0


def _win_prob(info: Info, c: int) -> float:
    """Chance that the robot's side takes the trick if it plays ``c``."""
    me = info.me
    if info.table:
        led = info.led_suit
        w, ws = info.winner_card, info.winner_seat
        if info.beats(c, w):
            w, ws = c, me
    else:
        led = c >> 3
        w, ws = c, me
    after = 2 - len(info.table)
    if after == 0:
        return 1.0 if info.same_side(ws, me) else 0.0
    p1 = info.seat_after(1)
    if after == 1:
        mine = info.same_side(ws, me)
        if info.same_side(p1, me):
            return 1.0 if mine else info.prob_beats(p1, w, led)
        return (1.0 - info.prob_beats(p1, w, led)) if mine else 0.0
    p2 = info.seat_after(2)
    b1 = info.prob_beats(p1, w, led)
    b2 = info.prob_beats(p2, w, led)
    if me == info.actor:
        return (1.0 - b1) * (1.0 - b2)
    if p1 == info.actor:
        return (1.0 - b1) + b1 * 0.35
    return 1.0 - 0.8 * b2


def _trick_points(info: Info) -> int:
    return sum(POINTS[x] for x in info.table)


def _value(info: Info, c: int) -> float:
    p = _win_prob(info, c)
    t = _trick_points(info) + POINTS[c]
    if len(info.table) < 2:
        t += 3  # what a later player may add
    return (2.0 * p - 1.0) * t - _keep(info, c)


def _best_by_value(info: Info, legal: list[int]) -> int:
    best, best_key = legal[0], None
    for c in legal:
        key = (_value(info, c), -TSTR[c], -c)
        if best_key is None or key > best_key:
            best, best_key = c, key
    return best


def _trump_lead(info: Info, legal: list[int]) -> int:
    t = info.trump
    tmask = SUIT_MASKS[t]
    hand = info.hand
    legal_mask = 0
    for c in legal:
        legal_mask |= 1 << c
    my_trumps = legal_mask & tmask
    opp_trumps = 0
    for o in info.opponents():
        opp_trumps |= info.possible[o] & tmask
    if info.me == info.actor:
        # sto: the 40 first
        if _sto_stake(info) and _has_trump_pair(info):
            for r in (OBER, KING):
                c = t * 8 + r
                if legal_mask >> c & 1:
                    return c
        sedma = "sedma" in info.levels
        if opp_trumps and my_trumps:
            top = max(cards_of(my_trumps), key=TSTR.__getitem__)
            n_mine = count(hand & tmask)
            n_out = count(opp_trumps)
            if info.sure_top(top) and (sedma or n_mine > n_out or n_out <= 1):
                return top
            if n_mine >= n_out + 2 and not info.sure_top(top):
                small = [c for c in cards_of(my_trumps) if not POINTS[c]]
                if small:
                    # the seven stays back for the last trick
                    return min(small, key=lambda c: ((c & 7) == SEVEN, TSTR[c]))
        # cash side winners that cannot be ruffed
        cash = [c for c in cards_of(legal_mask & ~tmask) if info.sure_top(c) and _ruff_risk(info, c >> 3) < 0.4]
        if cash:
            return max(cash, key=lambda c: (POINTS[c], TSTR[c], -c))
        return _best_by_value(info, legal)
    # ---- defender on lead
    actor = info.actor
    partner = info.partner
    cash = []
    for c in cards_of(legal_mask):
        s = c >> 3
        if info.sure_top(c) and (s == t or _ruff_risk(info, s) < 0.3):
            cash.append(c)
    side_cash = [c for c in cash if c >> 3 != t]
    if side_cash:
        return max(side_cash, key=lambda c: (POINTS[c], TSTR[c], -c))
    actor_has_trumps = bool(info.possible[actor] & tmask)
    # lead into the partner's void: he must ruff (R7.2)
    for s in range(4):
        if s == t:
            continue
        mine = legal_mask & SUIT_MASKS[s]
        if not mine:
            continue
        partner_void = not (info.possible[partner] & SUIT_MASKS[s])
        partner_trumps = info.prob_has_any(partner, tmask)
        actor_follows = info.possible[actor] & SUIT_MASKS[s]
        if partner_void and partner_trumps > 0.6 and actor_follows and info.seat_after(1) == actor:
            low = [c for c in cards_of(mine) if not POINTS[c]]
            if low:
                return min(low, key=TSTR.__getitem__)
    # against a sedma: make the actor spend trumps
    if "sedma" in info.levels and actor_has_trumps:
        for s in range(4):
            if s == t:
                continue
            mine = legal_mask & SUIT_MASKS[s]
            if mine and not (info.possible[actor] & SUIT_MASKS[s]):
                return min(cards_of(mine), key=lambda c: (POINTS[c], TSTR[c]))
    return _best_by_value(info, legal)


# ====================================================================== betl
def _p_someone_beats(info: Info, c: int, seats: list[int]) -> float:
    """Chance that at least one of ``seats`` holds a card of c's suit above c."""
    above = SUIT_MASKS[c >> 3] & info.higher[c]
    p_none = 1.0
    for p in seats:
        p_none *= 1.0 - info.prob_has_any(p, above)
    return 1.0 - p_none


def _danger(info: Info, c: int) -> int:
    """Outside cards below ``c`` in its suit (betl order) minus the robot's own below it."""
    below = SUIT_MASKS[c >> 3] & ((1 << c) - 1)
    return count(below & info.unseen) - count(below & info.hand)


def _betl(info: Info, legal: list[int]) -> int:
    me = info.me
    if me == info.actor:
        opps = info.opponents()
        if not info.table:
            # lead the card some defender must beat; among safe ones the most dangerous
            def key(c: int):
                return (round(1.0 - _p_someone_beats(info, c, opps), 3), -_danger(info, c), -BSTR[c], c)
            return min(legal, key=key)
        w = info.winner_card
        under = [c for c in legal if not info.beats(c, w)]
        if under:
            # stay under; throw the most dangerous card (void: any suit)
            return max(under, key=lambda c: (_danger(info, c), BSTR[c], -c))
        # forced to beat: the card most likely to be overtaken by a later defender
        later = [info.seat_after(k) for k in range(1, 3 - len(info.table))]
        return min(legal, key=lambda c: (1.0 - _p_someone_beats(info, c, later), BSTR[c], c))
    actor = info.actor
    if not info.table:
        # lead a low card the actor must beat (R7.3)
        def lead_key(c: int):
            s = c >> 3
            above = SUIT_MASKS[s] & info.higher[c]
            p_actor = info.prob_has_any(actor, above)
            return (-round(p_actor, 3), BSTR[c], c)
        return min(legal, key=lead_key)
    w, ws = info.winner_card, info.winner_seat
    actor_played = actor in info.table_seats
    if actor_played and ws == actor:
        under = [c for c in legal if not info.beats(c, w)]
        if under:
            return max(under, key=lambda c: (BSTR[c], -c))  # keep the low cards for leads
        return min(legal, key=lambda c: (BSTR[c], c))
    if not actor_played:
        # the actor is still to play: keep the winning card as low as possible
        follow = [c for c in legal if (c >> 3) == info.led_suit]
        if follow:
            return min(follow, key=lambda c: (BSTR[c], c))
        return max(legal, key=lambda c: (BSTR[c], -c))  # void: throw a high card
    # the actor played and is not winning
    return max(legal, key=lambda c: (BSTR[c], -c))


# ====================================================================== durch
def _durch(info: Info, legal: list[int]) -> int:
    me = info.me
    if me == info.actor:
        opps = info.opponents()
        if not info.table:
            def key(c: int):
                return (round(_p_someone_beats(info, c, opps), 3), -count(info.hand & SUIT_MASKS[c >> 3]), -BSTR[c], c)
            return min(legal, key=key)
        w = info.winner_card
        beaters = [c for c in legal if info.beats(c, w)]
        if beaters:
            later = [info.seat_after(k) for k in range(1, 3 - len(info.table))]
            return min(beaters, key=lambda c: (round(_p_someone_beats(info, c, later), 3), BSTR[c], c))
        return min(legal, key=lambda c: (BSTR[c], c))
    # defence: beat the actor if possible (usually forced anyway)
    w, ws = info.winner_card, info.winner_seat
    if ws == info.actor:
        beaters = [c for c in legal if info.beats(c, w)]
        if beaters:
            return min(beaters, key=lambda c: (BSTR[c], c))
    # throw the lowest card of the longest suit; keep high cards that may beat the actor later
    return min(legal, key=lambda c: (BSTR[c], -count(info.hand & SUIT_MASKS[c >> 3]), c))
