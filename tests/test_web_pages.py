"""marias serve and marias report without a browser (issue 34): the replayer's last step of a deal
that a fault or laid cards ended, the stderr tail at a fault, a replayer's position from its
address, the lists of logs (bots, result, groše; filtered by bot), the event page's set-up, the
index's state and leader from the cache, an infinite LLR, the report that carries every log, and a
duel's live page as the duel runs.  The served folder is tests/web_site.py's, built once."""

from __future__ import annotations

import base64
import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

import pytest

starlette = pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from referee.rules.partie import seed_sha256  # noqa: E402
from referee.tournaments import duel as duel_mod  # noqa: E402
from referee.tournaments.event import EventFolder  # noqa: E402
from referee.web import log_data, report, tournament_data as TD  # noqa: E402
from referee.web.app import create_app  # noqa: E402
from tests.web_server import LiveServer  # noqa: E402
from tests.web_site import MARIAS  # noqa: E402

CARDS = {r + s for r in "789XUOKA" for s in "hlba"}


@pytest.fixture(scope="module")
def client(web_site, tmp_path_factory):
    app = create_app([web_site.root], play_dir=tmp_path_factory.mktemp("plays"))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        yield c


def records(log: Path) -> list[dict]:
    return [json.loads(x) for x in log.read_text().splitlines()]


def deals(log: Path) -> list[dict]:
    return [r for r in records(log) if r["type"] == "deal"]


def rel(site, path: Path) -> str:
    return path.relative_to(site.root).as_posix()


def replay(client, site, log: Path, partie: int, deal: int) -> dict:
    r = client.get(f"/api/replay/0/{rel(site, log)}?partie={partie}&deal={deal}")
    assert r.status_code == 200, r.text
    return r.json()


def apply(prev: dict, delta: dict) -> dict:
    out = dict(prev)
    for k, v in delta.items():
        grown = isinstance(v, dict) and isinstance(v.get("+"), list) and isinstance(prev.get(k), list)
        out[k] = prev[k] + v["+"] if grown else v
    return out


def last_all(d: dict) -> dict:
    every: dict = {}
    for st in d["steps"]:
        every = apply(every, st["all"])
    return every


def last_view(d: dict, seat: int) -> dict:
    v: dict = {}
    for st in d["steps"]:
        v = apply(v, st["views"][seat])
    return v


# ------------------------------------------------------------------ the replayer's last step (bugs 3 and 4)

def test_a_fault_in_the_middle_of_a_trick_leaves_the_trick_on_the_table_at_the_last_step(web_site, client):
    """Bug 3: the engine returns the trick's cards to the hands when a fault ends the deal (R2.3); the
    last step also holds the table as it was at the fault, so the card led stays on the table."""
    mid = [r for r in deals(web_site.log) if r["faults"] and sum(d["decision"] == "play" for d in r["decisions"]) % 3]
    assert mid, "the site's match has a fault in the middle of a trick (tests/fault_bots/page_hostile.py)"
    for rec in mid:
        d = replay(client, web_site, web_site.log, rec["partie"], rec["deal"])
        plays = [x for x in rec["decisions"] if x["decision"] == "play"]
        on_table = plays[len(plays) - len(plays) % 3:]  # the trick in progress, from the record alone
        end = last_all(d)["end"]
        assert end["how"] == "fault"
        assert end["trick"] == [{"seat": x["seat"], "card": x["action"][5:]} for x in on_table]
        for x in on_table:  # each card on the table, in nobody's hand
            assert all(x["action"][5:] not in h for h in end["hands"])
        played = {c for t in rec["tricks"] for c in t["cards"]}
        held = [c for h in end["hands"] for c in h] + [t["card"] for t in end["trick"]] + rec["talon"]
        assert sorted(held) == sorted(CARDS - played)  # every card once


