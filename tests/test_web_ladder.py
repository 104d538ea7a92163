"""A ladder in ``marias serve`` (issue 37.5, 37.6): its pages' data, the upload endpoint (a token, the
server's Origin, a capped body; a bot that builds, passes its check and is entered; one refused at each
step with what the author needs), an author's stderr (theirs, nobody else's), and the ladder's private
files never served.  Against the app in-process (starlette's TestClient); the uploads that build and
check run real processes in the sandbox."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

starlette = pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from referee.ladder import store  # noqa: E402
from referee.ladder import submissions as S  # noqa: E402
from referee.ladder.folder import SEATINGS, LadderFolder, unit_id  # noqa: E402
from referee.ladder.unpack import UnpackLimits  # noqa: E402
from referee.seats.sandbox import bwrap_status  # noqa: E402
from referee.web.app import create_app  # noqa: E402

ORIGIN = {"origin": "http://127.0.0.1"}
needs_bwrap = pytest.mark.skipif(bwrap_status()[0] is None, reason=f"no bubblewrap here: {bwrap_status()[1]}")

#: A whole bot in the standard library: hello, then the first legal action every time.
PLAYER = """import json, sys
for line in sys.stdin:
    m = json.loads(line)
    t = m.get("type")
    if t == "hello":
        print(json.dumps({"type": "hello", "protocol": 1, "name": "uploaded", "version": "1"}), flush=True)
    elif t == "request":
        print(json.dumps({"type": "action", "id": m["id"], "action": m["legal"][0]}), flush=True)
    elif t == "bye":
        break
