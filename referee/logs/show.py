"""``marias show``: a deal sheet for people, read from a game log.

Each selected deal is replayed with the engine and printed: the hands as
dealt (grouped by suit, Czech suit names), the trump choice (a card of the
first seven or *z lidu*), the bidding in the game's own words (*Barva?*,
*dobrá*, *špatná*, *betl*, *durch*, *flek na hru*, *re*, *tutti*, *boty*,
*sedma proti* …), the talon, the tricks with hlášky and running card points,
laid cards, and the settlement per component and per seat.

With ``seat`` only what that player saw is shown: his own hand, the trump card
and talons only if he knew them, other players' discards and trump choice
redacted (the replay's :meth:`Deal.view` for that seat).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..rules.actions import LEVEL_NAMES, parse_action
from ..rules.cards import BETL_ORDER, SUIT_NAMES, TRUMP_ORDER, Card
from ..rules.deal import Deal
from .log import dealt_hands, read_lines
from .validate import parse_deck, replay_record

SUIT_COLOURS = ("31", "32", "33", "36")  # červené red, zelené green, kule yellow, žaludy cyan
ACCUSATIVE = {"hra": "hru", "sedma": "sedmu", "sto": "sto", "betl": "betla", "durch": "durch",
              "sedma-proti": "sedmu proti", "sto-proti": "sto proti"}
CONTRACT_WORDS = {"hra": "hra", "sedma": "sedma", "sto": "sto", "sto-sedma": "sto a sedma"}
ROLE = ("forhont", "middle", "dealer")


class ShowError(ValueError):
    """The log cannot be shown (unreadable, not a log, no such deal)."""


@dataclass
class Paint:
    color: bool

    def card(self, c: Card) -> str:
        text = str(c)
        return f"\x1b[{SUIT_COLOURS[c >> 3]}m{text}\x1b[0m" if self.color else text

    def cards(self, cs) -> str:
        return " ".join(self.card(c) for c in cs) if cs else "—"

    def suit(self, s: int) -> str:
        return f"\x1b[{SUIT_COLOURS[s]}m{SUIT_NAMES[s]}\x1b[0m" if self.color else SUIT_NAMES[s]

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.color else text


def _hand_text(p: Paint, cards, betl: bool) -> str:
    order = BETL_ORDER if betl else TRUMP_ORDER
    parts = []
    for s in range(4):
        mine = sorted((c for c in cards if c >> 3 == s), key=lambda c: -order[c & 7])
        if mine:
            ranks = " ".join(p.card(c) for c in mine)
            parts.append(f"{p.suit(s)} {ranks}")
    return "   ".join(parts) + f"   ({len(cards)})"


def flek_words(words, proti, levels: dict) -> str:
    """A raise in the game's words: 'flek na hru', 're na obojí', 'sedma proti' (R5.2–R5.4)."""
    by_level: dict[str, list[str]] = {}
    for w in words:
        by_level.setdefault(LEVEL_NAMES[min(levels.get(w, 0) + 1, 4)], []).append(w)
    phrases = []
    for name, ws in by_level.items():
        if len(ws) == 2 and set(ws) in ({"hra", "sedma"}, {"sto", "sedma"}):
            phrases.append(f"{name} na obojí")
        else:
            phrases.append(f"{name} na " + " a ".join(ACCUSATIVE[w] for w in ws))
    phrases += [f"{p} proti" for p in proti]
    return ", ".join(phrases) if phrases else "dobrá"


@dataclass
class _Step:
    seat: int
    decision: str
    text: str
    levels: dict
    tricks: int
    hlasky: int
    contract: str | None
    talon_before: list = field(default_factory=list)