def test_laid_cards_leave_every_hand_shown_at_the_last_step(web_site, client):
    """Bug 4: laying down (R8) clears the engine's hands; the last step holds them as they were when the
    cards were laid: the actor's the laid cards, each defender's what it still held."""
    laid = [r for r in deals(web_site.log) if r["laid"]]
    assert laid, "robot lays its cards down in the site's match"
    for rec in laid:
        d = replay(client, web_site, web_site.log, rec["partie"], rec["deal"])
        end = last_all(d)["end"]
        assert end["how"] == "laid"
        seat = rec["laid"]["seat"]
        assert sorted(end["hands"][seat]) == sorted(rec["laid"]["cards"])
        played = {c for t in rec["tricks"] for c in t["cards"]}
        held = [c for h in end["hands"] for c in h] + [t["card"] for t in end["trick"]] + rec["talon"]
        assert sorted(held) == sorted(CARDS - played)
        # a seat's own view says what was laid, and no defender's card
        assert last_view(d, (seat + 1) % 3)["laid"] == rec["laid"]


# ------------------------------------------------------------------ the stderr tail at a fault

def test_a_fault_shows_the_end_of_the_bots_stderr_file_as_text(web_site, client):
    partie, deal = web_site.FAULT_MARKUP
    d = replay(client, web_site, web_site.log, partie, deal)
    f = d["fault"]
    assert f["seat"] == 1 and f["kind"] == "illegal"
    stderr = web_site.log.with_name(web_site.log.name[:-6] + ".seat1.stderr.log")
    raw = stderr.read_bytes()
    assert f["stderr"]["file"] == stderr.name and f["stderr"]["size"] == len(raw)
    tail = raw[-log_data.STDERR_TAIL_BYTES:]
    if len(raw) > log_data.STDERR_TAIL_BYTES:
        tail = tail[tail.index(b"\n") + 1:]
    assert f["stderr"]["tail"] == tail.decode() and "<script>" in f["stderr"]["tail"]  # the bot's text, as it wrote it
    # a deal without a fault has none
    assert replay(client, web_site, web_site.log, 1, 2)["fault"] is None


def test_a_stderr_file_that_leads_out_is_a_fifo_or_is_huge_is_never_read_whole(web_site, tmp_path):
    root = tmp_path / "served"
    (root / "logs").mkdir(parents=True)
    log = root / "logs" / "m.jsonl"
    shutil.copyfile(web_site.log, log)
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret outside\n")
    app = create_app([root], play_dir=tmp_path / "plays")
    partie, deal = web_site.FAULT_MARKUP

    def stderr_of() -> dict:
        log_data.forget_logs()
        with TestClient(app, base_url="http://127.0.0.1") as c:
            r = c.get(f"/api/replay/0/logs/m.jsonl?partie={partie}&deal={deal}")
        assert r.status_code == 200
        return r.json()["fault"]["stderr"]

    err = root / "logs" / "m.seat1.stderr.log"
    err.symlink_to(secret)
    s = stderr_of()
    assert "outside" in s["note"] and s["tail"] == "" and "secret" not in json.dumps(s)
    err.unlink()
    os.mkfifo(err)
    s = stderr_of()  # never opened for reading: no hang
    assert "FIFO" in s["note"] and s["tail"] == ""
    err.unlink()
    err.write_bytes(b"x" * 3_000_000 + b"\nthe last line\n")
    s = stderr_of()
    assert s["size"] == 3_000_015 and s["cut"] and s["tail"] == "the last line\n"


# ------------------------------------------------------------------ a position from the address

def test_the_replayer_page_takes_its_step_and_seat_from_the_address(web_site, client):
    url = f"/replay/0/{rel(web_site, web_site.log)}?partie=1&deal=4&step=17&seat=1"
    r = client.get(url)
    page = json.loads(re.search(r'<script id="page" type="application/json">(.*?)</script>', r.text, re.S).group(1))
    assert r.status_code == 200 and (page["step"], page["seat"], page["partie"], page["deal"]) == (17, "1", 1, 4)
    page = json.loads(re.search(r'<script id="page" type="application/json">(.*?)</script>',
                                client.get(url.split("&step")[0]).text, re.S).group(1))
    assert (page["step"], page["seat"]) == (None, "all")
    for bad in ("step=x", "step=-1", "seat=3", "seat=<b>"):
        assert client.get(url.split("&step")[0] + "&" + bad).status_code == 400


