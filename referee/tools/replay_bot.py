"""``marias replay LOG --partie P --deal N --seat S --bot COMMAND``: one logged deal, replayed
to a bot from one seat, to debug a decision without a whole match.

The log holds every decision, so the deal is rebuilt with the engine and each line
that seat was sent is built again with the referee's own builders
(:func:`referee.matches.tell.request_line`, :func:`referee.matches.tell.event_lines`,
:mod:`protocol.messages`): the same bytes as in a ``--transcript`` of the match,
request ids, ``time_ms`` and totals included.  The bot is started as the referee starts
it; its answer to each request is shown beside the logged one, with the fault it
would have committed (:func:`referee.seats.explain.describe`).  The deal goes on with the
logged actions, whatever the bot answers.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from protocol import messages as M

from .. import __version__
from ..rules.cards import parse_deck
from ..rules.deal import Deal
from ..seats.explain import describe, shorten
from ..seats.faults import BotFault, FaultKind
from ..logs.log import read_log
from ..seats.sandbox import resolve_mode
from ..matches.match import BotSpec, Limits, MatchConfig, Player, Referee, answer_index, rule_broken
from ..matches.tell import event_lines, request_line
from ..seats.process import Poller, encode_line
from ..seats.seat import Clock


class ReplayError(ValueError):
    """The log does not hold what was asked (no such partie, deal or seat)."""


@dataclass
class Step:
    """One line of the replay: a line sent, or a request with both answers."""

    line: str
    request: dict | None = None
    logged: str | None = None  # the logged action (for a logged fault: the faulty answer, or its evidence)
    logged_fault: str | None = None  # the kind of the logged fault at this request
    answer: str | None = None  # the bot's action (None before it is asked)
    fault: str | None = None  # describe() of the fault it would have committed

    @property
    def same(self) -> bool:
        return self.logged is not None and self.answer == self.logged


@dataclass
class SeatScript:
    """Everything one seat was sent during one deal, in order."""

    header: dict
    partie: int
    deal: int
    seat: int
    lines: list[str] = field(default_factory=list)  # hello, partie_start, then the deal's lines
    #: index in lines -> (request, logged answer, decisions of the deal applied before it, logged fault kind)
    requests: dict[int, tuple[dict, str | None, int, str | None]] = field(default_factory=dict)
    rec: dict | None = None


def _limits(header: dict, seat: int) -> dict:
    lim = dict(header.get("limits") or {})
    bot = (header.get("bots") or [{}] * 3)[seat]
    lim.update(bot.get("limits") or {})
    return lim


def _fault_at_request(rec: dict, deal: Deal, limit_ms: float) -> bool:
    """Did the logged fault happen at a request (rather than while its bot was starting)?
    A bot that could not start, or failed its hello, was never sent the request; a
    timeout at a request waited ``time_ms`` (the start-up wait is what was left of startup_ms)."""
    faults = rec.get("faults") or []
    if not faults or deal.done or faults[0].get("seat") != deal.to_move:
        return False
    f = faults[0]
    message = str(f.get("message", ""))
    if f.get("kind") == "start" or "hello" in message:
        return False
    if f.get("kind") == "timeout" and "no complete line within" in message:
        return f"within {limit_ms / 1000:g} s" in message
    return True


def _logged_answer(fault: dict) -> str:
    """The action of a logged faulty answer, else its evidence."""
    try:
        return str(json.loads(fault.get("evidence", ""))["action"])
    except (ValueError, KeyError, TypeError):
        return str(fault.get("evidence", ""))


def seat_script(log: str | Path, partie: int, deal: int, seat: int) -> SeatScript:
    """The lines ``seat`` was sent in deal ``deal`` of partie ``partie`` of ``log``, rebuilt."""
    records, problems = read_log(log)
    if not records or records[0].get("type") != "header":
        raise ReplayError(f"{log}: not a marias log" + (f" ({problems[0]})" if problems else ""))
    header = records[0]
    if seat not in (0, 1, 2):
        raise ReplayError(f"seat {seat} is not 0, 1 or 2")
    deals = [r for r in records if r.get("type") == "deal"]
    target = next((r for r in deals if r.get("partie") == partie and r.get("deal") == deal), None)
    if target is None:
        have = sorted({r.get("partie") for r in deals})
        raise ReplayError(f"{log}: no deal {deal} in partie {partie} (partie logged: {have})")
    lim = _limits(header, seat)
    limits = [_limits(header, s) for s in range(3)]
    labels = [b.get("label", "") for b in header.get("bots", [])]
    script = SeatScript(header, partie, deal, seat, rec=target)
    script.lines.append(encode_line(M.hello(header.get("referee_version", __version__), lim)))
    script.lines.append(encode_line(M.partie_start(partie, seat, header.get("deals_per_partie", 12), labels)))
    rid = 0
    totals = [0, 0, 0]
    clocks: list[Clock] = []
    current = None
    for rec in deals:
        if rec.get("partie") != current:
            current = rec.get("partie")
            totals = [0, 0, 0]
            clocks = [Clock(lm["move_ms"], float(lm["bank_ms"]) if lm.get("bank_ms") else None, lm.get("increment_ms", 0))
                      for lm in limits]
        is_target = rec is target
        d = Deal(parse_deck(" ".join(rec["deck"])), rec["forhont"])
        n, index = rec["partie"], rec["deal"]
        if is_target:
            script.lines.append(encode_line(M.deal_start(n, index, seat, d.forhont, d.dealer, rec.get("cut"), totals)))
        for k, dec in enumerate(rec["decisions"]):
            rid += 1
            s = d.to_move
            limit_ms = clocks[s].limit_ms()
            if is_target and s == seat:
                line = request_line(rid, n, index, d.decision, d.view(s), [a.code for a in d.legal_actions()],
                                    int(limit_ms), totals)
                script.requests[len(script.lines)] = (json.loads(line), dec["action"], k, None)
                script.lines.append(line)
            if dec.get("ms") is not None:
                clocks[s].spend(dec["ms"])
            decision, before_tricks, before_hl = d.decision, len(d.tricks), len(d.hlasky)
            d.apply(dec["action"])
            if is_target:
                script.lines += event_lines(n, index, d, decision, before_tricks, before_hl)[seat]
        faults = rec.get("faults") or []
        if faults and _fault_at_request(rec, d, clocks[d.to_move].limit_ms() if not d.done else 0):
            rid += 1
            if is_target and d.to_move == seat:
                f = faults[0]
                line = request_line(rid, n, index, d.decision, d.view(seat), [a.code for a in d.legal_actions()],
                                    int(clocks[seat].limit_ms()), totals)
                script.requests[len(script.lines)] = (json.loads(line), _logged_answer(f), len(rec["decisions"]),
                                                      str(f.get("kind", "")))
                script.lines.append(line)
        if faults:
            f = faults[0]
            d.fault(f["seat"], str(f.get("kind", "")), str(f.get("message", "")), str(f.get("evidence", "")), f.get("elapsed"))
            if is_target and f["seat"] == seat:
                return script  # the faulting bot is ended at once: it is sent nothing more
            if is_target:
                script.lines.append(encode_line(M.event(n, index, M.fault_event(f["seat"], str(f.get("kind", ""))))))
        if is_target:
            script.lines.append(encode_line(M.deal_end(n, index, seat, d.view(seat), d.result.to_dict())))
            return script
        pay = rec.get("result", {}).get("payments") or [0, 0, 0]
        totals = [totals[i] + pay[i] for i in range(3)]
    raise AssertionError("unreachable: the target deal is among the deals")


def replay(script: SeatScript, command: str, *, move_ms: int | None = None, work_dir: Path | None = None,
           sandbox: str = "auto") -> list[Step]:
    """Send ``script`` to the bot of ``command`` and collect its answers beside the logged ones."""
    spec = BotSpec.parse(command, seed=f"replay:{script.partie}:{script.deal}")
    lim = _limits(script.header, script.seat)
    work = work_dir or Path(tempfile.mkdtemp(prefix="marias-replay-"))
    config = MatchConfig(bots=[spec, spec, spec], limits=Limits(startup_ms=lim.get("startup_ms", 10_000),
                                                                move_ms=move_ms or lim.get("move_ms", 2000)),
                         work_dir=work, sandbox=sandbox)
    player = Player(script.seat, spec, config, Poller())
    ref = Referee(config)
    ref.sandbox = resolve_mode(config.sandbox)  # the bot runs in its sandbox, as in a match
    ref._sandbox_players([player], [])
    steps: list[Step] = []
    try:
        player.start()
        hello, partie_line, *rest = script.lines
        steps.append(Step(hello))
        try:
            answer, _ = player.io.request_lines([hello], lim.get("startup_ms", 10_000) / 1000)
            if answer.get("type") != "hello":
                raise BotFault(FaultKind.UNEXPECTED, f"expected a hello answer, got type {answer.get('type')!r}",
                               json.dumps(answer))
            player.name = str(answer.get("name") or spec.label)[:80]
            player.phase = "move"
        except BotFault as f:
            steps[-1].fault = describe(ref.fault_context(player, f, script.partie, script.deal))
            return steps
        pending = [partie_line]
        base = 2
        for i, line in enumerate(rest):
            req = script.requests.get(base + i)
            if req is None:
                pending.append(line)
                steps.append(Step(line))
                continue
            request, logged, applied, logged_fault = req
            step = Step(line, request, logged, logged_fault=logged_fault)
            steps.append(step)
            timeout = (move_ms or request["time_ms"]) / 1000
            player.last_limit_ms = timeout * 1000
            texts = request["legal"]
            try:
                answer, elapsed = player.io.request_lines([*pending, line], timeout)
                pending = []
                step.answer = answer.get("action") if isinstance(answer.get("action"), str) else json.dumps(answer)
                answer_index(answer, request["id"], texts, script.seat, elapsed)
            except BotFault as f:
                pending = []
                rule = rule_broken(_deal_at(script, applied), f) if f.kind is FaultKind.ILLEGAL else None
                step.fault = describe(ref.fault_context(player, f, script.partie, script.deal, texts, rule))
                if f.kind not in (FaultKind.ILLEGAL, FaultKind.WRONG_ID, FaultKind.UNEXPECTED):
                    break  # the bot is not in step any more
        if pending and player.ready:
            player.io.send_lines(pending)
    finally:
        if player.io is not None and player.ready:
            with contextlib.suppress(BotFault):  # it may be gone already
                player.io.send_lines([encode_line(M.BYE)])
        player.close()
    return steps


def _deal_at(script: SeatScript, applied: int) -> Deal:
    """The logged deal with its first ``applied`` decisions (for the engine's check of an answer)."""
    rec = script.rec
    d = Deal(parse_deck(" ".join(rec["deck"])), rec["forhont"])
    for dec in rec["decisions"][:applied]:
        d.apply(dec["action"])
    return d


def report_lines(script: SeatScript, steps: list[Step]) -> list[str]:
    bot = (script.header.get("bots") or [{}] * 3)[script.seat]
    out = [f"replay of partie {script.partie} deal {script.deal}, seat {script.seat} "
           f"(logged bot: {bot.get('name') or bot.get('label', '?')})"]
    asked = [s for s in steps if s.request is not None]
    for s in asked:
        r = s.request
        mark = "same" if s.same else "DIFFERENT" if s.answer is not None else "-"
        logged = shorten(s.logged or "", 40) + (f" (fault {s.logged_fault})" if s.logged_fault else "")
        answer = shorten(s.answer, 40) if s.answer is not None else "(no answer)"
        out.append(f"  request {r['id']:>4} {r['decision']:8} logged: {logged:<26} bot: {answer:<26} {mark}")
    for s in steps:
        if s.fault:
            out.append(s.fault)
    same = sum(1 for s in asked if s.same)
    out.append(f"{same} of {len(asked)} answers as logged; {sum(1 for s in steps if s.fault)} fault(s)")
    return out
