"""The architecture is checked, not only drawn: the import-linter contracts in pyproject.toml
(the layers of referee/, no circles, the bots on rules and protocol only) hold for the code,
and fail for a deliberately added upward import; no module takes another's private name."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("referee", "protocol", "bots")


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_contracts_hold():
    r = lint_imports(ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout and "KEPT" in r.stdout


def _copy(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for name in PACKAGES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.json", "*.md"))
    return tmp_path


def test_an_upward_import_breaks_the_layers_contract(tmp_path):
    root = _copy(tmp_path)
    cards = root / "referee" / "rules" / "cards.py"
    cards.write_text(cards.read_text() + "\nfrom ..logs import log  # the engine reaching up into the logs\n")
    r = lint_imports(root)
    assert r.returncode != 0
    assert "each layer imports only the layers below it BROKEN" in r.stdout
    assert "referee.rules.cards -> referee.logs.log" in r.stdout


def test_a_circle_and_a_bot_reaching_into_the_referee_break_their_contracts(tmp_path):
    root = _copy(tmp_path)
    seal = root / "referee" / "logs" / "seal.py"
    seal.write_text(seal.read_text() + "\nfrom . import log  # log imports seal: a circle\n")
    robot = root / "bots" / "robot.py"
    robot.write_text(robot.read_text() + "\nfrom referee.matches import match  # a bot must not drive the referee\n")
    r = lint_imports(root)
    assert r.returncode != 0
    assert "no circles among the modules of a package BROKEN" in r.stdout
    assert "bots play on the rules and the protocol only BROKEN" in r.stdout


def private_imports() -> list[str]:
    """Every ``from X import _name`` and ``module._name`` across modules of the project."""
    found = []
    for path in sorted(p for name in PACKAGES for p in (ROOT / name).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {'.' * node.level}{node.module or ''} import {a.name}")
            elif (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                  and isinstance(node.value, ast.Name) and node.value.id in aliases):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_takes_another_modules_private_names():
    assert private_imports() == []


def test_a_group_of_commands_reaching_into_another_breaks_the_cli_contract(tmp_path):
    root = _copy(tmp_path)
    people = root / "referee" / "cli" / "people.py"
    people.write_text(people.read_text() + "\nfrom .events import TABLE_FORMAT_HELP  # a group leaning on another\n")
    r = lint_imports(root)
    assert r.returncode != 0
    assert "cli: each group of commands stands alone on the shared options BROKEN" in r.stdout
    assert "referee.cli.people -> referee.cli.events" in r.stdout


def test_the_event_folders_reader_reaching_up_into_a_runner_breaks_the_tournaments_contract(tmp_path):
    root = _copy(tmp_path)
    event = root / "referee" / "tournaments" / "event.py"
    event.write_text(event.read_text() + "\nfrom . import tournament  # the reader leaning on the runner\n")
    r = lint_imports(root)
    assert r.returncode != 0
    assert "tournaments: the runners over the event folder's reader over the files it reads BROKEN" in r.stdout
    assert "referee.tournaments.event -> referee.tournaments.tournament" in r.stdout


def test_the_ladder_folder_reaching_up_into_its_runner_or_the_web_breaks_the_contracts(tmp_path):
    root = _copy(tmp_path)
    folder = root / "referee" / "ladder" / "folder.py"
    folder.write_text(folder.read_text() + "\nfrom . import run  # the data API leaning on the runner\n")
    tools = root / "referee" / "tools" / "check.py"
    tools.write_text(tools.read_text() + "\nfrom ..ladder import folder  # a bot author's tool leaning on the ladder\n")
    r = lint_imports(root)
    assert r.returncode != 0
    assert "ladder: the runner over the store over the folder over the ratings BROKEN" in r.stdout
    assert "referee.ladder.folder -> referee.ladder.run" in r.stdout
    assert "referee: each layer imports only the layers below it BROKEN" in r.stdout
    assert "referee.tools.check -> referee.ladder.folder" in r.stdout
