"""One deal of volený mariáš: whose turn, the decision asked, the legal actions,
``apply``, the per-seat view and the settlement (RULES.md R2.6–R9, R12).

The flow of a deal (R3–R7):

1. ``trump``    the *forhont* (first player after the dealer) picks the trump card
                from his first seven cards or takes it blind, *z lidu* (R3.1);
2. ``talon``    he discards two and asks "Barva?" or announces *betl*/*durch* (R3.2);
3. ``answer``   the others answer *dobrá* or *špatná* (Barva) / *dobrá* or *durch*
                (betl); whoever takes the game over takes the talon and makes his own
                ``talon`` decision (R4);
4. ``contract`` in a trump game the forhont shows the trump card and announces
                hra, sedma, sto or sto a sedma (R5.1);
5. ``flek``     the raising rounds, with games against (*proti*) (R5.2–R5.4);
6. ``play``     ten tricks, or fewer (betl/durch end at the deciding trick, and the
                actor may lay his cards, R8).

A deal that is not played (R6) or ends by a fault (R12) settles at once.
Cards are ints (see :mod:`referee.rules.cards`); hands are kept both as masks (fast
legality) and as ordered lists (hand order matters for the next deck, R2.6).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import actions as A
from . import settle
from .actions import Action
from .cards import (
    ACE, CARDS, FULL_MASK, HIGHER_BETL, HIGHER_TRUMP, KING, OBER, SEVEN, SUIT_CODES,
    SUIT_MASKS, TEN, TRUMP_ORDER, Card, format_cards,
)

TRUMP, TALON, ANSWER, CONTRACT, FLEK, PLAY, DONE = "trump", "talon", "answer", "contract", "flek", "play", "done"
NO_POINTS_MASK = FULL_MASK & ~sum((1 << (s * 8 + TEN)) | (1 << (s * 8 + ACE)) for s in range(4))
_ALL_CARDS = frozenset(range(32))
_BIT = tuple(1 << c for c in range(32))
#: The action kinds each decision takes (R3-R8), and the rule a wrong kind breaks.
_DECISION_KINDS = {TRUMP: ("trump",), TALON: A.GAME_KINDS, ANSWER: ("dobra", "spatna", "durch"),
                   CONTRACT: ("contract",), FLEK: ("dobra", "flek"), PLAY: ("play", "lay"), DONE: ()}
_DECISION_RULE = {TRUMP: "R3.1", TALON: "R3.2", ANSWER: "R4.1", CONTRACT: "R5.1", FLEK: "R5.3", PLAY: "R7.2"}
_POINTS = tuple(10 if (c & 7) in (TEN, ACE) else 0 for c in range(32))
_CARD_CODE = tuple(str(c) for c in CARDS)  # card -> its code, without a method call per card (view)


class IllegalAction(ValueError):
    """An action that is not legal now: ``rule`` the RULES.md id it breaks, ``detail``
    why; the message is ``"<rule>: <detail>"``."""

    def __init__(self, rule: str, detail: str):
        super().__init__(f"{rule}: {detail}")
        self.rule = rule
        self.detail = detail


@dataclass(frozen=True)
class Hlaska:
    """A declared hláška (K and O of one suit): 20, or 40 in trumps (R7.5)."""

    seat: int
    suit: int
    points: int

    def to_dict(self) -> dict:
        return {"seat": self.seat, "suit": SUIT_CODES[self.suit], "points": self.points}


@dataclass(frozen=True)
class Fault:
    """A bot's breach (R12.1), recorded with its evidence."""

    seat: int
    kind: str
    message: str
    evidence: str = ""
    elapsed: float | None = None

    def to_dict(self) -> dict:
        d = {"seat": self.seat, "kind": self.kind, "message": self.message, "evidence": self.evidence}
        if self.elapsed is not None:
            d["elapsed"] = round(self.elapsed, 4)
        return d


#: ``_finish_trump_game``: find the trump seven in the 10th trick (not given by a lay).
_FROM_LAST_TRICK = object()


def _discards(kind: str, cards: list[int]) -> list[Action]:
    """Every ordered pair of two different cards, as ``kind`` actions (R3.2: the order matters, R2.3)."""
    table = A.GAME_TABLE[kind]
    out: list[Action] = []
    for a in cards:
        row = table[a]
        out += [row[b] for b in cards if b != a]
    return out


