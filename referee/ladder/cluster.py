"""``marias ladder run --cluster``: the runner's loop on a Dask cluster (:mod:`referee.tournaments.cluster`).

The same chains as the local pool's (:class:`referee.ladder.run.Runner`) go to the workers as
:func:`referee.tournaments.cluster.play_group` tasks, as many in flight as the cluster has worker
threads; each worker checks the bots' fingerprints, plays and validates, and returns the logs and the
bots' stderr, which are written here and accepted as a local chain's.  A lost worker's task is run
again by Dask; what arrives is accepted once per partie (the runner knows which partie it still
waits for).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..tournaments import tournament as T
from ..tournaments.cluster import ClusterError, cluster_threads, connect, play_group

def play_cluster(runner) -> None:
    """The same loop on a Dask cluster: chains sent as :func:`referee.tournaments.cluster.play_group` tasks,
    as many in flight as the cluster has worker threads."""
    client = connect(runner.cluster)
    threads = cluster_threads(client)
    runner.start()
    futures: dict = {}
    try:
        while True:
            while len(futures) < threads and (chain := runner.next_chain()) is not None:
                jobs, walls, seats, argvs = runner.jobs_of(chain)
                fut = client.submit(play_group, jobs, walls, seats, argvs, T.play_unit,
                                    T.play_chain if runner.warm else None,
                                    key=f"marias-ladder-{chain[0].id}-{os.getpid()}-{time.monotonic_ns()}",
                                    pure=False, retries=0)
                futures[fut] = chain
            if not futures:
                if runner.idle():
                    continue
                break
            runner.idle_said = False
            done = [f for f in futures if f.done()]
            if not done:
                time.sleep(0.2)
            for fut in done:
                from_cluster(runner, futures.pop(fut), fut)
            runner.maintain()
    except KeyboardInterrupt:
        client.cancel(list(futures), force=True)  # the workers' results are dropped: nothing is written here after
        runner.abandon()
    finally:
        client.close(timeout=5)


def from_cluster(runner, chain: list, fut) -> None:
    """A chain's outcome from the cluster: its logs (and stderr) written here, then accepted as a local chain's."""
    try:
        body = fut.result()
    except Exception as e:  # Dask gave up on it (workers lost): its groups are void, play goes on
        runner.on_results(chain, False, [], f"lost on the cluster: {type(e).__name__}: {e}", None)
        return
    if body.get("refused"):
        raise ClusterError(f"worker {body['host']} does not have the ladder's bots: " + "; ".join(body["refused"])
                           + ". Bots must exist at the same path, with the same files, on every worker.")
    results = []
    for entry in body["units"]:
        uid = entry["id"]
        if uid not in runner.units:
            continue
        if entry["status"] == "ok" and entry["log"] is not None:
            for name, data in entry["files"].items():
                if "/" not in name and name.startswith(f"{uid}."):
                    (runner.logs / name).write_bytes(data)
            write_synced(runner.logs / f"{uid}.jsonl", entry["log"])
            results.append(entry["result"])
        else:
            results.append({"id": uid, "error": f"{entry['status']}: {entry['why']} (on {body['host']})"})
    runner.on_results(chain, True, results)


def write_synced(path: Path, data: bytes) -> None:
    """A log that came back from a worker, written whole and synced before it is named."""
    part = path.with_name(path.name + ".part")
    with open(part, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(part, path)
