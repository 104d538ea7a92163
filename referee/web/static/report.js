/* marias report: one file, no server: the tournament page, a log, or a deal's replay, by the address's #.
   Each log's data and replays are in the file deflated and in base64 (referee/web/report.py); a log is
   inflated when it is first opened, with the browser's own DecompressionStream. */
"use strict";
(function () {
  if (!M.report) return;
  const R = M.report;
  const show = (id) => ["tournament", "log", "replay"].forEach((x) => { document.getElementById(x).hidden = x !== id; });
  const inflated = new Map();

  function notHere(what) {
    return new Error(what + ": not in this report" + (R.max_logs !== null && R.max_logs !== undefined
      ? " (marias report --max-logs " + R.max_logs + " left it out: make the report without --max-logs to have every log)" : ""));
  }

  async function inflate(b64) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"))).text();
    return JSON.parse(text);
  }

  function logOf(key) {
    if (!R.logs || !(key in R.logs)) return Promise.reject(notHere(key.replace(/^0\//, "")));
    if (!inflated.has(key)) inflated.set(key, inflate(R.logs[key]));
    return inflated.get(key);
  }

  /* The served pages' addresses, answered from the file. */
  M.load = async function (url) {
    if (url in R.data) return R.data[url];
    let m = url.match(/^\/api\/log\/(.*)$/);
    if (m) return (await logOf(m[1])).log;
    m = url.match(/^\/api\/replay\/([^?]*)\?partie=(\d+)&deal=(\d+)/);
    if (m) {
      const r = (await logOf(m[1])).replays[m[2] + "/" + m[3]];
      if (!r) throw new Error(m[1].replace(/^0\//, "") + ": partie " + m[2] + " deal " + m[3] + " cannot be replayed (see the log page)");
      return r;
    }
    throw notHere(url);
  };

  let replayer = null;
  let routed = 0; // a route that finishes after a newer one started draws nothing
  async function route() {
    const mine = ++routed;
    if (replayer) { replayer.destroy(); replayer = null; }
    const h = decodeURIComponent(location.hash.slice(1));
    try {
      if (h.startsWith("log:")) {
        const key = h.slice(4);
        show("log");
        document.getElementById("parties").replaceChildren();
        document.getElementById("loghead").replaceChildren(M.el("p", { class: "muted" }, "opening…"));
        const data = await M.load("/api/log/" + key);
        if (mine !== routed) return;
        M.renderLog(data, document.getElementById("loghead"), document.getElementById("parties"),
                    (p, d) => "#replay:" + key + "?partie=" + p + "&deal=" + d);
      } else if (h.startsWith("replay:")) {
        const rest = h.slice(7), key = rest.split("?")[0], query = rest.slice(key.length);
        const q = new URLSearchParams(query);
        const partie = Number(q.get("partie")), deal = Number(q.get("deal"));
        show("replay");
        const log = await M.load("/api/log/" + key);
        const data = await M.load("/api/replay/" + key + "?partie=" + partie + "&deal=" + deal);
        if (mine !== routed) return;
        const list = [];
        for (const p of log.parties) for (const x of p.deals) list.push([p.partie, x.deal]);
        const k = list.findIndex(([p, x]) => p === partie && x === deal);
        const url = (e) => (e ? "#replay:" + key + "?partie=" + e[0] + "&deal=" + e[1] : null);
        const at = M.replayPosition(query);
        replayer = new M.Replayer(data, document.getElementById("replay"), { prev: url(list[k - 1]), next: url(list[k + 1]), log: "#log:" + key }, {
          step: at.step, seat: at.seat,
          onMove: (i, who) => history.replaceState(null, "", "#replay:" + key + M.replayQuery(partie, deal, i, who)),
        });
      } else {
        show("tournament");
        M.reportBot = h.startsWith("bot:") ? h.slice(4) : null;
        if (M.renderEventLogs) M.renderEventLogs(M.reportBot);
        if (M.reportBot) setTimeout(() => document.getElementById("logs-title").scrollIntoView(), 0); // once the page is drawn
        return;
      }
    } catch (e) {
      if (mine !== routed) return;
      const where = h.startsWith("log:") ? "loghead" : "replay";
      show(where === "loghead" ? "log" : "replay");
      M.fail(document.getElementById(where), e);
    }
    window.scrollTo(0, 0);
  }
  window.addEventListener("hashchange", route);
  route();
})();
