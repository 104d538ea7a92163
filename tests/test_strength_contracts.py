"""``marias strength --by-contract``: who declared which game, and how it went."""

from __future__ import annotations

from typer.testing import CliRunner

from referee.cli import app
from referee.tools import strength


def test_every_deal_has_one_declaration_counted_for_its_declarer():
    report = strength.run(["robot", "robot", "random"], partie=3, seed="contracts")
    rows = report["contracts"]
    # R2: 12 deals a partie, each with one actor (no deal of an in-process table ends in a fault)
    assert sum(r["declared"] for r in rows) == 3 * 12
    assert {r["game"] for r in rows} <= set(strength.GAME_ORDER)
    for r in rows:
        assert 0 <= r["won"] <= r["declared"] and r["bot"] in ("robot#1", "robot#2", "random")
    # the random bot picks the talon's kind at random among barva, betl and durch (R3.2)
    # and loses nearly every betl and durch against robots: those it declared show it
    rnd = {r["game"]: r for r in rows if r["bot"] == "random"}
    nb = [rnd[g] for g in ("betl", "durch") if g in rnd]
    assert nb and sum(r["won"] for r in nb) < sum(r["declared"] for r in nb)


def test_the_table_is_printed_with_the_flag_and_kept_out_without_it():
    runner = CliRunner()
    args = ["strength", "-b", "robot", "-b", "robot", "-b", "random", "-n", "3", "--seed", "contracts", "-q"]
    plain = runner.invoke(app, args)
    flagged = runner.invoke(app, args + ["--by-contract"])
    assert plain.exit_code == 0 and flagged.exit_code == 0, flagged.output
    assert "declarations" not in plain.output
    assert "declarations" in flagged.output and "won %" in flagged.output and "betl" in flagged.output
