"""``marias report FOLDER -o report.html``: the tournament page and its replayer as one file.

The page is the same template and the same scripts as ``marias serve``'s, with the CSS, the
JavaScript (uPlot included) and the data inlined: the tournament's data
(:func:`referee.web.tournament_data.tournament_data`), each log's data and every deal's replay
(:mod:`referee.web.log_data`) for up to ``max_logs`` logs, under the same keys the served pages
fetch them by.  It opens offline, from a file, with no server.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from .folders import Scrub
from .log_data import LogError, log_data, replay_data
from .tournament_data import tournament_data

HERE = Path(__file__).parent
SCRIPTS = ("uPlot.iife.min.js", "cards.js", "tournament.js", "log.js", "replay.js", "report.js")
STYLES = ("uPlot.min.css", "marias.css")


def _inline_json(obj) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def build(folder, *, max_logs: int = 50) -> str:
    """The report of a tournament or duel folder, as HTML text."""
    folder = Path(folder)
    tdata = tournament_data(folder)
    data: dict[str, object] = {}
    api = "/api/tournament/0/"
    data[api] = tdata
    logs = tdata["logs"][:max_logs]
    for rel in logs:
        path = folder / rel
        key = f"0/{rel}"
        try:
            ld = log_data(path, key)
        except (OSError, LogError):
            continue
        data[f"/api/log/{key}"] = ld
        for p in ld["parties"]:
            for d in p["deals"]:
                try:
                    data[f"/api/replay/{key}?partie={p['partie']}&deal={d['deal']}"] = replay_data(
                        path, key, p["partie"], d["deal"], rel)
                except LogError:
                    pass
    omitted = max(0, len(tdata["logs"]) - len(logs))
    env = Environment(loader=FileSystemLoader(str(HERE / "templates")), autoescape=select_autoescape(["html"]))
    css = "\n".join((HERE / "static" / n).read_text(encoding="utf-8") for n in STYLES)
    js = "\n;\n".join((HERE / "static" / n).read_text(encoding="utf-8") for n in SCRIPTS)
    js = js.replace("</script", "<\\/script")
    page = {"kind": "tournament", "root": 0, "rel": ".", "api": api, "events": None, "report": True,
            "omitted_logs": omitted}
    inline = {"css": css, "js": js, "data": Scrub([folder]).json(_inline_json({"data": data}).encode()).decode()}  # no path of this machine
    return env.get_template("report.html").render(title=f"{folder.name} (report)", page=page, inline=inline)


def write(folder, out, *, max_logs: int = 50) -> int:
    """Write the report to ``out`` (created afresh); its size in bytes."""
    text = build(folder, max_logs=max_logs)
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    return len(text.encode("utf-8"))
