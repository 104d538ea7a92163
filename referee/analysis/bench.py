"""``marias bench analyze``: the analysis of a partie against what the search bot spends thinking in it.

One run: a partie of the ``search`` bot (seat 0, its budget ``ms`` per decision) against two
robots, played in-process and logged, the CPU time of the search bot's own decisions counted;
then that log analysed double-dummy (every card decision and the bidding) in this process, its
CPU time counted: the ratio is the figure (goal: at most 1).  Also: the card decisions alone
(the bidding's share is the difference), solver nodes per CPU second, optionally the value from
the seats' view with ``worlds`` worlds, and where the time goes (a profile of the double-dummy
run by module, and its top functions).
"""

from __future__ import annotations

import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from ..logs.log import selfplay_log
from .deals import Settings, analyze_deal
from .run import read


class _CpuTimed:
    """An in-process bot whose decisions' CPU time is counted (this process's clock)."""

    def __init__(self, bot):
        self.bot = bot
        self.name = getattr(bot, "name", "bot")
        self.version = getattr(bot, "version", "")
        self.cpu = 0.0
        self.decisions = 0

    def decide(self, decision: str, view: dict, legal: list[str]) -> str:
        t0 = time.process_time()
        choice = self.bot.decide(decision, view, legal)
        self.cpu += time.process_time() - t0
        self.decisions += 1
        return choice

    def __getattr__(self, name):
        return getattr(self.bot, name)


def _analyse(path: Path, settings: Settings) -> tuple[float, int, int]:
    """CPU seconds, card decisions valued and solver nodes of analysing ``path`` with ``settings``."""
    log = read(path)
    t0 = time.process_time()
    decisions = nodes = 0
    for rec, players in log.deals:
        a = analyze_deal(rec, players, settings)
        decisions += len(a["decisions"])
        nodes += a["nodes"]
    return time.process_time() - t0, decisions, nodes


def _profile(path: Path, settings: Settings, top: int = 8) -> dict:
    """Where the double-dummy analysis spends its time: own time by module (percent), the top functions."""
    prof = cProfile.Profile()
    prof.enable()
    _analyse(path, settings)
    prof.disable()
    stats = pstats.Stats(prof).stats  # (file, line, name) -> (calls, primitive, own time, cumulative, callers)
    total = sum(v[2] for v in stats.values()) or 1.0
    by_part: dict[str, float] = {}
    for (file, _line, _name), v in stats.items():
        f = file.replace("\\", "/")
        if f.endswith("bots/search_solve.py"):
            part = "solver search (bots/search_solve.py)"
        elif f.endswith("bots/search_settle.py") or "/referee/rules/settle.py" in f:
            part = "leaf settlement (search_settle, rules/settle)"
        elif "/bots/search_worlds.py" in f or "/bots/robot_info.py" in f:
            part = "world sampling (search_worlds, robot_info)"
        elif "/referee/rules/" in f:
            part = "engine (replay, legal actions, views, copies)"
        elif "/referee/analysis/" in f:
            part = "analysis bookkeeping (referee/analysis)"
        else:
            part = "builtins (dict lookups, sorts: most called by the solver)"
        by_part[part] = by_part.get(part, 0.0) + v[2]
    out = {f"profile_{k}_percent": round(100 * v / total, 1) for k, v in sorted(by_part.items(), key=lambda x: -x[1])}
    ranked = sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]
    out["profile_top_functions"] = [f"{Path(f).name}:{line}({name}) {100 * v[2] / total:.1f}%"
                                    for (f, line, name), v in ranked]
    return out


def analyze(ms: float | None = None, seed: str = "bench-analyze", worlds: int = 0, profile: bool = True,
            keep: Path | None = None) -> dict:
    """The benchmark (module docstring).  ``keep``: write the partie's log there."""
    from bots import SEARCH_MS
    from bots.robot import Robot
    from bots.search import SearchBot

    ms = SEARCH_MS if ms is None else ms
    with tempfile.TemporaryDirectory(prefix="marias-bench-analyze-") as tmp:
        path = (Path(keep) if keep else Path(tmp)) / f"search-partie-{seed}.jsonl"
        search = _CpuTimed(SearchBot(seed, ms=ms))
        selfplay_log(path, [search, Robot(), Robot()], seed=seed, fsync=False,
                     commands=["builtin:search", "builtin:robot", "builtin:robot"])
        dd_cpu, decisions, nodes = _analyse(path, Settings(worlds=0))
        cards_cpu, _d, cards_nodes = _analyse(path, Settings(worlds=0, bidding=False))
        out = {
            "benchmark": "analyze", "search_ms": ms, "deals": len(read(path).deals),
            "search_decisions": search.decisions, "search_cpu_s": round(search.cpu, 3),
            "analysis_dd_cpu_s": round(dd_cpu, 3),
            "ratio_dd_to_search": round(dd_cpu / search.cpu, 3) if search.cpu else None,
            "card_decisions_valued": decisions, "analysis_cards_cpu_s": round(cards_cpu, 3),
            "analysis_bidding_cpu_s": round(max(0.0, dd_cpu - cards_cpu), 3),
            "solver_nodes_dd": nodes,
            "solver_nodes_per_cpu_s": round(cards_nodes / cards_cpu) if cards_cpu else None,
        }
        if worlds > 0:
            view_cpu, _d, view_nodes = _analyse(path, Settings(worlds=worlds))
            out.update({"worlds": worlds, "analysis_view_cpu_s": round(view_cpu, 3),
                        "ratio_view_to_search": round(view_cpu / search.cpu, 3) if search.cpu else None,
                        "solver_nodes_view": view_nodes})
        if profile:
            out.update(_profile(path, Settings(worlds=0)))
    return out
