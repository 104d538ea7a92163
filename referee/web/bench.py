"""``marias bench web``: how fast the pages answer and how much they weigh (measured, never asserted).

Over a tournament folder (``marias bench table``'s synthetic results database of 100,000 partie)
and a match log (100 partie): the tables computed once (cold, what the first visitor after a change waits
for; ``marias serve`` does it in the background when it starts), the tournament page and its
data served again (warm: what every visitor gets while nothing changed), a deal's replay (the
first of its log, which reads and parses the log, and again), and the bytes each page loads
(HTML, scripts, styles and data).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from . import log_data as LD
from .app import STATIC, create_app
from .tournament_data import tournament_data

ASSETS = {"tournament": ("uPlot.iife.min.js", "uPlot.min.css", "marias.css", "cards.js", "tournament.js"),
          "replay": ("uPlot.iife.min.js", "uPlot.min.css", "marias.css", "cards.js", "log.js", "replay.js")}


def _timed(f, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def measure(root: Path, tournament_rel: str, log_rel: str, repeats: int = 5,
            goals=(1.0, 0.2, 500 * 1024)) -> dict:
    from starlette.testclient import TestClient

    page_goal, replay_goal, weight_goal = goals
    cpu0 = time.process_time()
    cold, _ = _timed(lambda: tournament_data(root / tournament_rel), 1)
    cold_cpu = time.process_time() - cpu0
    app = create_app([root], play_dir=root / "plays")
    with TestClient(app, base_url="http://127.0.0.1") as c:
        c.get(f"/api/tournament/0/{tournament_rel}")  # the cache, as serve's warm-up fills it
        t_html, html = _timed(lambda: c.get(f"/tournament/0/{tournament_rel}"), repeats)
        t_data, data = _timed(lambda: c.get(f"/api/tournament/0/{tournament_rel}"), repeats)
        log = c.get(f"/api/log/0/{log_rel}").json()
        deals = [(p["partie"], d["deal"]) for p in log["parties"] for d in p["deals"]][:24]
        rt, warm = [], []
        biggest = 0
        for p, d in deals:
            LD.forget_logs()  # the first replay of a log: it is read and parsed
            t, r = _timed(lambda: c.get(f"/api/replay/0/{log_rel}?partie={p}&deal={d}"), 1)
            rt.append(t)
            warm.append(_timed(lambda: c.get(f"/api/replay/0/{log_rel}?partie={p}&deal={d}"), 1)[0])
            biggest = max(biggest, len(r.content))
        rhtml = c.get(f"/replay/0/{log_rel}?partie=1&deal=1")
    assets = {k: sum((STATIC / n).stat().st_size for n in v) for k, v in ASSETS.items()}
    t_weight = len(html.content) + len(data.content) + assets["tournament"]
    r_weight = len(rhtml.content) + biggest + len(str(log).encode()) + assets["replay"]
    t_page = t_html + t_data
    r_page = statistics.median(rt)
    return {
        "benchmark": "web",
        "tables_cold_seconds": round(cold, 2),
        "tables_cold_cpu_seconds": round(cold_cpu, 2),
        "tournament_page_seconds": round(t_page, 4),
        "tournament_page_kb": round(t_weight / 1024, 1),
        "replay_median_seconds": round(r_page, 4),
        "replay_max_seconds": round(max(rt), 4),
        "replay_warm_median_seconds": round(statistics.median(warm), 4),
        "log_mb": round((root / log_rel).stat().st_size / 2**20, 2),
        "replay_page_kb": round(r_weight / 1024, 1),
        "deals_replayed": len(rt),
        "goal": f"page <= {page_goal:g} s, replay <= {replay_goal * 1000:g} ms, page <= {weight_goal // 1024} KB",
        "goal_met": t_page <= page_goal and r_page <= replay_goal and max(t_weight, r_weight) <= weight_goal,
    }
