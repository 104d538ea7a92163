"""The results database (referee/tournaments/results.py): a tournament stores one row per accepted partie;
`marias table` reads it and prints what the logs give; --rebuild recreates it from the logs; a
resume keeps rows only for logs that exist with the same hash."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from referee.tournaments import results as R
from referee.tournaments import standings as S
from referee.tournaments import tournament as T

REPO = Path(__file__).resolve().parent.parent


def marias(*args, **kw):
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True,
                          cwd=kw.pop("cwd", REPO), timeout=kw.pop("timeout", 300), **kw)


def run(out: Path, seed: str = "db", *extra):
    cfg = T.config_from_options(["a=random", "b=random", "c=robot", "d=random"], seed=seed, output=str(out),
                                concurrency=2, arrangements="rotations", sandbox="none")
    return T.run_tournament(cfg, check=False)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    out = tmp_path_factory.mktemp("res") / "t"
    r = run(out)
    assert r.complete
    return out


def footer_totals(out: Path) -> dict[str, int]:
    """Groše per bot summed straight from the logs' headers and footers (a second, simple reading)."""
    got: dict[str, int] = {}
    for p in (out / "logs").glob("*.jsonl"):
        lines = p.read_text().splitlines()
        head, foot = json.loads(lines[0]), json.loads(lines[-1])
        for b, g in zip(head["bots"], foot["totals"]):
            got[b["label"]] = got.get(b["label"], 0) + g
    return got


def test_every_accepted_partie_has_a_row(played):
    con = sqlite3.connect(played / R.DB_FILE)
    logs = sorted(p.name for p in (played / "logs").glob("*.jsonl"))
    assert sorted(Path(x).name for (x,) in con.execute("SELECT log FROM partie")) == logs  # one partie per unit
    rows = con.execute("SELECT bot0, bot1, bot2, groše0, groše1, groše2 FROM partie").fetchall()
    con.close()
    by_bot: dict[str, int] = {}
    for r in rows:
        assert sum(r[3:]) == 0
        for b, g in zip(r[:3], r[3:]):
            by_bot[b] = by_bot.get(b, 0) + g
    assert by_bot == footer_totals(played)
    con = R.connect(played / R.DB_FILE)
    stored = R.stored_logs(con)
    con.close()
    for log, (sha, size) in stored.items():
        assert R.file_sha256(played / log) == sha and (played / log).stat().st_size == size


def test_the_table_from_the_database_is_the_table_from_the_logs(played, tmp_path):
    from_db, notes, t = S.report([played], fmt="json", series=2)
    assert notes == [] and len(t.parties) == len(list((played / "logs").glob("*.jsonl")))
    # the same logs, without a database (copied to a plain folder): read and summarized from the logs
    plain = tmp_path / "plain"
    plain.mkdir()
    for p in (played / "logs").glob("*.jsonl"):
        (plain / p.name).write_bytes(p.read_bytes())
    from_logs, _, _ = S.report([plain], fmt="json", series=2)
    assert json.loads(from_db) == json.loads(from_logs)
    body = json.loads(from_db)
    assert {r["bot"]: r["groše"] for r in body["standings"]} == footer_totals(played)
    cli = marias("table", str(played), "--format", "json", "--series", "2")
    assert cli.returncode == 0
    got = json.loads(cli.stdout)
    assert got.pop("decks") in ("public seed", "secret seed") and got == body  # the CLI adds the decks (issue 22)


def test_rebuild_recreates_it_from_valid_logs_only(played, tmp_path):
    import shutil

    out = tmp_path / "t"
    shutil.copytree(played, out)
    before = json.loads(S.report([out], fmt="json")[0])
    (out / R.DB_FILE).unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(out / R.DB_FILE) + suffix).unlink(missing_ok=True)
    # without a database the folder is read from its logs
    assert json.loads(S.report([out], fmt="json")[0]) == before
    # a changed log: --rebuild leaves it out (it does not validate) and says so
    bad = sorted((out / "logs").glob("*.jsonl"))[0]
    lines = bad.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('"partie":1', '"partie":7', 1)
    bad.write_text("".join(lines))
    # not the log the journal recorded: left out as changed, exit 1 (tests/test_table_trust.py)
    r = marias("table", str(out), "--rebuild", "--format", "json", "--table", "standings")
    assert r.returncode == 1 and f"{bad}: its SHA-256 is" in r.stderr, r.stderr
    # on record (as if the tournament had accepted it) but invalid: left out as invalid
    with open(out / T.JOURNAL_FILE, "a") as f:
        f.write(json.dumps({"id": bad.stem, "status": "done", "sha256": R.file_sha256(bad)}) + "\n")
    r = marias("table", str(out), "--rebuild", "--format", "json", "--table", "standings")
    assert r.returncode == 0, r.stderr
    assert f"{bad}: does not validate" in r.stderr and "rebuilt from" in r.stderr
    n = sqlite3.connect(out / R.DB_FILE).execute("SELECT COUNT(*) FROM partie").fetchone()[0]
    assert n == len(list((out / "logs").glob("*.jsonl"))) - 1
    assert sum(row["partie"] for row in json.loads(r.stdout)["standings"]) == 3 * n


