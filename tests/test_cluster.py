"""Tournaments on a real Dask cluster on localhost (referee/tournaments/cluster.py): a LocalCluster of two worker
processes, listening on 127.0.0.1 only, plays a tournament to the same tables as the local pool; a
worker killed in the middle loses no unit and counts none twice; a bot that differs on a worker is
refused with a clear message."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from referee.tournaments import results as R  # noqa: E402
from referee.tournaments import standings as S  # noqa: E402
from referee.tournaments import tournament as T  # noqa: E402
from referee.tournaments.cluster import ClusterError, play_group  # noqa: E402
from tests.cluster_kill import a_busy_worker_killed  # noqa: E402
from tests.files import written_records  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    cl = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40)
    client = distributed.Client(cl, set_as_default=False)
    yield cl, client
    client.close()
    cl.close()


def config(out: Path, seed: str, cluster_address=None, partie: int = 1, bots=("a=random", "b=random", "c=robot")):
    cfg = T.config_from_options(list(bots), seed=seed, output=str(out), partie=partie, arrangements="rotations",
                                concurrency=2, sandbox="none")
    cfg.cluster = cluster_address
    return cfg


def tables_without_times(folder: Path) -> dict:
    """Every table but the decision times (ms), which differ from run to run."""
    body = json.loads(S.report([folder], fmt="json", series=2)[0])
    for row in body["play"]:
        row.pop("mean ms")
        row.pop("max ms")
    return body


def journal_done(out: Path) -> list[str]:
    return [e["id"] for e in written_records(out / T.JOURNAL_FILE) if e["status"] == "done"]


def test_a_cluster_plays_the_tables_of_the_local_pool(cluster, tmp_path):
    cl, _client = cluster
    local = T.run_tournament(config(tmp_path / "local", "same"), check=False)
    remote = T.run_tournament(config(tmp_path / "remote", "same", cl.scheduler_address), check=False)
    assert local.complete and remote.complete and remote.played == remote.units == 3
    assert tables_without_times(tmp_path / "remote") == tables_without_times(tmp_path / "local")
    # each unit accepted once: one journal entry, one row; its log validated here too
    assert sorted(journal_done(tmp_path / "remote")) == sorted(u.id for u in T.plan_units(
        config(tmp_path / "x", "same")))
    n = sqlite3.connect(tmp_path / "remote" / R.DB_FILE).execute("SELECT COUNT(*) FROM partie").fetchone()[0]
    assert n == 3
    for p in (tmp_path / "remote" / "logs").glob("*.jsonl"):
        assert T.check_unit_log(p) is None


def test_a_worker_killed_in_the_middle_loses_and_doubles_nothing(cluster, tmp_path):
    cl, client = cluster
    out = tmp_path / "t"
    field = ("a=random", "b=random", "c=robot", "d=random")  # 4 tables: 4 groups of 3 units on 2 workers
    cfg = config(out, "kill", cl.scheduler_address, bots=field)
    units = T.plan_units(config(tmp_path / "x", "kill", bots=field))

    def ready() -> bool:  # a unit is accepted
        return bool((out / T.JOURNAL_FILE).exists() and journal_done(out))

    with a_busy_worker_killed(client, ready) as killed:
        run = T.run_tournament(cfg, check=False)
    assert killed, "the tournament ended before a worker could be killed"
    assert run.complete and not run.failed
    done = journal_done(out)
    assert sorted(done) == sorted(u.id for u in units)  # every unit once: none lost, none twice
    rows = sqlite3.connect(out / R.DB_FILE).execute("SELECT log FROM partie").fetchall()
    assert sorted(r[0] for r in rows) == sorted(f"logs/{u.id}.jsonl" for u in units)
    # the same tables as the local pool on the same configuration
    local = T.run_tournament(config(tmp_path / "local", "kill", bots=field), check=False)
    assert local.complete
    assert tables_without_times(out) == tables_without_times(tmp_path / "local")


BOT = """\
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("type") == "hello":
        print(json.dumps({"type": "hello", "name": "ext", "version": "1"}), flush=True)
