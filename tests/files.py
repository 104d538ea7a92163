"""Reading files that another process may still be writing.

A log or journal line is written whole and ends with a newline, but a reader that
looks while the writer is at work can see a line cut short. Only the lines up to
the last newline are finished; the rest is still being written.
"""

from __future__ import annotations

import json
from pathlib import Path


def written_lines(path: Path) -> list[str]:
    """The lines of ``path`` its writer has finished (each ended by a newline)."""
    text = path.read_text(encoding="utf-8")
    return [line for line in text[: text.rfind("\n") + 1].splitlines() if line.strip()]


def written_records(path: Path) -> list[dict]:
    """The JSON records on the finished lines of ``path``."""
    return [json.loads(line) for line in written_lines(path)]