def _bid_line(p: Paint, st: _Step, deal: Deal, seat_view: int | None, knowers_of, i: int) -> str | None:
    """One bidding decision in words (None for a card played)."""
    a = parse_action(st.text)
    k = a.kind
    who = f"seat {st.seat}"
    sees = seat_view is None or seat_view == st.seat
    if k == "trump":
        if not a.cards:
            card = deal.trump_card
            shown = sees or deal.trump_shown
            return f"{who}  trump card z lidu" + (f": {p.card(card)} ({card.czech})" if shown and card is not None else " (taken blind)")
        if sees or deal.trump_shown:
            return f"{who}  trump card {p.card(a.cards[0])} ({a.cards[0].czech}) from his first seven"
        return f"{who}  chooses a trump card from his first seven"
    if k in ("barva", "betl", "durch") and a.cards:
        said = {"barva": "„Barva?“", "betl": "„betl“", "durch": "„durch“"}[k]
        if seat_view is None or seat_view in knowers_of(i):
            return f"{who}  discards {p.cards(a.cards)} — {said}"
        return f"{who}  discards two cards — {said}"
    if k == "spatna":
        return f"{who}  „špatná“ — takes the talon"
    if k == "durch":
        return f"{who}  „durch“ — takes the talon"
    if k == "contract":
        name = a.words[0]
        tc = deal.trump_card
        return f"{who}  „{CONTRACT_WORDS[name]}“ — shows the trump card {p.card(tc)}: trumps are {p.suit(tc >> 3)}"
    if k == "dobra":
        return f"{who}  „dobrá“"
    if k == "flek":
        return f"{who}  „{flek_words(a.words, a.proti, st.levels)}“"
    if k == "lay":
        return None
    return None


def _game_line(p: Paint, d: Deal) -> str:
    if d.game is None:
        return "no game was set"
    lv = ", ".join(f"{c}{' ' + LEVEL_NAMES[v] if v else ''}" for c, v in d.levels.items())
    if d.game == "barva":
        contract = CONTRACT_WORDS.get(d.contract or "", "barva")
        proti = "".join(f", {g} proti by seat {s}" for g, s in d.proti.items())
        suit = p.suit(d.trump) if d.trump is not None else "?"
        return f"{contract} in {suit}, actor seat {d.actor}{proti}" + (f" · {lv}" if lv else "")
    return f"{d.game}, actor seat {d.actor}" + (f" · {lv}" if lv else "")


