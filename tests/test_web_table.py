"""The play page's tables (issue 34): people at one table through their seats' invite links, each
sent exactly its seat's protocol lines; the seat tokens in the security audit; an idle table's
end; a person's move time; ``marias serve`` on a taken port.

Against the real app: uvicorn in a thread of the test (:class:`tests.web_server.LiveServer`) read
as a browser reads it (one cookie jar per person, the event stream as EventSource reads it), or
the starlette TestClient; the bots are built-ins (``--sandbox none``)."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from referee.cli import app as cli  # noqa: E402
from referee.logs.validate import validate_file  # noqa: E402
from referee.tools.replay_bot import seat_script  # noqa: E402
from referee.web.app import create_app  # noqa: E402
from referee.web.play import Seating, Tables  # noqa: E402
from tests.web_server import serving  # noqa: E402


class Person:
    """One person's browser: a cookie jar of its own; the seat's event stream read as EventSource
    reads it (resuming with Last-Event-ID); the request its status names answered."""

    def __init__(self, url: str, choose=lambda m: m["legal"][0]):
        self.c = httpx.Client(base_url=url, headers={"origin": url}, timeout=60)
        self.choose = choose
        self.lines: list[str] = []
        self.status: dict = {}
        self.error: BaseException | None = None
        self.seat_path = ""

    def events(self, start: int, until=lambda n: False):
        """(event, id, data) from line ``start`` on, until the stream ends or ``until(lines read)``."""
        headers = {"last-event-id": str(start)} if start else {}
        with self.c.stream("GET", self.seat_path + "/events", headers=headers) as r:
            assert r.status_code == 200, r.read()
            ev: dict = {}
            for raw in r.iter_lines():
                if raw.startswith(":"):
                    continue
                if raw:
                    k, _, v = raw.partition(": ")
                    ev[k] = v
                    continue
                if ev:
                    yield ev.get("event"), ev.get("id"), ev.get("data")
                    if ev.get("event") == "end" or until(len(self.lines)):
                        return
                ev = {}

    def play(self, drop_at: int | None = None) -> None:
        """Read and answer until the table ends; at ``drop_at`` lines leave and come back (Last-Event-ID)."""
        try:
            while True:
                for event, eid, data in self.events(len(self.lines), lambda n: drop_at is not None and n >= drop_at):
                    if event == "line":
                        assert int(eid) == len(self.lines) + 1, "a line skipped or sent twice"
                        self.lines.append(data)
                    elif event == "table":
                        self.status = json.loads(data)
                        self.answer()
                    elif event == "end":
                        return
                drop_at = None
        except BaseException as e:  # noqa: BLE001 - raised in the test's thread
            self.error = e

    def answer(self) -> None:
        n = self.status.get("awaiting")
        if not n:
            return
        assert n == len(self.lines), "the line awaiting an answer was named before it was sent"
        m = json.loads(self.lines[n - 1])
        if m["type"] == "hello":
            body = {"type": "hello", "protocol": 1, "name": "web", "version": "1"}
        else:
            assert self.post("/answer", {"type": "action", "id": m["id"], "action": "no such action"}).status_code == 409
            body = {"type": "action", "id": m["id"], "action": self.choose(m)}
        r = self.post("/answer", body)
        assert r.status_code == 200, r.text

    def post(self, path: str, obj) -> httpx.Response:
        return self.c.post(self.seat_path + path, content=json.dumps(obj))


def expected_lines(log: Path, seat: int) -> list[str]:
    """What a bot in ``seat`` is sent in the partie of ``log``, rebuilt from the log by marias replay."""
    out = seat_script(log, 1, 1, seat).lines[:2]
    for deal in range(1, 13):
        out += seat_script(log, 1, deal, seat).lines[2:]
    return out


@pytest.fixture
def server(tmp_path):
    yield from serving(tmp_path)


def test_three_people_play_a_partie_through_their_invite_links_each_sent_exactly_their_seats_lines(server, tmp_path):
    url = server.url
    ann, bob, cyril = Person(url), Person(url), Person(url, choose=lambda m: m["legal"][-1])
    r = ann.c.post("/play", data={"seat0": "you", "seat1": "person", "seat2": "person", "name": "Ann"}, follow_redirects=False)
    assert r.status_code == 303
    ann.seat_path = r.headers["location"]
    table = ann.seat_path.split("/")[2]
    assert ann.seat_path == f"/play/{table}/0"
    st = ann.c.get(ann.seat_path + "/status").json()
    assert st["state"] == "waiting" and [x["taken"] for x in st["seats"]] == [True, False, False]
    invites = st["invites"]
    assert set(invites) == {"1", "2"}
    tokens = {0: ann.c.cookies["marias-seat-0"], 1: invites["1"].rsplit("/", 1)[1], 2: invites["2"].rsplit("/", 1)[1]}
    assert len(set(tokens.values())) == 3 and all(len(t) >= 32 for t in tokens.values())

    # the seats' tokens: each admits its own seat only
    eve = httpx.Client(base_url=url, headers={"origin": url}, timeout=30)
    assert eve.get(f"/play/{table}/1/status").status_code == 403  # no token
    assert eve.get(invites["1"][:-2] + "xx", follow_redirects=False).status_code == 403  # a wrong token
    assert eve.get(f"/play/{table}/1/join/{tokens[2]}", follow_redirects=False).status_code == 403  # seat 2's token
    wrong = httpx.Client(base_url=url, cookies={"marias-seat-1": tokens[2]}, timeout=30)
    assert wrong.get(f"/play/{table}/1/status").status_code == 403
    assert eve.get(f"/play/{table}x/1/status").status_code == 404
    assert eve.get(f"/play/{table}", follow_redirects=False).status_code == 403

    for person, seat, name in ((bob, 1, "Bob"), (cyril, 2, "Cyril")):
        r = person.c.get(invites[str(seat)], follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == f"/play/{table}/{seat}"
        person.seat_path = r.headers["location"]
        assert person.c.get(f"/play/{table}", follow_redirects=False).headers["location"] == person.seat_path  # back to the seat
        assert person.c.get(person.seat_path).status_code == 200
        assert person.post("/sit", {"name": name}).json()["name"] == name
    threads = [threading.Thread(target=p.play, kwargs={"drop_at": d}, daemon=True)
               for p, d in ((ann, None), (bob, 40), (cyril, 90))]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 240
    while not bob.lines and time.monotonic() < deadline:
        time.sleep(0.05)
    # while it is played: bob's token reads and answers for bob only; the index tells who sits and the deal
    assert bob.c.get(f"/play/{table}/2/events").status_code == 403
    assert bob.c.post(f"/play/{table}/2/answer", content="{}").status_code == 403
    assert bob.c.post(f"/play/{table}/0/quit").status_code == 403
    index = eve.get("/").text
    assert "Ann" in index and "Bob" in index and "Cyril" in index
    assert f'href="/play/{table}"' in index  # back to one's seat: the cookie of the seat says which
    assert eve.get(f"/play/{table}", follow_redirects=False).status_code == 403
    assert not any(t in index for t in tokens.values())
    for t in threads:
        t.join(max(1.0, deadline - time.monotonic()))
    for p in (ann, bob, cyril):
        assert p.error is None, repr(p.error)
    st = ann.c.get(ann.seat_path + "/status").json()
    assert st["state"] == "finished", st

    log = tmp_path / "served" / "plays" / st["log"].rsplit("/", 1)[1]
    report = validate_file(log, transcripts=log.parent)
    assert report.ok and report.complete and report.transcripts == 3, report.lines()
    header = json.loads(log.read_text().splitlines()[0])
    assert [(b["label"], b["command"]) for b in header["bots"]] == [(n, "builtin:person") for n in ("Ann", "Bob", "Cyril")]
    for seat, p in enumerate((ann, bob, cyril)):  # the server never sends one seat's lines to another
        expected = expected_lines(log, seat)
        assert p.lines[:len(expected)] == expected
        assert [json.loads(x)["type"] for x in p.lines[len(expected):]] == ["partie_end", "bye"]
    assert st["review"] == f"/replay/0/plays/{log.name}?partie=1&deal=1&seat=0"
    # a closed tab comes back: the cookie (no Last-Event-ID) gets the seat's lines from the first
    again = Person(url)
    again.c.cookies = cyril.c.cookies
    again.seat_path = cyril.seat_path
    again.play()
    assert again.lines == cyril.lines and again.error is None
    # no token is in any file or file name the table wrote
    for f in (tmp_path / "served").rglob("*"):
        assert not any(t in f.name for t in tokens.values())
        if f.is_file():
            assert not any(t.encode() in f.read_bytes() for t in tokens.values()), f


def bot_pids() -> set[int]:
    """The built-in bots running as processes under this one (``python -I -m bots NAME``)."""
    pids = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b"-m" in cmd and b"bots" in cmd and state[0] != "Z" and _descends(int(d.name)):
            pids.add(int(d.name))
    return pids


def _descends(pid: int) -> bool:
    me = os.getpid()
    for _ in range(8):
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            return False
        if pid == me:
            return True
    return False


def test_an_idle_table_ends_stops_its_bots_and_keeps_its_log_incomplete(tmp_path):
    """Issue 34: an abandoned play kept its two bots running (8 processes 12 minutes later).  Here the
    person answers a few requests, then closes the page: after the idle time the table ends."""
    (tmp_path / "served").mkdir()
    before = bot_pids()
    app = create_app([tmp_path / "served"], play_dir=tmp_path / "served" / "plays", sandbox="none", table_idle_minutes=0.05)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        r = c.post("/play", data={"seat0": "random", "seat1": "you", "seat2": "robot"}, headers={"origin": "http://127.0.0.1"},
                   follow_redirects=False)
        assert r.status_code == 303
        t = next(iter(app.state.tables._tables.values()))
        place = t.place(1)
        answered, bots = 0, set()
        while answered < 4 and t.state in ("waiting", "playing"):
            bots |= bot_pids() - before
            with t.cond:
                t.cond.wait_for(lambda: place.pending is not None or t.state not in ("waiting", "playing"), 30)
                n = place.pending
            if n is None:
                continue
            m = json.loads(place.lines[n - 1])
            reply = {"type": "hello", "protocol": 1, "name": "p", "version": "1"} if m["type"] == "hello" else \
                    {"type": "action", "id": m["id"], "action": m["legal"][0]}
            assert place.answer(json.dumps(reply)) is None
            answered += 1
        assert len(bots) == 2, "both bots ran"
        t.thread.join(60)
        assert t.state == "stopped" and t.reason.startswith("idle:"), t.reason
        assert not bot_pids() - before, "a bot process outlived its table"
        assert not any(Path(f"/proc/{x}").exists() for x in bots)
        report = validate_file(t.log_path)  # every line it has sound: only the end is missing
        [problem] = report.lines()
        assert not report.complete and "incomplete" in problem and "not a result" in problem, problem
        assert t.log_path.name in c.get("/").text  # the writer let it go: listed (as incomplete)
        c.cookies.set("marias-seat-1", place.token)
        status = c.get("/play/" + t.id + "/1/status").json()
        dealt_out = any(json.loads(x)["type"] == "deal_end" for x in place.lines)  # deal 1 was played to its end
        assert status["log"].endswith(t.log_path.name) and ("review" in status) == dealt_out
        assert "none" in c.get("/").text.split("Tables in play")[1][:200]  # no longer in play


def test_a_persons_move_time_is_the_referees_limit_and_a_timeout_is_a_fault(tmp_path):
    tables = Tables(tmp_path, sandbox="none")
    t = tables.open(Seating(("you", "random", "random"), "Ann", move_s=1))
    place = t.place(0)
    with t.cond:
        t.cond.wait_for(lambda: place.pending is not None, 60)
    assert place.answer(json.dumps({"type": "hello", "protocol": 1, "name": "p", "version": "1"})) is None
    with t.cond:  # the first request (seat 0 is forhont: the trump card) is left unanswered
        t.cond.wait_for(lambda: place.pending is not None and json.loads(place.lines[place.pending - 1])["type"] == "request", 60)
        first = json.loads(place.lines[place.pending - 1])
        assert first["time_ms"] == 1000
        t.cond.wait_for(lambda: place.pending is not None and json.loads(place.lines[place.pending - 1])["type"] == "hello", 60)
    assert place.answer(json.dumps({"type": "action", "id": first["id"], "action": first["legal"][0]})) is not None  # too late
    assert place.answer(json.dumps({"type": "hello", "protocol": 1, "name": "p", "version": "1"})) is None
    with t.cond:  # deal 2 goes on with the new seat
        t.cond.wait_for(lambda: t.deal == 2, 60)
    t.stop("the test is over")
    t.thread.join(30)
    records = [json.loads(x) for x in t.log_path.read_text().splitlines()]
    deal1 = next(r for r in records if r["type"] == "deal")
    assert [(f["seat"], f["kind"]) for f in deal1["faults"]] == [(0, "timeout")]
    kinds = [json.loads(x)["type"] for x in place.lines]
    assert kinds[:4] == ["hello", "partie_start", "deal_start", "request"]
    assert kinds[4:7] == ["hello", "partie_start", "deal_start"]  # deal 2: the seat starts afresh, as a bot's process would


def test_marias_serve_on_a_taken_port_says_so_and_exits_2(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = CliRunner().invoke(cli, ["serve", str(tmp_path), "--port", str(port)])
    assert r.exit_code == 2, r.output
    assert f"port {port} on 127.0.0.1 is taken" in r.output and "--port" in r.output and "Errno" not in r.output


def test_the_index_lists_a_table_in_play_with_its_idle_time_and_a_persons_name_as_text(tmp_path):
    (tmp_path / "served").mkdir()
    app = create_app([tmp_path / "served"], play_dir=tmp_path / "served" / "plays", sandbox="none", table_idle_minutes=7)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        r = c.post("/play", data={"seat0": "you", "seat1": "person", "seat2": "random", "name": "<img src=x onerror=alert(1)>"},
                   headers={"origin": "http://127.0.0.1"}, follow_redirects=False)
        assert r.status_code == 303
        index = c.get("/").text
        listed = index.split("Tables in play")[1]
        assert "&lt;img src=x onerror=alert(1)&gt;" in listed and "<img" not in listed
        assert "free — an invited person" in listed and "not begun" in listed
        assert "for 7 minutes ends" in index
        status = c.get(r.headers["location"] + "/status").json()
        assert status["idle_minutes"] == 7 and status["seats"][0]["name"] == "<img src=x onerror=alert(1)>"
        c.post(r.headers["location"] + "/quit", headers={"origin": "http://127.0.0.1"})
        t = app.state.tables.get(r.headers["location"].split("/")[2])
        t.thread.join(30)
        assert t.state == "stopped" and "left the table" in t.reason
        assert "Tables in play" in c.get("/").text and t.id not in c.get("/").text


def test_an_open_seats_page_holds_no_worker_thread(server):
    """The server's worker threads serve every page: a seat's event stream, open for as long as the
    partie lasts, waits without one (16 tables of three people would otherwise take 48)."""
    ann = Person(server.url)
    r = ann.c.post("/play", data={"seat0": "you", "seat1": "random", "seat2": "random"}, follow_redirects=False)
    ann.seat_path = r.headers["location"]
    got: list[int] = []
    stop = threading.Event()

    def read():
        for event, _, _ in ann.events(0, lambda n: stop.is_set()):
            got.append(1)
            if stop.is_set():
                return

    readers = [threading.Thread(target=read, daemon=True) for _ in range(3)]
    for t in readers:
        t.start()
    deadline = time.monotonic() + 60
    while len(got) < 6 and time.monotonic() < deadline:  # each stream sent its lines and the table's state
        time.sleep(0.05)
    waiting = []
    for _ in range(5):
        frames = sys._current_frames().values()
        waiting += [f for top in frames for f in _stack(top) if f.f_code.co_name == "wait_lines"]
        time.sleep(0.1)
    stop.set()
    assert ann.post("/quit", {}).status_code == 200
    for t in readers:
        t.join(30)
    assert len(got) >= 6 and not waiting, f"{len(waiting)} worker thread(s) held by an open seat's stream"


def _stack(frame):
    while frame is not None:
        yield frame
        frame = frame.f_back
