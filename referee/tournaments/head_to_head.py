"""A head-to-head test (a duel): its plan of groups, and its result read back from its logs.

Two bots A and B share a three-seat table.  A *group* is one starting deck played in
the six seatings with two seats of one bot and one of the other (A A B, A B A,
B A A, B B A, B A B, A B B): every seat holds A and B equally often and every seat's
cards go to each bot three times, so the luck of the deal cancels.  One group is one
sample: A's mean groše per partie over its six partie (A's seats together; B's is its
negative, every deal being zero-sum).  The samples feed the sequential test of
:mod:`referee.tournaments.sprt` in group order; a group counts only when its six logs are
complete and validate, and only in order.

So the logs are the whole state: :func:`scan` reads them, :func:`result_of` gives the
decision, LLR and groups from the folder alone (``marias table``, the web page, a resume),
and :func:`render` prints it.  Running a test is :mod:`referee.tournaments.duel`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .folder import LOGS_DIR
from .sprt import H0, H1, TRUNCATED, SPRT, SPRTState
from .tournament_config import HEAD_TO_HEAD, TournamentConfig
from .units import Unit, check_unit_log, log_totals, unit_log

#: the six seatings of a group, as indices into (A, B) for seats 0, 1, 2
SEATINGS: tuple[tuple[int, int, int], ...] = ((0, 0, 1), (0, 1, 0), (1, 0, 0), (1, 1, 0), (1, 0, 1), (0, 1, 1))
#: for each seating and seat, the workdir lane of the bot there: the k-th seat its bot takes in a group,
#: so that no two of a bot's instances on one deck (nor its two seats at one table) share a folder
SEAT_LANES: tuple[tuple[int, int, int], ...] = tuple(
    tuple(sum(1 for j, t in enumerate(SEATINGS) for q in range(3) if t[q] == s[seat] and (j, q) < (i, seat))
          for seat in range(3)) for i, s in enumerate(SEATINGS))  # type: ignore[misc]
UNIT_FILE_RE = re.compile(r"g(\d+)-s([ab]{3})\.")  # a unit's log or one of its bots' files
DUEL_LOG_RE = re.compile(r"g\d+-s[ab]{3}\.jsonl$")  # a unit's log: gGGGG-sAAB.jsonl


# ------------------------------------------------------------------ plan

@dataclass(frozen=True)
class Plan:
    """What defines a head-to-head test's games and its decision (from a config or a folder's state file)."""

    a: str
    b: str
    seed: str
    test: SPRT
    id_width: int | None = None  # digits of K in unit ids (kept when max_groups grows); None: of max_groups

    @property
    def width(self) -> int:
        return self.id_width or max(4, len(str(self.test.max_groups or 0)))

    def group(self, k: int) -> list[Unit]:
        """Group ``k`` (1-based): six units on one deck (seed ``SEED:gK``, or deal-book line K)."""
        seed = f"{self.seed}:g{k}"
        return [Unit(f"g{k:0{self.width}d}-s{''.join('ab'[i] for i in arr)}", 1, (self.a, self.b),  # type: ignore[arg-type]
                       arr, k, seed, k - 1) for arr in SEATINGS]


def plan_of(cfg: TournamentConfig) -> Plan:
    if cfg.format != HEAD_TO_HEAD or cfg.sprt is None or len(cfg.bots) != 2:
        raise ValueError("a head-to-head test needs format: head-to-head and exactly two bots")
    return Plan(cfg.bots[0].name, cfg.bots[1].name, cfg.seed, SPRT(**cfg.sprt), cfg.id_width)


def plan_from_state(canon: dict, id_width: int | None = None) -> Plan:
    """The plan stored in a folder's tournament.json (its canonical configuration, and the width of
    its unit ids when stored)."""
    sp = canon["sprt"]
    return Plan(canon["bots"][0]["name"], canon["bots"][1]["name"], str(canon["seed"]),
                SPRT(h0=sp["h0"], h1=sp["h1"], alpha=sp["alpha"], beta=sp["beta"], max_groups=sp["max_groups"]),
                id_width)


def unit_sample(path: Path, a: str) -> float:
    """A's groše in one unit's (complete) log: the totals of the seats labelled ``a``."""
    got = log_totals(path)
    if got is None:
        raise ValueError(f"{path}: no footer")
    labels, totals = got
    return float(sum(t for n, t in zip(labels, totals) if n == a))


# ------------------------------------------------------------------ reading the state from the logs

@dataclass
class Scan:
    """What a folder's logs hold: complete units (A's groše), bad unit files, and the test over groups 1..N."""

    plan: Plan
    units: dict[str, float] = field(default_factory=dict)  # unit id -> A's groše, complete and valid
    bad: dict[str, str] = field(default_factory=dict)  # unit id -> why its files do not count
    groups_seen: int = 0  # the highest group with any file

    def group_done(self, k: int) -> bool:
        return all(u.id in self.units for u in self.plan.group(k))

    def group_mean(self, k: int) -> float:
        return sum(self.units[u.id] for u in self.plan.group(k)) / len(SEATINGS)

    def state(self) -> SPRTState:
        """The test over complete groups 1, 2, … in order, stopped at its first decision or first gap."""
        st = SPRTState(self.plan.test)
        k = 1
        while not st.done and self.group_done(k):
            st = st.add(self.group_mean(k))
            k += 1
        return st

    def ignored_groups(self, counted: int) -> list[int]:
        """Complete groups after the counted ones (played while the test was deciding): not counted."""
        return [k for k in range(counted + 1, self.groups_seen + 1) if self.group_done(k)]


def scan(out: Path, plan: Plan, *, check: bool = True) -> Scan:
    """Read ``out/logs``: every unit file of the plan, checked as the tournament checks a unit log."""
    logs = out / LOGS_DIR
    sc = Scan(plan)
    ids: dict[str, Unit] = {}
    if logs.is_dir():
        for p in logs.iterdir():
            m = UNIT_FILE_RE.match(p.name)
            if m:
                sc.groups_seen = max(sc.groups_seen, int(m.group(1)))
    for k in range(1, sc.groups_seen + 1):
        for u in plan.group(k):
            ids[u.id] = u
    for uid, u in ids.items():
        path = unit_log(out, u)
        if not path.exists():
            if any(logs.glob(f"{uid}.*")):
                sc.bad[uid] = "no log (only its bots' files)"
            continue
        why = check_unit_log(path, u) if check else None
        if why is None:
            try:
                sc.units[uid] = unit_sample(path, plan.a)
            except ValueError as e:
                sc.bad[uid] = str(e)
        else:
            sc.bad[uid] = why
    return sc


# ------------------------------------------------------------------ the report (shared by the runner and `marias table`)

def decision_text(plan: Plan, st: SPRTState) -> str:
    d = st.decision
    t = plan.test
    if d == H1:
        return f"H1 accepted: {plan.a} is better than {plan.b} (by {t.h1:g} groše per partie rather than {t.h0:g})"
    if d == H0:
        text = f"H0 accepted: {plan.a} is not better than {plan.b} by {t.h1:g} groše per partie ({t.h0:g} rather than {t.h1:g})"
        e = st.estimate
        if e is not None and e.half is not None and e.high < 0:  # the whole interval below zero
            text += (f"; {plan.b} is better than {plan.a}: by {-e.mean:.1f} groše per partie, "
                     f"95% interval [{-e.high:.1f}, {-e.low:.1f}]")
        return text
    if d == TRUNCATED:
        return f"no decision after max_groups = {t.max_groups} groups"
    return "no decision yet (the test continues)"


def decks_of(folder: Path) -> str | None:
    """What the folder's logs say of their decks (referee/matches/secrecy.py): public or secret seed."""
    from ..matches.secrecy import decks_summary, table_logs

    return decks_summary(table_logs([Path(folder) / LOGS_DIR]))


