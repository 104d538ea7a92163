"""Warm bots in tournaments (issue 24): a worker keeps its bots running through a chain of units.

The honesty rule — a bot process never plays two arrangements of one deck — is checked with a probe
bot, a real program under the real referee that tells on stderr, per process, the first hand it held
in each partie; and the tables of deterministic built-in bots are the same warm and cold."""

from __future__ import annotations

import json
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

from referee.tournaments import tournament as T

PROBE = textwrap.dedent('''\
    import json, sys, uuid
    from protocol.sdk import Bot, run

    TOKEN = uuid.uuid4().hex  # one per process (pids repeat across sandboxes)

    class Probe(Bot):
        name = "probe"

        def on_partie_start(self, message):
            self.told = False
            self.seat = message["seat"]

        def on_deal_start(self, message):
            self.deal = message["deal"]

        def choose(self, view, legal):
            if not self.told and self.deal == 1:
                self.told = True
                print("PROBE " + json.dumps([TOKEN, self.seat, sorted(view["hand"])]), file=sys.stderr, flush=True)
            return legal[0]

    run(Probe())
''')


def _run(tmp_path: Path, bots: list[str], out: str, *, warm: bool, partie: int = 3, concurrency: int = 2,
         **kw) -> T.TournamentRun:
    cfg = T.config_from_options(bots, partie=partie, seed="warm-test", concurrency=concurrency,
                                output=str(tmp_path / out), name="w", **kw)
    cfg.warm = warm
    run = T.run_tournament(cfg, check=False)
    assert run.complete, run.failed
    return run


def _deal_ones(folder: Path) -> dict[str, dict]:
    """Each unit's first deal: its deck and hands by seat."""
    out = {}
    for log in sorted((folder / "logs").glob("*.jsonl")):
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("type") == "deal" and rec.get("deal") == 1:
                out[log.stem] = rec
                break
    return out


def decks_by_process(folder: Path, deck_of: dict[str, object]) -> dict[str, list]:
    """For each probe process (its token), the starting decks it played, in the order it told them:
    each told hand is matched to the unit whose deal 1 gave that seat those cards, and named by
    ``deck_of[unit id]`` (arrangements of one deck give a seat the same cards: the deck, not the unit)."""
    firsts = _deal_ones(folder)
    told = []
    for f in sorted((folder / "logs").glob("*.stderr.log")):
        for line in f.read_text().splitlines():
            if line.startswith("PROBE "):
                told.append(json.loads(line[6:]))
    decks = defaultdict(list)
    for token, seat, hand in told:
        match = [uid for uid, rec in firsts.items() if set(hand) <= set(rec["hands"][seat])]
        assert match
        found = {deck_of[uid] for uid in match}
        assert len(found) == 1, (hand, match)
        decks[token].append(found.pop())
    return dict(decks)


def assert_warm_and_honest(decks: dict[str, list], partie: int) -> None:
    """Every partie told once; some process played more than one (warm); none played a deck twice."""
    assert sum(len(v) for v in decks.values()) == partie
    assert any(len(v) > 1 for v in decks.values()), "no process played more than one partie: nothing was warm"
    for token, seen in decks.items():
        assert len(seen) == len(set(seen)), f"process {token} played one deck twice: {seen}"


