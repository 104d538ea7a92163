"""``marias analyze`` (referee/analysis): every card decision valued double-dummy and from the seat's view.

* Two deals worked by hand from RULES.md (a betl and a hra): the values of the cards at the
  decision that matters, double-dummy and from the seat's view, the loss and the blunder mark.
* Properties on random deals played by the engine: a position's value is the best of its
  children's for the side on move (the children valued again after the engine applies each
  action; at the end the engine's settlement), so the solver, the lexicographic leaf and the
  conversion to the seat's groše agree with the rules step by step; the last decision of a
  logged deal is worth what the log settled; values equal the tests' reference solver's.
* Logs: a short in-process log analysed end to end, the per-bot table, the CLI, bad input,
  the cache hidden from bots.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bots.robot import Robot
from referee.analysis import cache, run
from referee.analysis.deals import Settings, analyze_deal
from referee.analysis.summary import bot_rows
from referee.analysis.values import Valuer, dd_values, seat_value
from referee.logs.log import deal_record, selfplay_log
from referee.rules.deal import Deal
from referee.rules.partie import shuffled_deck
from referee.seats.sandbox import OUTPUT_MARKER, marked_outputs
from tests import reference_solver as ref
from tests.builders import act, make_deal, nb_game, play, trump_game
from tests.test_search_solve_props import random_game, random_position

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
PLAYERS = ["A", "B", "C"]


def record_of(deal: Deal) -> dict:
    return deal_record(1, 1, deal, None, list(deal.deck))


def decision_at(analysis: dict, trick: int, seat: int) -> dict:
    return next(d for d in analysis["decisions"] if d["trick"] == trick and d["seat"] == seat)


def values_of(decision: dict, key: str = "dd") -> dict[str, dict]:
    return {e["action"]: e[key] for e in decision["legal"]}


# ------------------------------------------------------------------ worked by hand

def test_a_betl_worked_by_hand():
    """Betl (R4.3, R7.3, R7.11), seat 0 the forhont and actor, level 0: 5 groše from each
    defender (R9.1, never doubled in červené, R9.4), so the actor's payment is +10 won, -10 lost
    (R9.5).  The actor discards Aa Ab and leads 7l; the defenders follow and beat where they must
    (R7.3: follow suit and beat the winning card if able; void: any card):

        T1 A 7l, B Xl, C Ul (C)   T2 C Al, A 9l, B Ol (C)   T3 C Xb, A 7b, B Ub (B)
        T4 B Ob, C Kb, A 8b (C)   T5 C Kh, A 8h, B Xh (C)   T6 C Oh, A 9h, B Uh (C)
        T7 C Ka, A 8a, B Xa (C)   T8 C Oa, A 9b, B Ua (C)

    The actor never beats: each time he follows he holds nothing higher, or is void.  Left:
    A Kl 7h, B 9a 8l, C 7a Ah; C leads 7a and A, void in acorns, discards:

    * Kl: B must play 9a (acorns) and wins; B leads 8l, C (no leaf) plays Ah, A is void in
      leaves and plays 7h: B wins.  The actor took no trick: won, +10.
    * 7h: B wins with 9a as before and leads 8l, C plays Ah; A must follow leaves and beat 8l
      if able: Kl takes the trick, the betl is lost at once, -10.

    So 7h loses 20 groše double-dummy.  From A's own view the three cards he has not seen (9a, 8l,
    Ah) lie two with B and one with C, any way (nothing in the play rules one out).  Kl wins in
    each; 7h loses only where C holds Ah (then B holds 8l and leads it last): with B holding 8l
    and C holding 9a, C wins 7a's trick and leads 9a, nobody can make A win; with C holding 8l,
    B holds 9a and Ah, wins 7a's trick with 9a (acorns, forced) and leads Ah, and A's 7h or Kl is
    no winner.  So the loss from A's view is 20 × (the share of the sampled worlds where C holds
    Ah): more than nothing, a blunder at the threshold of 1 groš once one such world is drawn."""
    d = nb_game("betl", "7l 9l Kl 7b 8b 9b 8a 7h 8h 9h Aa Ab", "Xl Ol Ub Ob Xh Uh Xa Ua 8l 9a",
                "Ul Al Xb Kb Kh Oh Ka Oa 7a Ah", talon="Aa Ab")
    play(d, "7l Xl Ul / Al 9l Ol / Xb 7b Ub / Ob Kb 8b / Kh 8h Xh / Oh 9h Uh / Ka 8a Xa / Oa 9b Ua / 7a 7h 9a / 8l Ah Kl")
    assert d.result.payments == (-10, 5, 5)
    rec = record_of(d)
    late = range(len(rec["decisions"]) - 6, len(rec["decisions"]))  # the last two tricks' steps
    a = analyze_deal(rec, PLAYERS, Settings(worlds=16, bidding=False), steps=late)
    dec = decision_at(a, 9, 0)
    dd = values_of(dec)
    assert dd["play:Kl"] == {"grose": 10, "won": True}
    assert dd["play:7h"] == {"grose": -10, "won": False}
    assert dec["chosen"] == "play:7h" and dec["best_dd"] == ["play:Kl"] and dec["loss_dd"] == 20
    view = values_of(dec, "view")
    assert view["play:Kl"]["grose"] == 10
    k = dec["loss_view"] * dec["worlds"] / 20  # the number of sampled worlds where C holds Ah
    assert dec["worlds"] == 16 and k == int(k) and 1 <= k <= 16
    assert view["play:7h"]["grose"] == pytest.approx(10 - 20 * k / 16)
    assert dec["blunder"] is True
    # the last decision is worth what the deal settled
    last = a["decisions"][-1]
    assert values_of(last)[last["chosen"]]["grose"] == d.result.payments[last["seat"]]


def test_a_hra_worked_by_hand():
    """Hra in acorns (trump card Aa; not červené), seat 0 the forhont and actor; B fleks the hra,
    C and the actor say dobrá: level 1, 2 groše from each defender (R9.1, R9.3), the actor's
    payment +4 won, -4 lost (R9.5).  Play (R7.2; no hláška: no K and O of one suit are ever in
    one hand when either is played, Ob Kb lie in the talon; the trump seven falls in trick 1, so no
    tichá sedma, R7.9):

        T1 A Xa, B 7a, C 8a (A, 10)   T2 A Ka, B Oa, C 9a (A, 0)   T3 A Ah, B 7h, C 8h (A, 10)
        T4 A Ua, B Xh, C Oh (A, 10)   T5 A 8l, B Al, C Xl (B, 20)  T6 B Uh, C Ub, A Kh (A, 0)
        T7 A Kl, B Ul, C Ol (A, 0)    T8 A 9h, B 9b, C 7b (A, 0)

    So the actor has 30 card points, the defence 20, and leads with A Aa Xb, B Ab 7l, C 8b 9l:

    * Xb: B must follow bells and beat: Ab takes Xb (20 to the defence); B leads 7l, A, void,
      must trump: Aa takes the last trick (Aa and the last trick's 10: 20 to the actor).
      50 : 40, the hra won (R7.6): +4, 50 card points.
    * Aa: nobody can follow or trump; B keeps Ab (his best: discarding it would let Xb take the
      last trick), A takes 10; then Xb loses to Ab with the last trick: 30 to the defence.
      40 : 50, lost: -4, 40 card points.

    So Aa loses 8 groše double-dummy.  From A's view every world is the same: the four cards
    he has not seen (Ab 7l 8b 9l) lie two and two, and whoever holds Ab takes Xb when it is led
    and keeps Ab for the last trick when Aa is led; the loss is 8 in every world, a blunder."""
    d = trump_game("Aa Xa Ka Ua Ah Kh 9h 8l Kl Xb Ob Kb", "7a Oa 7h Xh Al Uh Ul 9b Ab 7l",
                   "8a 9a 8h Oh Xl Ub Ol 7b 8b 9l", trump="Aa", talon="Ob Kb", contract="hra",
                   fleks=("flek:hra", "dobra", "dobra"))
    play(d, "Xa 7a 8a / Ka Oa 9a / Ah 7h 8h / Ua Xh Oh / 8l Al Xl / Uh Ub Kh / Kl Ul Ol / 9h 9b 7b / Aa 7l 8b / Xb Ab 9l")
    assert d.hlasky == [] and d.result.payments == (-4, 2, 2)
    rec = record_of(d)
    late = range(len(rec["decisions"]) - 6, len(rec["decisions"]))
    a = analyze_deal(rec, PLAYERS, Settings(worlds=6), steps=late)
    assert len(a["decisions"]) == 6
    dec = decision_at(a, 9, 0)
    dd = values_of(dec)
    assert dd["play:Xb"] == {"grose": 4, "won": True, "points": 50}
    assert dd["play:Aa"] == {"grose": -4, "won": False, "points": 40}
    assert dec["best_dd"] == ["play:Xb"] and dec["loss_dd"] == 8
    view = values_of(dec, "view")
    assert view["play:Xb"] == {"grose": 4, "won": True, "points": 50}
    assert view["play:Aa"] == {"grose": -4, "won": False, "points": 40}
    assert dec["worlds"] == 6 and dec["loss_view"] == 8 and dec["blunder"] is True
    # B's and C's last cards are forced: no choice, no loss counted for them
    assert all(x["forced"] for x in a["decisions"] if x["trick"] == 10)
    # B's flek raised the hra from 0 to 1: it put 1 groš more at stake for each defender (R9.3), won or
    # lost as the hra is on the best line; the declared game's best line settles the hra (or tiché sto)
    (flek,) = a["bidding"]["raises"]
    assert (flek["component"], flek["from"], flek["to"], flek["side"], flek["seats"]) == ("hra", 0, 1, "defence", [1])
    assert abs(flek["gain_dd"]) == 1
    line = {c["name"]: c for c in a["bidding"]["declared"]["line"]}
    hra = line.get("hra") or line["tiche-sto"]
    assert flek["gain_dd"] == (1 if hra["won"] != (hra["owner"] == "actor") else -1)
    assert a["bidding"]["declared"]["made"] == (a["bidding"]["declared"]["dd"]["grose"] > 0)


def test_betl_and_durch_passed_by_worked_by_hand():
    """The forhont holds the O, K and A of every suit, the others the 7 to U.  He takes a trump game
    (barva, discarding Oh Ol).  Durch was makeable with any discard (R7.1: he leads; each card he
    keeps is above every card of its suit the others hold, so each lead takes the trick, R7.3);
    betl was not (his first lead takes the first trick, whatever he keeps: R7.11)."""
    d = make_deal("Ah Kh Oh Al Kl Ol Ab Kb Ob Aa Ka Oa", "7h 8h 9h Xh Uh 7l 8l 9l Xl Ul",
                  "7b 8b 9b Xb Ub 7a 8a 9a Xa Ua")
    act(d, "trump:Ah", "barva:Oh,Ol", "dobra", "dobra", "contract:hra", "dobra", "dobra")
    assert d.result.kind == "conceded"
    a = analyze_deal(record_of(d), PLAYERS, Settings(worlds=0))
    mine = {p["game"]: p for p in a["bidding"]["passed"] if p["seat"] == 0}
    assert mine["durch"]["step"] == 1 and mine["durch"]["makeable"] is True
    assert mine["durch"]["way"].startswith("durch:") and "Ah" not in mine["durch"]["way"]  # not the trump card
    assert mine["betl"]["makeable"] is False and mine["betl"]["way"] is None
    assert a["decisions"] == [] and a["bidding"]["declared"]["game"] == "barva"


# ------------------------------------------------------------------ properties

def random_deal_in_play(rng: random.Random, kind: str) -> Deal:
    """A deal of a random deck bid into ``kind`` (barva: a contract the defence fleks, so it is played)
    and played by random legal cards to a random point before its end."""
    for _ in range(200):
        d = _random_deal(rng, kind)
        if d is not None:
            return d
    raise AssertionError(f"no {kind} deal in play found")


def _random_deal(rng: random.Random, kind: str) -> Deal | None:
    d = Deal(shuffled_deck(f"analysis:{rng.random()}"), 0)
    while not d.done and d.phase != "play":
        legal = d.legal_actions()
        if d.phase == "talon":
            pick = [a for a in legal if a.kind == kind]
        elif d.phase == "answer":
            pick = [a for a in legal if a.kind == "dobra"]
        elif d.phase == "flek" and not d.levels.get("hra") and not d.levels.get("sto") and d.to_move != d.actor and kind == "barva":
            pick = [a for a in legal if a.words]
        else:
            pick = legal
        d.apply(rng.choice(pick or legal))
    if d.phase != "play" or d.game != kind:
        return None
    left = rng.randint(1, 5) if kind == "barva" else rng.randint(3, 10)
    while not d.done and 10 - len(d.tricks) > left:
        d.apply(rng.choice([a for a in d.legal_actions() if a.kind == "play"]))
    for _ in range(rng.randrange(3)):  # part of a trick
        if d.done or len(d.trick) == 2:
            break
        d.apply(rng.choice([a for a in d.legal_actions() if a.kind == "play"]))
    return None if d.done else d


def actor_terms(deal: Deal, v) -> tuple:
    """A value in the seat to move's terms back in the actor's (his payment, his side's card points)."""
    seat = deal.to_move
    if seat == deal.actor:
        return v.grose, v.points
    return -2 * v.grose, None if v.points is None else 90 - v.points


@settings(max_examples=80, **SETTINGS)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["barva", "barva", "betl", "durch"]))
def test_a_position_is_worth_the_best_of_its_children(seed, kind):
    """Each card's value is the best of the next position's card values for the side then on move
    (the actor's payment and card points, lexicographic), or the engine's settlement when the card
    ends the deal.  The solver's lines are card play: laying down (R8) is valued where it is
    offered, never inside a line; where offered, it is worth at least the actor's best card (R8.1:
    no order of play changes the result; R8.4 even counts his trump seven in the last trick when
    the rules of play would make him trump with it earlier)."""
    rng = random.Random(seed)
    d = random_deal_in_play(rng, kind)
    valuer = Valuer()
    values = dd_values(d, valuer)
    assert set(values) == {str(a) for a in d.legal_actions()}
    cards = {a: v for a, v in values.items() if a != "lay"}
    if "lay" in values:
        assert values["lay"].grose >= max(v.grose for v in cards.values())
    for action, v in cards.items():
        child = d.copy()
        child.apply(action)
        if child.done:
            a = child.actor
            pts = child.points[a] if child.game == "barva" else None
            want = (child.result.payments[a], pts)
        else:
            kids = [actor_terms(child, w) for b, w in dd_values(child, valuer).items() if b != "lay"]
            lex = [(g, p or 0) for g, p in kids]
            best = max(lex) if child.to_move == child.actor else min(lex)
            want = (best[0], best[1] if child.game == "barva" else None)
        assert actor_terms(d, v) == want, (action, d)


