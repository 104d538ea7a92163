"""``marias bench web``: how fast the pages answer and how much they weigh (measured, never asserted).

Over a tournament folder (``marias bench table``'s synthetic results database of 100,000 partie)
and a match log (100 partie): the tables computed once (cold, what the first visitor after a change waits
for; ``marias serve`` does it in the background when it starts), the tournament page and its
data served again (warm: what every visitor gets while nothing changed), a deal's replay (the
first of its log, which indexes the log's lines, and again), and the bytes each page loads
(HTML, scripts, styles and data).

:func:`big_log`: a large log (60 MB by default, under the 64 MB ``marias serve`` reads) served by
``marias serve`` in a process of its own, measured from outside through /proc (Linux): the
server's peak memory (RSS) and CPU while it answers the log page's data once and four times at
once, how soon the first byte comes (the data are streamed), a small page's time meanwhile, and
the CPU of one deal's replay.
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


# ------------------------------------------------------------------ a large log, served by a real server


def _proc_rss_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in KB, from /proc."""
    got = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                got[k] = int(v.split()[0])
    return got["VmRSS"], got["VmHWM"]


def _proc_cpu_s(pid: int) -> float:
    """User and system CPU seconds a process has used (its threads together), from /proc."""
    import os

    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _reset_peak(pid: int) -> None:
    """Start the process's peak RSS (VmHWM) afresh at its RSS now (Linux: clear_refs 5)."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def _get(port: int, url: str) -> tuple[int, int, float, float]:
    """(status, bytes, seconds to the first byte, seconds in all) of one GET, read as it comes."""
    import http.client

    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        c.request("GET", url)
        r = c.getresponse()
        first = r.read(1)
        t_first = time.perf_counter() - t0
        n = len(first)
        while True:
            chunk = r.read(1 << 16)
            if not chunk:
                break
            n += len(chunk)
        return r.status, n, t_first, time.perf_counter() - t0
    finally:
        c.close()


def big_log(root: Path, log_rel: str, *, server_argv: list[str] | None = None, env: dict | None = None,
            at_once: int = 4) -> dict:
    """A large log served by ``marias serve`` in a process of its own (``server_argv``: another command
    that serves ``root`` on the port appended to it): the server's peak memory (RSS, from /proc) and CPU
    while it answers the log page's data once and ``at_once`` times at once, a small request's time
    meanwhile, and the CPU of one deal's replay (the first, which indexes the log, and again)."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import threading
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = (server_argv or [sys.executable, "-c", "from referee.cli import main; main()", "serve", str(root), "--port"]) + [str(port)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    try:
        t0 = time.monotonic()
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() - t0 > 120:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.1)
        pid = proc.pid
        url = f"/api/log/0/{log_rel}"
        rss0, _ = _proc_rss_kb(pid)
        _reset_peak(pid)
        rurl = f"/api/replay/0/{log_rel}?partie={_middle_partie(root / log_rel)}&deal=1"
        cpu0 = _proc_cpu_s(pid)
        rstatus = _get(port, rurl)[0]  # the first: the log's lines are indexed
        cpu_replay_first = _proc_cpu_s(pid) - cpu0
        cpu0 = _proc_cpu_s(pid)
        for _ in range(5):
            _get(port, rurl)
        cpu_replay_warm = (_proc_cpu_s(pid) - cpu0) / 5
        rss_replay = _proc_rss_kb(pid)[1]
        _reset_peak(pid)
        cpu0 = _proc_cpu_s(pid)
        status, size, first_s, one_s = _get(port, url)
        cpu_one = _proc_cpu_s(pid) - cpu0
        peak_one = _proc_rss_kb(pid)[1]
        rss1 = _proc_rss_kb(pid)[0]
        _reset_peak(pid)
        cpu0 = _proc_cpu_s(pid)
        results: list = []
        small: list[float] = []
        threads = [threading.Thread(target=lambda: results.append(_get(port, url))) for _ in range(at_once)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):  # a small request (the index) while they run
            small.append(_get(port, "/")[3])
            time.sleep(0.2)
        for t in threads:
            t.join()
        cpu_many = _proc_cpu_s(pid) - cpu0
        peak_many = _proc_rss_kb(pid)[1]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    mb = 1024.0
    goal_mb = 150
    return {
        "big_log_mb": round((root / log_rel).stat().st_size / 2**20, 1),
        "big_log_status": status,
        "big_log_answer_mb": round(size / 2**20, 2),
        "server_rss_before_mb": round(rss0 / mb, 1),
        "one_peak_rss_mb": round(peak_one / mb, 1),
        "one_peak_growth_mb": round((peak_one - rss0) / mb, 1),
        "one_rss_after_mb": round(rss1 / mb, 1),
        "one_cpu_seconds": round(cpu_one, 2),
        "one_first_byte_seconds": round(first_s, 3),
        "one_seconds": round(one_s, 2),
        f"{at_once}_at_once_peak_rss_mb": round(peak_many / mb, 1),
        f"{at_once}_at_once_cpu_seconds_per_request": round(cpu_many / at_once, 2),
        f"{at_once}_at_once_seconds_max": round(max(r[3] for r in results), 2),
        f"{at_once}_at_once_statuses": sorted({r[0] for r in results}),
        "small_request_meanwhile_seconds_max": round(max(small), 3) if small else None,
        "small_requests_meanwhile": len(small),
        "replay_status": rstatus,
        "replay_first_cpu_seconds": round(cpu_replay_first, 3),
        "replay_warm_cpu_seconds": round(cpu_replay_warm, 4),
        "replay_peak_rss_mb": round(rss_replay / mb, 1),
        "big_log_goal": f"the server's peak <= {goal_mb} MB over its memory before, one request and {at_once} at once",
        "big_log_goal_met": max(peak_one, peak_many, rss_replay) - rss0 <= goal_mb * mb,
    }


def _middle_partie(path: Path) -> int:
    """The number of a partie half way through a log (read from its end: the last partie_start)."""
    import re

    size = path.stat().st_size
    with open(path, "rb") as f:
        f.seek(max(0, size // 2))
        f.readline()
        for line in f:
            m = re.match(rb'\{"type":"partie_start","partie":(\d+)', line)
            if m:
                return int(m.group(1))
    return 1
