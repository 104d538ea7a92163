"""Forged logs: every kind of tampering of a real, signed match log is rejected, the rule
or "seal" named.  Some tamperings break the rules the log itself states (its seed, its
limits, its partie count, strict JSON); the others are consistent rewrites that only the
seal catches: the hash chain when the forger does not recompute it, the Ed25519 signature
(``validate --verify``) when he does."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.rules.cards import Card
from referee.cli import app
from referee.rules.deal import Deal
from referee.logs.log import LogWriter, deal_record, read_log, sealed_lines
from referee.logs.seal import GENESIS, generate_key_pair, load_signing_key, public_key_text
from referee.matches.match import BotSpec, Limits, MatchConfig, run_match
from referee.rules.partie import Partie, places
from referee.logs.validate import validate_file

# A bot that answers a legal action at once, except that it sleeps past the limit on its
# 6th request of the match (a timeout fault, R12.1); a marker file makes it do so once.
SLEEPER = textwrap.dedent("""
    import json, os, sys, time
    marker = sys.argv[1]
    n = 0
    for line in sys.stdin:
        m = json.loads(line)
        t = m.get("type")
        if t == "hello":
            print(json.dumps({"type": "hello", "protocol": m.get("protocol"), "name": "sleeper", "version": "1"}), flush=True)
        elif t == "request":
            n += 1
            if n == 6 and not os.path.exists(marker):
                open(marker, "w").close()
                time.sleep(2.0)
            print(json.dumps({"type": "action", "id": m["id"], "action": m["legal"][0]}), flush=True)
        elif t == "bye":
            break
""")


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A real match (two partie, an external bot with one timeout fault) signed with a fresh key."""
    d = tmp_path_factory.mktemp("signed")
    key, pub, pub_text = generate_key_pair(d / "organiser.key")
    script = d / "sleeper.py"
    script.write_text(SLEEPER)
    work = d / "work"  # the sleeper's own writable folder (sandboxed, it may write nowhere else): the marker
    work.mkdir()
    bots = [BotSpec(label="sleeper", argv=[sys.executable, str(script), str(work / "slept")], workdir=str(work)),
            BotSpec.parse("random", seed="r"), BotSpec.parse("robot")]
    log = d / "logs" / "match.jsonl"
    config = MatchConfig(bots=bots, partie=2, seed="forgery-test", limits=Limits(startup_ms=10_000, move_ms=500),
                         log_path=log, sign_key=key)
    result = run_match(config)
    assert any(f["kind"] == "timeout" for f in result.faults), result.faults
    report = validate_file(log, verify=str(pub))
    assert report.ok and report.verified, report.lines()
    records, problems = read_log(log)
    assert not problems
    return {"log": log, "records": records, "pub": pub, "pub_text": pub_text, "key": key, "dir": d}


def deals_of(recs, partie=None):
    return [r for r in recs if r["type"] == "deal" and (partie is None or r["partie"] == partie)]


def refresh_totals(recs):
    """Partie totals, places and the footer recomputed from the deals (a careful forger)."""
    header = recs[0]
    match = [0] * len(header["bots"])
    seating = [0, 1, 2]
    pay = [0, 0, 0]
    for r in recs:
        if r["type"] == "partie_start":
            pay = [0, 0, 0]
            seating = r.get("seating", [0, 1, 2])
        elif r["type"] in ("deal", "forfeit"):
            p = r["result"]["payments"] if r["type"] == "deal" else r["payments"]
            pay = [a + b for a, b in zip(pay, p)]
        elif r["type"] == "partie_end":
            r["totals"], r["places"] = list(pay), places(pay)
            for s in range(3):
                match[seating[s]] += pay[s]
        elif r["type"] == "footer":
            r["totals"], r["places"] = list(match), places(match)


def write(path: Path, recs, signer=None) -> Path:
    """Records as a log whose hash chain is recomputed (and signed by ``signer``)."""
    recs = copy.deepcopy(recs)
    if signer is not None:
        recs[-1]["signer"] = public_key_text(signer)
    else:
        recs[-1].pop("signer", None)
    path.write_text("".join(line + "\n" for line in sealed_lines(recs, signer)), encoding="utf-8")
    return path