def deal_sheet(rec: dict, p: Paint, seat: int | None = None, running: list[int] | None = None) -> list[str]:
    """The sheet of one deal record, replayed."""
    out: list[str] = []
    i = rec.get("deal")
    f = rec.get("forhont")
    cut = rec.get("cut")
    title = f"partie {rec.get('partie')} · deal {i}"
    seats = ""
    if f in (0, 1, 2):
        seats = " · ".join(f"{ROLE[r]} seat {(f + r) % 3}" for r in range(3))
    out.append(p.bold(f"━━ {title} ━━") + f"  {seats} · cut {cut if cut is not None else '— (deal 1)'}")
    deck, why = parse_deck(rec.get("deck"))
    if why:
        out.append(f"  cannot replay: {why}")
        return out
    steps: list[_Step] = []
    views: dict[int, dict] = {}
    on_table: list[tuple[int, Card]] = []  # the trick in progress when the actor lays his cards (R8)

    def on_step(d: Deal, n: int) -> None:
        if seat is not None and (n <= 1 or n == len(rec.get("decisions") or [])):
            views[n] = d.view(seat)
        if n < len(rec.get("decisions") or []) and d.to_move is not None:
            dec = rec["decisions"][n]
            if dec.get("action") == "lay":
                on_table[:] = list(zip(d.trick_seats, d.trick))
            steps.append(_Step(d.to_move, d.phase, str(dec.get("action")), dict(d.levels), len(d.tricks),
                               len(d.hlasky), d.contract))

    rp = replay_record(rec, deck, on_step=on_step)
    d = rp.deal
    if d is None:
        out.append("  cannot replay: " + "; ".join(m for _r, m in rp.problems))
        return out
    betl = d.game in ("betl", "durch")
    # hands
    dealt = dealt_hands(deck, d.forhont)
    if seat is None:
        out.append("hands as dealt")
        for r in range(3):
            s = (d.forhont + r) % 3
            out.append(f"  seat {s} {ROLE[r]:<8} {_hand_text(p, dealt[s], betl)}")
    else:
        first = views.get(0) or {}
        role = ROLE[(seat - d.forhont) % 3]
        out.append(f"seen by seat {seat} ({role})")
        if seat == d.forhont:
            seven = [Card.parse(c) for c in first.get("hand", [])]
            out.append(f"  first seven      {_hand_text(p, seven, betl)}")
            if 1 in views:
                out.append(f"  after the choice {_hand_text(p, [Card.parse(c) for c in views[1]['hand']], betl)}")
        else:
            out.append(f"  hand as dealt    {_hand_text(p, [Card.parse(c) for c in first.get('hand', [])], betl)}")
    # bidding
    talon_index: list[int] = []
    n_talon = 0
    for st in steps:
        a_kind = parse_action(st.text).kind
        if a_kind in ("barva", "betl", "durch") and st.decision == "talon":
            talon_index.append(n_talon)
            n_talon += 1
        else:
            talon_index.append(-1)

    def knowers_of(j: int) -> set:
        ti = talon_index[j]
        return d.talons[ti][2] if 0 <= ti < len(d.talons) else set()

    bids, stakes = [], []
    for j, st in enumerate(steps):
        if st.decision == "play":
            continue
        line = _bid_line(p, st, d, seat, knowers_of, j)
        if line:
            (stakes if st.decision in ("contract", "flek") else bids).append("  " + line)
    out.append("bidding (the game)")
    out.extend(bids or ["  —"])
    if stakes:
        out.append("stakes (contract, flek, games against)")
        out.extend(stakes)
    out.append(f"game: {_game_line(p, d)}")
    # talon: every discard, who took it, the final talon (cards only where this seat knew them)
    if d.talons:
        parts = []
        for i, (s, cards, knowers) in enumerate(d.talons):
            seen = seat is None or seat in knowers
            text = f"seat {s} discarded {p.cards(cards) if seen else 'two cards'}"
            takers = sorted(knowers - {s})
            if takers:
                text += f", taken by seat {takers[0]}"
            elif i == len(d.talons) - 1:
                text += " (the talon)"
            parts.append(text)
        out.append("talon: " + "; ".join(parts))
    # play
    if d.tricks or d.laid:
        out.append("play")
        pts = [0, 0, 0]
        hl_by_trick: dict[int, list] = {}
        # which trick each hláška was declared in: from the step snapshots
        declared = 0
        for j, st in enumerate(steps):
            after = steps[j + 1].hlasky if j + 1 < len(steps) else len(d.hlasky)
            if after > st.hlasky and parse_action(st.text).kind == "play":
                hl_by_trick.setdefault(st.tricks, []).extend(d.hlasky[st.hlasky:after])
                declared = after
        for t, (leader, cards, winner) in enumerate(d.tricks):
            gained = sum(c.points for c in cards) + (10 if t == 9 else 0)
            pts[winner] += gained
            order = " · ".join(p.card(c) for c in cards)
            out.append(f"  {t + 1:>2}  seat {leader} leads  {order}  → seat {winner}"
                       f"{'  +10 last trick' if t == 9 else ''}    points {pts[0]} / {pts[1]} / {pts[2]}")
            for h in hl_by_trick.get(t, []):
                out.append(f"      hláška: seat {h.seat} {h.points} ({p.suit(h.suit)})")
        if d.laid:
            ls, lcards = d.laid
            if on_table:
                order = " · ".join(p.card(c) for _s, c in on_table)
                out.append(f"  {len(d.tricks) + 1:>2}  seat {on_table[0][0]} leads  {order}  (on the table when "
                           f"seat {ls} lays his cards; the trick is not finished)")
            out.append(f"  seat {ls} lays his cards: {p.cards(lcards)} (R8)")
            for h in d.hlasky[declared:]:
                out.append(f"      hláška: seat {h.seat} {h.points} ({p.suit(h.suit)})")
        if d.game == "barva" and d.actor is not None:
            a = d.actor
            a_hl = sum(h.points for h in d.hlasky if h.seat == a)
            d_hl = sum(h.points for h in d.hlasky if h.seat != a)
            a_c = d.points[a]
            d_c = sum(d.points) - a_c
            out.append(f"  points: actor (seat {a}) {a_c} + hlášky {a_hl} = {a_c + a_hl} · "
                       f"defence {d_c} + hlášky {d_hl} = {d_c + d_hl}")
    elif d.fault_info is None and d.result is not None and d.result.kind in ("conceded", "not-played"):
        out.append("play: not played")
    if seat is not None and views:
        last = views.get(max(views))
        if last and last.get("hand"):
            out.append(f"your cards left: {p.cards([Card.parse(c) for c in last['hand']])}")
    # fault
    if d.fault_info is not None:
        fi = d.fault_info
        out.append(f"fault: seat {fi.seat} {fi.kind}: {fi.message}")
    for rule, msg in rp.problems:
        out.append(f"replay stopped: {rule}: {msg}")
    # settlement
    r = d.result
    if r is not None:
        out.append(f"settlement ({r.kind})")
        for c in r.components:
            level = f" {LEVEL_NAMES[c.level]}" if c.level else ""
            owner = "actor" if c.owner == "actor" else "defence"
            outcome = "won" if c.won else "lost"
            pays = "defenders pay" if c.value > 0 else "actor pays"
            out.append(f"  {c.name + level:<17} {owner:<7} {outcome:<4} {c.amount:>4}  ({c.detail}) — {pays} {c.amount} each")
        for note in r.notes:
            out.append(f"  {note}")
        pay = r.payments
        line = "  " + " · ".join(f"seat {s} {pay[s]:+d}" for s in range(3))
        if running is not None:
            for s in range(3):
                running[s] += pay[s]
            line += "      running " + " ".join(f"{x:+d}" for x in running)
        out.append(line)
        logged = rec.get("result")
        if isinstance(logged, dict) and logged.get("payments") != list(pay):
            out.append(f"  (the log records payments {logged.get('payments')}: run marias validate)")
    return out


