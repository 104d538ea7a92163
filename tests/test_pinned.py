"""``examples/pinned.py``: a built-in bot run from another checkout, as a duel against
an old version runs it (README, "The built-in bots")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PINNED = ROOT / "examples" / "pinned.py"


def test_the_bot_comes_from_the_checkout_named(tmp_path):
    # a copy of the checkout whose random bot says another name: the pinned run must answer with it
    copy = tmp_path / "old"
    shutil.copytree(ROOT / "bots", copy / "bots", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "protocol", copy / "protocol", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "referee", copy / "referee", ignore=shutil.ignore_patterns("__pycache__"))
    rb = copy / "bots" / "random_bot.py"
    rb.write_text(rb.read_text().replace('name = "random"', 'name = "random-old"'))
    assert "random-old" in rb.read_text()
    hello = json.dumps({"type": "hello", "protocol": 1}) + "\n" + json.dumps({"type": "bye"}) + "\n"
    out = subprocess.run([sys.executable, str(PINNED), str(copy), "random"], input=hello, capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[0])["name"] == "random-old"


def test_a_folder_that_is_no_checkout_is_refused_with_the_usage(tmp_path):
    out = subprocess.run([sys.executable, str(PINNED), str(tmp_path), "search"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0 and "usage: python examples/pinned.py CHECKOUT NAME" in out.stderr
