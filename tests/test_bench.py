"""The referee benchmark's bots (referee/tools/bench.py): the in-process instant seat must play
exactly what the trivial bot program plays, or the benchmark's split of the referee's CPU
into "instant seats" and "bot processes" compares two different matches."""

import os
import sys
from collections import Counter

import pytest

from referee.tools import bench
from referee.matches.match import BotSpec


def _histories(result):
    return [[list(d.history) for d in p.deals] for p in result.parties]


def test_instant_seat_plays_what_the_trivial_bot_program_plays():
    programs = [BotSpec(label="trivial", argv=[sys.executable, "-c", bench.TRIVIAL_BOT]) for _ in range(3)]
    instant = [BotSpec(label="instant", argv=[], seat=bench._InstantSeat) for _ in range(3)]
    _, by_program, n_program, _ = bench._referee_run(programs, 2, 1, sandbox="none")
    _, by_instant, n_instant, _ = bench._referee_run(instant, 2, 1, sandbox="none")
    assert n_program == n_instant > 0
    assert _histories(by_program) == _histories(by_instant)


def test_trivial_rule_plays_games_of_every_kind_to_the_end():
    """The benchmark's mix (bench.TRIVIAL_BOT's comment): mostly deals played out, Barva games
    to the last trick among them, some durch, not one kind only (choosing by the id's parity
    alone made every deal a durch)."""
    instant = [BotSpec(label="instant", argv=[], seat=bench._InstantSeat) for _ in range(3)]
    _, result, _, _ = bench._referee_run(instant, 10, 1, sandbox="none")
    deals = [d for p in result.parties for d in p.deals]
    kinds = Counter(d.game for d in deals)
    assert kinds["barva"] > len(deals) // 2
    assert kinds["durch"] > 0
    assert sum(d.result.kind == "played" for d in deals) > len(deals) // 2
    assert sum(d.game == "barva" and len(d.tricks) == 10 for d in deals) > len(deals) // 4


def test_the_tournament_benchmark_splits_each_way_of_playing_and_starts_bots_in_an_empty_folder(tmp_path, monkeypatch):
    """``marias bench tournament`` at its smallest: cold, warm and match figures whose parts add up
    to each total and whose ratios are those totals' quotients. Run from a folder crowded with
    entries, which its bots would see entry by entry (a mount each) were they started there: they
    all start in one folder of the benchmark's own."""
    from referee.seats import process
    from referee.tournaments.tournament import bench_warm

    crowd = tmp_path / "crowded"
    crowd.mkdir()
    for i in range(300):
        (crowd / f"f{i}").write_text("x")
    monkeypatch.chdir(crowd)
    starts = tmp_path / "starts"
    real_launch = process.launch

    def launch(argv, cwd, env, config):  # where each bot starts (the pool's forked workers inherit this)
        with open(starts, "a") as f:
            f.write(os.path.abspath(cwd or os.getcwd()) + "\n")
        return real_launch(argv, cwd, env, config)

    monkeypatch.setattr(process, "launch", launch)
    out = bench_warm(partie=1, match_partie=2)
    folders = starts.read_text().splitlines()
    assert len(folders) >= 3 + 6 * 3 and str(crowd) not in folders and len(set(folders)) == 1
    parts = ("parent", "referee", "logging", "validation", "workers_other", "bots_deciding", "bots_starting")
    for mode in ("cold", "warm", "match"):
        assert out[f"{mode}_cpu_ms_per_partie"] == pytest.approx(
            sum(out[f"{mode}_{p}_ms_per_partie"] for p in parts), abs=0.1 * len(parts))
    assert out["cold_partie"] == out["warm_partie"] == 6 and out["match_partie"] == 2
    assert out["cpu_per_partie_warm_vs_match"] == pytest.approx(
        out["warm_cpu_ms_per_partie"] / out["match_cpu_ms_per_partie"], abs=0.01)
    assert sorted(p.name for p in crowd.iterdir()) == sorted(f"f{i}" for i in range(300))  # nothing written there
