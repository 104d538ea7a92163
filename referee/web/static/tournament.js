/* The tournament / duel page: tables, plots (uPlot), live over server-sent events. */
"use strict";
(function () {
  const P = M.page, el = M.el;
  const COLORS = ["#c0392b", "#2e8b3a", "#b8860b", "#138d9c", "#7d3c98", "#34495e", "#d35400", "#2980b9", "#8e44ad", "#16a085", "#7f8c8d", "#e67e22"];
  const plots = {};
  const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000]; // ticks on whole numbers

  function fmtEta(s) {
    if (s === null || s === undefined) return "-";
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    return h + ":" + String(m).padStart(2, "0") + ":" + String(sec).padStart(2, "0");
  }

  function renderStatus(p) {
    const node = document.getElementById("status");
    if (!p) return;
    const total = p.total || p.done || 0;
    const pct = total ? Math.round((100 * p.done) / total) : 100;
    node.replaceChildren(
      el("span", { class: "state state-" + p.state, id: "state" }, p.state),
      " ",
      el("span", { id: "done" }, p.done + (p.total ? " / " + p.total : "") + " partie"),
      el("span", { class: "bar" }, el("span", { style: "width:" + pct + "%" })),
      " ETA ", el("span", { id: "eta" }, fmtEta(p.eta_s)),
      M.report ? el("span", { class: "muted" }, "  (report: a snapshot)") : el("span", { class: "muted", id: "live" }, "  live"));
  }

  function plot(id, opts, data, node) {
    if (plots[id]) plots[id].destroy();
    node.replaceChildren();
    const width = Math.max(320, Math.min(1000, node.clientWidth || 900));
    plots[id] = new uPlot({ width, height: 300, ...opts }, data, node);
  }

  function renderDuel(d) {
    const node = document.getElementById("duel");
    if (!d) { node.replaceChildren(); return; }
    const rows = [
      ["decision", d.text], ["groups", d.groups + " (" + d.partie + " partie)"],
      ["LLR", (d.llr === null ? "-" : typeof d.llr === "number" ? d.llr.toFixed(3) : d.llr) + "  (bounds " + d.lower.toFixed(3) + ", " + d.upper.toFixed(3) + ")"],
      [d.a + " − " + d.b, d.mean === null ? "-" : d.mean.toFixed(2) + (d.ci95_low === null ? "" : ", 95% interval [" + d.ci95_low.toFixed(2) + ", " + d.ci95_high.toFixed(2) + "]") + " groše per partie"],
      ["LOS", d.los === null ? "-" : (100 * d.los).toFixed(1) + "% (likelihood that " + d.a + " is better)"],
      ["design", "h0 " + d.h0 + ", h1 " + d.h1 + ", alpha " + d.alpha + ", beta " + d.beta + ", max groups " + d.max_groups]];
    const chart = el("div", { class: "chart", id: "llr" });
    node.replaceChildren(el("h2", {}, "Head-to-head: " + d.a + " against " + d.b + " (SPRT)"),
      el("table", { class: "kv", id: "duel-result" }, rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v)))),
      el("h3", {}, "LLR after each group, against its bounds"), chart);
    const n = d.llr_by_group.length;
    const xs = [0, ...Array.from({ length: n }, (_, i) => i + 1)];
    plot("llr", { series: [{ label: "group" }, { label: "LLR", stroke: "#2980b9", width: 2, points: { show: true } },
                            { label: "accept H1", stroke: "#2e8b3a", dash: [6, 4] }, { label: "accept H0", stroke: "#c0392b", dash: [6, 4] }],
                  scales: { x: { time: false } }, axes: [{ label: "group", incrs: WHOLE }, { label: "LLR" }] },
         [xs, [0, ...d.llr_by_group], xs.map(() => d.upper), xs.map(() => d.lower)], chart);
  }

  function renderCurves(curves) {
    const node = document.getElementById("curves");
    const names = Object.keys(curves);
    if (!names.length) { node.replaceChildren(el("p", { class: "muted" }, "(no partie yet)")); return; }
    const xsSet = new Set([0]);
    for (const n of names) for (const x of curves[n].x) xsSet.add(x);
    const xs = [...xsSet].sort((a, b) => a - b);
    const at = new Map(xs.map((x, i) => [x, i]));
    const data = [xs];
    for (const n of names) {
      const ys = xs.map(() => null);
      ys[0] = 0;
      curves[n].x.forEach((x, i) => { ys[at.get(x)] = curves[n].y[i]; });
      data.push(ys);
    }
    plot("curves", { series: [{ label: "partie" }, ...names.map((n, i) => ({ label: n, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true }))],
                     scales: { x: { time: false } }, axes: [{ label: "partie played", incrs: WHOLE }, { label: "groše" }] }, data, node);
  }

  function render(d) {
    if (d.error) { M.fail(document.getElementById("tables"), d.error); return; }
    renderStatus(d.progress);
    renderDuel(d.duel);
    const tables = document.getElementById("tables");
    tables.replaceChildren();
    for (const [name, rows] of Object.entries(d.tables || {})) {
      tables.append(el("h2", {}, d.titles[name] || name), M.tableEl(rows, { id: "table-" + name }));
    }
    for (const n of d.notes || []) tables.append(el("p", { class: "note" }, n));
    renderCurves(d.curves || {});
    document.getElementById("contracts").replaceChildren(M.tableEl(d.contracts, { id: "table-contracts" }));
    const logs = document.getElementById("logs");
    logs.replaceChildren(...(d.logs || []).map((rel) => {
      const key = P.root + "/" + (P.rel === "." ? "" : P.rel + "/") + rel;
      return el("li", {}, el("a", { href: M.report ? "#log:" + key : "/log/" + key }, rel));
    }));
    document.getElementById("footer").textContent = d.footer || "";
    document.body.dataset.computed = d.computed;
  }

  async function start() {
    try {
      render(await M.load(P.api));
    } catch (e) {
      M.fail(document.getElementById("status"), e);
    }
    if (M.report || !window.EventSource) return;
    const es = new EventSource(P.events);
    es.addEventListener("data", (ev) => render(JSON.parse(ev.data)));
    es.addEventListener("progress", (ev) => renderStatus(JSON.parse(ev.data)));
  }
  if (P.kind === "tournament") start();
  M.renderTournament = render;
})();
