"""marias validate: unmodified logs pass; every kind of tampering is caught and the right rule named."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from referee.rules.cards import Card
from referee.cli import app
from referee.rules.deal import Deal, IllegalAction
from referee.logs.log import dealt_hands, read_log, sealed_lines, selfplay_log
from referee.rules.partie import next_deck, places
from referee.logs.validate import replay_record, validate_file

from tests.test_log import chooser_bots, fault_log, random_bots
from tests.test_properties import collect

# ------------------------------------------------------------------ a corpus of real logs


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[tuple[str, list[dict]]]:
    """Unmodified logs: chooser self-play (trump games, fleks, hlášky, laid cards), random
    self-play (betl, durch, long flek chains) and partie with faults."""
    d = tmp_path_factory.mktemp("corpus")
    logs = []
    for seed in range(8):
        selfplay_log(d / f"chooser{seed}.jsonl", chooser_bots(seed), seed=seed, fsync=False)
        logs.append(d / f"chooser{seed}.jsonl")
    for seed in range(3):
        selfplay_log(d / f"random{seed}.jsonl", random_bots(seed), seed=seed, fsync=False)
        logs.append(d / f"random{seed}.jsonl")
    for seed in range(2):
        logs.append(fault_log(d / f"fault{seed}.jsonl", seed, parties=2))
    out = []
    for path in logs:
        records, problems = read_log(path)
        assert problems == [] and validate_file(path).ok, path
        out.append((path.name, records))
    return out


def deals(recs):
    return [r for r in recs if r["type"] == "deal"]


def cards(codes):
    return [Card.parse(c) for c in codes]


def replay_to(rec: dict, n: int) -> Deal:
    """The deal of ``rec`` after its first ``n`` decisions."""
    d = Deal(cards(rec["deck"]), rec["forhont"])
    for dec in rec["decisions"][:n]:
        d.apply(dec["action"])
    return d


def engine_collected(rec: dict) -> list[Card]:
    d = replay_to(rec, len(rec["decisions"]))
    if rec["faults"]:
        f = rec["faults"][0]
        d.fault(f["seat"], f["kind"], f["message"], f["evidence"])
    return d.collected_deck()


def prev_deal(recs, rec):
    i = recs.index(rec)
    p = recs[i - 1]
    return p if p["type"] == "deal" else None


def set_deck(rec, deck):
    rec["deck"] = [str(c) for c in deck]
    rec["hands"] = [[str(c) for c in h] for h in dealt_hands(deck, rec["forhont"])]


def played_barva(r):
    return r["game"] == "barva" and r["tricks"] and not r["faults"]


# ------------------------------------------------------------------ tampering

def t_deck_card_swapped_between_hands(recs):
    for r in deals(recs):
        if r["deal"] >= 2:
            deck = cards(r["deck"])
            deck[0], deck[7] = deck[7], deck[0]  # forhont's first card <-> middle player's first
            set_deck(r, deck)
            return True


def t_deal1_not_the_shuffle(recs):
    r = deals(recs)[0]
    deck = cards(r["deck"])
    deck[0], deck[31] = deck[31], deck[0]
    set_deck(r, deck)
    return True


def t_partie_start_holds_a_deck(recs):
    start = next(r for r in recs if r["type"] == "partie_start")
    start["deck"] = deals(recs)[0]["deck"]  # a card written before its deal is over
    return True


def t_card_not_following_suit(recs):
    for r in deals(recs):
        if not played_barva(r):
            continue
        for i, dec in enumerate(r["decisions"]):
            if dec["decision"] != "play":
                continue
            d = replay_to(r, i)
            if not d.trick:
                continue
            led = d.trick[0].suit
            hand = d.hands[d.to_move]
            other = [c for c in hand if c.suit != led]
            if any(c.suit == led for c in hand) and other:
                dec["action"] = f"play:{other[0]}"
                return True


def t_announced_seven_played_early(recs):
    for r in deals(recs):
        if not played_barva(r) or "sedma" not in r["levels"]:
            continue
        seven = f"7{r['trump']}"
        for i, dec in enumerate(r["decisions"]):
            if dec["decision"] != "play" or dec["seat"] != r["actor"]:
                continue
            d = replay_to(r, i)
            if len(d.tricks) >= 9 or not d.holds(d.to_move, Card.parse(seven)):
                continue
            try:
                d.apply("play:" + seven)
            except IllegalAction as e:
                if e.rule == "R7.4":
                    dec["action"] = "play:" + seven
                    return True


def t_barva_discards_an_ace(recs):
    for r in deals(recs):
        dec = r["decisions"][1]
        if not dec["action"].startswith("barva:"):
            continue
        d = replay_to(r, 1)
        aces = [c for c in d.hands[d.to_move] if c.points and c != d.trump_card]
        if aces:
            a, b = dec["action"][6:].split(",")
            dec["action"] = f"barva:{aces[0]},{b if b != str(aces[0]) else a}"
            return True


def t_cut_changed_deck_kept(recs):
    r = deals(recs)[3]
    r["cut"] = 2 + (r["cut"] - 2 + 5) % 29
    return True


def t_deck_cut_at_another_k(recs):
    r = deals(recs)[4]
    c = engine_collected(prev_deal(recs, r))
    k = r["cut"] + 1 if r["cut"] < 30 else 2
    set_deck(r, c[k:] + c[:k])
    return True


def t_deck_not_collected_as_r23(recs):
    r = deals(recs)[5]
    c = engine_collected(prev_deal(recs, r))
    c.reverse()  # the piles stacked the wrong way round
    k = r["cut"]
    set_deck(r, c[k:] + c[:k])
    return True


def t_cut_out_of_range(recs):
    r = deals(recs)[2]
    c = engine_collected(prev_deal(recs, r))
    r["cut"] = 31
    set_deck(r, c[31:] + c[:31])
    return True


def t_cut_before_deal_1(recs):
    deals(recs)[0]["cut"] = 5
    return True


def t_payment_changed_zero_sum(recs):
    for r in deals(recs):
        if r["result"]["actor"] is not None and r["result"]["kind"] == "played":
            pay = r["result"]["payments"]
            a = r["result"]["actor"]
            for s in range(3):
                pay[s] += 2 if s == a else -1
            return True


def t_payment_not_zero_sum(recs):
    deals(recs)[6]["result"]["payments"][0] += 1
    return True


def _component(recs, name, extra=lambda r: True):
    for r in deals(recs):
        if r["result"]["kind"] == "played" and extra(r):
            for c in r["result"]["components"]:
                if c["name"] == name:
                    return r, c
    return None, None


def t_hra_amount_changed(recs):
    _r, c = _component(recs, "hra")
    if c:
        c["amount"] += 1
        return True


def t_sto_amount_changed(recs):
    _r, c = _component(recs, "sto")
    if c:
        c["amount"] += 4
        return True


def t_hra_outcome_flipped(recs):
    _r, c = _component(recs, "hra")
    if c:
        c["won"] = not c["won"]
        return True


def t_ticha_sedma_added(recs):
    for r in deals(recs):
        comps = r["result"]["components"]
        if played_barva(r) and not any("sedma" in c["name"] for c in comps):
            comps.append({"name": "ticha-sedma", "owner": "actor", "won": True, "level": 0, "amount": 1, "detail": "1"})
            return True


def t_flek_level_changed(recs):
    r, c = _component(recs, "hra", lambda r: r["levels"].get("hra", 4) < 3)
    if c:
        r["levels"]["hra"] += 1
        c["level"] += 1
        c["amount"] *= 2
        return True


def t_betl_durch_level_changed(recs):
    for r in deals(recs):
        if r["game"] in ("betl", "durch") and not r["faults"] and r["levels"][r["game"]] < 4:
            r["levels"][r["game"]] += 1
            return True


def t_hlaska_added(recs):
    for r in deals(recs):
        if played_barva(r):
            r["hlasky"].append({"seat": r["actor"], "suit": "h", "points": 40 if r["trump"] == "h" else 20})
            return True


def t_trick_winner_changed(recs):
    for r in deals(recs):
        if r["tricks"]:
            t = r["tricks"][0]
            t["winner"] = (t["winner"] + 1) % 3
            return True


def t_trick_cards_reordered(recs):
    for r in deals(recs):
        if played_barva(r):
            t = r["tricks"][0]
            t["cards"] = t["cards"][::-1]
            return True


def t_points_changed(recs):
    for r in deals(recs):
        if r["tricks"]:
            r["points"][r["tricks"][0]["winner"]] += 10
            return True


def t_partie_totals_changed(recs):
    end = next(r for r in recs if r["type"] == "partie_end")
    end["totals"][0] += 3
    end["totals"][1] -= 3
    return True


def t_partie_places_changed(recs):
    end = next(r for r in recs if r["type"] == "partie_end")
    end["places"] = [4 - p for p in end["places"]]
    if end["places"] == places(end["totals"]):
        end["places"] = [1.0, 1.0, 1.0]
    return True


def t_footer_totals_changed(recs):
    recs[-1]["totals"][2] += 1
    return True


def t_deal_removed(recs):
    recs.remove(deals(recs)[4])
    return True


def t_deal_duplicated(recs):
    r = deals(recs)[4]
    recs.insert(recs.index(r) + 1, copy.deepcopy(r))
    return True


def t_forhont_rotation_changed(recs):
    r = deals(recs)[3]
    r["forhont"] = (r["forhont"] + 1) % 3
    r["dealer"] = (r["forhont"] + 2) % 3
    r["hands"] = [[str(c) for c in h] for h in dealt_hands(cards(r["deck"]), r["forhont"])]
    return True


def t_trick_leader_seat_changed(recs):
    for r in deals(recs):
        plays = [d for d in r["decisions"] if d["decision"] == "play"]
        if len(plays) > 4:
            lead = plays[3]  # leads trick 2
            lead["seat"] = (lead["seat"] + 1) % 3
            return True


def t_answer_seat_changed(recs):
    for r in deals(recs):
        for d in r["decisions"]:
            if d["decision"] == "answer":
                d["seat"] = (d["seat"] + 1) % 3
                return True


def t_decision_kind_mislabelled(recs):
    for r in deals(recs):
        for d in r["decisions"]:
            if d["decision"] == "answer" and d["action"] == "dobra":
                d["decision"] = "flek"
                return True


def t_last_decision_dropped(recs):
    for r in deals(recs):
        if r["tricks"] and not r["faults"] and not r["laid"]:
            r["decisions"].pop()
            return True


def t_fault_seat_changed(recs):
    for r in deals(recs):
        if r["faults"]:
            r["faults"][0]["seat"] = (r["faults"][0]["seat"] + 1) % 3
            return True


def t_trump_card_changed(recs):
    for r in deals(recs):
        if r["trump_card"] and r["game"] == "barva":
            r["trump_card"] = next(c for c in r["hands"][r["forhont"]] if c != r["trump_card"])
            return True


def t_talon_changed(recs):
    for r in deals(recs):
        if len(r["talon"]) == 2 and r["tricks"]:
            r["talon"] = [r["tricks"][0]["cards"][0], r["talon"][1]]
            return True


def t_laid_cards_changed(recs):
    for r in deals(recs):
        if r["laid"] and len(r["laid"]["cards"]) > 1:
            r["laid"]["cards"].pop()
            return True


def t_conceded_recorded_as_played(recs):
    for r in deals(recs):
        if r["result"]["kind"] == "conceded":
            r["result"]["kind"] = "played"
            return True


def t_hands_field_changed(recs):
    r = deals(recs)[1]
    h = r["hands"]
    h[0][0], h[1][0] = h[1][0], h[0][0]
    return True


def t_format_version(recs):
    recs[0]["format_version"] = 99
    return True


TAMPERS: list[tuple[str, str, Callable]] = [
    ("R2.3", "a card swapped between hands in a later deck", t_deck_card_swapped_between_hands),
    ("R2.2", "deal 1 not dealt from the shuffle", t_deal1_not_the_shuffle),
    ("format", "partie_start holds the deck before deal 1 is over", t_partie_start_holds_a_deck),
    ("R7.2", "a card that does not follow suit", t_card_not_following_suit),
    ("R7.4", "the announced trump seven played early", t_announced_seven_played_early),
    ("R3.2", "an ace discarded for Barva", t_barva_discards_an_ace),
    ("R2.5", "the cut changed, the deck kept", t_cut_changed_deck_kept),
    ("R2.5", "the deck cut at another k than recorded", t_deck_cut_at_another_k),
    ("R2.3", "the piles stacked in the wrong order", t_deck_not_collected_as_r23),
    ("R2.5", "a cut out of range (31)", t_cut_out_of_range),
    ("R2.5", "a cut before deal 1", t_cut_before_deal_1),
    ("R9.5", "a payment changed, still zero-sum", t_payment_changed_zero_sum),
    ("R9.5", "payments that do not sum to zero", t_payment_not_zero_sum),
    ("R9.1", "the amount of a hra changed", t_hra_amount_changed),
    ("R9.2", "the amount of a sto changed", t_sto_amount_changed),
    ("R7.6", "a hra's outcome flipped", t_hra_outcome_flipped),
    ("R7.9", "a tichá sedma that did not happen", t_ticha_sedma_added),
    ("R5.3", "a flek level changed", t_flek_level_changed),
    ("R5.4", "a betl/durch raise level changed", t_betl_durch_level_changed),
    ("R7.5", "a hláška added", t_hlaska_added),
    ("R1.3", "a trick winner changed", t_trick_winner_changed),
    ("R7.2", "a trick's cards reordered", t_trick_cards_reordered),
    ("R1.4", "card points changed", t_points_changed),
    ("R9.7", "partie totals changed", t_partie_totals_changed),
    ("R9.7", "partie places changed", t_partie_places_changed),
    ("R9.7", "footer totals changed", t_footer_totals_changed),
    ("R2.1", "a deal removed", t_deal_removed),
    ("R2.1", "a deal duplicated", t_deal_duplicated),
    ("R2.1", "forhont rotation changed", t_forhont_rotation_changed),
    ("R7.1", "the seat leading a trick changed", t_trick_leader_seat_changed),
    ("R4.1", "the seat of an answer changed", t_answer_seat_changed),
    ("R4.1", "an answer recorded as a flek decision", t_decision_kind_mislabelled),
    ("R12.1", "the last decision dropped, no fault", t_last_decision_dropped),
    ("R12.2", "the faulting seat changed", t_fault_seat_changed),
    ("R3.1", "the trump card changed", t_trump_card_changed),
    ("R3.3", "the talon changed", t_talon_changed),
    ("R8.4", "a laid card removed", t_laid_cards_changed),
    ("R6.1", "a conceded hra recorded as played", t_conceded_recorded_as_played),
    ("R2.6", "the recorded hands are not the ones dealt", t_hands_field_changed),
    ("format", "an unknown format version", t_format_version),
]


def write(path: Path, recs: list[dict]) -> Path:
    """The records as a log, the seal's hash chain recomputed (as a forger would: the
    chain alone proves nothing against a rewrite; see tests/test_seal.py for the signature)."""
    path.write_text("".join(line + "\n" for line in sealed_lines(recs)), encoding="utf-8")
    return path


@pytest.mark.parametrize("rule,what,tamper", TAMPERS, ids=[t[2].__name__[2:] for t in TAMPERS])
def test_tampering_is_caught_and_the_rule_named(corpus, tmp_path, rule, what, tamper):
    for name, original in corpus:
        recs = copy.deepcopy(original)
        if tamper(recs):
            break
    else:
        pytest.fail(f"no log of the corpus offers the situation for: {what}")
    report = validate_file(write(tmp_path / name, recs))
    assert not report.ok
    first = report.problems[0]
    assert first.rule == rule, f"{what}: expected {rule} first, got\n" + "\n".join(report.lines())
    # the problem points at the changed record or at the first record it contradicts
    lines = (tmp_path / name).read_text().splitlines()
    changed = [i for i, (a, b) in enumerate(zip(lines, sealed_lines(original)), 1)
               if json.loads(a) | {"chain": ""} != json.loads(b) | {"chain": ""}]
    assert changed and first.line >= changed[0]


def test_the_corpus_covers_trump_games_fleks_hlasky_laid_cards_faults_and_betl_durch(corpus):
    everything = [r for _n, recs in corpus for r in deals(recs)]
    comps = {c["name"] for r in everything for c in r["result"]["components"]}
    assert {"hra", "sedma", "sto", "betl", "durch", "sedma-proti", "sto-proti", "tiche-sto", "ticha-sedma"} <= comps
    assert any(r["hlasky"] for r in everything)
    assert any(r["laid"] and r["game"] == "barva" for r in everything)
    assert any(r["faults"] and r["result"]["components"] for r in everything)  # after a contract
    assert any(r["faults"] and not r["result"]["components"] for r in everything)  # before
    assert any(v >= 2 for r in everything for v in r["levels"].values())
    assert {"played", "conceded", "not-played", "fault"} <= {r["result"]["kind"] for r in everything}


def test_a_truncated_last_line_is_incomplete_not_a_result(corpus, tmp_path):
    name, recs = corpus[0]
    text = write(tmp_path / name, recs).read_text()
    lines = text.splitlines(keepends=True)
    cut = "".join(lines[:9]) + lines[9][: len(lines[9]) // 2]  # killed while writing deal 8
    (tmp_path / name).write_text(cut)
    report = validate_file(tmp_path / name)
    assert [p.rule for p in report.problems] == ["format", "incomplete"]
    assert "truncated last line" in report.problems[0].message
    assert report.problems[1].message.startswith("7 complete deals, stopped in partie 1")
    assert report.deals_replayed == 7 and not report.complete


def test_a_garbage_line_in_the_middle_is_reported_and_the_rest_still_checked(corpus, tmp_path):
    name, recs = corpus[1]
    lines = write(tmp_path / name, recs).read_text().splitlines(keepends=True)
    lines.insert(5, "{not json\n")
    (tmp_path / name).write_text("".join(lines))
    report = validate_file(tmp_path / name)
    assert report.problems[0].line == 6 and report.problems[0].rule == "format"
    assert report.deals == 12 and report.complete


# ------------------------------------------------------------------ unmodified logs pass

@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["random", "chooser", "fault"]))
def test_every_unmodified_log_validates(seed, kind):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.jsonl"
        if kind == "fault":
            fault_log(path, seed)
        else:
            selfplay_log(path, (random_bots if kind == "random" else chooser_bots)(seed), seed=seed, fsync=False)
        report = validate_file(path)
        assert report.ok, report.lines()[:5]
        assert report.complete and report.deals_replayed == 12 and report.parties == 1


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.booleans(), st.integers(2, 30))
def test_the_next_deck_check_is_the_rules_permutation(seed, faults, k):
    """validate checks each deck against the engine's collection of the replayed deal
    (partie.next_deck); on logged deals, faults included, that is the R2.3-R2.6
    permutation of test_properties' independent collector."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.jsonl"
        if faults:
            fault_log(path, seed)
        else:
            selfplay_log(path, chooser_bots(seed), seed=seed, fsync=False)
        records, _ = read_log(path)
    for rec in deals(records):
        rp = replay_record(rec, cards(rec["deck"]))
        assert rp.complete
        history = [(dec["seat"], dec["action"]) for dec in rec["decisions"]]
        assert [str(c) for c in next_deck(rp.deal, k)] == collect(rec["deck"], rec["forhont"], history, k)


