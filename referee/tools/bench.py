"""Benchmarks (``marias bench ...``).  Speed is measured here, never asserted in tests."""

from __future__ import annotations

import gc
import os
import random
import statistics
import time

from ..rules.partie import Partie, partie_seed


def _uniform(rng: random.Random):
    def choose(deal):
        legal = deal.legal_actions()
        return legal[rng.randrange(len(legal))]
    return choose


def _trump_games(rng: random.Random):
    """Random legal play steered into trump games that are played out: Barva, dobrá,
    a first-round flek by the defence, then uniform choices (every card played)."""
    def choose(deal):
        legal = deal.legal_actions()
        phase = deal.phase
        if phase == "talon":
            pick = [a for a in legal if a.kind == "barva"]
        elif phase == "answer":
            pick = [a for a in legal if a.kind == "dobra"]
        elif phase == "flek":
            pick = [a for a in legal if a.words] if deal.to_move != deal.actor and not deal.tricks else []
            pick = pick or [legal[0]]
        else:
            pick = legal
        pick = pick or legal
        return pick[rng.randrange(len(pick))]
    return choose


def _self_play(make, deals: int, seed: int, r: int, view: bool) -> tuple[float, float, int, int]:
    """One repeat: (wall s, cpu s, decisions, deals) of self-play over whole partie;
    with ``view`` the mover's view is built at each decision, as the referee does."""
    choose = make(random.Random(seed * 1000 + r))
    n_deals = n_dec = 0
    w0, c0 = time.perf_counter(), time.process_time()
    p = 0
    while n_deals < deals:
        partie = Partie(seed=f"bench:{seed}:{r}:{p}")
        p += 1
        for deal in partie.iter_deals():
            if view:
                while not deal.done:
                    deal.view(deal.to_move)
                    deal.apply(choose(deal))
                    n_dec += 1
            else:
                while not deal.done:
                    deal.apply(choose(deal))
                    n_dec += 1
            n_deals += 1
            if n_deals >= deals:
                break
    return time.perf_counter() - w0, time.process_time() - c0, n_dec, n_deals


def engine(deals: int = 3000, repeats: int = 5, seed: int = 1, mixes: tuple[str, ...] = ("uniform", "trump_games"),
           views: bool = True) -> dict:
    """Random legal self-play in-process: deals per second and microseconds per decision.

    Each repeat plays ``deals`` deals (whole partie of 12) choosing uniformly among
    the legal actions (mostly short betl/durch deals, as uniform choice announces
    them most), and again steered into trump games played to the last trick; the
    figures are medians over the repeats.  With ``views``, the trump games are also
    played building the mover's view at each decision (legal + view + apply, the
    engine's share of a referee's decision), in the same repeats, and the view's
    cost is the difference (CPU time).
    """
    out = {"benchmark": "engine", "deals": deals, "repeats": repeats}
    med = statistics.median
    for mix, make in (("uniform", _uniform), ("trump_games", _trump_games)):
        if mix not in mixes:
            continue
        rates, per_decision, cpu_per_decision, per_deal, with_view = [], [], [], [], []
        for r in range(repeats):
            wall, cpu, n_dec, n_deals = _self_play(make, deals, seed, r, False)
            rates.append(n_deals / wall)
            per_decision.append(wall / n_dec * 1e6)
            cpu_per_decision.append(cpu / n_dec * 1e6)
            per_deal.append(n_dec / n_deals)
            if views and mix == "trump_games":
                _w, v_cpu, v_dec, _n = _self_play(make, deals, seed, r, True)
                with_view.append(v_cpu / v_dec * 1e6)
        key = "" if mix == "uniform" else "trump_games_"
        out[key + "deals_per_second"] = round(med(rates), 1)
        out[key + "us_per_decision"] = round(med(per_decision), 2)
        out[key + "cpu_us_per_decision"] = round(med(cpu_per_decision), 2)
        out[key + "decisions_per_deal"] = round(med(per_deal), 1)
        if with_view:
            out[key + "cpu_us_per_decision_with_view"] = round(med(with_view), 2)
            out[key + "cpu_us_per_view"] = round(med(with_view) - med(cpu_per_decision), 2)
    return out


ECHO_BOT = "import sys\nr=sys.stdin.buffer.readline\nw=sys.stdout.buffer\nwhile True:\n    l=r()\n    if not l: break\n    w.write(l); w.flush()\n"


def _typical_request() -> dict:
    """A real play request from the middle of a trump game (what the referee sends most)."""
    from protocol import messages as M

    from ..rules.deal import PLAY
    for seed in range(100):
        partie = Partie(seed=f"typical:{seed}")
        deal = partie.next_deal()
        rng = random.Random(seed)
        while not deal.done and deal.phase != PLAY:
            legal = deal.legal_actions()
            pref = [a for a in legal if a.kind in ("barva", "dobra", "contract", "trump")]
            deal.apply(rng.choice(pref or legal))
        for _ in range(10):
            if deal.done:
                break
            deal.apply(deal.legal_actions()[0])
        if not deal.done:
            return M.request(1, 1, 1, deal.decision, deal.view(deal.to_move), [str(a) for a in deal.legal_actions()], 2000)
    raise RuntimeError("no trump game found for the typical request")