def test_no_process_plays_two_arrangements_of_one_deck(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    probe = f"p={sys.executable} {tmp_path / 'probe.py'}"
    run = _run(tmp_path, [probe, "robot", "r=random"], "t", warm=True, partie=4, concurrency=1)
    units = T.plan_units(run.config)
    decks = decks_by_process(tmp_path / "t", {u.id: (u.table, u.deck_slot) for u in units})
    assert_warm_and_honest(decks, len(units))


def _tables(folder: Path) -> list:
    """Every unit's totals and every decision, without the times."""
    rows = []
    for log in sorted((folder / "logs").glob("*.jsonl")):
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("type") == "deal":
                rows.append((log.stem, rec["deal"], rec["deck"], [(d["seat"], d["action"]) for d in rec["decisions"]],
                             rec.get("result")))
    return rows


def test_warm_and_cold_tables_are_the_same(tmp_path):
    bots = ["robot", "r1=random", "r2=random:3"]
    _run(tmp_path, bots, "warm", warm=True)
    _run(tmp_path, bots, "cold", warm=False)
    warm, cold = _tables(tmp_path / "warm"), _tables(tmp_path / "cold")
    assert warm and warm == cold


def test_chains_never_repeat_a_deck_and_cover_every_unit(tmp_path):
    for scope in ("table", "tournament"):
        cfg = T.config_from_options(["a=random", "b=random", "c=random", "d=robot"], partie=5, seed="x",
                                    deck_scope=scope, output=str(tmp_path / "o"), name="w")
        units = T.plan_units(cfg)
        for workers in (1, 2, 8):
            chains = T.plan_chains(units, workers)
            assert sorted(u.id for c in chains for u in c) == sorted(u.id for u in units)
            for c in chains:
                assert len({(u.table, u.arrangement) for u in c}) == 1  # the same bots in the same seats
                assert len({u.deck_slot for u in c}) == len(c)  # every unit another deck


def test_warm_in_the_configuration(tmp_path):
    base = "name: w\nbots: [{name: a, command: random}, {name: b, command: random}, {name: c, command: robot}]\n"
    for text, warm, after in (("", True, 50), ("warm: false\n", False, 50), ("warm: 7\n", True, 7)):
        p = tmp_path / "w.yaml"
        p.write_text(base + text)
        cfg = T.load_config(p)
        assert (cfg.warm, cfg.warm_partie) == (warm, after)
    p.write_text(base + "warm: sometimes\n")
    try:
        T.load_config(p)
    except T.ConfigError as e:
        assert any("warm" in m for m in e.problems)
    else:
        raise AssertionError("warm: sometimes was accepted")
    p.write_text(base + "warm: false\n")
    cfg = T.load_config(p)
    assert "warm" not in T.canonical(cfg)  # how it is run: a warm tournament resumes cold and back


# ------------------------------------------------------------------ duels (referee/tournaments/duel.py)

def _duel(tmp_path: Path, a: str, b: str, out: str, *, warm: bool, **kw):
    from referee.tournaments import duel as D

    cfg = D.config(a, b, seed=kw.pop("seed", "warm-duel"), output=str(tmp_path / out), **kw)
    cfg.warm = warm
    run = D.run_duel(cfg)
    assert not run.failed and not run.interrupted, run.failed
    return run


def test_a_warm_duel_never_gives_a_process_two_seatings_of_one_deck(tmp_path):
    import re

    (tmp_path / "probe.py").write_text(PROBE)
    run = _duel(tmp_path, f"p={sys.executable} {tmp_path / 'probe.py'}", "robot", "d", warm=True,
                max_groups=4, h1=1000, concurrency=2)
    folder = tmp_path / "d"
    stems = [p.stem for p in (folder / "logs").glob("*.jsonl")]
    deck_of = {s: int(re.match(r"g(\d+)-", s).group(1)) for s in stems}  # a group is one deck
    decks = decks_by_process(folder, deck_of)
    # the probe (A) holds one seat or two: as many partie-seats as a's in each log's seating
    assert_warm_and_honest(decks, sum(s.rsplit("-s", 1)[1].count("a") for s in stems))
    assert run.test.n >= 1


def test_warm_and_cold_duels_decide_alike_and_tables_count_only_the_counted_groups(tmp_path):
    from referee.tournaments import standings as S

    kw = dict(max_groups=5, h1=10, concurrency=2, seed="dt")
    warm = _duel(tmp_path, "robot", "r=random", "warm", warm=True, **kw)
    cold = _duel(tmp_path, "robot", "r=random", "cold", warm=False, **kw)
    assert warm.result["samples"] == cold.result["samples"] and warm.test.n == cold.test.n >= 2
    assert warm.result["decision"] == cold.result["decision"] and warm.result["llr"] == cold.result["llr"]
    n = warm.test.n
    counted = {f"g{k:04d}" for k in range(1, n + 1)}

    def counted_rows(folder):
        return [r for r in _tables(folder) if r[0][:5] in counted]

    assert counted_rows(tmp_path / "warm") == counted_rows(tmp_path / "cold")  # every deal, decision by decision
    for folder in (tmp_path / "warm", tmp_path / "cold"):
        body = json.loads(S.report([folder], fmt="json")[0])
        assert {row["bot"]: row["partie"] for row in body["standings"]} == {"robot": 6 * n, "r": 6 * n}
