"""``marias … --help`` is pinned: the text of every command's help, as it was before the
command line was split into modules by command group (issue 33), is kept in
``tests/data/cli_help/`` and must come out the same.  A change to a command's options or
wording changes its file on purpose: write them again with
``python tests/test_cli_help.py --write`` and read the diff before committing it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app

HELP_DIR = Path(__file__).parent / "data" / "cli_help"
#: a fixed terminal: the width rich lays the help out in, no colour
ENV = {"COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1"}


def commands() -> list[tuple[str, ...]]:
    """Every command line whose help is pinned: the top level, each command, each bench command."""
    import typer.main

    group = typer.main.get_command(app)
    out: list[tuple[str, ...]] = [()]
    for name, cmd in group.commands.items():
        out.append((name,))
        for sub in getattr(cmd, "commands", {}):
            out.append((name, sub))
    return out


def help_text(argv: tuple[str, ...]) -> str:
    r = CliRunner().invoke(app, [*argv, "--help"], env=ENV, prog_name="marias")
    assert r.exit_code == 0, r.output
    return r.output


def file_of(argv: tuple[str, ...]) -> Path:
    return HELP_DIR / ("-".join(("marias", *argv)) + ".txt")


def test_every_command_has_a_pinned_help_and_no_pinned_help_lost_its_command():
    pinned = {p.name for p in HELP_DIR.glob("*.txt")}
    now = {file_of(argv).name for argv in commands()}
    assert now == pinned


@pytest.mark.parametrize("argv", commands(), ids=lambda a: " ".join(("marias", *a)))
def test_help_is_what_it_was(argv):
    assert help_text(argv) == file_of(argv).read_text(encoding="utf-8")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    HELP_DIR.mkdir(parents=True, exist_ok=True)
    for argv in commands():
        file_of(argv).write_text(help_text(argv), encoding="utf-8")
    print(f"wrote {len(commands())} files in {HELP_DIR}")