# ------------------------------------------------------------------ the command

def test_cli_exit_status_and_problem_lines(corpus, tmp_path):
    name, recs = corpus[2]
    good = write(tmp_path / "good.jsonl", recs)
    bad_recs = copy.deepcopy(recs)
    t_payment_not_zero_sum(bad_recs)
    bad = write(tmp_path / "bad.jsonl", bad_recs)
    runner = CliRunner()
    r = runner.invoke(app, ["validate", str(good)])
    assert r.exit_code == 0 and "ok — complete, 1 partie, 12 deals, 12 replayed" in r.output
    r = runner.invoke(app, ["validate", str(good), str(bad)])
    assert r.exit_code == 1
    line_no = next(i for i, r_ in enumerate(bad_recs, 1) if r_ is deals(bad_recs)[6])
    assert f"{bad}:{line_no}: R9.5: deal 7: payments" in r.output
    r = runner.invoke(app, ["validate", str(tmp_path), "--json"])
    out = json.loads(r.output)
    assert r.exit_code == 1 and out["ok"] is False
    by_name = {Path(f["path"]).name: f for f in out["files"]}
    assert by_name["good.jsonl"]["ok"] and by_name["good.jsonl"]["problems"] == []
    assert {"line": line_no, "rule": "R9.5"}.items() <= by_name["bad.jsonl"]["problems"][0].items()