def show(path, *, partie: int | None = None, deal: int | None = None, seat: int | None = None,
         color: bool = False) -> str:
    """The sheets of the selected deals of a log, as text."""
    path = Path(path)
    try:
        records, bad = read_lines(path)
    except OSError as e:
        raise ShowError(f"{path}: cannot read: {e.strerror or e}") from None
    if not records or records[0][1].get("type") != "header":
        why = bad[0][1] if bad else "the first record is not a header"
        raise ShowError(f"{path}: not a marias log ({why})")
    if seat is not None and seat not in (0, 1, 2):
        raise ShowError(f"--seat must be 0, 1 or 2, not {seat}")
    p = Paint(color)
    header = records[0][1]
    footer = records[-1][1] if records[-1][1].get("type") == "footer" else {}
    seed = footer.get("seed", header.get("seed", "not revealed (no footer)"))  # the footer reveals the seed
    out = [p.bold(f"log {path}"),
           f"seed {seed} · referee {header.get('referee_version')} · rules {header.get('rules_version')} · created {header.get('created')}"]
    for b in header.get("bots") or []:
        if isinstance(b, dict):
            cmd = b.get("command")
            cmd = " ".join(cmd) if isinstance(cmd, list) else cmd
            label, name, version = b.get("label"), b.get("name"), b.get("version")
            said = f"{name} {version}".strip() if version else str(name)  # what the bot announced in hello
            who = f"{label} (says {said})" if label and label != name else said
            out.append(f"  seat {b.get('seat')}: {who}, {cmd}")
    shown = 0
    running: dict[int, list[int]] = {}
    for _n, rec in records[1:]:
        t = rec.get("type")
        if t == "deal":
            rp = rec.get("partie")
            run = running.setdefault(rp, [0, 0, 0])
            want = (partie is None or rp == partie) and (deal is None or rec.get("deal") == deal)
            if want:
                out.append("")
                out.extend(deal_sheet(rec, p, seat, run))
                shown += 1
            else:
                res = rec.get("result")
                pay = res.get("payments") if isinstance(res, dict) else None
                if isinstance(pay, list) and len(pay) == 3:
                    for s in range(3):
                        run[s] += pay[s] if isinstance(pay[s], int) else 0
        elif t == "partie_end" and (partie is None or rec.get("partie") == partie) and deal is None:
            out.append("")
            out.append(p.bold(f"partie {rec.get('partie')} totals: " + " · ".join(
                f"seat {s} {rec['totals'][s]:+d} (place {_place(rec['places'][s])})" for s in range(3))))
        elif t == "footer" and partie is None and deal is None:
            out.append(p.bold("match totals: " + " · ".join(f"seat {s} {v:+d}" for s, v in enumerate(rec.get("totals") or []))))
    if not shown:
        what = " ".join(x for x in (f"partie {partie}" if partie is not None else "", f"deal {deal}" if deal is not None else "") if x)
        raise ShowError(f"{path}: no deal {what or ''} in the log".replace("  ", " "))
    if not any(r.get("type") == "footer" for _n, r in records):
        out.append("")
        out.append("(the log has no footer: the match did not finish)")
    return "\n".join(out)


def _place(x) -> str:
    return str(int(x)) if isinstance(x, (int, float)) and x == int(x) else str(x)