# ------------------------------------------------------------------ the lists of logs

def test_the_index_lists_each_log_with_its_bots_and_groše_and_filters_by_bot(web_site, client):
    html = client.get("/").text
    rows = re.findall(r'<tr><td><a href="/log/0/([^"]+)">.*?</a></td>\s*<td>(.*?)</td>\s*<td>(.*?)</td>', html, re.S)
    by = {urllib.parse.unquote(r): (bots, result) for r, bots, result in rows}
    footer = records(web_site.log)[-1]
    header = records(web_site.log)[0]
    labels = [b["label"] for b in header["bots"]]
    bots, result = by[rel(web_site, web_site.log)]
    assert bots == ", ".join(labels)
    ranked = sorted(zip(labels, footer["totals"]), key=lambda x: -x[1])
    assert result == " · ".join(f"{n} {g:+d}" for n, g in ranked)
    assert "&lt;img" in html and "<img src=x" not in html  # the markup file name, as text
    # one bot's logs: only those it played in
    only = client.get("/?bot=robot").text
    assert rel(web_site, web_site.log) in only
    assert rel(web_site, web_site.log) not in client.get("/?bot=no_such_bot").text


def test_a_log_summary_reads_the_ends_of_the_file_once_per_version(web_site, tmp_path):
    log = tmp_path / "m.jsonl"
    lines = web_site.log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-1]))  # no footer: a match cut short
    first = log_data.log_summary(log)
    assert first["complete"] is False and first["totals"] is None and first["bots"][1] == "page_hostile"
    assert log_data.log_summary(log) is first  # kept
    log.write_bytes(b"".join(lines))
    again = log_data.log_summary(log)
    assert again["complete"] and again["totals"] == json.loads(lines[-1])["totals"]


def test_a_bots_games_are_the_tournaments_logs_of_that_bot(web_site, client):
    every = client.get("/api/tournament/0/tour").json()
    assert every["logs_total"] == len(list((web_site.tour / "logs").glob("*.jsonl"))) == 4
    mine = client.get("/api/tournament/0/tour?bot=r").json()
    expected = []
    for log in sorted((web_site.tour / "logs").glob("*.jsonl")):
        recs = records(log)
        labels = [b["label"] for b in recs[0]["bots"]]
        if "r" in labels:
            expected.append((f"logs/{log.name}", dict(zip(labels, recs[-1]["totals"]))))
    names = mine["log_bots"]
    got = [(e[0], {names[i]: g for i, g in zip(e[1], e[2])}) for e in mine["logs"]]
    assert got == expected and mine["logs_total"] == len(expected) == 3
    for e in mine["logs"]:
        assert e[2] == sorted(e[2], reverse=True)  # the best first


def test_the_event_page_starts_with_its_set_up_and_never_shows_a_secret_seed(web_site, client):
    body = json.loads((web_site.tour / "tournament.json").read_text())
    secret = body["config"]["seed"]
    text = client.get("/api/tournament/0/tour").text
    s = json.loads(text)["setup"]
    assert [(b["name"], b["command"], b["fingerprint"]) for b in s["bots"]] == \
           [(b["name"], b["command"], body["config"]["fingerprints"][b["name"]]) for b in body["config"]["bots"]]
    assert s["time"]["move_ms"] == body["config"]["time"]["move_ms"] and s["arrangements"] == "fixed"
    assert s["decks"] == "secret seed" and s["seed"] is None and s["seed_sha256"] == seed_sha256(secret)
    for page in (text, client.get("/").text, client.get("/tournament/0/tour").text):
        assert secret not in page


