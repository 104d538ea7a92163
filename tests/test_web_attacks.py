"""marias serve against an attacker (issue 32): a person's game that the server's own pages would
give away, folders that would hang or crash the server, logs that would exhaust it, and the
minor leaks (absolute paths, session ids in file names, POSTs without an Origin).

Each test is the attack, played against the app: the starlette TestClient, or uvicorn on a free
port in a thread where requests must run at once or could hang (then a request unanswered after
a generous bound fails the test: a hang, not a speed, is what it detects)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

starlette = pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from referee.tools.bench import write_random_log  # noqa: E402
from referee.web import log_data as LD  # noqa: E402
from referee.web.app import create_app  # noqa: E402
from tests.web_server import LiveServer  # noqa: E402

ORIGIN = {"origin": "http://127.0.0.1"}
HANG_S = 60  # a request that has not answered in this long is taken for hung


def client_for(root: Path, play_dir: Path | None = None) -> TestClient:
    app = create_app([root], play_dir=play_dir, sandbox="none")
    return TestClient(app, base_url="http://127.0.0.1")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def served(root: Path) -> LiveServer:
    return LiveServer([root], root / "plays")


def deep_json(depth: int = 200_000) -> str:
    return "[" * depth + "]" * depth


# ------------------------------------------------------------------ 3. the play page knows no more than its seat


def _links(html: str) -> set[str]:
    return set(re.findall(r'href="/log/0/([^"]+\.jsonl)"', html))


def _steal(c: TestClient, rels: set[str]) -> list[dict]:
    """What an attacker gets of the logs ``rels``: every deal record the log page or the replayer gives."""
    got = []
    for rel in rels:
        r = c.get(f"/api/log/0/{rel}")
        if r.status_code == 200:
            got += [d for p in r.json()["parties"] for d in p["deals"]]
        for deal in range(1, 13):
            r = c.get(f"/api/replay/0/{rel}?partie=1&deal={deal}")
            if r.status_code == 200 and r.json().get("hands"):
                got.append(r.json())
        for page in (f"/log/0/{rel}", f"/replay/0/{rel}?partie=1&deal=1"):
            r = c.get(page)
            if r.status_code == 200:
                got.append({"page": page})
    return got


def test_a_person_playing_learns_no_deal_of_the_game_from_the_server(tmp_path):
    """The attack: while playing, list the index and fetch the game's own log and replays after each
    deal (the cards gathered, R2.3, and one's first seven cards against the 29 cuts predict the next
    deck).  The server gives none of it until the partie ends, and then all of it."""
    root = tmp_path / "served"
    root.mkdir()
    with client_for(root) as c:
        r = c.post("/play", data={"seat": "1", "bot1": "random", "bot2": "random"}, headers=ORIGIN, follow_redirects=False)
        assert r.status_code == 303
        seat_path = r.headers["location"]
        table = c.app.state.tables.get(seat_path.split("/")[2])
        place = table.place(1)
        log_rel = "plays/" + table.log_path.name
        stolen, probes, seen = [], 0, 0
        t0 = time.monotonic()
        while table.state in ("waiting", "playing") and time.monotonic() - t0 < 300:
            for line in place.wait_lines(seen, 0.5):
                seen += 1
                m = json.loads(line)
                if m["type"] == "deal_start" or m["type"] == "deal_end" and m["deal"] < 12:  # deals still to come
                    listed = _links(c.get("/").text)
                    assert log_rel not in listed
                    stolen += _steal(c, listed | {log_rel})
                    probes += 1
                if m["type"] == "hello":
                    answer = {"type": "hello", "protocol": 1, "name": "person", "version": "1"}
                elif m["type"] == "request":
                    answer = {"type": "action", "id": m["id"], "action": m["legal"][0]}
                else:
                    continue
                assert c.post(seat_path + "/answer", content=json.dumps(answer), headers=ORIGIN).status_code == 200
        table.thread.join(30)
        assert table.state == "finished", table.reason
        assert probes == 23 and stolen == [], f"{len(stolen)} deal(s) of the running game given away"
        # the partie is over: now its log is listed and every deal replays
        assert log_rel in _links(c.get("/").text)
        assert len(_steal(c, {log_rel})) == 12 + 12 + 2


WRITER = """
import random, sys
from referee.logs.log import LogWriter
from referee.rules.partie import Partie, partie_seed
bots = [{"seat": s, "command": "builtin:uniform", "name": "uniform", "version": "1", "exe_sha256": None} for s in range(3)]
w = LogWriter(sys.argv[1], {"seed": "writer", "bots": bots}, fsync=False)
w.partie_start(1)
partie = Partie(seed=partie_seed("writer", 1))
rng = random.Random(1)
for deal in partie.iter_deals():
    while not deal.done:
        legal = deal.legal_actions()
        deal.apply(legal[rng.randrange(len(legal))])
    w.deal(1, len(partie.deals), deal, partie.cuts[-1], deal.deck)
    if len(partie.deals) == 2:
        break