def replayed_deal(rec, choose, fault_at=None) -> dict:
    """The record of deal ``rec`` played again from its own deck with other choices."""
    deal = Deal([Card.parse(c) for c in rec["deck"]], rec["forhont"])
    k = 0
    while not deal.done:
        if k == fault_at:
            deal.fault(deal.to_move, "illegal", "invented", '{"type":"action","action":"x"}', 0.01)
            break
        deal.apply(choose(deal.legal_actions()))
        k += 1
    out = deal_record(rec["partie"], rec["deal"], deal, rec["cut"], [Card.parse(c) for c in rec["deck"]],
                      [1.0] * len(deal.history))
    return out


def last_deal_index(recs):
    return max(i for i, r in enumerate(recs) if r["type"] == "deal")


# ------------------------------------------------------------------ consistent rewrites: only the signature catches them

def f_rewrite_a_deal(recs):
    i = last_deal_index(recs)
    rng = random.Random(5)
    for _ in range(50):
        new = replayed_deal(recs[i], lambda legal: rng.choice(legal))
        if new["result"]["payments"] != recs[i]["result"]["payments"]:
            recs[i] = new
            refresh_totals(recs)
            return recs
    raise AssertionError("no different outcome found")


def f_swap_bot_names(recs):
    bots = recs[0]["bots"]
    for key in ("label", "command", "name", "version", "exe_sha256"):
        bots[0][key], bots[1][key] = bots[1].get(key), bots[0].get(key)
    return recs


def f_invent_a_fault(recs):
    i = last_deal_index(recs)
    recs[i] = replayed_deal(recs[i], lambda legal: legal[0], fault_at=3)
    refresh_totals(recs)
    return recs


CONSISTENT = [("a deal rewritten consistently", f_rewrite_a_deal),
              ("the bot names swapped", f_swap_bot_names),
              ("an invented fault", f_invent_a_fault)]


@pytest.mark.parametrize("what,forge", CONSISTENT, ids=[c[1].__name__[2:] for c in CONSISTENT])
def test_a_consistent_rewrite_passes_the_rules_and_fails_the_seal(signed, tmp_path, what, forge):
    recs = forge(copy.deepcopy(signed["records"]))
    # the forger recomputes the chain: every rule holds, only the signature is missing
    unsigned = write(tmp_path / "unsigned.jsonl", recs)
    assert validate_file(unsigned).ok, validate_file(unsigned).lines()
    report = validate_file(unsigned, verify=str(signed["pub"]))
    assert [p.rule for p in report.problems] == ["seal"] and "not signed" in report.problems[0].message
    # ... and signs it with his own key: a valid signature, but not the organiser's
    forger = load_signing_key(generate_key_pair(tmp_path / "forger.key")[0])
    resigned = write(tmp_path / "resigned.jsonl", recs, forger)
    assert validate_file(resigned).ok  # valid for the key it names
    report = validate_file(resigned, verify=signed["pub_text"])
    assert [p.rule for p in report.problems] == ["seal"] and "not by the key given" in report.problems[0].message
    # ... or keeps the organiser's signature and key: it does not cover the new final hash
    original = json.loads(signed["log"].read_text().splitlines()[-1])
    kept = copy.deepcopy(recs)
    kept[-1]["signer"] = original["signer"]
    lines = sealed_lines(kept)
    lines[-1] = lines[-1][:-1] + f',"signature":"{original["signature"]}"}}'
    path = tmp_path / "kept.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = validate_file(path, verify=signed["pub_text"])
    assert [p.rule for p in report.problems] == ["seal"] and "does not verify" in report.problems[0].message


def test_an_edit_without_recomputing_the_chain_breaks_it_at_that_line(signed, tmp_path):
    lines = signed["log"].read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if '"type":"deal"' in line)
    lines[i] = lines[i].replace('"ms":', '"ms":1', 1)  # a decision time changed by hand
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = validate_file(path)  # no key needed
    seals = [p for p in report.problems if p.rule == "seal"]
    assert [p.line for p in seals] == [i + 1]
    # a removed line: the next one no longer follows
    lines = signed["log"].read_text().splitlines()
    del lines[5]
    path.write_text("\n".join(lines) + "\n")
    assert [p.line for p in validate_file(path).problems if p.rule == "seal"] == [6]


def test_a_changed_signature_is_rejected(signed, tmp_path):
    lines = signed["log"].read_text().splitlines()
    footer = json.loads(lines[-1])
    bad = footer["signature"][:-2] + ("00" if footer["signature"][-2:] != "00" else "11")
    lines[-1] = lines[-1].replace(footer["signature"], bad)
    path = tmp_path / "sig.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = validate_file(path)
    assert [p.rule for p in report.problems] == ["seal"] and "does not verify" in report.problems[0].message