def test_the_index_shows_state_and_leader_from_the_cache_and_never_waits_for_tables(web_site, tmp_path, monkeypatch):
    go = threading.Event()
    real = TD.tournament_data

    def slow(folder):
        go.wait(60)
        return real(folder)

    monkeypatch.setattr(TD, "tournament_data", slow)
    srv = LiveServer([web_site.root], tmp_path / "plays")
    try:
        status, body = srv.get("/", timeout=20)  # the tables wait: the index does not
        html = body.decode()
        row = re.search(r'<tr data-rel="tour">(.*?)</tr>', html, re.S).group(1)
        assert status == 200 and "tables being computed" in row and "finished" in row
        go.set()
        t0 = time.monotonic()
        while "tables being computed" in row and time.monotonic() - t0 < 60:
            time.sleep(0.2)
            row = re.search(r'<tr data-rel="tour">(.*?)</tr>', srv.get("/", timeout=20)[1].decode(), re.S).group(1)
        table = real(web_site.tour)["tables"]["standings"][0]
        assert f"{table['bot']} {table['groše']:+d} groše" in row
        t0 = time.monotonic()
        while True:  # the duel's tables are computed in the background too
            duel_row = re.search(r'<tr data-rel="same">(.*?)</tr>', srv.get("/", timeout=20)[1].decode(), re.S).group(1)
            if "tables being computed" not in duel_row or time.monotonic() - t0 > 60:
                break
            time.sleep(0.2)
        assert "decided" in duel_row and "H0 accepted" in duel_row
    finally:
        go.set()
        srv.stop()


# ------------------------------------------------------------------ a duel: LLR −inf (bug 5), its live page (bug 1)

def test_an_infinite_llr_is_drawn_at_the_bound_it_is_past(web_site, client):
    d = client.get("/api/tournament/0/same").json()["duel"]
    r = duel_mod.report(web_site.duel)
    assert r["llr"] == "-inf" and d["decision"] == "H0"  # two identical bots: every group the same
    assert d["llr_by_group"][-1] == pytest.approx(d["lower"], abs=1e-3) and d["llr_clipped"] == [{"group": 2, "llr": "-inf"}]
    assert client.get("/api/tournament/0/same").json()["progress"]["state"] == "decided"  # EventFolder's word