"""


def archive(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755 if name.endswith(".sh") else 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def play_groups(lad: LadderFolder, ids, per_version, groups: int = 1) -> None:
    """Enter ``groups`` duplicate groups in which version i wins ``per_version[i]`` groše in each seating."""
    for _ in range(groups):
        with lad.db() as con:
            g = store.plan_group(con, store.next_table(con), tuple(ids))
            for s in SEATINGS:
                totals = [per_version[int(c)] for c in s]
                store.accept_unit(con, g, s, f"logs/{unit_id(g.n, s)}.jsonl", "0" * 64, totals, [0, 0, 0])


@pytest.fixture
def served(tmp_path):
    lad = LadderFolder.init(tmp_path / "served" / "season")
    app = create_app([tmp_path / "served"], play_dir=tmp_path / "plays", sandbox="none")
    return lad, TestClient(app, base_url="http://127.0.0.1")


def post(c: TestClient, body: bytes, token: str | None, headers=ORIGIN, **q):
    h = dict(headers)
    if token is not None:
        h["authorization"] = f"Bearer {token}"
    return c.post("/upload/ladder/0/season", params=q, content=body, headers=h)


# ------------------------------------------------------------------ the pages' data


def test_the_leaderboard_and_a_versions_history_and_games(served):
    lad, c = served
    ids = [lad.add(n, "random", check=False, author="eva") for n in ("strong", "middle", "weak")]
    play_groups(lad, ids, [12, 0, -12], groups=3)
    idx = c.get("/")
    assert 'href="/ladder/0/season"' in idx.text
    board = c.get("/api/ladder/0/season").json()
    assert [r["id"] for r in board["leaderboard"]] == ["strong@1", "middle@1", "weak@1"]  # won every group, in order
    top = board["leaderboard"][0]
    assert top["games"] == 18 and top["groups"] == 3 and top["low"] < top["rating"] < top["high"]
    assert top["pm"] == pytest.approx((top["high"] - top["low"]) / 2)
    assert board["counts"]["rated"] == 3 and board["counts"]["partie"] == 18
    v = c.get("/api/ladder/0/season", params={"version": "strong@1"}).json()
    assert [h["game"] for h in v["history"]] == [6, 12, 18]
    assert [h["rating"] for h in v["history"]] == sorted(h["rating"] for h in v["history"])  # a winner climbs
    assert len(v["games"]) == 18 and {g["groše"] for g in v["games"]} == {12}
    assert all(g["log"].startswith("logs/") and not g["replayable"] for g in v["games"])  # no log files were written
    # the pairs from this version's side: every group the same, so no spread (the interval is 0 wide)
    assert [(p["against"], p["groups"], p["diff"], p["pm"]) for p in v["pairs"]] == [("middle@1", 3, 12, 0), ("weak@1", 3, 24, 0)]
    w = c.get("/api/ladder/0/season", params={"version": "weak@1"}).json()
    assert [(p["against"], p["diff"]) for p in w["pairs"]] == [("middle@1", -12), ("strong@1", -24)]
    assert c.get("/api/ladder/0/season", params={"version": "nobody@1"}).status_code == 404
    for page in ("/ladder/0/season", "/ladder/0/season?version=strong@1"):
        r = c.get(page)
        assert r.status_code == 200 and "/static/ladder.js" in r.text
    assert c.get("/api/ladder/0/").status_code == 404  # the served folder itself is no ladder


def test_the_ladders_private_files_are_never_served(served, tmp_path):
    lad, c = served
    S.make_token(lad.path, "eva")
    (lad.path / "logs" / "g000001-s012.seat0.stderr.log").write_text("eva's stderr")
    up = lad.path / "uploads" / "u1" / "bot"
    up.mkdir(parents=True)
    (up / "steal.jsonl").symlink_to(lad.path / "seed.secret")  # what a build could leave behind
    (up / "own.jsonl").write_text("{}\n")
    (lad.path / "logs" / "x.jsonl").symlink_to(lad.path / "tokens.json")
    for rel in ("seed.secret", "tokens.json", "ladder.json", "ladder.sqlite", "uploads/u1/bot/steal.jsonl",
                "uploads/u1/bot/own.jsonl", "logs/g000001-s012.seat0.stderr.log", "logs/x.jsonl"):
        for route in ("/log/0/season/", "/api/log/0/season/", "/replay/0/season/", "/api/replay/0/season/"):
            r = c.get(route + rel)
            assert r.status_code == 403, (route + rel, r.status_code, r.text)
            assert lad.seed() not in r.text
    assert c.get("/tournament/0/season/uploads/u1/bot").status_code == 403


# ------------------------------------------------------------------ uploads: refused before anything runs


def test_an_upload_needs_a_valid_token_and_this_servers_origin(served):
    lad, c = served
    token = S.make_token(lad.path, "eva")
    body = archive({"bot.py": PLAYER})
    for bad in (None, "", "mlt_guessed", token + "x"):
        r = post(c, body, bad, name="up", command="python3 bot.py")
        assert r.status_code == 401 and r.json()["step"] == "token"
    S.revoke(lad.path, author="eva")
    assert post(c, body, token, name="up", command="python3 bot.py").status_code == 401
    token = S.make_token(lad.path, "eva")
    for headers in ({}, {"origin": "http://evil.example"}, {"origin": "http://127.0.0.1:8443"}, {"origin": "null"}):
        r = post(c, body, token, headers=headers, name="up", command="python3 bot.py")
        assert r.status_code == 403 and "Origin" in r.text
    assert not (lad.path / "uploads").exists()  # nothing was unpacked for any of them


def test_an_archive_over_the_cap_is_refused_while_it_streams(tmp_path):
    lad = LadderFolder.init(tmp_path / "served" / "season")
    token = S.make_token(lad.path, "eva")
    app = create_app([tmp_path / "served"], play_dir=tmp_path / "plays", sandbox="none")
    c = TestClient(app, base_url="http://127.0.0.1")
    cap = UnpackLimits().archive_bytes
    sent = []

    def chunks():  # no Content-Length: the server must count as it reads
        for _ in range(cap // 2**20 + 4):
            sent.append(1)
            yield b"\0" * 2**20

    r = c.post("/upload/ladder/0/season", params={"name": "big", "command": "x"}, content=chunks(),
               headers={**ORIGIN, "authorization": f"Bearer {token}"})
    assert r.status_code == 413 and r.json()["rule"] == "archive-size"
    r = c.post("/upload/ladder/0/season", params={"name": "big", "command": "x"}, content=b"x",
               headers={**ORIGIN, "authorization": f"Bearer {token}", "content-length": str(cap + 1)})
    assert r.status_code == 413
    assert not (lad.path / "uploads").exists()


def test_uploads_refused_with_the_step_and_the_rule(served):
    lad, c = served
    token = S.make_token(lad.path, "eva")
    other = S.make_token(lad.path, "jan")
    lad.add("taken", "random", check=False, author="jan")
    r = post(c, archive({"bot.py": PLAYER}), token, name="taken", command="python3 bot.py")
    assert r.status_code == 403 and r.json()["step"] == "name" and "another author" in r.json()["error"]
    r = post(c, archive({"bot.py": PLAYER}), other, name="taken", command="python3 bot.py", build="false")
    assert r.status_code == 422 and r.json()["step"] == "build"  # its owner may: on to the build, which fails
    lad.add("hosted", "random", check=False)  # added on the host, without an author: nobody's to upload to
    r = post(c, archive({"bot.py": PLAYER}), token, name="hosted", command="python3 bot.py")
    assert r.status_code == 403 and r.json()["step"] == "name"
    r = post(c, archive({"bot.py": PLAYER}), token, name="../x", command="python3 bot.py")
    assert r.status_code == 400 and r.json()["step"] == "name"
    r = post(c, archive({"bot.py": PLAYER}), token, name="ok", command="")
    assert r.status_code == 400 and "no command" in r.json()["error"]
    evil = io.BytesIO()
    with tarfile.open(fileobj=evil, mode="w:gz") as t:
        info = tarfile.TarInfo("../../escape.py")
        info.size = 1
        t.addfile(info, io.BytesIO(b"x"))
    r = post(c, evil.getvalue(), token, name="ok", command="python3 bot.py")
    d = r.json()
    assert r.status_code == 400 and d["step"] == "archive" and d["rule"] == "parent-path" and "'../../escape.py'" in d["error"]
    record = json.loads((lad.path / "uploads" / d["upload"] / "upload.json").read_text())
    assert record["state"] == "refused" and record["refused"]["rule"] == "parent-path" and record["author"] == "eva"
    assert not (lad.path / "uploads" / d["upload"] / "bot").exists()
    assert [v["id"] for v in lad.versions()] == ["taken@1", "hosted@1"]


def test_a_ladder_without_a_sandbox_takes_no_uploads(tmp_path):
    lad = LadderFolder.init(tmp_path / "served" / "season", sandbox="none")
    token = S.make_token(lad.path, "eva")
    c = TestClient(create_app([tmp_path / "served"], play_dir=tmp_path / "plays", sandbox="none"), base_url="http://127.0.0.1")
    r = post(c, archive({"bot.py": PLAYER}), token, name="up", command="python3 bot.py")
    assert r.status_code == 503 and r.json()["step"] == "sandbox"


# ------------------------------------------------------------------ uploads that run: built, checked, entered


@needs_bwrap
@pytest.mark.slow
def test_an_upload_is_built_in_the_sandbox_checked_and_entered_and_a_failing_one_gets_its_report(served):
    lad, c = served
    token = S.make_token(lad.path, "eva")
    files = {"src/player.py": PLAYER, "build.sh": "mkdir -p out && cp src/player.py out/bot.py && echo built-ok\n"}
    r = post(c, archive(files), token, name="uploaded", command="python3 out/bot.py", build="sh build.sh")
    d = r.json()
    assert r.status_code == 201 and d["ok"] and d["version"] == "uploaded@1" and "built-ok" in d["build_output"], d
    v = lad.version("uploaded@1")
    assert v["author"] == "eva" and v["status"] == "active" and v["command"] == "python3 out/bot.py"
    assert Path(v["cwd"]) == (lad.path / "uploads" / d["upload"] / "bot").resolve()
    assert (Path(v["cwd"]) / "out" / "bot.py").read_text() == PLAYER
    assert "built-ok" in (lad.path / "uploads" / d["upload"] / "build.log").read_text()
    # a build that fails: its output is the author's answer
    r = post(c, archive({"bot.py": PLAYER}), token, name="uploaded", command="python3 bot.py",
             build="sh -c 'echo compiling; echo fatal: missing header >&2; exit 2'")
    d = r.json()
    assert r.status_code == 422 and d["step"] == "build" and "status 2" in d["error"] and "fatal: missing header" in d["output"]
    # a bot that builds but does not play: refused with the check's report
    r = post(c, archive({"bot.py": "import sys\nsys.stdin.readline()\nprint('not json', flush=True)\n"}), token,
             name="uploaded", command="python3 bot.py")
    d = r.json()
    assert r.status_code == 422 and d["step"] == "check" and "marias check" in d["error"]
    assert "FAIL    starts and answers hello" in d["output"] and "every line on stdout must be one JSON object" in d["output"]
    assert [x["id"] for x in lad.versions()] == ["uploaded@1"]
    states = sorted(json.loads(p.read_text())["state"] for p in (lad.path / "uploads").glob("*/upload.json"))
    assert states == ["entered", "refused", "refused"]


# ------------------------------------------------------------------ an author's stderr


def test_an_author_sees_their_own_stderr_and_nobody_elses(served):
    lad, c = served
    eva, jan = S.make_token(lad.path, "eva"), S.make_token(lad.path, "jan")
    ids = [lad.add("evabot", "random", check=False, author="eva"), lad.add("janbot", "random", check=False, author="jan"),
           lad.add("hostbot", "random", check=False)]
    play_groups(lad, ids, [3, -1, -2])
    for g in lad.games("evabot@1"):
        (lad.path / "logs" / f"{g['id']}.seat{g['seat']}.stderr.log").write_text(f"eva secret {g['id']}\n")
    for g in lad.games("janbot@1"):
        (lad.path / "logs" / f"{g['id']}.seat{g['seat']}.stderr.log").write_text(f"jan secret {g['id']}\n")

    def get(version, token):
        h = {"authorization": f"Bearer {token}"} if token else {}
        return c.get("/api/ladder-stderr/0/season", params={"version": version}, headers=h)

    r = get("evabot@1", eva)
    assert r.status_code == 200
    got = r.json()["files"]
    assert len(got) == 6 and all(f["text"].startswith("eva secret ") for f in got)
    assert all(f["file"].startswith("logs/") and not f["file"].startswith("/") for f in got)
    for version, token, status in (("janbot@1", eva, 403), ("evabot@1", jan, 403), ("hostbot@1", eva, 403),
                                   ("evabot@1", None, 401), ("evabot@1", "mlt_x", 401), ("nobody@1", eva, 404)):
        r = get(version, token)
        assert r.status_code == status, (version, status, r.text)
        assert "secret" not in r.text
    assert "jan secret" in get("janbot@1", jan).text


def test_an_old_gzipped_log_still_shows_and_replays_and_a_bomb_is_refused(tmp_path):
    import gzip
    import time

    from referee.ladder.archive import compress_old
    from referee.tools.bench import write_random_log

    lad = LadderFolder.init(tmp_path / "served" / "season")
    ids = [lad.add(n, "random", check=False) for n in ("a", "b", "c")]
    play_groups(lad, ids, [1, 0, -1])
    game = lad.games("a@1")[0]
    write_random_log(lad.path / game["log"], deals=12)
    c = TestClient(create_app([tmp_path / "served"], play_dir=tmp_path / "plays", sandbox="none", max_bytes=2**20),
                   base_url="http://127.0.0.1")
    before = c.get(f"/api/replay/0/season/{game['log']}", params={"partie": 1, "deal": 3}).json()
    with lad.db() as con:
        assert compress_old(con, lad.path, hours=0, now=time.time() + 60) == 1
    gz = lad.games("a@1")[0]["log"]
    assert gz == game["log"] + ".gz" and not (lad.path / game["log"]).exists()
    listed = c.get("/api/ladder/0/season", params={"version": "a@1"}).json()["games"]
    assert [g["replayable"] for g in listed if g["id"] == game["id"]] == [True]
    assert c.get(f"/log/0/season/{gz}").status_code == 200
    after = c.get(f"/api/replay/0/season/{gz}", params={"partie": 1, "deal": 3}).json()
    assert after["hands"] == before["hands"] and after["steps"] == before["steps"]
    assert "marias-serve-logs" not in json.dumps(after)  # the decompressed copy's path is not told
    with gzip.open(lad.path / "logs" / "bomb.jsonl.gz", "wb") as f:
        f.write(b"\n" * (3 * 2**20))  # 3 MB of nothing, over the 1 MB served
    assert c.get("/api/log/0/season/logs/bomb.jsonl.gz").status_code == 413
    (lad.path / "logs" / "x.seat0.stderr.log.gz").write_bytes(gzip.compress(b"secret"))
    assert c.get("/api/log/0/season/logs/x.seat0.stderr.log.gz").status_code == 403


def test_serving_the_ladder_folder_itself(tmp_path):
    lad = LadderFolder.init(tmp_path / "season")
    ids = [lad.add(n, "random", check=False) for n in ("a", "b", "c")]
    play_groups(lad, ids, [1, 0, -1])
    c = TestClient(create_app([lad.path], play_dir=tmp_path / "plays", sandbox="none"), base_url="http://127.0.0.1")
    assert 'href="/ladder/0/"' in c.get("/").text
    assert c.get("/ladder/0/").status_code == 200
    assert [r["id"] for r in c.get("/api/ladder/0/").json()["leaderboard"]] == ["a@1", "b@1", "c@1"]
    assert c.get("/api/ladder/0/", params={"version": "b@1"}).json()["history"][0]["game"] == 6
    assert c.get("/log/0/seed.secret").status_code == 403