# ------------------------------------------------------------------ tamperings the log's own content catches

def t_first_deck_not_from_the_seed(recs):
    """Another seed committed to and revealed: the decks do not follow from it."""
    recs[0]["seed_sha256"] = hashlib.sha256(b"another seed").hexdigest()
    recs[-1]["seed"] = "another seed"
    return recs


def t_a_cut_not_from_the_seed(recs):
    """The last deal dealt from the previous deal's collection cut at another k (consistently)."""
    i = last_deal_index(recs)
    rec = recs[i]
    from referee.logs.validate import replay_record
    prev = recs[i - 1]
    rp = replay_record(prev, [Card.parse(c) for c in prev["deck"]])
    collected = rp.deal.collected_deck()  # R2.3-R2.4, the engine's collection
    k = 2 if rec["cut"] != 2 else 3
    deck = collected[k:] + collected[:k]
    fake = dict(rec, cut=k, deck=[str(c) for c in deck])
    rng = random.Random(1)
    recs[i] = replayed_deal(fake, lambda legal: rng.choice(legal))
    refresh_totals(recs)
    return recs


def t_a_partie_with_eleven_deals(recs):
    del recs[last_deal_index(recs)]
    refresh_totals(recs)
    return recs


def t_more_partie_than_the_header_says(recs):
    recs[0]["partie"] = 1
    return recs


def t_a_decision_above_the_time_limit(recs):
    limit = recs[0]["limits"]["move_ms"]
    d = next(r for r in deals_of(recs) if r["decisions"] and not r["faults"])
    d["decisions"][0]["ms"] = limit + 400
    return recs


def t_a_negative_decision_time(recs):
    d = deals_of(recs)[3]
    d["decisions"][-1]["ms"] = -3.0
    return recs


def t_a_timeout_under_the_limit(recs):
    d = next(r for r in deals_of(recs) if r["faults"] and r["faults"][0]["kind"] == "timeout")
    d["faults"][0]["elapsed"] = 0.05
    return recs


def t_a_seed_that_is_not_the_committed_one(recs):
    recs[-1]["seed"] = "forgery-test-2"
    return recs


CATCHABLE = [
    ("R2.2", t_first_deck_not_from_the_seed),
    ("R2.5", t_a_cut_not_from_the_seed),
    ("R2.1", t_a_partie_with_eleven_deals),
    ("format", t_more_partie_than_the_header_says),
    ("R12.1", t_a_decision_above_the_time_limit),
    ("R12.1", t_a_negative_decision_time),
    ("R12.1", t_a_timeout_under_the_limit),
    ("R2.2", t_a_seed_that_is_not_the_committed_one),
]


@pytest.mark.parametrize("rule,tamper", CATCHABLE, ids=[c[1].__name__[2:] for c in CATCHABLE])
def test_a_tampering_against_the_logs_own_facts_is_caught_without_a_key(signed, tmp_path, rule, tamper):
    recs = tamper(copy.deepcopy(signed["records"]))
    path = write(tmp_path / "t.jsonl", recs)  # chain recomputed, unsigned
    report = validate_file(path)
    assert not report.ok
    assert report.problems[0].rule == rule, "\n".join(report.lines())
    # with the key, the seal is named as well
    assert "seal" in {p.rule for p in validate_file(path, verify=str(signed["pub"])).problems}


def test_duplicate_json_keys_are_refused(signed, tmp_path):
    lines = signed["log"].read_text().splitlines()
    # the header names the seed commitment twice: readers would disagree on which one counts
    body = lines[0][: lines[0].rindex(',"chain":')] + "}"
    body = body.replace('{"type":"header",', '{"type":"header","seed_sha256":"' + "0" * 64 + '",', 1)
    h = hashlib.sha256(GENESIS.encode() + body.encode()).hexdigest()
    lines[0] = body[:-1] + f',"chain":"{h}"}}'
    # the rest of the chain recomputed over the unchanged lines
    prev = h
    for k in range(1, len(lines)):
        b = lines[k][: lines[k].rindex(',"chain":')] + "}"
        prev = hashlib.sha256(prev.encode() + b.encode()).hexdigest()
        lines[k] = b[:-1] + f',"chain":"{prev}"}}'
    path = tmp_path / "dup.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = validate_file(path)
    assert report.problems[0].rule == "format" and report.problems[0].line == 1
    assert "duplicate key 'seed_sha256'" in report.problems[0].message
    # a deal line with its payments twice
    recs = signed["records"]
    text = sealed_lines(recs)
    i = next(k for k, r in enumerate(recs) if r["type"] == "deal")
    text[i] = text[i].replace('"result":{', '"result":{"payments":[0,0,0],', 1)
    path.write_text("\n".join(text) + "\n")
    report = validate_file(path)
    assert any(p.rule == "format" and p.line == i + 1 and "duplicate key 'payments'" in p.message for p in report.problems)