@settings(max_examples=30, **SETTINGS)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["barva", "betl", "durch"]))
def test_the_last_decision_is_worth_the_settlement(seed, kind):
    rng = random.Random(seed)
    d = random_deal_in_play(rng, kind)
    valuer = Valuer()
    while True:
        seat = d.to_move
        values = dd_values(d, valuer)
        action = rng.choice(sorted(values))
        d.apply(action)
        if d.done:
            break
    assert values[action].grose == d.result.payments[seat]
    if d.game == "barva":
        side = [s for s in range(3) if (s == d.actor) == (seat == d.actor)]
        assert values[action].points == sum(d.points[s] for s in side)


@settings(max_examples=40, **SETTINGS)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["barva", "betl", "durch"]), tricks_left=st.integers(2, 6))
def test_values_equal_the_reference_solver(seed, kind, tricks_left):
    rng = random.Random(seed)
    game_args = random_game(rng, kind)
    old = ref.Solver(ref.Game.make(*game_args))
    pos = random_position(rng, old.game, tricks_left)
    from bots.search_solve import Game, Position

    game = Game.make(*game_args)
    mine = Valuer().solve(game, Position(hands=list(pos.hands), leader=pos.leader, trick=list(pos.trick),
                                         tricks_done=pos.tricks_done, a_cards=pos.a_cards, d_cards=pos.d_cards,
                                         a_hl=pos.a_hl, d_hl=pos.d_hl, lost_early=pos.lost_early))
    assert {c: g for c, (g, _p) in mine.items()} == old.solve(pos)