print("written", flush=True)
sys.stdin.read()  # holds the log open, as a match in progress, until killed
"""


def test_a_log_another_process_is_writing_is_not_served_until_its_writer_is_gone(tmp_path):
    """Any marias process writing a log (a match, a tournament worker) marks it; a log whose writer
    died unmarks itself and is shown, as incomplete."""
    root = tmp_path / "served"
    (root / "logs").mkdir(parents=True)
    log = root / "logs" / "running.jsonl"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert writer.stdout.readline() == "written\n"
        with client_for(root) as c:
            assert "running.jsonl" not in c.get("/").text
            for url in ("/log/0/logs/running.jsonl", "/api/log/0/logs/running.jsonl",
                        "/api/replay/0/logs/running.jsonl?partie=1&deal=1", "/replay/0/logs/running.jsonl",
                        "/api/analysis/0/logs/running.jsonl", "/api/analysis/0/logs/running.jsonl?partie=1&deal=1"):
                r = c.get(url)
                assert r.status_code == 409 and "still being played" in r.text, url
            writer.send_signal(signal.SIGKILL)  # the writer crashes: its log stays incomplete forever
            writer.wait(30)
            assert "running.jsonl" in c.get("/").text
            d = c.get("/api/log/0/logs/running.jsonl").json()
            assert d["complete"] is False and [x["deal"] for x in d["parties"][0]["deals"]] == [1, 2]
            assert c.get("/api/replay/0/logs/running.jsonl?partie=1&deal=2").json()["hands"]
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()


# ------------------------------------------------------------------ 4. a served folder cannot hurt the server


def test_a_fifo_planted_where_a_tournament_json_is_expected_hangs_nothing(tmp_path):
    """A bot with a kept workdir makes lane-1/standings/tournament.json a FIFO inside the served
    folder: the index and the folder's page answer (once, and more often than the threads of the pool)."""
    root = tmp_path / "served"
    lane = root / "bots" / "lane-1" / "standings"
    lane.mkdir(parents=True)
    os.mkfifo(lane / "tournament.json")
    os.mkfifo(root / "trap.jsonl")
    srv = served(root)
    try:
        status, body = srv.get("/", HANG_S)
        assert status == 200
        assert b"FIFO" in body  # the entry is listed with a note, not read
        for _ in range(45):  # more than anyio's 40 threads: none of them is left blocked
            assert srv.get("/api/tournament/0/bots/lane-1/standings", HANG_S)[0] in (200, 422)
        assert srv.get("/api/log/0/trap.jsonl", HANG_S)[0] == 404
        assert srv.get("/", HANG_S)[0] == 200
    finally:
        srv.stop()


def test_folders_nested_deeper_than_the_walk_goes_are_a_note(tmp_path):
    """1100 nested folders (a bot's workdir can make them) would overflow a recursive walk: the
    index goes 24 deep and says so."""
    root = tmp_path / "served"
    deep = root / "bots"
    deep.mkdir(parents=True)
    for _ in range(1100):  # one by one: pathlib and os.makedirs recurse as deep
        deep = deep / "d"
        deep.mkdir()
    try:
        with client_for(root) as c:
            r = c.get("/")
        assert r.status_code == 200 and "more than 24 deep are not listed" in r.text
    finally:
        while deep != root:  # deepest first: shutil.rmtree would recurse as deep
            deep.rmdir()
            deep = deep.parent


