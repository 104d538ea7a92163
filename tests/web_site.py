"""A served folder for the web pages' tests (issue 34), built once per test session: a match with a
bot whose every text is markup (tests/fault_bots/page_hostile.py: an illegal card in the middle of a
trick in deal 1, a malformed action of markup in deal 3, markup on stderr; robot lays its cards
down in deal 4), the same log under a file name of markup, a tournament of four bots with a secret
seed, and a duel of two identical bots (every group the same: an LLR of minus infinity).

Tests must not change it: those that plant files work on a copy.  (A browser on a log page asks
the server for the log's analysis, which is then cached beside the log in .marias-analysis/.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
MARIAS = [sys.executable, "-c", "from referee.cli import main; main()"]
HOSTILE = HERE / "fault_bots" / "page_hostile.py"
#: A file name a page must show as text.
MARKUP_NAME = "<img src=x onerror=window.__pwned=5>.jsonl"


@dataclass(frozen=True)
class Site:
    root: Path
    log: Path  # the match with the hostile bot in seat 1
    markup_log: Path  # the same log under a file name of markup
    tour: Path  # four built-in bots, one partie per table, a secret seed
    duel: Path  # random:1 against random:1: every group the same

    FAULT_MID_TRICK = (1, 1)  # (partie, deal)
    FAULT_MARKUP = (1, 3)
    LAID = (1, 4)


def marias(*args, cwd=None) -> subprocess.CompletedProcess:
    r = subprocess.run([*MARIAS, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    if r.returncode not in (0, 1):
        raise AssertionError(f"marias {' '.join(map(str, args))}: {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def build(root: Path) -> Site:
    root.mkdir(parents=True, exist_ok=True)
    marias("match", "-b", "robot", "-b", f"{sys.executable} {HOSTILE}", "-b", "robot", "--partie", "1", "--log", "logs",
           "--seed", "1", "--sandbox", "none", cwd=root)
    log = next((root / "logs").glob("match-*.jsonl"))
    other = root / "odd"
    other.mkdir()
    markup = other / MARKUP_NAME
    shutil.copyfile(log, markup)
    shutil.copyfile(log.with_name(log.name[:-6] + ".seat1.stderr.log"), other / (MARKUP_NAME[:-6] + ".seat1.stderr.log"))
    marias("tournament", "-b", "a=random:1", "-b", "b=random:2", "-b", "c=random:3", "-b", "r=robot", "--partie", "1",
           "--arrangements", "fixed", "--out", str(root / "tour"), "--concurrency", "2", "--sandbox", "none")
    marias("duel", "a=random:1", "b=random:1", "--max-groups", "3", "--seed", "5", "--out", str(root / "same"), "-j", "2",
           "--quiet")
    return Site(root, log, markup, root / "tour", root / "same")
