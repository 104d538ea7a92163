"""Benchmarks (``marias bench ...``).  Speed is measured here, never asserted in tests."""

from __future__ import annotations

import random
import statistics
import time

from .partie import Partie


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


def engine(deals: int = 3000, repeats: int = 5, seed: int = 1, mixes: tuple[str, ...] = ("uniform", "trump_games")) -> dict:
    """Random legal self-play in-process: deals per second and microseconds per decision.

    Each repeat plays ``deals`` deals (whole partie of 12) choosing uniformly among
    the legal actions (mostly short betl/durch deals, as uniform choice announces
    them most), and again steered into trump games played to the last trick; the
    figures are medians over the repeats.
    """
    out = {"benchmark": "engine", "deals": deals, "repeats": repeats}
    for mix, make in (("uniform", _uniform), ("trump_games", _trump_games)):
        if mix not in mixes:
            continue
        rates, per_decision, per_deal = [], [], []
        for r in range(repeats):
            choose = make(random.Random(seed * 1000 + r))
            n_deals = n_dec = 0
            t0 = time.perf_counter()
            p = 0
            while n_deals < deals:
                partie = Partie(seed=f"bench:{seed}:{r}:{p}")
                p += 1
                for deal in partie.iter_deals():
                    while not deal.done:
                        deal.apply(choose(deal))
                        n_dec += 1
                    n_deals += 1
                    if n_deals >= deals:
                        break
            el = time.perf_counter() - t0
            rates.append(n_deals / el)
            per_decision.append(el / n_dec * 1e6)
            per_deal.append(n_dec / n_deals)
        key = "" if mix == "uniform" else "trump_games_"
        out[key + "deals_per_second"] = round(statistics.median(rates), 1)
        out[key + "us_per_decision"] = round(statistics.median(per_decision), 2)
        out[key + "decisions_per_deal"] = round(statistics.median(per_deal), 1)
    return out


ECHO_BOT = "import sys\nr=sys.stdin.buffer.readline\nw=sys.stdout.buffer\nwhile True:\n    l=r()\n    if not l: break\n    w.write(l); w.flush()\n"


def _typical_request() -> dict:
    """A real play request from the middle of a trump game (what the referee sends most)."""
    from protocol import messages as M

    from .deal import PLAY
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


def raw_round_trip(n: int = 3000, message: dict | None = None) -> float:
    """Seconds per round trip of one request-sized line through a trivial echo process
    (blocking pipes, no parsing: the floor any referee pays)."""
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
        t0 = time.perf_counter()
        for _ in range(n):
            trip()
        return (time.perf_counter() - t0) / n
    finally:
        p.stdin.close()
        p.wait()


TRIVIAL_BOT = r"""
import re, sys
r = sys.stdin.buffer.readline
w = sys.stdout.buffer
rid = re.compile(rb'"id":(\d+)')
while True:
    line = r()
    if not line or line.startswith(b'{"type":"bye"'):
        break
    if line.startswith(b'{"type":"request"'):
        n = rid.search(line).group(1)
        if int(n) % 2:  # the first legal action, else the last: games of every kind, played out
            i = line.rindex(b'"legal":["') + 10
            action = line[i:line.index(b'"', i)]
        else:
            j = line.rindex(b'"]}')
            action = line[line.rindex(b'"', 0, j) + 1:j]
        w.write(b'{"type":"action","id":' + n + b',"action":"' + action + b'"}\n')
        w.flush()
    elif line.startswith(b'{"type":"hello"'):
        w.write(b'{"type":"hello","protocol":1,"name":"trivial","version":"1"}\n')
        w.flush()
"""


def _referee_run(specs, partie: int, seed: int):
    import asyncio

    from .match import Limits, MatchConfig, Referee
    config = MatchConfig(bots=specs, partie=partie, seed=f"bench:{seed}", limits=Limits(move_ms=10_000), keep_partie=True)
    ref = Referee(config)
    result = asyncio.run(ref.run())
    if result.faults:
        raise RuntimeError(f"the benchmark's bots faulted: {result.faults[:3]}")
    decisions = sum(s.decisions for s in result.stats)
    deals = sum(len(p.deals) for p in result.parties)
    bot_ms = sum(s.total_ms for s in result.stats)
    return ref.play_seconds, decisions, deals, bot_ms


