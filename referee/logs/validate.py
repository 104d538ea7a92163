"""``marias validate``: check a game log against the rules by replaying it.

Every deal is replayed from its recorded deck with the engine, independently
of the recorder: each recorded action must be legal at its moment, a recorded
fault is re-applied at its moment, the deck of each deal must be exactly what
R2.2–R2.6 derive from the previous deal and the recorded cut (the engine's
collection of the replayed deal, cut as recorded), and every recorded outcome
(tricks, hlášky, laid cards, components, payments, totals, places) must equal
the replay's.  Each problem names the rule it breaks: ``file:line: R7.2: …``.
Problems that are not about the game (a line that is not JSON, a missing
field) are named ``format``; a log without its footer is ``incomplete``.

This module holds the file checks (records in order, partie and deal numbering,
the deck chain, totals, the parallel runner); replaying one deal record and
comparing it with the replay is :mod:`referee.logs.replay`.  Optionally
(``transcripts``), the per-seat protocol transcripts written by the referee are
checked for information leaks (:mod:`referee.logs.leaks`).
"""

from __future__ import annotations

import gc
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..rules.cards import CARD_BY_CODE, CARDS, Card
from .evidence import DecisionTimes, Forfeits, SeedEvidence, signature_problems
from .log import FORMAT, FORMAT_VERSION, dealt_hands, parse_line, parse_lines, split_lines, stream_lines
from ..rules.partie import CUT_RANGE, forhont_of, places
from .replay import short_json, compare, replay_record
from .seal import ChainCheck, chain_problems, load_public_key
from .problem import Problem

@dataclass
class Report:
    """The outcome of validating one log file."""

    path: str
    problems: list[Problem] = field(default_factory=list)
    complete: bool = False
    parties: int = 0  # partie that ended (partie_end records)
    deals: int = 0  # deal records read
    deals_replayed: int = 0  # deal records replayed to their end without a problem
    transcripts: int = 0  # transcript files checked
    messages_checked: int = 0
    signer: str | None = None  # the key whose valid signature the footer carries (ed25519:HEX)
    verified: bool = False  # signed by the key asked for (validate --verify)
    verify: str | None = None  # the key asked for
    notes: list[Problem] = field(default_factory=list)  # tolerated, not problems (an older referee's slips)
    signed: bool = False  # the footer carries a signature (valid or not)

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        return [p.text(self.path) for p in self.problems]

    def lines_and_notes(self) -> list[str]:
        """The problems and the notes (tolerated, not problems), in line order: what ``validate`` prints."""
        return [p.text(self.path) for p in sorted(self.problems + self.notes, key=lambda q: q.line)]

    @property
    def authorship(self) -> str:
        """What the seal proved of who wrote the log (LOGS.md, "What validate proves"): one of
        ``signed, verified`` (a valid signature by the key given to --verify), ``signed, not
        verified (pass --verify KEY.pub)`` (a signature, checked only against the key the log
        names itself, or by another key than the one given, or broken: the problems say which),
        ``unsigned: rules checked, authorship not proven`` (a hash chain anyone can recompute)."""
        if self.verified:
            return "signed, verified"
        if self.signed:
            return "signed, not verified" + (" (pass --verify KEY.pub)" if self.verify is None else "")
        return "unsigned: rules checked, authorship not proven"

    def summary(self) -> str:
        state = "complete" if self.complete else "INCOMPLETE"
        verdict = "ok" if self.ok else f"{len(self.problems)} problem(s)"
        extra = f", {self.transcripts} transcript(s), {self.messages_checked} messages" if self.transcripts else ""
        if self.signer:
            extra += f"; key {self.signer}"
        return (f"{self.path}: {verdict} — {state}, {self.parties} partie, {self.deals} deals, "
                f"{self.deals_replayed} replayed{extra}; {self.authorship}")

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "ok": self.ok,
            "complete": self.complete,
            "parties": self.parties,
            "deals": self.deals,
            "deals_replayed": self.deals_replayed,
            "transcripts": self.transcripts,
            "messages_checked": self.messages_checked,
            "signer": self.signer,
            "signed": self.signed,
            "verified": self.verified,
            "authorship": self.authorship,
            "problems": [p.to_dict() for p in self.problems],
            "notes": [p.to_dict() for p in self.notes],
        }


# ------------------------------------------------------------------ the deck of a record

