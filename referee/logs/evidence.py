"""What a log states about itself, checked against its own records (``marias validate``).

A log commits to its seed, its time limits and its fault policy; a forger who rewrites
records must keep them consistent with those, and these checks hold him to it:

- :class:`SeedEvidence`: the footer's seed is the one the header committed to, and every
  partie's first deck (unless from a deck book) and every cut follow from it (R2.2, R2.5);
- :class:`DecisionTimes`: no decision time negative or above its limit, no timeout before
  it (R12.1), the time bank replayed from the logged times;
- :class:`Forfeits`: the R12.3 forfeit record exactly when a seat reaches its last allowed
  fault before deal 12, with the right payments, and nothing played after it;
- :func:`signature_problems`: the footer's Ed25519 signature, and the key it must be by.

Each check reports through ``add(line, rule, message)``, as the file check does.
"""

from __future__ import annotations

import re
from typing import Callable

from .log import forfeit_payments
from .replay import short_json
from ..rules.partie import partie_seed, seed_sha256, seeded_cut, shuffled_deck
from .seal import verify_signature

Add = Callable[[int, str, str], None]

#: A decision may be logged this much above its time limit: the referee reads its clock
#: after the answer was read, and on a loaded machine an answer that arrived in time can be
#: read a little late.  A time further above the limit was a timeout, not an answer.
TIME_SLACK_MS = 250.0


class SeedEvidence:
    """What the seed must explain, collected partie by partie and checked at the footer."""

    def __init__(self, header: dict, add: Add, line: int = 1):
        self.commitment: str | None = None
        # {partie: {"shuffle": "seed"|"deck-book", "first": (line, deck codes), "cuts": [(line, deal, k)]}}
        self.facts: dict[int, dict] = {}
        commit = header.get("seed_sha256")
        if isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{64}", commit):
            self.commitment = commit
        else:
            add(line, "R2.2", f"the header holds no seed commitment (seed_sha256 {short_json(commit)}): "
                              "the decks cannot be checked against a seed")

    def partie_start(self, partie: int, shuffle: str) -> None:
        self.facts[partie] = {"shuffle": shuffle, "first": None, "cuts": []}

    def deal(self, partie: int | None, n: int, rec: dict) -> None:
        facts = self.facts.get(partie)
        if facts is None:
            return
        if rec.get("deal") == 1:
            facts["first"] = (n, rec.get("deck"))
        elif type(rec.get("cut")) is int and type(rec.get("deal")) is int:
            facts["cuts"].append((n, rec["deal"], rec["cut"]))

    def check(self, n: int, footer: dict, add: Add) -> None:
        if self.commitment is None:
            return
        seed = footer.get("seed")
        try:
            commit = seed_sha256(seed)
        except TypeError:
            add(n, "R2.2", f"the footer does not reveal the seed (seed {short_json(seed)}): the decks cannot be checked")
            return
        if commit != self.commitment:
            add(n, "R2.2", f"the footer's seed {short_json(seed)} is not the one the header committed to (its sha256 differs)")
            return
        for p, facts in sorted(self.facts.items()):
            ps = partie_seed(seed, p)
            if facts["shuffle"] == "seed" and facts["first"] is not None:
                line, codes = facts["first"]
                expected = [str(c) for c in shuffled_deck(ps)]
                if codes != expected:
                    codes = codes if isinstance(codes, list) else []
                    pos = next((j for j in range(32) if j >= len(codes) or codes[j] != expected[j]), 0)
                    add(line, "R2.2", f"partie {p} deal 1: the deck is not the shuffle of the logged seed "
                                      f"(partie seed {short_json(ps)}; position {pos + 1} should hold {expected[pos]})")
            for line, d, k in facts["cuts"]:
                if 2 <= d <= 99:
                    expected_k = seeded_cut(ps, d)
                    if k != expected_k:
                        add(line, "R2.5", f"partie {p} deal {d}: cut {k}, but the logged seed gives cut {expected_k}")


