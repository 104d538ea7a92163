"""An event's folder read through one object (:class:`referee.tournaments.event.EventFolder`, issue 33):
its kind, its state (running, stopped, finished, decided), and files planted in it that must not hang
or crash a reader (a FIFO, JSON nested too deep)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from referee.tournaments.event import STATES, EventFolder
from referee.tournaments.folder import FolderLock, write_json
from referee.tournaments.sprt import H0, H1, TRUNCATED


def tournament_folder(tmp_path: Path, units: int = 2, done: int = 0, fmt: str = "round-robin") -> Path:
    out = tmp_path / "ev"
    (out / "logs").mkdir(parents=True)
    write_json(out / "tournament.json", {"format": "marias-tournament", "version": 1,
                                         "config": {"format": fmt, "seed": "s", "bots": []}})
    write_json(out / "manifest.json", {"format": "marias-tournament-manifest", "version": 1, "name": "ev",
                                       "units": [{"id": f"u{i}", "log": f"logs/u{i}.jsonl"} for i in range(units)]})
    with open(out / "units.journal", "w", encoding="utf-8") as f:
        for i in range(done):
            f.write(json.dumps({"id": f"u{i}", "status": "done", "sha256": "0" * 64,
                                "t": f"2026-12-01T10:0{i}:00Z"}) + "\n")
    return out


def test_a_folder_or_its_logs_is_the_event_and_anything_else_is_none(tmp_path):
    out = tournament_folder(tmp_path)
    assert EventFolder.at(out).path == out
    assert EventFolder.at(out / "logs").path == out
    assert EventFolder.at(tmp_path) is None
    assert EventFolder.at(out / "manifest.json") is None  # a file is no folder
    assert EventFolder(out).kind == "tournament" and not EventFolder(out).is_duel


def test_a_tournament_is_stopped_until_every_planned_unit_is_on_record_and_running_while_locked(tmp_path):
    out = tournament_folder(tmp_path, units=2, done=1)
    assert EventFolder(out).status()["state"] == "stopped"
    assert EventFolder(out).status() == {"state": "stopped", "total": 2, "done": 1, "eta_s": None}
    out2 = tournament_folder(tmp_path / "b", units=2, done=2)
    assert EventFolder(out2).status()["state"] == "finished"
    with FolderLock(out):
        s = EventFolder(out).status()
        assert s["state"] == "running"
        assert s["eta_s"] is None  # one unit on record: no pace yet
    with FolderLock(out2):
        assert EventFolder(out2).status(done=1)["state"] == "running"
    assert set(STATES) == {"running", "stopped", "finished", "decided"}


def test_a_running_tournament_estimates_what_is_left_from_its_pace(tmp_path):
    out = tournament_folder(tmp_path, units=4, done=2)  # two units a minute apart, two left
    with FolderLock(out):
        s = EventFolder(out).status()
    assert s == {"state": "running", "total": 4, "done": 2, "eta_s": 120}


def test_a_duel_is_decided_finished_or_stopped_by_its_test_and_running_while_locked(tmp_path):
    out = tournament_folder(tmp_path, units=0, fmt="head-to-head")
    ev = EventFolder(out)
    assert ev.is_duel and ev.kind == "duel"
    assert ev.status(decision=H1)["state"] == "decided"
    assert ev.status(decision=H0)["state"] == "decided"
    assert ev.status(decision=TRUNCATED)["state"] == "finished"
    assert ev.status(decision="continue")["state"] == "stopped"
    with FolderLock(out):
        assert EventFolder(out).status(decision=H1)["state"] == "running"


def _within(seconds: float, fn):
    """``fn()`` in a thread: its result or exception, or "hung" when it has not returned in ``seconds``
    (a bound on a hang, not a measure of speed)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except Exception as e:  # noqa: BLE001 - handed to the test
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    return "hung" if t.is_alive() else box


@pytest.mark.parametrize("name", ["tournament.json", "manifest.json", "units.journal"])
def test_a_fifo_planted_as_a_file_of_the_folder_is_refused_not_waited_on(tmp_path, name):
    out = tournament_folder(tmp_path, units=2, done=1)
    (out / name).unlink()
    os.mkfifo(out / name)
    got = _within(30, lambda: EventFolder(out).status())
    assert got != "hung"
    if name == "units.journal":  # no journal to read: nothing on record
        assert got["value"]["done"] == 0
    elif name == "manifest.json":
        assert got["value"]["total"] is None
    else:  # the state file: not a state, so not a duel; the manifest still plans two units
        assert got["value"]["total"] == 2
    if name == "tournament.json":
        with pytest.raises(ValueError, match="not a regular file"):
            EventFolder(out).state()


def test_json_nested_too_deep_is_a_value_error_naming_the_file(tmp_path):
    out = tournament_folder(tmp_path)
    (out / "tournament.json").write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match="tournament.json: not a tournament state file"):
        EventFolder(out).state()
    assert not EventFolder(out).is_duel
    (out / "manifest.json").write_text('{"units": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(ValueError, match="not a tournament manifest"):
        EventFolder(out).manifest()