def tournament_api(root: Path, rel: str) -> dict:
    """The tournament page's data of ``root/rel``, asked of a live server (a hang fails the test)."""
    srv = served(root)
    try:
        status, body = srv.get(f"/api/tournament/0/{rel}", HANG_S)
    finally:
        srv.stop()
    assert status == 200, body
    return json.loads(body)


def _tournament_with(folder: Path, units: list[tuple[str, str]], journal: dict[str, str]) -> None:
    """A tournament folder by hand: a manifest naming each unit's log, a journal recording them done."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "logs").mkdir(exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(
        {"format": "marias-tournament-manifest", "units": [{"id": u, "log": log} for u, log in units]}))
    (folder / "units.journal").write_text("".join(
        json.dumps({"id": u, "status": "done", "sha256": sha, "t": "2026-01-01T00:00:00Z"}) + "\n" for u, sha in journal.items()))


def test_a_manifest_naming_a_device_a_fifo_or_a_file_outside_gets_notes_not_a_hang(tmp_path):
    root = tmp_path / "served"
    tour = root / "tour"
    outside, linked = tmp_path / "outside.jsonl", tmp_path / "linked.jsonl"
    write_random_log(outside, deals=12)
    write_random_log(linked, deals=12, seed=2)
    inside = tour / "logs" / "ok.jsonl"
    _tournament_with(tour, [("zero", "/dev/zero"), ("out", "../../outside.jsonl"), ("fifo", "logs/fifo.jsonl"),
                            ("link", "logs/link.jsonl"), ("ok", "logs/ok.jsonl")],
                     {"zero": "0" * 64, "out": sha256(outside), "fifo": "0" * 64, "link": sha256(linked)})
    os.mkfifo(tour / "logs" / "fifo.jsonl")
    (tour / "logs" / "link.jsonl").symlink_to(linked)
    write_random_log(inside, deals=12)
    (tour / "units.journal").open("a").write(json.dumps({"id": "ok", "status": "done", "sha256": sha256(inside)}) + "\n")
    d = tournament_api(root, "tour")
    notes = "\n".join(d["notes"])
    assert "dev/zero: cannot be read (a character device" in notes
    assert "outside.jsonl: cannot be read (outside the folder" in notes
    assert "link.jsonl: cannot be read (outside the folder" in notes
    assert "fifo.jsonl: cannot be read (a FIFO" in notes
    assert [e[0] for e in d["logs"]] == ["logs/ok.jsonl"]  # only the log inside, on record, counts
    assert sum(row["partie"] for row in d["tables"]["standings"]) == 3


def test_a_fifo_beside_the_results_database_is_a_note_and_the_logs_are_read(tmp_path):
    """SQLite is never handed a FIFO planted beside the database (as its WAL): a note, and the
    tables come from the logs."""
    from referee.tournaments import results

    root = tmp_path / "served"
    tour = root / "tour"
    _tournament_with(tour, [("ok", "logs/ok.jsonl")], {})
    write_random_log(tour / "logs" / "ok.jsonl", deals=12)
    (tour / "units.journal").write_text(json.dumps({"id": "ok", "status": "done", "sha256": sha256(tour / "logs" / "ok.jsonl")}) + "\n")
    results.connect(tour / "results.sqlite", create=True).close()
    os.mkfifo(tour / "results.sqlite-wal")
    d = tournament_api(root, "tour")
    assert any("results.sqlite-wal: a FIFO" in n and "read from the logs instead" in n for n in d["notes"])
    assert [e[0] for e in d["logs"]] == ["logs/ok.jsonl"]


def test_deep_or_malformed_json_in_a_served_folder_is_a_note_never_a_500(tmp_path):
    root = tmp_path / "served"
    (root / "deep").mkdir(parents=True)
    (root / "deep" / "tournament.json").write_text(deep_json())
    (root / "deep2").mkdir()
    (root / "deep2" / "manifest.json").write_text(deep_json())
    (root / "deep2" / "units.journal").write_text(deep_json() + "\n")
    (root / "logs").mkdir()
    good = root / "logs" / "good.jsonl"
    write_random_log(good, deals=12)
    lines = good.read_text().splitlines()
    deal = json.loads(lines[2])
    deal["result"] = [1, 2]  # not an object
    deal["decisions"] = [1, 2]  # not decisions
    deal2 = json.loads(lines[3])
    deal2["faults"] = [{"seat": 1, "kind": "illegal", "evidence": deep_json(5000)}]  # a bot's answer, nested deep
    (root / "logs" / "odd.jsonl").write_text(
        "\n".join([lines[0], lines[1], deep_json(5000), json.dumps(deal), json.dumps(deal2)] + lines[4:]) + "\n")
    with client_for(root) as c:
        assert c.get("/").status_code == 200
        for folder in ("deep", "deep2"):
            r = c.get(f"/api/tournament/0/{folder}")
            assert r.status_code in (200, 422), r.text
        r = c.get("/api/log/0/logs/odd.jsonl")
        assert r.status_code == 200
        d = r.json()
        assert any("line 3: not JSON" in p for p in d["problems"])
        assert len(d["parties"][0]["deals"]) == 12
        r = c.get("/api/replay/0/logs/odd.jsonl?partie=1&deal=1")
        assert r.status_code == 404 and "cannot replay" in r.text
        r = c.get("/api/replay/0/logs/odd.jsonl?partie=1&deal=2")
        assert r.status_code == 200 and r.json()["fault"]["rule"] == "R12.1"


@pytest.fixture(scope="module")
def big_log(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("big")
    (root / "logs").mkdir()
    write_random_log(root / "logs" / "big.jsonl", deals=3000)  # about 5.5 MB
    return root


def test_a_large_logs_data_are_sent_while_it_is_read(big_log):
    """The first piece of the log page's data goes out after a few deals of the log were read."""
    path = big_log / "logs" / "big.jsonl"
    pieces = LD.open_log_data(path, "0/logs/big.jsonl")
    first = next(pieces)
    f = pieces.gi_frame.f_locals["f"]  # the open log
    assert first.startswith(b'{"path":') and len(first) < 2 * LD.CHUNK_BYTES and f.tell() < path.stat().st_size / 4
    pieces.close()
    assert f.closed


