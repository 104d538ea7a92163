"""marias serve / marias report without a browser: the gate to the served folders, the data the
pages show (against the library and the log), the report, and the play page's seat."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

starlette = pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from referee.logs.validate import validate_file  # noqa: E402
from referee.tools.replay_bot import seat_script  # noqa: E402
from referee.tournaments import standings as S  # noqa: E402
from referee.web.app import create_app  # noqa: E402
from referee.web.folders import BadFolder, Roots  # noqa: E402
from referee.web.play import Seating, Tables  # noqa: E402

MARIAS = [sys.executable, "-c", "from referee.cli import main; main()"]

BAD_BOT = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 1, "name": "bad", "version": "1"}), flush=True)
    elif m["type"] == "request":
        a = m["legal"][0]
        if m["deal"] == 2 and m["decision"] == "play":
            bad = [c for c in m["view"]["hand"] if "play:" + c not in m["legal"]]
            a = "play:" + (bad[0] if bad else "Zz")
        print(json.dumps({"type": "action", "id": m["id"], "action": a}), flush=True)
    elif m["type"] == "bye":
        break
"""


def marias(*args, cwd=None, check=True):
    r = subprocess.run([*MARIAS, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    if check and r.returncode != 0:
        raise AssertionError(f"marias {' '.join(args)}: {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A folder with a small tournament and two match logs (one with a fault)."""
    root = tmp_path_factory.mktemp("served")
    marias("tournament", "-b", "a=random:1", "-b", "b=random:2", "-b", "c=random:3", "--partie", "1",
           "--arrangements", "rotations", "--seed", "7", "--out", str(root / "tour"), "--concurrency", "2",
           "--sandbox", "none")
    marias("duel", "a=random:1", "b=random:2", "--max-groups", "2", "--seed", "4", "--out", str(root / "duel"), "-j", "2",
           "--quiet")
    (root / "bad.py").write_text(BAD_BOT)
    marias("match", "-b", "random", "-b", f"{sys.executable} bad.py", "-b", "random", "--partie", "1",
           "--log", "logs", "--seed", "3", "--sandbox", "none", cwd=root, check=False)
    return root


@pytest.fixture(scope="module")
def client(served, tmp_path_factory):
    app = create_app([served], play_dir=tmp_path_factory.mktemp("plays"))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        yield c


def the_log(served) -> Path:
    return next((served / "logs").glob("match-*.jsonl"))


# ------------------------------------------------------------------ the gate

@pytest.mark.parametrize("url,status", [
    ("/log/0/..%2f..%2fetc%2fpasswd", 403),
    ("/log/0/%2e%2e/%2e%2e/etc/passwd", 403),
    ("/log/0/logs/%2E%2E/%2E%2E/x", 403),
    ("/api/log/0/..%5c..%5cx", 403),
    ("/log/0//etc/passwd", 400),
    ("/log/1/x.jsonl", 404),
    ("/log/0/nothing.jsonl", 404),
    ("/tournament/0/..%2f", 403),
])
def test_paths_outside_the_folder_are_refused(client, url, status):
    assert client.get(url).status_code == status


def test_a_symlink_out_of_the_folder_is_refused(served, client, tmp_path):
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"type":"header"}\n')
    link = served / "logs" / "link.jsonl"
    link.symlink_to(secret)
    try:
        r = client.get("/api/log/0/logs/link.jsonl")
        assert r.status_code == 403 and "out of the served folder" in r.text
    finally:
        link.unlink()


def test_a_huge_file_is_refused_with_413(served, tmp_path):
    big = served / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate(3 * 2**20)
    try:
        app = create_app([served], play_dir=tmp_path, max_bytes=2**20)
        with TestClient(app, base_url="http://127.0.0.1") as c:
            r = c.get("/api/log/0/big.jsonl")
        assert r.status_code == 413 and "larger than" in r.text
    finally:
        big.unlink()


def test_other_hosts_and_cross_origin_posts_are_refused(client):
    assert client.get("/", headers={"host": "evil.example"}).status_code == 400
    r = client.post("/play", data={"seat": "0", "bot1": "random", "bot2": "random"}, headers={"origin": "http://evil.example"})
    assert r.status_code == 403


def test_pages_carry_a_content_security_policy_that_loads_nothing_from_elsewhere(client):
    r = client.get("/")
    assert "default-src 'self'" in r.headers["content-security-policy"]
    for page in ("/", "/tournament/0/tour", f"/log/0/logs/{the_log_name(client)}"):
        html = client.get(page).text
        assert not re.search(r"(src|href)=\"(https?:)?//", html), page


def the_log_name(client) -> str:
    html = client.get("/").text
    return re.search(r"/log/0/logs/(match-[^\"]+\.jsonl)", html).group(1)


def test_a_bad_folder_is_an_error(tmp_path):
    with pytest.raises(BadFolder):
        Roots([tmp_path / "nope"])
    r = marias("serve", str(tmp_path / "nope"), check=False)
    assert r.returncode == 2 and "no such folder" in r.stderr


def test_ctrl_c_stops_the_server_while_a_live_page_is_open(served, tmp_path):
    """A live page's event stream never ends by itself: Ctrl-C must not wait for the browser to leave."""
    import signal
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*MARIAS, "serve", str(served / "tour"), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        while True:  # until it answers
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() - t0 < 60, proc.stderr.read() if proc.poll() else ""
                time.sleep(0.1)
        live = urllib.request.urlopen(f"http://127.0.0.1:{port}/events/tournament/0/", timeout=30)
        assert live.readline().startswith(b"event: data")  # the page is open and being fed
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130  # stopped by Ctrl-C, as every marias command, without waiting for the page
        assert live.read().endswith(b"\n\n")  # the stream ended cleanly at a message's end, not cut off
        live.close()
        assert "Error" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_nothing_is_written_into_the_served_folder(served, client):
    before = sorted((p, p.stat().st_mtime_ns) for p in served.rglob("*") if p.is_file())
    for url in ("/", "/api/tournament/0/tour", f"/api/log/0/logs/{the_log_name(client)}"):
        client.get(url)
    after = sorted((p, p.stat().st_mtime_ns) for p in served.rglob("*") if p.is_file())
    assert before == after


# ------------------------------------------------------------------ what the pages show

def test_the_tournament_data_are_the_tables_of_marias_table(served, client):
    d = client.get("/api/tournament/0/tour").json()
    text, _notes, t = S.report([served / "tour"], fmt="json", series=10)
    assert d["tables"] == json.loads(json.dumps(S.build(t, series=10)))
    assert d["progress"]["done"] == d["progress"]["total"] == 3 and d["progress"]["state"] == "finished"
    for name, c in d["curves"].items():
        assert c["y"][-1] == next(r["groše"] for r in d["tables"]["standings"] if r["bot"] == name)
    assert sum(r["won"] + r["lost"] for r in d["contracts"]) > 0


def test_the_duel_page_has_the_sprt_group_by_group(served, client):
    from referee.tournaments import duel

    d = client.get("/api/tournament/0/duel").json()
    r = duel.report(served / "duel")
    assert d["duel"]["groups"] == r["groups"] == 2 and d["duel"]["decision"] == r["decision"]
    assert len(d["duel"]["llr_by_group"]) == 2 and d["duel"]["llr_by_group"][0] == 0
    if isinstance(r["llr"], float):
        assert d["duel"]["llr_by_group"][-1] == pytest.approx(r["llr"], abs=1e-3)
    assert d["progress"]["state"] == "finished"
    # a duel's two bots, one row each (a bot in two seats of a partie is one entry), each in all 12 partie
    assert sum(row["partie"] for row in d["tables"]["standings"]) == 12 * 2


def test_the_table_cache_answers_at_once_and_recomputes_behind(served):
    from referee.web.tournament_data import TableCache

    cache = TableCache()
    folder = served / "tour"
    first = cache.get(folder)
    assert cache.get(folder) is first
    journal = folder / "units.journal"
    journal.write_text(journal.read_text())  # touched: as when a unit is accepted
    os.utime(journal, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert cache.get(folder) is first  # at once, the last tables
    t0 = time.monotonic()
    while cache.peek(folder) is first and time.monotonic() - t0 < 120:  # as a live page asks every second
        cache.get(folder)
        time.sleep(0.2)
    assert cache.peek(folder) is not first and cache.peek(folder)["tables"] == first["tables"]


def test_the_log_data_list_every_deal_with_its_result(served, client):
    log = the_log(served)
    d = client.get(f"/api/log/0/logs/{log.name}").json()
    records = [json.loads(x) for x in log.read_text().splitlines()]
    deals = [r for r in records if r["type"] == "deal"]
    got = [x for p in d["parties"] for x in p["deals"]]
    assert [(x["deal"], x["payments"], x["kind"]) for x in got] == \
           [(r["deal"], r["result"]["payments"], r["result"]["kind"]) for r in deals]
    assert any(x["faults"] for x in got)


def test_the_replay_gives_each_seat_exactly_the_referees_views(served, client):
    """At every step a seat's view is what the referee sent that seat in its request (the
    transcript rebuilt by marias replay), and the events told are the same lines."""
    log = the_log(served)
    d = client.get(f"/api/replay/0/logs/{log.name}?partie=1&deal=1").json()
    def apply(prev, delta):
        out = dict(prev)
        for k, v in delta.items():
            grown = isinstance(v, dict) and isinstance(v.get("+"), list) and isinstance(prev.get(k), list)
            out[k] = prev[k] + v["+"] if grown else v
        return out

    views = [[], [], []]
    for s in range(3):
        cur = {}
        for st in d["steps"]:
            cur = apply(cur, st["views"][s])
            views[s].append(cur)
    for s in range(3):
        script = seat_script(log, 1, 1, s)
        requests = [json.loads(x) for x in script.lines if '"type":"request"' in x]
        events = [json.loads(x)["event"] for x in script.lines if '"type":"event"' in x]
        for req in requests:
            step = len(req["view"]["bids"]) + sum(len(t["cards"]) for t in req["view"]["tricks"]) + len(req["view"]["trick"])
            step = step - (1 if req["view"]["laid"] else 0)
            assert views[s][step] == req["view"]
        told = [e for st in d["steps"] for e in (st["events"][s] if st["events"][s] is not None else st["events"][0])]
        assert told == events
    assert d["steps"][-1]["views"][0].get("result") or views[0][-1]["result"]


def test_a_fault_shows_its_evidence_rule_and_the_replay_command(served, client):
    log = the_log(served)
    d = client.get(f"/api/replay/0/logs/{log.name}?partie=1&deal=2").json()
    f = d["fault"]
    assert f["kind"] == "illegal" and f["seat"] == 1 and f["evidence"]
    assert re.match(r"R\d", f["rule"]) and f["settlement"] == "R12.2"
    assert f["command"].startswith("marias replay ") and "--deal 2 --seat 1 --bot" in f["command"]


def test_an_unknown_deal_is_404(served, client):
    assert client.get(f"/api/replay/0/logs/{the_log(served).name}?partie=1&deal=99").status_code == 404


# ------------------------------------------------------------------ the report

def test_the_report_is_one_file_that_loads_nothing(served, tmp_path):
    out = tmp_path / "r.html"
    r = marias("report", str(served / "tour"), "-o", str(out))
    html = out.read_text()
    assert "KB" in r.stdout
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", html)
    body = json.loads(re.search(r'<script id="report-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert "/api/tournament/0/" in body["data"] and body["logs"]
    one = json.loads(zlib.decompress(base64.b64decode(next(iter(body["logs"].values())))))  # deflated JSON in base64
    assert one["log"]["parties"] and one["replays"]["1/1"]["steps"]
    assert "uPlot" in html


# ------------------------------------------------------------------ play: the browser's seat

def play_through(table, seat, choose=lambda req: req["legal"][0], timeout=300):
    """Answer every request of the person's seat as the browser does, until the match ends."""
    place, seen = table.place(seat), 0
    t0 = time.monotonic()
    while table.state in ("waiting", "playing") and time.monotonic() - t0 < timeout:
        lines = place.wait_lines(seen, 0.5)
        seen += len(lines)
        for line in lines:
            m = json.loads(line)
            if m["type"] == "hello":
                assert place.answer(json.dumps({"type": "hello", "protocol": 1, "name": "t", "version": "1"})) is None
            elif m["type"] == "request":
                assert place.answer(json.dumps({"type": "action", "id": m["id"], "action": "no"})) is not None
                assert place.answer(json.dumps({"type": "action", "id": m["id"], "action": choose(m)})) is None
    table.thread.join(30)
    return table


def test_the_play_seat_is_sent_exactly_what_a_bot_in_that_seat_is_sent(tmp_path):
    t = play_through(Tables(tmp_path, sandbox="none").open(Seating(("random", "you", "robot"))), 1)
    assert t.state == "finished", t.reason
    report = validate_file(t.log_path, transcripts=tmp_path)
    assert report.ok and report.complete and report.transcripts == 3, report.lines()
    expected = seat_script(t.log_path, 1, 1, 1).lines[:2]
    for deal in range(1, 13):
        expected += seat_script(t.log_path, 1, deal, 1).lines[2:]
    lines = t.place(1).lines
    assert lines[:len(expected)] == expected
    assert [json.loads(x)["type"] for x in lines[len(expected):]] == ["partie_end", "bye"]


def test_a_stopped_game_leaves_an_incomplete_log(tmp_path):
    t = Tables(tmp_path, sandbox="none").open(Seating(("you", "random", "random")))
    place = t.place(0)
    while not place.lines:
        place.wait_lines(0, 0.5)
    t.stop("the test stops it")
    t.thread.join(30)
    assert t.state == "stopped" and t.reason == "the test stops it"
    assert not validate_file(t.log_path).complete if t.log_path.exists() else True


def test_play_bots_are_only_the_offered_ones(tmp_path):
    tables = Tables(tmp_path)
    with pytest.raises(ValueError):
        tables.open(Seating(("you", "random", "rm -rf /")))
    with pytest.raises(ValueError):
        tables.open(Seating(("you", "you", "random")))
    assert not tables.in_progress()


def test_marias_serve_prints_its_url_and_answers_there(served):
    import signal
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*MARIAS, "serve", str(served), "--port", str(port)], stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        url = re.search(r"(http://\S+/)", line).group(1)
        assert url == f"http://127.0.0.1:{port}/"
        body = urllib.request.urlopen(url, timeout=30).read().decode()
        assert "Tournaments and duels" in body and "tour" in body
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url + "api/log/0/tour/tournament.json", timeout=30)
        assert e.value.code == 404
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)


def test_serving_beyond_loopback_warns(served, monkeypatch):
    from referee.web import serve as web_serve

    import io

    import uvicorn

    calls = []

    def run(self, sockets=None):
        calls.append(self.config.host)
        self.started = True

    monkeypatch.setattr(uvicorn.Server, "run", run)
    err = io.StringIO()
    assert web_serve.serve([served], host="0.0.0.0", port=0, out=err) == 0
    assert "warning: serving on 0.0.0.0" in err.getvalue() and calls == ["0.0.0.0"]
    err = io.StringIO()
    assert web_serve.serve([served], port=0, out=err) == 0
    assert "warning" not in err.getvalue() and calls[-1] == "127.0.0.1"


def test_a_table_nobody_looks_at_ends_as_idle(tmp_path):
    t = Tables(tmp_path, sandbox="none", idle_minutes=0.5 / 60).open(Seating(("you", "random", "random"), "Ann"))
    t.thread.join(60)
    assert t.state == "stopped" and t.reason.startswith("idle: Ann had no page of the table open"), t.reason
