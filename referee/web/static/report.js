/* marias report: one file, no server: the tournament page, a log, or a deal's replay, by the address's #. */
"use strict";
(function () {
  if (!M.report) return;
  const show = (id) => ["tournament", "log", "replay"].forEach((x) => { document.getElementById(x).hidden = x !== id; });
  let replayer = null;
  function route() {
    if (replayer) { replayer.destroy(); replayer = null; }
    const h = decodeURIComponent(location.hash.slice(1));
    try {
      if (h.startsWith("log:")) {
        const key = h.slice(4);
        show("log");
        M.renderLog(M.report.data["/api/log/" + key], document.getElementById("loghead"), document.getElementById("parties"),
                    (p, d) => "#replay:" + key + "?partie=" + p + "&deal=" + d);
      } else if (h.startsWith("replay:")) {
        const rest = h.slice(7), key = rest.split("?")[0];
        show("replay");
        const log = M.report.data["/api/log/" + key];
        const list = [];
        for (const p of log.parties) for (const x of p.deals) list.push(p.partie + "&deal=" + x.deal);
        const here = rest.split("?partie=")[1];
        const k = list.indexOf(here);
        const url = (e) => (e ? "#replay:" + key + "?partie=" + e : null);
        replayer = new M.Replayer(M.report.data["/api/replay/" + rest], document.getElementById("replay"),
                                  { prev: url(list[k - 1]), next: url(list[k + 1]), log: "#log:" + key });
      } else {
        show("tournament");
      }
    } catch (e) {
      show("replay");
      M.fail(document.getElementById("replay"), e);
    }
    window.scrollTo(0, 0);
  }
  window.addEventListener("hashchange", route);
  route();
})();