# ------------------------------------------------------------------ the command line

def test_marias_validate_verify_on_the_command_line(signed, tmp_path):
    runner = CliRunner()
    ok = runner.invoke(app, ["validate", str(signed["log"]), "--verify", str(signed["pub"])])
    assert ok.exit_code == 0 and ok.output.rstrip().endswith("; signed, verified"), ok.output
    ok = runner.invoke(app, ["validate", str(signed["log"]), "--verify", signed["pub_text"]])
    assert ok.exit_code == 0, ok.output
    forged = write(tmp_path / "forged.jsonl", f_swap_bot_names(copy.deepcopy(signed["records"])))
    bad = runner.invoke(app, ["validate", str(forged), "--verify", str(signed["pub"])])
    assert bad.exit_code == 1 and ": seal: the log is not signed" in bad.output
    nokey = runner.invoke(app, ["validate", str(signed["log"]), "--verify", str(tmp_path / "missing.pub")])
    assert nokey.exit_code == 2 and "missing.pub" in nokey.output


def test_keygen_writes_a_private_key_0600_and_refuses_to_overwrite(tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["keygen", str(tmp_path / "keys" / "k")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "keys" / "k").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "keys" / "k.pub").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    again = runner.invoke(app, ["keygen", str(tmp_path / "keys" / "k")])
    assert again.exit_code == 2 and "never overwritten" in again.output
    bad = runner.invoke(app, ["match", "-b", "random", "-b", "random", "-b", "random", "--sign", str(tmp_path / "keys" / "k.pub")])
    assert bad.exit_code == 2 and "--sign" in bad.output


def test_a_stranger_verifies_a_log_with_hashlib_and_the_documented_recipe(signed):
    """protocol/LOGS.md's recipe, written out with the standard library and cryptography only."""
    import re

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    prev = "0" * 64
    for raw in signed["log"].read_bytes().split(b"\n")[:-1]:
        m = re.search(rb',"chain":"([0-9a-f]{64})"(,"signature":"([0-9a-f]{128})")?}$', raw)
        body = raw[: m.start()] + b"}"
        assert hashlib.sha256(prev.encode() + body).hexdigest() == m.group(1).decode()
        prev = m.group(1).decode()
    key = load_pem_public_key(signed["pub"].read_bytes())
    assert isinstance(key, Ed25519PublicKey)
    key.verify(bytes.fromhex(m.group(3).decode()), prev.encode())  # raises if invalid


def test_decision_times_are_checked_against_each_bots_own_limits_and_bank(tmp_path):
    """A bot with its own, longer limit (a tournament YAML override) may use it; the others may
    not; with a bank, a decision may use at most what is left of it (replayed from the times)."""
    def write_times(path, limits, bots_limits, ms_of):
        header = {"seed": "t", "partie": 1, "limits": limits,
                  "bots": [{"seat": s, "command": "builtin:x", "name": "x", "version": "1", "exe_sha256": None,
                            **({"limits": bots_limits[s]} if bots_limits[s] else {})} for s in range(3)]}
        rng = random.Random(2)
        with LogWriter(path, header, fsync=False) as w:
            partie = Partie(seed="t:1")
            w.partie_start(1)
            for deal in partie.iter_deals():
                while not deal.done:
                    deal.apply(rng.choice(deal.legal_actions()))
                times = [ms_of(seat, len(partie.deals)) for seat, _a in deal.history]
                w.deal(1, len(partie.deals), deal, partie.cuts[-1], deal.deck, times)
            w.partie_end(1, partie.totals(), partie.places())
        return path

    own = [{"move_ms": 5000}, None, None]
    slow_seat0 = write_times(tmp_path / "a.jsonl", {"move_ms": 100}, own, lambda s, d: 1000.0 if s == 0 else 1.0)
    assert validate_file(slow_seat0).ok, validate_file(slow_seat0).lines()
    slow_seat1 = write_times(tmp_path / "b.jsonl", {"move_ms": 100}, own, lambda s, d: 1000.0 if s == 1 else 1.0)
    rules = {p.rule for p in validate_file(slow_seat1).problems}
    assert rules == {"R12.1"}
    # a bank of 3 s and no increment: seat 2 spends 400 ms a decision and runs dry within the partie
    bank = write_times(tmp_path / "c.jsonl", {"move_ms": 2000, "bank_ms": 3000, "increment_ms": 0}, [None] * 3,
                       lambda s, d: 400.0 if s == 2 else 1.0)
    probs = validate_file(bank).problems
    assert probs and {p.rule for p in probs} == {"R12.1"} and "above its limit of 0 ms" in probs[-1].message
    # with an increment that covers what it spends, the same times are fine
    inc = write_times(tmp_path / "d.jsonl", {"move_ms": 2000, "bank_ms": 3000, "increment_ms": 400}, [None] * 3,
                      lambda s, d: 400.0 if s == 2 else 1.0)
    assert validate_file(inc).ok, validate_file(inc).lines()