def parse_deck(value) -> tuple[list[Card] | None, str | None]:
    """A recorded deck: 32 distinct card codes.  (cards, None) or (None, why not)."""
    if not isinstance(value, list):
        return None, "R1.1: the deck is not a list of 32 card codes"
    try:
        cards = [CARD_BY_CODE[code] for code in value]
    except (KeyError, TypeError):
        bad = next(code for code in value if not isinstance(code, str) or code not in CARD_BY_CODE)
        return None, f"R1.2: malformed card code {bad!r} in the deck"
    if len(cards) != 32 or len(set(cards)) != 32:
        missing = sorted(set(CARDS) - set(cards))
        return None, (f"R1.1: the deck needs the 32 cards exactly once; it has {len(cards)} codes"
                      + (f", missing {' '.join(str(c) for c in missing)}" if missing else ""))
    return cards, None


# ------------------------------------------------------------------ a whole file

class _FileCheck:
    def __init__(self, path: Path, keep_deals: bool, verify: str | None = None):
        self.path = path
        self.verify = verify  # the public key (ed25519:HEX) the footer must be signed with
        self.report = Report(str(path), verify=verify)
        self.problems = self.report.problems
        self.keep_deals = keep_deals
        self.deals: dict[tuple[int, int], tuple[int, dict, list[Card]]] = {}
        self.header: dict | None = None
        self.deals_per_partie = 12
        self.n_bots = 3
        self.partie: int | None = None  # the open partie
        self.last_partie = 0
        self.declared_parties: int | None = None  # the header's partie count
        # what the log states about itself (referee/logs/evidence.py); replaced by check_header, which always comes first
        self.seed = SeedEvidence({"seed_sha256": "0" * 64}, self.add)
        self.times = DecisionTimes({}, 3, self.add)
        self.forfeits = Forfeits({}, 12, self.add)
        self.last_type: str | None = None
        self.seating = [0, 1, 2]
        self.indexes: list[int] = []
        self.partie_pay = [0, 0, 0]
        self.prev: tuple[int, list[Card] | None] | None = None  # (index, collected deck) of the previous deal
        self.match_totals: list[int] = [0, 0, 0]
        self.footer = False
        self.defer_footer = False  # a worker of a parallel run leaves the footer to the main process
        self.pending_footer: tuple[int, dict] | None = None

    def add(self, line: int, rule: str, message: str) -> None:
        self.problems.append(Problem(line, rule, message))

    def run(self) -> Report:
        header_seen = False
        last_line = 0
        early: list[tuple[int, str]] = []  # unreadable lines before the first record
        chain = ChainCheck()
        lines = stream_lines(self.path)
        try:
            first = next(lines, None)  # opens the file
        except OSError as e:
            self.add(0, "format", f"cannot read the file: {e.strerror or e}")
            return self.report
        parsed = self._parsed(chain, itertools.chain([first], lines)) if first is not None else \
            [(1, None, "empty file: no header, not a marias log")]
        for n, rec, problem in parsed:  # the file is streamed: memory stays flat whatever its size
            last_line = n
            if rec is None:
                if header_seen:
                    self.add(n, "format", problem)
                else:
                    early.append((n, problem))
                continue
            if not header_seen:
                if rec.get("type") != "header":
                    for m, msg in early:
                        self.add(m, "format", msg)
                    self.add(n, "format", f"not a marias log: the first record is {rec.get('type')!r}, not the header")
                    return self.report
                for m, msg in early:
                    self.add(m, "format", msg)
                header_seen = True
                self.check_header(n, rec)
                continue
            try:
                self.record(n, rec)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
                self.add(n, "format", f"malformed {rec.get('type', 'record')} record ({e.__class__.__name__}: {e})")
        if not header_seen:
            if not early or "empty file" in early[0][1]:
                self.add(1, "format", "empty file: no header, not a marias log")
            else:
                self.add(early[0][0], "format", f"not a marias log: no line is a JSON object (line {early[0][0]}: {early[0][1]})")
            return self.report
        if not self.footer:
            self.report.complete = False
            where = f"stopped in partie {self.partie}" if self.partie is not None else f"stopped after partie {self.last_partie}"
            self.add(last_line, "incomplete",
                     f"{self.report.deals} complete deals, {where} (no footer: the match did not finish; not a result)")
        self.add_seal(chain.problems)
        self.problems.sort(key=lambda q: q.line)
        return self.report

    @staticmethod
    def _parsed(chain: ChainCheck, lines):
        """Parse streamed lines, checking the chain on the way."""
        for n, raw, is_last, ends in lines:
            chain.line(n, raw, is_last, ends)
            yield parse_line(n, raw, is_last, ends)

    def add_seal(self, seal: list[tuple[int, str]]) -> None:
        """The hash chain's problems (after the line's own, at the same line)."""
        if self.header is not None and self.header.get("format_version") != FORMAT_VERSION:
            return  # an unsupported version is reported once, as such
        for line, msg in seal:
            self.add(line, "seal", msg)

    def check_header(self, n: int, h: dict) -> None:
        self.header = h
        if h.get("format") != FORMAT:
            got = "missing" if h.get("format") is None else f"{short_json(h.get('format'))}"
            self.add(n, "format", f"the header's format is {got}, expected {FORMAT!r} (not a marias log, or written by another program)")
        if h.get("format_version") != FORMAT_VERSION:
            self.add(n, "format", f"format_version {h.get('format_version')!r} is not supported (this validator reads {FORMAT_VERSION})")
        if "decks" in h and h["decks"] not in ("public seed", "secret seed"):  # absent in older logs: accepted
            self.add(n, "format", f"decks {short_json(h['decks'])} is neither \"public seed\" nor \"secret seed\"")
        dpp = h.get("deals_per_partie", 12)
        if type(dpp) is int and dpp >= 1:
            self.deals_per_partie = dpp
        else:
            self.add(n, "format", f"deals_per_partie {dpp!r} is not a positive integer")
        bots = h.get("bots")
        if not isinstance(bots, list) or len(bots) < 3:
            self.add(n, "format", "the header lists fewer than three bots")
            bots = []
        else:
            self.n_bots = len(bots)
        self.match_totals = [0] * self.n_bots
        count = h.get("partie")
        if count is not None:
            if type(count) is int and count >= 1:
                self.declared_parties = count
            else:
                self.add(n, "format", f"the header's partie count {count!r} is not a positive integer")
        self.seed = SeedEvidence(h, self.add, n)
        self.times = DecisionTimes(h, self.n_bots, self.add, n)
        self.forfeits = Forfeits(h, self.deals_per_partie, self.add, n)

    def record(self, n: int, rec: dict) -> None:
        t = rec.get("type")
        if self.footer:
            self.add(n, "format", f"a {t!r} record after the footer")
        if t == "deal":
            self.deal(n, rec)
        elif t == "forfeit":
            self.forfeit(n, rec)
        elif t == "partie_start":
            self.partie_start(n, rec)
        elif t == "partie_end":
            self.partie_end(n, rec)
        elif t == "footer":
            if self.defer_footer:
                self.footer = True
                self.pending_footer = (n, rec)
            else:
                self.check_footer(n, rec)
        elif t == "header":
            self.add(n, "format", "a second header")
        else:
            self.add(n, "format", f"unknown record type {t!r}")
        self.last_type = t

    def partie_start(self, n: int, rec: dict) -> None:
        p = rec.get("partie")
        if self.partie is not None:
            self.add(n, "R2.1", f"partie {p} starts before partie {self.partie} ended ({len(self.indexes)} of {self.deals_per_partie} deals)")
        if p != self.last_partie + 1:
            self.add(n, "format", f"partie {p!r} follows partie {self.last_partie}; partie are numbered 1, 2, …")
        self.partie = p if type(p) is int else self.last_partie + 1
        self.last_partie = self.partie
        if self.declared_parties is not None and self.partie > self.declared_parties:
            self.add(n, "format", f"partie {self.partie}: the header announces {self.declared_parties} partie")
        if "deck" in rec:
            self.add(n, "format", f"partie {p}: partie_start holds a deck; no card is logged before its deal is over")
        shuffle = rec.get("shuffle")
        if shuffle not in ("seed", "deck-book"):
            self.add(n, "format", f"partie {p}: shuffle {short_json(shuffle)} is neither \"seed\" nor \"deck-book\"")
            shuffle = "seed"
        self.seed.partie_start(self.partie, shuffle)
        seating = rec.get("seating", [0, 1, 2])
        if (isinstance(seating, list) and len(seating) == 3 and len(set(seating)) == 3
                and all(type(x) is int and 0 <= x < self.n_bots for x in seating)):
            self.seating = seating
        else:
            self.add(n, "format", f"seating {seating!r} must name three different bots of the header")
            self.seating = [0, 1, 2]
        self.indexes = []
        self.partie_pay = [0, 0, 0]
        self.prev = None
        self.times.start_partie(self.seating)
        self.forfeits.start_partie()

    def deal(self, n: int, rec: dict) -> None:
        rep = self.report
        rep.deals += 1
        if self.partie is None:
            self.add(n, "format", "a deal outside a partie (no open partie_start)")
            return
        p, i = rec.get("partie"), rec.get("deal")
        if p != self.partie:
            self.add(n, "R2.1", f"the deal is recorded in partie {p!r}, but partie {self.partie} is being played")
        if type(i) is not int or i < 1:
            self.add(n, "format", f"deal number {i!r} is not a positive integer")
            return
        expected = len(self.indexes) + 1
        if i != expected:
            if i in self.indexes:
                self.add(n, "R2.1", f"deal {i} of partie {self.partie} is recorded twice")
            elif i > expected:
                missing = ", ".join(str(k) for k in range(expected, i))
                self.add(n, "R2.1", f"deal {i} follows deal {expected - 1}: deal(s) {missing} of partie {self.partie} missing")
            else:
                self.add(n, "R2.1", f"deal {i} is out of order (deal {expected} expected)")
        if i > self.deals_per_partie:
            self.add(n, "R2.1", f"deal {i}: a partie has {self.deals_per_partie} deals")
        self.forfeits.before_deal(n, i, self.add)
        self.indexes.append(i)
        # R2.1, R1.5: rotation
        fh = forhont_of(i - 1)
        if rec.get("forhont") != fh:
            self.add(n, "R2.1", f"deal {i}: the forhont is seat {fh} (seat 0 in deal 1, then clockwise), the log says {rec.get('forhont')!r}")
        f = rec.get("forhont")
        if f in (0, 1, 2) and rec.get("dealer") != (f + 2) % 3:
            self.add(n, "R1.5", f"deal {i}: the dealer sits before the forhont (seat {(f + 2) % 3}), the log says {rec.get('dealer')!r}")
        # R2.5: the cut
        k = rec.get("cut", "missing")
        first = i == 1
        if first:
            if k is not None:
                self.add(n, "R2.5", f"deal 1 has no cut (the shuffled deck is dealt as it is), the log says cut {k!r}")
        elif type(k) is not int:
            self.add(n, "R2.5", f"deal {i}: the cut k is missing or not an integer ({k!r})")
        elif not CUT_RANGE[0] <= k <= CUT_RANGE[1]:
            self.add(n, "R2.5", f"deal {i}: cut {k} is out of range {CUT_RANGE[0]}..{CUT_RANGE[1]} (at least two cards from the top and the bottom)")
        # the deck
        deck, why = parse_deck(rec.get("deck"))
        if why:
            self.add(n, why[:why.index(':')], f"deal {i} deck: {why[why.index(':') + 2:]}")
            self.prev = None
            self.record_pay(n, rec)
            self.forfeits.after_deal(i, rec)
            return
        self.seed.deal(self.partie, n, rec)
        self.times.check(n, i, rec, self.add)
        if not first and self.prev is not None and self.prev[0] == i - 1 and self.prev[1] is not None and type(k) is int:
            self.check_chain(n, i, k, deck, self.prev[1])
        # R2.6: the hands dealt
        hands = rec.get("hands")
        if hands is not None and f in (0, 1, 2):
            dealt = dealt_hands(rec["deck"], f)
            if hands != dealt:
                bad = [s for s in range(3) if not isinstance(hands, list) or len(hands) != 3 or hands[s] != dealt[s]]
                self.add(n, "R2.6", f"deal {i}: the hands recorded for seat(s) {bad} are not the ones dealt from the deck (7-5-5-5-5-5 from the forhont)")
        # replay
        rp = replay_record(rec, deck)
        for rule, msg in rp.problems:
            self.add(n, rule, f"deal {i}: {msg}")
        collected = None
        if rp.complete:
            before = len(self.problems)
            out: list[tuple[str, str]] = []
            notes: list[str] = []
            try:
                compare(rec, rp.deal, out, notes)
            except (KeyError, TypeError, AttributeError) as e:
                out.append(("format", f"malformed outcome fields ({e.__class__.__name__}: {e})"))
            for rule, msg in out:
                self.add(n, rule, f"deal {i}: {msg}")
            for msg in notes:
                self.report.notes.append(Problem(n, "note", f"deal {i}: {msg}"))
            collected = rp.deal.collected_deck()  # the engine's collection (R2.3, R2.4), as partie.next_deck
            if len(self.problems) == before:
                rep.deals_replayed += 1
            if self.keep_deals and type(p) is int:
                self.deals[(p, i)] = (n, rec, deck)
        self.prev = (i, collected)
        self.record_pay(n, rec)
        self.forfeits.after_deal(i, rec)

    def check_chain(self, n: int, i: int, k: int, deck: list[Card], collected: list[Card]) -> None:
        expected = collected[k % 32:] + collected[:k % 32]
        if deck == expected:
            return
        for j in range(32):
            if collected[j:] + collected[:j] == deck:
                self.add(n, "R2.5", f"deal {i}: the deck is the collected deck of deal {i - 1} cut at {j}, but the log says cut {k}")
                return
        pos = next(j for j in range(32) if deck[j] != expected[j])
        self.add(n, "R2.3", f"deal {i}: the deck is not the collected deck of deal {i - 1} (R2.3–R2.4) cut at {k}: "
                            f"position {pos + 1} holds {deck[pos]}, expected {expected[pos]}")

    def forfeit(self, n: int, rec: dict) -> None:
        p = rec.get("partie")
        if self.partie is None:
            self.add(n, "format", f"a forfeit record outside a partie (partie {short_json(p)})")
            return
        if p != self.partie:
            self.add(n, "format", f"the forfeit record says partie {short_json(p)}, but partie {self.partie} is being played")
        pay = self.forfeits.record(n, rec, self.last_type == "deal", self.add)
        if pay is not None:
            for s in range(3):
                self.partie_pay[s] += pay[s]

    def record_pay(self, n: int, rec: dict) -> None:
        res = rec.get("result")
        pay = res.get("payments") if isinstance(res, dict) else None
        if isinstance(pay, list) and len(pay) == 3 and all(type(x) is int for x in pay):
            for s in range(3):
                self.partie_pay[s] += pay[s]

    def partie_end(self, n: int, rec: dict) -> None:
        p = rec.get("partie")
        if self.partie is None:
            self.add(n, "format", f"partie_end of partie {p!r} without its partie_start")
            return
        if p != self.partie:
            self.add(n, "format", f"partie_end says partie {p!r}, but partie {self.partie} is being played")
        expected = self.forfeits.expected_deals(n, self.partie, self.add)
        if self.forfeits.forfeited is not None:
            if len(self.indexes) != expected:
                self.add(n, "R2.1", f"partie {self.partie} ends after {len(self.indexes)} deals; forfeited from deal "
                                    f"{expected + 1} it has {expected}")
        elif len(self.indexes) != self.deals_per_partie:
            self.add(n, "R2.1", f"partie {self.partie} ends after {len(self.indexes)} deals; a partie has {self.deals_per_partie}")
        totals = rec.get("totals")
        if totals != self.partie_pay:
            self.add(n, "R9.7", f"partie {self.partie} totals: the deals' payments sum to {self.partie_pay}, the log says {short_json(totals)}")
        pl = places(self.partie_pay)
        if rec.get("places") != pl:
            self.add(n, "R9.7", f"partie {self.partie} places: totals {self.partie_pay} give places {pl}, the log says {short_json(rec.get('places'))}")
        for s in range(3):
            self.match_totals[self.seating[s]] += self.partie_pay[s]
        self.report.parties += 1
        self.partie = None
        self.prev = None

    def check_footer(self, n: int, rec: dict) -> None:
        self.footer = True
        if self.partie is not None:
            self.add(n, "R2.1", f"the footer comes while partie {self.partie} is unfinished ({len(self.indexes)} deals)")
        if rec.get("partie") != self.report.parties:
            self.add(n, "R9.7", f"the footer counts {rec.get('partie')!r} partie, the log has {self.report.parties}")
        if rec.get("totals") != self.match_totals:
            self.add(n, "R9.7", f"match totals: the partie totals sum to {self.match_totals}, the footer says {short_json(rec.get('totals'))}")
        pl = places(self.match_totals)
        if rec.get("places") != pl:
            self.add(n, "R9.7", f"match places: totals {self.match_totals} give places {pl}, the footer says {short_json(rec.get('places'))}")
        if rec.get("complete") is not True:
            self.add(n, "format", "the footer does not say complete: true")
        else:
            self.report.complete = True
        if self.declared_parties is not None and self.report.parties != self.declared_parties:
            self.add(n, "format", f"the header announces {self.declared_parties} partie, the log holds {self.report.parties}")
        self.check_seed(n, rec)
        self.check_signature(n, rec)

    def check_seed(self, n: int, rec: dict) -> None:
        """R2.2, R2.5: every deck and cut follows from the revealed seed.  Such a problem is
        the first thing wrong on its line (a deal replayed from another deck fails anyway)."""
        before = len(self.problems)
        self.seed.check(n, rec, self.add)
        found = self.problems[before:]
        del self.problems[before:]
        self.problems[:0] = found

    def check_signature(self, n: int, rec: dict) -> None:
        problems, signer, verified = signature_problems(rec, self.verify)
        for msg in problems:
            self.add(n, "seal", msg)
        self.report.signer = signer
        self.report.verified = verified
        self.report.signed = rec.get("signature") is not None


