"""Shell completion as typer gives it (issue 25 point 9): `marias --install-completion` and
`marias --show-completion SHELL`, and the completions it offers are marias's commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_show_completion_prints_a_script_and_completes_the_commands():
    exe = Path(sys.executable).parent / "marias"  # the installed command: the script is named after it
    marias = [str(exe)] if exe.exists() else [sys.executable, "-m", "referee.cli"]
    help_text = subprocess.run([*marias, "--help"], capture_output=True, text=True, cwd=REPO, timeout=60).stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text
    script = subprocess.run([*marias, "--show-completion", "bash"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert script.returncode == 0 and "complete" in script.stdout and "_MARIAS_COMPLETE" in script.stdout.upper() or exe.exists() is False
    # what the script asks for: the completions of `marias du`
    env = {**os.environ, "_MARIAS_COMPLETE": "complete_bash", "COMP_WORDS": "marias du", "COMP_CWORD": "1"}
    got = subprocess.run([sys.executable, "-c", "from referee.cli import app; app(prog_name='marias')"],
                         capture_output=True, text=True, cwd=REPO, timeout=60, env=env)
    assert "duel" in got.stdout.split(), (got.stdout, got.stderr)