def test_seat_terms():
    # one groš per defender: the actor receives 2, each defender pays 1; card points by side
    assert seat_value(0, 0, 1, 60).grose == 2 and seat_value(0, 0, 1, 60).points == 60
    assert seat_value(1, 0, 1, 60).grose == -1 and seat_value(1, 0, 1, 60).points == 30


# ------------------------------------------------------------------ logs

@pytest.fixture(scope="module")
def small_log(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("logs")
    path = folder / "robots.jsonl"
    selfplay_log(path, [Robot(), Robot(), Robot()], seed="analysis-test", deals=2, fsync=False,
                 commands=["builtin:robot", "builtin:robot", "builtin:robot"])
    return path


@pytest.mark.slow
def test_a_log_analysed_end_to_end(small_log):
    out = run.log_analysis(small_log, Settings(worlds=0))
    recs = [json.loads(x) for x in small_log.read_text().splitlines()]
    deals = [r for r in recs if r["type"] == "deal"]
    assert len(out["deals"]) == len(deals) == 2
    for rec, a in zip(deals, out["deals"]):
        plays = [i for i, x in enumerate(rec["decisions"]) if x["decision"] == "play"]
        assert [x["step"] for x in a["decisions"]] == plays  # steps as the replayer counts them
        for x in a["decisions"]:
            assert rec["decisions"][x["step"]]["action"] == x["chosen"]
            assert x["loss_dd"] >= 0 and (x["loss_view"] is None or x["loss_view"] >= 0)
        if plays and rec["result"]["kind"] == "played":
            last = a["decisions"][-1]
            assert values_of(last)[last["chosen"]]["grose"] == rec["result"]["payments"][last["seat"]]
    rows = bot_rows(out["deals"])
    assert [r["bot"] for r in rows] == ["robot#0", "robot#1", "robot#2"]
    assert sum(r["decisions"] for r in rows) == sum(not x["forced"] for a in out["deals"] for x in a["decisions"])
    # the same numbers in two processes
    assert run.analyze_logs([small_log], Settings(worlds=0), jobs=2).logs[0]["deals"] == out["deals"]


def test_the_view_is_sampled_the_same_again(small_log):
    """A fixed seed: the same worlds, the same numbers; another seed, other worlds (the last tricks only)."""
    rec, players = run.read(small_log).deals[0]
    late = range(len(rec["decisions"]) - 9, len(rec["decisions"]))
    one = analyze_deal(rec, players, Settings(worlds=8, bidding=False), steps=late)
    assert analyze_deal(rec, players, Settings(worlds=8, bidding=False), steps=late) == one
    assert any(x["worlds"] == 8 for x in one["decisions"])


def test_the_cache_is_hidden_from_bots(small_log, tmp_path):
    log = tmp_path / "plain" / "copy.jsonl"  # a folder marias never marked
    log.parent.mkdir()
    log.write_bytes(small_log.read_bytes())
    calls = []

    def compute(path, s):
        calls.append(path)
        return {"analysis_version": run.ANALYSIS_VERSION, "log": str(path), "deals": []}

    s = Settings(worlds=0, bidding=False)
    first = cache.cached_log_analysis(log, s, compute)
    assert cache.cached_log_analysis(log, s, compute) == first and len(calls) == 1
    where = cache.cache_path(log, s)
    assert where.parent.name == cache.CACHE_DIR and (where.parent / OUTPUT_MARKER).exists()
    assert where.stat().st_mode & 0o077 == 0
    folders, _files = marked_outputs([str(tmp_path)])
    assert str(where.parent) in folders  # the sandbox covers it for every bot
    # another log's bytes, another entry
    log.write_bytes(small_log.read_bytes() + b"\n")
    cache.cached_log_analysis(log, s, compute)
    assert len(calls) == 2
    # beside a log in a folder already marked, no marker of its own: the folder above covers it
    marked = tmp_path / "marked"
    marked.mkdir()
    (marked / OUTPUT_MARKER).write_text("x")
    log2 = marked / "copy.jsonl"
    log2.write_bytes(small_log.read_bytes())
    cache.cached_log_analysis(log2, s, compute)
    assert not (cache.cache_path(log2, s).parent / OUTPUT_MARKER).exists()
    assert str(marked) in marked_outputs([str(tmp_path)])[0]


@pytest.mark.slow
def test_cli_tables_and_errors(small_log, tmp_path):
    from typer.testing import CliRunner

    from referee.cli import app

    r = CliRunner().invoke(app, ["analyze", str(small_log), "--worlds", "0", "--format", "csv", "--list", "all", "-q"])
    assert r.exit_code == 0, r.output
    assert "# analysis" in r.stdout and "bot,decisions,loss_dd,loss_view" in r.stdout and "# decisions" in r.stdout
    r = CliRunner().invoke(app, ["analyze", str(small_log), "--worlds", "0", "--json", "--bot", "robot#1", "-q",
                                 "--no-bidding"])
    body = json.loads(r.stdout)
    assert [row["bot"] for row in body["summary"]] == ["robot#1"]
    assert all(d["bidding"] is None for lg in body["logs"] for d in lg["deals"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "deal"}\n')
    r = CliRunner().invoke(app, ["analyze", str(bad)])
    assert r.exit_code == 2 and "bad.jsonl" in r.output and "not a marias log" in r.output
    r = CliRunner().invoke(app, ["analyze", str(small_log), "--bot", "nobody"])
    assert r.exit_code == 2 and "robot#0" in r.output
    r = CliRunner().invoke(app, ["analyze", str(tmp_path / "missing")])
    assert r.exit_code == 2 and "missing" in r.output


@pytest.mark.slow
def test_bench_analyze_measures_the_search_bot_and_the_analysis_in_one_run(tmp_path):
    from referee.analysis.bench import analyze

    out = analyze(ms=5, seed="t", profile=False, keep=tmp_path)
    (log,) = tmp_path.glob("*.jsonl")
    rec_plays = sum(x["decision"] == "play" for r in map(json.loads, log.read_text().splitlines())
                    if r["type"] == "deal" for x in r["decisions"])
    assert out["deals"] == 12 and out["card_decisions_valued"] == rec_plays
    assert out["search_decisions"] > 0 and out["search_cpu_s"] > 0 and out["analysis_dd_cpu_s"] > 0
    # the ratio of the two CPU times (the figures are rounded to milliseconds)
    assert out["ratio_dd_to_search"] == pytest.approx(out["analysis_dd_cpu_s"] / out["search_cpu_s"], rel=0.02)
