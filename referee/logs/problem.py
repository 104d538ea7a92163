"""A problem found in a log or a transcript: where it is, the rule it breaks, and what is wrong."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Problem:
    line: int
    rule: str
    message: str
    path: str | None = None  # another file than the log (a transcript)

    def text(self, log_path: str) -> str:
        where = f"{self.path or log_path}:{self.line}" if self.line else f"{self.path or log_path}"
        return f"{where}: {self.rule}: {self.message}"

    def to_dict(self) -> dict:
        d = {"line": self.line, "rule": self.rule, "message": self.message}
        if self.path:
            d["file"] = self.path
        return d
