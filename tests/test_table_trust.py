"""Issue 22, item 5: the tables trust only what the tournament recorded.  A unit's log counts
only while its SHA-256 is the one ``units.journal`` recorded when the unit was accepted: a log
replaced by a consistent forgery (its hash chain recomputed with the referee's own chain
function, so that it validates) is named, left out of `marias table` and of the database
`marias table --rebuild` makes, and the command exits 1 after printing the tables of the
other logs.  A match copied under two names counts once."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from referee.tournaments import results as R
from referee.tournaments import tournament as T
from referee.logs.log import read_log, sealed_lines, selfplay_log
from referee.logs.validate import validate_file

REPO = Path(__file__).resolve().parent.parent


def marias(*args):
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=600)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    out = tmp_path_factory.mktemp("trust") / "t"
    cfg = T.config_from_options(["a=random", "b=random", "robot=robot", "d=random"], seed="trust", output=str(out),
                                concurrency=2, arrangements="rotations", sandbox="none")
    assert T.run_tournament(cfg, check=False).complete
    return out


def totals_by_bot(logs) -> dict[str, int]:
    """Groše per bot straight from the logs' headers and footers (a reading independent of the tables)."""
    got: dict[str, int] = {}
    for p in logs:
        lines = p.read_text().splitlines()
        head, foot = json.loads(lines[0]), json.loads(lines[-1])
        for b, g in zip(head["bots"], foot["totals"]):
            got[b["label"]] = got.get(b["label"], 0) + g
    return got


def standings(stdout: str) -> dict[str, int]:
    return {r["bot"]: r["groše"] for r in json.loads(stdout)["standings"]}


def forge(log: Path) -> None:
    """Swap the robot's header entry with another seat's and recompute the chain: the partie is
    credited to other bots, and the forged log still validates (only a signature would tell)."""
    records, problems = read_log(log)
    assert not problems
    bots = records[0]["bots"]
    r = next(i for i, b in enumerate(bots) if b["label"] == "robot")
    o = next(i for i, b in enumerate(bots) if b["label"] != "robot")
    foot = records[-1]["totals"]
    assert foot[r] != foot[o]  # the swap moves groše
    for key in ("label", "fingerprint", "command", "name", "version"):
        bots[r][key], bots[o][key] = bots[o].get(key), bots[r].get(key)
    log.write_text("".join(line + "\n" for line in sealed_lines(records)))
    assert validate_file(log).ok  # a consistent forgery


def test_a_swapped_log_is_named_and_left_out_of_the_table_and_the_rebuilt_database(played, tmp_path):
    out = tmp_path / "t"
    shutil.copytree(played, out)
    logs = sorted((out / "logs").glob("*.jsonl"))
    before = marias("table", str(out), "--format", "json", "--table", "standings")
    assert before.returncode == 0 and standings(before.stdout) == totals_by_bot(logs)
    victim = next(p for p in logs if '"label":"robot"' in p.read_text().splitlines()[0])
    original = victim.read_bytes()
    journal_sha = T.journal(out)[victim.stem]["sha256"]
    honest = totals_by_bot(logs)
    forge(victim)
    others = [p for p in logs if p != victim]
    trusted = totals_by_bot(others)  # what the logs on record give
    forged = totals_by_bot(logs)  # what the forgery wanted
    assert forged["robot"] != honest["robot"]

    # from the database: the forged file is named, its partie left out, exit 1
    r = marias("table", str(out), "--format", "json", "--table", "standings")
    assert r.returncode == 1
    assert standings(r.stdout) == trusted
    assert f"error: {victim}: its SHA-256 is {R.file_sha256(victim)}, but units.journal recorded {journal_sha}" in r.stderr
    assert "1 log(s) left out of these tables" in r.stderr

    # --rebuild: the database is made from the logs on record only; the same table, exit 1
    r = marias("table", str(out), "--rebuild", "--format", "json", "--table", "standings")
    assert r.returncode == 1, r.stderr
    assert standings(r.stdout) == trusted
    assert f"{victim}: its SHA-256 is" in r.stderr and "rebuilt from" in r.stderr
    con = sqlite3.connect(out / R.DB_FILE)
    stored = {log: sha for log, sha in con.execute("SELECT log, sha256 FROM logs")}
    con.close()
    assert f"logs/{victim.name}" not in stored
    assert stored == {f"logs/{p.name}": R.file_sha256(p) for p in others}

    # the text table says it too, under the table
    r = marias("table", str(out), "--table", "standings")
    assert r.returncode == 1 and "1 log(s) LEFT OUT" in r.stdout

    # the original back: everything counts again (after a rebuild, the database too)
    victim.write_bytes(original)
    r = marias("table", str(out), "--rebuild", "--format", "json", "--table", "standings")
    assert r.returncode == 0 and standings(r.stdout) == standings(before.stdout), r.stderr


def test_a_log_not_on_record_is_left_out_with_a_note(played, tmp_path):
    out = tmp_path / "t"
    shutil.copytree(played, out)
    logs = sorted((out / "logs").glob("*.jsonl"))
    lines = (out / T.JOURNAL_FILE).read_text().splitlines(keepends=True)
    dropped = json.loads(lines[0])["id"]
    (out / T.JOURNAL_FILE).write_text("".join(lines[1:]))
    r = marias("table", str(out), "--rebuild", "--format", "json", "--table", "standings")
    assert r.returncode == 0, r.stderr
    assert f"{out / 'logs' / dropped}.jsonl: not recorded as done in units.journal" in r.stderr
    assert standings(r.stdout) == totals_by_bot([p for p in logs if p.stem != dropped])
    # running the tournament again accepts it by the full check, and records it
    cfg = T.config_from_options(["a=random", "b=random", "robot=robot", "d=random"], seed="trust", output=str(out),
                                concurrency=2, arrangements="rotations", sandbox="none")
    again = T.run_tournament(cfg, check=False)
    assert again.complete and again.played == 0
    assert T.journal(out)[dropped]["sha256"] == R.file_sha256(out / "logs" / f"{dropped}.jsonl")
    r = marias("table", str(out), "--format", "json", "--table", "standings")
    assert r.returncode == 0 and standings(r.stdout) == totals_by_bot(logs)


def test_a_match_copied_under_two_names_counts_once(tmp_path):
    import bots

    folder = tmp_path / "runs"
    log = folder / "m.jsonl"
    folder.mkdir()
    selfplay_log(log, [bots.make("random", seed=f"c{s}") for s in range(3)], seed="copy", fsync=False)
    shutil.copy(log, folder / "m-copy.jsonl")
    shutil.copy(log, folder / "sub-copy.jsonl")
    r = marias("table", str(folder))
    assert r.returncode == 0, r.stderr
    assert "1 partie from 1 log(s), 12 deals" in r.stdout
    assert f"{folder / 'm.jsonl'}: a copy of {folder / 'm-copy.jsonl'} (the same match" in r.stderr
    assert f"{folder / 'sub-copy.jsonl'}: a copy of {folder / 'm-copy.jsonl'}" in r.stderr
    # another match with the same seed is not a copy (its own created time, so its own final hash)
    selfplay_log(folder / "again.jsonl", [bots.make("random", seed=f"c{s}") for s in range(3)], seed="copy", fsync=False)
    r = marias("table", str(folder))
    assert "2 partie from 2 log(s)" in r.stdout
