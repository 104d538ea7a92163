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


def test_no_process_plays_two_arrangements_of_one_deck(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    probe = f"p={sys.executable} {tmp_path / 'probe.py'}"
    run = _run(tmp_path, [probe, "robot", "r=random"], "t", warm=True, partie=4, concurrency=1)
    folder = tmp_path / "t"
    units = T.plan_units(run.config)
    deck_of = {u.id: (u.table, u.deck_slot) for u in units}  # which starting deck each unit plays
    firsts = _deal_ones(folder)
    told = []
    for f in (folder / "logs").glob("*.stderr.log"):
        for line in f.read_text().splitlines():
            if line.startswith("PROBE "):
                told.append(json.loads(line[6:]))
    assert len(told) == len(units)  # every partie told once
    decks = defaultdict(list)
    for token, seat, hand in told:  # the unit whose deal 1 gave this seat this hand
        match = [uid for uid, rec in firsts.items() if set(hand) <= set(rec["hands"][seat])]
        assert match
        # arrangements of one deck give a seat the same cards: name the deck, not the unit
        found = {deck_of[uid] for uid in match}
        assert len(found) == 1, (hand, match)
        decks[token].append(found.pop())
    assert any(len(v) > 1 for v in decks.values()), "no process played more than one partie: nothing was warm"
    for token, seen in decks.items():
        assert len(seen) == len(set(seen)), f"process {token} played one deck twice: {seen}"


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