class Deal:
    """The state of one deal.

    ``deck`` is the 32-card order, top card first; the deal is dealt from it in
    blocks of 7-5-5-5-5-5 starting with the forhont (R2.6).
    """

    def __init__(self, deck: list[int], forhont: int = 0):
        if len(deck) != 32 or set(deck) != _ALL_CARDS:
            raise ValueError("R1.1: a deal needs the 32 cards exactly once")
        self.deck = deck = [CARDS[c] for c in deck]
        self.forhont = forhont
        self.middle = (forhont + 1) % 3
        self.dealer = (forhont + 2) % 3
        # R2.6: blocks of 7-5-5-5-5-5 to forhont, middle, dealer, forhont, middle, dealer
        hands: list[list[Card]] = [[], [], []]
        hands[forhont] = deck[0:7] + deck[17:22]
        hands[self.middle] = deck[7:12] + deck[22:27]
        hands[self.dealer] = deck[12:17] + deck[27:32]
        self.hands = hands
        masks = [0, 0, 0]
        for seat in (0, 1, 2):
            m = 0
            for c in hands[seat]:
                m |= _BIT[c]
            masks[seat] = m
        self.masks = masks
        self.phase = TRUMP
        self.to_move: int | None = forhont
        self.history: list[tuple[int, Action]] = []
        self.decisions: list[str] = []  # the decision kind of each history entry
        # trump choice and talon
        self.trump_card: Card | None = None
        self.zlidu: bool | None = None
        self.talon: list[Card] = []
        self.talon_owner: int | None = None
        self.talons: list[tuple[int, tuple[Card, Card], set[int]]] = []  # (discarder, cards, seats that know them)
        self._talon_stage = "forhont"  # forhont | spatna | durch
        # the game
        self.game: str | None = None  # barva | betl | durch
        self.actor: int | None = None
        self._answerers: list[int] = []
        self._answer_kind = ""  # barva | betl
        self.contract: str | None = None
        self.trump: int | None = None  # the trump suit once a trump game is set
        self.trump_shown = False
        self.levels: dict[str, int] = {}
        self.proti: dict[str, int] = {}  # game against -> announcing seat
        self._raisable: tuple[str, ...] = ()
        self._round_side = ""
        self._round = 0
        self._speakers: list[int] = []
        self._round_raised: set[str] = set()
        self._round_announced: set[str] = set()
        # play
        self.leader: int | None = None
        self.trick: list[Card] = []
        self.trick_seats: list[int] = []
        self.tricks: list[tuple[int, tuple[Card, ...], int]] = []  # (leader, cards, winner)
        self.taken: list[list[tuple[Card, ...]]] = [[], [], []]
        self.points = [0, 0, 0]
        self.played_mask = 0
        self.hlasky: list[Hlaska] = []
        self.sedma_lost_early: set[str] = set()
        self.laid: tuple[int, tuple[Card, ...]] | None = None
        self.laid_pile: tuple[Card, ...] = ()
        self.lay_offered = False
        self.fault_info: Fault | None = None
        self.result: settle.Settlement | None = None
        self._legal_cache: list[Action] | None = None
        # parts of the views kept between calls (see view): they only grow, or change with a bid
        self._trick_views: list[dict] = []
        self._hlaska_views: list[dict] = []
        self._n_bids = 0  # bids applied (every action but a card play)
        self._bid_views: list[tuple[int, list[dict]] | None] = [None, None, None]

    def copy(self) -> "Deal":
        """An independent copy of this state (as python-chess's ``Board.copy``): applying
        actions to one never changes the other.  Much cheaper than ``copy.deepcopy``."""
        new = object.__new__(Deal)
        d = new.__dict__
        d.update(self.__dict__)
        d["deck"] = list(self.deck)
        d["hands"] = [list(h) for h in self.hands]
        d["masks"] = list(self.masks)
        d["history"] = list(self.history)
        d["decisions"] = list(self.decisions)
        d["talon"] = list(self.talon)
        d["talons"] = [(s, cards, set(knowers)) for s, cards, knowers in self.talons]
        d["_answerers"] = list(self._answerers)
        d["levels"] = dict(self.levels)
        d["proti"] = dict(self.proti)
        d["_speakers"] = list(self._speakers)
        d["_round_raised"] = set(self._round_raised)
        d["_round_announced"] = set(self._round_announced)
        d["trick"] = list(self.trick)
        d["trick_seats"] = list(self.trick_seats)
        d["tricks"] = list(self.tricks)
        d["taken"] = [list(t) for t in self.taken]
        d["points"] = list(self.points)
        d["hlasky"] = list(self.hlasky)
        d["sedma_lost_early"] = set(self.sedma_lost_early)
        d["_trick_views"] = list(self._trick_views)
        d["_hlaska_views"] = list(self._hlaska_views)
        d["_bid_views"] = list(self._bid_views)
        return new

    def redeal(self, hands: list[list[int]], talon: list[int] | None = None, trump_card: int | None = None) -> None:
        """Put the cards in play in other places (a world a player cannot tell from this one,
        for sampling): ``hands`` the three hands (in hand order), ``talon`` the talon lying
        aside (None: unchanged; its discard in :attr:`history` then names the new cards),
        ``trump_card`` a new trump card while it is hidden (None: unchanged; a trump chosen
        by card then names it in :attr:`history`).  Every place keeps its size and the same
        cards stay in play; nothing else changes (the discards of an earlier talon, taken
        over, keep their record)."""
        talon = list(self.talon) if talon is None else list(talon)
        before = sorted([c for h in self.hands for c in h] + self.talon)
        if ([len(h) for h in hands] != [len(h) for h in self.hands] or len(talon) != len(self.talon)
                or sorted([c for h in hands for c in h] + talon) != before):
            raise ValueError("a redeal keeps every place's size and the cards in play")
        if trump_card is not None and trump_card != self.trump_card:
            if self.trump_card is None or self.trump_shown or trump_card not in hands[self.forhont]:
                raise ValueError("only a hidden trump card can change, to a card of the forhont's hand")
            self.trump_card = CARDS[trump_card]
            if self.trump is not None:
                self.trump = trump_card >> 3
            if not self.zlidu:  # the forhont's trump choice named the card: it names the new one
                i = next(k for k, (_seat, a) in enumerate(self.history) if a.kind == "trump")
                self.history[i] = (self.forhont, A.TRUMP[trump_card])
        self.hands = [[CARDS[c] for c in h] for h in hands]
        masks = [0, 0, 0]
        for seat, h in enumerate(hands):
            for c in h:
                masks[seat] |= _BIT[c]
        self.masks = masks
        if talon != self.talon:  # the talon's discard names the new cards, for the discarder who knows them
            i = max(k for k, (_seat, a) in enumerate(self.history) if a.kind in A.GAME_KINDS)
            seat, a = self.history[i]
            self.history[i] = (seat, A.game(a.kind, talon[0], talon[1]))
            discarder, _cards, knowers = self.talons[-1]
            self.talons[-1] = (discarder, (CARDS[talon[0]], CARDS[talon[1]]), knowers)
        self.talon = [CARDS[c] for c in talon]
        self._legal_cache = None
        self._bid_views = [None, None, None]

    # ------------------------------------------------------------ queries
    @property
    def done(self) -> bool:
        return self.phase == DONE

    @property
    def decision(self) -> str | None:
        """The decision asked of :attr:`to_move`: trump, talon, answer, contract, flek or play."""
        return None if self.phase == DONE else self.phase

    @property
    def cervene(self) -> bool:
        return self.trump == 0

    @property
    def components(self) -> tuple[str, ...]:
        return tuple(self.levels)

    def defenders(self) -> tuple[int, int]:
        a = self.actor if self.actor is not None else self.forhont
        return ((a + 1) % 3, (a + 2) % 3)

    def holds(self, seat: int, card: int) -> bool:
        return bool(self.masks[seat] >> card & 1)

    def legal_actions(self) -> list[Action]:
        """Every legal action for the player to move (empty once the deal is done)."""
        if self._legal_cache is None:
            self._legal_cache = self._legal()
        return self._legal_cache

    # ------------------------------------------------------------ legal actions
    def _legal(self) -> list[Action]:
        ph = self.phase
        if ph == PLAY:
            acts = [A.PLAY[c] for c in self._legal_cards_list(self.to_move)]
            if self.to_move == self.actor and self.lay_offered:
                acts.append(A.LAY)
            return acts
        if ph == FLEK:
            return self._legal_flek()
        if ph == TRUMP:
            return [A.TRUMP[c] for c in self.hands[self.forhont][:7]] + [A.ZLIDU]
        if ph == TALON:
            hand = self.hands[self.to_move]
            acts: list[Action] = []
            for kind in A.GAME_KINDS:
                m = self.discard_mask(kind)
                if m:
                    acts += _discards(kind, [c for c in hand if m >> c & 1])
            return acts
        if ph == ANSWER:
            return [A.DOBRA, A.SPATNA] if self._answer_kind == "barva" else [A.DOBRA, A.DURCH_ANSWER]
        if ph == CONTRACT:
            acts = [A.CONTRACT["hra"]]
            seven = self._has_trump_seven(self.forhont)
            hl = self._has_hlaska(self.forhont)
            if seven:
                acts.append(A.CONTRACT["sedma"])
            if hl:
                acts.append(A.CONTRACT["sto"])
            if seven and hl:
                acts.append(A.CONTRACT["sto-sedma"])
            return acts
        return []

    def discard_mask(self, kind: str) -> int:
        """In a talon decision, the cards :attr:`to_move` may discard announcing ``kind``
        (barva, betl or durch), as a bitmask: any two different ones of them are a legal
        pair, in either order (R3.2, R4.2, R4.3); 0 when ``kind`` is not open now."""
        if self.phase != TALON:
            return 0
        stage = self._talon_stage
        hand = self.masks[self.to_move]
        if stage == "forhont":
            free = hand & ~(1 << self.trump_card)
            if kind == "barva":
                small = free & NO_POINTS_MASK
                return small if small.bit_count() >= 2 else 0
            return free if kind in ("betl", "durch") else 0
        if kind == "durch" or (kind == "betl" and stage == "spatna"):
            return hand
        return 0

    def play_mask(self) -> int:
        """In the play, the cards :attr:`to_move` may play now, as a bitmask (R7.2-R7.4;
        laying the cards down, R8, is :attr:`lay_offered`); 0 outside the play."""
        if self.phase != PLAY:
            return 0
        return self._legal_cards_mask(self.to_move)

    def _has_trump_seven(self, seat: int) -> bool:
        return self.trump is not None and bool(self.masks[seat] >> (self.trump * 8 + SEVEN) & 1)

    def _has_hlaska(self, seat: int) -> bool:
        m = self.masks[seat]
        return any(m >> (s * 8 + KING) & 1 and m >> (s * 8 + OBER) & 1 for s in range(4))

    def _proti_options(self, seat: int) -> list[str]:
        if self.game != "barva" or self._round != 1:
            return []
        opts = []
        if "sedma" not in self.levels and "sedma" not in self.proti and self._has_trump_seven(seat):
            opts.append("sedma")
        if "sto" not in self.levels and "sto" not in self.proti and self._has_hlaska(seat):
            opts.append("sto")
        return opts

    def _legal_flek(self) -> list[Action]:
        raisable = [c for c in self._raisable if self.levels[c] < A.MAX_LEVEL]
        proti = self._proti_options(self.to_move)
        words_sets = _subsets(raisable)
        proti_sets = _subsets(proti)
        return [A.flek(w, p) for p in proti_sets for w in words_sets]

    def _legal_cards_mask(self, seat: int, seven_rule: bool = True) -> int:
        hand = self.masks[seat]
        trick = self.trick
        if trick:
            led = trick[0]
            ls = led >> 3
            win = self._winning_card()
            trump = self.trump if self.game == "barva" else None
            higher = HIGHER_TRUMP if trump is not None else HIGHER_BETL
            same = hand & SUIT_MASKS[ls]
            if same:
                if win >> 3 == ls:
                    beat = same & higher[win]
                    mask = beat or same
                else:
                    mask = same  # a trump is winning a non-trump lead
            elif trump is not None and hand & SUIT_MASKS[trump]:
                trumps = hand & SUIT_MASKS[trump]
                if win >> 3 == trump:
                    mask = (trumps & higher[win]) or trumps
                else:
                    mask = trumps
            else:
                mask = hand
        else:
            mask = hand
        # R7.4: an announced seven waits for the last trick unless it is forced.
        if seven_rule and self.trump is not None and len(self.tricks) < 9 and self.game == "barva":
            seven = 1 << (self.trump * 8 + SEVEN)
            if mask & seven and mask != seven and self._seven_bound(seat):
                mask &= ~seven
        return mask

    def _seven_bound(self, seat: int) -> bool:
        if seat == self.actor and "sedma" in self.levels:
            return True
        return self.proti.get("sedma") == seat

    def _legal_cards_list(self, seat: int) -> list[Card]:
        mask = self._legal_cards_mask(seat)
        return [c for c in self.hands[seat] if mask >> c & 1]

    def _winning_card(self) -> Card:
        trick = self.trick
        win = trick[0]
        if self.game == "barva":
            t = self.trump
            for c in trick[1:]:
                if (c >> 3) == (win >> 3):
                    if TRUMP_ORDER[c & 7] > TRUMP_ORDER[win & 7]:
                        win = c
                elif (c >> 3) == t:
                    win = c
        else:
            for c in trick[1:]:
                if (c >> 3) == (win >> 3) and c > win:
                    win = c
        return win

    # ------------------------------------------------------------ checking one action
    def is_legal(self, action: Action | str) -> bool:
        """Is ``action`` legal for :attr:`to_move` now?  The same answer as
        ``action in legal_actions()``, without listing the alternatives (:meth:`verify`
        says why not).  Malformed text raises :class:`~referee.rules.actions.ActionError`."""
        if action.__class__ is not Action:
            action = A.parse_action(action)
        if action.kind not in _DECISION_KINDS[self.phase]:  # the common case in a membership test
            return False
        try:
            self._verify(action)
        except IllegalAction:
            return False
        return True

    def verify(self, action: Action | str) -> Action:
        """Check one action for :attr:`to_move` against the rules directly; raise
        :class:`IllegalAction` (the rule and why) if it is not legal now.

        Returns the action (parsed, if given as text; malformed text raises
        :class:`~referee.rules.actions.ActionError`).  Changes nothing.
        """
        if action.__class__ is not Action:
            action = A.parse_action(action)
        self._verify(action)
        return action

    @classmethod
    def card_rule(cls, view: dict, code: str) -> str | None:
        """The rule (``"R7.2: must follow suit with a žaludy card"``) that forbids the seat whose
        protocol ``view`` (phase ``play``) this is to play ``code`` now, told by :meth:`verify`'s own
        check; None if it is allowed.  For a seat that sees only its view (a person's screen)."""
        from .cards import SUIT_CODES

        seat = view.get("seat", 0)
        d = cls.__new__(cls)  # only what the card check reads: the hand, the trick, the game, the seven
        masks = [0, 0, 0]
        for c in view.get("hand") or []:
            masks[seat] |= 1 << Card.parse(c)
        d.masks = masks
        d.trick = [Card.parse(t["card"]) for t in view.get("trick") or []]
        d.game = view.get("game")
        trump = view.get("trump") or (view.get("trump_card") or "")[-1:]
        d.trump = SUIT_CODES.index(trump) if trump and d.game == "barva" else None
        if d.game == "barva" and d.trump is None:
            return None  # a trump game whose trumps this view does not tell
        d.tricks = list(view.get("tricks") or [])
        d.actor = view.get("actor")
        d.levels = dict(view.get("levels") or {})
        d.proti = dict(view.get("proti") or {})
        try:
            d._verify_card(seat, Card.parse(code))
        except IllegalAction as e:
            return f"{e.rule}: {e.detail}"
        return None

    def _verify(self, action: Action) -> None:
        ph = self.phase
        seat = self.to_move
        kind = action.kind
        if kind not in _DECISION_KINDS[ph]:
            if ph == DONE:
                raise IllegalAction("R7.11", "the deal is over")
            raise _wrong_decision(_DECISION_RULE[ph], seat, ph, action)
        if ph == PLAY:
            if kind == "play":
                self._verify_card(seat, action.cards[0])
            elif seat != self.actor or not self.lay_offered:
                raise IllegalAction("R8.1", "laying the cards is not offered now")
        elif ph == FLEK:
            self._verify_flek(seat, action)
        elif ph == TALON:
            self._verify_talon(seat, action)
        elif ph == ANSWER:
            allowed = ("dobra", "spatna") if self._answer_kind == "barva" else ("dobra", "durch")
            if kind not in allowed or action.cards:
                raise _wrong_decision("R4.1", seat, ph, action)
        elif ph == TRUMP:
            if action.cards and action.cards[0] not in self.hands[self.forhont][:7]:
                raise IllegalAction("R3.1", "the trump card must be one of the forhont's first seven cards "
                                            f"or z lidu, not {action.cards[0]}")
        elif ph == CONTRACT:
            name = action.words[0]
            if "sedma" in name and not self._has_trump_seven(seat):
                raise IllegalAction("R5.1", "sedma needs the trump seven in hand")
            if "sto" in name and not self._has_hlaska(seat):
                raise IllegalAction("R5.1", "sto needs a hláška (K and O of one suit) in hand")

    def _verify_talon(self, seat: int, action: Action) -> None:
        """R3.2 (the forhont's discards), R4.2 (after špatná: betl or durch), R4.3 (after durch: durch)."""
        kind = action.kind
        stage = self._talon_stage
        kinds = A.GAME_KINDS if stage == "forhont" else ("betl", "durch") if stage == "spatna" else ("durch",)
        if kind not in kinds:
            raise _wrong_decision("R3.2", seat, TALON, action)
        cards = action.cards
        if len(cards) != 2 or cards[0] == cards[1]:
            raise IllegalAction("R4.3" if cards == () else "R3.2",
                                f"{action} is not open to seat {seat} now: discard two cards, e.g. {kind}:<card>,<card>")
        for c in cards:
            if not self.masks[seat] >> c & 1:
                raise IllegalAction("R3.2", f"seat {seat} does not hold {c}")
        if stage == "forhont" and self.trump_card in cards:
            raise IllegalAction("R3.2", f"the trump card {self.trump_card} can never go to the talon")
        if kind == "barva" and ((cards[0] & 7) in (TEN, ACE) or (cards[1] & 7) in (TEN, ACE)):
            raise IllegalAction("R3.2", "discards for Barva may not be an ace or a ten")

    def _verify_flek(self, seat: int, action: Action) -> None:
        """R5.2 (games against: round 1 of a trump game, with the cards for them), R5.3/R5.4 (raises)."""
        kind = action.kind
        if kind == "dobra":
            return
        if action.proti and not set(action.proti) <= set(self._proti_options(seat)):
            raise IllegalAction("R5.2", f"{action} announces a game against that is not open to seat {seat}")
        levels = self.levels
        for w in action.words:
            if w not in self._raisable or levels[w] >= A.MAX_LEVEL:
                raise IllegalAction("R5.3", f"{action}: only components the other side raised in the previous "
                                            f"round can be raised (now: {', '.join(self._raisable) or 'none'})")

    def _verify_card(self, seat: int, card: Card) -> None:
        """R7.2 (trump game) / R7.3 (betl, durch): follow suit, beat, trump; R7.4: the announced seven."""
        hand = self.masks[seat]
        if not hand >> card & 1:
            raise IllegalAction("R7.2", f"seat {seat} does not hold {card}")
        mask = self._legal_cards_mask(seat, seven_rule=False) if self.trick else hand
        if mask >> card & 1:
            if (self.game == "barva" and card == self.trump * 8 + SEVEN and len(self.tricks) < 9
                    and mask != 1 << card and self._seven_bound(seat)):
                raise IllegalAction("R7.4", "the announced trump seven may be played only in the last trick")
            return
        from .cards import SUIT_NAMES
        rule = "R7.2" if self.game == "barva" else "R7.3"
        ls = self.trick[0] >> 3  # a card outside the mask: there is a trick to follow
        if card >> 3 == ls:
            raise IllegalAction(rule, f"must beat {self._winning_card()} with a higher {SUIT_NAMES[ls]} card")
        if self.masks[seat] & SUIT_MASKS[ls]:
            raise IllegalAction(rule, f"must follow suit with a {SUIT_NAMES[ls]} card")
        if card >> 3 != self.trump:
            raise IllegalAction(rule, f"void in {SUIT_NAMES[ls]}: must play a trump ({SUIT_NAMES[self.trump]})")
        raise IllegalAction(rule, f"must beat the highest trump {self._winning_card()}")

    # ------------------------------------------------------------ apply
    def apply(self, action: Action | str) -> None:
        """Apply a legal action for :attr:`to_move`; anything else raises :class:`IllegalAction`
        (see :meth:`verify`) and changes nothing.  An action taken from a short
        :meth:`legal_actions` list already made is found there by identity; any other
        is verified directly."""
        if action.__class__ is not Action:
            action = A.parse_action(action)
        legal = self._legal_cache
        if legal is not None and len(legal) < 40:  # listed already: actions are interned, identity finds them fast
            for candidate in legal:
                if candidate is action:
                    break
            else:
                self._verify(action)
        else:
            self._verify(action)
        seat = self.to_move
        self.history.append((seat, action))
        self.decisions.append(self.phase)
        self._legal_cache = None
        ph = self.phase
        if ph == PLAY:
            if action.kind == "lay":
                self._n_bids += 1
                self._lay(seat)
            else:
                self._play(seat, action.cards[0])
            return
        self._n_bids += 1  # a bid: the redacted bids of every seat change
        if ph == FLEK:
            self._apply_flek(seat, action)
        elif ph == TRUMP:
            self._apply_trump(action)
        elif ph == TALON:
            self._apply_talon(seat, action)
        elif ph == ANSWER:
            self._apply_answer(seat, action)
        elif ph == CONTRACT:
            self._apply_contract(action)

    # -- trump, talon, answers, contract
    def _apply_trump(self, action: Action) -> None:
        if action.cards:
            self.trump_card = action.cards[0]
            self.zlidu = False
        else:
            self.trump_card = self.hands[self.forhont][7]
            self.zlidu = True
        self.phase = TALON
        self._talon_stage = "forhont"

    def _discard(self, seat: int, a: Card, b: Card) -> None:
        h = self.hands[seat]
        h.remove(a)
        h.remove(b)
        self.masks[seat] &= ~((1 << a) | (1 << b))
        self.talon = [a, b]
        self.talon_owner = seat
        self.talons.append((seat, (a, b), {seat}))

    def _take_talon(self, seat: int) -> None:
        cards = self.talon
        self.hands[seat].extend(cards)
        for c in cards:
            self.masks[seat] |= 1 << c
        self.talons[-1][2].add(seat)
        self.talon = []
        self.talon_owner = None

    def _apply_talon(self, seat: int, action: Action) -> None:
        a, b = action.cards
        self._discard(seat, a, b)
        kind = action.kind
        if kind == "barva":
            self.game = "barva"
            self.actor = seat
            self.phase = ANSWER
            self._answer_kind = "barva"
            self._answerers = [(seat + 1) % 3, (seat + 2) % 3]
            self.to_move = self._answerers.pop(0)
            return
        self.game = kind
        self.actor = seat
        self.trump = None
        if kind == "betl":
            self.phase = ANSWER
            self._answer_kind = "betl"
            self._answerers = [(seat + 1) % 3, (seat + 2) % 3]
            self.to_move = self._answerers.pop(0)
        else:
            self._start_flek()

    def _apply_answer(self, seat: int, action: Action) -> None:
        if action.kind == "dobra":
            if self._answerers:
                self.to_move = self._answerers.pop(0)
                return
            if self._answer_kind == "barva":
                self.phase = CONTRACT
                self.to_move = self.forhont
                self.trump = self.trump_card >> 3
            else:
                self._start_flek()
            return
        # spatna (R4.2) or durch on a betl (R4.3): take the talon and discard anew
        self._answerers = []
        self._take_talon(seat)
        self.phase = TALON
        self._talon_stage = "spatna" if action.kind == "spatna" else "durch"
        self.to_move = seat

    def _apply_contract(self, action: Action) -> None:
        self.contract = action.words[0]
        self.trump_shown = True
        self._start_flek()

    # -- raising (R5.3, R5.4)
    def _start_flek(self) -> None:
        self.phase = FLEK
        comps = A.CONTRACTS[self.contract] if self.game == "barva" else (self.game,)
        self.levels = {c: 0 for c in comps}
        self._round = 1
        self._begin_round("defence", tuple(comps))

    def _begin_round(self, side: str, raisable: tuple[str, ...]) -> None:
        self._round_side = side
        self._raisable = raisable
        self._round_raised = set()
        self._round_announced = set()
        if side == "defence":
            self._speakers = list(self.defenders())
        else:
            self._speakers = [self.actor]
        self.to_move = self._speakers.pop(0)

    def _apply_flek(self, seat: int, action: Action) -> None:
        self._round_raised.update(action.words)
        for p in action.proti:
            self.proti[p] = seat
            self._round_announced.add(p)
        if self._speakers:
            self.to_move = self._speakers.pop(0)
            return
        for c in self._round_raised:
            self.levels[c] += 1
        for p in sorted(self._round_announced, key=A.PROTI.index):
            self.levels[p + "-proti"] = 0
        if not self._round_raised and not self._round_announced:
            self._end_flek()
            return
        nxt = tuple(c for c in A.COMPONENTS if c in self._round_raised)
        nxt += tuple(p + "-proti" for p in A.PROTI if p in self._round_announced)
        self._round += 1
        self._begin_round("actor" if self._round_side == "defence" else "defence", nxt)

    def _end_flek(self) -> None:
        lv = self.levels
        if self.game == "barva" and not self.proti:
            if self.contract == "hra" and lv["hra"] == 0:
                # R6.1: conceded
                comp = settle.simple("hra", "actor", True, 0, self.cervene)
                self._finish(settle.Settlement("conceded", self.actor, (comp,),
                                               settle.payments(self.actor, (comp,)), ("R6.1: hra conceded",)))
                return
            if self.contract == "sedma" and lv["hra"] == 1 and lv["sedma"] == 0:
                comps = (settle.simple("hra", "actor", False, 1, self.cervene),
                         settle.simple("sedma", "actor", True, 0, self.cervene))
                self._finish(settle.Settlement("not-played", self.actor, comps,
                                               settle.payments(self.actor, comps), ("R6.2: fleked hra and sedma cancel",)))
                return
        self.phase = PLAY
        self.leader = self.forhont if self.game == "barva" else self.actor
        self.to_move = self.leader
        self._judge_lay()

    # -- play (R7)
    def _play(self, seat: int, card: Card) -> None:
        hand = self.hands[seat]
        # R7.5: hlášky are declared automatically
        if self.game == "barva" and (card & 7) in (KING, OBER):
            other = card ^ (KING ^ OBER)  # K <-> O in the same suit
            if self.masks[seat] >> other & 1:
                self.hlasky.append(Hlaska(seat, card >> 3, 40 if card >> 3 == self.trump else 20))
        hand.remove(card)
        self.masks[seat] &= ~(1 << card)
        self.played_mask |= 1 << card
        if self.game == "barva" and len(self.tricks) < 9 and card == self.trump * 8 + SEVEN:
            if seat == self.actor and "sedma" in self.levels:
                self.sedma_lost_early.add("sedma")
            if self.proti.get("sedma") == seat:
                self.sedma_lost_early.add("sedma-proti")
        self.trick.append(card)
        self.trick_seats.append(seat)
        if len(self.trick) < 3:
            self.to_move = nxt = (seat + 1) % 3
            if nxt == self.actor and not self.lay_offered:
                self._judge_lay()
            return
        win = self._winning_card()
        winner = self.trick_seats[self.trick.index(win)]
        cards = tuple(self.trick)
        self.tricks.append((self.trick_seats[0], cards, winner))
        self.taken[winner].append(cards)
        self.points[winner] += _POINTS[cards[0]] + _POINTS[cards[1]] + _POINTS[cards[2]]
        self.trick = []
        self.trick_seats = []
        last = len(self.tricks) == 10
        if last:
            self.points[winner] += 10
        if self.game == "betl":
            if winner == self.actor:
                return self._finish_betl_durch(False)
            if last:
                return self._finish_betl_durch(True)
        elif self.game == "durch":
            if winner != self.actor:
                return self._finish_betl_durch(False)
            if last:
                return self._finish_betl_durch(True)
        elif last:
            return self._finish_trump_game(winner, win)
        self.leader = winner
        self.to_move = winner
        if winner == self.actor and not self.lay_offered:
            self._judge_lay()

    def _finish_betl_durch(self, won: bool, notes: tuple[str, ...] = ()) -> None:
        comp = settle.simple(self.game, "actor", won, self.levels[self.game], False)
        self._finish(settle.Settlement("played", self.actor, (comp,), settle.payments(self.actor, (comp,)), notes))

    def _side_hlasky(self, actor_side: bool) -> list[Hlaska]:
        return [h for h in self.hlasky if (h.seat == self.actor) == actor_side]

    def _finish_trump_game(self, last_winner: int, last_card: Card, notes: tuple[str, ...] = (), seven_in_last: tuple[int, bool] | None | object = _FROM_LAST_TRICK) -> None:
        """Score a played trump game (R7.6–R7.10, R9).

        ``seven_in_last`` is (holder, won) for the trump seven in the last trick,
        or None if it did not fall there; computed from the last trick unless given.
        """
        actor = self.actor
        red = self.cervene
        lv = self.levels
        if seven_in_last is _FROM_LAST_TRICK:
            seven_in_last = None
            seven = self.trump * 8 + SEVEN
            last_leader, cards, winner = self.tricks[-1]
            if seven in cards:
                holder = (last_leader + cards.index(seven)) % 3
                seven_in_last = (holder, last_card == seven)
        a_hl = self._side_hlasky(True)
        d_hl = self._side_hlasky(False)
        a_cards = self.points[actor]
        d_cards = sum(self.points) - a_cards
        a_all = a_cards + sum(h.points for h in a_hl)
        d_all = d_cards + sum(h.points for h in d_hl)
        comps: list[settle.Component] = []
        if "hra" in lv:
            comps.append(settle.hra(a_all, d_all, lv["hra"], red, tiche_sto_allowed=(True, "sto-proti" not in lv)))
        if "sto" in lv:
            decisive = a_cards + (a_hl[0].points if a_hl else 0)
            comps.append(settle.sto("sto", "actor", decisive, a_all, d_all - d_cards, lv["sto"], red))
        if "sedma" in lv:
            won = "sedma" not in self.sedma_lost_early and seven_in_last is not None and seven_in_last == (actor, True)
            comps.append(settle.simple("sedma", "actor", won, lv["sedma"], red))
        if "sedma-proti" in lv:
            holder = self.proti["sedma"]
            won = "sedma-proti" not in self.sedma_lost_early and seven_in_last == (holder, True)
            comps.append(settle.simple("sedma-proti", "defence", won, lv["sedma-proti"], red))
        if "sto-proti" in lv:
            decisive = d_cards + (d_hl[0].points if d_hl else 0)
            comps.append(settle.sto("sto-proti", "defence", decisive, d_all, a_all - a_cards, lv["sto-proti"], red))
        if "sedma" not in lv and "sedma-proti" not in lv and seven_in_last is not None:
            holder, won = seven_in_last
            comps.append(settle.ticha_sedma("actor" if holder == actor else "defence", won, red))
        comps_t = tuple(comps)
        self._finish(settle.Settlement("played", actor, comps_t, settle.payments(actor, comps_t), notes))

    def _finish(self, result: settle.Settlement) -> None:
        self.result = result
        self.phase = DONE
        self.to_move = None
        self._legal_cache = []

    # -- laid cards (R8)
    def _unseen(self, seat: int) -> int:
        known = self.masks[seat] | self.played_mask
        if self.talon_owner == seat:
            for c in self.talon:
                known |= 1 << c
        return FULL_MASK & ~known

    def _judge_lay(self) -> None:
        """R8.1: judged when the turn passes to the actor in play; once offered it stays offered."""
        if not self.lay_offered and self.to_move == self.actor and self._lay_condition():
            self.lay_offered = True

    def _lay_condition(self) -> bool:
        seat = self.actor
        hand = self.masks[seat]
        unseen = self._unseen(seat)
        table = 0
        for c in self.trick:
            table |= 1 << c
        if self.game == "betl":
            above = unseen | table
            for c in self.hands[seat]:
                s = c >> 3
                lower_than_c = SUIT_MASKS[s] & ~HIGHER_BETL[c] & ~(1 << c)
                if above & lower_than_c:
                    return False
            if not self.trick:
                for s in range(4):
                    if hand & SUIT_MASKS[s] and not unseen & SUIT_MASKS[s]:
                        return False
            return True
        higher = HIGHER_TRUMP if self.game == "barva" else HIGHER_BETL
        for c in self.hands[seat]:
            if unseen & higher[c]:
                return False
        if self.game == "barva" and unseen & SUIT_MASKS[self.trump]:
            return False
        if self.trick:
            win = self._winning_card()
            trump = self.trump if self.game == "barva" else None
            from .cards import beats
            for c in self._legal_cards_list(seat):
                if not beats(c, win, trump):
                    return False
        if self.game == "barva" and not self._hlaska_order_irrelevant(unseen):
            return False
        return True

    def _hlaska_order_irrelevant(self, unseen: int) -> bool:
        """R8.3: with sto or sto proti at stake, may the order of hlášky still matter?"""
        lv = self.levels
        seat = self.actor
        # every card not yet taken in a trick goes to the actor: hands and table
        remaining = sum(_POINTS[c] for c in range(32) if not (self.played_mask >> c & 1)) - sum(_POINTS[c] for c in self.talon)
        remaining += sum(_POINTS[c] for c in self.trick)
        if "sto" in lv and not self._side_hlasky(True):
            hand = self.masks[seat]
            values = {40 if s == self.trump else 20 for s in range(4)
                      if hand >> (s * 8 + KING) & 1 and hand >> (s * 8 + OBER) & 1}
            if len(values) == 2:
                cards = self.points[seat] + remaining + 10
                if cards + 20 < 100:
                    return False
        if "sto-proti" in lv and not self._side_hlasky(False):
            values = {40 if s == self.trump else 20 for s in range(4)
                      if unseen >> (s * 8 + KING) & 1 and unseen >> (s * 8 + OBER) & 1}
            if len(values) == 2:
                cards = sum(self.points) - self.points[seat]
                if cards + 20 < 100:
                    return False
        return True

    def _lay(self, seat: int) -> None:
        """R8.4: the actor lays his cards; score at once."""
        shown = tuple(self.hands[seat])
        self.laid = (seat, shown)
        table = list(self.trick)
        table_seats = list(self.trick_seats)
        notes = ("R8.4: cards laid",)
        if self.game == "betl":
            # the cards stay in the hands; table cards go back to whoever played them
            for c, s in zip(table, table_seats):
                self.hands[s].append(c)
                self.masks[s] |= 1 << c
            self.trick, self.trick_seats = [], []
            self._finish_betl_durch(True, notes)
            return
        others = [(seat + 1) % 3, (seat + 2) % 3]
        pile = table + list(self.hands[seat]) + [c for o in others for c in self.hands[o]]
        self.laid_pile = tuple(pile)
        if self.game == "durch":
            self._clear_hands_after_lay(pile)
            self._finish_betl_durch(True, notes)
            return
        # trump game: hlášky of every K+O pair still held, actor first then clockwise
        for s in [seat] + others:
            hand = self.hands[s]
            declared = set()
            for c in hand:
                su = c >> 3
                if (c & 7) in (KING, OBER) and su not in declared and self.masks[s] >> (c ^ (KING ^ OBER)) & 1:
                    declared.add(su)
                    self.hlasky.append(Hlaska(s, su, 40 if su == self.trump else 20))
        seven = self.trump * 8 + SEVEN
        seven_in_last = None
        if len(self.tricks) == 9:
            if seven in table:
                seven_in_last = (table_seats[table.index(seven)], False)
        if self.masks[seat] >> seven & 1:
            seven_in_last = (seat, True)
        self.points[seat] += sum(_POINTS[c] for c in pile) + 10
        self._clear_hands_after_lay(pile)
        self._finish_trump_game(seat, seven if seven_in_last == (seat, True) else pile[0], notes, seven_in_last)

    def _clear_hands_after_lay(self, pile: list[Card]) -> None:
        for c in pile:
            self.played_mask |= 1 << c
        for s in range(3):
            self.hands[s] = []
            self.masks[s] = 0
        self.trick, self.trick_seats = [], []

    # ------------------------------------------------------------ faults (R12)
    def fault(self, seat: int, kind: str, message: str = "", evidence: str = "", elapsed: float | None = None) -> settle.Settlement:
        """End the deal at once because ``seat`` breached (R12.1) and settle it (R12.2)."""
        if self.phase == DONE:
            raise IllegalAction("R12.1", "the deal is already over")
        self.fault_info = Fault(seat, kind, message, evidence, elapsed)
        # cards on the table go back to whoever played them (R2.3)
        for c, s in zip(self.trick, self.trick_seats):
            self.hands[s].append(c)
            self.masks[s] |= 1 << c
        self.trick, self.trick_seats = [], []
        note = f"R12.2: seat {seat} faulted ({kind})"
        if self.phase in (FLEK, PLAY):
            actor = self.actor
            red = self.cervene
            faulting_actor = seat == actor
            comps = []
            levels = dict(self.levels)
            for p in A.PROTI:  # games against announced in a round still being spoken
                if p in self.proti:
                    levels.setdefault(p + "-proti", 0)
            for name, level in levels.items():
                owner = "defence" if name.endswith("-proti") else "actor"
                won = (owner == "actor") != faulting_actor
                comps.append(settle.fault_component(name, owner, won, level, red))
            comps_t = tuple(comps)
            pay = settle.payments(actor, comps_t, None if faulting_actor else seat)
            self._finish(settle.Settlement("fault", actor, comps_t, pay, (note,)))
        else:
            self._finish(settle.Settlement("fault", self.actor, (), settle.fault_before_contract(seat), (note + ", before a contract was set",)))
        return self.result

    # ------------------------------------------------------------ collecting (R2.3, R2.4)
    def piles(self) -> list[list[Card]]:
        """Each seat's face-down pile, bottom to top, once the deal is over."""
        if self.phase != DONE:
            raise ValueError("the deal is not over")
        piles: list[list[Card]] = [[], [], []]
        for s in range(3):
            p = piles[s]
            if self.talon_owner == s:
                p.extend(self.talon)
            for t in self.taken[s]:
                p.extend(t)
            if self.laid_pile and s == self.actor:
                p.extend(self.laid_pile)
            p.extend(self.hands[s])
        return piles

    def collected_deck(self) -> list[Card]:
        """The deck after collecting, top card first, before the cut (R2.3)."""
        piles = self.piles()
        stack = piles[self.forhont] + piles[self.middle] + piles[self.dealer]  # bottom to top
        stack.reverse()
        return stack

    # ------------------------------------------------------------ views
    def view(self, seat: int) -> dict:
        """What ``seat`` knows now: never another player's hidden card.

        Built from parts kept between calls (the finished tricks and hlášky, which
        only grow, and each seat's redacted bids, which change only with a bid), so a
        view in the play costs little more than its changing fields.  The dicts
        inside ``bids``, ``tricks`` and ``hlasky`` are shared between views: treat a
        view as read-only (its top-level lists and dicts are fresh).
        """
        tv = self._trick_views
        if len(tv) < len(self.tricks):
            tv.extend(_trick_view(t) for t in self.tricks[len(tv):])
        hv = self._hlaska_views
        if len(hv) < len(self.hlasky):
            hv.extend(h.to_dict() for h in self.hlasky[len(hv):])
        bids = self._bid_views[seat]
        if bids is None or bids[0] != self._n_bids:
            bids = self._bid_views[seat] = (self._n_bids, self._view_bids(seat))
        return self._view(seat, list(bids[1]), list(tv), list(hv))

    def view_from_scratch(self, seat: int) -> dict:
        """:meth:`view` built without the kept parts (what tests compare it with)."""
        return self._view(seat, self._view_bids(seat), [_trick_view(t) for t in self.tricks],
                          [h.to_dict() for h in self.hlasky])

    def _view(self, seat: int, bids: list, tricks: list, hlasky: list) -> dict:
        code = _CARD_CODE
        hand = self.hands[seat]
        if seat == self.forhont and self.zlidu is None:  # R3.1: no trump chosen, only 7 seen
            hand = hand[:7]
        knows_trump_card = self.trump_shown or (seat == self.forhont and self.trump_card is not None)
        talon = None
        if self.talon and seat in self.talons[-1][2]:
            talon = [code[c] for c in self.talon]
        laid = self.laid
        return {
            "seat": seat,
            "forhont": self.forhont,
            "dealer": self.dealer,
            "phase": self.phase,
            "to_move": self.to_move,
            "hand": [code[c] for c in hand],
            "zlidu": self.zlidu,
            "trump_card": code[self.trump_card] if knows_trump_card else None,
            "trump": SUIT_CODES[self.trump_card >> 3] if knows_trump_card and self.game in (None, "barva") else None,
            "talon": talon,
            "game": self.game,
            "actor": self.actor,
            "contract": self.contract,
            "levels": dict(self.levels),
            "proti": dict(self.proti),
            "bids": bids,
            "tricks": tricks,
            "trick": [{"seat": s, "card": code[c]} for s, c in zip(self.trick_seats, self.trick)],
            "hlasky": hlasky,
            "points": list(self.points),
            "laid": {"seat": laid[0], "cards": [code[c] for c in laid[1]]} if laid else None,
            "lay_offered": self.lay_offered if seat == self.actor else False,
            "result": self.result.to_dict() if self.result else None,
        }

    def _view_bids(self, seat: int) -> list[dict]:
        """Every action but the card plays, as ``seat`` may see it: the discards
        only to those who know that talon, a trump card only once shown (or to
        its chooser)."""
        bids = []
        talon_i = 0
        for (s, a), decision in zip(self.history, self.decisions):
            kind = a.kind
            if kind == "play":
                continue
            if kind in A.GAME_KINDS and a.cards:
                knowers = self.talons[talon_i][2]
                talon_i += 1
                text = a.code if seat in knowers else kind
            elif kind == "trump":
                text = a.code if seat == s or a is A.ZLIDU or self.trump_shown else "trump"
            else:
                text = a.code
            bids.append({"seat": s, "decision": decision, "action": text})
        return bids

    def known_cards(self, seat: int) -> set[Card]:
        """Every card ``seat`` may know the place of now (for information-hiding checks)."""
        v = self.view(seat)
        return _cards_in_view(v)

    def __repr__(self) -> str:
        hands = " | ".join(format_cards(h) for h in self.hands)
        return f"<Deal forhont={self.forhont} phase={self.phase} to_move={self.to_move} hands=[{hands}]>"


def _trick_view(trick: tuple[int, tuple[Card, ...], int]) -> dict:
    leader, cards, winner = trick
    return {"leader": leader, "cards": [_CARD_CODE[c] for c in cards], "winner": winner}


def _cards_in_view(v: dict) -> set[Card]:
    out: set[Card] = set()
    out.update(Card.parse(c) for c in v["hand"])
    if v["trump_card"]:
        out.add(Card.parse(v["trump_card"]))
    if v["talon"]:
        out.update(Card.parse(c) for c in v["talon"])
    return out


def _subsets(items: list[str]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [()]
    for it in items:
        out += [s + (it,) for s in out]
    return out


def _wrong_decision(rule: str, seat: int | None, phase: str, action: Action) -> IllegalAction:
    article = "an" if phase == ANSWER else "a"
    return IllegalAction(rule, f"seat {seat} must make {article} {phase} decision, not {action}")