"""


def test_a_bot_that_differs_on_a_worker_is_refused(cluster, tmp_path):
    cl, _client = cluster
    bot = tmp_path / "bot.py"
    bot.write_text(BOT)
    out = tmp_path / "t"
    cfg = config(out, "fp", cl.scheduler_address, bots=("a=random", "b=random", f"e={sys.executable} {bot}"))
    cfg.fingerprints()  # what the coordinator saw
    bot.write_text(BOT + "# changed on the worker\n")
    with pytest.raises(ClusterError) as e:
        T.run_tournament(cfg, check=False)
    msg = str(e.value)
    assert "does not have the tournament's bots" in msg and "bot 'e'" in msg
    assert "same path, with the same files, on every worker" in msg
    assert not list((out / "logs").glob("*.jsonl"))  # nothing accepted


def test_play_group_refuses_before_playing(tmp_path):
    """In the worker, the check comes first: a spec whose fingerprint is not the file's plays nothing."""
    cfg = config(tmp_path / "t", "pg")
    cfg.seed = "pg"
    u = T.plan_units(cfg)[0]
    job = T.unit_job(cfg, u, tmp_path)
    job["specs"][0].fingerprint = "0" * 64
    body = play_group([job], [60.0], [u.seats], [()], T.play_unit)
    assert body["refused"] and "fingerprint" in body["refused"][0] and "units" not in body


def test_marias_tournament_cluster_on_the_command_line(cluster, tmp_path):
    import subprocess

    cl, _client = cluster
    repo = Path(__file__).resolve().parent.parent
    out = tmp_path / "t"
    args = [sys.executable, "-m", "referee.cli", "tournament", "-b", "a=random", "-b", "b=random", "-b", "c=robot",
            "--arrangements", "rotations", "--seed", "cli", "--out", str(out), "--sandbox", "none",
            "--table-format", "json", "--cluster", cl.scheduler_address]
    r = subprocess.run(args, capture_output=True, text=True, cwd=repo, timeout=300)
    assert r.returncode == 0, r.stderr
    body = json.loads(r.stdout)
    assert sum(row["partie"] for row in body["standings"]) == 9 and sum(row["groše"] for row in body["standings"]) == 0
    bad = subprocess.run(args[:-1] + ["localhost:8786"], capture_output=True, text=True, cwd=repo, timeout=60)
    assert bad.returncode == 2 and "--cluster" in bad.stderr and "tcp://HOST:8786" in bad.stderr


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path, monkeypatch):
    from referee.tournaments import cluster as C

    monkeypatch.setattr(C, "CONNECT_TIMEOUT_S", 2.0)
    cfg = config(tmp_path / "t", "gone", "tcp://127.0.0.1:9")
    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        T.run_tournament(cfg, check=False)


def test_the_cluster_key_of_a_configuration(tmp_path):
    good = tmp_path / "g.yaml"
    good.write_text("bots: [{name: a, command: random}, {name: b, command: random}, {name: c, command: robot}]\n"
                    "cluster: tcp://10.0.0.1:8786\n")
    cfg = T.load_config(good)
    assert cfg.cluster == "tcp://10.0.0.1:8786" and "cluster" not in T.canonical(cfg)
    bad = tmp_path / "b.yaml"
    bad.write_text(good.read_text().replace("tcp://10.0.0.1:8786", "10.0.0.1"))
    with pytest.raises(T.ConfigError) as e:
        T.load_config(bad)
    assert f"{bad}:2: cluster: a Dask scheduler's address" in str(e.value)


def test_chains_on_the_cluster_are_warm_and_never_repeat_a_deck(cluster, tmp_path):
    """Warm (the default), a cluster task is a chain (one arrangement, several decks) played by one
    process with the same bots: a probe bot tells which decks each of its processes played."""
    from tests.test_warm import PROBE, assert_warm_and_honest, decks_by_process

    cl, _client = cluster
    (tmp_path / "probe.py").write_text(PROBE)
    out = tmp_path / "t"
    cfg = config(out, "warm-cluster", cl.scheduler_address, partie=4,
                 bots=(f"p={sys.executable} {tmp_path / 'probe.py'}", "b=random", "c=robot"))
    assert cfg.warm
    run = T.run_tournament(cfg, check=False)
    assert run.complete and not run.failed and run.played == 12  # 3 rotations x 4 partie
    units = T.plan_units(cfg)
    decks = decks_by_process(out, {u.id: (u.table, u.deck_slot) for u in units})
    assert_warm_and_honest(decks, len(units))
    # the same tables as the local pool, cold
    local = config(tmp_path / "local", "warm-cluster", partie=4,
                   bots=(f"p={sys.executable} {tmp_path / 'probe.py'}", "b=random", "c=robot"))
    local.warm = False
    assert T.run_tournament(local, check=False).complete
    assert tables_without_times(out) == tables_without_times(tmp_path / "local")
