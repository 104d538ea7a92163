"""``marias bench ladder``: a ladder at scale and a ladder at work.

At scale: a ladder database filled through the runner's own writes (:mod:`referee.ladder.store`)
with ``versions`` versions and ``partie`` partie (duplicate groups drawn by the pairing rule, each
partie's groše drawn around a hidden strength per version), then timed: drawing one table (reading
the pairing's input from the database and applying the rule; goal 10 ms), the leaderboard (goal 1 s),
the whole ``ladder table``, a version's games and history.

At work: a real ladder of built-in bots plays ``groups`` groups; the coordinator's CPU per partie
(this process: pairing, accepting, the database with its fsyncs) against the game's own (the worker's
referee, logging and validation, and the bots), and the disk a partie takes, plain and gzipped.
"""

from __future__ import annotations

import itertools
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

from . import store
from .archive import compress_old
from .folder import SEATINGS, LadderFolder, connect, unit_id
from .pairing import Candidate, meeting_key, pair
from .run import run_ladder
from .table import render


def fill(lad: LadderFolder, versions: int = 50, partie: int = 100_000, seed: int = 1) -> int:
    """Fill ``lad`` (new, empty) with ``versions`` versions and about ``partie`` partie (whole groups):
    the number of partie written."""
    rng = random.Random(seed)
    con = connect(lad.db_file)
    con.execute("PRAGMA synchronous=OFF")  # the filling only; the timings read the database as it is
    ids = []
    with con:
        for i in range(versions):
            vid = f"bot{i:02d}@1"
            con.execute("INSERT INTO versions (id, name, version, command, fingerprint, listing, status, added, mu, "
                        "sigma) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (vid, f"bot{i:02d}", 1, "random", "0" * 64, "[]", "active", "2026-01-01T00:00:00Z", 25.0,
                         25.0 / 3))
            ids.append(vid)
    strength = {v: rng.gauss(0, 40) for v in ids}
    meetings: dict = {}
    groups_rated = {v: 0 for v in ids}
    sigma = {v: 25.0 / 3 for v in ids}
    n_groups = max(1, partie // len(SEATINGS))
    for k in range(1, n_groups + 1):
        cands = [Candidate(v, sigma[v], groups_rated[v]) for v in ids]
        table = pair(cands, meetings, k, 4)
        g = store.plan_group(con, k, table)
        mean = sum(strength[v] for v in table) / 3
        for s in SEATINGS:
            seats = [table[int(c)] for c in s]
            g0 = round(strength[seats[0]] - mean + rng.gauss(0, 150))
            g1 = round(strength[seats[1]] - mean + rng.gauss(0, 150))
            faults = [1 if rng.random() < 0.01 else 0 for _ in range(3)]
            change = store.accept_unit(con, g, s, f"logs/{unit_id(g.n, s)}.jsonl", "0" * 64, [g0, g1, -g0 - g1], faults)
        for v, (_, sg) in zip(change["versions"], change["after"]):  # type: ignore[index]
            sigma[v] = sg
            groups_rated[v] += 1
        for a, b in itertools.combinations(table, 2):
            key = meeting_key(a, b)
            meetings[key] = meetings.get(key, 0) + 1
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return n_groups * len(SEATINGS)


def _median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return round(1000 * statistics.median(times), 3)


def at_scale(versions: int = 50, partie: int = 100_000, keep: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="marias-bench-ladder-") as tmp:
        folder = keep if keep is not None else Path(tmp) / "ladder"
        lad = LadderFolder.init(folder)
        t0 = time.process_time()
        n = fill(lad, versions, partie)
        fill_s = time.process_time() - t0

        def one_table():
            con = connect(lad.db_file)
            try:
                cands, meetings = store.pairing_input(con)
                pair(cands, meetings, 7, 4)
            finally:
                con.close()

        some = lad.leaderboard()[versions // 2]["id"]
        out = {"versions": versions, "partie": n, "groups": n // len(SEATINGS),
               "database_mb": round(lad.db_file.stat().st_size / 2**20, 1),
               "fill_cpu_ms_per_partie": round(1000 * fill_s / n, 3),
               "pair_one_table_ms": _median_ms(one_table, 200),
               "leaderboard_ms": _median_ms(lad.leaderboard, 20),
               "ladder_table_json_ms": _median_ms(lambda: render(lad, "json"), 5),
               "games_of_a_version_100_ms": _median_ms(lambda: lad.games(some, limit=100), 20),
               "history_of_a_version_ms": _median_ms(lambda: lad.history(some), 20)}
    out["goal"] = "pair one table <= 10 ms; leaderboard <= 1 s"
    out["goal_met"] = out["pair_one_table_ms"] <= 10 and out["leaderboard_ms"] <= 1000
    return out


def at_work(groups: int = 4, workers: int = 1, bots: tuple[str, ...] = ("robot", "random", "robot")) -> dict:
    def self_cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    with tempfile.TemporaryDirectory(prefix="marias-bench-ladder-") as tmp:
        lad = LadderFolder.init(Path(tmp) / "ladder", groups_per_table=groups)
        for i, b in enumerate(bots):
            lad.add(f"b{i + 1}", b, check=False)
        c0, w0 = self_cpu(), time.perf_counter()
        run = run_ladder(lad.path, workers=workers, groups=groups)
        coordinator = self_cpu() - c0
        seconds = time.perf_counter() - w0
        wc = run.worker_cpu
        game = wc.get("referee", 0.0) + wc.get("logging", 0.0) + wc.get("validation", 0.0) + wc.get("bots", 0.0)
        n = run.played
        plain = sum(p.stat().st_size for p in lad.logs_dir.iterdir())
        with connect(lad.db_file) as con:
            compress_old(con, lad.path, 0, limit=10 ** 6, now=time.time() + 60)
        packed = sum(p.stat().st_size for p in lad.logs_dir.iterdir())
    return {"bots": ", ".join(bots), "workers": workers, "groups": run.rated, "partie": n,
            "partie_per_second": round(n / seconds, 2),
            "coordinator_cpu_ms_per_partie": round(1000 * coordinator / n, 1),
            "game_cpu_ms_per_partie": round(1000 * game / n, 1),
            "coordinator_share_of_game": round(coordinator / game, 3) if game else None,
            "game_referee_ms_per_partie": round(1000 * wc.get("referee", 0.0) / n, 1),
            "game_logging_ms_per_partie": round(1000 * wc.get("logging", 0.0) / n, 1),
            "game_validation_ms_per_partie": round(1000 * wc.get("validation", 0.0) / n, 1),
            "game_bots_ms_per_partie": round(1000 * wc.get("bots", 0.0) / n, 1),
            "disk_kb_per_partie_plain": round(plain / n / 1024, 1),
            "disk_kb_per_partie_gzipped": round(packed / n / 1024, 1)}


def bench(versions: int = 50, partie: int = 100_000, groups: int = 4, workers: int = 1,
          keep: Path | None = None) -> dict:
    out = {"benchmark": "ladder", **at_scale(versions, partie, keep)}
    if groups:
        out.update({f"run_{k}": v for k, v in at_work(groups, workers).items()})
    return out