def validate_file(path, transcripts=None, jobs: int = 1, verify: str | None = None) -> Report:
    """Validate one log; with ``transcripts`` (a folder) also check its seats' transcripts.

    ``jobs`` > 1 validates the partie of a large log in that many processes
    (the report is the same as with one).  ``verify`` (a public key, ``ed25519:HEX``
    or a key file, see :func:`referee.logs.log.load_public_key`): the log must be signed
    with that key.
    """
    path = Path(path)
    if verify is not None:
        verify = load_public_key(verify)
    if jobs > 1 and transcripts is None:
        report = _validate_parallel(path, jobs, verify)
        if report is not None:
            return report
    check = _FileCheck(path, keep_deals=transcripts is not None, verify=verify)
    with _gc_paused():
        report = check.run()
    if transcripts is not None:
        from .leaks import check_transcript
        tdir = Path(transcripts)
        stem = path.name[:-len(".jsonl")] if path.name.endswith(".jsonl") else path.stem
        for tpath in sorted(tdir.glob(f"{stem}.seat*.transcript.jsonl")):
            m = re.fullmatch(re.escape(stem) + r"\.seat(\d+)\.transcript\.jsonl", tpath.name)
            if not m:
                continue
            report.transcripts += 1
            probs, count = check_transcript(tpath, int(m.group(1)), check.deals)
            report.problems.extend(probs)
            report.messages_checked += count
    return report


