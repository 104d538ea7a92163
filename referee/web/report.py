"""``marias report FOLDER -o report.html``: the tournament page and its replayer as one file.

The page is the same template and the same scripts as ``marias serve``'s, with the CSS, the
JavaScript (uPlot included) and the data inlined: the tournament's data
(:func:`referee.web.tournament_data.tournament_data`) as JSON, and for every log it lists (or
the first ``max_logs``) the log's data and every deal's replay (:mod:`referee.web.log_data`)
as one JSON document per log, compressed with zlib's deflate and written in base64: the page
inflates a log when it is opened, with the browser's own ``DecompressionStream`` (no library).
A replay's views repeat from step to step, so deflate takes them to about a tenth: a
tournament of 120 partie (1,440 deals) makes a file of about 2 MB.  A log left out by
``max_logs`` is listed as not in the report.  It opens offline, from a file, with no server.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from pathlib import Path

import orjson
from jinja2 import Environment, FileSystemLoader, select_autoescape

from .folders import Scrub
from .log_data import LogError, log_data, replay_data
from .tournament_data import for_page, tournament_data

HERE = Path(__file__).parent
SCRIPTS = ("uPlot.iife.min.js", "cards.js", "tournament.js", "log.js", "replay.js", "report.js")
STYLES = ("uPlot.min.css", "marias.css")


def _inline_json(obj) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def packed_log(folder: Path, rel: str, scrub: Scrub) -> str:
    """One log's page data and the replay of each of its deals (keyed ``PARTIE/DEAL``), as JSON
    deflated (zlib) and written in base64: what the report's page inflates when the log is opened."""
    path = folder / rel
    key = f"0/{rel}"
    ld = log_data(path, key)
    replays = {}
    for p in ld["parties"]:
        for d in p["deals"]:
            try:
                replays[f"{p['partie']}/{d['deal']}"] = replay_data(path, key, p["partie"], d["deal"], rel, folder)
            except LogError:
                pass  # the log page says what is wrong with that deal; its replay link says it is missing
    raw = scrub.json(orjson.dumps({"log": ld, "replays": replays}, option=orjson.OPT_NON_STR_KEYS))
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def build(folder, *, max_logs: int | None = None) -> str:
    """The report of a tournament or duel folder, as HTML text: every log it lists replayable
    (the first ``max_logs`` when given)."""
    folder = Path(folder)
    scrub = Scrub([folder])  # no path of this machine
    tdata = for_page(tournament_data(folder))
    api = "/api/tournament/0/"
    listed = [e[0] for e in tdata["logs"]]
    logs: dict[str, str] = {}
    for rel in listed if max_logs is None else listed[:max_logs]:
        try:
            logs[f"0/{rel}"] = packed_log(folder, rel, scrub)
        except (OSError, LogError):
            continue  # listed as not in the report
    env = Environment(loader=FileSystemLoader(str(HERE / "templates")), autoescape=select_autoescape(["html"]))
    css = "\n".join((HERE / "static" / n).read_text(encoding="utf-8") for n in STYLES)
    js = "\n;\n".join((HERE / "static" / n).read_text(encoding="utf-8") for n in SCRIPTS)
    js = js.replace("</script", "<\\/script")
    page = {"kind": "tournament", "root": 0, "rel": ".", "api": api, "events": None, "report": True,
            "embedded_logs": len(logs), "omitted_logs": len(listed) - len(logs)}
    body = {"data": {api: json.loads(scrub.json(json.dumps(tdata, ensure_ascii=False).encode()))}, "logs": logs,
            "max_logs": max_logs}
    inline = {"css": css, "js": js, "data": _inline_json(body)}
    return env.get_template("report.html").render(title=f"{folder.name} (report)", page=page, inline=inline)


def write(folder, out, *, max_logs: int | None = None) -> int:
    """Write the report to ``out`` (created afresh); its size in bytes."""
    text = build(folder, max_logs=max_logs)
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    return len(text.encode("utf-8"))