def result_dict(plan: Plan, st: SPRTState, ignored: list[int] | None = None, decks: str | None = None,
                changes: list[str] | None = None) -> dict:
    t = plan.test
    e = st.estimate
    return {
        "a": plan.a, "b": plan.b, "h0": t.h0, "h1": t.h1, "alpha": t.alpha, "beta": t.beta,
        "max_groups": t.max_groups, "decision": st.decision, "text": decision_text(plan, st),
        "groups": st.n, "partie": st.n * len(SEATINGS),
        "llr": None if st.n == 0 else (round(st.llr, 4) if math.isfinite(st.llr) else str(st.llr)), "lower": round(t.lower, 4), "upper": round(t.upper, 4),
        "mean": None if e is None else round(e.mean, 3),
        "ci95_low": None if e is None or e.low is None else round(e.low, 3),
        "ci95_high": None if e is None or e.high is None else round(e.high, 3),
        "los": None if e is None or e.los is None else round(e.los, 6),
        "samples": [round(x, 4) for x in st.samples],
        "ignored_groups": list(ignored or []),
        "decks": decks,
        "design_changes": list(changes or []),
    }


def render(r: dict, fmt: str = "text") -> str:
    """The head-to-head section: decision, LLR and bounds, groups, the estimate with its interval and LOS."""
    if fmt == "json":
        return json.dumps({"head-to-head": r}, indent=2, ensure_ascii=False)
    llr = ("-" if r["llr"] is None else f"{r['llr']:+.3f}" if not isinstance(r["llr"], str)
           else f"{r['llr']} (every group the same: no spread)")
    if r["mean"] is None:
        est = "-"
    elif r["ci95_low"] is None:
        est = f"{r['mean']:+.2f} (one group: no interval)"
    else:
        est = f"{r['mean']:+.2f}, 95% interval [{r['ci95_low']:+.2f}, {r['ci95_high']:+.2f}]"
    los = "-" if r["los"] is None else f"{100 * r['los']:.1f}%"
    rows = [("decision", r["text"]), ("groups", f"{r['groups']} ({r['partie']} partie)"),
            ("LLR", f"{llr}  (bounds {r['lower']:+.3f}, {r['upper']:+.3f})"),
            (f"{r['a']} - {r['b']}", f"{est} groše per partie"), ("LOS", f"{los} (likelihood that {r['a']} is better)"),
            ("design", f"h0 {r['h0']:g}, h1 {r['h1']:g} groše per partie, alpha {r['alpha']:g}, beta {r['beta']:g}, "
                       f"max groups {r['max_groups']}")]
    if r.get("decks"):
        rows.append(("decks", r["decks"]))
    if r.get("design_changes"):
        rows.append(("design changed", "after play began: " + "; ".join(r["design_changes"])
                     + " (the error rates hold only for a design fixed in advance)"))
    if r["ignored_groups"]:
        rows.append(("not counted", f"{len(r['ignored_groups'])} group(s) finished after the decision "
                                    "(in no table)"))
    if fmt == "csv":
        return "# head-to-head\nkey,value\n" + "".join(f"{k},\"{v}\"\n" for k, v in rows)
    title = f"Head-to-head: {r['a']} against {r['b']} (SPRT over groups of six seatings)"
    width = max(len(k) for k, _ in rows)
    body = "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)
    if fmt == "md":
        return f"## {title}\n\n| | |\n|---|---|\n" + "".join(f"| {k} | {v} |\n" for k, v in rows)
    return f"{title}\n\n{body}\n"


def result_of(folder: Path, state_body: dict) -> tuple[dict, list[Path]]:
    """The head-to-head result of a duel's folder, from its logs and its ``tournament.json`` (``state_body``),
    and the logs of the groups the test counts (groups 1..N): what a duel folder's other tables (standings,
    pairs, play, ...) are computed from, so that a group finished after the decision (or after a gap)
    counts in none of them.  Read through :meth:`referee.tournaments.event.EventFolder.head_to_head`."""
    plan = plan_from_state(state_body["config"], state_body.get("id_width"))
    sc = scan(folder, plan)
    st = sc.state()
    logs = [unit_log(folder, u) for k in range(1, st.n + 1) for u in plan.group(k)]
    return result_dict(plan, st, sc.ignored_groups(st.n), decks_of(folder), design_changes(state_body)), logs


def design_changes(state_body: dict) -> list[str]:
    """Changes of the test's hypotheses or error rates made on a resume (tournament.json ``extensions``;
    a larger or smaller max_groups is not one: it only says how long the same test may run)."""
    return [c for e in state_body.get("extensions") or [] for c in e.get("changed") or []
            if not c.startswith("sprt.max_groups")]


