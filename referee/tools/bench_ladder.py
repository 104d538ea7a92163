"""Benchmarks of a large season (issue 14): ``marias bench table`` (the tables of 100,000 partie from a
results database) and ``marias bench validate-memory`` (peak memory of ``marias validate`` against
the size of the log).  Each figure is measured on a ``marias`` command run as a child process: CPU
seconds (user + system) and peak resident memory (``ru_maxrss`` of that child)."""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..tournaments import results as R


def _measure(argv: list[str]) -> dict:
    """Run ``python -m referee.cli ARGV`` alone and return its CPU seconds, wall seconds and peak RSS (MB)."""
    code = ("import resource, subprocess, sys, time, json\n"
            "t = time.perf_counter()\n"
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
            "wall = time.perf_counter() - t\n"
            "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(json.dumps({'rc': p.returncode, 'cpu_s': r.ru_utime + r.ru_stime, 'wall_s': wall,\n"
            "                  'peak_rss_mb': r.ru_maxrss / 1024, 'stderr': p.stderr.decode()[-2000:]}))\n")
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "referee.cli", *argv],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout)
    if res["rc"] != 0:
        raise RuntimeError(f"marias {' '.join(argv)} failed: {res['stderr']}")
    return res


# ------------------------------------------------------------------ a synthetic season in a results database

def synthetic_season(folder: Path, partie: int = 100_000, bots: int = 24, seed: int = 1) -> int:
    """Fill ``folder`` (a tournament folder: manifest and results database, no logs) with ``partie``
    synthetic but valid rows: duplicate groups of the six arrangements of three bots on one deck,
    groše summing to zero, pairwise flows adding up to each seat's total, contracts, fleks, faults,
    decision times.  Returns the number of rows."""
    from ..tournaments.tournament import MANIFEST_FILE, MANIFEST_FORMAT

    rng = random.Random(seed)
    names = [f"bot{i:02d}" for i in range(bots)]
    fps = {n: f"{i:064x}" for i, n in enumerate(names)}
    folder.mkdir(parents=True, exist_ok=True)
    db = R.db_path(folder)
    db.unlink(missing_ok=True)
    con = R.connect(db, create=True)
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    units = []
    logs_rows, partie_rows = [], []
    n = 0
    group = 0
    while n < partie:
        group += 1
        table = rng.sample(names, 3)
        deck = f"{group:016x}"
        for arr in perms:
            if n >= partie:
                break
            n += 1
            seats_bots = [table[i] for i in arr]
            log = f"logs/u{n:06d}.jsonl"
            seats = []
            deals = 12
            pay = [0, 0, 0]
            for s in range(3):
                contracts = {}
                for k in ("hra", "sedma", "betl"):
                    w, l = rng.randint(0, 2), rng.randint(0, 1)
                    if w or l:
                        contracts[k] = [w, l]
                actor = sum(w + l for w, l in contracts.values())
                won = sum(w for w, _ in contracts.values())
                faults = {"timeout": 1} if rng.random() < 0.02 else {}
                dec = rng.randint(60, 120)
                seats.append([actor, won, contracts, rng.randint(0, 3), rng.randint(0, 2), faults, dec,
                              dec * rng.uniform(0.5, 30.0), rng.uniform(30.0, 300.0), []])
            n01, n02 = rng.randint(-60, 60), rng.randint(-60, 60)
            n12 = rng.randint(-60, 60)
            pay = [n01 + n02, -n01 + n12, -n02 - n12]
            logs_rows.append((log, f"{n:064x}", 22_000, "bwrap", 1, deals))
            partie_rows.append((log, 1, deck, deals, *seats_bots, *(fps[b] for b in seats_bots), *pay,
                                json.dumps(seats, separators=(",", ":")), json.dumps([n01, n02, n12])))
            units.append({"id": f"u{n:06d}", "log": log, "table": group, "partie": 1, "seats": seats_bots})
    con.executemany("INSERT INTO logs VALUES (?,?,?,?,?,?)", logs_rows)
    con.executemany("INSERT INTO partie VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", partie_rows)
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    (folder / MANIFEST_FILE).write_text(json.dumps({"format": MANIFEST_FORMAT, "version": 1, "name": "season",
                                                    "units": units}))
    return n


def table(partie: int = 100_000, bots: int = 24, goal_s: float = 30.0, goal_mb: float = 300.0,
          keep: Path | None = None) -> dict:
    """``marias bench table``: ``marias table FOLDER --format json`` (every table, the series too) on a
    generated results database of ``partie`` rows, in a child process: CPU seconds and peak RSS."""
    with tempfile.TemporaryDirectory(prefix="marias-bench-table-") as tmp:
        folder = Path(keep) if keep else Path(tmp) / "season"
        t0 = time.perf_counter()
        rows = synthetic_season(folder, partie, bots)
        gen = time.perf_counter() - t0
        m = _measure(["table", str(folder), "--format", "json", "--series", "10"])
        size = R.db_path(folder).stat().st_size
    return {
        "benchmark": "table",
        "partie": rows,
        "bots": bots,
        "database_mb": round(size / 2**20, 1),
        "generate_seconds": round(gen, 1),
        "table_cpu_seconds": round(m["cpu_s"], 2),
        "table_wall_seconds": round(m["wall_s"], 2),
        "table_peak_rss_mb": round(m["peak_rss_mb"], 1),
        "goal": f"<= {goal_s:g} s and <= {goal_mb:g} MB",
        "goal_met": m["cpu_s"] <= goal_s and m["peak_rss_mb"] <= goal_mb,
    }