class DecisionTimes:
    """R12.1 against the log's own limits: each bot's limits are the header's ``limits``,
    overridden by its own (a ``limits`` object in its ``bots`` entry); with a bank the
    limit of a decision is what the referee computed (bank + increment, at most move_ms),
    the bank replayed from the logged times."""

    KEYS = ("move_ms", "bank_ms", "increment_ms", "startup_ms")

    def __init__(self, header: dict, n_bots: int, add: Add, line: int = 1):
        self.move_ms: list[float | None] = [None] * n_bots
        self.bank_ms: list[float | None] = [None] * n_bots
        self.increment_ms: list[float] = [0.0] * n_bots
        self.startup_ms: list[float | None] = [None] * n_bots
        self.seating = [0, 1, 2]
        self.bank: list[float | None] = [None, None, None]  # per seat: the bank left in this partie
        base = header.get("limits") if isinstance(header.get("limits"), dict) else {}
        if base.get("in_process"):
            return  # in-process bots are called directly: no limits
        bots = header.get("bots") if isinstance(header.get("bots"), list) else []
        for i in range(n_bots):
            entry = bots[i] if i < len(bots) and isinstance(bots[i], dict) else {}
            lim = dict(base)
            if isinstance(entry.get("limits"), dict):
                lim.update(entry["limits"])
            values = {}
            for key in self.KEYS:
                v = lim.get(key)
                if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
                    add(line, "format", f"limits: bot {i} {key} {short_json(v)} is not a number of ms")
                    v = None
                values[key] = None if v is None else float(v)
            self.move_ms[i] = values["move_ms"]
            self.bank_ms[i] = values["bank_ms"] or None
            self.increment_ms[i] = values["increment_ms"] or 0.0
            self.startup_ms[i] = values["startup_ms"]

    def start_partie(self, seating: list[int]) -> None:
        self.seating = list(seating)
        self.bank = [self.bank_ms[b] if b < len(self.bank_ms) else None for b in self.seating]

    def limit(self, seat: int) -> float | None:
        """The limit of the seat's next decision, as the referee computes it (the bank
        gets its increment first; an empty bank leaves no time)."""
        bot = self.seating[seat]
        move = self.move_ms[bot] if bot < len(self.move_ms) else None
        if self.bank[seat] is None:
            return move
        self.bank[seat] += self.increment_ms[bot] if bot < len(self.increment_ms) else 0.0
        bank = self.bank[seat]
        return max(0.0, min(move, bank) if move else bank)

    def check(self, n: int, i, rec: dict, add: Add) -> None:
        decisions = rec.get("decisions")
        if not isinstance(decisions, list):
            return
        for j, dec in enumerate(decisions, 1):
            if not isinstance(dec, dict) or dec.get("ms") is None:
                continue
            ms, seat = dec["ms"], dec.get("seat")
            if isinstance(ms, bool) or not isinstance(ms, (int, float)):
                add(n, "format", f"deal {i}: decision {j}: time {short_json(ms)} is not a number of ms")
                continue
            if ms < 0:
                add(n, "R12.1", f"deal {i}: decision {j} (seat {seat}) is logged with a negative time, {ms:g} ms")
                continue
            if seat not in (0, 1, 2):
                continue
            limit = self.limit(seat)
            if limit is not None and ms > limit + TIME_SLACK_MS:
                add(n, "R12.1", f"deal {i}: decision {j} (seat {seat}) took {ms:g} ms, above its limit of {limit:g} ms: "
                                "that is a timeout, not an answer")
            if self.bank[seat] is not None:
                self.bank[seat] -= ms
        faults = rec.get("faults")
        f = faults[0] if isinstance(faults, list) and faults and isinstance(faults[0], dict) else None
        if f is None or f.get("kind") != "timeout" or f.get("seat") not in (0, 1, 2):
            return
        seat, elapsed = f["seat"], f.get("elapsed")
        if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)):
            add(n, "format", f"deal {i}: the timeout fault's elapsed {short_json(elapsed)} is not a number of seconds")
            return
        bot = self.seating[seat]
        # a timeout is at the decision's limit, or at the start-up limit for a bot (re)started for the deal
        floors = [x for x in (self.limit(seat), self.startup_ms[bot] if bot < len(self.startup_ms) else None)
                  if x is not None]
        if floors and elapsed * 1000 < min(floors) - 1:
            add(n, "R12.1", f"deal {i}: seat {seat}'s timeout fault came after {elapsed * 1000:g} ms, "
                            f"under its limit of {min(floors):g} ms: not a timeout")


