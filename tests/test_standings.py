"""Tables from logs (referee/tournaments/standings.py): hand-made partie with hand-worked expectations,
properties of the pairwise flows and shared places, and real logs read back."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from referee.tournaments import standings as S
from referee.cli import app

DECK = tuple(f"c{i}" for i in range(32))  # only compared for grouping, never dealt


def comp(name, owner, won, amount, level=0):
    return {"name": name, "owner": owner, "won": won, "level": level, "amount": amount, "detail": ""}


def deal(payments, actor=None, comps=(), decisions=(), faults=(), proti=None, contract=None):
    assert sum(payments) == 0
    return {"type": "deal", "result": {"kind": "fault" if faults else "played", "actor": actor,
                                       "components": list(comps), "payments": list(payments), "notes": []},
            "decisions": [{"seat": s, "decision": d, "action": a, "ms": ms} for s, d, a, ms in decisions],
            "faults": [{"seat": s, "kind": k, "message": ""} for s, k in faults],
            "proti": proti or {}, "contract": contract, "actor": actor}


def partie(bots, deals, source="hand.jsonl", n=1, deck=DECK):
    totals = [sum(d["result"]["payments"][s] for d in deals) for s in range(3)]
    return S.PartieRecord(source, n, tuple(bots), totals, [], list(deals), deck)


def two_partie():
    """Partie 1 seats A, B, C; partie 2 the same deck with seats B, C, A (worked out in the comments)."""
    p1 = partie("ABC", [
        # A's hra, fleked by B (seat 1) and won by A: 2 from each defender
        deal((4, -2, -2), actor=0, contract="hra", comps=[comp("hra", "actor", True, 2, 1)],
             decisions=[(0, "trump", "trump:Ah", 1.0), (1, "flek", "flek:hra", 4.0), (2, "flek", "dobra", 2.0),
                        (0, "flek", "dobra", 3.0)]),
        # B's betl, fleked by C (seat 2), lost: B pays 10 to each
        deal((10, -20, 10), actor=1, comps=[comp("betl", "actor", False, 10, 1)],
             decisions=[(2, "flek", "flek:betl", 6.0), (0, "flek", "dobra", 1.0)]),
        # C times out before any contract (R12.2): pays 10 to each
        deal((10, 10, -20), faults=[(2, "timeout")]),
    ], n=1)
    p2 = partie("BCA", [
        # B's sedma: hra won (1), sedma lost (2): B pays 1 to each
        deal((-2, 1, 1), actor=0, contract="sedma",
             comps=[comp("hra", "actor", True, 1), comp("sedma", "actor", False, 2)]),
        # A's hra won (1), C's sedma proti won and fleked by A (4): A pays 3 to each
        deal((3, 3, -6), actor=2, contract="hra", proti={"sedma": 1},
             comps=[comp("hra", "actor", True, 1), comp("sedma-proti", "defence", True, 4, 1)],
             decisions=[(1, "flek", "proti:sedma", 5.0), (2, "flek", "flek:sedma-proti", 9.0)]),
        # C's hra turned tiché sto (2): C gets 2 from each
        deal((-2, 4, -2), actor=1, contract="hra", comps=[comp("tiche-sto", "actor", True, 2)]),
    ], n=2)
    return [p1, p2]


def test_totals_places_and_shared_places():
    t = S.compute(two_partie())
    a, b, c = t.bots["A"], t.bots["B"], t.bots["C"]
    assert [p.totals for p in t.parties] == [[24, -12, -12], [-1, 8, -7]]
    assert (a.groše, b.groše, c.groše) == (17, -13, -4)
    assert (a.partie, b.partie, c.partie) == (2, 2, 2)
    # R9.7: B and C share 2nd-3rd in partie 1 (half of each place)
    assert a.place_credit == [1, 0, 1]
    assert b.place_credit == [0, 1.5, 0.5]
    assert c.place_credit == [1, 0.5, 0.5]
    assert (a.place_sum / 2, b.place_sum / 2, c.place_sum / 2) == (2.0, 2.25, 1.75)
    rows = {r["bot"]: r for r in S.standings_rows(t)}
    assert [r["bot"] for r in S.standings_rows(t)] == ["A", "C", "B"]
    assert rows["A"]["mean"] == 8.5 and rows["B"]["2nd"] == 1.5 and rows["C"]["1st"] == 1
    assert rows["A"]["±95%"] is None  # one duplicate group: no interval


def test_actor_contracts_fleks_faults_and_times():
    t = S.compute(two_partie())
    a, b, c = t.bots["A"], t.bots["B"], t.bots["C"]
    assert (a.actor, a.actor_won) == (2, 1)  # won as actor = positive net payment (R10.2)
    assert (b.actor, b.actor_won) == (2, 0)
    assert (c.actor, c.actor_won) == (1, 1)  # the fault before a contract is nobody's actor deal
    assert a.contracts["hra"] == [2, 0]
    assert b.contracts["hra"] == [1, 0] and b.contracts["sedma"] == [0, 1] and b.contracts["betl"] == [0, 1]
    assert c.contracts["hra"] == [1, 0]  # tiché sto replaced the won hra
    assert c.contracts["proti"] == [1, 0]
    assert (a.fleks_given, a.fleks_won) == (1, 0)  # A fleked the sedma proti that C won
    assert (b.fleks_given, b.fleks_won) == (1, 0)  # B fleked a hra that A won
    assert (c.fleks_given, c.fleks_won) == (1, 1)  # C fleked the betl that B lost
    assert c.faults == {"timeout": 1} and a.faults == {} and b.faults == {}
    # A: 1 + 3 (deal 1) + 1 (deal 2) as seat 0, 9 as seat 2 of partie 2; B: 4; C: 2 + 6, then 5
    assert (a.decisions, a.mean_ms, a.ms_max) == (4, 14 / 4, 9.0)
    assert b.decisions == 1 and b.ms_sum == 4.0
    assert c.decisions == 3 and c.ms_sum == 13.0 and c.ms_max == 6.0
    row = {r["bot"]: r for r in S.play_rows(t)}["B"]
    assert row["betl"] == "0:1" and row["sedma"] == "0:1" and row["faults"] == "-"
    split = {r["bot"]: r for r in S.play_rows(t, split=True)}["C"]
    assert split["proti won"] == 1 and split["faults timeout"] == 1 and split["faults"] == 1


def test_cross_table_worked_example():
    t = S.compute(two_partie())
    # flows worked by hand: B->A 2+10+1, A->B 3; C->A 2+10, A->C 3+2; C->B 10, B->C 10+1+2
    assert t.cross["A"] == {"B": 10, "C": 7}
    assert t.cross["B"] == {"A": -10, "C": -3}
    assert t.cross["C"] == {"A": -7, "B": 3}
    rows = {r["bot"]: r for r in S.cross_rows(t)}
    assert rows["A"]["A"] is None and rows["A"]["total"] == 17 and rows["C"]["total"] == -4


def test_R10_1_series_best_n():
    t = S.compute(two_partie())
    rows = S.series_rows(t, 1)
    assert [(r["bot"], r["best 1"]) for r in rows] == [("A", 24), ("C", 8), ("B", -1)]
    rows = S.series_rows(t, 3)  # fewer partie than N: the missing ones count 0 (R10.1)
    assert [(r["bot"], r["best 3"], r["counted"]) for r in rows] == [("A", 17, 2), ("C", -4, 2), ("B", -13, 2)]


def test_R10_2_series_ties():
    won = lambda pay, actor: deal(pay, actor=actor, comps=[comp("hra", "actor", pay[actor] > 0, 1)])
    parties = [
        partie("XYZ", [won((2, -1, -1), 0)], n=1, deck=("d1",)),  # X +2, won as actor
        partie("XYW", [won((-1, 2, -1), 1)], n=2, deck=("d2",)),  # Y +2, won as actor
        partie("XYW", [won((-2, 1, 1), 0)], n=3, deck=("d3",)),   # X lost as actor
        partie("UVT", [won((2, -1, -1), 0)], n=4, deck=("d4",)),  # U +2
        partie("UVT", [won((2, -1, -1), 0)], n=5, deck=("d5",)),  # U +2
    ]
    t = S.compute(parties)
    rows = {r["bot"]: r for r in S.series_rows(t, 1)}
    # X, Y and U all have a best partie of +2; X and U played more partie than Y (R10.2, first tie-break)
    assert rows["X"]["best 1"] == rows["Y"]["best 1"] == rows["U"]["best 1"] == 2
    assert t.bots["X"].partie == 3 and t.bots["U"].partie == 2 and t.bots["Y"].partie == 3
    # X and Y: 3 partie, one deal won as actor in the counted partie each -> they share 1st; U is 3rd
    assert rows["X"]["#"] == "1=" and rows["Y"]["#"] == "1=" and rows["U"]["#"] == "3"


def test_confidence_interval_uses_duplicate_groups():
    # bot A: groups (decks) with partie totals [10, 20], [0], [30, 50, 40] -> group means 15, 0, 40
    parts = []
    for deck, totals in (("g1", [10, 20]), ("g2", [0]), ("g3", [30, 50, 40])):
        for i, g in enumerate(totals):
            parts.append(partie("ABC", [deal((g, -g, 0), actor=0)], n=i + 1, deck=(deck,)))
    t = S.compute(parts)
    a = t.bots["A"]
    means = [15, 0, 40]
    m = sum(means) / 3
    sd = math.sqrt(sum((x - m) ** 2 for x in means) / 2)
    assert a.ci95 == pytest.approx(4.3027 * sd / math.sqrt(3), rel=3e-5)  # t(0.975, 2) = 4.302653
    assert a.mean == pytest.approx(150 / 6)


def test_t_quantiles():
    assert S.t975(1) == pytest.approx(12.7062, abs=1e-4) and S.t975(9) == pytest.approx(2.2622, abs=1e-4)
    assert S.t975(10) == pytest.approx(2.2281, abs=1e-4)
    assert S.t975(30) == pytest.approx(2.0423, abs=1e-4)
    assert S.t975(120) == pytest.approx(1.9799, abs=1e-4)
    assert S.t975(10 ** 6) == pytest.approx(1.95996, abs=1e-4)


def test_rating_is_openskill_plackett_luce_over_places():
    from openskill.models import PlackettLuce

    parties = two_partie()
    t = S.compute(parties)
    model = PlackettLuce()
    r = {n: model.rating(name=n) for n in "ABC"}
    for bots, ranks in (("ABC", [1, 2, 2]), ("BCA", [2, 1, 3])):  # equal totals share the rank
        new = model.rate([[r[n]] for n in bots], ranks=ranks)
        for n, team in zip(bots, new):
            r[n] = team[0]
    rows = S.rating_rows(t)
    assert [row["bot"] for row in rows] == sorted("ABC", key=lambda n: -r[n].ordinal())
    for row in rows:
        assert row["mu"] == round(r[row["bot"]].mu, 2) and row["sigma"] == round(r[row["bot"]].sigma, 2)
        assert row["partie"] == 2


def test_competition_ranks_and_place_credit():
    assert S.competition_ranks([24, -12, -12]) == [1, 2, 2]
    assert S.competition_ranks([0, 0, 0]) == [1, 1, 1]
    assert S.place_credit([5, 5, -10]) == [[0.5, 0.5, 0], [0.5, 0.5, 0], [0, 0, 1]]
    assert S.place_credit([0, 0, 0]) == [[pytest.approx(1 / 3)] * 3] * 3


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-200, 200), min_size=3, max_size=3))
def test_place_credit_is_a_fair_split(totals):
    credit = S.place_credit(totals)
    for s in range(3):
        assert sum(credit[s]) == pytest.approx(1)
    for pos in range(3):
        assert sum(credit[s][pos] for s in range(3)) == pytest.approx(1)
    for s in range(3):  # the averaged place equals R9.7's shared place
        better = sum(1 for u in totals if u > totals[s])
        equal = sum(1 for u in totals if u == totals[s])
        assert sum((i + 1) * credit[s][i] for i in range(3)) == pytest.approx(better + (equal + 1) / 2)


settlements = st.builds(
    lambda actor, amount, kind, faulter: (
        # R9.5: each defender pays amount, the actor gets twice; R12.2 faults
        [2 * amount if s == actor else -amount for s in range(3)] if kind == "normal"
        else [2 * amount if s == actor else (-2 * amount if s == faulter else 0) for s in range(3)]
        if kind == "defender-fault" and faulter != actor
        else [-20 if s == faulter else 10 for s in range(3)]),
    st.integers(0, 2), st.integers(-64, 64), st.sampled_from(["normal", "defender-fault", "before-contract"]),
    st.integers(0, 2))


@settings(max_examples=100, deadline=None)
@given(settlements)
def test_pair_flows_reproduce_every_settlement(payments):
    flows = S.pair_flows(payments)
    net = [0, 0, 0]
    for (payer, payee), g in flows.items():
        assert g > 0 and payer != payee
        net[payer] -= g
        net[payee] += g
    assert net == payments
    assert len(flows) <= 2  # the two seats paid alike never pay each other


def test_pair_flows_examples():
    assert S.pair_flows([4, -2, -2]) == {(1, 0): 2, (2, 0): 2}
    assert S.pair_flows([10, 10, -20]) == {(2, 0): 10, (2, 1): 10}
    assert S.pair_flows([8, -8, 0]) in ({(1, 0): 8},)
    assert S.pair_flows([0, 0, 0]) == {}
    with pytest.raises(ValueError):
        S.pair_flows([1, 0, 0])


# ------------------------------------------------------------------ real logs

@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    import bots
    from referee.logs.log import selfplay_log

    folder = tmp_path_factory.mktemp("logs")
    for i in range(3):
        players = [bots.make("random", seed=f"st:{i}:{s}") for s in range(3)]
        selfplay_log(folder / f"sp{i}.jsonl", players, seed=f"st:{i}", fsync=False)
    return folder


def test_real_logs_add_up(logs):
    parties, skipped = S.load([logs])
    assert skipped == [] and len(parties) == 3
    footers = [json.loads(p.read_text().splitlines()[-1]) for p in sorted(logs.glob("*.jsonl"))]
    t = S.compute(parties)
    assert sum(b.groše for b in t.bots.values()) == 0
    for s in range(3):  # selfplay logs name all three 'random': seats are told apart
        assert t.bots[f"random#{s}"].groše == sum(f["totals"][s] for f in footers)
    for row in S.cross_rows(t):
        assert row["total"] == t.bots[row["bot"]].groše
    for b in t.bots.values():
        assert b.deals == 36 and b.decisions > 0


def test_incomplete_and_foreign_files_are_left_out(logs, tmp_path):
    good = sorted(logs.glob("*.jsonl"))[0]
    lines = good.read_text().splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_text("".join(lines[:-3]))
    (tmp_path / "other.jsonl").write_text('{"hello": 1}\n')
    (tmp_path / "ok.jsonl").write_text("".join(lines))
    parties, skipped = S.load([tmp_path])
    assert len(parties) == 1 and len(skipped) == 2
    assert any("cut.jsonl: incomplete" in s for s in skipped)
    assert any("other.jsonl: not a marias log" in s for s in skipped)


def test_a_log_named_twice_counts_once(logs):
    one = sorted(logs.glob("*.jsonl"))[0]
    parties, skipped = S.load([logs, one, one])
    assert len(parties) == 3 and skipped == []


def test_render_formats(logs):
    text, skipped, t = S.report([logs], fmt="json", series=2)
    body = json.loads(text)
    assert set(body) == {"standings", "pairs", "play", "cross", "series", "rating"}
    assert sum(r["groše"] for r in body["standings"]) == 0
    csv_text, _, _ = S.report([logs], fmt="csv")
    sections = [s for s in csv_text.split("# ") if s]
    assert [s.splitlines()[0] for s in sections] == ["standings", "pairs", "play", "cross", "rating"]
    rows = list(csv.DictReader(io.StringIO(sections[0].split("\n", 1)[1])))
    assert len(rows) == 3 and {"bot", "groše", "mean", "±95%"} <= set(rows[0])
    md, _, _ = S.report([logs], fmt="md")
    assert "## Standings" in md and "|" in md
    plain, _, _ = S.report([logs], fmt="text")
    assert "Cross table" in plain and "3 partie from 3 log(s), 36 deals" in plain


def test_table_command(logs):
    runner = CliRunner()
    r = runner.invoke(app, ["table", str(logs), "--table", "standings", "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("# standings\n")
    expected, _, _ = S.report([logs], fmt="csv", which=["standings"])
    body, _, decks = r.output.strip().rpartition("\n")
    assert body.strip() == expected.strip() and decks.startswith("# decks: ")  # where the decks came from (issue 22)
    r = runner.invoke(app, ["table", str(logs), "--table", "series"])
    assert r.exit_code != 0 and "--series" in r.output


# ------------------------------------------------------------------ R12.3 forfeits (a log written by hand)

def forfeit_log(path):
    """A faults at deals 2, 4 and 6 (timeouts before a contract: A pays 10 to each, R12.2) and, with
    max_faults 3, forfeits deals 7-12 (R12.3: six more such payments, -120 / +60 / +60)."""
    deals = [
        deal((-2, 4, -2), actor=1, contract="hra", comps=[comp("hra", "actor", True, 2, 1)]),  # B's hra won
        deal((-20, 10, 10), faults=[(0, "timeout")]),
        deal((10, 10, -20), actor=2, comps=[comp("betl", "actor", False, 10, 1)]),  # C's betl lost
        deal((-20, 10, 10), faults=[(0, "timeout")]),
        deal((4, -2, -2), actor=0, contract="hra", comps=[comp("hra", "actor", True, 2, 1)]),  # A's hra won
        deal((-20, 10, 10), faults=[(0, "timeout")]),
    ]
    for i, d in enumerate(deals, 1):
        d.update(partie=1, deal=i, deck=list(DECK))
    forfeit = {"type": "forfeit", "partie": 1, "seat": 0, "from_deal": 7, "deals": 6, "payments": [-120, 60, 60],
               "rule": "R12.3"}
    totals = [-168, 102, 66]  # worked by hand: A -2-20+10-20+4-20-120, B 4+10+10+10-2+10+60, C the rest
    records = [
        {"type": "header", "format": "marias-log", "seed": "hand", "bots": [
            {"seat": s, "label": n, "command": "builtin:test", "name": n, "version": "1", "fingerprint": f"{s}" * 64}
            for s, n in enumerate("ABC")]},
        {"type": "partie_start", "partie": 1},
        *deals[:6], forfeit,
        {"type": "partie_end", "partie": 1, "totals": totals, "places": [3, 1, 2]},
        {"type": "footer", "totals": totals},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_forfeit_is_shown_and_counted(tmp_path):
    parties, skipped = S.load([forfeit_log(tmp_path / "f.jsonl")], validate=False)
    assert skipped == [] and len(parties) == 1 and len(parties[0].forfeits) == 1
    t = S.compute(parties)
    assert {n: b.groše for n, b in t.bots.items()} == {"A": -168, "B": 102, "C": 66}
    assert [r["bot"] for r in S.standings_rows(t)] == ["B", "C", "A"]
    # flows by hand: A->B 2 (deal 1), 10+10+10 (faults), 60 (forfeit), B->A 2 (deal 5): net -90
    assert t.cross["A"] == {"B": -90, "C": -78} and t.cross["B"] == {"A": 90, "C": 12}
    for row in S.cross_rows(t):
        assert row["total"] == t.bots[row["bot"]].groše
    play = {r["bot"]: r for r in S.play_rows(t)}
    assert play["A"]["deals"] == 6 and play["A"]["faults"] == "timeout 3"
    assert (play["A"]["forfeits"], play["A"]["forfeited"]) == (1, "from deal 7")
    assert (play["B"]["forfeits"], play["B"]["forfeited"]) == (0, "-")
    split = {r["bot"]: r for r in S.play_rows(t, split=True)}["A"]
    assert split["forfeits"] == 1 and split["faults timeout"] == 3
    text = S.render(S.build(t, which=["play"]), "text")
    assert "from deal 7" in text
    assert S.forfeit_text([7, 10]) == "from deals 7, 10"
    rows = {r["bot"]: r for r in S.standings_rows(t)}
    assert rows["A"]["fingerprint"] == "0" * 12


# ------------------------------------------------------------------ a tournament folder: only its manifest's units

def test_tables_of_a_tournament_count_only_its_manifest(logs, tmp_path):
    from referee.tournaments import tournament as T

    good = sorted(logs.glob("*.jsonl"))
    out = tmp_path / "t"
    (out / "logs" / ".hidden").mkdir(parents=True)
    units = [{"id": f"u{i}", "log": f"logs/u{i}.jsonl", "table": 1, "partie": 1, "seats": []} for i in range(3)]
    (out / T.MANIFEST_FILE).write_text(json.dumps({"format": T.MANIFEST_FORMAT, "version": 1, "units": units}))
    for i in range(2):  # u2 not played yet
        (out / "logs" / f"u{i}.jsonl").write_text(good[i].read_text())
    with open(out / T.JOURNAL_FILE, "w") as f:  # accepted by the tournament: on record with their hashes
        for i in range(2):
            sha = hashlib.sha256((out / "logs" / f"u{i}.jsonl").read_bytes()).hexdigest()
            f.write(json.dumps({"id": f"u{i}", "status": "done", "sha256": sha}) + "\n")
    (out / "logs" / ".hidden" / "stray.jsonl").write_text(good[2].read_text())  # a valid log, but no unit
    (out / "logs" / "extra.jsonl").write_text(good[2].read_text())
    for where in (out, out / "logs"):
        parties, skipped = S.load([where])
        assert len(parties) == 2, skipped
        assert sorted(s.split(": ")[0].rsplit("/", 1)[-1] for s in skipped if "not a unit" in s) == \
            ["extra.jsonl", "stray.jsonl"]
        assert any("1 of the 3 units in its manifest have no log" in s for s in skipped)
    # without a manifest every log counts (a folder of match logs), a match copied twice once
    (out / T.MANIFEST_FILE).unlink()
    parties, skipped = S.load([out])
    assert len(parties) == 3
    assert [s.split(": ")[0].rsplit("/", 1)[-1] for s in skipped if "a copy of" in s] == ["extra.jsonl"]  # .hidden/stray.jsonl sorts first


def test_match_seat_rows_show_forfeits():
    from types import SimpleNamespace

    from referee.logs.tables import seat_rows

    seat = lambda **kw: SimpleNamespace(decisions=2, total_ms=3.0, max_ms=2.0, faults={}, **kw)
    result = SimpleNamespace(names=["a", "b", "c"], totals=[-130, 65, 65], stats=[
        seat(forfeited=[{"partie": 1, "from_deal": 7}, {"partie": 3, "from_deal": 12}]), seat(forfeited=[]),
        seat(forfeited=[{"partie": 2, "from_deal": 4}])])
    rows = seat_rows(result)
    assert [r["forfeited (R12.3)"] for r in rows] == ["partie 1 from deal 7, partie 3 from deal 12", "-",
                                                      "partie 2 from deal 4"]
