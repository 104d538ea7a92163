/* The tournament / duel page: its set-up, tables, plots (uPlot), its logs; live over server-sent events. */
"use strict";
(function () {
  const P = M.page, el = M.el;
  const COLORS = ["#c0392b", "#2e8b3a", "#b8860b", "#138d9c", "#7d3c98", "#34495e", "#d35400", "#2980b9", "#8e44ad", "#16a085", "#7f8c8d", "#e67e22"];
  const plots = {};
  M.plots = plots;
  const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000]; // ticks on whole numbers
  let last = null; // the data shown (the log filter of the report re-renders from it)

  function fmtEta(s) {
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    return h + ":" + String(m).padStart(2, "0") + ":" + String(sec).padStart(2, "0");
  }

  const STATE_TEXT = {
    running: "a marias is playing it", stopped: "stopped before its end: the same command goes on with it",
    finished: "every planned partie played", decided: "the test has decided",
  };

  /* The state (EventFolder.status); the ETA and the live mark only while it runs. */
  function renderStatus(p) {
    const node = document.getElementById("status");
    if (!p) return;
    const total = p.total || p.done || 0;
    const pct = total ? Math.round((100 * p.done) / total) : 100;
    const running = p.state === "running";
    node.replaceChildren(el("span", {},
      el("span", { class: "state state-" + p.state, id: "state", title: STATE_TEXT[p.state] || null }, p.state),
      " ",
      el("span", { id: "done" }, p.done + (p.total ? " / " + p.total : "") + " partie"),
      el("span", { class: "bar" }, el("span", { style: "width:" + pct + "%" })),
      running && p.eta_s !== null && p.eta_s !== undefined ? el("span", { id: "eta" }, "ETA " + fmtEta(p.eta_s)) : null,
      M.report ? el("span", { class: "muted" }, "  (report: a snapshot)")
        : running ? el("span", { class: "muted", id: "live" }, "  live") : el("span", { class: "muted" }, "  " + (STATE_TEXT[p.state] || ""))));
  }

  function short(fp) { return fp ? fp.slice(0, 12) : "-"; }

  /* Its set-up: format, arrangements, the bots with their fingerprints, the time control, the seed's commitment. */
  function renderSetup(s) {
    const node = document.getElementById("setup");
    if (!s) { node.replaceChildren(); return; }
    if (s.error) { node.replaceChildren(el("p", { class: "note" }, "set-up: " + s.error)); return; }
    const t = s.time || {};
    const time = [t.move_ms !== null && t.move_ms !== undefined ? t.move_ms + " ms a decision" : null,
      t.bank_ms ? "bank " + t.bank_ms + " ms + " + (t.increment_ms || 0) + " ms a decision" : null,
      t.startup_ms ? "start-up " + t.startup_ms + " ms" : null].filter(Boolean).join(", ");
    const format = s.format === "gauntlet" ? "gauntlet of " + s.gauntlet : s.format;
    const rows = [
      ["format", format + (s.sprt ? "" : " · arrangements " + s.arrangements + " · " + s.partie + " partie per table and arrangement" +
        (s.units ? " (" + s.units + " units)" : ""))],
      ["time", time || "-"],
      ["faults", s.faults && s.faults.max_faults !== undefined ? s.faults.max_faults + " in a partie, then it forfeits the rest (R12.3)" : "-"],
      ["decks", s.decks + (s.deck_scope ? " (one deck per " + s.deck_scope + ")" : "")],
      ["seed", s.seed !== null && s.seed !== undefined ? String(s.seed) + " (public)" : "secret"],
      ["seed commitment", s.seed_sha256 ? "SHA-256 " + s.seed_sha256 : "not in the folder"],
      ["created", s.created || "-"]];
    const bots = el("table", { class: "grid", id: "setup-bots" },
      el("thead", {}, el("tr", {}, ["bot", "command", "fingerprint", "own limits"].map((h) => el("th", {}, h)))),
      el("tbody", {}, (s.bots || []).map((b) => el("tr", {},
        el("td", {}, b.name), el("td", {}, el("code", {}, typeof b.command === "string" ? b.command : JSON.stringify(b.command))),
        el("td", { title: b.fingerprint || "" }, el("code", {}, short(b.fingerprint))),
        el("td", {}, [b.move_ms ? b.move_ms + " ms a decision" : null, b.startup_ms ? "start-up " + b.startup_ms + " ms" : null].filter(Boolean).join(", ") || "-")))));
    node.replaceChildren(el("h2", {}, "Set-up"), el("table", { class: "kv", id: "setup-kv" },
      rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v)))), bots);
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
      ["LLR", (d.llr === null ? "-" : typeof d.llr === "number" ? d.llr.toFixed(3) : d.llr.replace("inf", "∞")) + "  (bounds " + d.lower.toFixed(3) + ", " + d.upper.toFixed(3) + ")"],
      [d.a + " − " + d.b, d.mean === null ? "-" : d.mean.toFixed(2) + (d.ci95_low === null ? "" : ", 95% interval [" + d.ci95_low.toFixed(2) + ", " + d.ci95_high.toFixed(2) + "]") + " groše per partie"],
      ["LOS", d.los === null ? "-" : (100 * d.los).toFixed(1) + "% (likelihood that " + d.a + " is better)"],
      ["design", "h0 " + d.h0 + ", h1 " + d.h1 + ", alpha " + d.alpha + ", beta " + d.beta + ", max groups " + d.max_groups]];
    const chart = el("div", { class: "chart", id: "llr" });
    const clipped = d.llr_clipped || [];
    node.replaceChildren(...[el("h2", {}, "Head-to-head: " + d.a + " against " + d.b + " (SPRT)"),
      el("table", { class: "kv", id: "duel-result" }, rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v)))),
      el("h3", {}, "LLR after each group, against its bounds"), chart,
      clipped.length ? el("p", { class: "note", id: "llr-clipped" }, clipped.map((c) => "group " + c.group + ": LLR " + c.llr.replace("inf", "∞")).join("; ") +
        " (every group the same: no spread) — drawn at the bound it is past, marked ○") : null].filter(Boolean));
    const n = d.llr_by_group.length;
    const xs = [0, ...Array.from({ length: n }, (_, i) => i + 1)];
    const at = new Set(clipped.map((c) => c.group));
    plot("llr", { series: [{ label: "group" }, { label: "LLR", stroke: "#2980b9", width: 2, points: { show: true } },
                            { label: "accept H1", stroke: "#2e8b3a", dash: [6, 4] }, { label: "accept H0", stroke: "#c0392b", dash: [6, 4] },
                            { label: "LLR ±∞, at its bound", stroke: "#c0392b", width: 0, points: { show: true, size: 12, width: 3, fill: "#fff" } }],
                  scales: { x: { time: false } }, axes: [{ label: "group", incrs: WHOLE }, { label: "LLR" }] },
         [xs, [0, ...d.llr_by_group], xs.map(() => d.upper), xs.map(() => d.lower), xs.map((x, i) => (at.has(x) ? [0, ...d.llr_by_group][i] : null))], chart);
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

  /* Where a bot's games are listed: this page's logs of that bot. */
  function botLink(name) {
    return M.report ? "#bot:" + encodeURIComponent(name) : P.page + "?bot=" + encodeURIComponent(name) + "#logs-title";
  }

  function logKey(rel) { return P.root + "/" + (P.rel === "." ? "" : P.rel + "/") + rel; }

  /* The logs, each with its bots and their groše (the best first); of one bot when one is chosen. */
  function renderLogs(d, bot) {
    const names = d.log_bots || [];
    const base = (n) => n.split("#")[0];
    const mine = (e) => !bot || e[1].some((i) => names[i] === bot || base(names[i]) === bot);
    const logs = (d.logs || []).filter(mine);
    const choices = [...new Set(names.map(base))].sort();
    const select = el("select", { id: "logs-bot", onchange: (ev) => {
      const v = ev.target.value;
      if (M.report) location.hash = v ? "#bot:" + encodeURIComponent(v) : "#";
      else location.href = v ? botLink(v) : P.page + "#logs-title";
    } }, el("option", { value: "" }, "every bot"), choices.map((n) => el("option", { value: n, selected: n === bot }, n)));
    document.getElementById("logs-filter").replaceChildren(el("label", {}, "logs of ", select));
    document.getElementById("logs-title").textContent = bot ? "Logs of " + bot : "Logs";
    const total = d.logs_total !== undefined && (d.logs_bot || null) === (bot || null) ? d.logs_total : logs.length;
    const rows = logs.map((e) => {
      const key = logKey(e[0]);
      const inside = !M.report || (M.report.logs && key in M.report.logs);
      return el("tr", { "data-log": e[0] },
        el("td", {}, inside ? el("a", { href: M.report ? "#log:" + key : "/log/" + key.split("/").map(encodeURIComponent).join("/") }, e[0])
                            : el("span", {}, e[0], " ", el("span", { class: "tag off" }, "not in this report"))),
        el("td", { class: "result" }, e[1].map((i, k) => names[i] + " " + M.signed(e[2][k])).join(" · ")));
    });
    document.getElementById("logs").replaceChildren(...[
      rows.length ? el("table", { class: "grid", id: "logs-table" }, el("thead", {}, el("tr", {}, el("th", {}, "log"), el("th", {}, "groše (the best first)"))), el("tbody", {}, rows))
        : el("p", { class: "muted" }, "(no log" + (bot ? " of " + bot : "") + ")"),
      total > logs.length ? el("p", { class: "note" }, "the first " + logs.length + " of " + total + " logs" + (bot ? "" : "; choose a bot to list its logs")) : null].filter(Boolean));
  }

  function linkBots(table) {
    if (!table) return;
    const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent);
    const col = heads.indexOf("bot");
    if (col < 0) return;
    for (const tr of table.querySelectorAll("tbody tr")) {
      const td = tr.children[col];
      const name = td.textContent;
      td.replaceChildren(el("a", { href: botLink(name.split("#")[0]), class: "bot-logs", title: "the logs of " + name }, name));
    }
  }

  function render(d) {
    if (d.error) { M.fail(document.getElementById("tables"), d.error); return; }
    last = d;
    renderStatus(d.progress);
    renderSetup(d.setup);
    renderDuel(d.duel);
    const tables = document.getElementById("tables");
    tables.replaceChildren();
    for (const [name, rows] of Object.entries(d.tables || {})) {
      tables.append(el("h2", {}, d.titles[name] || name), M.tableEl(rows, { id: "table-" + name }));
    }
    linkBots(document.getElementById("table-standings"));
    for (const n of d.notes || []) tables.append(el("p", { class: "note" }, n));
    renderCurves(d.curves || {});
    document.getElementById("contracts").replaceChildren(M.tableEl(d.contracts, { id: "table-contracts" }));
    renderLogs(d, M.report ? M.reportBot || null : P.bot || null);
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
  M.renderEventLogs = (bot) => { if (last) renderLogs(last, bot); };
})();