def peak_of(fn):
    """fn()'s result and the peak of Python's allocations (every thread) while it ran."""
    tracemalloc.start()
    try:
        return fn(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_log_is_never_held_whole(big_log):
    """Python's peak allocation while the log page's data are made and read whole, or one deal is
    replayed, is a fraction of the log (the old reader held every record: about ten times the file)."""
    size = (big_log / "logs" / "big.jsonl").stat().st_size
    with client_for(big_log) as c:
        r, peak = peak_of(lambda: c.get("/api/log/0/logs/big.jsonl"))
        assert r.status_code == 200 and sum(len(p["deals"]) for p in r.json()["parties"]) == 3000
        assert peak < size / 2, f"{peak / 2**20:.1f} MB allocated for a {size / 2**20:.1f} MB log"
        LD.forget_logs()  # the index the log's data made on the way: the replay makes it anew
        r, peak = peak_of(lambda: c.get("/api/replay/0/logs/big.jsonl?partie=100&deal=7"))
        assert r.status_code == 200 and r.json()["deal"] == 7
        assert peak < size / 4, f"a replay allocated {peak / 2**20:.1f} MB for a {size / 2**20:.1f} MB log"


def test_four_large_logs_at_once_leave_the_other_pages_answering(big_log, monkeypatch):
    """Four requests for a large log hold every log-reading thread (held mid-log here, as a slow disk
    would): the index and another folder's page answer meanwhile, a fifth log waits its turn, and
    all five finish once the reading goes on."""
    go = threading.Event()
    reading = threading.Semaphore(0)
    lines = LD._lines

    def held(f):
        for i, item in enumerate(lines(f)):
            if i == 100:
                reading.release()
                go.wait(HANG_S)
            yield item

    monkeypatch.setattr(LD, "_lines", held)
    srv = served(big_log)
    try:
        results: list = []
        threads = [threading.Thread(target=lambda: results.append(srv.get("/api/log/0/logs/big.jsonl", HANG_S)), daemon=True)
                   for _ in range(5)]
        for t in threads:
            t.start()
        for _ in range(4):
            assert reading.acquire(timeout=HANG_S)  # four are in the middle of the log
        assert srv.get("/", HANG_S)[0] == 200
        assert srv.get("/api/tournament/0/", HANG_S)[0] in (200, 422)
        assert not reading.acquire(timeout=1)  # the fifth has not started reading: it waits for a thread
        go.set()
        for t in threads:
            t.join(HANG_S)
        assert [s for s, _ in results] == [200] * 5
        assert all(json.loads(body)["parties"][-1]["totals"] for _, body in results)
    finally:
        go.set()
        srv.stop()


# ------------------------------------------------------------------ 5. the minor points


def test_answers_name_no_absolute_server_path(tmp_path):
    root = tmp_path / "served"
    (root / "logs").mkdir(parents=True)
    log = root / "logs" / "a.jsonl"
    write_random_log(log, deals=12)
    tour = root / "tour"
    _tournament_with(tour, [("u", "logs/u.jsonl")], {})
    (tour / "logs" / "stray.jsonl").write_text("{}\n")  # a note names it
    with client_for(root) as c:
        texts = [c.get(u).text for u in ("/", "/tournament/0/tour", "/api/tournament/0/tour", "/log/0/logs/a.jsonl",
                                         "/api/log/0/logs/a.jsonl", "/api/replay/0/logs/a.jsonl?partie=1&deal=3",
                                         "/api/replay/0/logs/a.jsonl?partie=1&deal=99", "/api/log/0/nothing.jsonl")]
    assert "stray.jsonl" in texts[2]  # the note is there, relative
    for t in texts:
        assert str(tmp_path) not in t and os.path.realpath(tmp_path) not in t


def test_the_play_log_name_carries_no_part_of_the_table_id_or_a_seat_token(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    with client_for(root) as c:
        names, secrets = [], []
        for _ in range(3):
            r = c.post("/play", data={"seat0": "you", "seat1": "random", "seat2": "person"}, headers=ORIGIN,
                       follow_redirects=False)
            table = c.app.state.tables.get(r.headers["location"].split("/")[2])
            secrets += [table.id, *(p.token for p in table.places.values())]
            names.append(table.log_path.name)
            c.post(r.headers["location"] + "/quit", headers=ORIGIN)
        for t in c.app.state.tables._tables.values():
            t.thread.join(30)
            assert t.state == "stopped"
    on_disk = [p.name for p in (root / "plays").iterdir()]
    for secret in secrets:
        variants = {secret, secret.replace("-", "x").replace("_", "y")}
        for name in {*names, *on_disk}:
            for v in variants:
                assert not any(v[i:i + 5] in name for i in range(len(v) - 4)), (name, secret)


@pytest.mark.parametrize("headers,status", [
    ({}, 403),  # no Origin
    ({"origin": "null"}, 403),
    ({"origin": "https://127.0.0.1"}, 403),  # another scheme
    ({"origin": "http://127.0.0.1:8443"}, 403),  # another port
    ({"origin": "http://evil.example"}, 403),
    ({"origin": "http://127.0.0.1.evil.example"}, 403),
    ({"origin": "http://127.0.0.1"}, 303),
    ({"origin": "http://127.0.0.1:80"}, 303),  # the default port, written out
])
def test_a_post_needs_an_origin_of_this_server(tmp_path, headers, status):
    with client_for(tmp_path) as c:
        r = c.post("/play", data={"seat": "0", "bot1": "random", "bot2": "random"}, headers=headers, follow_redirects=False)
        assert r.status_code == status
        if status == 303:
            c.post(r.headers["location"] + "/quit", headers=ORIGIN)