def test_a_signed_tournament_verifies_and_commits_to_its_seed(tmp_path):
    import subprocess

    key, pub, _text = generate_key_pair(tmp_path / "k")
    r = subprocess.run([sys.executable, "-m", "referee.cli", "tournament", "-b", "a=random", "-b", "b=random",
                        "-b", "c=robot", "--arrangements", "rotations", "--seed", "open", "-o", str(tmp_path / "t"),
                        "--sign", str(key), "--commit", "-q"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "seed sha256: " + hashlib.sha256(b"open").hexdigest()
    logs = sorted((tmp_path / "t" / "logs").glob("*.jsonl"))
    assert len(logs) == 3
    reports = [validate_file(p, verify=str(pub)) for p in logs]
    assert all(rep.ok and rep.verified for rep in reports), [rep.lines() for rep in reports]


def test_every_validate_line_says_what_it_proved_of_who_wrote_the_log(signed, tmp_path):
    """Issue 22, item 6: a forger who recomputes the chain gets a log that passes the rules, and
    validate says that no more than the rules was proven; a signature without --verify proves
    nothing either, and says so; only --verify with the organiser's key says verified."""
    runner = CliRunner()
    recs = copy.deepcopy(signed["records"])
    f_swap_bot_names(recs)  # a consistent rewrite the rules cannot see
    forged = write(tmp_path / "forged.jsonl", recs)  # chain recomputed, no signature
    r = runner.invoke(app, ["validate", str(forged)])
    assert r.exit_code == 0, r.output
    (line,) = r.output.strip().splitlines()
    assert line.startswith(f"{forged}: ok — complete, 2 partie")
    assert line.endswith("; unsigned: rules checked, authorship not proven")
    r = runner.invoke(app, ["validate", str(signed["log"])])
    assert r.exit_code == 0 and r.output.strip().endswith("; signed, not verified (pass --verify KEY.pub)"), r.output
    assert signed["pub_text"] in r.output  # the key the log names, so the reader can compare it
    r = runner.invoke(app, ["validate", str(signed["log"]), "--verify", str(signed["pub"])])
    assert r.exit_code == 0 and r.output.strip().endswith("; signed, verified"), r.output
    # signed by another key than the one asked for: not verified, and the seal problem says why
    _, other_pub, _ = generate_key_pair(tmp_path / "other.key")
    r = runner.invoke(app, ["validate", str(signed["log"]), "--verify", str(other_pub)])
    assert r.exit_code == 1 and ": seal: the log is signed by " in r.output
    assert r.output.strip().splitlines()[-1].endswith("; signed, not verified"), r.output
    # the same words in --json, with the two facts apart
    r = runner.invoke(app, ["validate", str(forged), str(signed["log"]), "--json"])
    files = {Path(f["path"]).name: f for f in json.loads(r.output)["files"]}
    assert files["forged.jsonl"]["authorship"] == "unsigned: rules checked, authorship not proven"
    assert files["forged.jsonl"]["signed"] is False and files["forged.jsonl"]["verified"] is False
    assert files["match.jsonl"]["authorship"] == "signed, not verified (pass --verify KEY.pub)"
    assert files["match.jsonl"]["signed"] is True and files["match.jsonl"]["signer"] == signed["pub_text"]
    r = runner.invoke(app, ["validate", str(signed["log"]), "--json", "--verify", signed["pub_text"]])
    (f,) = json.loads(r.output)["files"]
    assert f["authorship"] == "signed, verified" and f["verified"] is True
