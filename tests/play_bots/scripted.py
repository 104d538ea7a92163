"""Predictable bots for the `marias play` tests (run as a protocol process).

    python scripted.py passive   # Barva? with the first discards offered, dobrá to everything, first legal card
    python scripted.py raiser    # as passive, but raises every component it may (never a game against)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol.sdk import Bot, run  # noqa: E402


class Scripted(Bot):
    version = "1"

    def __init__(self, mode: str):
        self.mode = mode
        self.name = mode

    def choose_talon(self, view, legal):
        return next((a for a in legal if a.startswith("barva:")), legal[0])

    def choose_answer(self, view, legal):
        return "dobra"

    def choose_flek(self, view, legal):
        if self.mode == "raiser":
            raises = [a for a in legal if a.startswith("flek:") and "proti" not in a]
            if raises:
                return max(raises, key=len)
        return "dobra"

    def choose(self, view, legal):
        return legal[0]


if __name__ == "__main__":
    run(Scripted(sys.argv[1]))