def raw_round_trip(n: int = 3000, message: dict | None = None) -> tuple[float, float]:
    """Wall seconds and this process's CPU seconds per round trip of one request-sized line
    through a trivial echo process (blocking pipes, no parsing: the floor any referee pays)."""
    import json
    import subprocess
    import sys
    line = (json.dumps(message or _typical_request(), separators=(",", ":")) + "\n").encode()
    import os
    p = subprocess.Popen([sys.executable, "-c", ECHO_BOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    wfd, rfd = p.stdin.fileno(), p.stdout.fileno()

    def trip() -> None:
        os.write(wfd, line)
        got = 0
        while True:
            chunk = os.read(rfd, 1 << 16)
            got += len(chunk)
            if chunk.endswith(b"\n") and got >= len(line):
                return

    try:
        for _ in range(200):  # warm up
            trip()
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            trip()
        return (time.perf_counter() - t0) / n, (time.process_time() - c0) / n
    finally:
        p.stdin.close()
        p.wait()


#: A bot that answers without parsing JSON: the first or the last legal action, chosen by the
#: decision and the request id so that the deals are of every kind and mostly played out
#: (Barva answered dobrá, so trump games to the last trick; a durch, a betl or zlidu now and then;
#: a flek every third time).  Choosing by the id's parity alone made every deal a durch.
#: ``_LAST_EVERY[decision]``: the last legal action is chosen when the id is a multiple of it
#: (0: never); :class:`_InstantSeat` applies the same table in this process.
_LAST_EVERY = {"trump": 7, "talon": 5, "answer": 0, "contract": 2, "flek": 3, "play": 2}
TRIVIAL_BOT = r"""
import re, sys
r = sys.stdin.buffer.readline
w = sys.stdout.buffer
rid = re.compile(rb'"id":(\d+)')
LAST_EVERY = LAST_EVERY_TABLE
while True:
    line = r()
    if not line or line.startswith(b'{"type":"bye"'):
        break
    if line.startswith(b'{"type":"request"'):
        n = rid.search(line).group(1)
        i = line.index(b'"decision":"') + 12
        every = LAST_EVERY.get(line[i:line.index(b'"', i)], 2)
        if not every or int(n) % every:  # the first legal action
            i = line.rindex(b'"legal":["') + 10
            action = line[i:line.index(b'"', i)]
        else:  # the last
            j = line.rindex(b'"]}')
            action = line[line.rindex(b'"', 0, j) + 1:j]
        w.write(b'{"type":"action","id":' + n + b',"action":"' + action + b'"}\n')
        w.flush()
    elif line.startswith(b'{"type":"hello"'):
        w.write(b'{"type":"hello","protocol":1,"name":"trivial","version":"1"}\n')
        w.flush()
""".replace("LAST_EVERY_TABLE", repr({k.encode(): v for k, v in _LAST_EVERY.items()}))


class _InstantSeat:
    """A seat in the referee's own process that answers at once, as :data:`TRIVIAL_BOT` would,
    without decoding the lines: the referee's work without the pipes (its own few string
    scans per request are the only bot work counted)."""

    alive, closed, stderr_tail, pid = True, False, "", None

    def start(self) -> None:
        """Nothing to start: the seat is this object."""

    def close(self) -> None:
        """Nothing to end."""

    kill = close

    def send_lines(self, lines: list[str]) -> None:
        """Lines that ask nothing: the trivial bot reads them and drops them, and so does this seat."""

    def request_lines(self, lines: list[str], timeout_s: float | None) -> tuple[dict, float]:
        line = lines[-1]
        if line.startswith('{"type":"hello"'):
            return {"type": "hello", "protocol": 1, "name": "instant", "version": "1"}, 0.0
        i = line.index('"id":') + 5
        rid = int(line[i:line.index(",", i)])
        i = line.index('"decision":"') + 12
        every = _LAST_EVERY.get(line[i:line.index('"', i)], 2)
        if not every or rid % every:  # the first legal action
            i = line.rindex('"legal":["') + 10
            action = line[i:line.index('"', i)]
        else:  # the last
            j = line.rindex('"]}')
            action = line[line.rindex('"', 0, j) + 1:j]
        return {"type": "action", "id": rid, "action": action}, 0.0


class _BareSeat:
    """The trivial bot program behind a bare pipe: one ``os.write`` of the lines, then blocking
    reads up to the answer's newline; no poll, no deadline, no stderr, no checks.  What the
    referee pays for a real round trip (and for sleeping and waking once per decision)
    without :mod:`referee.seats.process`; never a way to run untrusted bots."""

    closed, stderr_tail = False, ""

    def __init__(self) -> None:
        self._popen = None

    @property
    def alive(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen else None

    def start(self) -> None:
        import subprocess
        import sys
        self._popen = subprocess.Popen([sys.executable, "-c", TRIVIAL_BOT], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, bufsize=0)

    def close(self) -> None:
        if self._popen is not None:
            self._popen.stdin.close()
            self._popen.wait()
            self._popen.stdout.close()
            self.closed = True

    kill = close

    def send_lines(self, lines: list[str]) -> None:
        os.write(self._popen.stdin.fileno(), ("\n".join(lines) + "\n").encode())

    def request_lines(self, lines: list[str], timeout_s: float | None) -> tuple[dict, float]:
        import orjson
        self.send_lines(lines)
        start = time.monotonic()
        fd, got = self._popen.stdout.fileno(), b""
        while not got.endswith(b"\n"):
            got += os.read(fd, 65536)
        return orjson.loads(got), time.monotonic() - start


def _referee_run(specs, partie: int, seed: int, sandbox: str = "auto"):
    import tempfile
    from pathlib import Path

    from ..matches.match import Limits, MatchConfig, Referee
    with tempfile.TemporaryDirectory(prefix="marias-bench-") as work:  # the bots' stderr, removed afterwards
        config = MatchConfig(bots=specs, partie=partie, seed=f"bench:{seed}", limits=Limits(move_ms=10_000),
                             keep_partie=True, work_dir=Path(work), sandbox=sandbox)
        ref = Referee(config)
        result = ref.run()
    if result.faults:
        raise RuntimeError(f"the benchmark's bots faulted: {result.faults[:3]}")
    decisions = sum(s.decisions for s in result.stats)
    bot_ms = sum(s.total_ms for s in result.stats)
    return ref, result, decisions, bot_ms


def _engine_replay_cpu(parties) -> tuple[float, int]:
    """CPU seconds the engine alone spends on the decisions of ``parties`` (replayed from the
    same decks: legal actions, the mover's view, apply), and the number of decisions."""
    cpu = 0.0
    decisions = 0
    for played in parties:
        partie = Partie(played.initial_deck, seed=played.seed)  # the cuts are replayed as played
        for i, original in enumerate(played.deals):
            deal = partie.next_deal(played.cuts[i])
            history = original.history
            t0 = time.process_time()
            for seat, action in history:
                deal.legal_actions()
                deal.view(seat)
                deal.apply(action)
            cpu += time.process_time() - t0
            decisions += len(history)
    return cpu, decisions


#: The smallest bot that answers hello: its start-up is almost all the sandbox's own.
SH_BOT = ["/bin/sh", "-c", 'read line; echo \'{"type":"hello","protocol":1,"name":"sh","version":"1"}\'; cat >/dev/null']


def _trivial_process(mode: str, argv: list[str] | None = None):
    import sys

    from ..seats.process import BotCommand, BotProcess
    from ..seats.sandbox import SandboxConfig

    return BotProcess(BotCommand(argv or [sys.executable, "-c", TRIVIAL_BOT], sandbox=SandboxConfig(mode=mode)))


def _start_times(mode: str, argv: list[str] | None = None) -> tuple[float, float, float]:
    """One trivial bot under sandbox ``mode``: (seconds from start to its hello answer,
    seconds to close it, the referee's CPU seconds for both)."""
    from protocol import messages as M

    from .. import __version__

    proc = _trivial_process(mode, argv)
    c0, t0 = time.process_time(), time.perf_counter()
    proc.start()
    proc.request(M.hello(__version__, {}), 30)
    t1 = time.perf_counter()
    proc.close()
    return t1 - t0, time.perf_counter() - t1, time.process_time() - c0


def _round_trip(mode: str, n: int = 1000) -> float:
    """Seconds per request and answer with one trivial bot under sandbox ``mode`` (after its start)."""
    from protocol import messages as M

    from .. import __version__

    proc = _trivial_process(mode)
    proc.start()
    try:
        proc.request(M.hello(__version__, {}), 30)
        req = M.request(1, 1, 1, "play", {"hand": []}, ["play:7h", "play:8h"], 2000)
        t0 = time.perf_counter()
        for i in range(n):
            req["id"] = i + 1
            proc.request(req, 30)
        return (time.perf_counter() - t0) / n
    finally:
        proc.close()


def sandbox_cost(starts: int = 20, partie: int = 2, seed: int = 1) -> dict:
    """The sandbox's cost, with and without it in the same run (alternated): a bot's
    start-up (start to hello answer), one request's round trip, and the referee's wall
    and CPU time per decision with three trivial bots."""
    import statistics
    import sys

    from ..matches.match import BotSpec
    from ..seats.sandbox import bwrap_status

    if bwrap_status()[0] is None:
        return {"sandbox_available": False, "sandbox_why": bwrap_status()[1]}
    runs: dict[str, list[tuple[float, float, float]]] = {"none": [], "bwrap": [], "sh-none": [], "sh-bwrap": []}
    for i in range(starts):
        for mode in (("none", "bwrap") if i % 2 == 0 else ("bwrap", "none")):
            runs[mode].append(_start_times(mode))
            runs["sh-" + mode].append(_start_times(mode, SH_BOT))
    trips: dict[str, list[float]] = {"none": [], "bwrap": []}
    for i in range(6):
        for mode in (("none", "bwrap") if i % 2 == 0 else ("bwrap", "none")):
            trips[mode].append(_round_trip(mode))
    wall: dict[str, list[float]] = {"none": [], "bwrap": []}
    cpu: dict[str, list[float]] = {"none": [], "bwrap": []}
    trivial = [BotSpec(label="trivial", argv=[sys.executable, "-c", TRIVIAL_BOT]) for _ in range(3)]
    for mode in ("none", "bwrap", "bwrap", "none", "none", "bwrap"):
        ref, _, decisions, _ = _referee_run(trivial, partie, seed, sandbox=mode)
        wall[mode].append(ref.play_seconds / decisions)
        cpu[mode].append(ref.play_cpu_seconds / decisions)

    def med(mode: str, k: int) -> float:
        return statistics.median(r[k] for r in runs[mode])

    out: dict = {"sandbox_available": True, "sandbox_starts_per_mode": starts}
    for mode in ("none", "bwrap"):
        out[f"startup_ms_{mode}"] = round(med(mode, 0) * 1000, 2)
        out[f"referee_cpu_ms_per_bot_start_{mode}"] = round(med(mode, 2) * 1000, 2)
        out[f"sh_startup_ms_{mode}"] = round(med("sh-" + mode, 0) * 1000, 2)
        out[f"wall_us_per_decision_{mode}"] = round(statistics.median(wall[mode]) * 1e6, 1)
        out[f"referee_cpu_us_per_decision_{mode}"] = round(min(cpu[mode]) * 1e6, 1)
        out[f"us_round_trip_{mode}"] = round(statistics.median(trips[mode]) * 1e6, 1)
    out["startup_ms_added"] = round(out["startup_ms_bwrap"] - out["startup_ms_none"], 2)
    out["sh_startup_ms_added"] = round(out["sh_startup_ms_bwrap"] - out["sh_startup_ms_none"], 2)
    out["wall_per_decision_ratio_bwrap_to_none"] = round(out["wall_us_per_decision_bwrap"] / out["wall_us_per_decision_none"], 3)
    out["cpu_per_decision_ratio_bwrap_to_none"] = round(out["referee_cpu_us_per_decision_bwrap"] / out["referee_cpu_us_per_decision_none"], 3)
    out["round_trip_ratio_bwrap_to_none"] = round(out["us_round_trip_bwrap"] / out["us_round_trip_none"], 3)
    out["sandbox_note"] = ("startup = BotProcess.start() to the hello answer of a trivial Python bot (median; sh_: a /bin/sh "
                           "bot, so nearly all of it is the sandbox's own); per decision = the referee's wall (median) and "
                           "own CPU (min) per decision with three trivial bots, 3 matches per mode; round trip = one request "
                           "and answer with one trivial bot, 6 blocks of 1000 per mode (median); modes alternated; "
                           "goal: startup_ms_added <= 50, per-decision ratios ~ 1")
    return out


def referee(partie: int = 10, seed: int = 1, runs: int = 5, sandbox: str = "auto") -> dict:
    """The referee's own CPU per decision with trivial bots against the engine's CPU per
    decision on the same deals (each the minimum of ``runs`` runs), their ratio, and for
    context the wall time with three external ``random`` bots and a raw echo round trip;
    with the sandbox's cost (:func:`sandbox_cost`) measured in the same run."""
    import sys

    from ..matches.match import BotSpec
    from ..seats.sandbox import resolve_mode

    mode = resolve_mode(sandbox)
    trivial = [BotSpec(label="trivial", argv=[sys.executable, "-c", TRIVIAL_BOT]) for _ in range(3)]
    instant = [BotSpec(label="instant", argv=[], seat=_InstantSeat) for _ in range(3)]
    bare = [BotSpec(label="bare", argv=[], seat=_BareSeat) for _ in range(3)]
    ref_cpu, engine_cpu, instant_cpu, bare_cpu = [], [], [], []
    t_wall = []
    for _ in range(max(1, runs)):
        ref, result, decisions, _ = _referee_run(trivial, partie, seed, sandbox=mode)
        ref_cpu.append(ref.play_cpu_seconds / decisions)
        t_wall.append(ref.play_seconds / decisions)
        cpu, n = _engine_replay_cpu(result.parties)
        if n != decisions:
            raise RuntimeError(f"the replay made {n} decisions, the match {decisions}")
        engine_cpu.append(cpu / n)
        iref, _, n, _ = _referee_run(instant, partie, seed, sandbox="none")
        if n != decisions:
            raise RuntimeError(f"the instant seats made {n} decisions, the trivial bots {decisions}")
        instant_cpu.append(iref.play_cpu_seconds / n)
        bref, _, n, _ = _referee_run(bare, partie, seed, sandbox="none")
        if n != decisions:
            raise RuntimeError(f"the bare pipes made {n} decisions, the trivial bots {decisions}")
        bare_cpu.append(bref.play_cpu_seconds / n)
    specs = [BotSpec.parse("random", seed=f"bench:{i}") for i in range(3)]
    rref, rresult, r_decisions, bot_ms = _referee_run(specs, partie, seed, sandbox=mode)
    deals = sum(len(p.deals) for p in rresult.parties)
    raw, raw_cpu = raw_round_trip()
    ref_us, engine_us, instant_us = min(ref_cpu) * 1e6, min(engine_cpu) * 1e6, min(instant_cpu) * 1e6
    bare_us = min(bare_cpu) * 1e6
    return {
        "benchmark": "referee",
        "partie": partie,
        "runs": runs,
        "decisions_trivial": decisions,
        "referee_cpu_us_per_decision": round(ref_us, 1),
        "engine_cpu_us_per_decision": round(engine_us, 1),
        "ratio_referee_to_engine_cpu": round(ref_us / engine_us, 2),
        "goal_ratio_at_most": 3.0,
        "instant_seats_referee_cpu_us_per_decision": round(instant_us, 1),
        "ratio_instant_seats_to_engine_cpu": round(instant_us / engine_us, 2),
        "bare_pipes_referee_cpu_us_per_decision": round(bare_us, 1),
        "ratio_bare_pipes_to_engine_cpu": round(bare_us / engine_us, 2),
        "bot_processes_cpu_us_per_decision": round(ref_us - instant_us, 1),
        "process_layer_cpu_us_per_decision": round(ref_us - bare_us, 1),
        "trivial_wall_us_per_decision": round(min(t_wall) * 1e6, 1),
        "us_raw_echo_round_trip": round(raw * 1e6, 1),
        "us_raw_echo_round_trip_cpu": round(raw_cpu * 1e6, 1),
        "ratio_if_bot_processes_cost_raw_echo": round((instant_us + raw_cpu * 1e6) / engine_us, 2),
        "random_deals_per_second": round(deals / rref.play_seconds, 1),
        "random_wall_us_per_decision": round(rref.play_seconds / r_decisions * 1e6, 1),
        "random_us_waiting_for_bots_per_decision": round(bot_ms * 1000 / r_decisions, 1),
        "sandbox": mode,
        **sandbox_cost(seed=seed),
        "note": ("referee cpu = the referee process's own user+system CPU (time.process_time, i.e. getrusage of this "
                 "process, not of the bots) from the end of the handshakes to the last deal_end, with trivial bots "
                 "(they answer the first or the last legal action without parsing JSON); engine cpu = legal actions + "
                 "view + apply for the same decisions of the same deals, in-process; each the minimum over the runs. "
                 "instant seats = the same match with seats in the referee's process that answer as the trivial bots "
                 "do, without pipes (the rules, the messages and the bookkeeping); bare pipes = the trivial bot "
                 "programs behind a bare blocking pipe, no poll, deadline or checks (adds a real round trip and the "
                 "cost of sleeping and waking once per decision, with the referee's own work in between); bot "
                 "processes = referee - instant seats; process layer = referee - bare pipes (referee/seats/process.py: "
                 "the poll, the deadlines, stderr, exits, bounded lines). "
                 "raw = a request-sized line through an echo process (blocking pipes), wall and the referee side's "
                 "CPU: ratio_if_bot_processes_cost_raw_echo is what the referee would score if its bot processes cost "
                 "no more than that bare round trip, the floor this machine sets for the goal"),
    }


def write_random_log(path, deals: int = 3000, seed: int = 1) -> int:
    """A log of ``deals`` deals (whole partie) of uniformly random legal play, written
    without fsync; returns the number of deals.  The input of ``bench validate``."""
    from ..logs.log import LogWriter

    rng = random.Random(f"validate-bench:{seed}")
    bots = [{"seat": s, "command": "builtin:uniform", "name": "uniform", "version": "1", "exe_sha256": None} for s in range(3)]
    n = p = 0
    match_seed = f"validate-bench:{seed}"
    with LogWriter(path, {"seed": match_seed, "bots": bots, "limits": {"in_process": True},
                          "fault_policy": {"in_process": True}}, fsync=False) as w:
        while n < deals:
            p += 1
            partie = Partie(seed=partie_seed(match_seed, p))
            w.partie_start(p)
            for deal in partie.iter_deals():
                while not deal.done:
                    legal = deal.legal_actions()
                    deal.apply(legal[rng.randrange(len(legal))])
                w.deal(p, len(partie.deals), deal, partie.cuts[-1], deal.deck)
                n += 1
            w.partie_end(p, partie.totals(), partie.places())
    return n


def validate(deals: int = 3000, log=None, repeats: int = 5, seed: int = 1, jobs: int | None = None) -> dict:
    """Validated deals per second (``marias validate`` on one large log: reading, parsing,
    replaying and comparing every deal), in one process and in ``jobs`` processes, and the
    engine's random self-play speed (``bench engine``), measured alternately in the same run."""
    import os
    import tempfile
    from pathlib import Path

    from ..logs.validate import validate_file

    jobs = jobs or os.cpu_count() or 1
    tmp = None
    if log is None:
        tmp = tempfile.TemporaryDirectory(prefix="marias-bench-")
        log = Path(tmp.name) / "bench.jsonl"
        t0 = time.perf_counter()
        write_random_log(log, deals, seed)
        write_s = time.perf_counter() - t0
    else:
        write_s = None
    try:
        n = None
        v_wall, v_cpu, p_wall, e_wall, e_cpu = [], [], [], [], []
        for r in range(repeats):  # interleaved, so all see the same machine load
            w0, c0 = time.perf_counter(), time.process_time()
            report = validate_file(log)
            w1, c1 = time.perf_counter(), time.process_time()
            n = report.deals
            v_wall.append(n / (w1 - w0))
            v_cpu.append(n / max(c1 - c0, 1e-9))
            if jobs > 1:
                w0 = time.perf_counter()
                preport = validate_file(log, jobs=jobs)
                p_wall.append(n / (time.perf_counter() - w0))
                if preport.to_dict() != report.to_dict():
                    raise RuntimeError("parallel validation disagrees with the single-process report")
            w0, c0 = time.perf_counter(), time.process_time()
            engine(deals=n, repeats=1, seed=seed + r, mixes=("uniform",), views=False)
            w1, c1 = time.perf_counter(), time.process_time()
            e_wall.append(n / (w1 - w0))
            e_cpu.append(n / max(c1 - c0, 1e-9))
        size = Path(log).stat().st_size
    finally:
        if tmp is not None:
            tmp.cleanup()
    med = statistics.median
    return {
        "benchmark": "validate",
        "log": "generated (random legal play)" if write_s is not None else str(log),
        "deals": n,
        "log_bytes": size,
        "valid": report.ok,
        "repeats": repeats,
        "validate_deals_per_second": round(med(v_wall), 1),
        "engine_deals_per_second": round(med(e_wall), 1),
        "ratio_validate_to_engine": round(med(v_wall) / med(e_wall), 2),
        "validate_deals_per_cpu_second": round(med(v_cpu), 1),
        "engine_deals_per_cpu_second": round(med(e_cpu), 1),
        "ratio_validate_to_engine_cpu": round(med(v_cpu) / med(e_cpu), 2),
        "jobs": jobs,
        "validate_jobs_deals_per_second": round(med(p_wall), 1) if p_wall else None,
        "ratio_validate_jobs_to_engine": round(med(p_wall) / med(e_wall), 2) if p_wall else None,
        "all_validate_deals_per_second": [round(x, 1) for x in v_wall],
        "all_engine_deals_per_second": [round(x, 1) for x in e_wall],
        "write_log_deals_per_second": round(n / write_s, 1) if write_s else None,
        "note": "validate = read + parse + replay + compare every deal, one process (and in `jobs` processes: "
                "partie split between them); engine = bench engine, random legal self-play without a log, one "
                "process; measured alternately in one run; cpu = process time, robust to other load",
    }


# ------------------------------------------------------------------ the search bot
def _robot_play_to(deal, robot, tricks_left: int) -> bool:
    """Robots bid and play ``deal`` until ``tricks_left`` tricks remain; False if it ended first."""
    while not deal.done and (deal.phase != "play" or len(deal.tricks) < 10 - tricks_left):
        legal = deal.legal_actions()
        texts = [a.code for a in legal]
        choice = robot.decide(deal.decision, deal.view(deal.to_move), texts)
        if choice == "lay":
            choice = next(t for t in texts if t != "lay")
        deal.apply(legal[texts.index(choice)])
    return not deal.done


def _load_solver(path: str):
    """The ``Solver`` class of a solver module given by its file (a pinned old copy
    of :mod:`bots.search_solve`, e.g. ``tests/reference_solver.py`` or the output of
    ``git show main:bots/search_solve.py``), loaded as a module of :mod:`bots` so its
    relative imports resolve."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("bots._bench_baseline_solver", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"not a Python module: {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod.Solver


def search(positions: int = 12, seed: int = 1, partie: int = 1, tricks: tuple[int, ...] = (3, 4, 5, 6, 7),
           ms: float | None = None, baseline: str | None = None) -> dict:
    """The search bot's figures: exact solves of full-information positions taken
    from robot self-play (trump games at each number of tricks left, betl and durch
    from their first trick), CPU time per solve and solver nodes per CPU second;
    then ``partie`` partie of the bot (its limit ``ms`` per decision, default
    :data:`bots.SEARCH_MS`) against two robots:
    worlds per searched card play (exact solves), per played-out card play (the
    first tricks, :mod:`bots.search_rollout`) and CPU time per decision.

    ``baseline``: the file of another solver module (an old copy); each position is
    then solved by both, one after the other in the same run, the values must be
    equal, and ``baseline_*`` figures and the ratio of CPU time (baseline / current)
    per category are reported."""
    from bots import SEARCH_MS
    from bots.robot import Robot
    from bots.search import SearchBot
    from bots.search_solve import Solver, game_of_deal, position_of_deal

    ms = SEARCH_MS if ms is None else ms
    robot = Robot()
    out: dict = {"benchmark": "search", "positions": positions}
    total_nodes = 0
    total_cpu = 0.0
    Base = _load_solver(baseline) if baseline else None
    base_times: list[float] = []

    def timed(cls, deal) -> tuple[float, dict, int]:
        gc.collect()  # neither solve pays for collecting the other's tables
        solver = cls(game_of_deal(deal))
        t0 = time.process_time()
        values = solver.solve(position_of_deal(deal))
        return time.process_time() - t0, values, solver.nodes

    def solve_at(kind: str, left: int) -> tuple[list[float], list[int]]:
        nonlocal total_nodes, total_cpu, base_times
        times, nodes = [], []
        base_times = []
        i = 0
        while len(times) < positions and i < positions * 200:
            deal = Partie(seed=f"bench-search:{seed}:{kind}:{left}:{i}").next_deal()
            i += 1
            # the robots' bidding decides the game; keep the deals of the kind asked
            if not _robot_play_to(deal, robot, 10) or deal.game != kind:
                continue
            if not _robot_play_to(deal, robot, left):
                continue
            if Base is not None and len(times) % 2 == 0:
                el_base, expect, _n = timed(Base, deal)
            el, got, solved_nodes = timed(Solver, deal)
            if Base is not None and len(times) % 2 == 1:
                el_base, expect, _n = timed(Base, deal)  # in turn first and second, so neither has the warmer caches
            if Base is not None:
                base_times.append(el_base)
                if got != expect:
                    raise AssertionError(f"the solvers differ on {deal!r}: {got} != baseline {expect}")
            times.append(el)
            nodes.append(solved_nodes)
            total_nodes += solved_nodes
            total_cpu += el
        return times, nodes

    for left in tricks:
        times, nodes = solve_at("barva", left)
        if times:
            out[f"trump_{left}_tricks_ms_mean"] = round(1000 * statistics.fmean(times), 2)
            out[f"trump_{left}_tricks_ms_max"] = round(1000 * max(times), 2)
            out[f"trump_{left}_tricks_nodes_mean"] = round(statistics.fmean(nodes))
            _baseline_figures(out, f"trump_{left}_tricks", times, base_times)
    for kind in ("betl", "durch"):
        times, nodes = solve_at(kind, 10)
        if times:
            out[f"{kind}_10_tricks_ms_mean"] = round(1000 * statistics.fmean(times), 2)
            out[f"{kind}_10_tricks_nodes_mean"] = round(statistics.fmean(nodes))
            _baseline_figures(out, f"{kind}_10_tricks", times, base_times)
    out["solver_nodes_per_cpu_second"] = round(total_nodes / total_cpu) if total_cpu else 0
    if partie <= 0:
        return out
    # the bot at its default budget against two robots
    per_decision: list[float] = []
    per_decision_wall: list[float] = []

    class Timed(SearchBot):
        def decide(self, decision, view, legal):
            t0, w0 = time.process_time(), time.perf_counter()
            r = super().decide(decision, view, legal)
            per_decision.append(time.process_time() - t0)
            per_decision_wall.append(time.perf_counter() - w0)
            return r

    from ..rules.selfplay import play_partie
    bot = Timed(seed=seed, ms=ms)
    for p in range(partie):
        play_partie([bot, robot, robot] if p % 3 == 0 else [robot, bot, robot] if p % 3 == 1 else [robot, robot, bot],
                    seed=f"bench-search-partie:{seed}:{p}")
    st = bot.stats
    out["budget_ms"] = ms
    out["decisions"] = len(per_decision)
    out["decision_cpu_ms_mean"] = round(1000 * statistics.fmean(per_decision), 2) if per_decision else 0.0
    out["decision_cpu_ms_max"] = round(1000 * max(per_decision), 2) if per_decision else 0.0
    out["decision_wall_ms_mean"] = round(1000 * statistics.fmean(per_decision_wall), 2) if per_decision_wall else 0.0
    out["decision_wall_ms_max"] = round(1000 * max(per_decision_wall), 2) if per_decision_wall else 0.0
    out["card_plays"] = st["play"]
    out["card_plays_searched"] = st["searched"]
    out["worlds_per_searched_play"] = round(st["worlds"] / st["searched"], 1) if st["searched"] else 0.0
    out["card_plays_played_out"] = st.get("rollout_plays", 0)
    out["worlds_per_played_out_play"] = round(st.get("rollout_worlds", 0) / st["rollout_plays"], 1) if st.get("rollout_plays") else 0.0
    out["worlds_per_bidding_decision"] = round(st.get("bid_worlds", 0) / st["bids"], 1) if st.get("bids") else 0.0
    return out


def _baseline_figures(out: dict, name: str, times: list[float], base_times: list[float]) -> None:
    """The baseline solver's CPU per solve on the same positions, and baseline / current."""
    if not base_times:
        return
    out[f"baseline_{name}_ms_mean"] = round(1000 * statistics.fmean(base_times), 2)
    out[f"speedup_{name}"] = round(sum(base_times) / sum(times), 2) if sum(times) else 0.0


# ------------------------------------------------------------------ a CPU hog in another seat (issue 21.5)
#: Burns ``CPU_MS`` of its own CPU time at each decision, then plays the first legal action; writes
#: ``T <wall ms> <cpu ms>`` per decision to stderr (wall from the request read to the answer written).
VICTIM_BOT = r"""
import sys, time
CPU_MS = CPU_MS_VALUE
r, w = sys.stdin.buffer.readline, sys.stdout.buffer
while True:
    line = r()
    if not line or line.startswith(b'{"type":"bye"'):
        break
    if line.startswith(b'{"type":"request"'):
        w0, c0 = time.perf_counter(), time.process_time()
        x = 0
        while time.process_time() - c0 < CPU_MS / 1000:
            for _ in range(2000):
                x += 1
        i = line.index(b'"id":') + 5
        n = line[i:line.index(b',', i)]
        i = line.rindex(b'"legal":["') + 10
        w.write(b'{"type":"action","id":' + n + b',"action":"' + line[i:line.index(b'"', i)] + b'"}\n')
        w.flush()
        sys.stderr.write(f"T {1000 * (time.perf_counter() - w0):.3f} {1000 * (time.process_time() - c0):.3f}\n")
    elif line.startswith(b'{"type":"hello"'):
        w.write(b'{"type":"hello","protocol":1,"name":"victim","version":"1"}\n')
        w.flush()
sys.stderr.flush()
"""

#: At hello starts ``THREADS`` busy processes (each spins forever: threads of one Python
#: process would share one CPU), then answers every request at once.
HOG_BOT = r"""
import os, sys
r, w = sys.stdin.buffer.readline, sys.stdout.buffer
while True:
    line = r()
    if not line or line.startswith(b'{"type":"bye"'):
        break
    if line.startswith(b'{"type":"request"'):
        i = line.index(b'"id":') + 5
        n = line[i:line.index(b',', i)]
        i = line.rindex(b'"legal":["') + 10
        w.write(b'{"type":"action","id":' + n + b',"action":"' + line[i:line.index(b'"', i)] + b'"}\n')
        w.flush()
    elif line.startswith(b'{"type":"hello"'):
        for _ in range(THREADS_VALUE):
            if os.fork() == 0:
                os.closerange(0, 3)
                while True:
                    pass
        w.write(b'{"type":"hello","protocol":1,"name":"hog","version":"1"}\n')
        w.flush()
"""


def _victim_run(hog: bool, threads: int, cpu_ms: int, partie: int, seed: int, sandbox: str,
                frozen: bool) -> tuple[list[float], list[float]]:
    """One match: the victim in seat 0, the hog (or a trivial bot) in seat 1, a trivial bot in seat 2;
    the victim's (wall ms, cpu ms) per decision.  ``frozen`` False: bots that wait for their turn
    run on (``MARIAS_FREEZER=off``, as before issue 32)."""
    import contextlib
    import sys
    import tempfile
    from pathlib import Path

    from ..matches.match import BotSpec, Limits, MatchConfig, Referee
    from ..seats import freezer

    victim = BotSpec(label="victim", argv=[sys.executable, "-c", VICTIM_BOT.replace("CPU_MS_VALUE", str(cpu_ms))])
    second = (BotSpec(label="hog", argv=[sys.executable, "-c", HOG_BOT.replace("THREADS_VALUE", str(threads))])
              if hog else BotSpec(label="trivial", argv=[sys.executable, "-c", TRIVIAL_BOT]))
    third = BotSpec(label="trivial", argv=[sys.executable, "-c", TRIVIAL_BOT])
    with contextlib.ExitStack() as stack:
        if not frozen:
            before = os.environ.get(freezer.FREEZER_VARIABLE)
            os.environ[freezer.FREEZER_VARIABLE] = "off"
            stack.callback(lambda: os.environ.pop(freezer.FREEZER_VARIABLE) if before is None
                           else os.environ.__setitem__(freezer.FREEZER_VARIABLE, before))
        work = stack.enter_context(tempfile.TemporaryDirectory(prefix="marias-bench-hog-"))
        config = MatchConfig(bots=[victim, second, third], partie=partie, seed=f"bench-hog:{seed}",
                             limits=Limits(move_ms=60_000), work_dir=Path(work), sandbox=sandbox)
        result = Referee(config).run()
        if result.faults:
            raise RuntimeError(f"the benchmark's bots faulted: {result.faults[:3]}")
        wall, cpu = [], []
        for line in (Path(result.stderr_dir) / "marias.seat0.stderr.log").read_text().splitlines():
            if line.startswith("T "):
                wall.append(float(line.split()[1]))
                cpu.append(float(line.split()[2]))
    return wall, cpu


def hog(threads: int = 16, cpu_ms: int = 150, partie: int = 1, runs: int = 2, seed: int = 1,
        sandbox: str = "auto") -> dict:
    """The victim's time per decision (it burns ``cpu_ms`` of CPU each time) without a hog, with a
    ``threads``-process hog in the next seat (frozen while it waits for its turn: the referee's
    way), and with the same hog running on while it waits (as before issue 32); ``runs`` of each,
    alternately; one match at a time (-j 1).  The ratios are the medians' (wall per decision,
    with hog / without); wall per CPU ms says how much of the wait was the victim's own work."""
    from ..seats import resources
    from ..seats.sandbox import resolve_mode

    mode = resolve_mode(sandbox)
    cases = {"alone": (False, True), "hog_frozen": (True, True), "hog_running": (True, False)}
    walls: dict[str, list[float]] = {k: [] for k in cases}
    cpus: dict[str, list[float]] = {k: [] for k in cases}
    for r in range(runs):
        for name, (with_hog, frozen) in cases.items():
            w, c = _victim_run(with_hog, threads, cpu_ms, partie, seed + r, mode, frozen)
            walls[name] += w
            cpus[name] += c
    med = statistics.median
    out: dict = {"benchmark": "hog", "sandbox": mode, "cpus": os.cpu_count(), "hog_threads": threads,
                 "victim_cpu_ms_per_decision": cpu_ms, "runs": runs,
                 "waiting": resources.limits_report(None, mode)["waiting"]}
    for name in cases:
        out[f"{name}_decisions"] = len(walls[name])
        out[f"{name}_wall_ms_median"] = round(med(walls[name]), 1)
        out[f"{name}_cpu_ms_median"] = round(med(cpus[name]), 1)
        out[f"{name}_wall_per_cpu"] = round(med(walls[name]) / med(cpus[name]), 3)
    base = out["alone_wall_ms_median"]
    for name in ("hog_frozen", "hog_running"):
        out[f"ratio_{name}_to_alone"] = round(out[f"{name}_wall_ms_median"] / base, 3)
    out["note"] = ("victim: seat 0, burns its CPU ms per decision (process time, so load does not change its "
                   "work), wall = its own request-to-answer time; hog: seat 1, THREADS spinning processes from "
                   "hello on; ratio = median wall with the hog / alone; hog_frozen: the hog is frozen while it "
                   "waits for its turn (the referee's default), hog_running: it runs on (MARIAS_FREEZER=off, "
                   "as before issue 32, and without the CPU weight by turn of issue 21)")
    return out