# ------------------------------------------------------------------ validate: memory against the file's size

def validate_memory(sizes: tuple[int, ...] = (1_200, 12_000), seed: int = 1) -> dict:
    """``marias bench validate-memory``: peak RSS of ``marias validate LOG`` on generated logs of
    ``sizes`` deals (random legal play); flat memory means the largest is about the smallest."""
    from .bench import write_random_log

    out: dict = {"benchmark": "validate-memory"}
    peaks = []
    with tempfile.TemporaryDirectory(prefix="marias-bench-vm-") as tmp:
        for deals in sizes:
            log = Path(tmp) / f"l{deals}.jsonl"
            write_random_log(log, deals=deals, seed=seed)
            m = _measure(["validate", str(log)])
            peaks.append(m["peak_rss_mb"])
            out[f"deals_{deals}_file_mb"] = round(log.stat().st_size / 2**20, 1)
            out[f"deals_{deals}_peak_rss_mb"] = round(m["peak_rss_mb"], 1)
            out[f"deals_{deals}_cpu_seconds"] = round(m["cpu_s"], 2)
            log.unlink()
    out["peak_ratio_largest_vs_smallest"] = round(peaks[-1] / peaks[0], 2)
    out["size_ratio"] = round(sizes[-1] / sizes[0], 1)
    return out


# ------------------------------------------------------------------ the local pool against a Dask cluster

def _start_cluster(folder: Path, workers: int) -> tuple[str, list]:
    """A Dask scheduler and ``workers`` single-threaded workers, each its own process, on 127.0.0.1 only."""
    sched_file = folder / "scheduler.json"
    env = dict(os.environ, DASK_DISTRIBUTED__LOGGING__DISTRIBUTED="error")
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)]
    deadline = time.monotonic() + 60
    while not sched_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    address = json.loads(sched_file.read_text())["address"]
    procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers",
                                   str(workers), "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
    from distributed import Client

    with Client(address, timeout=60, set_as_default=False) as c:
        c.wait_for_workers(workers, timeout=120)
    return address, procs


def cluster(bots: int = 4, partie: int = 1, workers: int = 2, builtin: str = "random", seed: str = "bench") -> dict:
    """``marias bench cluster``: the same tournament on the local pool (``workers`` at once) and on a
    Dask cluster on this machine (a scheduler and ``workers`` worker processes): units per second, and
    the coordinator's CPU seconds per accepted unit (its own process only: what it costs to check,
    write and store a unit, so how many workers one coordinator can feed)."""
    from ..tournaments.tournament import config_from_options, run_tournament

    def self_cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    out: dict = {"benchmark": "cluster", "bots": f"{bots} x {builtin}", "workers": workers, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="marias-bench-cluster-") as tmp:
        tmp = Path(tmp)
        address, procs = _start_cluster(tmp, workers)
        try:
            for where in ("local", "cluster"):
                cfg = config_from_options([f"b{i + 1}={builtin}" for i in range(bots)], partie=partie, seed=seed,
                                          concurrency=workers, output=str(tmp / where), name="bench", sandbox="none")
                cfg.cluster = address if where == "cluster" else None
                c0, t0 = self_cpu(), time.perf_counter()
                run = run_tournament(cfg, check=False)
                wall, cpu = time.perf_counter() - t0, self_cpu() - c0
                if not run.complete:
                    raise RuntimeError(f"the benchmark tournament ({where}) did not finish: {run.failed}")
                out["units"] = run.units
                out[f"{where}_seconds"] = round(wall, 2)
                out[f"{where}_units_per_second"] = round(run.units / wall, 2)
                out[f"{where}_coordinator_cpu_ms_per_unit"] = round(1000 * cpu / run.units, 1)
        finally:
            for p in reversed(procs):
                p.terminate()
            for p in reversed(procs):
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    out["cluster_vs_local_speed"] = round(out["cluster_units_per_second"] / out["local_units_per_second"], 2)
    per_unit = out["cluster_coordinator_cpu_ms_per_unit"] / 1000
    # a unit of this field takes about workers / local rate seconds of a worker; a coordinator at 100% CPU feeds
    out["workers_one_coordinator_can_feed_at_this_unit_time"] = (
        round((workers / out["local_units_per_second"]) / per_unit) if per_unit > 0 else None)
    return out