def test_a_resume_trusts_rows_only_for_logs_with_the_same_hash(played, tmp_path):
    import shutil

    out = tmp_path / "t"
    shutil.copytree(played, out)
    con = R.connect(out / R.DB_FILE)
    # a row whose hash is not its log's, and a log whose rows are missing
    first, second = sorted(R.stored_logs(con))[:2]
    con.execute("UPDATE partie SET groše0 = groše0 + 1000 WHERE log=?", (first,))
    con.execute("UPDATE logs SET sha256='0' WHERE log=?", (first,))
    con.execute("DELETE FROM logs WHERE log=?", (second,))
    con.execute("INSERT INTO logs VALUES ('logs/gone.jsonl', 'x', 1, 'none', 1, 12)")
    con.commit()
    con.close()
    again = run(out)
    assert again.complete and again.played == 0
    con = R.connect(out / R.DB_FILE)
    assert sorted(R.stored_logs(con)) == sorted(f"logs/{p.name}" for p in (out / "logs").glob("*.jsonl"))
    con.close()
    body = json.loads(S.report([out], fmt="json")[0])
    assert {r["bot"]: r["groše"] for r in body["standings"]} == footer_totals(out)


def test_summaries_from_db_rows_round_trip(played):
    con = R.connect(played / R.DB_FILE)
    from_db = list(R.iter_summaries(con, played))
    con.close()
    from_logs = []
    for p in sorted((played / "logs").glob("*.jsonl")):
        from referee.logs.log import read_log
        from_logs.extend(R.summaries_of_log(p, read_log(p)[0], source=str(p)))
    assert from_db == from_logs


# ------------------------------------------------------------------ validate streams its file

from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"{}", b"", b"  ", b"\xff\xfe", "{\"a\":\"č\"}".encode(), b"x"]), max_size=6),
       st.booleans())
def test_streamed_lines_are_the_split_lines(parts, newline_at_end):
    """stream_lines (line by line) gives what split_lines (the whole file at once) gives, line for line,
    compared as the same bytes (split_lines turns every line into bytes when one is not UTF-8)."""
    import tempfile

    from referee.logs.log import split_lines, stream_lines

    data = b"\n".join(parts) + (b"\n" if newline_at_end and parts else b"")
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(data)
    try:
        lines, ends = split_lines(f.name)
        got = list(stream_lines(f.name))
    finally:
        Path(f.name).unlink()
    as_bytes = lambda x: x if isinstance(x, bytes) else x.encode()  # noqa: E731
    assert [as_bytes(raw) for _n, raw, _l, _e in got] == [as_bytes(x) for x in lines]
    assert [n for n, *_ in got] == list(range(1, len(lines) + 1))
    if got:
        assert [last for *_, last, _e in got] == [False] * (len(lines) - 1) + [True]
        assert got[-1][3] == ends


def test_validate_reports_the_same_on_a_streamed_file(tmp_path):
    """The chain and the truncated last line are still found (the file streamed, not held)."""
    from referee.logs.log import selfplay_log
    from referee.logs.validate import validate_file
    import bots

    log = tmp_path / "m.jsonl"
    selfplay_log(log, [bots.make("random", seed=f"v{s}") for s in range(3)], seed="v", fsync=False)
    assert validate_file(log).ok
    lines = log.read_bytes().split(b"\n")
    swapped = lines[:]
    swapped[2], swapped[3] = swapped[3], swapped[2]
    log.write_bytes(b"\n".join(swapped))
    assert any(p.rule == "seal" and p.line == 3 for p in validate_file(log).problems)
    log.write_bytes(b"\n".join(lines[:-1])[:-10])  # cut inside the last record, no newline
    rep = validate_file(log)
    assert not rep.complete and any("truncated last line" in p.message for p in rep.problems)