def test_a_running_duels_signature_changes_when_a_log_is_finished(web_site, tmp_path):
    """A duel keeps no journal and its logs are created when their match starts: the signature of a
    running duel must follow the logs' ends (bug 1: the live page stayed at an earlier group)."""
    folder = tmp_path / "duel"
    shutil.copytree(web_site.duel, folder)
    ev = EventFolder(folder)
    with ev.lock():  # as the duel does while it runs
        before = ev.signature()
        last = sorted((folder / "logs").glob("g*.jsonl"))[-1]
        st = last.stat()
        os.utime(last, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # its footer written
        assert EventFolder(folder).signature() != before


def test_a_report_holds_every_log_or_says_which_it_left_out(web_site, tmp_path):
    def body_of(html: str) -> dict:
        return json.loads(re.search(r'<script id="report-data" type="application/json">(.*?)</script>', html, re.S).group(1))

    listed = [e[0] for e in TD.for_page(TD.tournament_data(web_site.tour))["logs"]]
    full = body_of(report.build(web_site.tour))
    assert sorted(full["logs"]) == sorted(f"0/{x}" for x in listed) and len(listed) == 4
    for key, packed in full["logs"].items():
        one = json.loads(zlib.decompress(base64.b64decode(packed)))
        recs = deals(web_site.tour / key[2:])
        assert sorted(one["replays"]) == sorted(f"{r['partie']}/{r['deal']}" for r in recs)
        assert one["log"]["name"] == Path(key).name
    html = report.build(web_site.tour, max_logs=1)
    part = body_of(html)
    assert list(part["logs"]) == [f"0/{listed[0]}"] and part["max_logs"] == 1
    assert "the replays of 1 of its 4 logs are inside" in html
    assert str(web_site.root) not in html


@pytest.mark.slow
def test_a_live_duel_page_shows_the_duels_end_as_the_duel_reaches_it(tmp_path):
    """Bug 1 end to end: a duel run in a process of its own while the server watches it (its API asked
    as a page would, its event stream read): when the duel ends, both say what a fresh reading says."""
    root = tmp_path / "served"
    root.mkdir()
    srv = LiveServer([root], tmp_path / "plays")
    proc = subprocess.Popen([*MARIAS, "duel", "a=random:1", "b=random:2", "--seed", "5", "--h1", "60", "-j", "2",
                             "--out", str(root / "d"), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    events: list[tuple[str, dict]] = []

    def listen():
        with urllib.request.urlopen(srv.url + "/events/tournament/0/d", timeout=300) as r:
            kind = None
            for line in r:
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    events.append((kind, json.loads(line[6:])))

    try:
        t0 = time.monotonic()
        while not (root / "d" / "tournament.json").exists():
            assert time.monotonic() - t0 < 120 and proc.poll() in (None, 0)
            time.sleep(0.1)
        threading.Thread(target=listen, daemon=True).start()
        seen = []
        while proc.poll() is None:
            status, body = srv.get("/api/tournament/0/d", timeout=60)
            if status == 200:
                d = json.loads(body)
                seen.append((d["progress"]["state"], (d.get("duel") or {}).get("groups")))
            time.sleep(0.5)
        assert proc.returncode == 0
        fresh = duel_mod.report(root / "d")
        want = ("decided", fresh["groups"], fresh["decision"])
        t0 = time.monotonic()
        got = None
        while time.monotonic() - t0 < 120:
            d = json.loads(srv.get("/api/tournament/0/d", timeout=60)[1])
            got = (d["progress"]["state"], d["duel"]["groups"], d["duel"]["decision"])
            data = [e for k, e in events if k == "data"]
            if got == want and data and (data[-1]["progress"]["state"], data[-1]["duel"]["groups"]) == want[:2]:
                break
            time.sleep(0.5)
        assert got == want, (got, want, seen)
        states = [e["state"] for k, e in events if k == "progress"] + [e["progress"]["state"] for k, e in events if k == "data"]
        assert "finished" not in states  # a decided test is never called finished, not even for a moment
        assert any(s == "running" for s, _g in seen)  # the page saw it running
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(60)
        srv.stop()


# ------------------------------------------------------------------ the analysis of a log (issue 35 item 3)

CHEAP = dict(worlds=1, bidding=False)  # the seat's view over one world: cheap, still a view value per card


def served_copy(site, tmp_path) -> tuple[Path, Path]:
    root = tmp_path / "served"
    (root / "logs").mkdir(parents=True)
    log = root / "logs" / "m.jsonl"
    shutil.copyfile(sorted((site.tour / "logs").glob("*.jsonl"))[0], log)
    return root, log


def analysed(c, url: str) -> dict:
    t0 = time.monotonic()
    while True:
        r = c.get(url)
        assert r.status_code == 200, r.text
        d = r.json()
        if d["state"] != "computing":
            return d
        assert time.monotonic() - t0 < 300, "the analysis never ended"
        time.sleep(0.2)


def test_the_analysis_api_gives_what_marias_analyze_gives_and_caches_it_where_no_bot_looks(web_site, tmp_path):
    from referee.analysis import cache
    from referee.analysis.deals import Settings
    from referee.analysis.run import log_analysis
    from referee.seats.sandbox import OUTPUT_MARKER, marked_outputs

    root, log = served_copy(web_site, tmp_path)
    settings = Settings(**CHEAP)
    app = create_app([root], play_dir=tmp_path / "plays", analysis=settings, analysis_processes=1)
    n = len(deals(log))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        first = c.get("/api/analysis/0/logs/m.jsonl?partie=1&deal=3").json()
        assert first["state"] == "computing" and first["total"] == n and first["cached"] is False
        one = analysed(c, "/api/analysis/0/logs/m.jsonl?partie=1&deal=3")
        r = c.get("/api/analysis/0/logs/m.jsonl")
        whole = r.json()
    want = log_analysis(log, settings)  # marias analyze's library call, in this process
    assert whole["state"] == "done" and whole["cached"] is True  # stored, then read back
    assert whole["deals"] == want["deals"] and whole["summary"] == want["summary"] and whole["settings"] == settings.to_dict()
    assert one["deals"] == [d for d in want["deals"] if (d["partie"], d["deal"]) == (1, 3)]
    assert whole["log"] == "logs/m.jsonl" and str(root) not in r.text and str(tmp_path) not in r.text
    # the cache: marias analyze's own entry, 0600, in a folder no sandboxed bot is shown
    path = cache.cache_path(log, settings)
    assert cache.load(log, settings)["deals"] == want["deals"]
    assert path.stat().st_mode & 0o777 == 0o600 and (path.parent / OUTPUT_MARKER).exists()
    hidden, _files = marked_outputs([str(root)])
    assert str(path.parent) in hidden


def test_a_second_request_joins_the_computation_under_way_and_a_busy_server_says_so(web_site, tmp_path):
    from referee.analysis.deals import Settings
    from referee.web.analyses import Analyses, Busy

    root, log = served_copy(web_site, tmp_path)
    other = log.with_name("n.jsonl")
    shutil.copyfile(sorted((web_site.tour / "logs").glob("*.jsonl"))[1], other)
    before = set(multiprocessing.active_children())  # another test's server may be a child process too
    an = Analyses(Settings(**CHEAP), processes=1, max_logs=1)
    try:
        s = an.status(log, "logs/m.jsonl")
        assert s["state"] == "computing"  # its processes are spawned: no deal is done yet
        [job] = an.jobs.values()
        with pytest.raises(Busy):  # one log at a time here: the other waits its turn
            an.status(other, "logs/n.jsonl")
        submitted = []
        real = an.pool.submit
        an.pool.submit = lambda *a, **k: (submitted.append(a), real(*a, **k))[1]
        again = an.status(log, "logs/m.jsonl")
        assert again["state"] in ("computing", "done") and submitted == []  # no second computation
        assert list(an.jobs.values()) in ([job], [])
        t0 = time.monotonic()
        while an.status(log, "logs/m.jsonl")["state"] == "computing":
            assert time.monotonic() - t0 < 300
            time.sleep(0.2)
        assert an.status(log, "logs/m.jsonl")["cached"] is True and submitted == []
        assert an.status(other, "logs/n.jsonl")["state"] == "computing"  # now its turn
        workers = [w for w in multiprocessing.active_children() if w not in before]  # the analysis pool's
        assert workers
        an.close()  # the server stops: its exit never waits for a deal under way
        for w in workers:
            w.join(60)
        assert [w.exitcode for w in workers] == [-signal.SIGTERM] * len(workers)  # stopped, not left to finish
    finally:
        an.close()


def test_an_analysis_is_never_written_through_a_planted_link(web_site, tmp_path):
    """A bot with a kept working folder could plant .marias-analysis as a link to a folder it reads:
    the analysis (every hand, every bot's mistakes) is then kept in the server's memory only."""
    from referee.analysis.deals import Settings

    root, log = served_copy(web_site, tmp_path)
    elsewhere = tmp_path / "readable_by_a_bot"
    elsewhere.mkdir()
    (root / "logs" / ".marias-analysis").symlink_to(elsewhere)
    app = create_app([root], play_dir=tmp_path / "plays", analysis=Settings(**CHEAP), analysis_processes=1)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        d = analysed(c, "/api/analysis/0/logs/m.jsonl")
        assert d["state"] == "done" and d["cached"] is False and len(d["deals"]) == len(deals(log))
        assert c.get("/api/analysis/0/logs/m.jsonl").json()["state"] == "done"  # from memory, not computed again
    assert list(elsewhere.iterdir()) == []


def test_a_log_without_deals_is_analysed_at_once_to_nothing(web_site, tmp_path):
    root, log = served_copy(web_site, tmp_path)
    log.write_bytes(log.read_bytes().splitlines(keepends=True)[0])  # its header only: a match that never dealt
    srv = LiveServer([root], tmp_path / "plays")
    try:
        status, body = srv.get("/api/analysis/0/logs/m.jsonl", timeout=60)
        d = json.loads(body)
        assert status == 200 and (d["state"], d["total"], d["deals"], d["summary"]) == ("done", 0, [], [])
    finally:
        srv.stop()