def test_cli_gives_a_clear_message_for_files_that_are_not_logs(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "text.jsonl").write_text("hello world\nsecond line\n")
    (tmp_path / "binary.jsonl").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "list.jsonl").write_text("[1, 2, 3]\n")
    (tmp_path / "other.jsonl").write_text('{"type": "something"}\n')
    r = subprocess.run([sys.executable, "-m", "referee.cli", "validate", str(tmp_path), str(tmp_path / "missing.jsonl")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "Traceback" not in r.stdout + r.stderr
    assert f"{tmp_path / 'empty.jsonl'}:1: format: empty file" in r.stdout
    assert f"{tmp_path / 'text.jsonl'}:1: format: not a marias log" in r.stdout
    assert f"{tmp_path / 'binary.jsonl'}:1: format: not a marias log" in r.stdout
    assert f"{tmp_path / 'list.jsonl'}:1: format: not a marias log" in r.stdout
    assert f"{tmp_path / 'other.jsonl'}:1: format: not a marias log: the first record is 'something'" in r.stdout
    assert f"{tmp_path / 'missing.jsonl'}: format: cannot read the file" in r.stdout
    r = CliRunner().invoke(app, ["validate", str(tmp_path / "nothing-here")])
    assert r.exit_code == 1


# ------------------------------------------------------------------ transcripts: information leaks

@pytest.fixture(scope="module")
def match_with_transcripts(tmp_path_factory):
    d = tmp_path_factory.mktemp("match")
    r = subprocess.run([sys.executable, "-m", "referee.cli", "match", "-b", "random", "-b", "random", "-b", "random",
                        "--seed", "4", "--log", str(d), "--transcript", "-q"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (log,) = [p for p in d.glob("*.jsonl") if not p.name.endswith(".transcript.jsonl")]
    return log


def _copy_match(log: Path, dest: Path) -> Path:
    for p in log.parent.glob(log.stem + "*"):
        (dest / p.name).write_bytes(p.read_bytes())
    return dest / log.name


def _transcript(log: Path, seat: int) -> Path:
    return log.parent / f"{log.stem}.seat{seat}.transcript.jsonl"


def _edit_sent(path: Path, pick: Callable[[dict], bool], change: Callable[[dict], None]) -> int:
    """Change the first message sent that ``pick`` selects; returns its line number."""
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec["dir"] != "send":
            continue
        msg = json.loads(rec["line"])
        if pick(msg):
            change(msg)
            rec["line"] = json.dumps(msg, ensure_ascii=False)
            lines[i] = json.dumps(rec, ensure_ascii=False)
            path.write_text("\n".join(lines) + "\n")
            return i + 1
    raise AssertionError("no such message in the transcript")


def test_a_real_match_log_and_its_transcripts_validate(match_with_transcripts):
    report = validate_file(match_with_transcripts, transcripts=match_with_transcripts.parent)
    assert report.ok, report.lines()[:5]
    assert report.transcripts == 3 and report.messages_checked > 300
    r = CliRunner().invoke(app, ["validate", str(match_with_transcripts), "--transcript", str(match_with_transcripts.parent)])
    assert r.exit_code == 0 and "3 transcript(s)" in r.output


def test_an_opponents_card_in_a_requests_hand_is_a_leak(match_with_transcripts, tmp_path):
    log = _copy_match(match_with_transcripts, tmp_path)
    recs, _ = read_log(log)
    rec = next(r for r in deals(recs) if r["deal"] == 2)
    seat = (rec["forhont"] + 1) % 3  # the middle player
    stranger = rec["hands"][rec["forhont"]][-1]  # the forhont's last card, hidden from him at his first request

    state = {"deal": None}

    def pick(msg):
        if msg["type"] == "deal_start":
            state["deal"] = (msg["partie"], msg["deal"])
        return msg["type"] == "request" and state["deal"] == (1, 2) and stranger not in msg["view"]["hand"]

    line = _edit_sent(_transcript(log, seat), pick, lambda m: m["view"]["hand"].append(stranger))
    report = validate_file(log, transcripts=tmp_path)
    assert [(p.rule, p.line) for p in report.problems] == [("R8.4", line)]
    assert stranger in report.problems[0].message and report.problems[0].path.endswith(f"seat{seat}.transcript.jsonl")


def test_another_players_discards_in_an_event_are_a_leak(match_with_transcripts, tmp_path):
    log = _copy_match(match_with_transcripts, tmp_path)
    recs, _ = read_log(log)
    # a deal whose dealer never took the forhont's talon (he did not say špatná or durch)
    rec = next(r for r in deals(recs) if (r["forhont"] + 2) % 3 not in {t["seat"] for t in r["talons"]})
    talon_action = rec["decisions"][1]["action"]  # the forhont's discard, e.g. betl:Kh,9l
    seat = (rec["forhont"] + 2) % 3

    def pick(msg):
        e = msg.get("event") or {}
        return (msg["type"] == "event" and msg["deal"] == rec["deal"] and e.get("kind") == "action"
                and e.get("decision") == "talon")

    line = _edit_sent(_transcript(log, seat), pick, lambda m: m["event"].update(action=talon_action))
    report = validate_file(log, transcripts=tmp_path)
    assert [(p.rule, p.line) for p in report.problems] == [("R3.3", line)]


def test_the_trump_card_before_it_is_shown_is_a_leak(match_with_transcripts, tmp_path):
    log = _copy_match(match_with_transcripts, tmp_path)
    recs, _ = read_log(log)
    rec = deals(recs)[0]
    seat = (rec["forhont"] + 1) % 3
    trump = rec["trump_card"]
    assert trump not in rec["hands"][seat]

    state = {"deal": None}

    def pick(msg):
        if msg["type"] == "deal_start":
            state["deal"] = msg["deal"]
        return msg["type"] == "request" and state["deal"] == 1

    line = _edit_sent(_transcript(log, seat), pick, lambda m: m["view"].update(trump_card=trump))
    report = validate_file(log, transcripts=tmp_path)
    assert [(p.rule, p.line) for p in report.problems] == [("R3.1", line)]


# ------------------------------------------------------------------ parallel validation

def _multi_partie_log(path: Path, parties: int, seed: int) -> Path:
    """Several partie in one log: faults in some deals, chooser-like play (fault_log)."""
    return fault_log(path, seed, parties=parties)


@pytest.mark.parametrize("tamper", [None, t_deal_removed, t_payment_not_zero_sum, t_partie_totals_changed,
                                    t_footer_totals_changed, "partie-2-never-ends", "partie-renumbered",
                                    "partie_end-dropped", "footer-dropped"])
def test_parallel_validation_reports_exactly_what_one_process_reports(tmp_path, tamper):
    path = _multi_partie_log(tmp_path / "multi.jsonl", 6, 11)
    recs, _ = read_log(path)
    if callable(tamper):
        tamper(recs)
    elif tamper == "partie-2-never-ends":
        starts = [i for i, r in enumerate(recs) if r["type"] == "partie_start"]
        del recs[starts[2] - 1]  # partie 2 never ends
    elif tamper == "partie-renumbered":
        starts = [r for r in recs if r["type"] == "partie_start"]
        starts[4]["partie"] = 7
    elif tamper == "partie_end-dropped":
        ends = [r for r in recs if r["type"] == "partie_end"]
        recs.remove(ends[-1])
    elif tamper == "footer-dropped":
        recs.pop()
    write(path, recs)
    one = validate_file(path)
    for jobs in (2, 3):
        many = validate_file(path, jobs=jobs)
        assert many.to_dict() == one.to_dict()
    assert one.ok == (tamper is None)


def test_validate_files_in_parallel_keeps_the_order_and_the_reports(corpus, tmp_path):
    from referee.logs.validate import validate_files
    paths = [write(tmp_path / name, recs) for name, recs in corpus[:5]]
    t_payment_not_zero_sum(recs := copy.deepcopy(corpus[5][1]))
    paths.append(write(tmp_path / "bad.jsonl", recs))
    one = [r.to_dict() for r in validate_files(paths, jobs=1)]
    many = [r.to_dict() for r in validate_files(paths, jobs=3)]
    assert many == one and [r["ok"] for r in one] == [True] * 5 + [False]
