/* A ladder's pages: the leaderboard and a version's (its rating history plot, its games), live over
   server-sent events as the tournament page is; the upload form and an author's stderr. */
"use strict";
(function () {
  const P = M.page, el = M.el;
  const fmt = (x, d) => (x === null || x === undefined ? "·" : Number(x).toFixed(d === undefined ? 2 : d));
  const when = (t) => (t ? t.replace("T", " ").replace("Z", "") : "never");
  let shown = null; // the signature of the data on the page

  function versionLink(id) {
    return el("a", { href: P.board + "?version=" + encodeURIComponent(id), class: "version-link" }, id);
  }

  /* The interval [low, high] on a common scale, with the rating marked. */
  function intervalEl(r, lo, hi) {
    const span = hi - lo || 1, x = (v) => (100 * (v - lo)) / span;
    return el("span", { class: "interval", title: "95% interval " + fmt(r.low) + " … " + fmt(r.high) },
      el("span", { class: "range", style: "left:" + x(r.low) + "%;width:" + (x(r.high) - x(r.low)) + "%" }),
      el("span", { class: "mark", style: "left:" + x(r.rating) + "%" }));
  }

  function renderBoard(d) {
    const c = d.counts || {};
    document.getElementById("status").replaceChildren(
      el("span", { id: "counts" }, (c.rated || 0) + " groups rated · " + (c.partie || 0) + " partie · " + (c.playing || 0) + " playing"),
      el("span", { class: "muted", id: "live" }, "  live"),
      el("span", { class: "muted" }, "  ratings: " + (d.rating || "-")));
    const rows = d.leaderboard || [];
    const node = document.getElementById("board");
    if (!rows.length) { node.replaceChildren(el("p", { class: "muted", id: "no-versions" }, "(no versions yet: marias ladder add, or an upload)")); return; }
    const lo = Math.min(...rows.map((r) => r.low)), hi = Math.max(...rows.map((r) => r.high));
    const head = ["#", "version", "author", "rating ± 95%", "interval", "games (partie)", "groups", "faults", "groše / partie", "last played", "status"];
    const t = el("table", { class: "grid", id: "leaderboard" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))));
    const tb = el("tbody");
    for (const r of rows) {
      tb.append(el("tr", { "data-version": r.id, class: "status-" + r.status },
        el("td", { class: "num" }, r.rank), el("td", {}, versionLink(r.id)), el("td", {}, r.author || "·"),
        el("td", { class: "num rating" }, fmt(r.rating) + " ± " + fmt(r.pm)), el("td", {}, intervalEl(r, lo, hi)),
        el("td", { class: "num games" }, r.games), el("td", { class: "num" }, r.groups), el("td", { class: "num faults" }, r.faults),
        el("td", { class: "num" }, fmt(r["groše"])), el("td", { class: "last" }, when(r.last_played)),
        el("td", { class: "state-cell" }, el("span", { class: "state state-" + r.status }, r.status), r.reason && r.reason !== r.status ? " " + r.reason : "")));
    }
    t.append(tb);
    node.replaceChildren(t);
  }

  function renderVersion(d) {
    const v = d.version, r = d.row || {};
    document.getElementById("status").replaceChildren(
      el("span", { class: "state state-" + v.status, id: "state" }, v.status), " ",
      el("span", { id: "summary" }, "rating " + fmt(r.rating) + " (95%: " + fmt(r.low) + " … " + fmt(r.high) + ") after " + (r.games || 0) + " partie"),
      el("span", { class: "muted", id: "live" }, "  live"));
    const kv = [["version", v.id], ["author", v.author || "(added on the host)"], ["command", v.command], ["added", when(v.added)],
                ["faults", r.faults === undefined ? "·" : r.faults], ["last played", when(r.last_played)]];
    if (v.reason && v.reason !== v.status) kv.push(["why " + v.status, v.reason]);
    document.getElementById("version-info").replaceChildren(...kv.map(([k, x]) => el("tr", {}, el("th", {}, k), el("td", {}, String(x)))));
    renderHistory(d);
    const pn = document.getElementById("pairs");
    if (!d.pairs.length) pn.replaceChildren(el("p", { class: "muted" }, "(none yet)"));
    else {
      const t = el("table", { class: "grid", id: "pairs-table" }, el("thead", {}, el("tr", {}, ["against", "groups", "groše / partie", "LOS"].map((h) => el("th", {}, h)))));
      t.append(el("tbody", {}, d.pairs.map((p) => el("tr", { "data-against": p.against },
        el("td", {}, versionLink(p.against)), el("td", { class: "num" }, p.groups),
        el("td", { class: "num diff" }, (p.diff > 0 ? "+" : "") + fmt(p.diff) + (p.pm === null ? "" : " ± " + fmt(p.pm))),
        el("td", { class: "num" }, p.los === null ? "·" : (100 * p.los).toFixed(1) + "%")))));
      pn.replaceChildren(t);
    }
    const g = document.getElementById("games");
    if (!d.games.length) { g.replaceChildren(el("p", { class: "muted" }, "(no games yet)")); return; }
    const head = ["game", "time", "group", "seat", "with", "groše", "faults", "log"];
    const t = el("table", { class: "grid", id: "games-table" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))));
    const tb = el("tbody");
    for (const x of d.games) {
      const links = x.replayable
        ? [el("a", { href: "/log/" + P.log_base + x.log, class: "log-link" }, "log"), " · ",
           el("a", { href: "/replay/" + P.log_base + x.log + "?partie=1&deal=1", class: "replay-link" }, "replay")]
        : [el("span", { class: "muted" }, "missing")];
      tb.append(el("tr", { "data-game": x.id, class: x.faults ? "fault" : null },
        el("td", {}, x.id), el("td", {}, when(x.time)), el("td", { class: "num" }, x.group), el("td", { class: "num" }, x.seat),
        el("td", {}, ...x.others.flatMap((o, i) => (i ? [", ", versionLink(o)] : [versionLink(o)]))),
        el("td", { class: "num" }, M.signed(x["groše"])), el("td", { class: "num" }, x.faults), el("td", {}, ...links)));
    }
    t.append(tb);
    const more = d.games.length >= d.games_listed ? el("p", { class: "muted" }, "(the newest " + d.games_listed + " shown)") : "";
    g.replaceChildren(t, more);
  }

  let plot = null;
  function renderHistory(d) {
    const node = document.getElementById("history");
    const h = d.history;
    node.dataset.points = String(h.length);
    if (!h.length) { if (plot) { plot.destroy(); plot = null; } node.replaceChildren(el("p", { class: "muted" }, "(not rated yet: no group played)")); return; }
    const data = [h.map((p) => p.game), h.map((p) => p.rating), h.map((p) => p.low), h.map((p) => p.high)];
    const opts = {
      width: Math.max(320, Math.min(1000, node.clientWidth || 900)), height: 300,
      series: [{ label: "partie played" }, { label: "rating", stroke: "#1f5fa8", width: 2, points: { show: h.length < 60 } },
               { label: "low (95%)", stroke: "#7f8c8d", dash: [6, 4] }, { label: "high (95%)", stroke: "#7f8c8d", dash: [6, 4] }],
      bands: [{ series: [3, 2], fill: "rgba(31,95,168,0.08)" }],
      scales: { x: { time: false } }, axes: [{ label: "partie played" }, { label: "rating" }] };
    if (plot) plot.destroy();
    node.replaceChildren();
    plot = new uPlot(opts, data, node);
  }

  async function refresh() {
    try {
      const d = await M.load(P.api);
      if (d.ok === false) throw new Error(d.error);
      (P.kind === "ladder" ? renderBoard : renderVersion)(d);
      shown = JSON.stringify(d.signature);
      document.body.dataset.signature = shown;
    } catch (e) {
      M.fail(document.getElementById("status"), e);
    }
  }

  function upload() {
    const form = document.getElementById("upload-form");
    if (!form) return;
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const out = document.getElementById("up-result"), v = (id) => document.getElementById(id).value.trim();
      const q = new URLSearchParams({ name: v("up-name"), command: v("up-command") });
      if (v("up-build")) q.set("build", v("up-build"));
      out.hidden = false;
      out.textContent = "uploading, building and checking… (this can take a minute)";
      try {
        const r = await fetch(P.upload + "?" + q, { method: "POST", headers: { authorization: "Bearer " + v("up-token") },
                                                     body: document.getElementById("up-file").files[0] });
        const d = await r.json();
        out.textContent = d.ok ? "entered as " + d.version + (d.build_output ? "\n\nbuild output:\n" + d.build_output : "")
          : "refused at the " + d.step + " step: " + d.error + (d.rule ? " (rule " + d.rule + ")" : "") + (d.output ? "\n\n" + d.output : "");
        if (d.ok) refresh();
      } catch (e) {
        out.textContent = String(e.message || e);
      }
    });
  }

  function stderr() {
    const form = document.getElementById("stderr-form");
    if (!form) return;
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const node = document.getElementById("stderr");
      const r = await fetch(P.stderr, { headers: { authorization: "Bearer " + document.getElementById("stderr-token").value.trim() } });
      const d = await r.json();
      if (!d.ok) { M.fail(node, d.error); return; }
      if (!d.files.length) { node.replaceChildren(el("p", { class: "muted", id: "stderr-none" }, "(no stderr kept: the bot wrote none)")); return; }
      node.replaceChildren(...d.files.flatMap((f) => [el("h3", {}, f.file + " (" + f.bytes + " bytes)"), el("pre", { class: "stderr-text" }, f.text)]));
    });
  }

  async function start() {
    await refresh();
    upload();
    stderr();
    if (!window.EventSource) return;
    const es = new EventSource(P.events);
    es.addEventListener("data", (ev) => { if (JSON.stringify(JSON.parse(ev.data).signature) !== shown) refresh(); });
  }
  if (P.kind === "ladder" || P.kind === "ladder-version") start();
})();