class _gc_paused:
    """Many short-lived objects and no cycles worth collecting: pause the cyclic GC meanwhile."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()


# ------------------------------------------------------------------ parallel validation of one large log

MIN_PARTIE_PER_JOB = 2
_SHARED: tuple | None = None  # (path, lines, ends_with_newline), inherited by forked workers


def _validate_parallel(path: Path, jobs: int, verify: str | None = None) -> Report | None:
    """Split the log at partie boundaries and check the pieces in ``jobs`` processes.

    Each partie is independent of the others (its deck chain starts from its own
    shuffle), so a worker checks whole partie; the main process checks the header,
    the joints between pieces (partie numbering) and the footer totals.  Returns
    None when the log cannot be split (then the caller validates it in one piece).
    """
    global _SHARED
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    try:
        lines, ends = split_lines(path)
    except OSError:
        return None
    if len(lines) < 3 or not isinstance(lines[0], str) or not lines[0].startswith('{"type":"header"'):
        return None
    starts = [i for i, line in enumerate(lines) if line.startswith('{"type":"partie_start"')]
    pieces = min(jobs, len(starts) // MIN_PARTIE_PER_JOB)
    if pieces < 2:
        return None
    try:
        header = json.loads(lines[0])
    except ValueError:
        return None
    cuts = [starts[len(starts) * k // pieces] for k in range(pieces)] + [len(lines)]
    cuts[0] = 1  # the first piece also takes anything between the header and the first partie
    bounds = list(zip(cuts[:-1], cuts[1:]))
    _SHARED = (path, lines, ends)
    try:
        with ProcessPoolExecutor(max_workers=pieces, mp_context=multiprocessing.get_context("fork")) as ex:
            results = list(ex.map(_check_piece, bounds))
    finally:
        _SHARED = None
    main = _FileCheck(path, keep_deals=False, verify=verify)
    main.check_header(1, header)
    rep = main.report
    prev = None
    for res in results:
        if prev is not None and res["first_partie"] is not None:
            line, p = res["first_line"], res["first_partie"]
            if prev["partie"] is not None:
                main.add(line, "R2.1", f"partie {p} starts before partie {prev['partie']} ended ({prev['n_indexes']} of {main.deals_per_partie} deals)")
            if p != prev["last_partie"] + 1:
                main.add(line, "format", f"partie {p!r} follows partie {prev['last_partie']}; partie are numbered 1, 2, …")
        main.problems.extend(Problem(*q) for q in res["problems"])
        rep.notes.extend(Problem(*q) for q in res["notes"])
        rep.deals += res["deals"]
        rep.deals_replayed += res["deals_replayed"]
        rep.parties += res["parties"]
        for i, x in enumerate(res["match_totals"]):
            main.match_totals[i] += x
        main.seed.facts.update(res["seed_facts"])
        prev = res
    last = results[-1]
    main.partie = last["partie"]
    main.last_partie = last["last_partie"]
    main.indexes = [0] * last["n_indexes"]
    if last["footer"] is not None:
        main.check_footer(*last["footer"])
    else:
        where = f"stopped in partie {main.partie}" if main.partie is not None else f"stopped after partie {main.last_partie}"
        main.add(len(lines), "incomplete",
                 f"{rep.deals} complete deals, {where} (no footer: the match did not finish; not a result)")
    main.add_seal(chain_problems(lines, ends))
    main.problems.sort(key=lambda q: q.line)
    return rep


def _check_piece(bounds: tuple[int, int]) -> dict:
    """A worker: check lines ``start+1..stop`` (whole partie) of the shared log."""
    path, lines, ends = _SHARED
    start, stop = bounds
    check = _FileCheck(Path(path), keep_deals=False)
    check.defer_footer = True
    check.check_header(1, json.loads(lines[0]))
    check.problems.clear()
    first_partie = None
    first = lines[start] if start < len(lines) else ""
    if first.startswith('{"type":"partie_start"'):
        try:
            first_partie = json.loads(first).get("partie")
        except ValueError:
            first_partie = None
        if type(first_partie) is int:
            check.last_partie = first_partie - 1
    with _gc_paused():
        for n, rec, problem in parse_lines(lines, ends, start, stop):
            if rec is None:
                check.add(n, "format", problem)
                continue
            try:
                check.record(n, rec)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
                check.add(n, "format", f"malformed {rec.get('type', 'record')} record ({e.__class__.__name__}: {e})")
    return {
        "problems": [(q.line, q.rule, q.message) for q in check.problems],
        "notes": [(q.line, q.rule, q.message) for q in check.report.notes],
        "deals": check.report.deals,
        "deals_replayed": check.report.deals_replayed,
        "parties": check.report.parties,
        "match_totals": check.match_totals,
        "partie": check.partie,
        "n_indexes": len(check.indexes),
        "last_partie": check.last_partie,
        "first_partie": first_partie,
        "first_line": start + 1,
        "footer": check.pending_footer,
        "seed_facts": check.seed.facts,
    }


def validate_files(paths, transcripts=None, jobs: int = 1, verify: str | None = None) -> list[Report]:
    """Validate several logs: with ``jobs`` > 1, several files at once, or one large file in pieces."""
    paths = [Path(p) for p in paths]
    if verify is not None:
        verify = load_public_key(verify)
    if jobs > 1 and len(paths) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        if "fork" in multiprocessing.get_all_start_methods():
            with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=multiprocessing.get_context("fork")) as ex:
                return list(ex.map(validate_file, paths, [transcripts] * len(paths), [1] * len(paths), [verify] * len(paths)))
    return [validate_file(p, transcripts, jobs, verify) for p in paths]


def log_files(paths) -> list[Path]:
    """The logs named: files as given, folders searched for *.jsonl (transcripts excluded)."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*.jsonl") if not q.name.endswith(".transcript.jsonl")))
        else:
            out.append(p)
    return out