def referee(partie: int = 3, seed: int = 1) -> dict:
    """Deals per second with three external ``random`` bots, and the referee's cost per
    decision as a ratio to a raw echo round trip measured in the same run."""
    import sys

    from .match import BotSpec

    specs = [BotSpec.parse("random", seed=f"bench:{i}") for i in range(3)]
    wall, decisions, deals, bot_ms = _referee_run(specs, partie, seed)
    trivial = [BotSpec(label="trivial", argv=[sys.executable, "-c", TRIVIAL_BOT]) for _ in range(3)]
    t_wall, t_decisions, _, _ = _referee_run(trivial, partie, seed)
    raw = raw_round_trip()
    per_decision = wall / decisions
    t_per_decision = t_wall / t_decisions
    return {
        "benchmark": "referee",
        "partie": partie,
        "deals": deals,
        "decisions": decisions,
        "wall_s": round(wall, 3),
        "deals_per_second": round(deals / wall, 1),
        "us_per_decision_wall": round(per_decision * 1e6, 1),
        "us_per_decision_waiting_for_bots": round(bot_ms * 1000 / decisions, 1),
        "us_raw_echo_round_trip": round(raw * 1e6, 1),
        "ratio_wall_per_decision_to_raw": round(per_decision / raw, 2),
        "ratio_round_trip_to_raw": round(bot_ms / 1000 / decisions / raw, 2),
        "us_per_decision_trivial_bots": round(t_per_decision * 1e6, 1),
        "referee_overhead_ratio": round(t_per_decision / raw, 2),
        "note": ("wall = from the end of the handshakes to the last deal_end; raw = a request-sized line through an "
                 "echo process (blocking pipes); referee_overhead_ratio = per-decision wall time with trivial bots "
                 "(answer the first or the last legal action without parsing JSON) / raw"),
    }


def write_random_log(path, deals: int = 3000, seed: int = 1) -> int:
    """A log of ``deals`` deals (whole partie) of uniformly random legal play, written
    without fsync; returns the number of deals.  The input of ``bench validate``."""
    from .log import LogWriter

    rng = random.Random(f"validate-bench:{seed}")
    bots = [{"seat": s, "command": "builtin:uniform", "name": "uniform", "version": "1", "exe_sha256": None} for s in range(3)]
    n = p = 0
    with LogWriter(path, {"seed": seed, "bots": bots, "limits": {"in_process": True},
                          "fault_policy": {"in_process": True}}, fsync=False) as w:
        while n < deals:
            p += 1
            partie = Partie(seed=f"validate-bench:{seed}:{p}")
            w.partie_start(p, f"validate-bench:{seed}:{p}", partie.initial_deck)
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

    from .validate import validate_file

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
            engine(deals=n, repeats=1, seed=seed + r, mixes=("uniform",))
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


def search(positions: int = 12, seed: int = 1, partie: int = 1, tricks: tuple[int, ...] = (3, 4, 5, 6, 7),
           ms: float = 100.0) -> dict:
    """The search bot's figures: exact solves of full-information positions taken
    from robot self-play (trump games at each number of tricks left, betl and durch
    from their first trick), CPU time per solve and solver nodes per CPU second;
    then ``partie`` partie of the bot (at ``ms`` per decision) against two robots:
    worlds per searched card play and CPU time per decision."""
    from bots.robot import Robot
    from bots.search import SearchBot
    from bots.search_solve import Solver, game_of_deal, position_of_deal

    robot = Robot()
    out: dict = {"benchmark": "search", "positions": positions}
    total_nodes = 0
    total_cpu = 0.0

    def solve_at(kind: str, left: int) -> tuple[list[float], list[int]]:
        nonlocal total_nodes, total_cpu
        times, nodes = [], []
        i = 0
        while len(times) < positions and i < positions * 200:
            deal = Partie(seed=f"bench-search:{seed}:{kind}:{left}:{i}").next_deal()
            i += 1
            # the robots' bidding decides the game; keep the deals of the kind asked
            if not _robot_play_to(deal, robot, 10) or deal.game != kind:
                continue
            if not _robot_play_to(deal, robot, left):
                continue
            solver = Solver(game_of_deal(deal))
            t0 = time.process_time()
            solver.solve(position_of_deal(deal))
            el = time.process_time() - t0
            times.append(el)
            nodes.append(solver.nodes)
            total_nodes += solver.nodes
            total_cpu += el
        return times, nodes

    for left in tricks:
        times, nodes = solve_at("barva", left)
        if times:
            out[f"trump_{left}_tricks_ms_mean"] = round(1000 * statistics.fmean(times), 2)
            out[f"trump_{left}_tricks_ms_max"] = round(1000 * max(times), 2)
            out[f"trump_{left}_tricks_nodes_mean"] = round(statistics.fmean(nodes))
    for kind in ("betl", "durch"):
        times, nodes = solve_at(kind, 10)
        if times:
            out[f"{kind}_10_tricks_ms_mean"] = round(1000 * statistics.fmean(times), 2)
            out[f"{kind}_10_tricks_nodes_mean"] = round(statistics.fmean(nodes))
    out["solver_nodes_per_cpu_second"] = round(total_nodes / total_cpu) if total_cpu else 0
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

    from .selfplay import play_partie
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
    out["worlds_per_bidding_decision"] = round(st.get("bid_worlds", 0) / st["bids"], 1) if st.get("bids") else 0.0
    return out