class Forfeits:
    """R12.3 with the ``"after_max_faults": "forfeit"`` policy: after its last allowed fault
    before the last deal a seat forfeits the rest of the partie (a ``forfeit`` record)."""

    def __init__(self, header: dict, deals_per_partie: int, add: Add, line: int = 1):
        self.deals_per_partie = deals_per_partie
        self.max_faults: int | None = None
        policy = header.get("fault_policy")
        if isinstance(policy, dict) and policy.get("after_max_faults") == "forfeit":
            mf = policy.get("max_faults")
            if type(mf) is int and mf >= 1:
                self.max_faults = mf
            else:
                add(line, "format", f"fault_policy max_faults {short_json(mf)} is not a positive integer")
        self.start_partie()

    def start_partie(self) -> None:
        self.faults = [0, 0, 0]
        self.due: tuple[int, int] | None = None  # (seat, from_deal) of a forfeit record that must follow
        self.forfeited: tuple[int, int] | None = None  # (seat, from_deal) of this partie's forfeit record

    def before_deal(self, n: int, i: int, add: Add) -> None:
        """A deal record is about to be checked: none may follow a forfeit (or replace a due one)."""
        if self.forfeited is not None:
            add(n, "R12.3", f"deal {i} is recorded after seat {self.forfeited[0]} forfeited the partie from deal {self.forfeited[1]}")
        elif self.due is not None:
            add(n, "R12.3", f"deal {i} is played although seat {self.due[0]} reached {self.max_faults} faults "
                            f"in deal {self.due[1] - 1}: it forfeits the partie from deal {self.due[1]}")
            self.due = None

    def after_deal(self, i, rec: dict) -> None:
        faults = rec.get("faults")
        if not isinstance(faults, list) or not faults or not isinstance(faults[0], dict):
            return
        seat = faults[0].get("seat")
        if seat not in (0, 1, 2):
            return
        self.faults[seat] += 1
        if (self.max_faults is not None and self.faults[seat] == self.max_faults and self.forfeited is None
                and type(i) is int and i < self.deals_per_partie):
            self.due = (seat, i + 1)

    def record(self, n: int, rec: dict, after_deal: bool, add: Add) -> list[int] | None:
        """Check a ``forfeit`` record; returns its payments when they can be added to the totals."""
        seat, k, deals, pay = (rec.get(x) for x in ("seat", "from_deal", "deals", "payments"))
        if self.max_faults is None:
            add(n, "R12.3", "a forfeit record, but the header's fault_policy does not forfeit "
                            "(after_max_faults is not \"forfeit\")")
        if rec.get("rule") != "R12.3":
            add(n, "format", f"the forfeit record's rule is {short_json(rec.get('rule'))}, not \"R12.3\"")
        if self.forfeited is not None:
            add(n, "R12.3", "a second forfeit record in the partie")
            return None
        due, self.due = self.due, None
        if due is None:
            if self.max_faults is not None:
                add(n, "R12.3", f"seat {short_json(seat)} forfeits from deal {short_json(k)}, but no seat reached its "
                                f"{self.max_faults} faults in the deal just before")
        elif not after_deal:
            add(n, "R12.3", "the forfeit record must follow the deal record of the last allowed fault")
        else:
            if seat != due[0]:
                add(n, "R12.3", f"the forfeit names seat {short_json(seat)}, but seat {due[0]} reached {self.max_faults} faults")
            if k != due[1]:
                add(n, "R12.3", f"seat {due[0]} forfeits from deal {due[1]} (the first deal not played), the record says {short_json(k)}")
            seat, k = due
        if seat not in (0, 1, 2) or type(k) is not int or not 2 <= k <= self.deals_per_partie:
            add(n, "format", f"forfeit: seat {short_json(seat)} and from_deal {short_json(k)} must be a seat and a deal 2..{self.deals_per_partie}")
            return None
        self.forfeited = (seat, k)
        n_deals = self.deals_per_partie - k + 1
        if deals != n_deals:
            add(n, "R12.3", f"forfeit from deal {k}: {n_deals} deals are forfeited, the record says {short_json(deals)}")
        expected = forfeit_payments(seat, n_deals)
        if pay != expected:
            add(n, "R12.3", f"forfeit of seat {seat} for {n_deals} deals: each is settled as its fault before a contract "
                            f"(R12.2, it pays each other player 10): payments {expected}, the record says {short_json(pay)}")
        if isinstance(pay, list) and len(pay) == 3 and all(type(x) is int for x in pay):
            return pay
        return None

    def expected_deals(self, n: int, partie: int, add: Add) -> int:
        """At the partie's end: a forfeit still due is missing; the number of deal records expected."""
        if self.due is not None:
            seat, k = self.due
            add(n, "R12.3", f"partie {partie} ends without the forfeit record of seat {seat}, "
                            f"which reached {self.max_faults} faults before deal {k}")
        return self.forfeited[1] - 1 if self.forfeited is not None else self.deals_per_partie


def signature_problems(footer: dict, verify: str | None) -> tuple[list[str], str | None, bool]:
    """The seal's signature: problems (rule ``seal``), the key of a valid signature, and
    whether it is by ``verify`` (the key asked for, ``ed25519:HEX``)."""
    sig, signer, chain = footer.get("signature"), footer.get("signer"), footer.get("chain")
    problems: list[str] = []
    valid = False
    if sig is not None:
        if isinstance(signer, str) and isinstance(sig, str) and isinstance(chain, str) and verify_signature(signer, chain, sig):
            valid = True
        else:
            problems.append(f"the footer's signature does not verify with its signer key {short_json(signer)}: "
                            "the log was changed after it was signed")
    if verify is not None:
        if sig is None:
            problems.append(f"the log is not signed; it was asked to be verified with {verify}")
        elif signer != verify:
            problems.append(f"the log is signed by {short_json(signer)}, not by the key given ({verify})")
    return problems, signer if valid else None, valid and signer == verify
